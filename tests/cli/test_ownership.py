"""Ownership by project identity: two repositories on one GPUStack never prune each other's deployments.

The pure rules (who owns a model, what a run may touch) are table tests; the rest runs the real CLI against the
in-memory GPUStack with spec trees laid out as two teams would.
"""

import itertools
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from support import REPO

from gpustack_guard.adapters.files.project_file import covers_project, find_identity, recorded_path
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.ownership import LEGACY, PROJECT_OWNED, UNMANAGED, Claims, Owner, marker, owner

GPUS = {"a": ["gpu-a:cuda:0", "gpu-a:cuda:1"], "b": ["gpu-a:cuda:2", "gpu-d:cuda:0"]}


def _spec(name: str, gpu: str) -> str:
    return (f"name: {name}\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\n"
            f"gpu_selector:\n  gpu_ids: [{gpu}]\nbackend: vLLM\nbackend_version: 0.11.0\n"
            "backend_parameters: [--max-model-len=8192, --gpu-memory-utilization=0.9, --max-num-seqs=16]\n")


def _team(root: Path, team: str, names: list[str] | None = None, folder: str = "specs") -> Path:
    """A checkout of team `team` with specs/gsg.yaml (project team-<team>) and one spec per model."""
    specs = root / f"team-{team}" / folder
    specs.mkdir(parents=True, exist_ok=True)
    (specs / "gsg.yaml").write_text(f"project: team-{team}\n")
    for i, name in enumerate(names or [f"{team}1", f"{team}2"]):
        (specs / f"{name}.yaml").write_text(_spec(name, GPUS[team][i]))
    return specs


def _meta(fake, name: str) -> dict:
    return fake.by_name(name)["meta"]


# --- pure: who owns a model, what a run may manage --------------------------------------------------------

@pytest.mark.parametrize("meta, expected", [
    ({}, Owner(UNMANAGED)),
    ({"gsg.dev/managed-by": "helm/3"}, Owner(UNMANAGED, managed_by="helm/3")),
    ({"gsg.dev/managed-by": "gsg/0.1.0", "gsg.dev/spec": "specs/x.yaml"},
     Owner(LEGACY, None, "specs/x.yaml", "gsg/0.1.0")),
    ({"gsg.dev/managed-by": "gsg/0.2.0", "gsg.dev/spec": "x.yaml", "gsg.dev/project": "team-a"},
     Owner(PROJECT_OWNED, "team-a", "x.yaml", "gsg/0.2.0")),
    ({"gsg.dev/managed-by": "gsg/0.2.0", "gsg.dev/project": ""}, Owner(LEGACY, None, None, "gsg/0.2.0")),
])
def test_owner_of_a_live_model(meta, expected):
    assert owner({"name": "m", "meta": meta}) == expected


UNMANAGED_MODEL = Owner(UNMANAGED)
LEGACY_MODEL = Owner(LEGACY, None, "specs/m.yaml", "gsg/0.1.0")
TEAM_A_MODEL = Owner(PROJECT_OWNED, "team-a", "m.yaml", "gsg/0.1.0")
TEAM_B_MODEL = Owner(PROJECT_OWNED, "team-b", "m.yaml", "gsg/0.1.0")


@pytest.mark.parametrize("claims, found, allowed, takes", [
    (Claims("team-a"), TEAM_A_MODEL, True, False),
    (Claims("team-a"), TEAM_B_MODEL, False, True),
    (Claims("team-a", adopt=True), TEAM_B_MODEL, False, True),  # --adopt never takes another project's model
    (Claims("team-a", take_over_from=frozenset({"team-b"})), TEAM_B_MODEL, True, True),
    (Claims("team-a", take_over_from=frozenset({"team-c"})), TEAM_B_MODEL, False, True),
    (Claims("team-a"), LEGACY_MODEL, False, True),
    (Claims("team-a", claim_legacy=True), LEGACY_MODEL, True, True),
    (Claims("team-a"), UNMANAGED_MODEL, False, True),
    (Claims("team-a", adopt=True), UNMANAGED_MODEL, True, True),
    (Claims(None), LEGACY_MODEL, True, False),  # no identity: path-only markers are managed as before
    (Claims(None), TEAM_A_MODEL, False, True),  # ... but a project's model never is
    (Claims(None, adopt=True), UNMANAGED_MODEL, True, True),
])
def test_what_a_run_may_manage(claims, found, allowed, takes):
    assert claims.may_manage(found)[0] is allowed
    assert claims.takes_ownership(found) is takes


