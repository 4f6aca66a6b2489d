"""V0 0.2.5-0.6.3 budgets the memory torch reserved after the profile run (profiles.VLLM_V0_PROFILE_MEASURES): the
caching allocator replay (core/memory/allocator.py) and the sampler segments it adds to the forward's."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.allocator import reserved_after
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm, sampler_phase_bytes
from gpustack_guard.core.memory.terms import budget_terms
from gpustack_guard.core.units import GiB, MiB


def test_a_request_a_cached_block_holds_splits_it_and_takes_no_segment():
    assert reserved_after((), (448 * MiB,), (("alloc", "indices", 250 * MiB),)) == 448 * MiB


def test_a_request_no_cached_block_holds_takes_its_own_segment_rounded_to_2_mib():
    assert reserved_after((), (224 * MiB,), (("alloc", "indices", 250 * MiB + 1),)) == 224 * MiB + 252 * MiB
    # the held block is not reused
    assert reserved_after((64 * MiB,), (), (("alloc", "logits", 60 * MiB),)) == 64 * MiB + 60 * MiB


def test_freed_neighbours_merge_before_the_next_request():
    events = (("alloc", "a", 40 * MiB), ("alloc", "b", 40 * MiB), ("free", "a", 0), ("free", "b", 0),
              ("alloc", "c", 90 * MiB))
    assert reserved_after((), (100 * MiB,), events) == 100 * MiB


def test_a_block_is_split_only_when_more_than_1_mib_would_remain():
    # 63.5 MiB of a 64 MiB block leaves 0.5 MiB: the whole block goes, and the 2 MiB request takes a 20 MiB segment
    events = (("alloc", "a", 63 * MiB + 512 * 1024), ("alloc", "b", 2 * MiB))
    assert reserved_after((), (64 * MiB,), events) == 64 * MiB + 20 * MiB
    # requests of 1 MiB or less come from the small pool, left out
    assert reserved_after((), (), (("alloc", "tiny", MiB),)) == 0


def _llama(model: str, version: str):
    cfg = VllmConfig(max_model_len=8192, max_num_seqs=256)
    return estimate_vllm(catalog_facts(model), int(23.58 * GiB), cfg, version=version,
                         gpu_name="NVIDIA GeForce RTX 3090")


def test_llama_3s_vocabulary_takes_new_segments_in_the_0_4_1_profile():
    """Llama-3-8B at 8,192 tokens over 256 rows of 128,256: the forward caches 64, 64, 448, 224 and 64 MiB free
    blocks (its down_proj step less the held output); the sort's int64 reverse indices (250.5 MiB) and cub's
    temporary storage (10 B an entry, 313.1 MiB) fit none, so two segments of 252 and 314 MiB are added."""
    est = _llama("meta-llama/Meta-Llama-3-8B", "0.4.1")
    new = 252 * MiB + 314 * MiB
    assert est.extra["sampler_peak"] == est.extra["forward_peak"] + new
    assert est.activation == est.extra["forward_peak"] + new
    rules = {t.term: t.rule for t in budget_terms(est)}
    assert rules["sampler_peak_bytes_per_gpu"] == "v0-16bit-sort-reserved-after-forward-driver-rank"


def test_llama_2s_vocabulary_fits_in_the_forwards_cached_segments():
    """The same shape with 32,000 entries: every sampler tensor fits a block the forward cached, so the allocated
    sampler phase (sampler_phase_bytes) stands."""
    est = _llama("meta-llama/Llama-2-7b-hf", "0.4.1")
    facts = catalog_facts("meta-llama/Llama-2-7b-hf")
    assert est.extra["sampler_peak"] == sampler_phase_bytes(facts, 8192, 256, "torch-sort-16bit")
    assert est.activation == est.extra["forward_peak"]


def test_the_fp32_sort_of_0_5_5_to_0_6_3_adds_its_own_segments():
    # logits.to(torch.float) first: reverse indices 250.5 MiB -> 252, cub's 12 B an entry 375.75 MiB -> 376
    est = _llama("meta-llama/Meta-Llama-3-8B", "0.6.0")
    assert est.extra["sampler_peak"] == est.extra["forward_peak"] + 252 * MiB + 376 * MiB
    rules = {t.term: t.rule for t in budget_terms(est)}
    assert rules["sampler_peak_bytes_per_gpu"] == "v0-fp32-sort-reserved-after-forward-driver-rank"


@pytest.mark.parametrize("version,kernel", [("0.2.4", "torch-sort-16bit"), ("0.6.4", "torch-sort")])
def test_releases_that_budget_the_allocated_peak_add_no_segments(version, kernel):
    est = _llama("meta-llama/Meta-Llama-3-8B", version)
    facts = catalog_facts("meta-llama/Meta-Llama-3-8B")
    assert est.extra["sampler_peak"] == sampler_phase_bytes(facts, 8192, 256, kernel)


def test_the_measure_rows():
    assert [P.vllm_v0_profile_measure(v) for v in ("0.2.4", "0.2.5", "0.4.1", "0.6.3", "0.6.4", "0.9.0")] == \
        ["allocated", "reserved", "reserved", "reserved", "allocated", "allocated"]
