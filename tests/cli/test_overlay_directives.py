"""One context's overlay adds a deployment only it has, excludes one it does not manage, or deletes one it wants
gone (`$patch: exclude` / `$patch: delete`, as kustomize spells its directives); against the in-memory GPUStack."""

import json
import shutil

import pytest
import yaml
from support import FLEET, REPO
from support.fake_gpustack import FakeGPUStack

import gpustack_guard.wiring as wiring

CANARY = """name: llama-8b-canary
source: huggingface
huggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct
gpu_selector:
  gpu_ids: [gpu-d:cuda:1]
backend: vLLM
backend_version: 0.11.0
guard:
  template: vllm-hardened
  vars: {max_num_seqs: 4, gpu_memory_utilization: 0.8, max_model_len: 4096}
"""


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """One server and two contexts on it: prod applies specs/overlays/prod, base applies the specs as they are."""
    server = FakeGPUStack.field_notes()
    monkeypatch.setattr(wiring, "transport_factory", server.transport)
    monkeypatch.setenv("PROD_KEY", server.api_key)
    config = tmp_path / "config.yaml"
    context = {"server": "http://gpustack.test", "api-key-env": "PROD_KEY", "fleet": str(FLEET)}
    config.write_text(yaml.safe_dump({"current-context": "base", "contexts": {
        "prod": {**context, "overlay": "prod"}, "base": context}}))
    monkeypatch.setenv("GSG_CONFIG", str(config))
    monkeypatch.setenv("HF_TOKEN", "hf_test_secret_token_value")  # the example specs reference it
    return server


@pytest.fixture
def specs(tmp_path, monkeypatch):
    tree = tmp_path / "specs"
    shutil.copytree(REPO / "specs", tree)
    (tree / "overlays" / "prod").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tree


def _overlay(specs, text: str, name: str = "changes.yaml") -> None:
    (specs / "overlays" / "prod" / name).write_text(text)


def _plan(gsg, *args: str, code: int = 0) -> dict:
    """The changes by name; plan exits 1 when one of them is a conflict."""
    result = gsg("plan", "specs", "-o", "json", *args)
    assert result.code == code, result.err
    return {c["name"]: c for c in json.loads(result.out)["changes"]}


def _names(fake) -> set[str]:
    return {m["name"] for m in fake.models.values()}


BASE = {"llama-70b", "llama-8b", "llama-70b-q4", "qwen-32b"}


# --- a deployment only one context has ------------------------------------------------------------------------

def test_an_overlay_spec_with_source_adds_a_deployment_to_that_context_only(gsg, fake, specs):
    _overlay(specs, CANARY, "canary.yaml")
    assert set(_plan(gsg, "--context", "base")) == BASE
    prod = _plan(gsg, "--context", "prod")
    assert set(prod) == BASE | {"llama-8b-canary"}
    assert (prod["llama-8b-canary"]["action"], prod["llama-8b-canary"]["spec_file"]) == (
        "create", "specs/overlays/prod/canary.yaml")
    assert gsg("apply", "specs", "--context", "prod", "--yes").code == 0
    canary = fake.by_name("llama-8b-canary")
    assert canary["meta"]["gsg.dev/project"] == "field-notes-example"
    assert canary["meta"]["gsg.dev/spec"] == "overlays/prod/canary.yaml"  # relative to the project root
    assert "--max-num-seqs=4" in canary["backend_parameters"]  # rendered through its template like any spec


def test_an_added_spec_is_validated_where_it_is_written(gsg, fake, specs):
    _overlay(specs, CANARY.replace("backend: vLLM", "backend: vLMM"), "canary.yaml")
    result = gsg("validate", "specs", "--context", "prod", "-o", "json")
    found = [(f["rule_id"], f["file"], f["line"]) for f in json.loads(result.out)["findings"]
             if f["file"].startswith("specs/overlays")]
    assert found == [("GSG015", "specs/overlays/prod/canary.yaml", 6)]


def test_an_overlay_patch_of_an_undeclared_name_without_source_is_refused(gsg, fake, specs):
    _overlay(specs, "name: llama-8b-canary\nreplicas: 2\n")
    result = gsg("plan", "specs", "--context", "prod")
    assert result.code == 1 and result.err == (
        "gsg: error: specs/overlays/prod/changes.yaml:1: overlay 'prod' patches 'llama-8b-canary', which no spec "
        "declares (a deployment only this context has is a whole spec, with `source:`)\n")


# --- exclude: not managed in this context ----------------------------------------------------------------

