"""plan / apply / prune / drift against the in-memory GPUStack, including injected faults."""

import json

import pytest
from support.fake_gpustack import FakeGPUStack, Fault

SPEC_NAMES = {"llama-70b", "llama-8b", "llama-70b-q4", "qwen-32b"}
PROJECT = "field-notes-example"  # specs/gsg.yaml


def test_plan_apply_plan_converges(gsg, fake, specs):
    plan = gsg("plan", str(specs), "--detailed-exitcode")
    assert plan.code == 2, plan.err
    assert plan.out.rstrip().endswith("Plan: 4 to create, 0 to update, 0 to replace, 0 to delete.")
    assert "  + llama-70b" in plan.out and "+ backend_parameters:" in plan.out
    applied = gsg("apply", str(specs), "--yes")
    assert applied.code == 0, applied.err
    assert "Apply complete: 4 created, 0 updated, 0 replaced, 0 deleted." in applied.out
    assert {m["name"] for m in fake.models.values()} == SPEC_NAMES
    model = fake.by_name("llama-70b")
    assert model["meta"]["gsg.dev/managed-by"].startswith("gsg/")
    # recorded relative to the project root (specs/gsg.yaml), not to the working directory
    assert model["meta"]["gsg.dev/spec"] == "llama-70b.yaml" and model["meta"]["gsg.dev/project"] == PROJECT
    assert model["cluster_id"] == fake.clusters[0]["id"] and model["env"]["HF_TOKEN"] == "hf_test_secret_token_value"
    assert model["distributed_inference_across_workers"] is True
    again = gsg("plan", str(specs), "--detailed-exitcode")
    assert again.code == 0, again.out
    assert again.out.strip().endswith("No changes. Live deployments match the specs.")
    assert "GSG033" in again.out  # validation findings are shown with the plan
    assert all("hf_test_secret_token_value" not in r for r in (plan.out, plan.err, applied.out, applied.err))


