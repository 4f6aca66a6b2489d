"""The argparse choices gsg holds per engine release (profiles.CHOICE_FLAGS, SWITCH_FLAGS), at the edges of every
range read from the releases' own parsers (vLLM 0.11.1-0.34.0 and SGLang 0.4.0-0.5.23, every release on PyPI): a name
the range holds passes and a name it lacks (often the one the next range adds) is refused with the whole list, at its
first, a middle and its last release. Where a parser has no choices (vLLM's --quantization from 0.13.0 and
--kv-cache-dtype from 0.33.0, a Literal beside `str`) or gsg has not read it, nothing is refused."""

from __future__ import annotations

import pytest

from gpustack_guard.core import engine_flags as EF

ENGINE = {"vllm": "vLLM", "sglang": "SGLang"}

# (family, flag, first release read, one inside, last release read, a name accepted, a name refused, the list in the
# parser's order); the lists read from each release's wheel on PyPI
RANGES = [
    ("vllm", "kv-cache-dtype", "0.11.1", "0.14.1", "0.17.1", "fp8_ds_mla", "float16",
     "auto fp8 fp8_e5m2 fp8_e4m3 fp8_inc bfloat16 fp8_ds_mla"),
    ("vllm", "kv-cache-dtype", "0.18.0", "0.19.0", "0.19.1", "float16", "turboquant_k8v4",
     "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla"),
    ("vllm", "kv-cache-dtype", "0.20.0", "0.22.0", "0.24.0", "nvfp4", "int4_per_token_head",
     "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla turboquant_k8v4 turboquant_4bit_nc "
     "turboquant_k3v4_nc turboquant_3bit_nc int8_per_token_head fp8_per_token_head nvfp4"),
    ("vllm", "kv-cache-dtype", "0.25.0", "0.26.0", "0.27.1", "int4_per_token_head", "nvfp4_4over6",
     "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla turboquant_k8v4 turboquant_4bit_nc "
     "turboquant_k3v4_nc turboquant_3bit_nc int4_per_token_head int8_per_token_head fp8_per_token_head "
     "nvfp4"),
    ("vllm", "kv-cache-dtype", "0.28.0", "0.29.0", "0.29.0", "nvfp4_4over6", "nvfp4_ds_mla",
     "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla turboquant_k8v4 turboquant_4bit_nc "
     "turboquant_k3v4_nc turboquant_3bit_nc int4_per_token_head int8_per_token_head fp8_per_token_head "
     "nvfp4 nvfp4_4over6"),
    ("vllm", "kv-cache-dtype", "0.30.0", "0.31.0", "0.31.0", "nvfp4_ds_mla", "ultraquant_4bit",
     "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla nvfp4_ds_mla turboquant_k8v4 "
     "turboquant_4bit_nc turboquant_k3v4_nc turboquant_3bit_nc int4_per_token_head int8_per_token_head "
     "fp8_per_token_head nvfp4 nvfp4_4over6"),
    ("vllm", "kv-cache-dtype", "0.32.0", "0.32.0", "0.32.0", "ultraquant_4bit", "octave_k3v4",
     "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla nvfp4_ds_mla turboquant_k8v4 "
     "turboquant_4bit_nc turboquant_k3v4_nc turboquant_3bit_nc ultraquant_4bit int4_per_token_head "
     "int8_per_token_head fp8_per_token_head nvfp4 nvfp4_4over6"),
    ("vllm", "quantization", "0.11.1", "0.11.2", "0.11.2", "petit_nvfp4", "cpu_gptq",
     "awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes hqq "
     "experts_int8 ipex quark moe_wna16 torchao auto-round rtn inc mxfp4 petit_nvfp4"),
    ("vllm", "quantization", "0.12.0", "0.12.0", "0.12.0", "cpu_awq", "FP8",
     "awq deepspeedfp tpu_int8 fp8 ptpc_fp8 fbgemm_fp8 fp_quant modelopt modelopt_fp4 bitblas gguf "
     "gptq_marlin_24 gptq_marlin gptq_bitblas awq_marlin gptq compressed-tensors bitsandbytes hqq "
     "experts_int8 ipex quark moe_wna16 torchao auto-round rtn inc mxfp4 petit_nvfp4 cpu_gptq cpu_awq"),
    ("sglang", "kv-cache-dtype", "0.4.0", "0.4.1.post1", "0.4.1.post5", "fp8_e5m2", "fp8_e4m3",
     "auto fp8_e5m2"),
    ("sglang", "kv-cache-dtype", "0.4.1.post6", "0.4.6.post4", "0.5.3.post3", "fp8_e4m3", "bf16",
     "auto fp8_e5m2 fp8_e4m3"),
    ("sglang", "kv-cache-dtype", "0.5.4", "0.5.4.post1", "0.5.4.post2", "bfloat16", "fp4_e2m1",
     "auto fp8_e5m2 fp8_e4m3 bf16 bfloat16"),
    ("sglang", "kv-cache-dtype", "0.5.4.post3", "0.5.9", "0.5.15.post1", "fp4_e2m1", "mxfp8",
     "auto fp8_e5m2 fp8_e4m3 bf16 bfloat16 fp4_e2m1"),
    ("sglang", "kv-cache-dtype", "0.5.16", "0.5.18", "0.5.20", "fp4_mx_block16", "fp8",
     "auto fp8_e5m2 fp8_e4m3 mxfp8 bf16 bfloat16 nvfp4 fp4_mx_block16 fp4_e2m1"),
    ("sglang", "kv-cache-dtype", "0.5.21", "0.5.22", "0.5.23", "fp4_mx_block16", "fp4_e2m1",
     "auto fp8_e5m2 fp8_e4m3 mxfp8 bf16 bfloat16 nvfp4 fp4_mx_block16"),
    ("sglang", "quantization", "0.4.0", "0.4.1.post1", "0.4.1.post4", "gguf", "modelopt",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf"),
    ("sglang", "quantization", "0.4.1.post5", "0.4.1.post5", "0.4.1.post5", "modelopt", "w8a8_int8",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt"),
    ("sglang", "quantization", "0.4.1.post6", "0.4.2.post4", "0.4.3.post4", "w8a8_int8", "w8a8_fp8",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt w8a8_int8"),
    ("sglang", "quantization", "0.4.4", "0.4.4.post2", "0.4.4.post3", "w8a8_fp8", "moe_wna16",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt w8a8_int8 w8a8_fp8"),
    ("sglang", "quantization", "0.4.4.post4", "0.4.5", "0.4.5", "moe_wna16", "modelopt_fp4",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt w8a8_int8 w8a8_fp8 moe_wna16"),
    ("sglang", "quantization", "0.4.5.post1", "0.4.6.post1", "0.4.6.post4", "modelopt_fp4", "qoq",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 w8a8_int8 "
     "w8a8_fp8 moe_wna16"),
    ("sglang", "quantization", "0.4.6.post5", "0.4.8", "0.4.9", "qoq", "w4afp8",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 w8a8_int8 "
     "w8a8_fp8 moe_wna16 qoq"),
    ("sglang", "quantization", "0.4.9.post1", "0.4.9.post2", "0.4.9.post2", "w4afp8", "petit_nvfp4",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 w8a8_int8 "
     "w8a8_fp8 moe_wna16 qoq w4afp8"),
    ("sglang", "quantization", "0.4.9.post3", "0.4.9.post6", "0.4.10.post2", "petit_nvfp4", "mxfp4",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 petit_nvfp4 "
     "w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8"),
    ("sglang", "quantization", "0.5.1", "0.5.2", "0.5.3.post3", "mxfp4", "modelopt_fp8",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp4 petit_nvfp4 "
     "w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4"),
    ("sglang", "quantization", "0.5.4", "0.5.4.post1", "0.5.4.post1", "compressed-tensors", "auto-round",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 compressed-tensors"),
    ("sglang", "quantization", "0.5.4.post2", "0.5.5.post1", "0.5.6", "auto-round", "modelslim",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors"),
    ("sglang", "quantization", "0.5.6.post1", "0.5.6.post2", "0.5.7", "modelslim", "quark_int4fp8_moe",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors modelslim"),
    ("sglang", "quantization", "0.5.8", "0.5.8.post1", "0.5.8.post1", "quark_int4fp8_moe", "mxfp8",
     "awq fp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors modelslim "
     "quark_int4fp8_moe"),
    ("sglang", "quantization", "0.5.9", "0.5.9", "0.5.9", "mxfp8", "modelopt_mixed",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round compressed-tensors "
     "modelslim quark_int4fp8_moe"),
    ("sglang", "quantization", "0.5.10", "0.5.10.post1", "0.5.10.post1", "modelopt_mixed", "unquant",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round "
     "compressed-tensors modelslim quark_int4fp8_moe"),
    ("sglang", "quantization", "0.5.11", "0.5.11", "0.5.11", "unquant", "quark",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round "
     "compressed-tensors modelslim quark_int4fp8_moe unquant"),
    ("sglang", "quantization", "0.5.12", "0.5.12.post1", "0.5.12.post1", "mlx_q8", "quark_mxfp4",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round "
     "compressed-tensors modelslim quark quark_int4fp8_moe mlx_q4 mlx_q8 unquant"),
    ("sglang", "quantization", "0.5.13", "0.5.13.post1", "0.5.13.post1", "quark_mxfp4", "nvfp4_online",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 auto-round "
     "compressed-tensors modelslim quark quark_int4fp8_moe quark_mxfp4 mlx_q4 mlx_q8 unquant"),
    ("sglang", "quantization", "0.5.14", "0.5.14", "0.5.14", "nvfp4_online", "auto-round-int8",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 "
     "auto-round compressed-tensors modelslim quark quark_int4fp8_moe quark_mxfp4 mlx_q4 mlx_q8 unquant"),
    ("sglang", "quantization", "0.5.15", "0.5.15.post1", "0.5.15.post1", "mxfp_w4a8", "humming",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 qoq w4afp8 mxfp4 "
     "auto-round auto-round-int8 compressed-tensors modelslim mxfp_w4a8 quark quark_int4fp8_moe "
     "quark_mxfp4 mlx_q4 mlx_q8 unquant"),
    ("sglang", "quantization", "0.5.16", "0.5.18", "0.5.19", "humming", "qoq",
     "awq fp8 mxfp8 gptq marlin gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 "
     "modelopt_fp4 nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 w4afp8 mxfp4 "
     "auto-round auto-round-int8 compressed-tensors modelslim mxfp_w4a8 quark quark_int4fp8_moe "
     "quark_mxfp4 mlx_q4 mlx_q8 unquant humming"),
    ("sglang", "quantization", "0.5.20", "0.5.22", "0.5.23", "humming", "marlin",
     "awq fp8 mxfp8 gptq gptq_marlin awq_marlin bitsandbytes gguf modelopt modelopt_fp8 modelopt_fp4 "
     "nvfp4_online modelopt_mixed petit_nvfp4 w8a8_int8 w8a8_fp8 moe_wna16 w4afp8 mxfp4 auto-round "
     "auto-round-int8 compressed-tensors modelslim mxfp_w4a8 quark quark_int4fp8_moe quark_mxfp4 mlx_q4 "
     "mlx_q8 unquant humming"),
]


def _refusal(family: str, version: str, flag: str, value: str, listed: str) -> str:
    return (f"--{flag} {value!r}: {ENGINE[family]} {version} accepts {', '.join(listed.split())} (argparse choices, "
            "case-sensitive) and exits at start-up on anything else")


EDGES = [pytest.param(family, flag, version, accepted, refused, listed, id=f"{family}-{flag}-{version}")
         for family, flag, first, inside, last, accepted, refused, listed in RANGES
         for version in dict.fromkeys((first, inside, last))]


@pytest.mark.parametrize("family,flag,version,accepted,refused,listed", EDGES)
def test_each_range_accepts_its_names_and_refuses_the_others_at_its_edges(family, flag, version, accepted, refused,
                                                                           listed):
    assert EF.check(flag, accepted, family, version) is None
    assert str(EF.check(flag, refused, family, version)) == _refusal(family, version, flag, refused, listed)


@pytest.mark.parametrize("family,version,flag,value", [
    # vLLM from 0.13.0: ModelConfig.quantization `QuantizationMethods | str | None`, a metavar, lowercased
    *(("vllm", version, "quantization", value) for version in ("0.13.0", "0.14.0", "0.14.1", "0.24.0", "0.30.0",
                                                             "0.34.0") for value in ("FP8", "Fp8", "", "None")),
    ("vllm", "0.34.1", "quantization", "my_plugin_method"),  # after the newest release read
    # vLLM from 0.33.0: CacheConfig.cache_dtype `CacheDType | str`, its built-in names pass (others: the test below)
    *(("vllm", version, "kv-cache-dtype", value) for version in ("0.33.0", "0.34.0") for value in ("fp8", "octave_k3v4")),
    # after the newest release read, and before the oldest
    ("vllm", "0.35.0", "dtype", "BFloat16"), ("vllm", "0.35.0", "kv-cache-dtype", "FP8"),
    ("sglang", "0.5.24", "quantization", "FP8"), ("sglang", "0.5.24", "kv-cache-dtype", "fp8"),
    ("sglang", "0.5.24", "dtype", "BFloat16"), ("sglang", "0.3.6.post3", "quantization", "FP8"),
    ("sglang", "0.3.6.post3", "kv-cache-dtype", "fp8"),
])
def test_a_parser_without_choices_or_unread_refuses_nothing(family, version, flag, value):
    assert EF.check(flag, value, family, version) is None


@pytest.mark.parametrize("version", ["0.33.0", "0.34.0"])
@pytest.mark.parametrize("value", ["FP8", "my_plugin_dtype"])
def test_vllm_033_kv_cache_dtype_outside_the_builtin_names_is_a_warning(version, value):
    """From 0.33 the parser takes any text; CacheConfig compares it exactly with the built-in names and those a
    platform plugin registers, and exits on anything else: a warning, since a plugin may register the name."""
    warned = EF.check("kv-cache-dtype", value, "vllm", version)
    assert warned is not None and warned.warning
    assert str(warned).startswith(f"--kv-cache-dtype {value!r}: not a value built into vLLM {version} (auto, ")
    assert str(warned).endswith("exactly as written): it exits at start-up ('Invalid kv_cache_dtype') unless a "
                                "platform plugin (register_kv_cache_dtype) registers that name; gsg cannot size a "
                                "KV cache in it")


# (release, a built-in method of it only, a method it no longer has) at the edges of _VLLM_BUILTIN_QUANTIZATION
BUILTIN_EDGES = [("0.13.0", "cpu_gptq", "aqlm"), ("0.13.1", "cpu_gptq", "aqlm"), ("0.14.0", "deepspeedfp", "cpu_gptq"),
                 ("0.14.1", "deepspeedfp", "cpu_gptq"), ("0.15.0", "gptq_bitblas", "deepspeedfp"),
                 ("0.16.0", "modelopt_mxfp8", "gptq_bitblas"), ("0.18.1", "ptpc_fp8", "mxfp8"),
                 ("0.19.0", "mxfp8", "ptpc_fp8"), ("0.20.0", "humming", "auto_gptq"),
                 ("0.22.1", "auto_gptq", "auto_awq"), ("0.23.0", "online", "cpu_awq"),
                 ("0.24.0", "auto_awq", "nvfp4_per_token"), ("0.27.1", "nvfp4_per_token", "w4afp8"),
                 ("0.28.0", "fp_quant", "bitsandbytes"), ("0.33.0", "fp_quant", "w4afp8"),
                 ("0.34.0", "w4afp8", "fp_quant")]


@pytest.mark.parametrize("version,builtin,gone", BUILTIN_EDGES)
def test_vllm_quantization_outside_the_builtin_methods_is_a_warning_any_case_inside(version, builtin, gone):
    """From 0.13 the parser takes any text and ModelConfig lowercases it, then exits on a name neither built in nor
    registered by a plugin: a built-in one passes in any case; another is a warning (a plugin may register it)."""
    assert EF.check("quantization", builtin, "vllm", version) is None
    assert EF.check("quantization", builtin.upper(), "vllm", version) is None
    for value in (gone, "awqq", "my_plugin_method"):
        warned = EF.check("quantization", value, "vllm", version)
        assert warned is not None and warned.warning
        assert str(warned).startswith(f"--quantization {value!r}: not a method built into vLLM {version} (")
        assert str(warned).endswith("any case): it exits at start-up ('Unknown quantization method') unless a "
                                    "plugin registers that name")
    missing = EF.check("quantization", None, "vllm", version)
    assert missing is not None and not missing.warning
    assert str(missing) == f"--quantization without a value: vLLM {version} takes a value here and exits at " \
                           "start-up without one"


def test_a_refusal_of_a_closed_list_is_no_warning():
    refused = EF.check("quantization", "FP8", "vllm", "0.12.0")
    assert refused is not None and not refused.warning


DTYPES = "auto half float16 bfloat16 float float32"


@pytest.mark.parametrize("family,version", [("vllm", v) for v in ("0.6.4", "0.14.1", "0.20.0", "0.27.1", "0.34.0")]
                         + [("sglang", v) for v in ("0.4.0", "0.4.10.post2", "0.5.11", "0.5.20", "0.5.23")])
def test_dtype_is_the_same_six_names_in_every_release_read(family, version):
    assert EF.check("dtype", "bfloat16", family, version) is None
    assert str(EF.check("dtype", "BFloat16", family, version)) == _refusal(family, version, "dtype", "BFloat16",
                                                                          DTYPES)


def test_a_post_release_that_changed_the_list_is_its_own_edge():
    """SGLang 0.5.4.post3 added fp4_e2m1 and 0.5.4.post2 auto-round: the rows split at them, not at 0.5.5."""
    assert EF.check("kv-cache-dtype", "fp4_e2m1", "sglang", "0.5.4.post2") is not None
    assert EF.check("kv-cache-dtype", "fp4_e2m1", "sglang", "0.5.4.post3") is None
    assert EF.check("quantization", "auto-round", "sglang", "0.5.4.post1") is not None
    assert EF.check("quantization", "auto-round", "sglang", "0.5.4.post2") is None


SWITCH = ("--{key} 'false': {engine} reads --{key} as a switch that takes no value and exits at start-up on one "
          "(argparse: ignored explicit argument); write --{key} alone to turn it on, or leave it out")


@pytest.mark.parametrize("family,version,key", [
    *(("vllm", v, key) for v in ("0.14.1", "0.15.0", "0.22.1", "0.25.0", "0.34.0")
      for key in ("enforce-eager", "enable-chunked-prefill", "disable-hybrid-kv-cache-manager")),
    *(("sglang", v, key) for v in ("0.4.0", "0.4.9.post2", "0.5.11", "0.5.14", "0.5.23")
      for key in ("disable-cuda-graph", "enable-dp-attention")),
    *(("sglang", v, "enable-lora") for v in ("0.4.9.post3", "0.5.14", "0.5.23")),
])
def test_switches_given_a_value_are_refused_in_every_release_read(family, version, key):
    assert str(EF.check(key, "false", family, version)) == SWITCH.format(key=key, engine=f"{ENGINE[family]} {version}")
    assert EF.check(key, None, family, version) is None


@pytest.mark.parametrize("family,version,key", [
    ("sglang", "0.4.9.post2", "enable-lora"),  # no --enable-lora before 0.4.9.post3: not judged as a switch
    ("vllm", "0.35.0", "enforce-eager"), ("sglang", "0.5.24", "disable-cuda-graph"),
    ("sglang", "0.3.6.post3", "disable-cuda-graph"),
])
def test_switches_outside_the_releases_read_are_not_judged(family, version, key):
    assert EF.check(key, "false", family, version) is None
