"""Each engine's reading of the numeric flags gsg reads: exact values accepted, exact refusals."""

import math

import pytest

from gpustack_guard.core import args as A
from gpustack_guard.core import engine_flags as EF


def read(family, version, key, value):
    return EF.read({key: value}, key, family, version)


# --- the parsers -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("16k", 16_000), ("16K", 16_384), ("25.6k", 25_600), ("1m", 1_000_000), ("2M", 2_097_152),
    ("1g", 10**9), ("1G", 2**30), ("1t", 10**12), ("1T", 2**40), (" 4096 ", 4096), ("+7", 7), ("1_000", 1000),
    ("0.0001k", 0), ("-5", -5),
])
def test_human_readable_int_accepts(text, expected):
    assert EF.human_readable_int(text) == expected


@pytest.mark.parametrize("text", ["1.5K", "2.0", "1e5", "16kb", "k", "", "lots", "16 k", "0x10"])
def test_human_readable_int_refuses(text):
    with pytest.raises(ValueError):
        EF.human_readable_int(text)


@pytest.mark.parametrize("text,expected", [("auto", -1), ("AUTO", -1), ("-1", -1), ("8k", 8000)])
def test_human_readable_int_or_auto(text, expected):
    assert EF.human_readable_int_or_auto(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("32", 32), (" 32", 32), ("\t-1", -1), ("+4", 4), ("8k", 8), ("2.5", 2), ("1e5", 1), ("0x10", 0),
    ("2147483647", 2**31 - 1), ("-2147483648", -(2**31)),
])
def test_stoi_reads_the_leading_number(text, expected):
    assert EF.cpp_stoi(text) == expected


@pytest.mark.parametrize("text", ["", "all", "k8", "2147483648", "\u00a032", "- 1", "+"])
def test_stoi_refuses(text):
    with pytest.raises(ValueError):
        EF.cpp_stoi(text)


@pytest.mark.parametrize("text,expected", [
    ("3", 3.0), (" .5", 0.5), ("1e2", 100.0), ("2x", 2.0), ("0x1p3", 8.0), ("-1.5", -1.5), ("INF", math.inf),
    ("-infinity", -math.inf),
])
def test_stof_reads_the_leading_number(text, expected):
    assert EF.cpp_stof(text) == expected


def test_stof_reads_nan_and_refuses_what_has_no_number():
    assert math.isnan(EF.cpp_stof("nan(0x1)"))
    for text in ("", "x1", "1e39", "e5"):
        with pytest.raises(ValueError):
            EF.cpp_stof(text)


# --- vLLM ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,key,value,expected", [
    ("0.11.0", "gpu-memory-utilization", "0.9", 0.9),
    ("0.11.0", "gpu-memory-utilization", "1", 1.0),
    ("0.11.0", "gpu-memory-utilization", "9e-1", 0.9),
    ("0.11.0", "max-model-len", "16k", 16_000),
    ("0.11.0", "max-model-len", "32K", 32_768),
    ("0.11.0", "max-model-len", "25.6k", 25_600),
    ("0.8.5", "max-model-len", "8k", 8000),
    ("0.8.4", "max-model-len", "8192", 8192),
    ("0.14.0", "max-model-len", "auto", EF.AUTO_MAX_MODEL_LEN),
    ("0.14.0", "max-model-len", "-1", EF.AUTO_MAX_MODEL_LEN),
    ("0.11.0", "max-num-batched-tokens", "8k", 8000),
    ("0.10.2", "max-num-batched-tokens", "8192", 8192),
    ("0.11.0", "max-num-seqs", "1", 1),
    ("0.11.0", "max-num-seqs", "1_024", 1024),
    ("0.11.0", "tensor-parallel-size", "+2", 2),
    ("0.11.0", "pipeline-parallel-size", "2", 2),
    ("0.11.0", "block-size", "32", 32),
    ("0.11.0", "num-gpu-blocks-override", "100", 100),
    ("0.11.0", "num-scheduler-steps", "8", 8),
    ("0.11.0", "kv-cache-memory", "4GiB", 4 * 2**30),
])
def test_vllm_accepts(version, key, value, expected):
    assert read("vllm", version, key, value) == expected


