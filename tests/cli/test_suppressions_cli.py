"""Rules as a user controls them, through the CLI: inline `# gsg: ignore[ID] reason`, gsg.yaml's select /
ignore / per_path_ignores, --select / --ignore, what suppressed findings do to the exit code, the counts and each
report, and the errors that name a bad entry."""

import json
import shutil

import pytest
from support import FLEET, REPO

OVERSUBSCRIBED = REPO / "examples" / "negative" / "GSG033-kv-oversubscribed" / "spec.yaml"  # strict: an error
LINE = "  - --max-num-seqs=64"  # line 10, where GSG033 is reported
REASON = "batch traffic only, never 64 long prompts at once"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "specs").mkdir()
    shutil.copy(OVERSUBSCRIBED, tmp_path / "specs" / "many.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _edit(repo, old, new):
    path = repo / "specs" / "many.yaml"
    path.write_text(path.read_text().replace(old, new))


def _validate(gsg, *extra):
    return gsg("validate", "specs", "--fleet", str(FLEET), *extra)


@pytest.mark.parametrize("comment", [f"{LINE}  # gsg: ignore[GSG033] {REASON}",
                                     f"  # gsg: ignore[GSG033] {REASON}\n{LINE}",
                                     f"  # gsg: ignore[GSG034, GSG033] {REASON}\n{LINE}"])
def test_an_inline_suppression_accepts_the_finding_on_its_line(gsg, repo, comment):
    assert _validate(gsg).code == 1
    _edit(repo, LINE, comment)
    result = _validate(gsg, "--fail-level", "warning")
    if "GSG034" in comment:  # the other id matches nothing there: reported, and it fails at --fail-level warning
        assert result.code == 1
        assert "warning GSG026 unused-suppression: ignore[GSG034] matches no finding on line 11" in result.out
        return
    assert (result.code, result.out) == (0, "")
    assert result.err == "gsg: 0 errors, 0 warnings, 0 notes in 1 spec (1 file); 1 suppressed\n"


def test_suppressed_findings_stay_in_sarif_with_their_reason(gsg, repo):
    _edit(repo, LINE, f"{LINE}  # gsg: ignore[GSG033] {REASON}")
    (repo / "gsg.yaml").write_text("ignore: [GSG039]\n")
    _edit(repo, "backend_version: 0.11.0\n", "")  # now GSG039 (version unset) reports, and is ignored
    result = _validate(gsg, "-o", "sarif")
    assert result.code == 0
    results = json.loads(result.out)["runs"][0]["results"]
    assert [(r["ruleId"], r["suppressions"]) for r in results] == [
        ("GSG039", [{"kind": "external", "justification": "ignored by gsg.yaml:1: GSG039"}]),
        ("GSG033", [{"kind": "inSource", "justification": REASON}])]
    assert _validate(gsg, "-o", "gitlab").out == "[]\n" and _validate(gsg, "-o", "github").out == ""
    doc = json.loads(_validate(gsg, "-o", "json").out)
    assert doc["summary"]["suppressed"] == 2 and doc["findings"] == []
    assert [(f["rule_id"], f["suppression"]["kind"]) for f in doc["suppressed"]] == [("GSG039", "external"),
                                                                                   ("GSG033", "inSource")]
    markdown = _validate(gsg, "-o", "markdown").out
    assert "0 errors, 0 warnings, 0 notes in 1 spec (1 file); 2 suppressed." in markdown and "GSG033" not in markdown


def test_a_suppression_without_a_reason_still_accepts_but_fails_the_run(gsg, repo):
    _edit(repo, LINE, f"{LINE}  # gsg: ignore[GSG033]")
    result = _validate(gsg)
    assert result.code == 1
    assert result.out.startswith("specs/many.yaml:10:24: error GSG027 suppression-without-reason: "
                                 "ignore[GSG033] gives no reason\n")
    assert "GSG033 kv-oversubscribed" not in result.out
    assert result.err.endswith("; 1 suppressed\n")


def test_fail_level_counts_only_what_is_left(gsg, repo):
    _edit(repo, "  policy:\n    strict: true\n", "")  # GSG033 back to a warning
    assert _validate(gsg).code == 0 and _validate(gsg, "--fail-level", "warning").code == 1
    assert _validate(gsg, "--fail-level", "warning", "--ignore", "GSG033").code == 0
    _edit(repo, LINE, f"{LINE}  # gsg: ignore[GSG033] {REASON}")
    assert _validate(gsg, "--fail-level", "warning").code == 0


@pytest.mark.parametrize("options, rules_left", [
    ((), ["GSG033", "GSG038"]),
    (("--ignore", "GSG033"), ["GSG038"]),
    (("--ignore", "GSG033,max-model-len-unset"), []),
    (("--ignore", "GSG033", "--ignore", "GSG038"), []),
    (("--select", "GSG03"), ["GSG033", "GSG038"]),
    (("--select", "GSG038"), ["GSG038"]),
    (("--select", "GSG020, GSG021"), []),
    (("--select", "ALL", "--ignore", "GSG03"), []),
])
def test_select_and_ignore_on_the_command_line(gsg, repo, options, rules_left):
    _edit(repo, "  - --max-model-len=32768\n", "")  # GSG038 (info): max-model-len unset
    result = _validate(gsg, "-o", "json", *options)
    assert sorted({f["rule_id"] for f in json.loads(result.out)["findings"]}) == rules_left


def test_project_file_rules_and_command_line_combine(gsg, repo):
    _edit(repo, "  - --max-model-len=32768\n", "")
    (repo / "gsg.yaml").write_text("project: team-a\nselect: [GSG038]\nper_path_ignores:\n  'specs/other*': [GSG038]\n")
    rules = lambda *o: sorted({f["rule_id"] for f in json.loads(_validate(gsg, "-o", "json", *o).out)["findings"]})  # noqa: E731
    assert rules() == ["GSG038"]
    assert rules("--select", "GSG033") == ["GSG033"]  # --select replaces gsg.yaml's select
    assert rules("--ignore", "GSG038") == []  # --ignore adds to it
    shutil.move(repo / "specs" / "many.yaml", repo / "specs" / "other.yaml")
    assert rules() == []  # the glob is from the repository root


@pytest.mark.parametrize("text, message", [
    ("ignore: [GSG999]\n", "gsg: error: gsg.yaml:1: 'GSG999' names no rule (did you mean GSG039, GSG019, GSG009?)"),
    ("ignore: [GSG033, headrom]\n", "gsg: error: gsg.yaml:1: 'headrom' names no rule (did you mean headroom?)"),
    ("select:\n  - GSG033\n  - GSG7\n", "gsg: error: gsg.yaml:3: 'GSG7' names no rule (did you mean GSG037, GSG027, GSG017?)"),
    ("ignore: [GSG001]\n", "gsg: error: gsg.yaml:1: GSG001 yaml-syntax cannot be ignored: the spec loader "
                           "(adapters/files/spec_loader.py) stops at it, so nothing checks the spec past it"),
    ("ignore: GSG033\n", "gsg: error: gsg.yaml:1:9: `ignore` is a list of rule ids, such as [GSG033, GSG04]"),
    ("per_path_ignores: [GSG033]\n", "gsg: error: gsg.yaml:1:19: `per_path_ignores` maps a path glob"),
    ("per_path_ignores: {'a/*': GSG033}\n",
     "gsg: error: gsg.yaml:1:27: `per_path_ignores.a/*` is a list of rule ids, such as [GSG033, GSG04]"),
    ("ignores: [GSG033]\n", "gsg: error: gsg.yaml:1:1: unknown field 'ignores' (a project file holds project, "
                            "fleet, rendered, select, ignore, per_path_ignores)"),
])
def test_bad_rule_settings_are_one_line_naming_the_entry(gsg, repo, text, message):
    (repo / "gsg.yaml").write_text(text)
    result = _validate(gsg)
    assert result.code == 1 and result.out == ""
    assert result.err.startswith(message) and result.err.count("\n") == 1, result.err


def test_too_many_entries_are_refused_by_name(gsg, repo, monkeypatch):
    from gpustack_guard.adapters.files import project_file

    monkeypatch.setattr(project_file, "MAX_RULE_ENTRIES", 2)
    (repo / "gsg.yaml").write_text("ignore: [GSG033, GSG034, GSG040]\n")
    assert _validate(gsg).err == "gsg: error: gsg.yaml:1:9: `ignore` has 3 entries; at most 2\n"


@pytest.mark.parametrize("option, value, message", [
    ("--ignore", "GSG999", "gsg: error: --ignore: 'GSG999' names no rule (did you mean GSG039, GSG019, GSG009?)\n"),
    ("--select", "GSG033,bogus", "gsg: error: --select: 'bogus' names no rule (`gsg rule` lists them)\n"),
    ("--ignore", "GSG011", "gsg: error: --ignore: GSG011 template cannot be ignored: rendering (core/render.py) "
                           "stops at it, so nothing checks the spec past it\n"),
])
def test_bad_command_line_entries_are_one_line(gsg, repo, option, value, message):
    result = _validate(gsg, option, value)
    assert (result.code, result.out, result.err) == (1, "", message)


def test_stage_stopping_errors_report_whatever_is_selected(gsg, repo):
    (repo / "specs" / "broken.yaml").write_text("name: [unclosed\n")
    result = _validate(gsg, "--select", "GSG033", "--ignore", "GSG0")
    assert result.code == 1
    assert result.out.startswith("specs/broken.yaml:1:7: error GSG001 yaml-syntax: '[' opened here is not closed")


def test_a_gsg_yaml_with_only_rules_has_no_project(gsg, repo):
    from gpustack_guard.adapters.files.project_file import find_identity

    (repo / "gsg.yaml").write_text("ignore: [GSG033]\n")
    assert find_identity(["specs"], None) is None
    assert find_identity(["specs"], "team-b").root == str(repo)
    assert _validate(gsg).code == 0


def test_plan_is_not_blocked_by_an_accepted_error(gsg, fake, specs):
    path = specs / "llama-70b.yaml"
    path.write_text(path.read_text() + "  policy: {strict: true}\n")  # GSG033 at line 16 becomes an error
    blocked = gsg("plan", str(specs))
    assert blocked.code == 1 and "gsg: plan blocked: 1 validation error(s)" in blocked.err
    path.write_text(path.read_text().replace("  template: vllm-hardened\n",
                                             f"  template: vllm-hardened  # gsg: ignore[GSG033] {REASON}\n"))
    planned = gsg("plan", str(specs))
    assert planned.code == 0, planned.err
    assert "Plan: 4 to create" in planned.out and "GSG033" not in planned.out
