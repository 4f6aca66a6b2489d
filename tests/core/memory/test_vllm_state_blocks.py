"""vLLM refuses a hybrid whose KV pool holds fewer state blocks than max_num_seqs under FULL decode CUDA graphs
(issue 32; benchmarks/vectors/MISSES.md, "a hybrid's state blocks below max_num_seqs").

Read in the wheels: config/compilation.py@v0.20.0 .. @v0.34.0 resolve_cudagraph_mode_and_sizes raises
"max_num_seqs (N) exceeds available Mamba cache blocks (M)" when cudagraph_mode.has_full_cudagraphs() and
max_num_reqs > kv_cache_config.num_blocks; 0.18.0 .. 0.19.1 cut the capture sizes to the blocks instead
(adjust_cudagraph_sizes_for_mamba_cache) and start; 0.17 has neither. The blocks are the hybrid pool's: the bytes
left over group_size pages of the attention block raised to hold a state (core/memory/gated_delta.py)."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.state_blocks import blocks_verdict
from gpustack_guard.core.units import MiB

H100 = ("NVIDIA H100 80GB HBM3", 81_559 * MiB)
H200 = ("NVIDIA H200", 143_771 * MiB)
REFUSED = "mamba-blocks-below-max-num-seqs"


def estimate(model: str, version: str, gpu=H100, **flags):
    name, total = gpu
    return estimate_vllm(catalog_facts(model), total, VllmConfig(**flags), version=version, gpu_name=name)


@pytest.mark.parametrize("version,refused", [("0.17.0", False), ("0.18.0", False), ("0.19.1", False),
                                             ("0.20.0", True), ("0.28.0", True), ("0.34.0", True)])
def test_the_check_is_read_from_0_20_0_on(version, refused):
    row = P.vllm_state_blocks_row(version)
    assert row.refused is refused
    assert ("compilation.py@v0.20.0" in row.source) is refused


@pytest.mark.parametrize("version", ["0.20.0", "0.25.1", "0.28.0"])
def test_qwen36_27b_on_one_h100_at_vllm_serves_defaults_is_refused(version):
    """The KAITO / vllm#49064 case: 1,024 sequences on an H100, 339 blocks of 16 x 784 x 4,096 B in 16.22 GiB."""
    est = estimate("Qwen/Qwen3.6-27B", version, max_model_len=32768)
    x = est.extra
    assert (est.max_num_seqs, est.block_size, x["cuda_graph_mode"]) == (1024, 784, "FULL_AND_PIECEWISE")
    assert (x["state_blocks"], x["state_blocks_checked"], x["state_blocks_refused"]) == (339, True, True)
    assert x["state_blocks"] == est.kv_cache // (16 * 784 * 4096)  # group size 16, one page per layer a block
    assert est.verdict == REFUSED


def test_a_release_before_the_check_starts_the_same_deployment():
    est = estimate("Qwen/Qwen3.6-27B", "0.19.1", max_model_len=32768)
    assert (est.extra["state_blocks"], est.extra["state_blocks_checked"], est.verdict) == (336, False, "fits")


def test_the_boundary_is_max_num_seqs_above_the_blocks():
    # fewer sequences shrink the sampler's profile, so the pool grows with them: 383 blocks at 383 and 384
    fits = estimate("Qwen/Qwen3.6-27B", "0.28.0", max_model_len=32768, max_num_seqs=383)
    over = estimate("Qwen/Qwen3.6-27B", "0.28.0", max_model_len=32768, max_num_seqs=384)
    assert (fits.extra["state_blocks"], fits.verdict) == (383, "fits")
    assert (over.extra["state_blocks"], over.verdict) == (383, REFUSED)


def test_without_full_graphs_there_is_no_check():
    eager = estimate("Qwen/Qwen3.6-27B", "0.28.0", max_model_len=32768, enforce_eager=True)
    piecewise = estimate("Qwen/Qwen3.6-27B", "0.28.0", max_model_len=32768, cudagraph_mode="PIECEWISE")
    assert (eager.extra["cuda_graph_mode"], eager.extra["state_blocks_checked"], eager.verdict) == \
        ("NONE", False, "fits")
    assert (piecewise.extra["cuda_graph_mode"], piecewise.extra["state_blocks_checked"], piecewise.verdict) == \
        ("PIECEWISE", False, "fits")
    decode_only = estimate("Qwen/Qwen3.6-27B", "0.28.0", max_model_len=32768, cudagraph_mode="FULL_DECODE_ONLY")
    assert (decode_only.extra["state_blocks_checked"], decode_only.verdict) == (True, REFUSED)


def test_a_second_hybrid_fits_its_blocks_on_a_larger_card_and_not_on_a_smaller_one():
    """Qwen3.6-35B-A3B: 1,056-token blocks; 2,915 blocks on an H200, 119 on an H100 after 67 GB of weights."""
    big = estimate("Qwen/Qwen3.6-35B-A3B", "0.28.0", H200, max_model_len=32768)
    small = estimate("Qwen/Qwen3.6-35B-A3B", "0.28.0", max_model_len=32768)
    assert (big.block_size, big.extra["state_blocks"], big.verdict) == (1056, 2915, "fits")
    assert (small.extra["state_blocks"], small.verdict) == (119, REFUSED)


def test_a_model_without_state_layers_has_no_block_check():
    est = estimate("Qwen/Qwen3-8B", "0.28.0", max_model_len=32768)
    assert "state_blocks" not in est.extra and est.verdict == "fits"


@pytest.mark.parametrize("verdict,after", [("fits", REFUSED), ("sampler-warmup-oom", REFUSED),
                                           # the KV checks refuse before the graphs are resolved
                                           ("kv-below-max-model-len", "kv-below-max-model-len"),
                                           ("no-kv-memory", "no-kv-memory")])
def test_the_refusal_replaces_only_what_happens_after_it(verdict, after):
    assert blocks_verdict(verdict, {"state_blocks_refused": True}) == after
    assert blocks_verdict(verdict, {"state_blocks_refused": False}) == verdict


def test_the_finding_names_the_blocks_the_sequences_and_the_flag(gsg):
    result = gsg("estimate", "-m", "Qwen/Qwen3.6-27B", "--gpu-memory", "81559MiB", "--gpu-name",
                 "NVIDIA H100 80GB HBM3", "--backend-version", "0.28.0", "--", "--max-model-len=32768")
    assert "verdict: mamba-blocks-below-max-num-seqs" in result.out
    assert ("error GSG056 mamba-blocks-below-max-num-seqs: the KV pool (16.22 GiB) holds 339 state blocks of this "
            "hybrid model, but max_num_seqs is 1024: with FULL_AND_PIECEWISE CUDA graphs every decode sequence "
            "needs one, and vLLM 0.28.0 refuses to start ('max_num_seqs (1024) exceeds available Mamba cache "
            "blocks (339)')\n    fix: set --max-num-seqs 339 or lower, raise --gpu-memory-utilization, or run "
            "without FULL CUDA graphs (--enforce-eager)") in result.out


def test_a_scheduler_refusal_comes_first():
    """Prefix caching's raised 784-token block above 512 batched tokens refuses at the configuration (GSG042), before
    the KV cache exists: the estimate keeps its fit for that rule to judge, with the blocks still reported."""
    est = estimate("Qwen/Qwen3.6-27B", "0.20.0", max_model_len=32768, enable_prefix_caching=True,
                   max_num_batched_tokens=512)
    assert est.extra["align_block_refusal"] and est.extra["state_blocks_refused"]
    assert est.verdict == "fits"