def test_conflict_reasons_name_the_owner_and_the_way_out():
    assert Claims("team-a").may_manage(TEAM_B_MODEL)[1] == (
        "owned by gsg project 'team-b', not project 'team-a'; move it to this project with `--take-over-from team-b`")
    assert Claims("team-a").may_manage(LEGACY_MODEL)[1] == (
        "legacy owned (gsg marker without a project, recorded spec specs/m.yaml); record project 'team-a' in its "
        "marker with `gsg apply --claim-legacy`")


def test_marker_names_the_project_only_when_there_is_one():
    with_project = marker("m.yaml", {"name": "m"}, "team-a")
    assert with_project["gsg.dev/project"] == "team-a" and with_project["gsg.dev/spec"] == "m.yaml"
    assert "gsg.dev/project" not in marker("specs/m.yaml", {"name": "m"}, None)
    assert with_project["gsg.dev/spec-digest"] == marker("x", {"name": "m"}, None)["gsg.dev/spec-digest"]


# --- finding the project ----------------------------------------------------------------------------------

def test_project_file_is_found_above_any_spec_path_and_paths_are_root_relative(tmp_path, monkeypatch):
    specs = _team(tmp_path, "a")
    (specs / "sub").mkdir()
    (specs / "sub" / "deep.yaml").write_text(_spec("deep", "gpu-a:cuda:3"))
    monkeypatch.chdir(tmp_path)
    for given in ("team-a/specs", "team-a/specs/sub", "team-a/specs/a1.yaml"):
        identity = find_identity([given], None)
        assert (identity.name, identity.root) == ("team-a", str(specs))
    identity = find_identity(["team-a/specs"], None)
    assert recorded_path(identity, "team-a/specs/sub/deep.yaml") == "sub/deep.yaml"
    monkeypatch.chdir(specs / "sub")
    assert recorded_path(find_identity(["."], None), "deep.yaml") == "sub/deep.yaml"  # same from anywhere
    assert covers_project(identity, [str(specs)]) and not covers_project(identity, [str(specs / "sub")])


def test_search_stops_at_the_repository_root(tmp_path):
    (tmp_path / "gsg.yaml").write_text("project: outside\n")
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / "specs").mkdir()
    assert find_identity([str(repo / "specs")], None) is None
    assert find_identity([str(tmp_path / "elsewhere.yaml")], None).name == "outside"


def test_project_option_without_a_file_roots_at_the_spec_folder(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    identity = find_identity([str(specs)], "team-x")
    assert (identity.name, identity.root, identity.declared_in) == ("team-x", str(specs), "--project/GSG_PROJECT")
    assert find_identity([str(specs)], None) is None


@pytest.mark.parametrize("text, message", [
    ("project: team a\n", "gsg.yaml:1:10: project name 'team a' is not valid"),
    ("project: team-a\nowner: me\n",
     "gsg.yaml:2:1: unknown field 'owner' (a project file holds project, fleet, rendered, select, ignore, "
     "per_path_ignores)"),
    ("name: x\n", "gsg.yaml:1:1: unknown field 'name'"),
    ("{}\n", "gsg.yaml:1:1: missing `project: NAME`"),
    ("project: [a\n", "gsg.yaml:1:10:"),
    ("project: 12\n", "gsg.yaml:1:10: project name '12' is not valid"),
    ("- project: a\n", "gsg.yaml: a project file is one mapping"),
])
def test_bad_project_files_are_one_line_with_a_position(tmp_path, monkeypatch, text, message):
    (tmp_path / "gsg.yaml").write_text(text)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GsgError) as caught:
        find_identity(["."], None)
    assert str(caught.value).startswith(message), str(caught.value)


def test_disagreeing_and_nested_and_mixed_projects_are_refused(tmp_path, monkeypatch):
    a, b = _team(tmp_path, "a"), _team(tmp_path, "b")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GsgError, match="--project/GSG_PROJECT says 'team-z' but team-a/specs/gsg.yaml declares"):
        find_identity([str(a)], "team-z")
    with pytest.raises(GsgError, match="these specs belong to different project files"):
        find_identity([str(a), str(b)], None)
    with pytest.raises(GsgError, match="team-a/specs/gsg.yaml: a project file inside the spec tree declares a nested"):
        find_identity([str(tmp_path)], "all")


# --- two teams, one server --------------------------------------------------------------------------------

STEPS = {
    "a-apply": ("a", ["apply", "--yes"]),
    "a-prune": ("a", ["apply", "--yes", "--prune"]),
    "b-apply": ("b", ["apply", "--yes"]),
    "b-prune": ("b", ["apply", "--yes", "--prune"]),
}


