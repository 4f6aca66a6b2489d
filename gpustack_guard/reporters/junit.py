"""JUnit XML: one testsuite per spec file, one testcase per (spec x rule), as the Jenkins JUnit schema allows.

A finding at or above the fail level is a <failure>, as it fails the run; one below it (a warning when only
errors fail) or suppressed is written to the testcase's <system-out>, so CI test views show a green case for a
green job. The schema has no file or line on a testcase: the location (from the repository root) leads the
failure's message and every line of its text and of system-out, where Jenkins, GitLab and GitHub show it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from gpustack_guard.core import echo
from gpustack_guard.core.findings import Location, Severity
from gpustack_guard.core.rules.registry import RULES
from gpustack_guard.reporters.ci_paths import repository_path, root_of


def render(report, fail_level: Severity = Severity.ERROR) -> str:
    root = root_of(report)
    by_unit = defaultdict(list)
    for f in report.findings:
        by_unit[(f.location.file, f.spec)].append(f)
    accepted = defaultdict(list)
    for s in report.suppressed:
        accepted[(s.finding.location.file, s.finding.spec)].append(s)
    suites = ET.Element("testsuites", name="gsg")
    files: dict[str, list[str]] = defaultdict(list)
    for file, spec in report.units:
        files[file].append(spec)
    total = failures = 0
    for file, specs in files.items():
        shown_file = repository_path(file, root)
        suite = ET.SubElement(suites, "testsuite", name=shown_file)
        suite_failures = cases = 0
        for spec in specs:
            key_spec = None if spec in ("(file)",) or spec.startswith("document ") else spec
            mine = by_unit.get((file, key_spec), [])
            mine_accepted = accepted.get((file, key_spec), [])
            shown = echo.recut(spec)  # repeated in every case's name: a long name once cut short (core/echo.py)
            for rule in sorted(RULES.values(), key=lambda r: r.id):
                cases += 1
                case = ET.SubElement(suite, "testcase", classname=shown_file,
                                     name=f"{shown} {rule.id} {rule.name}", time="0")
                found = [f for f in mine if f.rule.id == rule.id and f.severity != Severity.INFO]
                failing = [f for f in found if f.severity.rank >= fail_level.rank]
                if failing:
                    suite_failures += 1
                    failure = ET.SubElement(case, "failure", type=rule.id,
                                            message=f"{_where(failing[0], root)}: {failing[0].message}")
                    failure.text = _lines(failing, root)
                passing = [_line(f, root) for f in found if f.severity.rank < fail_level.rank]
                passing += [f"{_line(s.finding, root)} [suppressed: {s.justification or s.kind}]"
                            for s in mine_accepted if s.finding.rule.id == rule.id]
                if passing:
                    ET.SubElement(case, "system-out").text = "\n".join(passing)
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


def _where(f, root: str) -> str:
    """file:line:column with the file from the repository root."""
    return str(Location(repository_path(f.location.file, root), f.location.line, f.location.column))


def _line(f, root: str) -> str:
    return f"{_where(f, root)}: {f.severity.value}: {f.message}" + (f" (fix: {f.fix})" if f.fix else "")


def _lines(findings, root: str) -> str:
    return "\n".join(_line(f, root) for f in findings)
