"""Paths and identities in the reports CI systems keep (SARIF, JUnit, GitLab, GitHub): relative to the
repository root, so a run from a subfolder names every file the same, and fingerprints that survive the
finding's numbers moving (a 1 MiB change is the same alert, not a new one)."""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from pathlib import Path

from gpustack_guard.adapters.files.suppressions import repository_path as path_in_repository
from gpustack_guard.core.suppressions import in_file_order

# A number with its unit, as messages print sizes and counts (24.90 GiB, 20,000 tokens' 20,000, 0.85): all of
# it is the finding's figures, which move from run to run without the finding changing.
_FIGURE = re.compile(r"\d[\d,._]*(?:\s*(?:[KMGTPE]i?B|bytes|B)\b)?")


def root_of(report) -> str:
    return report.root or os.getcwd()


def repository_path(file: str, root: str) -> str:
    """`file` from the repository root with POSIX separators, as per-path ignores match it; a file outside it (a
    shipped template, a fleet elsewhere) stays absolute."""
    inside = path_in_repository(file, root)
    return inside if inside is not None else Path(os.path.abspath(file)).as_posix()


def stable_text(message: str) -> str:
    """The part of a message that names the problem: its first clause (up to ": ", as GPU ids hold colons)
    with every figure masked."""
    return _FIGURE.sub("#", message.split(": ")[0])


def every_finding(report) -> list[tuple]:
    """(finding, suppression or None) for the active and the suppressed findings, in file order."""
    rows = [(f, None) for f in report.findings] + [(s.finding, s) for s in report.suppressed]
    return sorted(rows, key=lambda row: in_file_order(row[0]))


def fingerprints(findings, root: str) -> list[str]:
    """One fingerprint per finding, unique in the run and stable across runs: rule, repository path, spec and
    the message's stable text, so a finding keeps its identity when lines move or its figures change. Findings
    that would share one (two documents declaring the same name) also take their line and column, and then their
    order: code scanning merges results with equal fingerprints."""
    bases = [f"{f.rule.id}|{repository_path(f.location.file, root)}|{f.spec}|{stable_text(f.message)}"
             for f in findings]
    shared = {b for b, n in Counter(bases).items() if n > 1}
    located = [f"{b}|{f.location.line}:{f.location.column}" if b in shared else b for b, f in zip(bases, findings)]
    seen: dict[str, int] = {}
    unique = []
    for basis in located:
        seen[basis] = seen.get(basis, 0) + 1
        unique.append(basis if seen[basis] == 1 else f"{basis}|#{seen[basis]}")
    return [hashlib.sha256(b.encode()).hexdigest()[:32] for b in unique]
