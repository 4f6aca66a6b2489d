"""Arguments the engine's own parser refuses at start-up, by release: a switch given a value (`--enforce-eager=false`
read as off, `--enforce-eager=` as on), an on|off flag given none (llama.cpp's bare -fa on recent builds), a choice
outside the release's list (`--kv-cache-dtype=FP8`, `--dtype=`, `--quantization=`), each one GSG016 line; and
`--config FILE`, whose arguments gsg cannot see (GSG055). Each case with its neighbours that still pass, and a
release gsg has not read, which says nothing new."""

from __future__ import annotations

import re

import pytest
from support import FLEET

from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.llamacpp import fit_active, flash_attention_on

VLLM = """name: m
source: huggingface
huggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct
replicas: 1
gpu_selector:
  gpu_ids: [gpu-c:cuda:0, gpu-c:cuda:1]
backend: {backend}
backend_version: {version}
backend_parameters: [{sizing}, {params}]
"""
VLLM_SIZING = "--max-num-seqs=16, --max-model-len=4096"
SGLANG_SIZING = "--context-length=4096, --max-running-requests=16"
LLAMACPP = ("name: t\nsource: huggingface\nhuggingface_repo_id: bartowski/Llama-3.3-70B-Instruct-GGUF\n"
            "huggingface_filename: Llama-3.3-70B-Instruct-Q4_K_M.gguf\ngpu_selector:\n  gpu_ids: [gpu-d:cuda:0]\n"
            "backend: llama.cpp\nbackend_version: {version}\nguard:\n  model: {{catalog: meta-llama/Llama-3.3-70B-Instruct}}\n"
            "backend_parameters: [-c, '8192', {params}]\n")


def _lines(gsg, tmp_path, text: str, *options: str) -> tuple[int, list[str]]:
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), *options, cwd=tmp_path)
    assert "Traceback" not in result.out + result.err
    return result.code, [line for line in result.out.splitlines() if re.match(r"^spec\.yaml:\d+:\d+: ", line)]


def vllm(gsg, tmp_path, params: str, version: str = "0.11.0", backend: str = "vLLM"):
    sizing = VLLM_SIZING if backend == "vLLM" else SGLANG_SIZING
    return _lines(gsg, tmp_path, VLLM.format(backend=backend, version=version, sizing=sizing, params=params))


def llamacpp(gsg, tmp_path, params: str, version: str = "b10507"):
    return _lines(gsg, tmp_path, LLAMACPP.format(version=version, params=params))


# --- switches given a value ---------------------------------------------------------------------------------

SWITCH = ("spec.yaml:9:{col}: error GSG016 argument-value [m]: --{key} {value}: {engine} reads --{key} as a switch "
          "that takes no value and exits at start-up on one (argparse: ignored explicit argument); write --{key} "
          "alone to turn it on, or leave it out")


@pytest.mark.parametrize("item,value", [("--enforce-eager=false", "'false'"), ("--enforce-eager=", "''"),
                                        ("--enforce-eager=true", "'true'"), ("'--enforce-eager false'", "'false'")])
def test_a_vllm_switch_given_a_value_is_refused(gsg, tmp_path, item, value):
    """gsg read `=false` as off and `=` as on; vLLM 0.11.0's BooleanOptionalAction refuses both."""
    assert vllm(gsg, tmp_path, item) == (1, [SWITCH.format(col=63, key="enforce-eager", value=value,
                                                           engine="vLLM 0.11.0")])


@pytest.mark.parametrize("version", ["0.6.4", "0.8.5", "0.11.0", "0.30.0", "0.16.0"])
def test_a_bare_switch_passes_in_every_release(gsg, tmp_path, version):
    assert vllm(gsg, tmp_path, "--enforce-eager, --enable-prefix-caching", version) == (0, [])


def test_a_release_not_read_says_nothing_new(gsg, tmp_path):
    assert vllm(gsg, tmp_path, "--enforce-eager=false, --kv-cache-dtype=FP8", "0.35.0") == (0, [])


def test_vllm_before_0_8_5_takes_true_or_false_for_chunked_prefill(gsg, tmp_path):
    """--enable-chunked-prefill was StoreBoolean (nargs='?', true or false in any case) up to 0.8.4."""
    assert vllm(gsg, tmp_path, "--enable-chunked-prefill=False", "0.8.4") == (0, [])
    assert vllm(gsg, tmp_path, "--enable-chunked-prefill", "0.8.4") == (0, [])
    assert vllm(gsg, tmp_path, "--enable-chunked-prefill=off", "0.8.4") == (1, [
        "spec.yaml:9:63: error GSG016 argument-value [m]: --enable-chunked-prefill 'off': vLLM 0.8.4 takes true or "
        "false (any case) or no value here and exits at start-up on anything else"])
    assert vllm(gsg, tmp_path, "--enable-chunked-prefill=false", "0.8.5") == (1, [SWITCH.format(
        col=63, key="enable-chunked-prefill", value="'false'", engine="vLLM 0.8.5")])