@pytest.mark.parametrize("order", list(itertools.permutations(STEPS)), ids="/".join)
def test_two_projects_with_identical_folder_names_never_prune_each_other(gsg, fake, tmp_path, order):
    trees = {"a": _team(tmp_path, "a"), "b": _team(tmp_path, "b")}
    applied = set()
    for step in order:
        team, args = STEPS[step]
        result = gsg(*args[:1], "specs", *args[1:], cwd=trees[team].parent)  # both run `gsg apply specs/`
        assert result.code == 0, (step, result.out, result.err)
        applied.add(team)
        names = {m["name"] for m in fake.models.values()}
        assert names == {f"{t}{i}" for t in applied for i in (1, 2)}, (step, names)
    for team, tree in trees.items():
        assert all(_meta(fake, f"{team}{i}")["gsg.dev/project"] == f"team-{team}" for i in (1, 2))
        plan = gsg("plan", "specs", "--prune", "--detailed-exitcode", cwd=tree.parent)
        assert plan.code == 0 and plan.out.strip().endswith("No changes. Live deployments match the specs."), plan.out


def test_same_name_in_another_project_is_a_conflict_until_taken_over(gsg, fake, tmp_path):
    b = _team(tmp_path, "b", ["shared"])
    a = _team(tmp_path, "a", ["shared"])
    assert gsg("apply", str(b), "--yes").code == 0
    before = json.dumps(fake.by_name("shared"), sort_keys=True)
    for extra in ([], ["--adopt"], ["--prune"], ["--take-over-from", "team-c"]):
        plan = gsg("plan", str(a), *extra)
        assert plan.code == 1, (extra, plan.out)
        assert "! shared" in plan.out and "owned by gsg project 'team-b', not project 'team-a'" in plan.out
        assert gsg("apply", str(a), "--yes", *extra).code == 1
    assert json.dumps(fake.by_name("shared"), sort_keys=True) == before  # neither updated nor deleted
    moved = gsg("apply", str(a), "--yes", "--take-over-from", "team-b")
    assert moved.code == 0, moved.err
    assert "taking it over from project 'team-b'" in moved.out
    assert _meta(fake, "shared")["gsg.dev/project"] == "team-a"
    back = gsg("plan", str(b), "--prune")
    assert back.code == 1 and "owned by gsg project 'team-a', not project 'team-b'" in back.out
    assert gsg("plan", str(a), "--prune", "--detailed-exitcode").code == 0


def test_take_over_replays_from_a_saved_plan(gsg, fake, tmp_path):
    b = _team(tmp_path, "b", ["shared"])
    a = _team(tmp_path, "a", ["shared"])
    assert gsg("apply", str(b), "--yes").code == 0
    plan_file = tmp_path / "plan.json"
    assert gsg("plan", str(a), "--take-over-from", "team-b", "--out", str(plan_file)).code == 0
    saved = json.loads(plan_file.read_text())
    assert saved["project"] == "team-a"
    assert [(c["action"], c["adopt"], c["owner"]) for c in saved["changes"]] == [
        ("update", True, {"kind": "project", "project": "team-b", "spec_file": "shared.yaml"})]
    assert gsg("apply", str(plan_file), "--yes").code == 0
    assert _meta(fake, "shared")["gsg.dev/project"] == "team-a"


def test_a_renamed_spec_folder_prunes_correctly(gsg, fake, tmp_path):
    specs = _team(tmp_path, "a", ["a1", "a2"])
    assert gsg("apply", "specs", "--yes", cwd=specs.parent).code == 0
    renamed = specs.parent / "deploy"
    specs.rename(renamed)
    (renamed / "a2.yaml").unlink()  # removed in the same change
    plan = gsg("plan", "deploy", "--prune", cwd=specs.parent)
    assert plan.code == 0
    assert "  - a2" in plan.out and "Plan: 0 to create, 0 to update, 0 to replace, 1 to delete." in plan.out
    assert gsg("apply", "deploy", "--yes", "--prune").code == 0
    assert {m["name"] for m in fake.models.values()} == {"a1"}
    assert _meta(fake, "a1")["gsg.dev/spec"] == "a1.yaml"


def test_project_file_at_the_repository_root_survives_a_subfolder_rename(gsg, fake, tmp_path):
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    (repo / "gsg.yaml").write_text("project: team-r\n")
    for name, gpu in (("r1", "gpu-a:cuda:0"), ("r2", "gpu-a:cuda:1")):
        (repo / "specs" / f"{name}.yaml").write_text(_spec(name, gpu))
    assert gsg("apply", ".", "--yes", cwd=repo).code == 0
    assert _meta(fake, "r1")["gsg.dev/spec"] == "specs/r1.yaml"
    part = gsg("plan", "specs", "--prune")
    assert part.code == 1 and "--prune needs the whole project 'team-r': pass its root folder" in part.err
    (repo / "specs").rename(repo / "models")
    (repo / "models" / "r2.yaml").unlink()
    assert gsg("apply", ".", "--yes", "--prune").code == 0
    assert {m["name"] for m in fake.models.values()} == {"r1"}


