"""JUnit XML: one testsuite per spec file, one testcase per (spec x rule); findings are failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from gpustack_guard.core.findings import Severity
from gpustack_guard.core.rules.registry import RULES


def render(report) -> str:
    by_unit = defaultdict(list)
    for f in report.findings:
        by_unit[(f.location.file, f.spec)].append(f)
    suites = ET.Element("testsuites", name="gsg")
    files: dict[str, list[str]] = defaultdict(list)
    for file, spec in report.units:
        files[file].append(spec)
    total = failures = 0
    for file, specs in files.items():
        suite = ET.SubElement(suites, "testsuite", name=file)
        suite_failures = cases = 0
        for spec in specs:
            key_spec = None if spec in ("(file)",) or spec.startswith("document ") else spec
            mine = by_unit.get((file, key_spec), [])
            for rule in sorted(RULES.values(), key=lambda r: r.id):
                cases += 1
                case = ET.SubElement(suite, "testcase", classname=file, name=f"{spec} {rule.id} {rule.name}",
                                     time="0")
                hits = [f for f in mine if f.rule.id == rule.id and f.severity != Severity.INFO]
                if hits:
                    suite_failures += 1
                    failure = ET.SubElement(case, "failure", type=rule.id,
                                            message=f"{hits[0].location}: {hits[0].message}")
                    failure.text = "\n".join(f"{h.location}: {h.severity.value}: {h.message}"
                                             + (f" (fix: {h.fix})" if h.fix else "") for h in hits)
        suite.set("tests", str(cases))
        suite.set("failures", str(suite_failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        suite.set("time", "0")
        total += cases
        failures += suite_failures
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
