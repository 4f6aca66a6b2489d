"""vLLM 0.25.0-0.28.x build the V2 model runner for a dense model (profiles.VLLM_RUNNER_ROWS): its profile has no
CUDA-graph estimate inside the budget and samples without top-k/top-p, so the pool is larger by both."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm, model_runner
from gpustack_guard.core.units import GiB

RTX_4090 = 24564 * 1024**2


@pytest.mark.parametrize(("model", "version", "runner"), [
    ("Qwen/Qwen2.5-0.5B", "0.24.0", "v1"),  # 0.22-0.24's architecture list is not modelled
    ("Qwen/Qwen2.5-0.5B", "0.25.0", "v2"),
    ("meta-llama/Llama-3.1-8B", "0.28.0", "v2"),
    ("Qwen/Qwen3-30B-A3B", "0.27.1", "v1"),  # MoE, not listed
    ("Qwen/Qwen1.5-MoE-A2.7B-Chat", "0.25.0", "v2"),  # Qwen2MoeForCausalLM is on the list
    ("Qwen/Qwen3-30B-A3B", "0.29.0", "v2"),  # every generative model
])
def test_the_runner_follows_the_release_and_the_model(model, version, runner):
    assert model_runner(catalog_facts(model), version) == runner


def test_a_hybrid_model_stays_on_v1_in_a_dense_release():
    facts = replace(catalog_facts("Qwen/Qwen2.5-0.5B"), recurrent_layers="linear_attention")
    assert model_runner(facts, "0.27.1") == "v1"


def test_the_0_27_1_wsl2_log_s_budget_holds_no_graph_estimate():
    """Qwen2.5-0.5B at gmu 0.85 and 2,048 tokens on an RTX 4090 (tests/fixtures/logs/vllm/v1-0.27.1-qwen25-05b-
    rtx4090-wsl2-gmu085.log): 20.39 GiB requested - 1.25 consumed - 0.08 peak activation = 19.06 GiB of KV, the
    0.28 GiB of graphs captured after it. 0.24.0 books the graph estimate inside the budget and the V1 sampler."""
    facts = catalog_facts("Qwen/Qwen2.5-0.5B")
    cfg = VllmConfig(gpu_memory_utilization=0.85, max_model_len=2048)
    new = estimate_vllm(facts, RTX_4090, cfg, version="0.27.1", gpu_name="NVIDIA GeForce RTX 4090")
    old = estimate_vllm(facts, RTX_4090, cfg, version="0.24.0", gpu_name="NVIDIA GeForce RTX 4090")
    assert (new.extra["model_runner"], new.extra["cuda_graphs_in_budget"]) == ("v2", False)
    assert (old.extra["model_runner"], old.extra["cuda_graphs_in_budget"]) == ("v1", True)
    assert new.kv_capacity_tokens == 1_657_408  # the log: 1,665,392 (-0.5 %)
    # the profile's sampler pass without top-k/top-p: 2,048 x 896 x 2 B of hidden states + 256 x 151,936 x 4 B
    assert new.activation == 2048 * 896 * 2 + 256 * 151_936 * 4 == 159_252_480
    assert old.activation == 548_208_640 and new.cuda_graphs == old.cuda_graphs == 281_018_368
    assert new.kv_available - old.kv_available == new.cuda_graphs + old.activation - new.activation
    assert any(n.startswith("V2 model runner") for n in new.notes)


def test_a_moe_model_of_the_same_release_keeps_v1_s_budget():
    facts = catalog_facts("Qwen/Qwen3-30B-A3B")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192, tensor_parallel_size=2)
    est = estimate_vllm(facts, 80 * GiB, cfg, version="0.26.0")
    assert (est.extra["model_runner"], est.extra["cuda_graphs_in_budget"]) == ("v1", True)
    assert not any(n.startswith("V2 model runner") for n in est.notes)


def test_every_runner_row_names_its_source_and_a_known_default():
    assert [row.since for row in P.VLLM_RUNNER_ROWS] == ["0.0.0", "0.25.0", "0.29.0"]
    assert {row.default for row in P.VLLM_RUNNER_ROWS} == {"v1", "dense", "v2"}
    assert all(row.source for row in P.VLLM_RUNNER_ROWS)


@pytest.mark.parametrize(("model", "version", "env", "runner"), [
    ("Qwen/Qwen2.5-0.5B", "0.27.1", "0", "v1"),  # a dense model sent back to V1
    ("Qwen/Qwen2.5-0.5B", "0.27.1", " 1 ", "v2"),  # int() allows the spaces
    ("Qwen/Qwen3-30B-A3B", "0.26.0", "1", "v2"),  # an MoE model sent to V2
    ("Qwen/Qwen2.5-0.5B", "0.25.0", "true", "v2"),  # not an integer: vLLM refuses it; the default is kept
    ("Qwen/Qwen2.5-0.5B", "0.24.0", "1", "v1"),  # 0.22-0.24's V2 profile is not read
    ("Qwen/Qwen3-30B-A3B", "0.29.0", "0", "v2"),  # from 0.29 the rows are V2's
])
def test_vllm_use_v2_model_runner_decides_first_in_the_dense_releases(model, version, env, runner):
    assert model_runner(catalog_facts(model), version, env) == runner


def test_the_env_reaches_the_estimate_and_moves_the_budget_back():
    """VLLM_USE_V2_MODEL_RUNNER=0 on the 0.27.1 log's deployment: V1's budget, as 0.24.0 books it."""
    from gpustack_guard.core.memory.engine import vllm_config
    from gpustack_guard.core.spec.model import Policy

    facts = catalog_facts("Qwen/Qwen2.5-0.5B")
    flags = {"gpu-memory-utilization": "0.85", "max-model-len": "2048"}
    cfg = vllm_config(flags, Policy(), {"VLLM_USE_V2_MODEL_RUNNER": "0"}, "0.27.1")
    assert cfg.v2_runner_env == "0"
    forced = estimate_vllm(facts, RTX_4090, cfg, version="0.27.1", gpu_name="NVIDIA GeForce RTX 4090")
    assert (forced.extra["model_runner"], forced.extra["cuda_graphs_in_budget"]) == ("v1", True)
    assert forced.activation == 548_208_640 and forced.cuda_graphs == 281_018_368
    assert not any(n.startswith("V2 model runner") for n in forced.notes)