def test_update_sends_whole_managed_set_and_restarts(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    text = (specs / "llama-8b.yaml").read_text().replace("max_num_seqs: 64", "max_num_seqs: 48")
    (specs / "llama-8b.yaml").write_text(text)
    plan = gsg("plan", str(specs))
    assert "~ llama-8b" in plan.out and "then restarted" in plan.out
    assert "Plan: 0 to create, 1 to update, 0 to replace, 0 to delete." in plan.out
    fake.log.clear()
    assert gsg("apply", str(specs), "--yes").code == 0
    model = fake.by_name("llama-8b")
    at = f"/v2/models/{model['id']}"
    # bound: read, write (marked restart-pending), read back, restart, read again (no edit meanwhile), clear the
    # mark, read back
    assert [c for c in fake.log if c[1].startswith(at)] == [
        ("GET", at), ("PUT", at), ("GET", at), ("POST", at + "/restart"), ("GET", at), ("PUT", at), ("GET", at)]
    assert "--max-num-seqs=48" in model["backend_parameters"]
    assert "gsg.dev/restart-pending" not in model["meta"]
    assert gsg("plan", str(specs), "--detailed-exitcode").code == 0


def test_replicas_only_change_does_not_restart(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    path = specs / "qwen-32b-sglang.yaml"
    path.write_text(path.read_text().replace("replicas: 1", "replicas: 2"))
    fake.log.clear()
    assert gsg("apply", str(specs), "--yes").code == 0
    assert not [p for _, p in fake.log if p.endswith("/restart")]
    assert fake.by_name("qwen-32b")["replicas"] == 2


def test_identity_change_is_a_replace(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("Llama-3.1-8B-Instruct", "Llama-3.1-8B"))
    plan = gsg("plan", str(specs))
    assert "-/+ llama-8b" in plan.out and "huggingface_repo_id changed" in plan.out
    old_id = fake.by_name("llama-8b")["id"]
    assert gsg("apply", str(specs), "--yes").code == 0
    assert fake.by_name("llama-8b")["id"] != old_id


def test_unmanaged_same_name_is_a_conflict_until_adopted(gsg, fake, specs):
    fake.create_unmanaged("llama-8b", huggingface_repo_id="meta-llama/Llama-3.1-8B-Instruct",
                          gpu_selector={"gpu_ids": ["gpu-c:cuda:0", "gpu-c:cuda:1"]})
    plan = gsg("plan", str(specs))
    assert plan.code == 1 and "! llama-8b" in plan.out and "not managed by gsg" in plan.out
    before = json.dumps(fake.by_name("llama-8b"), sort_keys=True)
    assert gsg("apply", str(specs), "--yes").code == 1
    assert json.dumps(fake.by_name("llama-8b"), sort_keys=True) == before  # untouched
    assert gsg("apply", str(specs), "--yes", "--adopt").code == 0
    assert fake.by_name("llama-8b")["meta"]["gsg.dev/managed-by"].startswith("gsg/")


def test_drift_calls_a_conflict_plan_refuses_out_of_sync(gsg, fake, specs):
    """A spec whose name another owner holds is no deployment of ours: drift said Synced (the entry sat under
    'Unmanaged ... (information)') while plan and apply refuse it. It is a sync problem a person must settle."""
    gsg("apply", str(specs), "--yes")
    del fake.models[fake.by_name("llama-8b")["id"]]  # deleted by hand, and re-created outside gsg
    fake.create_unmanaged("llama-8b", huggingface_repo_id="meta-llama/Llama-3.1-8B-Instruct")
    fake.create_unmanaged("side-project")
    drift = gsg("drift", str(specs), "--detailed-exitcode")
    assert drift.code == 2
    assert "Conflicts apply refuses (a person must settle them):\n  llama-8b (specs/llama-8b.yaml)\n" \
           "    a live model of this name" in drift.out
    assert "Sync: OutOfSync" in drift.out
    doc = json.loads(gsg("drift", str(specs), "-o", "json").out)
    assert [c["name"] for c in doc["conflicts"]] == ["llama-8b"]
    assert [u["name"] for u in doc["unmanaged"]] == ["side-project"]  # information only, as before
    assert (doc["sync"], doc["drift"]) == ("OutOfSync", True)
    assert "| conflicts | llama-8b |" in gsg("drift", str(specs), "-o", "markdown").out
    # adopted, it is ours again and the conflict is gone
    assert gsg("apply", str(specs), "--yes", "--adopt").code == 0
    assert json.loads(gsg("drift", str(specs), "-o", "json").out)["conflicts"] == []


def test_prune_only_owned_and_never_unmanaged(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    stranger = fake.create_unmanaged("hand-made")
    (specs / "llama-8b.yaml").unlink()
    plan = gsg("plan", str(specs), "--prune")
    assert "  - llama-8b" in plan.out and "hand-made" not in plan.out
    assert gsg("apply", str(specs), "--yes", "--prune").code == 0
    assert fake.by_name("llama-8b") is None and fake.by_name("hand-made")["id"] == stranger["id"]


def test_empty_spec_set_never_prunes_everything_by_accident(gsg, fake, specs, tmp_path):
    gsg("apply", str(specs), "--yes")
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = gsg("apply", str(empty), "--yes", "--prune")
    assert refused.code == 1 and "no spec files" in refused.err
    assert len(fake.models) == 4


def test_target_limits_and_unknown_target_is_an_error(gsg, fake, specs):
    result = gsg("apply", str(specs), "--yes", "--target", "llama-8b")
    assert result.code == 0 and {m["name"] for m in fake.models.values()} == {"llama-8b"}
    assert "targeting llama-8b" in result.err
    unknown = gsg("plan", str(specs), "--target", "nope")
    assert unknown.code == 1 and "--target nope matches no spec" in unknown.err


def test_saved_plan_applies_exactly_and_refuses_a_changed_server(gsg, fake, specs, tmp_path):
    plan_file = tmp_path / "plan.json"
    assert gsg("plan", str(specs), "--out", str(plan_file)).code == 0
    saved = json.loads(plan_file.read_text())
    assert saved["format_version"] == "1.0" and len(saved["changes"]) == 4
    assert "hf_test_secret_token_value" not in plan_file.read_text()
    assert gsg("apply", str(plan_file), "--yes").code == 0 and len(fake.models) == 4
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("max_num_seqs: 64", "max_num_seqs: 40"))
    assert gsg("plan", str(specs), "--out", str(plan_file)).code == 0
    fake.by_name("llama-8b")["description"] = "edited in the UI"
    fake.by_name("llama-8b")["updated_at"] = "2026-12-02T00:00:00+00:00"
    refused = gsg("apply", str(plan_file), "--yes")
    assert refused.code == 1 and "changed on the server since the plan" in refused.err


def test_apply_needs_yes_off_a_terminal(gsg, fake, specs):
    result = gsg("apply", str(specs))
    assert result.code == 1 and "--yes" in result.err and not fake.models


def test_unresolved_secret_reference_blocks_apply(gsg, fake, specs, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and "HF_TOKEN" in result.err and not fake.models


def test_validation_errors_block_the_plan(gsg, fake, specs):
    (specs / "bad.yaml").write_text("name: bad\nsource: huggingface\nhuggingface_repo_id: x/y\nbackend: vllm\n")
    result = gsg("plan", str(specs))
    assert result.code == 1 and "GSG004" in result.err and "plan blocked" in result.err


def test_drift_reports_hand_edits_and_apply_restores(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    assert gsg("drift", str(specs), "--detailed-exitcode").code == 0
    model = fake.by_name("llama-70b")
    model["backend_parameters"] = [a.replace("0.88", "0.95") for a in model["backend_parameters"]]
    fake.create_unmanaged("side-project")
    drift = gsg("drift", str(specs), "--detailed-exitcode")
    assert drift.code == 2
    assert drift.out.startswith("Pinned backend arguments changed by hand:\n  llama-70b (specs/llama-70b.yaml)\n"
                                "    ! --gpu-memory-utilization: live 0.95 != pinned 0.88")
    assert "side-project" in drift.out and "Unmanaged or owned elsewhere (information)" in drift.out
    assert gsg("apply", str(specs), "--yes").code == 0
    assert "--gpu-memory-utilization=0.88" in fake.by_name("llama-70b")["backend_parameters"]
    assert gsg("drift", str(specs), "--detailed-exitcode").code == 0


def test_drift_json_markdown_and_unhealthy(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    inst = next(i for i in fake.instances.values() if i["model_name"] == "llama-8b")
    inst["restart_count"] = 3
    doc = json.loads(gsg("drift", str(specs), "-o", "json").out)
    # health is not sync: the deployment matches its spec and runs badly
    assert doc["format_version"] == "1.2" and doc["drift"] is False
    assert (doc["sync"], doc["health"]) == ("Synced", "Degraded")
    assert doc["unhealthy"][0]["name"] == "llama-8b" and "restarted 3 time(s)" in doc["unhealthy"][0]["problem"]
    assert "| unhealthy | llama-8b |" in gsg("drift", str(specs), "-o", "markdown").out


def test_drift_is_cheap(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    for i in range(40):
        fake.create_unmanaged(f"extra-{i}")
    fake.log.clear()
    gsg("drift", str(specs))
    assert len([1 for m, p in fake.log if m == "GET" and p.startswith("/v2/")]) == 5


def test_plan_markdown_and_json(gsg, fake, specs):
    md = gsg("plan", str(specs), "-o", "markdown")
    assert md.out.startswith("<!-- gsg-plan -->\n## gsg plan\n\n**Plan: 4 to create")
    assert "| `+` | [llama-70b](specs/llama-70b.yaml) | will be created | new deployment |" in md.out
    assert "<summary>Per-GPU memory of changed deployments (worst rank) (4 deployment(s))</summary>" in md.out
    doc = json.loads(gsg("plan", str(specs), "-o", "json").out)
    assert doc["summary"]["create"] == 4 and doc["format_version"] == "1.0"


@pytest.mark.parametrize("state", ["error", "ERROR", "Error"])  # a proxy's or server's case is GPUStack's state
def test_wait_stops_early_on_an_instance_in_error(gsg, fake, specs, monkeypatch, state):
    fake.ready_after_polls = 10**6  # never ready on its own
    original = fake._set_instances

    def broken(model, count):
        original(model, count)
        for inst in fake.instances.values():
            if inst["model_name"] == "llama-8b":
                inst["state"], inst["state_message"] = state, "CUDA out of memory"
    monkeypatch.setattr(fake, "_set_instances", broken)
    result = gsg("apply", str(specs), "--yes", "--wait", "--wait-timeout", "30", "--target", "llama-8b")
    assert result.code == 1
    assert "  failed: wait: 'llama-8b' instance llama-8b-00001 is in error: CUDA out of memory\n" in result.err


# --- faults: apply, inject a fault at request k, apply again -> converged, nothing unowned touched -------

def _converges_after_fault(gsg, monkeypatch, specs, kind: str, at: int, *, seed_update: bool) -> bool:
    """Whether request `at` of the faulted apply existed (its fault fired); either way the next run converges."""
    import gpustack_guard.wiring as connect

    fake = FakeGPUStack.field_notes()
    monkeypatch.setattr(connect, "transport_factory", fake.transport)
    monkeypatch.setenv("GSG_API_KEY", fake.api_key)
    monkeypatch.setenv("GSG_URL", "http://gpustack.test")
    stranger = fake.create_unmanaged("stranger")
    stranger_before = json.dumps(stranger, sort_keys=True)
    if seed_update:  # start from a deployed state with one update and one prune pending
        assert gsg("apply", str(specs), "--yes").code == 0
        fake.by_name("llama-8b")["backend_parameters"] = ["--max-model-len=1024"]
        fake.create_unmanaged("gone", meta={"gsg.dev/managed-by": "gsg/0.1.0", "gsg.dev/spec": "gone.yaml",
                                            "gsg.dev/project": PROJECT})
    fake.model_calls = 0
    fake.faults = [Fault(at, kind)]
    gsg("apply", str(specs), "--yes", "--prune")  # may fail: that is the point
    fired = fake.model_calls >= at
    fake.faults = []
    second = gsg("apply", str(specs), "--yes", "--prune")
    assert second.code == 0, (kind, at, second.out, second.err)
    names = [m["name"] for m in fake.models.values()]
    assert sorted(names) == sorted(FAULT_SPEC_NAMES | {"stranger"}), (kind, at, names)
    assert json.dumps(fake.by_name("stranger"), sort_keys=True) == stranger_before
    assert gsg("plan", str(specs), "--prune", "--detailed-exitcode").code == 0, (kind, at)
    return fired


FAULT_SPEC_NAMES = {"llama-8b", "qwen-32b"}  # one vLLM and one SGLang deployment: every kind of request, fewer


@pytest.fixture
def fault_specs(specs):
    """Two of the example specs: the loop below runs apply ~60 times per fault kind."""
    for name in ("llama-70b.yaml", "llama-70b-gguf.yaml"):
        (specs / name).unlink()
    return specs


@pytest.mark.parametrize("seed", [False, True], ids=["create", "update-and-prune"])
@pytest.mark.parametrize("kind", ["500", "503", "409", "timeout-before", "timeout-after", "reset-after"])
def test_fault_at_every_request_index_converges(gsg, monkeypatch, fault_specs, kind, seed):
    specs = fault_specs
    # every request index up to the first one the run never reaches (then no later one is reached either)
    for at in range(1, 40):
        if not _converges_after_fault(gsg, monkeypatch, specs, kind, at, seed_update=seed):
            break
    assert at >= 5, (kind, seed, at)  # the faults really hit requests: lists, a create, a marker each