@pytest.mark.parametrize("version,key,value,message", [
    ("0.11.0", "gpu-memory-utilization", "nan", "--gpu-memory-utilization 'nan': vLLM 0.11.0 accepts a fraction in "
                                                "(0, 1], not nan"),
    ("0.11.0", "gpu-memory-utilization", "inf", "--gpu-memory-utilization 'inf': vLLM 0.11.0 accepts a fraction in "
                                                "(0, 1], not inf"),
    ("0.11.0", "gpu-memory-utilization", "1.7", "--gpu-memory-utilization '1.7': vLLM 0.11.0 accepts a fraction in "
                                                "(0, 1], not 1.7"),
    ("0.11.0", "gpu-memory-utilization", "0", "--gpu-memory-utilization '0': vLLM 0.11.0 accepts a fraction in "
                                              "(0, 1], not 0"),
    ("0.11.0", "gpu-memory-utilization", "90%", "--gpu-memory-utilization '90%': not a number; vLLM 0.11.0 "
                                                "(argparse float) accepts a fraction in (0, 1]"),
    ("0.11.0", "max-num-seqs", "0", "--max-num-seqs '0': vLLM 0.11.0 accepts a whole number ≥ 1, not 0"),
    ("0.11.0", "tensor-parallel-size", "0", "--tensor-parallel-size '0': vLLM 0.11.0 accepts a whole number ≥ 1, "
                                            "not 0"),
    ("0.11.0", "tensor-parallel-size", "two", "--tensor-parallel-size 'two': not a whole number; vLLM 0.11.0 "
                                              "(argparse int) accepts a whole number ≥ 1"),
    ("0.11.0", "tensor-parallel-size", "2.0", "--tensor-parallel-size '2.0': not a whole number; vLLM 0.11.0 "
                                              "(argparse int) accepts a whole number ≥ 1"),
    ("0.11.0", "max-num-batched-tokens", "1e5", "--max-num-batched-tokens '1e5': not a whole number; vLLM 0.11.0 "
                                                "(human_readable_int: 16k = 16,000, 16K = 16,384) accepts a whole "
                                                "number ≥ 1"),
    ("0.10.2", "max-num-batched-tokens", "8k", "--max-num-batched-tokens '8k': not a whole number; vLLM 0.10.2 "
                                               "(argparse int) accepts a whole number ≥ 1"),
    ("0.8.4", "max-model-len", "16k", "--max-model-len '16k': not a whole number; vLLM 0.8.4 (argparse int) "
                                      "accepts a whole number ≥ 1"),
    ("0.11.0", "max-model-len", "1.5K", "--max-model-len '1.5K': decimals are not allowed with the binary suffix K "
                                        "(use k); vLLM 0.11.0 (human_readable_int: 16k = 16,000, 16K = 16,384) "
                                        "accepts a whole number ≥ 1"),
    ("0.11.0", "max-model-len", "auto", "--max-model-len 'auto': not a whole number; vLLM 0.11.0 "
                                        "(human_readable_int: 16k = 16,000, 16K = 16,384) accepts a whole number ≥ 1"),
    ("0.11.0", "max-model-len", "-1", "--max-model-len '-1': vLLM 0.11.0 accepts a whole number ≥ 1, not -1"),
    ("0.14.0", "max-model-len", "0", "--max-model-len '0': vLLM 0.14.0 accepts a whole number ≥ 1, 'auto' or -1, "
                                     "not 0"),
    # PR #29431 was merged in November 2025, but the 0.12.0 and 0.13.0 wheels still parse the flag as an int
    ("0.13.0", "max-model-len", "auto", "--max-model-len 'auto': not a whole number; vLLM 0.13.0 "
                                        "(human_readable_int: 16k = 16,000, 16K = 16,384) accepts a whole number ≥ 1"),
    ("0.13.0", "max-model-len", "-1", "--max-model-len '-1': vLLM 0.13.0 accepts a whole number ≥ 1, not -1"),
    ("0.11.0", "max-model-len", None, "--max-model-len without a value: vLLM 0.11.0 needs a value: a whole number "
                                      "≥ 1"),
    ("0.11.0", "kv-cache-memory", "0", "--kv-cache-memory '0': vLLM 0.11.0 accepts a size ≥ 1 byte, not 0"),
])
def test_vllm_refuses(version, key, value, message):
    with pytest.raises(EF.FlagValueError) as caught:
        read("vllm", version, key, value)
    assert str(caught.value) == message


def test_a_long_value_is_cut_in_the_message():
    with pytest.raises(EF.FlagValueError) as caught:
        read("vllm", "0.11.0", "max-num-seqs", "x" * 100)
    assert str(caught.value).startswith("--max-num-seqs '" + "x" * 40 + "…': not a whole number")


