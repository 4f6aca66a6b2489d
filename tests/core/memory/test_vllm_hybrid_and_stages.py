"""Hybrid attention (sliding-window and full layers in one model) and the pipeline stage that binds, checked on two
models each (issue 32)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import GiB

H100 = "NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize("model,full_layers,window_layers,window,per_layer,groups", [
    ("openai/gpt-oss-20b", 12, 12, 128, 2 * 8 * 64 * 2, (12, 1, 1)),          # alternating 128-token window
    ("google/gemma-3-27b-it", 10, 52, 1024, 2 * 16 * 128 * 2, (10, 1, 6)),    # five window layers per full one
])
def test_one_request_holds_full_layers_for_its_length_and_window_layers_for_the_window(
        model, full_layers, window_layers, window, per_layer, groups):
    """vLLM's SlidingWindowSpec keeps cdiv(window - 1 + batched tokens, block) + 1 blocks per window layer; the full
    layers keep the whole request. The pool is group_size tensors of pages shared by one layer of each group, and
    the capacity vLLM prints is its blocks shared out over the groups (kv_cache_utils.py@v0.10.1.1)."""
    est = estimate_vllm(catalog_facts(model), 80 * GiB,
                        VllmConfig(max_model_len=32768, max_num_batched_tokens=2048, max_num_seqs=64),
                        version="0.20.0", gpu_name=H100)
    window_blocks = math.ceil((window - 1 + 2048) / 16) + 1
    assert est.kv_needed == full_layers * per_layer * 32768 + window_layers * per_layer * 16 * window_blocks
    assert est.kv_bytes_per_token == (full_layers + window_layers) * per_layer
    size, full_groups, window_groups = groups
    blocks = est.kv_available // (16 * per_layer * size)
    assert est.kv_capacity_tokens == blocks // (full_groups + window_groups) * 16
    assert est.kv_cache == blocks * 16 * per_layer * size
    assert est.max_concurrency == blocks / (full_groups * 32768 // 16 + window_groups * window_blocks)
    # the padded window group of gemma-3 is capacity vLLM does not print: fewer tokens than the unpadded layers
    assert est.kv_capacity_tokens <= est.kv_available // est.kv_bytes_per_token


@pytest.mark.parametrize("model", ["openai/gpt-oss-20b", "google/gemma-3-27b-it"])
@pytest.mark.parametrize("version,flags,hybrid", [
    ("0.9.0", {}, False),  # V1 before the manager: unify_hybrid_kv_cache_specs
    ("0.9.2", {}, True),
    ("0.19.0", {}, True),
    ("0.19.0", {"disable_hybrid_kv_cache_manager": True}, False),
])
def test_window_layers_are_full_length_without_the_hybrid_manager(model, version, flags, hybrid):
    """Before 0.9.2, and when the manager is off, every window layer is sized as a full one: the pool is blocks of
    all layers and one request needs its whole length on every layer."""
    facts = catalog_facts(model)
    est = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=32768, **flags), version=version, gpu_name=H100)
    whole_request = est.kv_bytes_per_token * 32768
    if hybrid:
        assert est.kv_needed < whole_request
    else:
        assert est.kv_needed == whole_request
        assert est.kv_capacity_tokens == est.kv_available // (16 * est.kv_bytes_per_token) * 16
        assert any("at full length (no hybrid KV-cache manager)" in note for note in est.notes)


@pytest.mark.parametrize("version,groups", [
    ("0.11.0", 3),  # groups of 12 (the smaller count): 13 full layers make two groups, one padded
    ("0.12.0", 2),  # 13 < 1.25 x 12: groups of 13, the window group padded by one
    ("0.19.0", 2),  # 1.5 x 12
])
def test_group_size_takes_the_larger_count_when_the_kinds_are_close_from_0_12(version, groups):
    """gpt-oss-20b with one more full-attention layer (a drafter's): 12 window + 13 full."""
    facts = catalog_facts("openai/gpt-oss-20b")
    facts = replace(facts, num_hidden_layers=25)
    est = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=8192), version=version, gpu_name=H100)
    per_layer = 2 * 8 * 64 * 2
    size = 12 if groups == 3 else 13
    blocks = est.kv_available // (16 * per_layer * size)
    assert est.kv_capacity_tokens == blocks // groups * 16


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
    # an NVLink (or unknown) TP group adds the device group's NCCL communicator the profile makes (0.6.5-0.26)
    device_group = P.NCCL_BUFFERS if links == "nvlink" else 0
    assert est.extra["device_group_nccl"] == device_group and est.extra["nccl_nvls"] == 0  # TP 2: no NVLS
    assert est.non_torch == row.in_budget + device_group and est.extra["non_torch_source"] == row.source
    assert est.non_torch == {"nvlink": 644_245_094, "peerless": 268_435_456}[links] + device_group
    single = estimate_vllm(catalog_facts("Qwen/Qwen3-8B"), 48 * GiB, VllmConfig(max_model_len=8192),
                           version=version, gpu_name=gpu)
    assert single.non_torch == 375_809_638 and single.extra["non_torch_source"].startswith("vllm#10517")


