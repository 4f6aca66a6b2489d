"""vLLM's packed KV-cache dtypes (kv_formats.VLLM_PACKED_KV, read in the 0.30.0 .. 0.34.0 wheels): a value vLLM
takes is sized by its backend's slot, K and V with their scales; TurboQuant and UltraQuant keep a dense model's two
first and two last layers at the model's dtype; a value whose layout gsg has not read, and from 0.33 a name no
built-in list holds (a platform plugin may register it), is a warning with no arithmetic, never a refusal."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory.kv_formats import boundary_layers, head_slot_bytes
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

H100 = "NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize(("dtype", "head128", "head64"), [
    ("int8_per_token_head", 264, 136),  # 2 x head bytes + 2 fp32 scales
    ("fp8_per_token_head", 264, 136),
    ("int4_per_token_head", 136, 72),  # two codes a byte
    ("nvfp4", 144, 72),  # 2 x (head / 2 + head / 16)
    ("nvfp4_4over6", 144, 72),
    ("turboquant_k8v4", 196, 100),  # fp8 keys (head) + 4-bit values with fp16 scale and zero
    ("turboquant_4bit_nc", 134, 70),  # 4-bit keys + fp16 norm, 4-bit values + 4
    ("turboquant_k3v4_nc", 118, 62),
    ("turboquant_3bit_nc", 102, 54),  # 50 + 52 at 128; 26 + 28 at 64
    ("ultraquant_4bit", 136, 68),  # codes + one UE8M0 scale per 32, K and V
])
def test_each_packed_dtype_takes_its_backends_slot_per_kv_head(dtype, head128, head64):
    assert (head_slot_bytes(dtype, 128), head_slot_bytes(dtype, 64)) == (head128, head64)


def test_plain_dtypes_are_not_packed():
    assert [head_slot_bytes(d, 128) for d in ("fp8", "auto", "bfloat16", "fp8_ds_mla", "octave_k3v4")] == [None] * 5


def test_boundary_layers_are_the_first_and_last_two():
    assert [boundary_layers("turboquant_k8v4", n) for n in (32, 4, 3, 1)] == [4, 4, 2, 0]
    assert boundary_layers("ultraquant_4bit", 36) == 4
    assert boundary_layers("nvfp4", 32) == 0


def _kv(model: str, dtype: str, version: str) -> int:
    est = engine.estimate("vllm", catalog_facts(model), [(80 * GiB, H100)],
                          {"max-model-len": "4096", "kv-cache-dtype": dtype}, version, Policy())
    return est.kv_bytes_per_token


@pytest.mark.parametrize(("model", "dtype", "version", "per_token"), [
    # Llama-3.1-8B: 32 layers, 8 KV heads of 128
    ("meta-llama/Llama-3.1-8B-Instruct", "nvfp4", "0.34.0", 32 * 8 * 144),  # 36,864 (bf16: 131,072)
    ("meta-llama/Llama-3.1-8B-Instruct", "int4_per_token_head", "0.30.0", 32 * 8 * 136),
    ("meta-llama/Llama-3.1-8B-Instruct", "turboquant_k8v4", "0.30.0", 28 * 8 * 196 + 4 * 8 * 256 * 2),  # 60,288
    # Qwen3-8B: 36 layers, 8 KV heads of 128
    ("Qwen/Qwen3-8B", "int8_per_token_head", "0.33.0", 36 * 8 * 264),  # 76,032
    ("Qwen/Qwen3-8B", "turboquant_4bit_nc", "0.34.0", 32 * 8 * 134 + 4 * 8 * 256 * 2),  # 50,688
    ("Qwen/Qwen3-8B", "ultraquant_4bit", "0.32.0", 32 * 8 * 136 + 4 * 8 * 256 * 2),
])
def test_a_packed_kv_cache_is_sized_by_its_slot(model, dtype, version, per_token):
    assert _kv(model, dtype, version) == per_token


@pytest.mark.parametrize(("model", "dtype", "version", "said"), [
    ("meta-llama/Llama-3.1-8B-Instruct", "octave_k3v4", "0.34.0", "gsg does not size a KV cache in octave_k3v4"),
    ("meta-llama/Llama-3.1-8B-Instruct", "nvfp4", "0.28.0", "gsg has read the layout of nvfp4 from vLLM 0.30.0 on"),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", "nvfp4", "0.34.0", "gsg does not size an MLA model's KV cache in nvfp4"),
    ("google/gemma-3-27b-it", "turboquant_4bit_nc", "0.33.0", "gsg does not size turboquant_4bit_nc on a model with "
                                                               "sliding-window"),
])
def test_a_value_vllm_takes_but_gsg_cannot_size_is_a_warning(model, dtype, version, said):
    with pytest.raises(EF.FlagValueError) as caught:
        _kv(model, dtype, version)
    assert caught.value.warning and said in str(caught.value) and str(caught.value).endswith("no memory arithmetic")


def test_sglang_keeps_refusing_an_fp4_kv_dtype_it_has_not_read():
    """kv.py sizes vLLM's nvfp4 slot; SGLang's layout of its own nvfp4 is not read, so it stays unsized."""
    with pytest.raises(ValueError, match="unknown --kv-cache-dtype 'nvfp4'"):
        engine.estimate("sglang", catalog_facts("meta-llama/Llama-3.1-8B-Instruct"), [(80 * GiB, H100)],
                        {"context-length": "4096", "kv-cache-dtype": "nvfp4"}, "0.5.20", Policy())


KV_33 = ("auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, nvfp4_ds_mla, turboquant_k8v4, "
         "turboquant_4bit_nc, turboquant_k3v4_nc, turboquant_3bit_nc, octave_k3v4, octave_k3v3, octave_k3v3_compact, "
         "ultraquant_4bit, int4_per_token_head, int8_per_token_head, fp8_per_token_head, nvfp4, nvfp4_4over6")


@pytest.mark.parametrize("version", ["0.33.0", "0.34.0"])
@pytest.mark.parametrize("value", ["fp7", "FP8", ""])
def test_from_0_33_a_name_outside_the_built_in_list_is_a_warning(version, value):
    """CacheConfig._validate_cache_dtype: `name in KV_CACHE_DTYPES`, exactly as written, plus what a platform plugin
    registered (vllm/config/cache.py@v0.33.0 and @v0.34.0)."""
    refused = EF.check("kv-cache-dtype", value, "vllm", version)
    assert refused is not None and refused.warning
    assert str(refused) == (f"--kv-cache-dtype {value!r}: not a value built into vLLM {version} ({KV_33}; exactly as "
                            "written): it exits at start-up ('Invalid kv_cache_dtype') unless a platform plugin "
                            "(register_kv_cache_dtype) registers that name; gsg cannot size a KV cache in it")


def test_the_built_in_names_pass_and_the_neighbours_keep_their_rules():
    assert [EF.check("kv-cache-dtype", v, "vllm", "0.34.0") for v in ("octave_k3v3", "nvfp4", "fp8", "auto")] == \
        [None] * 4
    octave_032 = EF.check("kv-cache-dtype", "octave_k3v3", "vllm", "0.32.0")  # argparse choices: a refusal
    assert octave_032 is not None and not octave_032.warning
    assert EF.check("kv-cache-dtype", "fp7", "vllm", "0.35.0") is None  # a release not read
    quant = EF.check("quantization", "nope", "vllm", "0.34.0")  # the quantization plugin row keeps its words
    assert quant is not None and "(any case)" not in str(quant) and "; any case): it exits at start-up ('Unknown " \
        "quantization method') unless a plugin registers that name" in str(quant)


def _kv_flags(model: str, version: str, **flags: str) -> int:
    est = engine.estimate("vllm", catalog_facts(model), [(80 * GiB, H100)],
                          {"max-model-len": "4096", **{k.replace("_", "-"): v for k, v in flags.items()}}, version,
                          Policy())
    return est.kv_bytes_per_token


@pytest.mark.parametrize("version", ["0.30.0", "0.34.0"])
def test_skipped_layers_keep_the_models_dtype_on_a_dense_model(version):
    """--kv-cache-dtype-skip-layers names layers by index (attention.py: `str(layer_idx) in ...`): each holds bf16
    beside the fp8 ones; one uniform-type group, so the bytes per token add up (kv_cache_utils.py @v0.30.0)."""
    llama = "meta-llama/Llama-3.1-8B-Instruct"  # 32 layers, 8 KV heads of 128: 2,048 B fp8, 4,096 B bf16
    assert _kv_flags(llama, version, kv_cache_dtype="fp8") == 32 * 2048
    assert _kv_flags(llama, version, kv_cache_dtype="fp8", kv_cache_dtype_skip_layers="0 31") == 30 * 2048 + 2 * 4096
    # `0,31` is one argparse item that names no layer; 32 is past the last; 01 is not the text of an index
    assert _kv_flags(llama, version, kv_cache_dtype="fp8", kv_cache_dtype_skip_layers="0,31") == 32 * 2048
    assert _kv_flags(llama, version, kv_cache_dtype="fp8", kv_cache_dtype_skip_layers="32 01") == 32 * 2048
    assert _kv_flags(llama, version, kv_cache_dtype_skip_layers="0 31") == 32 * 4096  # nothing quantized
    # with TurboQuant's own boundary layers (0, 1, 30, 31): one more, layer 5
    assert _kv_flags(llama, version, kv_cache_dtype="turboquant_k8v4", kv_cache_dtype_skip_layers="0 5") == \
        27 * 8 * 196 + 5 * 4096


@pytest.mark.parametrize(("model", "version", "said"), [
    ("google/gemma-3-27b-it", "0.34.0", "gsg sizes --kv-cache-dtype-skip-layers on a dense model only"),
    ("meta-llama/Llama-3.1-8B-Instruct", "0.20.0", "gsg has read --kv-cache-dtype-skip-layers from vLLM 0.30.0 on"),
])
def test_skipped_layers_gsg_has_not_read_are_a_warning(model, version, said):
    with pytest.raises(EF.FlagValueError) as caught:
        _kv_flags(model, version, kv_cache_dtype="fp8", kv_cache_dtype_skip_layers="sliding_window 0")
    assert caught.value.warning and caught.value.key == "kv-cache-dtype-skip-layers" and said in str(caught.value)
