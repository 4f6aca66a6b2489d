"""The I/O half of suppressions: read the `# gsg: ignore[...]` comments of the files a run read or reports on,
and the repository-relative paths that per-path ignores and CI reports use (core/suppressions.py matches)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Iterable, Mapping

from gpustack_guard.adapters.files.project_file import repository_root, rule_selection
from gpustack_guard.adapters.files.regular_file import Unreadable
from gpustack_guard.adapters.files.spec_loader import MAX_SPEC_BYTES, decode, read_bytes, suppression_comments
from gpustack_guard.adapters.files.yaml_positions import YamlInputLimit
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.findings import Finding
from gpustack_guard.core.pipeline import Report
from gpustack_guard.core.suppressions import InlineSuppression, Selection, Suppressed, apply
from gpustack_guard.core.values import frozen_value


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
        return suppression_comments(file, decode(read_bytes(Path(file), MAX_SPEC_BYTES)))
    except (Unreadable, YamlInputLimit, OSError):
        return []


def accept(report: Report, selection: Selection, spec_files: list[str], root: str,
           read: Mapping[str, list[InlineSuppression]] | None = None) -> Report:
    """The report with what the comments and the selection accept moved to `suppressed`, and its root set.
    `read`: the comments of files the loader read already (load_specs(comments=)); other files are read here."""
    files = list(dict.fromkeys(spec_files + [f.location.file for f in report.findings]))
    known = read or {}
    comments = [c for file in files for c in (known[file] if file in known else comments_in(file))]
    # Only per-path ignores read a finding's repository path: without them, no path is worked out (10,000 specs:
    # ~60 ms of os.path work), and with them only those of files that have findings.
    with_findings = dict.fromkeys([f.location.file for f in report.findings] + [c.file for c in comments])
    relative = {file: path for file in with_findings if (path := repository_path(file, root)) is not None} \
        if selection.per_path else {}
    active, suppressed = apply(report.findings, selection, comments, relative)
    return replace(report, findings=active, suppressed=report.suppressed + suppressed, root=root)


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Acceptance:
    """What a run accepts on purpose: gsg.yaml's rule selection with --select/--ignore, and the repository root
    per_path_ignores and CI reports resolve paths against. validate, plan, apply and live verify share it."""

    __repr__ = fields_repr

    selection: Selection
    root: str

    def accept(self, report: Report, spec_files: Iterable[str],
               read: Mapping[str, list[InlineSuppression]] | None = None) -> Report:
        """The report with what the spec files' comments and the selection accept moved to `suppressed`."""
        return accept(report, self.selection, list(dict.fromkeys(spec_files)), self.root, read)

    def select(self, findings: list[Finding]) -> tuple[list[Finding], list[Suppressed]]:
        """(active, suppressed) by the selection alone: for findings that are not about spec lines (live
        verify's), which the spec files' comments would all wrongly call unused."""
        files = {f.location.file for f in findings}
        relative = {file: path for file in files if (path := repository_path(file, self.root)) is not None}
        return apply(findings, self.selection, [], relative)


def acceptance(spec_paths: list[str], select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> Acceptance:
    """The Acceptance of these spec paths; an entry of select/ignore that names no rule stops here, before any
    work is done."""
    return Acceptance(rule_selection(spec_paths, select, ignore), repository_root(spec_paths))