def test_a_run_from_another_working_directory_plans_no_changes(gsg, fake, tmp_path):
    specs = _team(tmp_path, "a")
    assert gsg("apply", "specs", "--yes", cwd=specs.parent).code == 0
    recorded = {m["name"]: m["meta"]["gsg.dev/spec"] for m in fake.models.values()}
    for cwd, path in ((tmp_path, "team-a/specs"), (specs, "."), (tmp_path / "team-a", os.fspath(specs)),
                      (specs.parent.parent, "team-a/specs/")):
        plan = gsg("plan", path, "--prune", "--detailed-exitcode", cwd=cwd)
        assert plan.code == 0, (cwd, plan.out, plan.err)
        assert plan.out.strip().endswith("No changes. Live deployments match the specs.")
    assert gsg("apply", "team-a/specs", "--yes", cwd=tmp_path).code == 0
    assert {m["name"]: m["meta"]["gsg.dev/spec"] for m in fake.models.values()} == recorded == {
        "a1": "a1.yaml", "a2": "a2.yaml"}


# --- without a project; parts of a project ----------------------------------------------------------------

def test_without_a_project_apply_works_and_prune_refuses_in_one_line(gsg, fake, tmp_path):
    specs = _team(tmp_path, "a")
    (specs / "gsg.yaml").unlink()
    assert gsg("apply", "specs", "--yes", cwd=specs.parent).code == 0
    assert "gsg.dev/project" not in _meta(fake, "a1") and _meta(fake, "a1")["gsg.dev/spec"] == "specs/a1.yaml"
    (specs / "a2.yaml").unlink()
    for verb in (["plan"], ["apply", "--yes"]):
        refused = gsg(*verb, "specs", "--prune")
        assert refused.code == 1 and refused.out == ""
        assert refused.err == ("gsg: error: --prune needs a project identity, so that it never deletes another "
                               "repository's deployments: add a gsg.yaml with `project: NAME` at the spec root, or "
                               "pass --project NAME (GSG_PROJECT)\n")
    assert {m["name"] for m in fake.models.values()} == {"a1", "a2"}
    assert gsg("apply", "specs", "--yes", "--claim-legacy").code == 1  # nothing to record the claim as


def test_project_option_and_env_give_an_identity(gsg, fake, tmp_path, monkeypatch):
    specs = _team(tmp_path, "a")
    (specs / "gsg.yaml").unlink()
    assert gsg("apply", "specs", "--yes", "--project", "team-a", cwd=specs.parent).code == 0
    assert _meta(fake, "a1")["gsg.dev/project"] == "team-a" and _meta(fake, "a1")["gsg.dev/spec"] == "a1.yaml"
    (specs / "a2.yaml").unlink()
    monkeypatch.setenv("GSG_PROJECT", "team-a")
    assert gsg("apply", "specs", "--yes", "--prune").code == 0
    assert {m["name"] for m in fake.models.values()} == {"a1"}
    monkeypatch.setenv("GSG_PROJECT", "Team A")
    bad = gsg("plan", "specs")
    assert bad.code == 1 and "--project/GSG_PROJECT: project name 'Team A' is not valid" in bad.err


def test_prune_of_a_part_of_the_project_is_refused(gsg, fake, tmp_path):
    specs = _team(tmp_path, "a")
    assert gsg("apply", "specs", "--yes", cwd=specs.parent).code == 0
    refused = gsg("apply", "specs/a1.yaml", "--yes", "--prune")
    assert refused.code == 1 and "--prune needs the whole project 'team-a'" in refused.err
    assert len(fake.models) == 2


# --- legacy markers ---------------------------------------------------------------------------------------

def _legacy(fake, name: str, spec: str, gpu: str) -> dict:
    return fake.create_unmanaged(name, huggingface_repo_id="meta-llama/Llama-3.1-8B-Instruct",
                                 gpu_selector={"gpu_ids": [gpu]}, backend="vLLM", backend_version="0.11.0",
                                 backend_parameters=["--max-model-len=8192", "--gpu-memory-utilization=0.9",
                                                     "--max-num-seqs=16"],
                                 meta={"gsg.dev/managed-by": "gsg/0.1.0", "gsg.dev/spec": spec})


