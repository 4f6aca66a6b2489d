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
    ("0.11.0", "flashinfer", 14),  # FlashInfer's sampler wherever it imports (GPUStack's runner image)
    ("0.12.0", "torch-sort", 38),  # opt-in FlashInfer from 0.11.1: the segmented sort of >= 128 rows
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