# --- SGLang ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key,value,expected", [
    ("mem-fraction-static", "0.85", 0.85), ("context-length", "32768", 32768), ("max-running-requests", "64", 64),
    ("max-total-tokens", "100000", 100_000), ("chunked-prefill-size", "-1", -1), ("chunked-prefill-size", "4096", 4096),
    ("cuda-graph-max-bs", "160", 160), ("tp-size", "4", 4), ("pp-size", "2", 2), ("page-size", "64", 64),
])
def test_sglang_accepts(key, value, expected):
    assert read("sglang", "0.5.5", key, value) == expected


@pytest.mark.parametrize("key,value,message", [
    ("mem-fraction-static", "nan", "--mem-fraction-static 'nan': SGLang 0.5.5 accepts a fraction in (0, 1], not nan"),
    ("mem-fraction-static", "1.2", "--mem-fraction-static '1.2': SGLang 0.5.5 accepts a fraction in (0, 1], not 1.2"),
    ("context-length", "32k", "--context-length '32k': not a whole number; SGLang 0.5.5 (argparse int) accepts a "
                              "whole number ≥ 1"),
    ("chunked-prefill-size", "0", "--chunked-prefill-size '0': SGLang 0.5.5 accepts a whole number ≥ 1, or -1 "
                                  "(chunked prefill off), not 0"),
    ("max-running-requests", "0", "--max-running-requests '0': SGLang 0.5.5 accepts a whole number ≥ 1, not 0"),
    ("tp-size", "0", "--tp-size '0': SGLang 0.5.5 accepts a whole number ≥ 1, not 0"),
    ("page-size", "0", "--page-size '0': SGLang 0.5.5 accepts a whole number ≥ 1, not 0"),
])
def test_sglang_refuses(key, value, message):
    with pytest.raises(EF.FlagValueError) as caught:
        read("sglang", "0.5.5", key, value)
    assert str(caught.value) == message


# --- llama.cpp -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,key,value,expected", [
    ("b6000", "ctx-size", "0", 0), ("b6000", "ctx-size", "8192", 8192), ("b6000", "ctx-size", "8k", 8),
    ("b6000", "gpu-layers", "0", 0), ("b6000", "gpu-layers", "99", 99), ("b6000", "gpu-layers", "-1", -1),
    ("b7000", "gpu-layers", "auto", EF.LLAMACPP_AUTO_LAYERS), ("b7000", "gpu-layers", "all", EF.LLAMACPP_ALL_LAYERS),
    ("b6000", "parallel", "4", 4), ("b7000", "parallel", "-1", -1),
    ("b6000", "batch-size", "2048", 2048), ("b6000", "ubatch-size", "512", 512),
    ("b6000", "tensor-split", "3,1", (3.0, 1.0)), ("b6000", "tensor-split", "1/1/2", (1.0, 1.0, 2.0)),
    ("b6000", "tensor-split", "3,,1,", (3.0, 1.0)), ("b6000", "tensor-split", "0.6, 0.4", (0.6, 0.4)),
])
def test_llamacpp_accepts(version, key, value, expected):
    assert read("llamacpp", version, key, value) == expected


@pytest.mark.parametrize("version,key,value,message", [
    ("b6000", "ctx-size", "-5", "--ctx-size '-5': llama.cpp b6000 accepts a whole number ≥ 0 (0 = the model's own "
                                "length), not -5"),
    ("b6000", "ctx-size", "big", "--ctx-size 'big': not a whole number (std::stoi finds no digits); llama.cpp b6000 "
                                 "(std::stoi) accepts a whole number ≥ 0 (0 = the model's own length)"),
    ("b6000", "gpu-layers", "all", "--gpu-layers 'all': not a whole number (std::stoi finds no digits); llama.cpp "
                                   "b6000 (std::stoi) accepts a number of layers ≥ 0 (-1 = the default)"),
    ("b6000", "gpu-layers", "-2", "--gpu-layers '-2': llama.cpp b6000 accepts a number of layers ≥ 0 (-1 = the "
                                  "default), not -2"),
    ("b6000", "parallel", "0", "--parallel '0': llama.cpp b6000 accepts a whole number ≥ 1, not 0"),
    ("b7000", "parallel", "0", "--parallel '0': llama.cpp b7000 accepts a whole number ≥ 1, or -1 (auto), not 0"),
    ("b6000", "parallel", "-1", "--parallel '-1': llama.cpp b6000 accepts a whole number ≥ 1, not -1"),
    ("b6000", "batch-size", "0", "--batch-size '0': llama.cpp b6000 accepts a whole number ≥ 1, not 0"),
    ("b6000", "ubatch-size", "99999999999", "--ubatch-size '99999999999': out of the int range (std::stoi); "
                                            "llama.cpp b6000 (std::stoi) accepts a whole number ≥ 1"),
    ("b6000", "tensor-split", "3,nan", "--tensor-split '3,nan': 'nan' is not a proportion ≥ 0; llama.cpp b6000 "
                                       "(std::stof per item) accepts proportions ≥ 0 separated by , or /"),
    ("b6000", "tensor-split", "3,-1", "--tensor-split '3,-1': '-1' is not a proportion ≥ 0; llama.cpp b6000 "
                                      "(std::stof per item) accepts proportions ≥ 0 separated by , or /"),
    ("b6000", "tensor-split", ",3", "--tensor-split ',3': not a number (std::stof finds none); llama.cpp b6000 "
                                    "(std::stof per item) accepts proportions ≥ 0 separated by , or /"),
    # each item is a float (3e38 < FLT_MAX), their float sum is infinite: no split point to place a layer by
    ("b6000", "tensor-split", "3e38,3e38", "--tensor-split '3e38,3e38': the proportions add up beyond float's "
                                           "range, so llama.cpp cannot place a layer; llama.cpp b6000 (std::stof "
                                           "per item) accepts proportions ≥ 0 separated by , or /"),
])
def test_llamacpp_refuses(version, key, value, message):
    with pytest.raises(EF.FlagValueError) as caught:
        read("llamacpp", version, key, value)
    assert str(caught.value) == message


