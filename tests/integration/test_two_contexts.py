"""Two real GPUStack 2.3.0 servers at once, as two contexts of one contexts file (see harness.py)."""

import json
import time

import pytest
import yaml
from harness import API_KEY, Harness

from gpustack_guard.cli import main

# ordered lifecycle tests against one server set: one xdist worker runs them all, whatever -n says
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("real-gpustack")]
REPOS = ["Qwen/Qwen2.5-0.5B-Instruct"]
SPEC = ("name: small\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\ncluster_name: prod\n"
        "gpu_selector: {gpu_ids: [gpu-b:cuda:0]}\nbackend: vLLM\nbackend_version: 0.11.0\n"
        "backend_parameters: [--gpu-memory-utilization=0.3, --max-model-len=8192, --max-num-seqs=16]\n")


@pytest.fixture(scope="module")
def servers():
    started = []
    try:
        for _ in range(2):
            started.append(Harness().start(REPOS))
        yield started
    finally:
        for harness in started:
            harness.stop()


@pytest.fixture
def gsg(servers, capsys, monkeypatch, tmp_path):
    prod, staging = servers
    (tmp_path / "key").write_text(API_KEY)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"contexts": {
        "prod": {"server": prod.url, "api-key-file": "key"},
        "staging": {"server": staging.url, "api-key-file": "key"}}}))
    for name in ("GSG_URL", "GSG_API_KEY", "GSG_CONTEXT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GSG_CONFIG", str(config))
    monkeypatch.setenv("GSG_OFFLINE", "1")
    monkeypatch.setenv("GSG_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "gsg.yaml").write_text("project: two-contexts\n")
    (tmp_path / "specs" / "small.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)

    def run(*args):
        code = main(list(args))
        captured = capsys.readouterr()
        assert API_KEY not in captured.out + captured.err
        return code, captured.out, captured.err
    return run


def _names(harness) -> set[str]:
    with harness.api() as api:
        return {m["name"] for m in api.get("/v2/models", params={"page": -1}).json()["items"]}


def test_plan_and_apply_with_a_context_reach_that_server_only(gsg, servers):
    prod, staging = servers
    code, out, err = gsg("plan", "specs", "--context", "prod", "--detailed-exitcode")
    assert code == 2, err
    assert "+ small" in out
    code, _, err = gsg("apply", "specs", "--context", "prod", "--yes")
    assert code == 0, err
    assert _names(prod) == {"small"} and _names(staging) == set()


def _running(harness) -> None:
    """Simulated workers run nothing: wait until the instance is placed, then report it running."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with harness.api() as api:
            items = api.get("/v2/model-instances", params={"page": -1}).json()["items"]
        if items and all(i.get("worker_name") and i.get("gpu_indexes") for i in items):
            harness.mark_running()
            return
        time.sleep(1)
    raise AssertionError(f"not placed on {harness.url}")


def test_drift_over_all_contexts_sees_the_one_that_drifted(gsg, servers):
    prod, staging = servers
    assert gsg("apply", "specs", "--context", "staging", "--yes")[0] == 0
    for harness in servers:
        _running(harness)
    code, out, err = gsg("drift", "specs", "--all-contexts", "--detailed-exitcode")
    assert code == 0, out + err
    with staging.api() as api:  # a hand edit on staging only (PUT is sparse: the required fields and the edit)
        model = next(m for m in api.get("/v2/models", params={"page": -1}).json()["items"] if m["name"] == "small")
        body = {"name": model["name"], "source": model["source"], "huggingface_repo_id": model["huggingface_repo_id"],
                "backend_parameters": [a.replace("--max-num-seqs=16", "--max-num-seqs=20")
                                       for a in model["backend_parameters"]],
                "distributed_inference_across_workers": model["distributed_inference_across_workers"]}
        api.put(f"/v2/models/{model['id']}", json=body).raise_for_status()
    code, out, err = gsg("drift", "specs", "--all-contexts", "--detailed-exitcode", "-o", "json")
    assert code == 2, err
    doc = json.loads(out)
    assert [(c["context"], c["drift"]) for c in doc["contexts"]] == [("prod", False), ("staging", True)]
    changed = doc["contexts"][1]["report"]["changed"]
    assert [(c["name"], [f["field"] for f in c["fields"]]) for c in changed] == [("small", ["backend_parameters"])]
