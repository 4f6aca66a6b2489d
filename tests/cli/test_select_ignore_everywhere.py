"""--select / --ignore on plan, apply and the live verify, as on validate: they replace gsg.yaml's `select` and add
to its `ignore`, an entry that names no rule is one line before the server is asked, and what they turn off
does not block a plan or fail a verify."""

import json

import pytest
from test_verify_live import L40S_LOG, deploy


def _strict(specs) -> None:
    """GSG033 of llama-70b becomes an error: the plan is blocked until it is accepted."""
    path = specs / "llama-70b.yaml"
    path.write_text(path.read_text() + "  policy: {strict: true}\n")


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_an_ignored_error_does_not_block_plan_or_apply(gsg, fake, specs, command):
    _strict(specs)
    extra = ("--yes",) if command == "apply" else ()
    blocked = gsg(command, "specs", *extra)
    assert blocked.code == 1 and f"gsg: {command} blocked: 1 validation error(s)" in blocked.err
    assert not fake.models
    for flags in (("--ignore", "GSG033"), ("--ignore", "GSG039,kv-oversubscribed"), ("--select", "GSG02,GSG04")):
        result = gsg(command, "specs", *extra, *flags)
        assert result.code == 0, (flags, result.err)
    assert len(fake.models) == (4 if command == "apply" else 0)


@pytest.mark.parametrize("command", ["plan", "apply", "verify"])
def test_an_entry_that_names_no_rule_is_one_line_before_the_server_is_asked(gsg, fake, specs, command):
    result = gsg(command, "specs", "--ignore", "GSG999")
    assert (result.code, result.out) == (1, "")
    assert result.err == "gsg: error: --ignore: 'GSG999' names no rule (did you mean GSG039, GSG019, GSG009?)\n"
    assert not [p for _, p in fake.log if p.startswith("/v2/models")]


def test_select_replaces_gsg_yamls_select_on_plan(gsg, fake, specs):
    _strict(specs)
    (specs / "gsg.yaml").write_text("project: field-notes-example\nselect: [GSG02]\n")
    assert gsg("plan", "specs").code == 0  # gsg.yaml selects placement only: GSG033 is off
    assert gsg("plan", "specs", "--select", "GSG03").code == 1  # the command line's select replaces it


def test_verify_findings_follow_ignore_and_stay_in_sarif_as_suppressed(gsg, fake, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # per-path globs are from the repository root
    (iid,) = deploy(fake, tmp_path)  # gsg estimates 204,272 tokens where the engine logged 158,656: GSG045
    fake.instance_logs[iid] = L40S_LOG
    assert gsg("verify", "specs/").code == 1
    ignored = gsg("verify", "specs/", "--ignore", "GSG045")
    assert ignored.code == 0 and "GSG045" not in ignored.out, ignored.out
    sarif = json.loads(gsg("verify", "specs/", "--ignore", "GSG045", "-o", "sarif").out)
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "GSG045"
    assert result["suppressions"] == [{"kind": "external", "justification": "ignored by --ignore: GSG045"}]
    (tmp_path / "specs" / "gsg.yaml").write_text("project: demo\nper_path_ignores: {'specs/*': [GSG045]}\n")
    assert gsg("verify", "specs/").code == 0  # gsg.yaml's per-path ignore, as validate reads it
    assert gsg("verify", "specs/", "--select", "GSG044").code == 0


def test_select_and_ignore_go_with_specs_not_with_a_log_file(gsg, tmp_path):
    log = tmp_path / "start.log"
    log.write_bytes(L40S_LOG)
    result = gsg("verify", "--log", str(log), "--ignore", "GSG045")
    assert result.code == 1 and result.err == (
        "gsg: error: --select/--ignore go with SPECS (the live verify's findings), not with --log FILE\n")
