"""vLLM V1's sampler warm-up after the KV cache repeats the profile's sampler pass (issue 32, the gpt-oss-20b
crash at gmu 0.95 on one H100; benchmarks/vectors/MISSES.md, "post-KV warm-up of gpt-oss on H100").

Read at the tags: gpu_worker.py@v0.11.0 compile_or_warm_up_model warms the sampler up with
max_num_reqs = min(max_num_seqs, max_num_batched_tokens) one-token requests; profile_run
(gpu_model_runner.py@v0.11.0) runs _dummy_run(max_num_tokens, is_profile=True), whose dummy batch has
min(max_num_tokens, max_num_seqs) requests, then _dummy_sampler_run on their last hidden states: the same rows,
the same Sampler and TopKTopPSampler path. The warm-up's pass is therefore the profile's pass less the batch hidden
states the profile still holds (from 0.10), and it fits in the activation memory the profile released. So a
warm-up OOM of these releases is memory held outside the budget, never the sampler's own size."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import MiB

H100 = ("NVIDIA H100 80GB HBM3", 81_559 * MiB)


@pytest.mark.parametrize("model,hidden,vocab", [("openai/gpt-oss-20b", 2880, 201_088),
                                                ("Qwen/Qwen3-8B", 4096, 151_936)])
@pytest.mark.parametrize("version,kernel,bytes_per_entry", [
    ("0.10.2", "flashinfer", 14),  # FlashInfer's sampler wherever it imports (GPUStack's runner image)
    ("0.11.0", "flashinfer", 14),
    ("0.12.0", "torch-sort", 38),  # opt-in FlashInfer from 0.11.1: the segmented sort of >= 128 rows
    ("0.15.0", "torch-sort", 38),
    ("0.19.0", "triton", 14),      # Triton's in-place top-k/top-p from 0.17.0
])
def test_the_warm_up_is_the_profiles_sampler_pass_less_the_held_batch(model, hidden, vocab, version, kernel,
                                                                     bytes_per_entry):
    name, total = H100
    est = estimate_vllm(catalog_facts(model), total, VllmConfig(gpu_memory_utilization=0.95), version=version,
                        gpu_name=name)
    x = est.extra
    # H100 under `vllm serve`: 1,024 sequences and 8,192 batched tokens, so 1,024 rows in both passes
    assert (est.max_num_seqs, x["max_num_batched_tokens"]) == (1024, 8192)
    assert (x["sampler_warmup_rows"], x["sampler_kernel"]) == (1024, kernel)
    sampled = 1024 * vocab * bytes_per_entry
    assert x["sampler_warmup_bytes"] == sampled + 1024 * hidden * 2
    assert x["sampler_peak_in_profile_bytes"] == x["sampler_peak"] == sampled + 8192 * hidden * 2
    # the only difference: the profile still holds the 8,192-token batch's hidden states
    assert x["sampler_peak_in_profile_bytes"] - x["sampler_warmup_bytes"] == (8192 - 1024) * hidden * 2


def test_gpt_oss_20b_warm_up_bytes_at_0_11_0_on_h100():
    """The exact figures behind the MISSES.md row: 1,024 x 201,088 x 14 B + 1,024 x 2,880 x 2 B, and the
    profile's 8,192 held rows instead."""
    name, total = H100
    est = estimate_vllm(catalog_facts("openai/gpt-oss-20b"), total, VllmConfig(gpu_memory_utilization=0.95),
                        version="0.11.0", gpu_name=name)
    assert est.extra["sampler_warmup_bytes"] == 2_888_695_808
    assert est.extra["sampler_peak_in_profile_bytes"] == 2_929_983_488


@pytest.mark.parametrize("version,free", [("0.10.2", 5_861_626_588), ("0.11.0", 5_116_089_052),
                                          ("0.15.0", 10_020_082_396), ("0.19.0", 6_153_134_812)])
def test_gpt_oss_20b_at_0_95_on_one_h100_starts_with_room_for_the_warm_up(version, free):
    """Round 28 (issue 32, 'what happens after the KV pool is taken'): read at v0.10.2, v0.11.0, v0.13.0, v0.14.0
    and v0.19.0, compile_or_warm_up_model runs, after the KV cache, the compile-size warm-ups, kernel_warmup, the
    graph capture and then one forward of min(max_num_seqs, max_num_batched_tokens) tokens and _dummy_sampler_run
    with the profile's own metadata (top_k = vocab - 1, top_p = 0.9, max_num_logprobs None); the profile's
    activation was released by memory_profiling's empty_cache before the KV cache was allocated. So what is free at
    the warm-up is the card less weights, non-torch, KV, graphs and context, and for the default 1,024 sequences that
    is more than the pass needs at every release: GSG043 stays silent and GSG034 alone warns."""
    name, total = H100
    est = estimate_vllm(catalog_facts("openai/gpt-oss-20b"), total, VllmConfig(gpu_memory_utilization=0.95),
                        version=version, gpu_name=name)
    x = est.extra
    assert x["sampler_warmup_free_bytes"] == free
    assert free - x["sampler_warmup_bytes"] > 2 * 1024**3  # over 2 GiB to spare: no source found takes it
    assert est.verdict == "fits" and x["sampler_warmup_fix"] == {}
    assert est.headroom < est.headroom_needed  # the GSG034 warning


@pytest.mark.parametrize("model", ["openai/gpt-oss-20b", "Qwen/Qwen3-8B"])
@pytest.mark.parametrize("version", ["0.10.2", "0.11.0", "0.15.0", "0.19.0"])
def test_the_flags_gsg043_names_start_the_engine_and_one_step_past_them_does_not(model, version):
    """Where the arithmetic says the warm-up cannot fit (gmu 0.99 on one H100), the finding names a fraction and a
    --max-num-seqs: each alone makes the estimate start, and 0.01 more or one more sequence does not."""
    from dataclasses import replace

    name, total = H100
    facts, cfg = catalog_facts(model), VllmConfig(gpu_memory_utilization=0.99)
    est = estimate_vllm(facts, total, cfg, version=version, gpu_name=name)
    assert est.verdict == "sampler-warmup-oom"
    fix = est.extra["sampler_warmup_fix"]

    def verdict(**changes) -> str:
        return estimate_vllm(facts, total, replace(cfg, **changes), version=version, gpu_name=name).verdict

    fraction, seqs = fix["gpu_memory_utilization"], fix["max_num_seqs"]
    assert 0.9 < fraction < 0.99 and 0 < seqs < 1024
    assert verdict(gpu_memory_utilization=fraction) != "sampler-warmup-oom"
    assert verdict(gpu_memory_utilization=round(fraction + 0.01, 2)) == "sampler-warmup-oom"
    assert verdict(max_num_seqs=seqs) != "sampler-warmup-oom"
    assert verdict(max_num_seqs=seqs + 1) == "sampler-warmup-oom"
