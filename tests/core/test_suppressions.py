"""Inline suppressions and the rule selection, as pure functions: which comment targets which line, which
finding each one accepts, and what the comments themselves report (GSG026, GSG027)."""

import pytest

from gpustack_guard.core.findings import Location, finding
from gpustack_guard.core.rules.registry import RULES
from gpustack_guard.core.suppressions import (
    EXTERNAL,
    IN_SOURCE,
    InlineSuppression,
    RuleChoice,
    Selection,
    apply,
    can_suppress,
    choice_problem,
    scan,
)


def _at(rule_id: str, line: int, file: str = "s.yaml", message: str = "m"):
    return finding(RULES[rule_id], Location(file, line, 3), message, spec="x")


@pytest.mark.parametrize("text, expected", [
    # after content: its own line
    ("a: 1\nb: 2  # gsg: ignore[GSG033] batch only\n", [(2, 7, 2, ("GSG033",), "batch only")]),
    # alone: the next line with content
    ("# gsg: ignore[GSG033] batch only\nb: 2\n", [(1, 1, 2, ("GSG033",), "batch only")]),
    # stacked comments and another comment between: all reach the first content line
    ("# gsg: ignore[GSG033] one\n# a note\n  # gsg: ignore[gsg034, GSG033 ] two\nb: 2\n",
     [(1, 1, 4, ("GSG033",), "one"), (3, 3, 4, ("GSG034", "GSG033"), "two")]),
    # a blank line ends the reach: the comment targets the blank line (and will be reported unused)
    ("# gsg: ignore[GSG033] one\n\nb: 2\n", [(1, 1, 2, ("GSG033",), "one")]),
    # last line of the file: the line after it
    ("b: 2\n# gsg: ignore[GSG033] one", [(2, 1, 3, ("GSG033",), "one")]),
    # no reason, bare, empty brackets, spaces around the colon
    ("b: 2 #gsg:ignore[GSG033]\n", [(1, 6, 1, ("GSG033",), "")]),
    ("b: 2  # gsg: ignore because\n", [(1, 7, 1, (), "because")]),
    ("b: 2  # gsg: ignore[] why\n", [(1, 7, 1, (), "why")]),
])
def test_scan_finds_each_comment_and_its_target(text, expected):
    found = [(c.line, c.column, c.target, c.ids, c.reason) for c in scan("s.yaml", text)]
    assert found == expected


@pytest.mark.parametrize("text", [
    "b: 'a#gsg: ignore[GSG033] not a comment'\n",  # '#' inside a word is no YAML comment
    "b: 2  # gsg ignore[GSG033] no colon\n",
    "b: 2  # gsg: noqa\n",
    "",
])
def test_scan_ignores_what_is_no_suppression(text):
    assert scan("s.yaml", text) == []


def test_a_comment_accepts_its_rule_on_its_line_only():
    comment = InlineSuppression("s.yaml", 4, 7, 4, ("GSG033",), "batch")
    findings = [_at("GSG033", 4), _at("GSG034", 4), _at("GSG033", 5), _at("GSG033", 4, file="t.yaml")]
    active, suppressed = apply(findings, Selection(), [comment], {})
    assert [(f.rule.id, f.location.file, f.location.line) for f in active] == [
        ("GSG034", "s.yaml", 4), ("GSG033", "s.yaml", 5), ("GSG033", "t.yaml", 4)]
    assert [(s.finding.rule.id, s.kind, s.justification) for s in suppressed] == [("GSG033", IN_SOURCE, "batch")]


