"""Unified-memory GPUs (GB10, Jetson Thor and Orin): which names are integrated, how vLLM and SGLang read free
memory on them per release (profiles.UMA_FREE_MEMORY), and that the estimate says so without moving a number."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import gpu_arch
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import GiB, MiB
from gpustack_guard.core.versions import Version

GB10 = int(121.69 * GiB)  # the CUDA total vLLM prints on a DGX Spark (MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47)
ORIN_64 = 62_841 * MiB  # a 64 GB AGX Orin's MemTotal (64,349,016 kB), which its cudaMemGetInfo total follows


@pytest.mark.parametrize("name,capability,label", [
    ("NVIDIA GB10", (12, 1), "GB10 (DGX Spark)"), ("NVIDIA Thor", (11, 0), "Jetson Thor"),
    ("Orin (nvgpu)", (8, 7), "Jetson Orin"), ("Orin", (8, 7), "Jetson Orin"),
    ("NVIDIA GH200 480GB", (9, 0), None), ("NVIDIA RTX PRO 6000 Blackwell Server Edition", (12, 0), None),
    ("NVIDIA H100 80GB HBM3", (9, 0), None), ("", None, None),
])
def test_names_capability_and_integration(name, capability, label):
    assert gpu_arch.compute_capability(name) == capability
    assert gpu_arch.integrated(name) == label


@pytest.mark.parametrize("engine,version,host", [
    ("vllm", "0.10.2", False), ("vllm", "0.11.0", False), ("vllm", "0.11.1", True), ("vllm", "0.19.0", True),
    ("vllm", "0.20.0", True), ("vllm", "0.34.0", True),
    ("sglang", "0.5.3", False), ("sglang", "0.5.4", True), ("sglang", "0.5.8", True), ("sglang", "0.5.9", True),
])
def test_free_memory_source_per_release(engine, version, host):
    row = gpu_arch.uma_free_row(engine, Version(version))
    assert row.engine == engine and row.host_available is host


def test_selector_moves_from_capability_to_is_integrated():
    assert "8.7, 11.0 or 12.1" in gpu_arch.uma_free_row("vllm", Version("0.19.0")).selector
    assert "is_integrated" in gpu_arch.uma_free_row("vllm", Version("0.20.0")).selector
    assert "SM 87, 110 or 121" in gpu_arch.uma_free_row("sglang", Version("0.5.8")).selector
    assert "is_integrated" in gpu_arch.uma_free_row("sglang", Version("0.5.9")).selector


def test_note_only_on_integrated_gpus_and_known_versions():
    assert gpu_arch.uma_note("vllm", "0.30.0", "NVIDIA GH200 480GB") is None  # C2C, its own HBM
    assert gpu_arch.uma_note("vllm", "latest", "NVIDIA GB10") is None
    old = gpu_arch.uma_note("vllm", "0.10.2", "NVIDIA GB10")
    assert old is not None and "page cache as used" in old and "@v0.10.1..@v0.11.0" in old
    new = gpu_arch.uma_note("vllm", "0.30.0", "Orin (nvgpu)")
    assert new is not None and new.startswith("Jetson Orin shares host memory") and "MemAvailable" in new
    assert "@v0.20.0..@v0.34.0" in new


def test_vllm_estimate_on_gb10_equals_a_discrete_card_of_the_same_total_but_notes_the_host():
    # Qwen3-14B at gmu 0.55 and 32,768 tokens, vLLM 0.30.0 (the GB10 benchmark page's hermes row): the budget
    # arithmetic is the same as on an RTX PRO 6000 (compute capability 12.0, one tier of batch defaults) given
    # the same total; only the note differs
    facts = catalog_facts("Qwen/Qwen3-14B")
    cfg = VllmConfig(gpu_memory_utilization=0.55, max_model_len=32_768, max_num_batched_tokens=2048,
                     max_num_seqs=256)
    spark = estimate_vllm(facts, GB10, cfg, version="0.30.0", gpu_name="NVIDIA GB10")
    pro = estimate_vllm(facts, GB10, cfg, version="0.30.0",
                        gpu_name="NVIDIA RTX PRO 6000 Blackwell Server Edition")
    assert spark.requested == pro.requested == int(0.55 * GB10) + 1
    assert (spark.kv_cache, spark.kv_capacity_tokens) == (pro.kv_cache, pro.kv_capacity_tokens) == \
        (40_786_984_960, 248_944)
    assert [n for n in spark.notes if "shares host memory" in n] != []
    assert [n for n in pro.notes if "shares host memory" in n] == []


def test_sglang_estimate_on_orin_notes_the_release_reading():
    facts = catalog_facts("Qwen/Qwen3-8B")
    cfg = SglangConfig(context_length=8192)
    old = estimate_sglang(facts, ORIN_64, cfg, version="0.5.3", gpu_name="Orin (nvgpu)")
    new = estimate_sglang(facts, ORIN_64, cfg, version="0.5.5", gpu_name="Orin (nvgpu)")
    assert old.kv_cache == new.kv_cache == 34_964_176_896  # gsg books a clean host either way
    assert new.kv_capacity_tokens == 237_116
    assert any("cudaMemGetInfo" in n for n in old.notes) and any("MemAvailable" in n for n in new.notes)