def test_an_excluded_deployment_is_not_planned_applied_pruned_or_drifted_in_that_context(gsg, fake, specs):
    assert gsg("apply", "specs", "--context", "base", "--yes").code == 0
    hand_edited = fake.by_name("llama-8b")
    hand_edited["replicas"] = 3  # a hand edit a base plan would undo
    _overlay(specs, "name: llama-8b\n$patch: exclude\n")
    assert _plan(gsg, "--context", "base")["llama-8b"]["action"] == "update"  # the near miss
    prod = _plan(gsg, "--context", "prod", "--prune")
    assert "llama-8b" not in prod and {c["action"] for c in prod.values()} == {"noop"}
    assert gsg("apply", "specs", "--context", "prod", "--prune", "--yes").code == 0
    assert fake.by_name("llama-8b")["replicas"] == 3 and _names(fake) == BASE  # untouched, not pruned
    drift = json.loads(gsg("drift", "specs", "--context", "prod", "-o", "json").out)
    assert drift["sync"] == "Synced" and "llama-8b" not in {o["name"] for o in drift["owners"]}
    refused = gsg("plan", "specs", "--context", "prod", "--target", "llama-8b")
    assert refused.code == 1 and refused.err == ("gsg: error: --target llama-8b: overlay 'prod' excludes it from "
                                                 "this context (specs/overlays/prod/changes.yaml:1)\n")


def test_an_excluded_deployment_that_is_not_live_is_not_created(gsg, fake, specs):
    _overlay(specs, "name: llama-8b\n$patch: exclude\n")
    assert set(_plan(gsg, "--context", "prod")) == BASE - {"llama-8b"}
    assert gsg("apply", "specs", "--context", "prod", "--yes").code == 0
    assert _names(fake) == BASE - {"llama-8b"}


# --- delete: this context wants it gone ------------------------------------------------------------------

def test_an_overlay_delete_removes_this_projects_model_without_prune(gsg, fake, specs):
    assert gsg("apply", "specs", "--context", "base", "--yes").code == 0
    _overlay(specs, "name: llama-70b-q4\n$patch: delete\n")
    text = gsg("plan", "specs", "--context", "prod")
    assert text.code == 0
    assert ("  # llama-70b-q4 (llama-70b-gguf.yaml) will be deleted (overlay 'prod' deletes it "
            "(specs/overlays/prod/changes.yaml:1))\n  - llama-70b-q4\n") in text.out
    assert "Plan: 0 to create, 0 to update, 0 to replace, 1 to delete." in text.out
    change = _plan(gsg, "--context", "prod")["llama-70b-q4"]
    assert (change["action"], change["deleted_by"]) == ("delete", "specs/overlays/prod/changes.yaml:1")
    assert gsg("apply", "specs", "--context", "prod", "--yes").code == 0
    assert _names(fake) == BASE - {"llama-70b-q4"}
    assert {c["action"] for c in _plan(gsg, "--context", "prod").values()} == {"noop"}
    drift = json.loads(gsg("drift", "specs", "--context", "prod", "-o", "json").out)
    assert drift["sync"] == "Synced"
    assert _plan(gsg, "--context", "base")["llama-70b-q4"]["action"] == "create"  # other contexts still want it


def test_an_overlay_delete_with_prune_is_one_delete(gsg, fake, specs):
    assert gsg("apply", "specs", "--context", "base", "--yes").code == 0
    _overlay(specs, "name: llama-70b-q4\n$patch: delete\n")
    deletes = [c for c in _plan(gsg, "--context", "prod", "--prune").values() if c["action"] == "delete"]
    assert [(c["name"], c["deleted_by"]) for c in deletes] == [
        ("llama-70b-q4", "specs/overlays/prod/changes.yaml:1")]


def test_an_overlay_delete_of_another_projects_model_is_a_conflict_and_apply_touches_nothing(gsg, fake, specs):
    fake.create_unmanaged("llama-70b-q4", meta={"gsg.dev/managed-by": "gsg/0.1.0", "gsg.dev/project": "team-b"})
    _overlay(specs, "name: llama-70b-q4\n$patch: delete\n")
    change = _plan(gsg, "--context", "prod", code=1)["llama-70b-q4"]
    assert (change["action"], change["reason"]) == (
        "conflict", "overlay 'prod' deletes it (specs/overlays/prod/changes.yaml:1), but project 'team-b' owns it: "
                    "gsg deletes only models of project 'field-notes-example'")
    before = len(fake.models)
    assert gsg("apply", "specs", "--context", "prod", "--yes").code == 1
    assert len(fake.models) == before and fake.by_name("llama-70b-q4")["meta"]["gsg.dev/project"] == "team-b"


