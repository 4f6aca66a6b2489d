"""GitLab Code Quality (the Code Climate issue subset GitLab reads): a JSON array, one issue per finding.

GitLab shows these in merge-request widgets and diffs when a job uploads the file as
`artifacts: reports: codequality`. Paths are from the repository root and fingerprints are SARIF's, so both
outputs name a finding the same way from any working directory.
"""

from __future__ import annotations

import json

from gpustack_guard.reporters.ci_paths import every_finding, fingerprints, repository_path, root_of

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def render(report, fail_level=None) -> str:  # fail_level: read by junit only
    issues = []
    root = root_of(report)
    rows = every_finding(report)  # fingerprints over all of them, as SARIF's: the same finding, the same name
    for (f, accepted), fingerprint in zip(rows, fingerprints([f for f, _ in rows], root)):
        if accepted is not None:  # Code Quality has no suppressed state: an accepted finding is not shown
            continue
        text = (f"[{f.spec}] " if f.spec else "") + f"{f.rule.id} {f.message}"
        issues.append({
            "type": "issue",
            "check_name": f"{f.rule.id} {f.rule.name}",
            "description": text + (f" Fix: {f.fix}" if f.fix else ""),
            "categories": ["Bug Risk"],
            "severity": SEVERITY[f.severity.value],
            "fingerprint": fingerprint,
            "location": {"path": repository_path(f.location.file, root), "lines": {"begin": max(f.location.line, 1)}},
        })
    return json.dumps(issues, indent=2) + "\n"
