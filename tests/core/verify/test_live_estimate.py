"""verify SPECS estimates a running instance on its own GPUs with the arguments GPUStack's worker adds for that
replica: the same estimate plan's estimation stage makes for a replica placed on those GPUs (live.estimate_on
calls placement.replica_injection), for every engine and parallel layout."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))
from rule_inputs import QWEN_7B, fleet, gpu, run_stages, vllm, worker  # noqa: E402

from gpustack_guard.core.verify import live as L  # noqa: E402

FOUR = fleet(worker("w1", gpu(0), gpu(1), gpu(2), gpu(3)))
SGLANG = {"backend": "SGLang", "backend_version": "0.5.5"}
LLAMACPP = {"backend": "llama.cpp", "backend_version": "b6000"}


@pytest.mark.parametrize("doc", [
    vllm("v1", "--max-model-len=8192", gpu_ids=["w1:cuda:0"]),
    vllm("v2", "--max-model-len=8192", gpu_ids=["w1:cuda:0", "w1:cuda:1"]),  # TP 2 added by the worker
    vllm("s1", "--context-length=8192", gpu_ids=["w1:cuda:0"]) | SGLANG,  # the fraction GPUStack books
    vllm("s2", "--context-length=8192", gpu_ids=["w1:cuda:0", "w1:cuda:1"]) | SGLANG,  # and its --tp-size
], ids=lambda doc: doc["name"])
def test_the_live_estimate_is_the_planned_replicas(doc):
    [ev] = run_stages(doc, fleet=FOUR, facts=QWEN_7B).results.evaluations
    assert ev.placed.failure is None and len(ev.estimates) == 1
    planned = ev.estimates[0]
    live = L.estimate_on(ev.rendered, ev.placed.placement.replicas[0])
    assert (live.kv_capacity_tokens, live.requested, live.max_model_len, live.verdict) == \
        (planned.kv_capacity_tokens, planned.requested, planned.max_model_len, planned.verdict)
    assert live.kv_capacity_tokens > 0
