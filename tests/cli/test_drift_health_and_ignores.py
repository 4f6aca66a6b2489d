"""Drift as Argo CD reads it: sync and health apart (exit 2, 4, 6), parts a spec leaves to another manager
(`guard.ignore_differences`), and env secrets that are unset where drift runs."""

from __future__ import annotations

import json

import pytest
from conftest import REPO


def _add_to_guard(path, line: str) -> None:
    text = path.read_text()
    assert "\nguard:\n" in text
    path.write_text(text.replace("\nguard:\n", f"\nguard:\n  {line}\n", 1))


def _instance(fake, model: str) -> dict:
    return next(i for i in fake.instances.values() if i["model_name"] == model)


def _drift(gsg, specs, *more):
    result = gsg("drift", str(specs), "--detailed-exitcode", "-o", "json", *more)
    return result.code, json.loads(result.out)


def test_synced_and_healthy_is_0(gsg, fake, specs):
    assert gsg("apply", str(specs), "--yes").code == 0
    code, doc = _drift(gsg, specs)
    assert (code, doc["sync"], doc["health"], doc["drift"]) == (0, "Synced", "Healthy", False)


def test_degraded_only_is_4_out_of_sync_only_is_2_both_is_6(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    _instance(fake, "llama-8b")["state"] = "error"
    code, doc = _drift(gsg, specs)
    assert (code, doc["sync"], doc["health"]) == (4, "Synced", "Degraded")
    assert [(u["name"], u["health"]) for u in doc["unhealthy"]][-1] == ("llama-8b", "Degraded")
    model = fake.by_name("llama-70b")
    model["backend_parameters"] = [*model["backend_parameters"], "--enforce-eager"]
    assert _drift(gsg, specs)[0] == 6
    _instance(fake, "llama-8b")["state"] = "running"
    code, doc = _drift(gsg, specs)
    assert (code, doc["sync"], doc["health"]) == (2, "OutOfSync", "Healthy")


def test_replicas_on_the_way_are_progressing_not_degraded(gsg, fake, specs):
    gsg("apply", str(specs), "--yes")
    inst = _instance(fake, "llama-8b")
    inst["state"] = "downloading"
    fake.by_name("llama-8b")["ready_replicas"] = 0
    code, doc = _drift(gsg, specs)
    assert (code, doc["health"]) == (0, "Progressing")
    assert doc["unhealthy"] == [{"name": "llama-8b", "health": "Progressing",
                                 "problem": "0/1 replicas ready (instances starting)"}]
    inst["state"] = "unreachable"  # not on the way: the worker is gone
    code, doc = _drift(gsg, specs)
    assert (code, doc["health"]) == (4, "Degraded")
    text = gsg("drift", str(specs)).out
    assert "    Degraded: 0/1 replicas ready\n" in text and "Sync: Synced   Health: Degraded" in text
    assert "| unhealthy | llama-8b | Degraded: 0/1 replicas ready |" in gsg("drift", str(specs), "-o", "markdown").out


def test_ignored_replicas_are_no_drift_and_an_update_keeps_the_live_value(gsg, fake, specs):
    _add_to_guard(specs / "llama-8b.yaml", "ignore_differences: [replicas]  # the autoscaler owns it")
    gsg("apply", str(specs), "--yes")
    fake.by_name("llama-8b")["replicas"] = 3  # the autoscaler scaled out
    code, doc = _drift(gsg, specs)
    # in sync; Degraded because the fake starts no instances for the replicas the autoscaler added
    assert (code, doc["sync"], doc["health"]) == (4, "Synced", "Degraded")
    assert gsg("plan", str(specs), "--detailed-exitcode").code == 0
    # a real change to the spec: the PUT carries it and leaves the replicas where the autoscaler put them
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("max_num_seqs: 64", "max_num_seqs: 48"))
    assert gsg("apply", str(specs), "--yes").code == 0
    live = fake.by_name("llama-8b")
    assert live["replicas"] == 3 and "--max-num-seqs=48" in live["backend_parameters"]


def test_ignored_flag_and_env_key_keep_their_live_values(gsg, fake, specs):
    _add_to_guard(specs / "llama-8b.yaml",
                  "ignore_differences: [backend_parameters.--max-num-seqs, env.OTEL_ENDPOINT]")
    gsg("apply", str(specs), "--yes")
    live = fake.by_name("llama-8b")
    live["backend_parameters"] = [a for a in live["backend_parameters"] if not a.startswith("--max-num-seqs")] + \
        ["--max-num-seqs", "128"]
    live["env"] = {**(live.get("env") or {}), "OTEL_ENDPOINT": "http://collector:4317"}
    code, doc = _drift(gsg, specs)
    assert (code, doc["changed"]) == (0, [])
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("gpu_memory_utilization: 0.85", "gpu_memory_utilization: 0.84"))
    assert gsg("apply", str(specs), "--yes").code == 0
    live = fake.by_name("llama-8b")
    assert "--gpu-memory-utilization=0.84" in live["backend_parameters"]
    assert "--max-num-seqs=128" in live["backend_parameters"] and "--max-num-seqs=64" not in live["backend_parameters"]
    assert live["env"]["OTEL_ENDPOINT"] == "http://collector:4317"
    assert _drift(gsg, specs)[0] == 0


def test_an_env_secret_unset_where_drift_runs_is_not_a_change(gsg, fake, specs, monkeypatch):
    gsg("apply", str(specs), "--yes")
    monkeypatch.delenv("HF_TOKEN")  # the scheduled job has no hub token
    code, doc = _drift(gsg, specs)
    assert (code, doc["changed"]) == (0, [])
    # a key the live model lacks is still missing, secret or not
    live = fake.by_name("llama-70b")
    live["env"] = {k: v for k, v in live["env"].items() if k != "HF_TOKEN"}
    code, doc = _drift(gsg, specs)
    assert code == 2 and [f["field"] for f in doc["changed"][0]["fields"]] == ["env"]


@pytest.mark.parametrize("entries, message", [
    ("[name]", "ignore_differences cannot ignore 'name': it is the deployment's identity"),
    ("[huggingface_repo_id]", "ignore_differences cannot ignore 'huggingface_repo_id'"),
    ("[gpu_selector.gpus_per_replica]", "only env.KEY and backend_parameters.--flag name a part of a field"),
    ("[replica]", "ignore_differences entry 'replica' is not a field of the deployment document"),
    ("[backend_parameters.max-num-seqs]", "only env.KEY and backend_parameters.--flag name a part of a field"),
])
def test_bad_ignore_entries_are_findings_at_their_line(gsg, fake, specs, entries, message):
    _add_to_guard(specs / "llama-8b.yaml", f"ignore_differences: {entries}")
    result = gsg("validate", str(specs), "--fleet", str(REPO / "examples" / "fleet.yaml"))
    assert result.code == 1
    assert "llama-8b.yaml:" in result.out and message in result.out