def test_an_sglang_switch_given_a_value_is_refused(gsg, tmp_path):
    assert vllm(gsg, tmp_path, "--disable-cuda-graph", "0.5.5", "SGLang") == (0, [])
    assert vllm(gsg, tmp_path, "--disable-cuda-graph=false", "0.5.5", "SGLang") == (1, [SWITCH.format(
        col=72, key="disable-cuda-graph", value="'false'", engine="SGLang 0.5.5")])


# --- choices ------------------------------------------------------------------------------------------------

KV_011 = "auto, fp8, fp8_e5m2, fp8_e4m3, fp8_inc, bfloat16"


@pytest.mark.parametrize("item,value,flag,allowed", [
    ("--kv-cache-dtype=FP8", "'FP8'", "kv-cache-dtype", KV_011),
    ("--kv-cache-dtype=", "''", "kv-cache-dtype", KV_011),
    ("--kv-cache-dtype=fp8_ds_mla", "'fp8_ds_mla'", "kv-cache-dtype", KV_011),  # from 0.11.1 on
    ("--dtype=", "''", "dtype", "auto, half, float16, bfloat16, float, float32"),
    ("--dtype=BFloat16", "'BFloat16'", "dtype", "auto, half, float16, bfloat16, float, float32"),
])
def test_a_value_outside_the_releases_choices_is_one_line_naming_them(gsg, tmp_path, item, value, flag, allowed):
    assert vllm(gsg, tmp_path, item) == (1, [
        f"spec.yaml:9:63: error GSG016 argument-value [m]: --{flag} {value}: vLLM 0.11.0 accepts {allowed} "
        "(argparse choices, case-sensitive) and exits at start-up on anything else"])


@pytest.mark.parametrize("item,version", [("--kv-cache-dtype=fp8", "0.11.0"), ("--kv-cache-dtype=fp8_e4m3", "0.6.4"),
                                          ("--kv-cache-dtype=bfloat16", "0.11.0"), ("--dtype=half", "0.11.0"),
                                          ("--kv-cache-dtype=fp8_inc", "0.10.0"), ("-q, fp8", "0.11.0"),
                                          ("--quantization=", "0.8.5"), ("--quantization=None", "0.6.4")])
def test_the_valid_spellings_still_pass(gsg, tmp_path, item, version):
    """Up to 0.8.5 --quantization's type turns '' and 'None' into None, which its choices hold: the flag unset."""
    assert vllm(gsg, tmp_path, item, version) == (0, [])


def test_quantization_empty_or_upper_case_is_refused_from_0_9(gsg, tmp_path):
    code, lines = vllm(gsg, tmp_path, "--quantization=")
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith("spec.yaml:9:63: error GSG016 argument-value [m]: --quantization '': vLLM 0.11.0 "
                               "accepts awq, deepspeedfp, tpu_int8, fp8, ")
    assert vllm(gsg, tmp_path, "-q, FP8")[1][0].startswith(
        "spec.yaml:9:63: error GSG016 argument-value [m]: --quantization 'FP8': vLLM 0.11.0 accepts awq, ")


def test_sglang_kv_choices_by_release(gsg, tmp_path):
    """SGLang names no plain fp8; bf16 from 0.5.4."""
    assert vllm(gsg, tmp_path, "--kv-cache-dtype=fp8_e5m2", "0.5.5", "SGLang") == (0, [])
    assert vllm(gsg, tmp_path, "--kv-cache-dtype=fp8", "0.5.5", "SGLang") == (1, [
        "spec.yaml:9:72: error GSG016 argument-value [m]: --kv-cache-dtype 'fp8': SGLang 0.5.5 accepts auto, "
        "fp8_e5m2, fp8_e4m3, bf16, bfloat16, fp4_e2m1 (argparse choices, case-sensitive) and exits at start-up on "
        "anything else"])
    assert vllm(gsg, tmp_path, "--kv-cache-dtype=bf16", "0.5.4", "SGLang") == (0, [])
    assert vllm(gsg, tmp_path, "--kv-cache-dtype=bf16", "0.5.3", "SGLang")[1][0].endswith(
        "SGLang 0.5.3 accepts auto, fp8_e5m2, fp8_e4m3 (argparse choices, case-sensitive) and exits at start-up on "
        "anything else")