def test_non_torch_rows_are_keyed_by_release():
    from gpustack_guard.core.memory import profiles as P

    assert P.vllm_non_torch("0.10.2", "nvlink").since == "0.0.0"
    assert P.vllm_non_torch("0.11.0", "nvlink").since == "0.11.0"
    assert P.vllm_non_torch("0.11.0", "peerless").since == "0.0.0"
    assert {row.links for row in P.VLLM_NON_TORCH} == {"single", "single-v0", "nvlink", "peerless"}
    assert P.vllm_non_torch("0.6.4", "single-v0").since == "0.0.0"
    assert P.vllm_non_torch("0.8.2", "single-v0").since == "0.6.5"
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
    # gpt-oss's hook captures to 1,024 tokens (profiles.VLLM_MODEL_CAPTURE); FULL decode graphs to max_num_seqs
    assert est.extra["cuda_graph_counts"] == {"piecewise": 83, "full": 83 if seqs == 1024 else 35}


@pytest.mark.parametrize("flags,off", [
    ({"disable-hybrid-kv-cache-manager": ""}, True),
    ({"disable-hybrid-kv-cache-manager": "false"}, False),
    ({"kv-transfer-config": '{"kv_connector": "LMCacheConnectorV1"}'}, True),  # VllmConfig turns it off
    ({"kv-events-config": '{"enable_kv_cache_events": true}'}, True),
    ({}, False),
])
def test_the_flags_that_turn_the_hybrid_manager_off(flags, off):
    from gpustack_guard.core.memory.engine import vllm_config
    from gpustack_guard.core.spec.model import Policy

    assert vllm_config(flags, Policy()).disable_hybrid_kv_cache_manager is off


@pytest.mark.parametrize("version,gpu,env,hybrid", [
    ("0.10.1", H100, None, True),
    ("0.10.1", H100, "0", False),  # VLLM_USE_V1=0: V0 has no hybrid manager
    ("0.10.1", "Tesla V100-SXM2-32GB", None, False),  # pre-Ampere falls back to V0 in 0.8.0-0.10.1
    ("0.10.2", "Tesla V100-SXM2-32GB", None, True),  # the fallback is gone: V1 and its manager
    ("0.9.1", H100, None, False),  # V1 before the manager
])
def test_the_hybrid_manager_follows_the_engine_generation_that_runs(version, gpu, env, hybrid):
    facts = catalog_facts("google/gemma-3-27b-it")
    est = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=32768, use_v1_env=env), version=version,
                        gpu_name=gpu)
    assert est.extra["engine_generation"] == ("v1" if hybrid or version == "0.9.1" else "v0")
    assert (est.kv_needed == est.kv_bytes_per_token * 32768) is not hybrid


@pytest.mark.parametrize("model,per_layer,groups,window", [
    ("openai/gpt-oss-20b", 2 * 8 * 64 * 2, (12, 1, 1), 128),
    ("google/gemma-3-27b-it", 2 * 16 * 128 * 2, (10, 1, 6), 1024),
])
@pytest.mark.parametrize("version,from_concurrency", [("0.20.0", False), ("0.21.0", True)])
def test_printed_kv_tokens_are_concurrency_times_length_from_0_21(model, per_layer, groups, window, version,
                                                                   from_concurrency):
    """_report_kv_cache_config@v0.21.0 prints int(max_concurrency x max_model_len), where @v0.20.0 printed the blocks
    shared out over the groups: the same pool, a larger figure for a hybrid model (its window groups hold only the
    window per request)."""
    est = estimate_vllm(catalog_facts(model), 80 * GiB,
                        VllmConfig(max_model_len=32768, max_num_batched_tokens=2048, max_num_seqs=64),
                        version=version, gpu_name=H100)
    size, full_groups, window_groups = groups
    blocks = est.kv_available // (16 * per_layer * size)
    per_request = full_groups * 32768 // 16 + window_groups * (math.ceil((window - 1 + 2048) / 16) + 1)
    assert est.max_concurrency == blocks / per_request
    assert est.kv_cache == blocks * 16 * per_layer * size  # the pool itself does not change
    if from_concurrency:
        assert est.kv_capacity_tokens == int(blocks / per_request * 32768)
        assert est.kv_capacity_tokens > blocks // (full_groups + window_groups) * 16
    else:
        assert est.kv_capacity_tokens == blocks // (full_groups + window_groups) * 16


@pytest.mark.parametrize("max_len", [32768, 30001])
def test_printed_kv_tokens_of_a_full_attention_model_from_0_21(max_len):
    """A full-attention model prints blocks x block size up to 0.20; from 0.21 int(blocks / cdiv(len, block) x len):
    the same figure where the length is a whole number of blocks, a few tokens fewer where it is not."""
    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    cfg = VllmConfig(max_model_len=max_len)
    old = estimate_vllm(facts, 80 * GiB, cfg, version="0.20.0", gpu_name=H100)
    new = estimate_vllm(facts, 80 * GiB, cfg, version="0.21.0", gpu_name=H100)
    blocks = new.kv_available // (16 * 32 * 8 * 128 * 2 * 2)
    assert old.kv_capacity_tokens == (old.kv_available // (16 * 131072)) * 16
    assert new.kv_capacity_tokens == int(blocks / math.ceil(max_len / 16) * max_len)
    assert (new.kv_capacity_tokens == blocks * 16) is (max_len % 16 == 0)