@pytest.mark.parametrize("ids, reason, expected", [
    (("GSG034",), "r", [("GSG026", "ignore[GSG034] matches no finding on line 4")]),
    (("GSG999",), "r", [("GSG026", "ignore[GSG999] names no rule")]),
    ((), "r", [("GSG026", "`# gsg: ignore` names no rule")]),
    (("GSG001",), "r", [("GSG026", "ignore[GSG001] cannot suppress yaml-syntax: the spec loader "
                                    "(adapters/files/spec_loader.py) stops at it, so nothing checks the spec past it")]),
    (("GSG033",), "", [("GSG027", "ignore[GSG033] gives no reason")]),
    (("GSG033", "GSG040"), "", [("GSG026", "ignore[GSG040] matches no finding on line 4"),
                                ("GSG027", "ignore[GSG033,GSG040] gives no reason")]),
])
def test_what_a_comment_reports_about_itself(ids, reason, expected):
    comment = InlineSuppression("s.yaml", 3, 1, 4, ids, reason)
    active, suppressed = apply([_at("GSG033", 4)], Selection(), [comment], {})
    own = [(f.rule.id, f.message) for f in active if f.rule.id in ("GSG026", "GSG027")]
    assert own == expected
    # the finding is accepted whenever its id is named, with or without a reason
    assert len(suppressed) == (1 if "GSG033" in ids else 0)


def test_stage_stopping_errors_are_never_suppressed():
    assert not can_suppress(RULES["GSG001"]) and not can_suppress(RULES["GSG011"])
    assert can_suppress(RULES["GSG014"]) and can_suppress(RULES["GSG033"]) and can_suppress(RULES["GSG027"])
    comment = InlineSuppression("s.yaml", 4, 1, 4, ("GSG002",), "r")
    everything = Selection(ignore=(RuleChoice("ALL", "--ignore"),))
    active, suppressed = apply([_at("GSG002", 4)], everything, [comment], {})
    assert [f.rule.id for f in active] == ["GSG002"]  # the comment's own GSG026 is ignored by ALL
    assert [s.finding.rule.id for s in suppressed] == ["GSG026"]


def test_selection_select_ignore_and_per_path():
    selection = Selection(select=(RuleChoice("GSG03", "gsg.yaml:1"),),
                          ignore=(RuleChoice("headroom", "--ignore"),),
                          per_path=(("specs/batch/*", RuleChoice("GSG033", "gsg.yaml:4")),))
    findings = [_at("GSG020", 2), _at("GSG033", 3), _at("GSG034", 4), _at("GSG040", 5),
                _at("GSG033", 6, file="batch.yaml")]
    relative = {"s.yaml": "specs/s.yaml", "batch.yaml": "specs/batch/batch.yaml"}
    active, suppressed = apply(findings, selection, [], relative)
    assert [(f.rule.id, f.location.line) for f in active] == [("GSG033", 3)]
    assert [(s.finding.rule.id, s.kind, s.justification) for s in suppressed] == [
        ("GSG033", EXTERNAL, "ignored for specs/batch/* by gsg.yaml:4: GSG033"),
        ("GSG020", EXTERNAL, "not selected (gsg.yaml:1 select)"),
        ("GSG034", EXTERNAL, "ignored by --ignore: headroom"),
        ("GSG040", EXTERNAL, "not selected (gsg.yaml:1 select)"),
    ]


@pytest.mark.parametrize("pattern, ignoring, problem", [
    ("GSG033", True, None), ("gsg03", True, None), ("kv-oversubscribed", True, None), ("ALL", True, None),
    ("GSG0", True, None),  # a prefix that also covers stage-stopping rules: those simply stay on
    ("GSG999", True, "'GSG999' names no rule (did you mean GSG039, GSG019, GSG009?)"),
    ("nonsense", False, "'nonsense' names no rule (`gsg rule` lists them)"),
    ("GSG001", False, None),  # selecting it is harmless
    ("GSG001", True, "GSG001 yaml-syntax cannot be ignored: the spec loader (adapters/files/spec_loader.py) "
                     "stops at it, so nothing checks the spec past it"),
])
def test_choice_problems_name_the_entry(pattern, ignoring, problem):
    assert choice_problem(RuleChoice(pattern, "--ignore"), ignoring) == problem


def test_the_unsuppressible_rules_are_those_the_readme_lists():
    fixed = {rid for rid, rule in RULES.items() if not can_suppress(rule)}
    assert fixed == {"GSG001", "GSG002", "GSG003", "GSG004", "GSG006", "GSG007", "GSG009", "GSG010", "GSG011",
                     "GSG012", "GSG013", "GSG016", "GSG017", "GSG018", "GSG019"}
