"""`--dtype` as vLLM and SGLang read it: weights and an `auto` KV cache in the loaded dtype, not the checkpoint's
(issue 32, "Arguments that are ignored")."""

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.engine_flags import FlagValueError
from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.memory.served_dtype import served_dtype
from gpustack_guard.core.memory.weights import weight_layout
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

H100 = [(81_559 * MiB, "NVIDIA H100 80GB HBM3")]


@pytest.mark.parametrize("flag,checkpoint,architecture,served", [
    (None, "bfloat16", "LlamaForCausalLM", "bfloat16"),
    ("auto", "float16", "LlamaForCausalLM", "float16"),
    ("auto", "float32", "GPT2LMHeadModel", "float16"),  # auto never loads 32 bits
    ("auto", "float32", "Gemma2ForCausalLM", "bfloat16"),  # Gemma overflows in float16
    ("auto", "float32", "Gemma3ForConditionalGeneration", "bfloat16"),
    ("float32", "bfloat16", "LlamaForCausalLM", "float32"),
    ("float", "bfloat16", "LlamaForCausalLM", "float32"),
    ("half", "bfloat16", "LlamaForCausalLM", "float16"),
    ("bfloat16", "float32", "GPT2LMHeadModel", "bfloat16"),
    (None, None, None, "bfloat16"),
])
def test_the_loaded_dtype(flag, checkpoint, architecture, served):
    assert served_dtype(flag, checkpoint, architecture) == served


@pytest.mark.parametrize("bad", ["fp16", "BF16", "float64", "", "int8"])
def test_values_the_engines_parser_refuses(bad):
    with pytest.raises(ValueError, match="the engine accepts auto, half, float16, bfloat16, float, float32"):
        served_dtype(bad, "bfloat16")


@pytest.mark.parametrize("family,model", [("vllm", "meta-llama/Llama-3.1-8B-Instruct"),
                                          ("sglang", "Qwen/Qwen2.5-7B-Instruct")])
def test_float32_doubles_weights_and_kv_bytes(family, model):
    facts = catalog_facts(model)
    assert facts is not None and facts.dtype == "bfloat16"
    flags = {"max-model-len": "8192"} if family == "vllm" else {"context-length": "8192"}
    half = estimate(family, facts, H100, flags, None, Policy())
    full = estimate(family, facts, H100, {**flags, "dtype": "float32"}, None, Policy())
    # the weights as loaded add the rotary cos/sin cache (in the served dtype: vLLM's get_rope takes the default
    # dtype, SGLang keeps FP32 on CUDA) and, for SGLang, segment tails: the parameters themselves double
    full_params, half_params = (e.extra.get("parameter_bytes", e.weights - e.extra.get("rope_cache_bytes", 0))
                                for e in (full, half))
    assert full_params == 2 * weight_layout(facts).total == 2 * half_params
    if family == "vllm":  # 131,072 x 128 at 4 B, then 2 B
        assert (full.extra["rope_cache_bytes"], half.extra["rope_cache_bytes"]) == (64 * MiB, 32 * MiB)
    assert full.kv_bytes_per_token == 2 * half.kv_bytes_per_token
    # the memory left for KV loses exactly what the weights and the activations gained
    gained = (full.weights - half.weights) + (full.activation - half.activation)
    assert half.kv_available - full.kv_available == gained
    if family == "vllm":  # the profile's hidden states and MLP intermediates are four bytes wide too
        assert full.activation > half.activation
    assert full.kv_capacity_tokens == full.kv_cache // full.kv_bytes_per_token
    # an fp8 KV cache is one byte whatever the weights are loaded in
    fp8 = estimate(family, facts, H100, {**flags, "dtype": "float32", "kv-cache-dtype": "fp8"}, None, Policy())
    assert fp8.kv_bytes_per_token == half.kv_bytes_per_token // 2


def test_a_float32_checkpoint_served_with_auto_is_sized_in_16_bits():
    facts = catalog_facts("meta-llama/Llama-3.1-8B-Instruct")
    as_float32 = replace(facts, dtype="float32", weight_bytes=None)
    auto = estimate("vllm", as_float32, H100, {"max-model-len": "8192"}, None, Policy())
    kept = estimate("vllm", facts, H100, {"max-model-len": "8192"}, None, Policy())
    assert (auto.weights, auto.kv_bytes_per_token, auto.activation) == (kept.weights, kept.kv_bytes_per_token,
                                                                     kept.activation)


def test_a_bad_dtype_is_a_flag_error_naming_the_flag():
    facts = catalog_facts("meta-llama/Llama-3.1-8B-Instruct")
    with pytest.raises(FlagValueError, match=r"^--dtype 'fp16': the engine accepts auto"):
        estimate("vllm", facts, H100, {"dtype": "fp16"}, None, Policy())
