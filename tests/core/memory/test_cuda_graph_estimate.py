"""CUDA-graph memory inside vLLM's budget (0.20.0+): the shape of profile_cudagraph_memory's own estimate, checked
against the "Profiling CUDA graph memory" / "Estimated CUDA graph memory" lines of public start-up logs
(profiles.GRAPH_ESTIMATE_*)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import (
    GraphPlan,
    VllmConfig,
    estimate_vllm,
    estimated_graph_memory,
    graph_memory,
    graph_plan,
)
from gpustack_guard.core.units import GiB


def default_plan(version: str, seqs: int, batched: int) -> GraphPlan:
    """The graphs a release captures at its default capture settings."""
    return graph_plan(P.vllm_profile(version), VllmConfig(), seqs, batched)


@pytest.mark.parametrize("seqs,batched,piecewise,full,largest", [
    (256, 8192, 51, 35, 512),   # Qwen3-0.6B w4a16, 0.19.0: "PIECEWISE=51 (largest=512), FULL=35 (largest=256)"
    (128, 2048, 35, 19, 256),   # Qwen2.5-7B: "PIECEWISE=35 (largest=256), FULL=19 (largest=128)"
    (1024, 8192, 51, 51, 512),  # 80 GB class defaults: every size gets both graphs
    (4, 2048, 4, 3, 8),         # small max_num_seqs: sizes up to 2 x seqs (1, 2, 4, 8), FULL up to seqs
])
def test_graph_counts_match_the_logged_profiling_line(seqs, batched, piecewise, full, largest):
    assert default_plan("0.20.0", seqs, batched) == GraphPlan("FULL_AND_PIECEWISE", piecewise, full, largest)


def test_one_graph_set_has_no_full_graphs():
    assert default_plan("0.9.0", 256, 8192) == GraphPlan("PIECEWISE", 35, 0, 256)  # V1 0.8-0.10: piecewise only


@pytest.mark.parametrize("model,seqs,batched,logged_gib,tolerance", [
    ("Qwen/Qwen3-0.6B", 256, 8192, 0.27, 0.03),  # the two logs (printed to 0.01 GiB) the per-layer figures come from
    ("Qwen/Qwen2.5-7B", 128, 2048, 0.37, 0.03),
    ("Qwen/Qwen3-4B", 256, 2048, 0.42, 0.25),    # V14 (vllm PR #57047), a model the figures were not taken from
])
def test_estimate_follows_the_logged_estimate(model, seqs, batched, logged_gib, tolerance):
    facts = catalog_facts(model)
    assert facts.num_hidden_layers is not None
    got = estimated_graph_memory(facts, 1, default_plan("0.20.0", seqs, batched), facts.num_hidden_layers) / GiB
    assert abs(got - logged_gib) / logged_gib <= tolerance, got


def test_exact_bytes_and_the_parts_they_are_made_of():
    facts = catalog_facts("Qwen/Qwen2.5-7B")  # 28 layers, intermediate 18,944, hidden 3,584
    plan = default_plan("0.20.0", 128, 2048)
    per_graph = 28 * (90 * 1024 + 8 * 18_944)
    first = per_graph + 256 * (2 * 18_944 + 4 * 3_584) * 2
    assert estimated_graph_memory(facts, 1, plan, 28) == first + (34 + 18) * per_graph == 388_407_296
    # tensor parallelism splits the MLP width each rank's graphs are built over
    per_rank = 28 * (90 * 1024 + 8 * 18_944 // 2)
    assert estimated_graph_memory(facts, 2, plan, 28) == \
        per_rank + 256 * (18_944 + 4 * 3_584) * 2 + 52 * per_rank
    # a stage of a few layers still pays the source's 1 MiB floor per graph
    assert estimated_graph_memory(facts, 1, GraphPlan("FULL_AND_PIECEWISE", 2, 2, 2), 1) == 1024 * 1024 + 2 * (2 * 18_944 + 4 * 3_584) * 2 + \
        2 * 1024 * 1024


def test_0_18_and_0_19_size_the_graphs_after_the_kv_cache_by_vllm_s_estimate_from_the_headroom():
    """0.18.0 and 0.19.x run profile_cudagraph_memory but leave it out of the budget (the variable defaults to "0"):
    the graphs captured after the KV cache are sized by that estimate and come out of the headroom; 0.20.0 books
    the same figure inside the budget, so its pool is smaller by exactly that much."""
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=4096, max_num_seqs=128, max_num_batched_tokens=2048)
    for release in ("0.18.0", "0.19.0"):
        old = estimate_vllm(facts, 80 * GiB, cfg, version=release)
        assert old.cuda_graphs == 388_407_296 and not old.extra["cuda_graphs_in_budget"], release
    new = estimate_vllm(facts, 80 * GiB, cfg, version="0.20.0")
    assert new.cuda_graphs == 388_407_296 and new.extra["cuda_graphs_in_budget"]
    assert old.kv_available - new.kv_available == new.cuda_graphs
    # paid outside the budget: what a started 0.19 instance holds beyond gmu x total counts the graphs
    assert old.extra["outside_budget"] - new.extra["outside_budget"] == new.cuda_graphs


def test_releases_before_0_18_keep_the_measured_cost_per_layer_and_graph():
    """0.17.x has no profile_cudagraph_memory: its graphs keep the flat per-layer figure, 35 PIECEWISE sizes and a
    FULL graph for each of the 19 uniform-decode sizes up to 128 sequences (capture_model@v0.11.0 .. @v0.17.0)."""
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=4096, max_num_seqs=128, max_num_batched_tokens=2048)
    est = estimate_vllm(facts, 80 * GiB, cfg, version="0.17.1")
    assert est.cuda_graphs == (35 + 19) * 28 * P.GRAPH_BYTES_PER_LAYER_GRAPH


def test_a_72b_at_tp2_on_0_19_pays_the_estimate_per_rank_and_its_warm_up_fits():
    """A second model and parallel size: Qwen2.5-72B at TP 2 (80 layers, 14,784 intermediate per rank), 1,024
    sequences and 8,192 batched tokens on an 80 GB card: 51 PIECEWISE and 51 FULL graphs. The flat figure booked
    2 x 51 x 80 x 384 KiB = 2.99 GiB after the KV cache; vLLM's estimate of the same capture is 1.64 GiB, which leaves
    the sampler warm-up over a GiB of room at gmu 0.95 instead of 0.12 GiB."""
    facts = catalog_facts("Qwen/Qwen2.5-72B")
    cfg = VllmConfig(gpu_memory_utilization=0.95, max_model_len=8192, tensor_parallel_size=2)
    est = estimate_vllm(facts, 81559 * 1024**2, cfg, version="0.19.0", gpu_name="NVIDIA H100 80GB HBM3")
    plan = default_plan("0.19.0", 1024, 8192)
    per_graph = 80 * (P.GRAPH_ESTIMATE_LAYER_BYTES + P.GRAPH_ESTIMATE_BYTES_PER_WIDTH * 14_784)
    first = per_graph + 512 * (2 * 14_784 + 4 * 8_192) * 2
    assert (plan.piecewise, plan.full) == (51, 51)
    assert est.cuda_graphs == estimated_graph_memory(facts, 2, plan, 80) == first + 100 * per_graph
    assert est.cuda_graphs == 1_764_122_624  # 16,834,560 B per graph; first capture 80,666,624 B
    assert est.verdict == "fits"
    # 1.18 GiB of room for the warm-up (the flat figure left 0.12 GiB)
    assert est.extra["sampler_warmup_free_bytes"] - est.extra["sampler_warmup_bytes"] == 1_264_815_964


def test_pipeline_stages_estimate_their_own_layers():
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=4096, max_num_seqs=128, max_num_batched_tokens=2048,
                     pipeline_parallel_size=2, pp_layer_partition="10,18", distributed_executor_backend="ray")
    est = estimate_vllm(facts, 80 * GiB, cfg, version="0.20.0")
    assert [s["cuda_graphs"] for s in est.extra["stages"]] == \
        [estimated_graph_memory(facts, 1, default_plan("0.20.0", 128, 2048), n) for n in (10, 18)]


@pytest.mark.parametrize("model,layers", [("Qwen/Qwen2.5-7B", 28), ("Qwen/Qwen3-8B", 36)])
def test_flashinfer_adds_its_workspace_to_the_estimate_from_0_18(model, layers):
    """profiles.VLLM_FLASHINFER_GRAPH_WORKSPACE: the first FULL capture allocates FlashInfer's 394 MiB workspace;
    not without FULL graphs, not for another backend, not before 0.18.0 (no estimate) nor from 0.25.0 (the V2 runner
    era, not read)."""
    facts = catalog_facts(model)
    flashinfer = VllmConfig(attention_backend="FLASHINFER")
    for version in ("0.18.0", "0.20.0", "0.24.0"):
        profile = P.vllm_profile(version)
        plain = graph_memory(profile, VllmConfig(), 128, 2048, layers, facts)
        assert graph_memory(profile, flashinfer, 128, 2048, layers, facts) == plain + 394 * 1024 * 1024
        assert graph_memory(profile, VllmConfig(attention_backend="FLASH_ATTN"), 128, 2048, layers, facts) == plain
        piecewise = VllmConfig(attention_backend="flashinfer", cudagraph_mode="PIECEWISE")
        assert graph_plan(profile, piecewise, 128, 2048).full == 0
        assert graph_memory(profile, piecewise, 128, 2048, layers, facts) == \
            graph_memory(profile, replace(piecewise, attention_backend=None), 128, 2048, layers, facts)
    for version in ("0.17.0", "0.25.0", "0.30.0"):
        profile = P.vllm_profile(version)
        assert graph_memory(profile, flashinfer, 128, 2048, layers, facts, version=version) == \
            graph_memory(profile, VllmConfig(), 128, 2048, layers, facts, version=version)


MiB = 1024 * 1024


@pytest.mark.parametrize("model,layers", [("Qwen/Qwen3-Next-80B-A3B-Instruct", 48), ("Qwen/Qwen3.5-27B", 64)])
def test_flashinfer_workspace_is_in_the_capture_after_the_kv_cache_for_a_gated_delta_model(model, layers):
    """profiles.VLLM_FLASHINFER_CAPTURE_WORKSPACE: before 0.18.0 the capture after the KV cache makes FlashInfer's
    workspace at its first FULL graph where the kernel warm-up did not (a model with Gated DeltaNet groups): 256 MiB
    to 0.11.0, 394 MiB from 0.11.1; none without FULL graphs, for another backend, or from 0.18.0 (the estimate's
    own row). The Qwen3-Next log (0.13.0, TP 2): 0.79 GiB logged, 0.16 booked before, 0.54 now."""
    facts = catalog_facts(model)
    flashinfer = VllmConfig(attention_backend="FLASHINFER")
    for version, workspace in (("0.11.0", 256 * MiB), ("0.11.1", 394 * MiB), ("0.13.0", 394 * MiB),
                               ("0.17.0", 394 * MiB)):
        profile = P.vllm_profile(version)
        plain = graph_memory(profile, VllmConfig(), 8, 8192, layers, facts, version=version)
        assert graph_memory(profile, flashinfer, 8, 8192, layers, facts, version=version) == plain + workspace
        other = VllmConfig(attention_backend="FLASH_ATTN")
        assert graph_memory(profile, other, 8, 8192, layers, facts, version=version) == plain
        piecewise = VllmConfig(attention_backend="FLASHINFER", cudagraph_mode="PIECEWISE")
        assert graph_memory(profile, piecewise, 8, 8192, layers, facts, version=version) == \
            graph_memory(profile, replace(piecewise, attention_backend=None), 8, 8192, layers, facts, version=version)
    for version in ("0.18.0", "0.20.0"):  # the estimate's workspace, booked once
        profile = P.vllm_profile(version)
        assert graph_memory(profile, flashinfer, 8, 8192, layers, facts, version=version) == \
            graph_memory(profile, VllmConfig(), 8, 8192, layers, facts, version=version) + 394 * MiB


@pytest.mark.parametrize("model,layers", [("Qwen/Qwen2.5-7B", 28), ("Qwen/Qwen3-8B", 36)])
def test_flashinfer_workspace_of_an_all_flashinfer_model_is_made_by_the_warmup_from_0_11(model, layers):
    """kernel_warmup (0.11.0 on) runs a force_attention batch before the capture when every group is FlashInfer:
    the capture's figure holds no workspace then; 0.10.1 has no such warm-up, so its FULL capture makes it."""
    facts = catalog_facts(model)
    flashinfer = VllmConfig(attention_backend="FLASHINFER", cudagraph_mode="FULL_AND_PIECEWISE")
    for version, workspace in (("0.10.1", 256 * MiB), ("0.11.0", 0), ("0.13.0", 0), ("0.17.0", 0)):
        profile = P.vllm_profile(version)
        assert graph_plan(profile, flashinfer, 128, 2048).full > 0
        assert graph_memory(profile, flashinfer, 128, 2048, layers, facts, version=version) == \
            graph_memory(profile, replace(flashinfer, attention_backend=None), 128, 2048, layers, facts,
                         version=version) + workspace
