"""The I/O half of suppressions: read the `# gsg: ignore[...]` comments of the files a run read or reports on,
and the repository-relative paths that per-path ignores and CI reports use (core/suppressions.py matches)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path, PurePath

from gpustack_guard.adapters.files.regular_file import Unreadable
from gpustack_guard.adapters.files.spec_loader import MAX_SPEC_BYTES, decode, read_bytes
from gpustack_guard.adapters.files.yaml_positions import YamlInputLimit
from gpustack_guard.core.pipeline import Report
from gpustack_guard.core.suppressions import InlineSuppression, Selection, apply, scan


def repository_path(file: str, root: str) -> str | None:
    """`file` (as displayed: relative to the working directory, or absolute) from the repository root, with
    POSIX separators; None for a file outside the root."""
    relative = os.path.relpath(os.path.abspath(file), root)
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        return None
    return PurePath(relative).as_posix()


def comments_in(file: str) -> list[InlineSuppression]:
    """A file's suppression comments; none for what cannot be read (the loader has reported that already)."""
    if not os.path.isfile(file):
        return []
    try:
        return scan(file, decode(read_bytes(Path(file), MAX_SPEC_BYTES)))
    except (Unreadable, YamlInputLimit, OSError):
        return []


def accept(report: Report, selection: Selection, spec_files: list[str], root: str) -> Report:
    """The report with what the comments and the selection accept moved to `suppressed`, and its root set."""
    files = list(dict.fromkeys(spec_files + [f.location.file for f in report.findings]))
    comments = [c for file in files for c in comments_in(file)]
    relative = {file: path for file in files if (path := repository_path(file, root)) is not None}
    active, suppressed = apply(report.findings, selection, comments, relative)
    return replace(report, findings=active, suppressed=report.suppressed + suppressed, root=root)