def test_flags_gsg_does_not_read_are_not_judged():
    assert EF.check("max-log-len", "lots", "vllm", "0.11.0") is None
    assert EF.check("gpu-memory-utilization", "lots", "other", None) is None


# --- look-alike characters in a flag -----------------------------------------------------------------------

@pytest.mark.parametrize("item,message", [
    ("--max-model-len\u00a04096", "U+00A0 NO-BREAK SPACE at character 16 of '--max-model-len\\xa04096' looks like "
                                  "a space but is not one: the engine reads no such flag; type an ASCII space or '='"),
    ("\u2013max-model-len 4096", "U+2013 EN DASH at character 1 of '\\u2013max-model-len 4096' looks like a dash but "
                                 "is not one: the engine reads no such flag; type an ASCII -"),
    ("-\u2014max-model-len=4096", "U+2014 EM DASH at character 2 of '-\\u2014max-model-len=4096' looks like a dash "
                                  "but is not one: the engine reads no such flag; type an ASCII -"),
    ("--max\u200bmodel-len=4096", "U+200B ZERO WIDTH SPACE at character 6 of '--max\\u200bmodel-len=4096' looks like "
                                  "a space but is not one: the engine reads no such flag; type an ASCII space or '='"),
    ("--max-model-len\u20034096", "U+2003 EM SPACE at character 16 of '--max-model-len\\u20034096' looks like a "
                                  "space but is not one: the engine reads no such flag; type an ASCII space or '='"),
    ("\u2212\u2212tp 2", "U+2212 MINUS SIGN at character 1 of '\\u2212\\u2212tp 2' looks like a dash but is not one: "
                         "the engine reads no such flag; type an ASCII -"),
])
def test_lookalike_characters_in_a_flag_are_refused(item, message):
    with pytest.raises(A.ArgError) as caught:
        A.parse(["--enforce-eager", item], "vllm")
    assert (str(caught.value), caught.value.index) == (message, 1)


def test_unicode_in_a_value_is_the_engines_business():
    assert [(a.key, a.value) for a in A.parse(["--served-model-alias=Modèle", "--chat-template", "ü.jinja"],
                                              "vllm")] == [("served-model-alias", "Modèle"), ("chat-template",
                                                                                              "ü.jinja")]


@pytest.mark.parametrize("text,expected", [
    ("16k", 16_000), ("25.6k", 25_600), ("1M", 10**6), ("1G", 10**9), ("1T", 10**12), ("16Ki", 16_384),
    ("1Mi", 2**20), ("1Gi", 2**30), ("1Ti", 2**40), (" 32768 ", 32768),
])
def test_sglang_human_readable_int_accepts(text, expected):
    assert EF.sglang_human_readable_int(text) == expected


@pytest.mark.parametrize("text", ["16K", "1m", "1.5Ki", "1g", "2.0", "1e5", "16 k"])
def test_sglang_human_readable_int_refuses(text):
    with pytest.raises(ValueError):
        EF.sglang_human_readable_int(text)


