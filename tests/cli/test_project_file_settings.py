"""gsg.yaml names the repository's fleet snapshot (`fleet:`) and rendered file (`rendered:`), so the shipped
pre-commit hooks run with `args: [specs/]` in a user's repository (not only in this one)."""

import shlex
import shutil

import httpx
import pytest
import yaml
from support import FLEET, REPO
from support.fake_gpustack import FakeGPUStack

import gpustack_guard.wiring as wiring


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A user's repository: .git, specs/ with its own gsg.yaml, the snapshot in fleets/."""
    (tmp_path / ".git").mkdir()
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    (tmp_path / "fleets").mkdir()
    shutil.copy(FLEET, tmp_path / "fleets" / "prod.yaml")
    (specs / "gsg.yaml").write_text("project: user-team\nfleet: ../fleets/prod.yaml\n")
    monkeypatch.setenv("HF_TOKEN", "hf_test_secret_token_value")  # the example specs reference it
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _hooks() -> dict:
    return {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def _run_hook(gsg, hook_id: str):
    """What pre-commit runs for the hook with its default args: entry + args, no file names."""
    hook = _hooks()[hook_id]
    return gsg(*shlex.split(hook["entry"])[1:], *hook["args"])


def test_the_validate_hook_with_its_default_args_uses_the_snapshot_gsg_yaml_names(gsg, repo):
    assert _hooks()["gsg-validate"]["args"] == ["specs/"]
    result = _run_hook(gsg, "gsg-validate")
    assert result.code == 0, result.err
    assert result.err.endswith("gsg: 0 errors, 1 warning, 0 notes in 4 specs (4 files)\n")
    (repo / "fleets" / "prod.yaml").unlink()  # the near miss: the snapshot named is the one read
    missing = _run_hook(gsg, "gsg-validate")
    assert missing.code == 1 and missing.err == "gsg: error: fleets/prod.yaml: fleet snapshot file not found\n"


def test_without_a_fleet_anywhere_the_error_names_every_way_to_give_one(gsg, repo):
    (repo / "specs" / "gsg.yaml").write_text("project: user-team\n")
    result = gsg("validate", "specs/")
    assert result.code == 1 and result.err == (
        "gsg: error: no fleet to validate against: pass --fleet FILE (a snapshot) or --server URL (GSG_URL), or "
        "name the snapshot in gsg.yaml (`fleet: PATH`)\n")


def test_fleet_on_the_command_line_and_the_contexts_fleet_win_over_gsg_yaml(gsg, repo, monkeypatch):
    (repo / "specs" / "gsg.yaml").write_text("project: user-team\nfleet: ../fleets/absent.yaml\n")
    assert gsg("validate", "specs/", "--fleet", "fleets/prod.yaml").code == 0
    config = repo / "config.yaml"
    config.write_text(yaml.safe_dump({"current-context": "prod", "contexts": {
        "prod": {"server": "http://gpustack.test", "api-key-env": "K", "fleet": "fleets/prod.yaml"}}}))
    monkeypatch.setenv("GSG_CONFIG", str(config))
    assert gsg("validate", "specs/").code == 0


def test_a_server_given_is_read_live_instead_of_gsg_yamls_snapshot(gsg, repo, monkeypatch):
    (repo / "specs" / "gsg.yaml").write_text("project: user-team\nfleet: ../fleets/absent.yaml\n")
    fake = FakeGPUStack.field_notes()
    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(fake.handle))
    monkeypatch.setenv("GSG_API_KEY", fake.api_key)
    result = gsg("validate", "specs/", "--server", "http://gpustack.test")
    assert result.code == 0, result.err
    assert any(path.startswith("/v2/workers") for _, path in fake.log)


@pytest.mark.parametrize("line, where, message", [
    ("fleet: ../../outside.yaml", "2:8", "`fleet: ../../outside.yaml` leads outside the repository"),
    ("fleet: /etc/passwd", "2:8", "`fleet: /etc/passwd` leads outside the repository"),
    ("rendered: ../../x.yaml", "2:11", "`rendered: ../../x.yaml` leads outside the repository"),
    ("fleet: 3", "2:8", "`fleet` is a path relative to this file, such as ../fleets/prod.yaml"),
    ("fleet: ''", "2:8", "`fleet` is a path relative to this file, such as ../fleets/prod.yaml"),
    ("fleet: [a.yaml]", "2:8", "`fleet` is a path relative to this file, such as ../fleets/prod.yaml"),
    ("fleets: ../fleets/prod.yaml", "2:1", "unknown field 'fleets' (a project file holds project, fleet, rendered, "
                                           "select, ignore, per_path_ignores)"),
])
def test_bad_paths_in_gsg_yaml_are_one_line_errors_at_their_line(gsg, repo, line, where, message):
    (repo / "specs" / "gsg.yaml").write_text(f"project: user-team\n{line}\n")
    for argv in (("validate", "specs/"), ("render", "specs/", "--check")):
        result = gsg(*argv)
        assert result.code == 1 and result.err.startswith(f"gsg: error: specs/gsg.yaml:{where}: {message}")
        assert result.err.count("\n") == 1


def test_a_path_that_stays_inside_the_repository_through_dotdot_is_fine(gsg, repo):
    (repo / "specs" / "gsg.yaml").write_text("project: user-team\nfleet: ../specs/../fleets/prod.yaml\n")
    assert gsg("validate", "specs/").code == 0


def test_the_render_check_hook_compares_the_file_gsg_yaml_names(gsg, repo):
    assert _hooks()["gsg-render-check"]["args"] == ["specs/"]
    refused = _run_hook(gsg, "gsg-render-check")
    assert refused.code == 1 and refused.err == (
        "gsg: error: --check needs --out FILE, or `rendered: PATH` in gsg.yaml (the committed rendered file to "
        "compare)\n")
    (repo / "specs" / "gsg.yaml").write_text("project: user-team\nrendered: ../rendered/specs.yaml\n")
    (repo / "rendered").mkdir()
    assert gsg("render", "specs/", "--out", "rendered/specs.yaml").code == 0
    assert _run_hook(gsg, "gsg-render-check").code == 0
    (repo / "rendered" / "specs.yaml").write_text("name: old\n")
    stale = _run_hook(gsg, "gsg-render-check")
    assert stale.code == 1 and "rendered/specs.yaml is stale" in stale.err