def test_sglang_quantization_choices_by_release(gsg, tmp_path):
    """SGLang's --quantization list, one line naming it; marlin left the list at 0.5.20."""
    assert vllm(gsg, tmp_path, "--quantization=marlin", "0.5.19", "SGLang") == (0, [])
    assert vllm(gsg, tmp_path, "--quantization=marlin", "0.5.20", "SGLang") == (1, [
        "spec.yaml:9:72: error GSG016 argument-value [m]: --quantization 'marlin': SGLang 0.5.20 accepts awq, fp8, "
        "mxfp8, gptq, gptq_marlin, awq_marlin, bitsandbytes, gguf, modelopt, modelopt_fp8, modelopt_fp4, nvfp4_online, "
        "modelopt_mixed, petit_nvfp4, w8a8_int8, w8a8_fp8, moe_wna16, w4afp8, mxfp4, auto-round, auto-round-int8, "
        "compressed-tensors, modelslim, mxfp_w4a8, quark, quark_int4fp8_moe, quark_mxfp4, mlx_q4, mlx_q8, unquant, "
        "humming (argparse choices, case-sensitive) and exits at start-up on anything else"])


def test_vllm_quantization_a_plugin_may_register_is_a_warning_from_013(gsg, tmp_path):
    """vLLM 0.12's argparse refuses a name outside its list; from 0.13 the parser takes any text and ModelConfig
    exits on a name no plugin registered: a misspelling is still said, as a warning, and FP8 passes (lowercased)."""
    assert vllm(gsg, tmp_path, "--quantization=FP8", "0.19.0")[0] == 0
    code, lines = vllm(gsg, tmp_path, "--quantization=awqq", "0.19.0")
    assert code == 0 and len(lines) == 1
    assert lines[0].startswith("spec.yaml:9:63: warning GSG016 argument-value [m]: --quantization 'awqq': not a method "
                               "built into vLLM 0.19.0 (awq, fp8, fbgemm_fp8, ")
    code, lines = vllm(gsg, tmp_path, "--quantization=FP8", "0.12.0")
    assert code == 1 and lines[0].startswith("spec.yaml:9:63: error GSG016 argument-value [m]: --quantization 'FP8': "
                                             "vLLM 0.12.0 accepts awq, ")


def test_every_choice_row_is_read_and_bounded():
    """A row names what it was read from, and ends: a release after the newest read matches none."""
    for family, rows in P.CHOICE_FLAGS.items():
        for row in rows:
            assert row.source and row.choices and P.known_version(row.since) < P.known_version(row.until), row
    for family, rows in P.SWITCH_FLAGS.items():
        for row in rows:
            assert row.source and P.known_version(row.since) < P.known_version(row.until), row
    assert EF.check("kv-cache-dtype", "FP8", "vllm", "0.35.0") is None
    assert EF.check("kv-cache-dtype", "FP8", "vllm", "custom-build") is None  # an unreadable tag: nothing new


# --- llama.cpp: -fa by build, the switches, --fit -----------------------------------------------------------

def test_llamacpp_flash_attention_by_build(gsg, tmp_path):
    """-fa takes on|off|auto from b6325 (a bare one takes the next argument as its value) and is a switch before."""
    assert llamacpp(gsg, tmp_path, "-fa, 'on'") == (0, [])
    assert llamacpp(gsg, tmp_path, "-fa, auto") == (0, [])
    assert llamacpp(gsg, tmp_path, "-fa", "b6000") == (0, [])
    assert llamacpp(gsg, tmp_path, "-fa") == (1, [
        "spec.yaml:11:34: error GSG016 argument-value [t]: --flash-attn without a value: llama.cpp b10507 reads a "
        "value after --flash-attn (on, off or auto): alone, it takes the next argument as that value, or exits at "
        "start-up with none left; write --flash-attn on or --flash-attn off"])
    assert llamacpp(gsg, tmp_path, "-fa, 'ON'") == (1, [
        "spec.yaml:11:34: error GSG016 argument-value [t]: --flash-attn 'ON': llama.cpp b10507 accepts on, off or "
        "auto"])
    assert llamacpp(gsg, tmp_path, "-fa, 'on'", "b6000") == (1, [
        "spec.yaml:11:34: error GSG016 argument-value [t]: --flash-attn 'on': llama.cpp b6000 reads --flash-attn as a "
        "switch that takes no value and exits at start-up on one (common/arg.cpp reads the value as an argument of "
        "its own: invalid argument); write --flash-attn alone to turn it on, or leave it out"])


