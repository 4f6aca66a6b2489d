"""Human output: one line per finding, compiler style (file:line:col: severity id name [spec] message)."""

from __future__ import annotations


def render(report, fail_level=None) -> str:  # fail_level: read by junit only
    lines = []
    for f in report.findings:
        spec = f" [{f.spec}]" if f.spec else ""
        lines.append(f"{f.location}: {f.severity.value} {f.rule.id} {f.rule.name}{spec}: {f.message}")
        if f.fix:
            lines.append(f"    fix: {f.fix}")
    return "\n".join(lines) + ("\n" if lines else "")