def test_sglang_context_length_suffixes_by_release():
    assert read("sglang", "0.5.9", "context-length", "128Ki") == 131_072
    with pytest.raises(EF.FlagValueError) as caught:
        read("sglang", "0.5.9", "context-length", "128K")
    assert str(caught.value) == ("--context-length '128K': not a whole number; SGLang 0.5.9 (human_readable_int: "
                                 "16k = 16,000, 16Ki = 16,384) accepts a whole number ≥ 1")
    with pytest.raises(EF.FlagValueError):
        read("sglang", "0.5.5", "max-total-tokens", "100k")


def test_an_unreadable_version_gets_the_newest_parser():
    assert read("vllm", "nightly-custom", "max-model-len", "auto") == EF.AUTO_MAX_MODEL_LEN
    assert read("llamacpp", "master", "gpu-layers", "all") == EF.LLAMACPP_ALL_LAYERS


def test_to_float32_rounds_like_a_c_float_and_overflows_to_infinity():
    assert EF.to_float32(0.1) == 0.10000000149011612
    assert EF.to_float32(16_777_217.0) == 16_777_216.0  # 2**24 + 1 has no float32
    assert EF.to_float32(3.4e38) == 3.3999999521443642e38
    assert EF.to_float32(6e38) == math.inf and EF.to_float32(-6e38) == -math.inf


def test_tensor_split_just_inside_floats_range_is_accepted():
    assert read("llamacpp", "b6000", "tensor-split", "1e38,1e38") == (1e38, 1e38)  # sum 2e38 < FLT_MAX


def test_readings_are_kept_per_flag_object_and_refusals_are_not(monkeypatch):
    """The memo answers only for the flag object it read; a refusal is raised every time; past the cap nothing
    more is kept and readings stay right."""
    from gpustack_guard.core import engine_flags as EF

    monkeypatch.setattr(EF, "_READINGS", {})
    vllm = EF.numeric_flags("vllm", None)["max-model-len"]
    assert EF.read_value(vllm, "16K", "vllm") == 16384
    assert EF.read_value(vllm, "16K", "vllm") == 16384 and len(EF._READINGS) == 1
    other = EF.NumericFlag(vllm.key, lambda text: 7, vllm.range, vllm.engine_type)  # same name, other parser
    assert EF.read_value(other, "16K", "vllm") == 7
    for _ in range(2):
        with pytest.raises(EF.FlagValueError, match="needs a value"):
            EF.read_value(vllm, None, "vllm")
        with pytest.raises(EF.FlagValueError):
            EF.read_value(vllm, "-5", "vllm")
    monkeypatch.setattr(EF, "MAX_READINGS_KEPT", 2)
    assert [EF.read_value(vllm, str(n), "vllm") for n in (100, 200, 300)] == [100, 200, 300]
    assert len(EF._READINGS) == 2


@pytest.mark.parametrize("family,version,flag,several", [
    ("vllm", "0.6.3", "lora-modules", True), ("vllm", "0.34.0", "lora-modules", True),
    ("vllm", "0.6.3", "served-model-name", True),
    ("vllm", "0.8.5", "cuda-graph-sizes", False), ("vllm", "0.9.0", "cuda-graph-sizes", True),
    ("vllm", "0.11.0", "cuda-graph-sizes", True),
    ("vllm", "0.9.0", "prompt-adapters", True), ("vllm", "0.10.0", "prompt-adapters", False),
    ("vllm", "0.10.0", "api-key", False), ("vllm", "0.11.0", "api-key", True),
    ("vllm", "0.11.0", "allowed-origins", False),  # one JSON list (cli_args.py removes its nargs)
    ("vllm", "0.11.0", "middleware", False),  # action='append': one value per flag
    ("vllm", "0.11.0", "cudagraph-capture-sizes", False), ("vllm", "0.34.0", "cudagraph-capture-sizes", True),
    ("sglang", "0.5.5", "cuda-graph-bs", True), ("sglang", "0.5.20", "cuda-graph-bs", False),
    ("sglang", "0.5.5", "cuda-graph-bs-decode", False), ("sglang", "0.5.23", "cuda-graph-bs-decode", True),
    ("sglang", "0.5.23", "lora-paths", True), ("sglang", "0.5.5", "served-model-name", False),
    ("llamacpp", "b8000", "lora", False),
])
def test_multi_value_flags_follow_the_release(family, version, flag, several):
    assert (flag in EF.multi_value_flags(family, version)) is several
    assert flag in EF.multi_value_flags(family, None) or not several  # an unknown release: every release's list


def test_every_multi_value_row_names_its_source_and_ordered_bounds():
    for rows in EF.MULTI_VALUE_FLAGS.values():
        for row in rows:
            assert row.source and row.flags
            assert row.until is None or EF._version(row.since) < EF._version(row.until)