def test_llamacpp_switches_and_fit(gsg, tmp_path):
    assert llamacpp(gsg, tmp_path, "-nkvo") == (0, [])
    assert llamacpp(gsg, tmp_path, "-nkvo, 'false'")[1] == [
        "spec.yaml:11:34: error GSG016 argument-value [t]: --no-kv-offload 'false': llama.cpp b10507 reads "
        "--no-kv-offload as a switch that takes no value and exits at start-up on one (common/arg.cpp reads the value "
        "as an argument of its own: invalid argument); write --no-kv-offload alone to turn it on, or leave it out"]
    assert llamacpp(gsg, tmp_path, "--fit, 'off'") == (0, [])
    assert llamacpp(gsg, tmp_path, "--fit")[1] == [
        "spec.yaml:11:34: error GSG016 argument-value [t]: --fit without a value: llama.cpp b10507 reads a value "
        "after --fit (on or off): alone, it takes the next argument as that value, or exits at start-up with none "
        "left; write --fit on or --fit off"]


def test_llamacpp_words_are_case_sensitive():
    """common/arg.cpp's is_truthy / is_falsey / is_autoy compare exactly: `ON` and `` are no words of theirs."""
    assert flash_attention_on("on", "b7000") == (True, False)
    for word in ("ON", "Off", "AUTO", ""):
        with pytest.raises(ValueError):
            flash_attention_on(word, "b7000")
    assert fit_active("off", "b10507") is False
    with pytest.raises(ValueError):
        fit_active("OFF", "b10507")


# --- --config FILE (GSG055) ---------------------------------------------------------------------------------

def test_a_config_file_is_a_warning_that_the_estimate_leaves_it_out(gsg, tmp_path):
    for items in ("--config, /models/serve.yaml", "'--config /models/serve.yaml'"):
        assert vllm(gsg, tmp_path, items) == (0, [
            "spec.yaml:9:63: warning GSG055 engine-config-file [m]: --config '/models/serve.yaml': vLLM 0.11.0 reads "
            "more arguments from this file on the worker at start-up; gsg cannot read it, so the estimate and every "
            "check leave out the arguments it sets"]), items


def test_config_with_equals_is_a_file_the_release_never_reads(gsg, tmp_path):
    assert vllm(gsg, tmp_path, "--config=/models/serve.yaml") == (0, [
        "spec.yaml:9:63: warning GSG055 engine-config-file [m]: --config='/models/serve.yaml': vLLM 0.11.0 reads a "
        "config file only after --config given as an argument of its own; --config=FILE is a plain option it "
        "stores, and the file's arguments are never applied"])
    assert vllm(gsg, tmp_path, "--config=/c.yaml", "0.5.5", "SGLang")[1][0].startswith(
        "spec.yaml:9:72: warning GSG055 engine-config-file [m]: --config='/c.yaml': SGLang 0.5.5 reads a config file "
        "only after --config")
    # a release gsg has not read: only what holds for every one, the file unseen
    assert vllm(gsg, tmp_path, "--config=/c.yaml", "0.16.0")[1] == [
        "spec.yaml:9:63: warning GSG055 engine-config-file [m]: --config '/c.yaml': vLLM 0.16.0 reads more arguments "
        "from this file on the worker at start-up; gsg cannot read it, so the estimate and every check leave out the "
        "arguments it sets"]


def test_no_config_no_warning(gsg, tmp_path):
    assert vllm(gsg, tmp_path, "--tokenizer=/models/tok") == (0, [])
    assert vllm(gsg, tmp_path, "--hf-config-path=/models/cfg") == (0, [])


def test_verify_spells_a_logged_flash_attention_as_the_build_reads_it():
    """A log's `flash_attn = enabled|disabled` goes back as -fa on|off from b6325, and as the bare switch (on) or
    nothing (off) before it: `--flash-attn=off` on an old build is an argument the engine refuses."""
    from gpustack_guard.core.verify.compare import backend_args
    from gpustack_guard.core.verify.logparse import parse_log

    for printed, old, new in (("enabled", ["--flash-attn"], ["--flash-attn=on"]),
                              ("disabled", [], ["--flash-attn=off"])):
        log, _ = parse_log([f"llama_context: flash_attn    = {printed}\n"], "llama.cpp")
        assert [f for f in backend_args(log, "b3000") if f.startswith("--flash-attn")] == old
        assert [f for f in backend_args(log, "b6325") if f.startswith("--flash-attn")] == new
        assert [f for f in backend_args(log) if f.startswith("--flash-attn")] == new  # the newest build modelled
