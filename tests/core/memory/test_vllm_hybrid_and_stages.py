"""Hybrid attention (sliding-window and full layers in one model) and the pipeline stage that binds, checked on two
models each (issue 32)."""

from __future__ import annotations

import math

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import GiB

H100 = "NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize("model,full_layers,window_layers,window,per_layer", [
    ("openai/gpt-oss-20b", 12, 12, 128, 2 * 8 * 64 * 2),        # alternating 128-token window
    ("google/gemma-3-27b-it", 10, 52, 1024, 2 * 16 * 128 * 2),  # five window layers per full one
])
def test_one_request_holds_full_layers_for_its_length_and_window_layers_for_the_window(
        model, full_layers, window_layers, window, per_layer):
    """vLLM's SlidingWindowSpec keeps cdiv(window - 1 + batched tokens, block) + 1 blocks per window layer; the full
    layers keep the whole request. Capacity is counted in tokens of the full-attention group."""
    est = estimate_vllm(catalog_facts(model), 80 * GiB,
                        VllmConfig(max_model_len=32768, max_num_batched_tokens=2048, max_num_seqs=64),
                        version="0.20.0", gpu_name=H100)
    window_blocks = math.ceil((window - 1 + 2048) / 16) + 1
    assert est.kv_needed == full_layers * per_layer * 32768 + window_layers * per_layer * 16 * window_blocks
    assert est.kv_bytes_per_token == (full_layers + window_layers) * per_layer
    assert est.kv_capacity_tokens == int(est.kv_available / est.kv_needed * 32768)
    # far more tokens than the pool would hold if every layer kept the whole length
    assert est.kv_capacity_tokens > 3 * (est.kv_available // est.kv_bytes_per_token) // 2


@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-8B", "Qwen/Qwen3-8B"])
def test_pp2_the_stage_with_the_head_binds_until_the_partition_moves_layers(model):
    facts = catalog_facts(model)
    layers = facts.num_hidden_layers
    assert layers is not None
    cfg = VllmConfig(max_model_len=8192, pipeline_parallel_size=2, distributed_executor_backend="ray")
    even = estimate_vllm(facts, 24 * GiB, cfg, version="0.20.0", gpu_name="NVIDIA L4")
    first, last = even.extra["stages"]
    # the last stage holds the LM head and computes the logits: less KV memory with the same layer count
    assert first["layers"] == last["layers"] == layers // 2
    assert last["weights"] > first["weights"] and last["activation"] > first["activation"]
    assert even.kv_available == last["kv_available"] < first["kv_available"]
    # two layers more on the first stage: now it binds, and the pool is its own
    moved = estimate_vllm(facts, 24 * GiB, VllmConfig(
        max_model_len=8192, pipeline_parallel_size=2, distributed_executor_backend="ray",
        pp_layer_partition=f"{layers // 2 + 2},{layers // 2 - 2}"), version="0.20.0", gpu_name="NVIDIA L4")
    first, last = moved.extra["stages"]
    assert moved.kv_available == first["kv_available"] < last["kv_available"]


@pytest.mark.parametrize("gpu,links", [
    ("NVIDIA H100 80GB HBM3", "nvlink"), ("NVIDIA A100-SXM4-80GB", "nvlink"),
    ("NVIDIA L40S", "peerless"), ("NVIDIA GeForce RTX 4090", "peerless"),
    ("", "nvlink"), ("NVIDIA H100 NVL", "nvlink"),  # unnamed or unplaceable GPUs are taken as NVLink
])
@pytest.mark.parametrize("version", ["0.10.2", "0.19.1"])
def test_non_torch_comes_from_the_release_row_of_the_gpu_groups_interconnect(gpu, links, version):
    from gpustack_guard.core.memory import profiles as P

    row = P.vllm_non_torch(version, links)
    est = estimate_vllm(catalog_facts("Qwen/Qwen3-8B"), 48 * GiB, VllmConfig(max_model_len=8192,
                        tensor_parallel_size=2), version=version, gpu_name=gpu)
    assert est.non_torch == row.in_budget and est.extra["non_torch_source"] == row.source
    assert est.non_torch == {"nvlink": 644_245_094, "peerless": 268_435_456}[links]
    single = estimate_vllm(catalog_facts("Qwen/Qwen3-8B"), 48 * GiB, VllmConfig(max_model_len=8192),
                           version=version, gpu_name=gpu)
    assert single.non_torch == 375_809_638 and single.extra["non_torch_source"].startswith("vllm#10517")


def test_non_torch_rows_are_keyed_by_release():
    from gpustack_guard.core.memory import profiles as P

    assert P.vllm_non_torch("0.10.2", "nvlink").since == "0.0.0"
    assert P.vllm_non_torch("0.11.0", "nvlink").since == "0.11.0"
    assert P.vllm_non_torch("0.11.0", "peerless").since == "0.0.0"
    assert {row.links for row in P.VLLM_NON_TORCH} == {"single", "nvlink", "peerless"}
    assert all(row.source for row in P.VLLM_NON_TORCH)


@pytest.mark.parametrize("gpu,seqs,backend", [
    ("NVIDIA H100 80GB HBM3", 1024, "triton"), ("NVIDIA H200", 1024, "triton"),
    ("NVIDIA A100-SXM4-80GB", 256, "marlin"), ("NVIDIA L40S", 256, "marlin"),
])
def test_gpu_name_picks_batch_defaults_and_moe_backend_on_two_gpus_each(gpu, seqs, backend):
    """Defaults by name and memory (0.9.0+: A100 stays small) and the MXFP4 MoE backend, two GPUs per outcome."""
    total = 80 * GiB if "80GB" in gpu or "H200" in gpu else 46 * GiB
    est = estimate_vllm(catalog_facts("openai/gpt-oss-20b"), total, VllmConfig(max_model_len=8192),
                        version="0.20.0", gpu_name=gpu)
    assert est.max_num_seqs == seqs and est.extra["mxfp4_backend"] == backend
    assert est.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 51 if seqs == 1024 else 35}
