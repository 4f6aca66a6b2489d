"""adapters/files/suppressions.accept: comments the loader kept are used as kept (no file read again), other files
are read; repository paths are worked out only for per-path ignores, and give the same verdicts."""

import pytest

from gpustack_guard.adapters.files.spec_loader import suppression_comments
from gpustack_guard.adapters.files.suppressions import accept
from gpustack_guard.core import findings as F
from gpustack_guard.core.pipeline import Report
from gpustack_guard.core.rules.memory import KV_OVERSUBSCRIBED
from gpustack_guard.core.suppressions import InlineSuppression, RuleChoice, Selection


def _report(*files: str) -> Report:
    return Report([F.finding(KV_OVERSUBSCRIBED, F.Location(f, 3, 1), "too many sequences") for f in files])


def test_kept_comments_are_used_without_reading_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # gone.yaml does not exist: only the kept comment can accept its finding
    kept = {"gone.yaml": [InlineSuppression("gone.yaml", 3, 20, 3, ("GSG033",), "sized for it")]}
    result = accept(_report("gone.yaml"), Selection(), ["gone.yaml"], str(tmp_path), kept)
    assert result.findings == []
    assert [(s.finding.location.file, s.kind, s.justification) for s in result.suppressed] == [
        ("gone.yaml", "inSource", "sized for it")]


def test_files_not_kept_are_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("name: a\nx: 1\nreplicas: 2  # gsg: ignore[GSG033] read here\n")
    result = accept(_report("a.yaml"), Selection(), ["a.yaml"], str(tmp_path), {})
    assert result.findings == [] and [s.justification for s in result.suppressed] == ["read here"]


def test_per_path_ignores_match_repository_paths(tmp_path, monkeypatch):
    (tmp_path / "specs" / "team").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "specs")
    selection = Selection(per_path=(("specs/team/*", RuleChoice("GSG033", "gsg.yaml:3")),))
    report = _report("team/a.yaml", "b.yaml")
    result = accept(report, selection, ["team/a.yaml", "b.yaml"], str(tmp_path), {"team/a.yaml": [], "b.yaml": []})
    assert [f.location.file for f in result.findings] == ["b.yaml"]
    assert [(s.finding.location.file, s.justification) for s in result.suppressed] == [
        ("team/a.yaml", "ignored for specs/team/* by gsg.yaml:3: GSG033")]


def test_read_regular_reads_to_the_limit_and_refuses_one_byte_more(tmp_path):
    from gpustack_guard.adapters.files.regular_file import TooLarge, read_regular

    for size in (0, 1, 4096, 4097):
        (tmp_path / f"f{size}").write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
        assert len(read_regular(tmp_path / f"f{size}", 4097)) == size
    try:
        read_regular(tmp_path / "f4097", 4096)
    except TooLarge as exc:
        assert (exc.size, exc.limit) == (4097, 4096)
    else:
        raise AssertionError("a file one byte over the limit was read")


def test_acceptance_reads_gsg_yaml_with_the_command_line_and_one_root(tmp_path, monkeypatch):
    """validate, plan, apply and live verify build the same Acceptance: gsg.yaml's ignore plus --ignore, --select
    replacing gsg.yaml's select, and per-path globs resolved from the repository root (the .git folder)."""
    from gpustack_guard.adapters.files.suppressions import acceptance

    (tmp_path / ".git").mkdir()
    (tmp_path / "specs" / "team").mkdir(parents=True)
    (tmp_path / "specs" / "gsg.yaml").write_text(
        "select: [GSG03]\nignore: [GSG031]\nper_path_ignores:\n  'specs/team/*': [GSG033]\n")
    monkeypatch.chdir(tmp_path / "specs")
    accepted = acceptance(["."], ignore=("GSG032",))
    assert accepted.root == str(tmp_path)
    assert [c.pattern for c in accepted.selection.select] == ["GSG03"]
    assert [(c.pattern, c.source) for c in accepted.selection.ignore] == [
        ("GSG031", "gsg.yaml:2"), ("GSG032", "--ignore")]
    active, suppressed = accepted.select(_report("team/a.yaml", "b.yaml").findings)
    assert [f.location.file for f in active] == ["b.yaml"]
    assert [s.justification for s in suppressed] == ["ignored for specs/team/* by gsg.yaml:4: GSG033"]
    assert [c.pattern for c in acceptance(["."], select=("GSG033",)).selection.select] == ["GSG033"]



# A `#` inside a value is text: only a real YAML comment suppresses (the adapter gives the scalars' places).
@pytest.mark.parametrize("text, expected", [
    # double- and single-quoted, a flow sequence's quoted item: no comment; a real one after the value still is
    ('b: "x # gsg: ignore[GSG033] in the value"\n', []),
    ("b: 'x # gsg: ignore[GSG033] in the value'\n", []),
    ('b: ["x # gsg: ignore[GSG033] in", y]\n', []),
    ('b: "x # gsg: ignore[GSG034] in"  # gsg: ignore[GSG033] real\n', [(1, 34, 1, ("GSG033",), "real")]),
    # a quoted value over two lines whose second line starts with '#': text, and it does not stand between
    ('b: "first\n  # gsg: ignore[GSG033] in the value"\n', []),
    ("# gsg: ignore[GSG033] above\nb: 'it''s\n  # not a comment'\n", [(1, 1, 2, ("GSG033",), "above")]),
    # a block scalar's lines are text; a comment after its indicator is a comment
    ("b: |\n  # gsg: ignore[GSG033] a shell comment\nc: 1\n", []),
    ("b: >-  # gsg: ignore[GSG033] why\n  # text\n", [(1, 8, 1, ("GSG033",), "why")]),
    # plain values cannot hold ' #': that is a comment
    ("b: x # gsg: ignore[GSG033] plain\n", [(1, 6, 1, ("GSG033",), "plain")]),
    # a file that is not YAML past some line: the scalars before the error are known, the rest read as comments
    ('a: "x # gsg: ignore[GSG033] in"\nb: [\n# gsg: ignore[GSG034] after\n', [(3, 1, 4, ("GSG034",), "after")]),
])
def test_a_hash_inside_a_quoted_or_block_scalar_is_no_suppression(text, expected):
    found = [(c.line, c.column, c.target, c.ids, c.reason) for c in suppression_comments("s.yaml", text)]
    assert found == expected
