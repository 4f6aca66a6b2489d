"""Findings a user has accepted on purpose: inline `# gsg: ignore[GSG033] reason` comments, and the rule
selection of gsg.yaml and the command line (`select`, `ignore`, `per_path_ignores`, `--select`, `--ignore`).

Pure: the adapter (adapters/files/suppressions.py) reads the files and hands their text here. Suppressed
findings are kept, with how and why they were suppressed, for SARIF; the counts and the exit code read only
the findings left active.
"""

from __future__ import annotations

import fnmatch
import re
from bisect import bisect_right
from collections import defaultdict
from typing import Iterable, Mapping, Sequence, Tuple

from gpustack_guard.core import echo
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.findings import Finding, Location, Rule, Severity, finding
from gpustack_guard.core.rules import documents
from gpustack_guard.core.rules.registry import RULES, lookup, suggestions
from gpustack_guard.core.rules.suppressions import SUPPRESSION_WITHOUT_REASON, UNUSED_SUPPRESSION
from gpustack_guard.core.values import frozen_value

IN_SOURCE = "inSource"  # SARIF's suppression kinds: a comment in the spec file ...
EXTERNAL = "external"  # ... or a setting outside it (gsg.yaml, the command line)

# The stages whose errors stop a spec: what they found cannot be hidden, as nothing checked the spec past it.
STOPPING_STAGES = (documents.LOADER, documents.CHECK, documents.RENDER)
ALL = "ALL"  # selects or ignores every rule, as in ruff

# A YAML comment (at a line start or after a blank) that says `gsg: ignore`, with or without its [ids].
_COMMENT = re.compile(r"(?:^|(?<=\s))#\s*gsg:\s*ignore(?:\[(?P<ids>[^\]]*)\])?(?P<reason>.*)$")


def can_suppress(rule: Rule) -> bool:
    """False for an error rule emitted by a stage that stops at it (GSG001 yaml-syntax, GSG011 template, ...)."""
    return not (rule.severity is Severity.ERROR and rule.emitted_by is not None
                and rule.emitted_by.startswith(STOPPING_STAGES))


@frozen_value(eq=True)
class InlineSuppression:
    """One `# gsg: ignore[...] reason` comment: where it is, the ids it names and why."""

    __repr__ = fields_repr

    file: str
    line: int  # where the comment is
    column: int
    target: int  # the line whose findings it suppresses: its own, or the next one with content
    ids: tuple[str, ...]  # as written, upper case; empty for a bare `# gsg: ignore`
    reason: str


# Where a quoted or block scalar's text lies: ((line, column), (line, column)), 0-based, the end excluded, in file
# order (the YAML reader in adapters/files/yaml_positions.py finds them: the core reads no YAML).
ScalarSpan = Tuple[Tuple[int, int], Tuple[int, int]]


class _ScalarText:
    """Whether a place in the file is inside a scalar's text, where `#` is a character, not a comment."""

    def __init__(self, spans: Sequence[ScalarSpan]):
        self.spans = spans
        self.starts = [start for start, _ in spans]

    def holds(self, line: int, column: int) -> bool:
        index = bisect_right(self.starts, (line, column)) - 1
        return index >= 0 and (line, column) < self.spans[index][1]


def _real_comment(line: str, number: int, scalars: _ScalarText) -> re.Match[str] | None:
    """The line's first `# gsg: ignore` outside any scalar's text."""
    match = _COMMENT.search(line)
    while match is not None and scalars.holds(number - 1, match.start()):
        match = _COMMENT.search(line, match.start() + 1)
    return match


