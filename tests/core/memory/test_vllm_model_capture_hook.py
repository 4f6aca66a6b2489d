"""gpt-oss's own config hook widens its CUDA-graph capture sizes (profiles.VLLM_MODEL_CAPTURE, read in
model_executor/models/config.py GptOssForCausalLMConfig at every tag from 0.10.1): more graphs than the release's
default for any other model, so a larger graph term and less room for the warm-up."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm, model_capture_override
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

H100, H100_NAME = 81_559 * MiB, "NVIDIA H100 80GB HBM3"
B200_NAME = "NVIDIA B200"


def counts(model: str, version: str, gpu: str = H100_NAME, total: int = H100, **settings) -> tuple[int, int]:
    est = estimate_vllm(catalog_facts(model), total, VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192,
                                                                **settings), version=version, gpu_name=gpu)
    got = est.extra["cuda_graph_counts"]
    return got["piecewise"], got["full"]


# 1, 2, 4, every 8 below 256 (31), every 16 from 256: to 1024 that is 49 more, to 992 47 more, to 512 17 more
TO_1024, TO_992, TO_512 = 3 + 31 + 49, 3 + 31 + 47, 3 + 31 + 17


@pytest.mark.parametrize("model", ["openai/gpt-oss-20b", "openai/gpt-oss-120b"])
@pytest.mark.parametrize("version,expected", [
    ("0.10.1", (TO_1024, 0)),         # PIECEWISE by default there; the list reaches 1024 (H100 batches 8,192 tokens)
    ("0.10.2", (TO_1024, 0)),
    ("0.11.0", (TO_992, TO_992)),     # 992: FA3's full-graph limit; FULL decode graphs up to 1,024 sequences
    ("0.11.2", (TO_1024, TO_1024)),   # max_cudagraph_capture_size = 1024
    ("0.19.0", (TO_1024, TO_1024)),
    ("0.33.0", (TO_1024, TO_1024)),
])
def test_gpt_oss_captures_up_to_the_hooks_size_at_each_release(model, version, expected):
    assert counts(model, version) == expected


def test_another_moe_model_keeps_the_release_default():
    # Qwen3-30B-A3B at the same defaults (1,024 sequences on an H100): min(2 x 1,024, 512) = 512
    assert counts("Qwen/Qwen3-30B-A3B", "0.11.2") == (TO_512, TO_512)
    assert counts("Qwen/Qwen3-30B-A3B", "0.10.1") == (3 + 64, 0)  # 0.10.1's every-8 list to 512


def test_the_hook_widens_past_a_small_max_num_seqs():
    # without the hook 32 sequences capture up to 64 tokens; the hook captures to 1024, FULL decode to 32 only
    assert counts("openai/gpt-oss-20b", "0.11.2", max_num_seqs=32) == (TO_1024, 3 + 4)
    assert counts("openai/gpt-oss-20b", "0.10.1", max_num_seqs=32) == (TO_1024, 0)


def test_the_list_is_cut_to_the_batched_tokens():
    # 0.10.1's _set_cudagraph_sizes and 0.11.1's min(max_num_tokens, max size) both drop sizes above 512 tokens
    assert counts("openai/gpt-oss-20b", "0.10.1", max_num_batched_tokens=512) == (TO_512, 0)
    assert counts("openai/gpt-oss-20b", "0.11.2", max_num_batched_tokens=512) == (TO_512, TO_512)
    assert counts("openai/gpt-oss-20b", "0.11.0", max_num_batched_tokens=600) == (3 + 31 + 22, 3 + 31 + 22)


@pytest.mark.parametrize("version,settings,expected", [
    # 0.10.1-0.11.0: one --cuda-graph-sizes value below the hook's size is replaced, at or above it kept
    ("0.10.1", {"cuda_graph_sizes": (256,)}, (TO_1024, 0)),
    ("0.10.1", {"cuda_graph_sizes": (2048,)}, (3 + 256, 0)),   # every 8 to 2,048
    ("0.11.0", {"cuda_graph_sizes": (991,)}, (TO_992, TO_992)),
    ("0.11.0", {"cuda_graph_sizes": (992,)}, (3 + 124, 3 + 124)),
    ("0.10.1", {"cuda_graph_sizes": (8, 16)}, (2, 0)),          # a list of several is the user's
    ("0.10.1", {"cudagraph_capture_sizes": (1, 2)}, (2, 0)),    # the compilation config's list wins over both
    # 0.11.1+: any size setting turns the hook off
    ("0.11.2", {"max_cudagraph_capture_size": 256}, (3 + 31 + 1, 3 + 31 + 1)),
    ("0.11.2", {"cudagraph_capture_sizes": (1, 2, 4)}, (3, 3)),
    ("0.11.2", {"cuda_graph_sizes": (64,)}, (1, 1)),            # the deprecated alias of the list
])
def test_a_size_the_deployment_sets(version, settings, expected):
    assert counts("openai/gpt-oss-20b", version, **settings) == expected


def test_0_34_sets_the_split_keys_except_on_sm100():
    cfg = VllmConfig()
    hooked, row = model_capture_override(catalog_facts("openai/gpt-oss-20b"), cfg, "0.34.0", H100_NAME, 8192)
    assert row is P.VLLM_MODEL_CAPTURE["GptOssForCausalLM"][-1]
    assert hooked.prefill_capture_sizes == tuple([1, 2, 4] + list(range(8, 256, 8)) + list(range(256, 1025, 16)))
    assert hooked.max_decode_capture_requests == 1024
    # the top is min(batched tokens, 1024), off-stride or not; a draft divides the decode requests
    hooked, _ = model_capture_override(catalog_facts("openai/gpt-oss-20b"), VllmConfig(num_speculative_tokens=3),
                                       "0.34.0", H100_NAME, 700)
    assert hooked.prefill_capture_sizes[-3:] == (672, 688, 700) and hooked.max_decode_capture_requests == 256
    assert model_capture_override(catalog_facts("openai/gpt-oss-20b"), cfg, "0.34.0", B200_NAME, 8192) == (cfg, None)
    set_key = VllmConfig(max_decode_capture_requests=64)
    assert model_capture_override(catalog_facts("openai/gpt-oss-20b"), set_key, "0.34.0", H100_NAME, 8192) == \
        (set_key, None)
    assert counts("openai/gpt-oss-20b", "0.34.0")[0] == TO_1024


def test_no_hook_before_0_10_1_or_for_other_architectures():
    cfg = VllmConfig()
    assert P.vllm_model_capture_row("GptOssForCausalLM", "0.10.0") is None
    assert P.vllm_model_capture_row("Qwen3MoeForCausalLM", "0.11.2") is None
    assert model_capture_override(catalog_facts("Qwen/Qwen3-30B-A3B"), cfg, "0.11.2", H100_NAME, 8192) == (cfg, None)


def test_more_graphs_cost_more_graph_memory_and_the_estimate_says_why():
    facts = catalog_facts("openai/gpt-oss-20b")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192)
    hooked = estimate_vllm(facts, H100, cfg, version="0.11.0", gpu_name=H100_NAME)
    kept = estimate_vllm(facts, H100, VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192,
                                                 max_cudagraph_capture_size=None, cudagraph_capture_sizes=None,
                                                 cuda_graph_sizes=(992,)), version="0.11.0", gpu_name=H100_NAME)
    # 0.11.0's per-layer-and-graph cost: 24 layers x (81 + 81) graphs against 24 x (127 + 127)
    assert hooked.cuda_graphs * 254 == kept.cuda_graphs * 162
    assert hooked.extra["cuda_graph_model_hook"].startswith("vllm/model_executor/models/config.py@v0.11.0")
    assert any("Overriding max cuda graph capture size" in note for note in hooked.notes)
    assert kept.extra["cuda_graph_model_hook"] == ""


def test_flags_reach_the_hook_as_vllm_reads_them():
    cfg = vllm_config({"max-cudagraph-capture-size": "128"}, Policy(), version="0.19.0")
    assert model_capture_override(catalog_facts("openai/gpt-oss-20b"), cfg, "0.19.0", H100_NAME, 8192) == \
        (cfg, None)
