"""The worker's budget line ("Actual usage is ... GiB for peak activation") counts the CUDA-graph estimate inside its
activation from vLLM 0.27.0 (profiles.VLLM_LOGGED_ACTIVATION_HOLDS_GRAPHS_SINCE), so verify holds it against the
estimate's activation plus the graph estimate the budget takes out, and against the activation alone before that
release or where the budget takes none (the 0.25-0.28 V2 runner of a dense model)."""

from __future__ import annotations

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import MiB
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P


def estimate(model: str, total_mib: int, gpu: str, version: str, **settings):
    return estimate_vllm(catalog_facts(model), total_mib * MiB, VllmConfig(**settings), version=version,
                         gpu_name=gpu)


def test_from_0_27_the_logged_activation_holds_the_graph_estimate():
    # the 0.31.0 A100 record's deployment (defaults: gmu 0.92, 131,072 tokens) and PR #57047's 0.29 Qwen3-4B
    for est in (estimate("meta-llama/Llama-3.1-8B", 81_920, "NVIDIA A100-SXM4-80GB", "0.31.0", max_model_len=131072),
                estimate("Qwen/Qwen3-4B", 49_140, "NVIDIA RTX 6000 Ada Generation", "0.29.0",
                         gpu_memory_utilization=0.85, max_model_len=2048)):
        assert est.extra["cuda_graphs_in_budget"] is True and est.cuda_graphs > 0
        terms = C.estimated_terms(est)
        assert terms[P.ACTIVATION] == est.activation + est.cuda_graphs
        assert terms[P.CUDA_GRAPHS] == est.cuda_graphs  # the line's CUDAGraph figure is the capture's own


def test_before_0_27_or_without_a_graph_estimate_in_the_budget_it_is_the_activation_alone():
    moe = estimate("Qwen/Qwen3-30B-A3B", 81_559, "NVIDIA H100 80GB HBM3", "0.26.0", max_model_len=8192)
    assert moe.extra["cuda_graphs_in_budget"] is True  # a MoE model stays on the V1 runner in 0.26
    assert C.estimated_terms(moe)[P.ACTIVATION] == moe.activation
    dense = estimate("Qwen/Qwen2.5-0.5B", 24_564, "NVIDIA GeForce RTX 4090", "0.27.1", gpu_memory_utilization=0.85,
                     max_model_len=2048)
    assert dense.extra["cuda_graphs_in_budget"] is False  # the V2 runner: profile_cudagraph_memory returns 0
    assert C.estimated_terms(dense)[P.ACTIVATION] == dense.activation
