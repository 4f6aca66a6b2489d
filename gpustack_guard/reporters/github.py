"""GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=T::message` annotations."""

from __future__ import annotations

from gpustack_guard.reporters.ci_paths import repository_path, root_of

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report, fail_level=None) -> str:  # fail_level: read by junit only
    lines = []
    root = root_of(report)
    for f in report.findings:  # GitHub resolves file= against the repository root (GITHUB_WORKSPACE)
        props = [f"file={escape_property(repository_path(f.location.file, root))}"]
        if f.location.line:
            props += [f"line={f.location.line}", f"col={f.location.column or 1}"]
        props.append(f"title={escape_property(f'{f.rule.id} {f.rule.name}')}")
        message = (f"[{f.spec}] " if f.spec else "") + f.message + (f"\nfix: {f.fix}" if f.fix else "")
        lines.append(f"::{LEVEL[f.severity.value]} {','.join(props)}::{escape_data(message)}")
    return "\n".join(lines) + ("\n" if lines else "")