def test_an_overlay_delete_of_an_unmanaged_model_is_a_conflict(gsg, fake, specs):
    fake.create_unmanaged("llama-70b-q4")
    _overlay(specs, "name: llama-70b-q4\n$patch: delete\n")
    change = _plan(gsg, "--context", "prod", code=1)["llama-70b-q4"]
    assert change["action"] == "conflict" and change["reason"].endswith(
        "but it is not managed by gsg: gsg deletes only models of project 'field-notes-example'")


def test_a_saved_plan_with_an_overlay_delete_applies_from_a_part_of_the_project(gsg, fake, specs, tmp_path):
    """The delete came from the overlay, not --prune: applying the saved plan needs neither the flag nor the
    whole project read."""
    team = specs / "team"
    team.mkdir()
    shutil.move(str(specs / "llama-70b-gguf.yaml"), team / "llama-70b-gguf.yaml")
    assert gsg("apply", "specs", "--context", "base", "--yes").code == 0
    (team / "overlays" / "prod").mkdir(parents=True)
    (team / "overlays" / "prod" / "gone.yaml").write_text("name: llama-70b-q4\n$patch: delete\n")
    saved = str(tmp_path / "plan.json")
    assert gsg("plan", "specs/team", "--context", "prod", "--out", saved).code == 0
    result = gsg("apply", saved, "--context", "prod", "--yes")
    assert result.code == 0, result.err
    assert _names(fake) == BASE - {"llama-70b-q4"}


# --- what an overlay document may say -------------------------------------------------------------------

@pytest.mark.parametrize("text, where, message", [
    ("name: llama-8b\n$patch: replace\n", "2:9",
     "`$patch: replace` is not an overlay directive: `$patch: delete` (this context wants the deployment gone) or "
     "`$patch: exclude` (not managed here)"),
    ("name: llama-8b\n$patch: [delete]\n", "2:9", "`$patch: ['delete']` is not an overlay directive"),
    ("name: llama-8b\n$patch: delete\nreplicas: 0\n", "3:1",
     "`$patch: delete` takes only `name:`; 'replicas' would have no effect"),
    ("name: llama-8b\n$patch: exclude\nguard: {}\n", "3:1",
     "`$patch: exclude` takes only `name:`; 'guard' would have no effect"),
    ("name: nobody\n$patch: delete\n", "1", "overlay 'prod' deletes 'nobody', which no spec declares"),
    ("name: nobody\n$patch: exclude\n", "1", "overlay 'prod' excludes 'nobody', which no spec declares"),
    ("name: llama-8b\nreplicas: 2\n---\nname: llama-8b\n$patch: delete\n", "4",
     "'llama-8b' is patched twice (also at specs/overlays/prod/changes.yaml:1)"),
])
def test_bad_overlay_directives_are_one_line_errors(gsg, fake, specs, text, where, message):
    _overlay(specs, text)
    result = gsg("validate", "specs", "--context", "prod")
    assert result.code == 1
    assert result.err.startswith(f"gsg: error: specs/overlays/prod/changes.yaml:{where}: {message}")
    assert result.err.count("\n") == 1


def test_render_and_validate_see_the_context_as_plan_does(gsg, fake, specs):
    _overlay(specs, CANARY + "---\nname: qwen-32b\n$patch: exclude\n---\nname: llama-70b-q4\n$patch: delete\n")
    docs = json.loads(gsg("render", "specs", "--overlay", "prod", "-o", "json").out)
    assert sorted(d["name"] for d in docs) == ["llama-70b", "llama-8b", "llama-8b-canary"]
    result = gsg("validate", "specs", "--context", "prod")
    assert result.code == 0 and "in 3 specs (3 files)" in result.err


@pytest.mark.parametrize("body", ["$patch: delete\n", "$patch: exclude\n", "replicas: 2\n"])
def test_a_huge_undeclared_name_in_an_overlay_is_echoed_capped_and_escaped(gsg, fake, specs, body):
    _overlay(specs, f"name: \"\\e[31m{'x' * 5000}\"\n{body}")
    result = gsg("validate", "specs", "--context", "prod")
    assert result.code == 1 and result.err.count("\n") == 1
    assert len(result.err) < 500 and "\x1b" not in result.err and "(5,005 chars)" in result.err
