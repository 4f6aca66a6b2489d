"""Backend flags to engine configs in the engine's own reading: the special values, and no default in place
of a refused value."""

from __future__ import annotations

import pytest

from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.spec.model import Policy

POLICY = Policy()
FACTS = ModelFacts(architecture="LlamaForCausalLM", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
                   num_key_value_heads=8, intermediate_size=14336, vocab_size=128256, max_position_embeddings=131072,
                   dtype="bfloat16")


def test_llamacpp_ctx_zero_is_the_models_own_length():
    cfg = engine.llamacpp_config({"ctx-size": "0"}, POLICY, FACTS, "b6000")
    assert cfg.ctx_size == 131072


def test_llamacpp_reads_values_as_std_stoi_does():
    cfg = engine.llamacpp_config({"ctx-size": "8k", "batch-size": "512.9", "gpu-layers": "20 "}, POLICY, FACTS,
                                 "b6000")
    assert (cfg.ctx_size, cfg.batch_size, cfg.gpu_layers) == (8, 512, 20)


@pytest.mark.parametrize("layers", ["all", "auto", "-1", "-2"])
def test_llamacpp_recent_layer_words_offload_everything(layers):
    assert engine.llamacpp_config({"gpu-layers": layers}, POLICY, FACTS, "b7000").gpu_layers is None


def test_llamacpp_auto_slots_and_split():
    cfg = engine.llamacpp_config({"parallel": "-1", "tensor-split": "3/1"}, POLICY, FACTS, "b7000")
    assert (cfg.parallel, cfg.tensor_split) == (4, (3.0, 1.0))


def test_vllm_auto_length_is_estimated_like_an_unset_one():
    cfg = engine.vllm_config({"max-model-len": "auto", "max-num-seqs": "16"}, POLICY, version="0.14.0")
    assert (cfg.max_model_len, cfg.max_num_seqs) == (None, 16)


def test_vllm_human_readable_values():
    cfg = engine.vllm_config({"max-model-len": "32K", "max-num-batched-tokens": "8k", "kv-cache-memory": "4GiB"},
                             POLICY, version="0.11.0")
    assert (cfg.max_model_len, cfg.max_num_batched_tokens, cfg.kv_cache_memory) == (32768, 8000, 4 * 2**30)


@pytest.mark.parametrize("family,flags", [
    ("vllm", {"max-num-seqs": "0"}),
    ("vllm", {"tensor-parallel-size": "0"}),
    ("vllm", {"gpu-memory-utilization": "nan"}),
    ("sglang", {"mem-fraction-static": "inf"}),
    ("sglang", {"page-size": "0"}),
    ("llamacpp", {"ubatch-size": "0"}),
])
def test_a_refused_value_is_never_replaced_by_the_default(family, flags):
    build = {"vllm": lambda: engine.vllm_config(flags, POLICY, version="0.11.0"),
             "sglang": lambda: engine.sglang_config(flags, "0.5.5"),
             "llamacpp": lambda: engine.llamacpp_config(flags, POLICY, FACTS, "b6000")}[family]
    with pytest.raises(EF.FlagValueError):
        build()


def test_sglang_chunked_prefill_off_keeps_minus_one():
    assert engine.sglang_config({"chunked-prefill-size": "-1"}, "0.5.5").chunked_prefill_size == -1


def test_gpustack_fraction_refuses_a_fraction_vllm_refuses():
    assert engine.gpustack_fraction("vllm", {"gpu-memory-utilization": "0.5"}, 24 * 2**30) == 0.5
    with pytest.raises(EF.FlagValueError):
        engine.gpustack_fraction("vllm", {"gpu-memory-utilization": "1.7"}, 24 * 2**30)


def test_vllm_auto_length_runs_at_the_longest_length_that_fits():
    gpus = [(24 * 2**30, "NVIDIA GeForce RTX 4090")]
    unset = engine.estimate("vllm", FACTS, gpus, {}, "0.14.0", POLICY)
    auto = engine.estimate("vllm", FACTS, gpus, {"max-model-len": "auto"}, "0.14.0", POLICY)
    assert (unset.max_model_len, unset.estimated_max_model_len, unset.verdict) == (131072, 41888,
                                                                                  "kv-below-max-model-len")
    assert (auto.max_model_len, auto.estimated_max_model_len, auto.verdict) == (41888, 41888, "fits")


@pytest.mark.parametrize("flags,off", [
    ({}, False),
    ({"disable-piecewise-cuda-graph": None}, True),
    ({"disable-piecewise-cuda-graph": "false"}, False),
    ({"enable-torch-compile": None}, True),
    ({"enable-dp-attention": None}, True),  # 0.5.10: under every backend (SGLANG_DP_ATTENTION_PREFILL_GRAPHS)
    ({"enable-lora": None}, True),
    ({"lora-paths": "a=/models/a"}, True),
    ({"speculative-algorithm": "EAGLE"}, True),
    ({"load-format": "gguf"}, True),
    ({"quantization": "GGUF"}, True),
    ({"quantization": "fp8"}, False),
    ({"disable-cuda-graph": None}, False),  # not in SGLang's list: the reserve still counts them
])
def test_sglang_flags_that_turn_prefill_graphs_off(flags, off):
    assert engine.sglang_config(flags, "0.5.10").prefill_graphs_off is off


@pytest.mark.parametrize("flags,split_mode,overrides", [
    ({}, "layer", False),
    ({"split-mode": "row"}, "row", False),
    ({"split-mode": "NONE"}, "none", False),
    ({"override-tensor": "exps=CPU"}, "layer", True),
    ({"cpu-moe": None}, "layer", True),
    ({"n-cpu-moe": "10"}, "layer", True),
])
def test_llamacpp_split_mode_and_tensor_overrides(flags, split_mode, overrides):
    cfg = engine.llamacpp_config(flags, POLICY, FACTS, "b6000")
    assert (cfg.split_mode, cfg.tensor_overrides) == (split_mode, overrides)


def test_vllm_attention_backend_flag_is_kept_as_given():
    # dense_block_size reads it (FLASH_ATTN's FA4 page on 10.x: profiles.VLLM_FA4_PAGE)
    assert engine.vllm_config({"attention-backend": "FLASH_ATTN"}, POLICY).attention_backend == "FLASH_ATTN"
    assert engine.vllm_config({}, POLICY).attention_backend is None
