"""gsg against a real GPUStack 2.3.0 server on loopback (see harness.py). Slow: run with -m integration."""

import json
import shutil
import time
from pathlib import Path

import pytest
import yaml
from harness import API_KEY, REPO, Harness

from gpustack_guard.cli import main

# ordered lifecycle tests against one server set: one xdist worker runs them all, whatever -n says
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("real-gpustack")]
HERE = Path(__file__).resolve().parent
REPOS = ["meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-32B-Instruct",
         "Qwen/Qwen2.5-0.5B-Instruct"]
PLACEMENT = {"llama-70b": ("gpu-a", [0, 1, 2, 3]), "llama-8b": ("gpu-c", [0, 1])}


@pytest.fixture(scope="module")
def server():
    harness = Harness()
    try:
        harness.start(REPOS)
        yield harness
    finally:
        harness.stop()


@pytest.fixture
def gsg(server, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GSG_URL", server.url)
    monkeypatch.setenv("GSG_API_KEY", API_KEY)
    monkeypatch.setenv("GSG_OFFLINE", "1")
    monkeypatch.setenv("HF_TOKEN", "hf_integration_dummy_token")
    monkeypatch.setenv("GSG_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(HERE / "specs", work / "specs")
    monkeypatch.chdir(work)

    def run(*args):
        code = main(list(args))
        captured = capsys.readouterr()
        assert API_KEY not in captured.out + captured.err
        return code, captured.out, captured.err
    return run


def instances(server, model_name):
    with server.api() as api:
        items = api.get("/v2/model-instances", params={"page": -1}).json()["items"]
    return [i for i in items if i["model_name"] == model_name]


def wait_placed(server, name, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = instances(server, name)
        if found and all(i.get("worker_name") and i.get("gpu_indexes") for i in found):
            return found
        time.sleep(1)
    raise AssertionError(f"{name} not placed: {instances(server, name)}")


def test_1_snapshot_reproduces_the_fleet(gsg, tmp_path):
    code, _, err = gsg("snapshot", "--out", str(tmp_path / "snap.yaml"))
    assert code == 0, err
    snap = yaml.safe_load((tmp_path / "snap.yaml").read_text())["clusters"][0]
    want = yaml.safe_load((REPO / "examples" / "fleet.yaml").read_text())["clusters"][0]
    assert snap["name"] == want["name"]
    from gpustack_guard.core.units import parse_size

    got_workers = {w["name"]: w for w in snap["workers"]}
    for worker in want["workers"]:
        live = got_workers[worker["name"]]
        assert live["state"] == "ready" and worker["labels"].items() <= live["labels"].items()
        assert [(g["index"], g["name"], g["memory"]["total"], g["memory"]["used"]) for g in live["gpus"]] == \
            [(g["index"], g["name"], parse_size(g["memory"]["total"]), parse_size(g["memory"].get("used", 0)))
             for g in worker["gpus"]]


def test_2_live_validate_agrees_with_offline(gsg, tmp_path):
    gsg("snapshot", "--out", str(tmp_path / "snap.yaml"))
    live = gsg("validate", "specs/", "-o", "json")
    offline = gsg("validate", "specs/", "--fleet", str(tmp_path / "snap.yaml"), "-o", "json")
    assert live[0] == offline[0] == 0, live[2]
    assert json.loads(live[1])["findings"] == json.loads(offline[1])["findings"]


def test_3_plan_apply_places_and_converges(gsg, server):
    code, out, err = gsg("plan", "specs/", "--detailed-exitcode")
    assert code == 2, err
    assert "Plan: 3 to create, 0 to update, 0 to replace, 0 to delete." in out
    code, out, err = gsg("apply", "specs/", "--yes")
    assert code == 0, out + err
    for name, (worker, gpus) in PLACEMENT.items():
        placed = wait_placed(server, name)
        assert (placed[0]["worker_name"], sorted(placed[0]["gpu_indexes"])) == (worker, gpus)
    qwen = wait_placed(server, "qwen-32b")
    assert qwen[0]["worker_name"] in ("gpu-a", "gpu-b", "gpu-d") and len(qwen[0]["gpu_indexes"]) == 2
    with server.api() as api:
        model = next(m for m in api.get("/v2/models", params={"page": -1}).json()["items"] if m["name"] == "llama-70b")
    assert model["meta"]["gsg.dev/managed-by"].startswith("gsg/")
    code, out, err = gsg("plan", "specs/", "--detailed-exitcode")
    assert code == 0, out + err
    assert out.rstrip().endswith("No changes. Live deployments match the specs.")


def test_4_hand_edit_is_drift_and_apply_restores(gsg, server):
    with server.api() as api:
        model = next(m for m in api.get("/v2/models", params={"page": -1}).json()["items"] if m["name"] == "llama-8b")
        edited = [a.replace("0.85", "0.95") for a in model["backend_parameters"]]
        body = {"name": model["name"], "source": model["source"], "huggingface_repo_id": model["huggingface_repo_id"],
                "backend_parameters": edited,
                "distributed_inference_across_workers": model["distributed_inference_across_workers"]}
        api.put(f"/v2/models/{model['id']}", json=body).raise_for_status()
    code, out, err = gsg("drift", "specs/", "--detailed-exitcode")
    assert code == 2, out + err
    assert "--gpu-memory-utilization: live 0.95 != pinned 0.85" in out
    assert gsg("apply", "specs/", "--yes")[0] == 0
    for name in ("llama-70b", "llama-8b", "qwen-32b"):  # the restart rescheduled llama-8b's instance
        wait_placed(server, name)
    server.mark_running()
    code, out, err = gsg("drift", "specs/", "--detailed-exitcode")
    assert code == 0, out + err


def test_5_unmanaged_model_is_never_touched(gsg, server):
    user_fields = ("name", "meta", "backend_parameters", "replicas", "gpu_selector", "env", "backend",
                   "description", "huggingface_repo_id")
    with server.api() as api:
        created = api.post("/v2/models", json={
            "name": "hand-made", "source": "huggingface", "huggingface_repo_id": "Qwen/Qwen2.5-0.5B-Instruct",
            "backend": "vLLM", "backend_parameters": ["--gpu-memory-utilization=0.3", "--max-model-len=4096"],
            "gpu_selector": {"gpu_ids": ["gpu-b:cuda:3"]}, "cluster_id": server.cluster_id}).json()
        try:
            time.sleep(2)  # the scheduler fills its own fields (categories, gpus_per_replica) first
            before = {k: api.get(f"/v2/models/{created['id']}").json().get(k) for k in user_fields}
            code, out, err = gsg("apply", "specs/", "--yes", "--prune")
            assert code == 0, out + err
            after = api.get(f"/v2/models/{created['id']}").json()
            assert {k: after.get(k) for k in user_fields} == before
            assert "gsg.dev/managed-by" not in (after.get("meta") or {})
            code, out, _ = gsg("drift", "specs/")
            assert "hand-made" in out and "not managed by gsg" in out
        finally:
            api.delete(f"/v2/models/{created['id']}")


def test_6_server_check_shows_gpustacks_evaluation(gsg, tmp_path):
    spec = Path("specs/claimed.yaml")
    spec.write_text("name: claimed-32b\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-32B-Instruct\n"
                    "gpu_selector: {gpu_ids: [gpu-d:cuda:0]}\nbackend: vLLM\nbackend_version: 0.11.0\n"
                    "env: {GPUSTACK_MODEL_VRAM_CLAIM: '80530636800'}\n"
                    "backend_parameters: [--max-model-len=8192, --gpu-memory-utilization=0.9]\n")
    code, out, err = gsg("validate", str(spec), "--server-check", "-o", "json")
    findings = json.loads(out)["findings"]
    # 61 GiB of bf16 on one 48 GB card: no KV memory, too little headroom, and GPUStack's own evaluation agrees
    assert sorted(f["rule_id"] for f in findings) == ["GSG031", "GSG034", "GSG052"], findings
    server = next(f for f in findings if f["rule_id"] == "GSG052")
    assert server["message"].startswith("GPUStack agrees: not compatible")


def test_7_export_then_plan_shows_no_changes(gsg, tmp_path):
    code, _, err = gsg("export", "--out", str(tmp_path / "exported"))
    assert code == 0, err
    exported = {p.stem for p in (tmp_path / "exported").glob("*.yaml")}
    assert {"llama-70b", "llama-8b", "qwen-32b"} <= exported
    assert "hf_integration_dummy_token" not in (tmp_path / "exported" / "llama-70b.yaml").read_text()
    # the exported folder has no gsg.yaml: without a project the models of project 'integration' are not ours
    code, out, err = gsg("plan", str(tmp_path / "exported"))
    assert code == 1 and "owned by gsg project 'integration'" in out, out + err
    code, out, err = gsg("plan", str(tmp_path / "exported"), "--project", "integration", "--detailed-exitcode")
    assert code == 0, out + err


# --- ownership by project: two checkouts with the same folder layout on one real server --------------------

TEAM_GPUS = {"a": "gpu-b:cuda:3", "b": "gpu-d:cuda:1"}


def _team_spec(name: str, gpu: str) -> str:
    return (f"name: {name}\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\n"
            f"gpu_selector: {{gpu_ids: [{gpu}]}}\nbackend: vLLM\nbackend_version: 0.11.0\n"
            "backend_parameters: [--max-model-len=4096, --gpu-memory-utilization=0.2, --max-num-seqs=8]\n")


def _checkout(root: Path, team: str, names: list[str]) -> Path:
    specs = root / f"team-{team}" / "specs"
    specs.mkdir(parents=True, exist_ok=True)
    (specs / "gsg.yaml").write_text(f"project: team-{team}\n")
    for old in specs.glob("t*.yaml"):
        old.unlink()
    for name in names:
        (specs / f"{name}.yaml").write_text(_team_spec(name, TEAM_GPUS[team]))
    return specs


def _live(server) -> dict:
    with server.api() as api:
        return {m["name"]: m.get("meta") or {} for m in api.get("/v2/models", params={"page": -1}).json()["items"]}


def _in(folder: Path, monkeypatch, gsg, *args):
    monkeypatch.chdir(folder)
    return gsg(*args)


@pytest.mark.parametrize("order", [("b", "a", "b", "a"), ("a", "b", "a", "b")], ids="-".join)
def test_8_two_projects_with_identical_folders_never_prune_each_other(gsg, server, tmp_path, monkeypatch, order):
    trees = {"a": _checkout(tmp_path, "a", ["ta1"]), "b": _checkout(tmp_path, "b", ["tb1"])}
    try:
        applied = set()
        for step, team in enumerate(order):
            prune = ["--prune"] if step else []  # the first apply plain, every later one prunes
            code, out, err = _in(trees[team].parent, monkeypatch, gsg, "apply", "specs/", "--yes", *prune)
            assert code == 0, out + err
            applied.add(team)
            live = _live(server)
            assert {n for n in live if n.startswith("t")} == {f"t{t}1" for t in applied}, (step, out)
            assert {"llama-70b", "llama-8b", "qwen-32b"} <= set(live)  # project 'integration' untouched
        assert {_live(server)[f"t{t}1"]["gsg.dev/project"] for t in "ab"} == {"team-a", "team-b"}
        for team, tree in trees.items():  # from another working directory: no changes
            code, out, err = _in(tmp_path, monkeypatch, gsg, "plan", f"team-{team}/specs", "--prune",
                                 "--detailed-exitcode")
            assert code == 0, out + err
    finally:
        for team, tree in trees.items():
            _checkout(tmp_path, team, [])
            _in(tree.parent, monkeypatch, gsg, "apply", "specs/", "--yes", "--prune", "--allow-empty")
    assert not {n for n in _live(server) if n.startswith("t")}


def test_9_renamed_folder_and_legacy_migration(gsg, server, tmp_path, monkeypatch):
    specs = _checkout(tmp_path, "a", ["ta1", "ta2"])
    code, out, err = _in(specs.parent, monkeypatch, gsg, "apply", "specs/", "--yes")
    assert code == 0, out + err
    deploy = specs.parent / "deploy"
    specs.rename(deploy)
    (deploy / "ta2.yaml").unlink()
    code, out, err = gsg("apply", "deploy/", "--yes", "--prune")
    assert code == 0 and "deleted ta2" in err, out + err
    assert "ta2" not in _live(server) and _live(server)["ta1"]["gsg.dev/spec"] == "ta1.yaml"
    with server.api() as api:  # turn ta1 back into a model with today's path-only marker
        model = next(m for m in api.get("/v2/models", params={"page": -1}).json()["items"] if m["name"] == "ta1")
        body = {k: model[k] for k in ("name", "source", "huggingface_repo_id", "backend_parameters",
                                       "distributed_inference_across_workers")}
        body["meta"] = {"gsg.dev/managed-by": "gsg/0.1.0", "gsg.dev/spec": "specs/ta1.yaml"}
        api.put(f"/v2/models/{model['id']}", json=body).raise_for_status()
    assert "gsg.dev/project" not in _live(server)["ta1"]
    code, out, err = gsg("plan", "deploy/", "--prune")
    assert code == 1 and "! ta1" in out and "legacy owned" in out, out + err
    code, out, err = gsg("apply", "deploy/", "--yes", "--prune", "--claim-legacy")
    assert code == 0 and "claiming it for project 'team-a'" in out, out + err
    assert _live(server)["ta1"]["gsg.dev/project"] == "team-a"
    code, out, err = gsg("plan", "deploy/", "--prune", "--detailed-exitcode")
    assert code == 0, out + err
    (deploy / "ta1.yaml").unlink()
    assert gsg("apply", "deploy/", "--yes", "--prune", "--allow-empty")[0] == 0
    assert "ta1" not in _live(server)


def test_10_verify_asks_the_real_server_for_every_running_instance_log(gsg, server):
    """Simulated workers run no engine and serve no log: whatever GPUStack answers for each running instance
    (its proxy's failure, an error status, an empty log) is one line for that instance, never a stop."""
    code, out, err = gsg("apply", "specs/", "--yes")
    assert code == 0, out + err
    for name in ("llama-70b", "llama-8b", "qwen-32b"):
        wait_placed(server, name)
    server.mark_running()
    started = time.monotonic()
    code, out, err = gsg("verify", "specs/", "-o", "json")
    assert code in (0, 1) and "Traceback" not in out + err, out + err
    assert time.monotonic() - started < 120
    doc = json.loads(out)
    running = [i for d in doc["deployments"] for i in d["instances"] if i["state"] == "running"]
    assert running, doc
    for instance in running:
        assert instance["status"] in ("verified", "not-verified"), instance
        if instance["status"] == "not-verified":
            assert instance["problem"] and "\n" not in instance["problem"], instance
    code, text, err = gsg("verify", "specs/")
    lines = [line for line in text.splitlines() if line.strip().startswith("instance ")]
    assert len(lines) == len(running) + sum(i["state"] != "running" for d in doc["deployments"]
                                            for i in d["instances"]), text
