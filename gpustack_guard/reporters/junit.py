"""JUnit XML: one testsuite per spec file, one testcase per (spec x rule).

A finding at or above the fail level is a <failure>, as it fails the run; one below it (a warning when only
errors fail) is written to the testcase's <system-out>, so CI test views show a green case for a green job."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from gpustack_guard.core import echo
from gpustack_guard.core.findings import Severity
from gpustack_guard.core.rules.registry import RULES


def render(report, fail_level: Severity = Severity.ERROR) -> str:
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
            shown = echo.recut(spec)  # repeated in every case's name: a long name once cut short (core/echo.py)
            for rule in sorted(RULES.values(), key=lambda r: r.id):
                cases += 1
                case = ET.SubElement(suite, "testcase", classname=file, name=f"{shown} {rule.id} {rule.name}",
                                     file=file, time="0")
                found = [f for f in mine if f.rule.id == rule.id and f.severity != Severity.INFO]
                if found and found[0].location.line:
                    case.set("line", str(found[0].location.line))
                failing = [f for f in found if f.severity.rank >= fail_level.rank]
                if failing:
                    suite_failures += 1
                    failure = ET.SubElement(case, "failure", type=rule.id,
                                            message=f"{failing[0].location}: {failing[0].message}")
                    failure.text = _lines(failing)
                passing = [f for f in found if f.severity.rank < fail_level.rank]
                if passing:
                    ET.SubElement(case, "system-out").text = _lines(passing)
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


def _lines(findings) -> str:
    return "\n".join(f"{h.location}: {h.severity.value}: {h.message}" + (f" (fix: {h.fix})" if h.fix else "")
                     for h in findings)