def test_legacy_owned_models_are_claimed_explicitly_and_never_pruned(gsg, fake, tmp_path):
    specs = _team(tmp_path, "a")
    _legacy(fake, "a1", "specs/a1.yaml", "gpu-a:cuda:0")
    other = _legacy(fake, "b9", "specs/b9.yaml", "gpu-d:cuda:0")  # another team's, from before projects
    other_before = json.dumps(other, sort_keys=True)
    plan = gsg("plan", "specs", "--prune", cwd=specs.parent)
    assert plan.code == 1
    assert "! a1" in plan.out and "legacy owned (gsg marker without a project, recorded spec specs/a1.yaml)" in plan.out
    assert "  # b9 is legacy owned (gsg marker without a project, recorded spec specs/b9.yaml; declared by no spec " \
        "here: prune never deletes it)\n  ? b9\n" in plan.out
    assert "1 legacy-owned model(s) left alone." in plan.out
    assert gsg("apply", "specs", "--yes", "--prune").code == 1
    claimed = gsg("apply", "specs", "--yes", "--prune", "--claim-legacy")
    assert claimed.code == 0, claimed.err
    assert "claiming it for project 'team-a' (legacy marker rewritten)" in claimed.out
    assert _meta(fake, "a1")["gsg.dev/project"] == "team-a" and _meta(fake, "a1")["gsg.dev/spec"] == "a1.yaml"
    assert not [p for _, p in fake.log if p.endswith("/restart")]  # a marker rewrite restarts nothing
    assert json.dumps(fake.by_name("b9"), sort_keys=True) == other_before
    again = gsg("plan", "specs", "--prune", "--detailed-exitcode")
    assert again.code == 0 and "? b9" in again.out


# --- what drift, export and snapshot show -----------------------------------------------------------------

def test_drift_export_and_snapshot_show_the_owning_project(gsg, fake, tmp_path):
    a, b = _team(tmp_path, "a"), _team(tmp_path, "b")
    assert gsg("apply", str(a), "--yes").code == 0 and gsg("apply", str(b), "--yes").code == 0
    _legacy(fake, "old", "specs/old.yaml", "gpu-a:cuda:3")
    fake.create_unmanaged("hand-made")
    drift = gsg("drift", str(a), "--output", "json")
    report = json.loads(drift.out)
    assert report["project"] == "team-a" and report["orphaned"] == [] and report["notes"] == []
    assert {o["name"]: o["owner"] for o in report["owners"]} == {
        "a1": "gsg project 'team-a'", "a2": "gsg project 'team-a'", "b1": "gsg project 'team-b'",
        "b2": "gsg project 'team-b'", "old": "gsg, legacy marker without a project (spec specs/old.yaml)",
        "hand-made": "not managed by gsg"}
    assert [i["name"] for i in report["legacy"]] == ["old"]
    text = gsg("drift", str(a)).out
    assert "Owners (this run: project 'team-a'):" in text and "  b1         gsg project 'team-b'" in text
    exported = gsg("export", "--out", str(tmp_path / "exported"))
    assert exported.code == 0
    assert "gsg: b1: gsg project 'team-b'" in exported.err
    header = (tmp_path / "exported" / "b1.yaml").read_text().splitlines()[2]  # after the modeline and the origin
    assert header == ("# Owner: gsg project 'team-b' (spec b1.yaml); to move it to another project, apply there "
                      "with --take-over-from team-b")
    assert gsg("snapshot", "--out", str(tmp_path / "fleet.yaml")).code == 0
    instances = [i for c in yaml.safe_load((tmp_path / "fleet.yaml").read_text())["clusters"] for i in c["instances"]]
    assert {i["model"]: i.get("project") for i in instances if i["model"] in ("a1", "b1", "old")} == {
        "a1": "team-a", "b1": "team-b", "old": None}


def test_drift_without_a_project_does_not_guess_orphans(gsg, fake, tmp_path):
    specs = _team(tmp_path, "a")
    (specs / "gsg.yaml").unlink()
    assert gsg("apply", "specs", "--yes", cwd=specs.parent).code == 0
    (specs / "a2.yaml").unlink()
    report = json.loads(gsg("drift", "specs", "--output", "json").out)
    assert report["orphaned"] == [] and report["notes"] == [
        "orphaned models not checked: without a project identity gsg cannot tell this repository's models from "
        "another's (declare one in gsg.yaml or --project)"]


def test_the_bundled_specs_declare_a_project(tmp_path):
    root = REPO
    assert find_identity([str(root / "specs")], None).name == "field-notes-example"
    shutil.copytree(root / "specs", tmp_path / "specs")
    assert find_identity([str(tmp_path / "specs")], None).root == str(tmp_path / "specs")
