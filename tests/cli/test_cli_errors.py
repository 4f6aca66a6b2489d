"""Bad input: one clear line naming the file:line or the thing, exit 1, never a traceback."""

import re
import time

import pytest
from support import FLEET, REPO


def one_line_error(result, pattern):
    assert result.code == 1
    assert "Traceback" not in result.out + result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    assert re.search(pattern, lines[0]), lines[0]


def test_missing_fleet_file(gsg, tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nsource: huggingface\nhuggingface_repo_id: x/y\n")
    one_line_error(gsg("validate", str(tmp_path), "--fleet", "nope.yaml"), r"nope\.yaml: fleet snapshot file not found")


def test_directory_without_specs(gsg, tmp_path):
    one_line_error(gsg("validate", str(tmp_path), "--fleet", str(FLEET)), r"no spec files")


def test_missing_spec_path(gsg):
    one_line_error(gsg("validate", "does-not-exist", "--fleet", str(FLEET)), r"does-not-exist: no such file")


def test_malformed_fleet_names_its_line(gsg, tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nsource: huggingface\nhuggingface_repo_id: x/y\n")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("clusters:\n  - name: c\n    workers:\n      - name: w\n        gpus:\n"
                     "          - {index: 0, memory: {total: lots}}\n")
    one_line_error(gsg("validate", str(tmp_path / "a.yaml"), "--fleet", str(fleet)),
                   r"fleet\.yaml:6:\d+: 'clusters\.0\.workers\.0\.gpus\.0\.memory\.total'")


def test_malformed_spec_yaml_is_a_finding_with_its_line(gsg, tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nsource: [huggingface\n")
    result = gsg("validate", str(tmp_path), "--fleet", str(FLEET))
    assert result.code == 1
    assert re.search(r"a\.yaml:2:9: error GSG001 yaml-syntax: .\[. opened here is not closed", result.out)


def test_usage_errors_exit_1_not_2(gsg):
    result = gsg("validate")
    assert result.code == 1 and "usage error" in result.err
    assert gsg("no-such-command").code == 1
    assert gsg("validate", "specs", "--fleet", str(FLEET), "--fail-level", "fatal").code == 1


def test_unknown_output_format(gsg, tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nsource: huggingface\nhuggingface_repo_id: x/y\n")
    one_line_error(gsg("validate", str(tmp_path), "--fleet", str(FLEET), "-o", "xml"), r"usage error: .*'xml' is not one of")


def test_help_for_every_command(gsg):
    from gpustack_guard.cli import app

    commands = sorted(c.name or c.callback.__name__ for c in app.registered_commands)
    assert {"validate", "render", "schema", "estimate", "snapshot", "export", "plan", "apply", "drift"} <= set(commands)
    for command in commands:
        result = gsg(command, "--help")
        assert result.code == 0 and "Usage: gsg " + command in result.out, command
        assert result.err == ""
    assert "Commands:" in gsg("--help").out


def test_no_fleet_no_server_is_a_clear_error(gsg, tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nsource: huggingface\nhuggingface_repo_id: x/y\n")
    one_line_error(gsg("validate", str(tmp_path)), r"no fleet to validate against")


def test_internal_errors_exit_3_without_traceback(gsg, monkeypatch):
    import gpustack_guard.commands.validate as command

    def boom(*_a, **_k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(command, "run", boom)
    result = gsg("validate", "specs", "--fleet", str(FLEET))
    assert result.code == 3 and "internal error: RuntimeError: kaboom" in result.err
    assert "Traceback" not in result.err


def test_short_help_on_the_root_and_every_command(gsg):
    assert gsg("-h").out.startswith("Usage: gsg [OPTIONS] COMMAND")
    for command in ("validate", "plan", "apply"):
        assert gsg(command, "-h").out.startswith(f"Usage: gsg {command} ")


def test_quiet_keeps_the_report_and_errors_but_not_the_summary(gsg):
    loud = gsg("validate", "specs/", "--fleet", str(FLEET), cwd=FLEET.parent.parent)
    quiet = gsg("--quiet", "validate", "specs/", "--fleet", str(FLEET), cwd=FLEET.parent.parent)
    assert loud.err.startswith("gsg: 0 errors, 1 warning") and quiet.err == ""
    assert quiet.out == loud.out and quiet.code == loud.code == 0
    # after the subcommand, anywhere before `--`, it is the same flag
    for argv in (["validate", "-q", "specs/", "--fleet", str(FLEET)], ["validate", "specs/", "--fleet", str(FLEET),
                                                                       "--quiet"]):
        after = gsg(*argv, cwd=FLEET.parent.parent)
        assert (after.out, after.err, after.code) == (quiet.out, "", 0), argv
    failing = gsg("-q", "validate", "no-such-folder", "--fleet", str(FLEET))
    assert failing.code == 1 and failing.err.startswith("gsg: error:")


def test_a_q_after_the_separator_stays_a_backend_argument():
    from gpustack_guard.cli import _global_flags_first

    assert _global_flags_first(["estimate", "-m", "x", "-q", "--", "-q", "--quiet"]) == \
        ["-q", "estimate", "-m", "x", "--", "-q", "--quiet"]
    assert _global_flags_first(["validate", "specs/"]) == ["validate", "specs/"]
    # a command's own -q is its own: estimate's -q is --quantization
    assert _global_flags_first(["estimate", "-q", "q4_k_m", "--quiet"], frozenset({"-q", "--quantization"})) == \
        ["--quiet", "estimate", "-q", "q4_k_m"]


def test_shell_completion_is_offered(gsg):
    assert "--install-completion" in gsg("--help").out


def test_an_empty_spec_file_fails_and_every_file_read_is_counted(gsg, tmp_path):
    spec = ("name: {}\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\nreplicas: 0\n"
            "gpu_selector: {{gpu_ids: [gpu-a:cuda:0]}}\n")
    (tmp_path / "a.yaml").write_text(spec.format("a"))
    (tmp_path / "b.yaml").write_text("# truncated by a bad merge\n")
    (tmp_path / "c.yaml").write_text(spec.format("c"))
    result = gsg("validate", str(tmp_path), "--fleet", str(FLEET), "--offline")
    assert result.code == 1
    assert re.search(r"b\.yaml:1:1: error GSG018 empty-spec: no document in this file", result.out), result.out
    assert result.err == "gsg: 1 error, 0 warnings, 0 notes in 2 specs (3 files)\n"


def test_hostile_yaml_ends_fast_with_one_finding_per_file(gsg, tmp_path):
    laughs = ('name: lol\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
              + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)))
    (tmp_path / "laughs.yaml").write_text(laughs)
    (tmp_path / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "missing.yaml")
    started = time.process_time()  # CPU time: the billion-laughs document expanded would take minutes
    result = gsg("validate", str(tmp_path), "--fleet", str(FLEET), "--offline")
    assert time.process_time() - started < 1.0
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert [":".join(line.split(":")[:4]) for line in result.out.splitlines() if not line.startswith(" ")] == [
        f"{tmp_path}/latin1.yaml:1:1: error GSG019 unreadable-file",
        f"{tmp_path}/laughs.yaml:6:8: error GSG017 input-limit",
        f"{tmp_path}/link.yaml:1:1: error GSG019 unreadable-file"]


def test_the_command_named_first_is_built_alone_with_the_same_options(monkeypatch):
    # cli builds only the invoked command (scale benchmark); it must parse exactly as in the whole app
    from gpustack_guard import cli

    monkeypatch.delenv("_GSG_COMPLETE", raising=False)
    assert cli._first_command(["validate", "specs/"]) == "validate"
    # the root's own -q first (where _global_flags_first puts it): the pruned app has the same root options
    assert cli._first_command(["-q", "validate", "specs/"]) == "validate"
    assert cli._first_command(["--version"]) is None
    assert cli._first_command(["--help"]) is None and cli._first_command([]) is None
    assert cli._first_command(["no-such-command"]) is None  # click's "No such command" lists the real ones
    full, alone = cli._click_command(None), cli._click_command("validate")
    assert list(alone.commands) == ["validate"] and len(full.commands) > 1
    assert [p.opts for p in alone.params] == [p.opts for p in full.params]  # --version, --quiet, completion
    shown = [(p.name, p.opts, p.envvar, p.default, p.help) for p in alone.commands["validate"].params]
    assert shown == [(p.name, p.opts, p.envvar, p.default, p.help) for p in full.commands["validate"].params]
    monkeypatch.setenv("_GSG_COMPLETE", "complete_bash")
    assert cli._first_command(["validate"]) is None  # shell completion lists every command


@pytest.mark.parametrize("args", [
    ("validate", "-h"), ("validate", "--help"),
    ("validate", "--ofline"),  # a typo of an option: click's "Did you mean --offline?"
    ("validate", "--fleet"),  # an option missing its value
    ("--version",), ("-h",), ("valdate",), ("no-such-command",), ()])  # root options and typos: the whole app
def test_the_pruned_app_answers_as_the_whole_app(gsg, monkeypatch, args):
    from gpustack_guard import cli

    monkeypatch.delenv("_GSG_COMPLETE", raising=False)
    alone = gsg(*args)
    monkeypatch.setattr(cli, "_first_command", lambda argv: None)
    whole = gsg(*args)
    assert (alone.code, alone.out, alone.err) == (whole.code, whole.out, whole.err)


def test_a_command_typo_is_told_the_nearest_command(gsg):
    result = gsg("valdate")
    assert result.code == 1 and "No such command 'valdate'" in result.out + result.err
    assert "Did you mean 'validate'?" in result.out + result.err, result.out + result.err


@pytest.mark.parametrize("body,says", [
    ("project: p\nbogus: 1\n", "gsg.yaml:2:1: unknown field 'bogus' (a project file holds project, fleet, "
                            "rendered, select, ignore, per_path_ignores)"),
    ("project: [1, 2]\n", "gsg.yaml:1:10: project name '[1, 2]' is not valid"),
    ("other: x\n", "gsg.yaml:1:1: unknown field 'other'"),
])
def test_validate_checks_the_project_file_apply_will_read(gsg, tmp_path, body, says):
    import shutil

    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "specs" / "gsg.yaml").write_text(body)
    result = gsg("validate", "specs", "--fleet", str(FLEET), cwd=tmp_path)
    assert result.code == 1 and result.err.startswith("gsg: error: specs/") and says in result.err, result.err
