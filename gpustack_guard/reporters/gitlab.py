"""GitLab Code Quality (the Code Climate issue subset GitLab reads): a JSON array, one issue per finding.

GitLab shows these in merge-request widgets and diffs when a job uploads the file as
`artifacts: reports: codequality`. Fingerprints are SARIF's, so both outputs name a finding the same way.
"""

from __future__ import annotations

import json

from gpustack_guard.reporters.machine import fingerprints

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def render(report, fail_level=None) -> str:  # fail_level: read by junit only
    issues = []
    for f, fingerprint in zip(report.findings, fingerprints(report.findings)):
        text = (f"[{f.spec}] " if f.spec else "") + f"{f.rule.id} {f.message}"
        issues.append({
            "type": "issue",
            "check_name": f"{f.rule.id} {f.rule.name}",
            "description": text + (f" Fix: {f.fix}" if f.fix else ""),
            "categories": ["Bug Risk"],
            "severity": SEVERITY[f.severity.value],
            "fingerprint": fingerprint,
            "location": {"path": f.location.file.replace("\\", "/"), "lines": {"begin": max(f.location.line, 1)}},
        })
    return json.dumps(issues, indent=2) + "\n"
