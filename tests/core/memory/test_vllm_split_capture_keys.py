"""vLLM 0.34.0's prefill/decode capture keys of --compilation-config (profiles.VLLM_SPLIT_CAPTURE_KEYS, read in
config/compilation.py@v0.34.0 and config/vllm.py@v0.34.0 _split_cudagraph_capture_sizes): read on SM100 and on
other GPUs, refused before 0.34.0 and next to the deprecated sizes."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import (
    GraphPlan,
    VllmConfig,
    capture_defaults,
    decode_grid,
    estimate_vllm,
    graph_plan,
    prefill_grid,
)
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

B200, H100 = "NVIDIA B200", "NVIDIA H100 80GB HBM3"


def config(compilation: str, version: str = "0.34.0", **flags: str) -> VllmConfig:
    return engine.vllm_config({"compilation-config": compilation, **flags}, Policy(), version=version)


def plan(gpu: str, seqs: int, batched: int, cfg: VllmConfig, version: str = "0.34.0") -> GraphPlan:
    return graph_plan(P.vllm_profile(version), cfg, seqs, batched, defaults=capture_defaults(version, gpu))


def test_the_keys_are_read_into_the_config():
    cfg = config('{"prefill_cudagraph_capture_token_sizes": [1, 2, 512], "max_prefill_cudagraph_capture_tokens": '
                 '4096, "decode_cudagraph_capture_request_sizes": [], "max_decode_cudagraph_capture_requests": 0, '
                 '"max_decode_cudagraph_capture_tokens": 256}')
    assert (cfg.prefill_capture_sizes, cfg.max_prefill_capture_tokens, cfg.decode_capture_requests,
            cfg.max_decode_capture_requests, cfg.max_decode_capture_tokens) == ((1, 2, 512), 4096, (), 0, 256)
    assert engine.vllm_config({"cc": '{"max_prefill_cudagraph_capture_tokens": 2048}'}, Policy(),
                              version="0.34.0").max_prefill_capture_tokens == 2048


# 1,024 sequences; B200 at 16,384 batched tokens (its default grids: 54 prefill to 8,192, 64 decode to 1,024),
# H100 at 8,192 (the shared list: 51 sizes to 512, each a prefill and a decode graph)
@pytest.mark.parametrize("compilation,b200,h100", [
    ('{"max_prefill_cudagraph_capture_tokens": 2048}', (31, 64, 2048), (31, 51, 2048)),
    ('{"max_decode_cudagraph_capture_requests": 128}', (54, 29, 8192), (51, 29, 512)),
    ('{"prefill_cudagraph_capture_token_sizes": [1, 2, 4, 8, 512, 4096]}', (6, 64, 4096), (6, 51, 4096)),
    ('{"decode_cudagraph_capture_request_sizes": []}', (54, 0, 8192), (51, 0, 512)),
    ('{"max_prefill_cudagraph_capture_tokens": 0}', (0, 64, 1024), (0, 51, 512)),
    # the decode token budget alone: decode graphs up to 256 requests (one token each), the first above cut to it
    ('{"max_decode_cudagraph_capture_tokens": 256}', (54, 37, 8192), (51, 35, 512)),
])
def test_each_key_moves_its_own_graphs_on_both_gpus(compilation, b200, h100):
    cfg = config(compilation)
    assert plan(B200, 1024, 16384, cfg) == GraphPlan("FULL_AND_PIECEWISE", *b200)
    assert plan(H100, 1024, 8192, cfg) == GraphPlan("FULL_AND_PIECEWISE", *h100)


def test_grid_lengths_the_table_above_uses():
    assert (len(prefill_grid(2048)), len(decode_grid(128)), len(decode_grid(256)), len(decode_grid(1024))) == \
        (31, 29, 37, 64)


def test_a_decode_budget_cuts_the_deprecated_list_not_the_default_one():
    # max_cudagraph_capture_size 128 (legacy, H100): 1, 2, 4, 8 ... 128 = 19 sizes; a 64-token decode budget keeps
    # the decode graphs to 64 requests (11 sizes), the prefill graphs stay on the list
    cfg = config('{"max_cudagraph_capture_size": 128, "max_decode_cudagraph_capture_tokens": 64}')
    assert plan(H100, 1024, 8192, cfg) == GraphPlan("FULL_AND_PIECEWISE", 19, 11, 128)


@pytest.mark.parametrize("model,default_bytes,capped_bytes", [
    # Qwen2.5-7B: 6,823,936 B a graph; the first capture's intermediates 855,638,016 B at 8,192 tokens, a quarter
    # at 2,048; (53 + 63) or (30 + 63) further graphs
    ("Qwen/Qwen2.5-7B", 6_823_936 * 117 + 855_638_016, 6_823_936 * 94 + 855_638_016 // 4),
    ("Qwen/Qwen3-0.6B", 550_199_296, 349_192_192),
])
def test_the_b200_graph_estimate_follows_the_prefill_cap(model, default_bytes, capped_bytes):
    def graphs(flags: dict) -> int:
        cfg = engine.vllm_config({"max-model-len": "8192", **flags}, Policy(), version="0.34.0")
        return estimate_vllm(catalog_facts(model), 183_359 * MiB, cfg, version="0.34.0", gpu_name=B200).cuda_graphs

    assert graphs({}) == default_bytes
    assert graphs({"compilation-config": '{"max_prefill_cudagraph_capture_tokens": 2048}'}) == capped_bytes


@pytest.mark.parametrize("compilation,version,message", [
    ('{"max_prefill_cudagraph_capture_tokens": 2048}', "0.33.0",
     "vLLM 0.33.0 has no compilation config key max_prefill_cudagraph_capture_tokens (it comes in 0.34.0"),
    ('{"decode_cudagraph_capture_request_sizes": [1, 2]}', "0.19.0", "vLLM 0.19.0 has no compilation config key"),
    ('{"max_prefill_cudagraph_capture_tokens": 2048, "cudagraph_capture_sizes": [1, 2]}', "0.34.0",
     "refuses the deprecated cudagraph_capture_sizes with max_prefill_cudagraph_capture_tokens"),
    ('{"decode_cudagraph_capture_request_sizes": [4]}', "0.34.0", None),  # fine alone
    ('{"max_decode_cudagraph_capture_tokens": 0}', "0.34.0", "is not a whole number from 1"),
    ('{"max_decode_cudagraph_capture_requests": -1}', "0.34.0", "is not a whole number from 0"),
    ('{"prefill_cudagraph_capture_token_sizes": 4}', "0.34.0", "is not a list"),
])
def test_refusals_name_the_key_and_the_release(compilation, version, message):
    if message is None:
        config(compilation, version)
        return
    with pytest.raises(EF.FlagValueError, match=message.replace("(", r"\(")):
        config(compilation, version)


def test_the_deprecated_flag_with_a_split_key_is_refused_too():
    with pytest.raises(EF.FlagValueError, match="refuses the deprecated max_cudagraph_capture_size"):
        config('{"max_decode_cudagraph_capture_requests": 64}', **{"max-cudagraph-capture-size": "256"})