def scan(file: str, text: str, scalars: Sequence[ScalarSpan] = ()) -> list[InlineSuppression]:
    """Every `# gsg: ignore[...]` comment of a file. One after content suppresses on its own line; one alone on
    its line suppresses on the next line with content (other comment lines may stand between, a blank line
    may not: the comment then targets that blank line, matches nothing and is reported). A `#` inside one of
    the `scalars` (a quoted value, a block scalar's lines) is text, and no comment."""
    if "gsg:" not in text:  # nearly every file: skip the line walk
        return []
    inside = _ScalarText(scalars)
    found: list[InlineSuppression] = []
    waiting: list[tuple[int, int, tuple[str, ...], str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        alone = stripped.startswith("#") and not inside.holds(number - 1, len(line) - len(line.lstrip()))
        match = _real_comment(line, number, inside)
        if match is None and alone:
            continue  # another comment between a suppression and its line
        if waiting and (match is None or not alone):
            found += [InlineSuppression(file, n, c, number, ids, reason) for n, c, ids, reason in waiting]
            waiting = []
        if match is None:
            continue
        ids = tuple(dict.fromkeys(i.strip().upper() for i in (match["ids"] or "").split(",") if i.strip()))
        entry = (number, match.start() + 1, ids, match["reason"].strip())
        if alone:
            waiting.append(entry)
        else:
            found.append(InlineSuppression(file, *entry[:2], number, *entry[2:]))
    found += [InlineSuppression(file, n, c, n + 1, ids, reason) for n, c, ids, reason in waiting]
    return found


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class RuleChoice:
    """One entry of select/ignore as written, and where it was written (`gsg.yaml:4`, `--ignore`)."""

    __repr__ = fields_repr

    pattern: str
    source: str

    def matches(self, rule: Rule) -> bool:
        wanted = self.pattern.strip()
        if wanted.upper() == ALL:
            return True
        if wanted.upper().startswith("GSG"):
            return rule.id.startswith(wanted.upper())  # GSG03 is every memory rule GSG030-GSG039
        return rule.name == wanted.lower()


def choice_problem(choice: RuleChoice, ignoring: bool) -> str | None:
    """Why an entry cannot be used (it names no rule, or ignores a rule that cannot be), or None."""
    matched = [r for r in RULES.values() if choice.matches(r)]
    if not matched:
        close = suggestions(choice.pattern)
        hint = f" (did you mean {', '.join(close)}?)" if close else " (`gsg rule` lists them)"
        return f"'{echo.message(choice.pattern, 80)}' names no rule{hint}"
    exact = lookup(choice.pattern)
    if ignoring and exact is not None and not can_suppress(exact):
        return (f"{exact.id} {exact.name} cannot be ignored: {exact.emitted_by} stops at it, so nothing checks the "
                "spec past it")
    return None


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Selection:
    """Which rules report: `select` (empty: all), then `ignore`, then `ignore` per path glob."""

    __repr__ = fields_repr

    select: tuple[RuleChoice, ...] = ()
    ignore: tuple[RuleChoice, ...] = ()
    per_path: tuple[tuple[str, RuleChoice], ...] = ()  # (glob relative to the repository root, entry)

    def problems(self) -> list[str]:
        entries = [(c, False) for c in self.select] + [(c, True) for c in self.ignore] + \
            [(c, True) for _, c in self.per_path]
        return [f"{c.source}: {problem}" for c, ignoring in entries
                if (problem := choice_problem(c, ignoring)) is not None]

    def why_off(self, f: Finding, path: str) -> str | None:
        """Why the selection turns this finding off (a SARIF justification), or None if it reports."""
        if not can_suppress(f.rule):
            return None
        if self.select and not any(c.matches(f.rule) for c in self.select):
            return f"not selected ({', '.join(sorted({c.source for c in self.select}))} select)"
        chosen = next((c for c in self.ignore if c.matches(f.rule)), None)
        if chosen is not None:
            return f"ignored by {chosen.source}: {chosen.pattern}"
        for glob, entry in self.per_path:
            if entry.matches(f.rule) and fnmatch.fnmatchcase(path, glob):
                return f"ignored for {glob} by {entry.source}: {entry.pattern}"
        return None


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Suppressed:
    """A finding kept out of the counts, and by what (a comment or a setting)."""

    __repr__ = fields_repr

    finding: Finding
    kind: str  # IN_SOURCE or EXTERNAL
    justification: str


def _comment_findings(comment: InlineSuppression, used: set[str]) -> Iterable[Finding]:
    where = Location(comment.file, comment.line, comment.column)
    if not comment.ids:
        yield finding(UNUSED_SUPPRESSION, where, "`# gsg: ignore` names no rule",
                      fix="name the rules it accepts: `# gsg: ignore[GSG033] reason`")
    for rule_id in comment.ids:
        rule = lookup(rule_id)
        if rule is None:
            close = suggestions(rule_id)
            yield finding(UNUSED_SUPPRESSION, where, f"ignore[{echo.message(rule_id, 80)}] names no rule",
                          fix=f"did you mean {', '.join(close)}?" if close else "`gsg rule` lists the rule ids")
        elif not can_suppress(rule):
            yield finding(UNUSED_SUPPRESSION, where, f"ignore[{rule.id}] cannot suppress {rule.name}: "
                          f"{rule.emitted_by} stops at it, so nothing checks the spec past it",
                          fix="fix the problem instead; delete the comment")
        elif rule.id not in used:
            yield finding(UNUSED_SUPPRESSION, where, f"ignore[{rule.id}] matches no finding on line {comment.target}",
                          fix="delete the comment, or move it to the line the finding names")
    if comment.ids and not comment.reason:
        yield finding(SUPPRESSION_WITHOUT_REASON, where, f"ignore[{','.join(comment.ids)}] gives no reason",
                      fix=f"write why after the bracket: `# gsg: ignore[{','.join(comment.ids)}] reason`")


def apply(findings: Iterable[Finding], selection: Selection, comments: Iterable[InlineSuppression],
          relative: Mapping[str, str]) -> tuple[list[Finding], list[Suppressed]]:
    """(active findings, suppressed findings). Inline comments first (the more specific, with a reason), then
    the selection; the comments' own findings (GSG026, GSG027) go through the selection too. `relative` maps
    a finding's file to its path from the repository root, which per_path_ignores globs match."""
    by_line: dict[tuple[str, int], list[InlineSuppression]] = defaultdict(list)
    comments = list(comments)
    for comment in comments:
        by_line[(comment.file, comment.target)].append(comment)
    used: dict[InlineSuppression, set[str]] = defaultdict(set)
    remaining: list[Finding] = []
    suppressed: list[Suppressed] = []
    for f in findings:
        here = by_line.get((f.location.file, f.location.line), []) if f.location.line else []
        match = next((c for c in here if f.rule.id in c.ids), None)
        if match is None or not can_suppress(f.rule):
            remaining.append(f)
            continue
        used[match].add(f.rule.id)
        suppressed.append(Suppressed(f, IN_SOURCE, echo.message(match.reason, echo.MESSAGE_CHARS)))
    remaining += [f for comment in comments for f in _comment_findings(comment, used[comment])]
    active: list[Finding] = []
    for f in remaining:
        why = selection.why_off(f, relative.get(f.location.file, f.location.file))
        if why is None:
            active.append(f)
        else:
            suppressed.append(Suppressed(f, EXTERNAL, why))
    return sorted(active, key=in_file_order), sorted(suppressed, key=lambda s: in_file_order(s.finding))


def in_file_order(f: Finding) -> tuple:
    return (f.location.file, f.location.line, f.location.column, f.rule.id)
