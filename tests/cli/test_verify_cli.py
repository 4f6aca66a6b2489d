"""gsg verify --log: side by side on public logs, every format, secrets, and hostile logs (one line, exit 1)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
GiB = 2**30


def log_path(name: str) -> str:
    return str(LOGS / name)


def test_v0_log_side_by_side_passes_within_tolerance(gsg):
    result = gsg("verify", "--log", log_path("vllm/v0.6.4-llama31-8b-rtx3090-20k.log"),
                 "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.6.4")
    assert result.code == 0, result.out + result.err
    lines = result.out.splitlines()
    assert lines[1] == "engine: started"
    assert "  KV cache                       3.81 GiB        3.81 GiB  +0.00 GiB (+0.1 %)" in lines
    assert "  KV capacity                      31,232          31,248  +16 (+0.1 %)" in lines
    assert "  max model length                 20,000          20,000  +0 (+0.0 %)" in lines
    assert lines[-3:] == ["verdict: engine fits, estimate fits (kv-oversubscribed)",
                          "note: vLLM keeps 32.0 MiB of rotary cos/sin cache beside the weights per rank (1 rope table; "
                          "profiles.VLLM_ROPE_CACHE)", "result: pass"]


def test_a_release_before_the_weights_line_passes_on_its_blocks_alone(gsg):
    # 0.3.3 printed no weights line (llm_engine.py@v0.3.3): given that release, the log lacks nothing; at 0.4.0,
    # which prints it, the same log names the weights line as missing
    name = log_path("vllm/v0.3.3-mistral-7b-v01-mig-40gb-ray.log")
    given = ("-m", "mistralai/Mistral-7B-Instruct-v0.3", "--gpu-name", "NVIDIA A100-SXM4-40GB", "--gpu-memory",
             "40192MiB", "-o", "json")
    doc = json.loads(gsg("verify", "--log", name, *given, "--backend-version", "0.3.3").out)
    assert (doc["missing"], doc["result"], doc["observed_verdict"]) == ([], "pass", "fits")
    assert (doc["observed"]["kv_capacity_tokens"], doc["estimated"]["kv_capacity_tokens"]) == (144_160, 146_080)
    doc = json.loads(gsg("verify", "--log", name, *given, "--backend-version", "0.4.0").out)
    assert doc["missing"] == ["'Model loading took' (V1) or 'Loading model weights took' (V0)"]
    assert doc["result"] == "fail"


def test_json_names_terms_as_estimate_does(gsg):
    result = gsg("verify", "--log", log_path("vllm/v0.6.4-llama31-8b-rtx3090-20k.log"),
                 "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.6.4", "-o", "json")
    doc = json.loads(result.out)
    assert (doc["engine"], doc["engine_version"], doc["started"], doc["failure"]) == ("vllm", None, True, None)
    for side in ("observed", "estimated"):
        assert {"kv_capacity_tokens", "weights_bytes_per_gpu", "kv_cache_bytes_per_gpu"} <= set(doc[side])
    assert doc["observed"]["kv_capacity_tokens"] == 31_232 and doc["estimated"]["kv_capacity_tokens"] == 31_248
    kv = next(d for d in doc["deltas"] if d["term"] == "kv_capacity_tokens")
    assert kv == {"term": "kv_capacity_tokens", "observed": 31_232, "estimated": 31_248, "difference": 16,
                  "percent": 0.1}
    assert doc["backend_args"] == ["--gpu-memory-utilization=0.9", "--max-model-len=20000"]
    assert (doc["result"], doc["reasons"], doc["format_version"]) == ("pass", [], "1.0")


def test_a_start_up_failure_the_estimate_also_predicts_passes(gsg):
    result = gsg("verify", "--log", log_path("vllm/v0.6.4-llama31-8b-rtx3090-29k-refused.log"),
                 "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.6.4", "-o", "json")
    doc = json.loads(result.out)
    assert result.code == 0
    assert (doc["started"], doc["failure_kind"], doc["failure_line"]) == (False, "kv-below-max-model-len", 7)
    assert doc["observed_verdict"] == doc["engine_verdict"] == "kv-below-max-model-len"


def test_kv_capacity_beyond_the_tolerance_fails_and_a_wider_tolerance_passes(gsg):
    args = ("verify", "--log", log_path("vllm/v1-0.8.5-llama31-8b-l40s.log"), "-m", "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu-memory", "44.39GiB", "--gpu-name", "NVIDIA L40S", "--backend-version", "0.8.5")
    result = gsg(*args)
    assert result.code == 1
    assert result.out.splitlines()[-1] == ("result: fail: KV capacity is off by +18.5 % (187,984 estimated, 158,656 "
                                           "logged; tolerance 5 %)")
    assert gsg(*args, "--tolerance", "18.7").code == 0


def test_verdicts_that_differ_fail(gsg):
    # the engine started at 20,000 tokens; at 0.5 of the GPU the estimate cannot hold 20,000 tokens
    result = gsg("verify", "--log", log_path("vllm/v0.6.4-llama31-8b-rtx3090-20k.log"),
                 "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.6.4", "--gpu-memory", "18GiB")
    assert result.code == 1
    assert "the engine started, the estimate says" in result.out.splitlines()[-1]


def test_multi_rank_log_names_the_binding_rank(gsg):
    result = gsg("verify", "--log", log_path("sglang/tp8-ranks.log"), "-m", "Qwen/Qwen2.5-7B",
                 "--gpu-memory", "141GiB")
    assert result.code == 1
    assert result.out.splitlines()[2] == "binding rank: TP5 of 5 (TP7, TP6, TP0, TP5, TP1)"
    assert "the log lacks 'Load weight end'" in result.out


def test_model_not_known_offline_still_shows_the_observed_terms(gsg, tmp_path):
    path = tmp_path / "private.log"
    path.write_text("INFO [utils.py:328] non-default args: {'model': '/srv/models/acme/private-7b'}\n"
                    "INFO [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.6 seconds\n"
                    "INFO [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens\n")
    result = gsg("verify", "--log", str(path), "--gpu-memory", "80GiB")
    assert result.code == 1
    assert ["KV", "capacity", "158,656", "-"] in [line.split() for line in result.out.splitlines()]
    last = result.out.splitlines()[-1]
    assert last.startswith("result: fail: no estimate: model '/srv/models/acme/private-7b' cannot be resolved "
                           "offline")
    assert "give --model NAME or a config.json path" in last


def test_gpu_memory_not_in_the_log_is_asked_for(gsg):
    result = gsg("verify", "--log", log_path("vllm/v1-0.8.5-llama31-8b-l40s.log"), "-m", "Qwen/Qwen2.5-7B")
    assert result.code == 1
    assert "no estimate: the log does not print the GPU's memory: give --gpu-memory (e.g. 80GiB)" in result.out


def test_markdown_table(gsg):
    result = gsg("verify", "--log", log_path("vllm/v0.6.4-llama31-8b-rtx3090-20k.log"),
                 "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.6.4", "-o", "markdown")
    assert "| KV capacity | 31,232 | 31,248 | +16 (+0.1 %) |" in result.out
    assert result.out.splitlines()[-1] == "Result: **pass**"


# public logs that name a catalog model and print the GPU's memory, so they verify with no argument at all
SELF_CONTAINED = {"vllm/v1-0.27.1-qwen25-05b-rtx4090-wsl2-gmu085.log",
                  "vllm/v0.10.2-qwen3-next-80b-tp2-h200.log",  # its model path ends in the catalog's name
                  "vllm/v0.8.2-llama32-3b-t4-fp16-2k-vllm-stdout.log",  # unsloth/Llama-3.2-3B-Instruct: the same
                  "vllm/v0.6.6.post1-qwen25-05b-t4-colab-llm-class.log",  # a catalog model; its total GPU memory printed
                  # Qwen/Qwen3-8B; the 0.26 advice line gives the weights and the total
                  "vllm/v1-0.26.0-qwen3-8b-ray-serve-80gb-131k.log"}


@pytest.mark.parametrize("name", sorted(str(p.relative_to(LOGS)) for p in LOGS.glob("*/*.log")))
def test_every_public_log_shows_its_observed_terms(gsg, name):
    result = gsg("verify", "--log", log_path(name), "--backend", Path(name).parent.name, "-o", "json")
    doc = json.loads(result.out)
    log, _ = parse_log((LOGS / name).read_text(encoding="utf-8").splitlines(True), Path(name).parent.name)
    assert doc["observed"] == log.terms() and doc["failure_kind"] == log.failure_kind
    # the others lack the model gsg resolves offline or the GPU's memory
    assert result.code == (0 if name in SELF_CONTAINED else 1), doc["reasons"]


SECRET_LOG = """INFO 09-03 16:28:10 [api_server.py:1882] vLLM API server version 0.10.1
INFO 09-03 16:28:10 [utils.py:328] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'api_key': ['sk-abcdefgh12345678'], 'hf_token': 'hf_abcdefghijklmnopqrstuvwxyz'}
INFO 09-03 16:28:11 proxy at http://admin:s3cretpass@proxy.local:3128 Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload
ValueError: Free memory on device (1.53/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB). token=hf_abcdefghijklmnopqrstuvwxyz
"""


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_secrets_in_a_log_never_reach_the_output(gsg, tmp_path, fmt):
    path = tmp_path / "secret.log"
    path.write_text(SECRET_LOG)
    result = gsg("verify", "--log", str(path), "-o", fmt)
    shown = result.out + result.err
    for secret in ("sk-abcdefgh12345678", "hf_abcdefghijklmnopqrstuvwxyz", "s3cretpass", "eyJhbGciOiJIUzI1NiJ9"):
        assert secret not in shown
    assert "Free memory on device (1.53/22.05 GiB)" in shown
    assert "token=********" in shown or fmt == "json" and '"failure_kind": "free-memory-below-requested"' in shown


@pytest.mark.parametrize("args,message", [
    (("--backend", "tgi"), "gsg: error: --backend must be vllm, sglang or llama.cpp, not 'tgi'"),
    (("--tolerance", "-1"), "gsg: error: --tolerance is a percentage from 0 to 1000, not -1"),
    (("-o", "html"), "gsg: error: --output must be text, json or markdown, not 'html'"),
])
def test_bad_options_are_one_line(gsg, args, message):
    result = gsg("verify", "--log", log_path("vllm/v1-0.7.4-kv-tokens.log"), *args)
    assert (result.code, result.err.strip()) == (1, message)


def one_line_error(result) -> str:
    assert result.code == 1 and result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


def test_hostile_logs_end_in_one_line(gsg, tmp_path, monkeypatch):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert one_line_error(gsg("verify", "--log", str(empty))) == f"gsg: error: {empty}: the log is empty"
    binary = tmp_path / "core.bin"
    binary.write_bytes(b"ELF" + b"\x00\x01" * 1000)
    assert one_line_error(gsg("verify", "--log", str(binary))) == \
        f"gsg: error: {binary}: not a text log (binary data at byte 3)"
    assert one_line_error(gsg("verify", "--log", str(tmp_path / "nope.log"))) == \
        f"gsg: error: {tmp_path / 'nope.log'}: file not found"
    assert one_line_error(gsg("verify", "--log", str(tmp_path))) == \
        f"gsg: error: {tmp_path}: not a regular file (a folder)"
    monkeypatch.setenv("GSG_MAX_LOG_BYTES", str(2**20))
    huge = tmp_path / "huge.log"
    huge.write_bytes(b"Model loading took nothing\n" * 200_000)  # 5.4 MB of near misses
    assert one_line_error(gsg("verify", "--log", str(huge))) == (
        f"gsg: error: {huge}: no start-up line of vLLM, SGLang or llama.cpp in its 38,837 line(s) (read the first "
        f"1 MiB only (GSG_MAX_LOG_BYTES))")
    monkeypatch.setenv("GSG_MAX_LOG_LINE_BYTES", "4096")
    endless = tmp_path / "endless.log"
    endless.write_bytes(b"Available KV cache memory: 1" + b"0" * 3_000_000)  # one line, no newline
    assert one_line_error(gsg("verify", "--log", str(endless))) == (
        f"gsg: error: {endless}: no start-up line of vLLM, SGLang or llama.cpp in its 1 line(s) (read the first "
        f"1 MiB only (GSG_MAX_LOG_BYTES); 1 line(s) longer than 4,096 bytes were cut (GSG_MAX_LOG_LINE_BYTES))")
    bad = gsg("verify", "--log", str(endless), "--backend", "vllm")
    monkeypatch.setenv("GSG_MAX_LOG_BYTES", "lots")
    assert one_line_error(gsg("verify", "--log", str(empty))) == \
        "gsg: error: GSG_MAX_LOG_BYTES must be a positive whole number, not 'lots'"
    assert bad.code == 1


def test_a_log_that_stops_mid_line_names_what_is_missing(gsg):
    result = gsg("verify", "--log", log_path("vllm/v0.6.5dev-llama3-8b-h100-tp2-cut.log"), "-m",
                 "meta-llama/Meta-Llama-3-8B", "--backend-version", "0.6.5")
    assert result.code == 1
    assert result.out.splitlines()[1] == "engine: no start-up outcome in the log"
    assert result.out.splitlines()[-1] == "result: fail: the log lacks 'GPU KV cache size' (V1) or '# GPU blocks' (V0)"


def test_a_long_log_is_read_up_to_its_caps(gsg, tmp_path, monkeypatch):
    start = (LOGS / "vllm/v0.6.4-llama31-8b-rtx3090-20k.log").read_text()
    path = tmp_path / "long.log"
    path.write_text(start + "INFO:     127.0.0.1:1 - \"POST /v1/completions HTTP/1.1\" 200 OK\n" * 50_000)
    monkeypatch.setenv("GSG_MAX_LOG_LINES", "1000")
    began = time.monotonic()
    result = gsg("verify", "--log", str(path), "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version",
                 "0.6.4")
    assert time.monotonic() - began < 2
    assert result.code == 0
    assert "note: read the first 1,000 lines only (GSG_MAX_LOG_LINES)" in result.out


def test_a_pre_quantized_checkpoint_and_the_command_line_the_log_does_not_print(gsg):
    args = ("verify", "--log", log_path("vllm/v1-qwen3-235b-fp8-h100-tp4.log"), "-m", "Qwen/Qwen3-235B-A22B",
            "--gpu-memory", "81559MiB", "--gpu-name", "NVIDIA H100 80GB HBM3", "--backend-version", "0.10.0",
            "-o", "json")
    doc = json.loads(gsg(*args, "--quantization", "fp8", "--", "--tensor-parallel-size=4").out)
    assert doc["backend_args"] == ["--tensor-parallel-size=4"]
    assert (doc["observed_verdict"], doc["engine_verdict"]) == ("fits", "fits")
    # the TP device group's NCCL communicator is non-torch from 0.6.5 (profiles.VLLM_DEVICE_GROUP_NCCL): was 204,992
    assert doc["estimated"]["kv_capacity_tokens"] == 188_576 and doc["observed"]["kv_capacity_tokens"] == 178_880
    assert round(doc["estimated"]["weights_bytes_per_gpu"] / GiB, 2) == 55.05
    unquantized = json.loads(gsg(*args, "--", "--tensor-parallel-size=4").out)  # bf16 weights do not fit
    assert unquantized["engine_verdict"] != "fits" and unquantized["result"] == "fail"
    assert unquantized["reasons"][0] == f"the engine started, the estimate says {unquantized['engine_verdict']}"


def test_an_argument_the_log_prints_wins_over_the_one_given(gsg):
    result = gsg("verify", "--log", log_path("vllm/v0.6.4-llama31-8b-rtx3090-20k.log"),
                 "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.6.4", "-o", "json",
                 "--", "--max-model-len", "4096", "--dtype=half")
    doc = json.loads(result.out)
    assert doc["backend_args"] == ["--gpu-memory-utilization=0.9", "--max-model-len=20000", "--dtype=half"]
    assert (result.code, doc["estimated"]["max_model_len"]) == (0, 20_000)


@pytest.mark.parametrize("given,kept", [
    (("--max-model-len=1",), []),
    (("--max-model-len", "1"), []),
    (("--max_model_len=1",), []),  # vLLM's underscore spelling is the same flag
    (("--max-model-len", "1", "--dtype", "half"), ["--dtype", "half"]),
    (("--enforce-eager", "--dtype=half"), ["--dtype=half"]),  # a boolean flag consumes no value
    (("--max-num-seqs=8",), ["--max-num-seqs=8"]),
    ((), []),
])
def test_given_arguments_fill_only_what_the_log_did_not_print(given, kept):
    from gpustack_guard.commands.verify import merged_args

    printed = ["--max-model-len=20000", "--enforce-eager"]
    assert merged_args(printed, given) == printed + kept


@pytest.mark.parametrize(("tp", "engine_verdict", "result"), [
    ("3", "tp-heads", "pass"),  # 64 heads over 3 ranks: refused by the engine before any memory arithmetic
    ("5", "tp-heads", "pass"),  # 8 KV heads and TP 5 do not divide one another: the same refusal
    ("4", "fits", "fail"),  # a divisor: the memory arithmetic decides, and the engine's refusal is not explained
])
def test_a_tensor_parallel_size_the_engine_refuses_is_the_estimates_verdict_too(gsg, tp, engine_verdict, result):
    doc = json.loads(gsg("verify", "--log", log_path("vllm/v0.6-internvl-tp3-not-divisible.log"),
                         "-m", "Qwen/Qwen2.5-72B", "--quantization", "awq", "--gpu-memory", "80GiB",
                         "--backend-version", "0.6.4", "-o", "json", "--", f"--tensor-parallel-size={tp}").out)
    assert doc["observed_verdict"] == "tp-heads"
    assert (doc["engine_verdict"], doc["result"]) == (engine_verdict, result)
    if result == "fail":
        assert doc["reasons"] == ["the engine failed at start-up (not-divisible-by-parallel-size), the estimate "
                                  "says fits"]


def test_a_llama_cpp_log_over_two_devices_is_rebuilt_on_two_gpus_and_its_oom_is_does_not_fit(gsg):
    config = str(Path(__file__).resolve().parents[2] / "benchmarks" / "vectors" / "mistral-small-24b" / "config.json")
    args = ("verify", "--log", log_path("llama.cpp/pp-compute-oom-two-gpus.log"), "-m", config, "--quantization", "q4_k_m",
            "--gpu-memory", "24GiB", "--backend-version", "b7300", "-o", "json", "--", "--batch-size=4096",
            "--ubatch-size=4096", "--flash-attn=on", "--ctx-size=150272")
    doc = json.loads(gsg(*args).out)
    assert (doc["observed_verdict"], doc["engine_verdict"], doc["result"]) == ("does-not-fit", "does-not-fit", "pass")
    # the layers split over CUDA0 and CUDA1: CUDA0's KV buffer as logged (12,327 MiB), not the whole model's
    assert doc["observed"]["kv_cache_bytes_per_gpu"] == doc["estimated"]["kv_cache_bytes_per_gpu"] == 12_327 * 2**20


def test_log_text_in_the_markdown_report_is_text_not_html_or_links(gsg, tmp_path):
    """A log names its own model: `<img>`, `</details>` or a link there stay text in a pull-request comment."""
    hostile = "<img src=x onerror=alert(1)></details>[click](http://evil.example)"
    log = tmp_path / "engine.log"
    log.write_text(f"INFO 04-24 16:32:50 [api_server.py:1043] non-default args: {{'model': '{hostile}'}}\n"
                   "INFO 04-24 16:33:00 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.6 seconds\n")
    out = gsg("verify", "--log", str(log), "-o", "markdown").out
    assert "<img" not in out and "</details>" not in out and not re.search(r"(?<!\\)\]\(http", out)
    assert "&lt;img src=x onerror=alert(1)&gt;&lt;/details&gt;\\[click\\](http://evil.example)" in out


# --env: the deployment's environment a log does not print (a thread's `VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve`)
SILENT_0_10 = ("verify", "--log", log_path("vllm/v1-0.10-qwen3-coder-30b-a3b-tp8-24gb.log"), "-m", "Qwen/Qwen3-30B-A3B",
               "--gpu-memory", "24564MiB", "--gpu-name", "NVIDIA RTX A5000", "--backend-version", "0.10.0", "-o", "json")
SILENT_0_10_ARGS = ("--", "--tensor-parallel-size=8", "--enable-expert-parallel", "--gpu-memory-utilization=0.85")


def _estimated(gsg, *args: str) -> dict:
    result = gsg(*args)
    assert result.err == "", result.err
    return json.loads(result.out)["estimated"]


def test_env_picks_the_sampler_of_a_log_silent_on_it(gsg):
    # 0.9.0-0.11.0 sample through FlashInfer where it is installed: a silent log is booked as the install that
    # sorts, unless the deployment's env says which path ran (GPUStack's runner image: FlashInfer)
    assumed = _estimated(gsg, *SILENT_0_10, *SILENT_0_10_ARGS)
    given = _estimated(gsg, *SILENT_0_10, "--env", "VLLM_USE_FLASHINFER_SAMPLER=1", *SILENT_0_10_ARGS)
    sorting = _estimated(gsg, *SILENT_0_10, "--env", "VLLM_USE_FLASHINFER_SAMPLER=0", *SILENT_0_10_ARGS)
    assert assumed["sampler_peak_bytes_per_gpu"] == sorting["sampler_peak_bytes_per_gpu"] == 1_486_422_016
    assert given["sampler_peak_bytes_per_gpu"] == 552_927_232
    assert given["kv_capacity_tokens"] > assumed["kv_capacity_tokens"] == sorting["kv_capacity_tokens"]


def test_a_sampler_line_the_log_prints_wins_over_env(gsg):
    # the log names FlashInfer's sampler (dennislee22/vLLM-benchmarking): an env saying otherwise changes nothing
    args = ("verify", "--log", log_path("vllm/v1-0.10.1.1-qwen2-7b-a100-80gb-gmu025.log"), "-m",
            "Qwen/Qwen2-7B-Instruct", "--gpu-memory", "81920MiB", "--gpu-name", "NVIDIA A100-SXM4-80GB", "-o", "json")
    printed = _estimated(gsg, *args)
    overridden = _estimated(gsg, *args, "--env", "VLLM_USE_FLASHINFER_SAMPLER=0")
    assert printed == overridden
    assert printed["sampler_peak_bytes_per_gpu"] == 559_677_440


@pytest.mark.parametrize("extra,message", [
    (("--env", "VLLM_USE_FLASHINFER_SAMPLER"), "gsg: error: --env: 'VLLM_USE_FLASHINFER_SAMPLER' is not KEY=VALUE"),
    (("--env", "=1"), "gsg: error: --env: '=1' is not KEY=VALUE"),
])
def test_an_env_that_is_not_key_value_is_one_line(gsg, extra, message):
    result = gsg(*SILENT_0_10, *extra)
    assert (result.code, result.out, result.err.strip()) == (1, "", message)


def test_env_goes_with_a_log_not_with_specs(gsg, tmp_path):
    result = gsg("verify", str(tmp_path), "--env", "VLLM_USE_FLASHINFER_SAMPLER=0")
    assert result.code == 1
    assert result.err.strip() == ("gsg: error: --env goes with --log FILE; a live verify reads each deployment's "
                                  "env from its spec")


@pytest.mark.parametrize("value, shown", [("²", "²"), ("1²", "1²"), ("9" * 5000, "9" * 40)])
def test_a_log_limit_that_is_no_ascii_whole_number_is_one_line(gsg, tmp_path, monkeypatch, value, shown):
    """Before: str.isdigit() took '²' and 5,000 digits, and int() refused both: an internal error (exit 3)."""
    log = tmp_path / "a.log"
    log.write_text("x\n")
    monkeypatch.setenv("GSG_MAX_LOG_LINES", value)
    assert one_line_error(gsg("verify", "--log", str(log))) == \
        f"gsg: error: GSG_MAX_LOG_LINES must be a positive whole number, not '{shown}'"


def test_a_llama_cpp_fit_table_gives_the_gpus_size_when_none_is_given(gsg):
    """ROCm/ROCm#6227 at b9106: --fit's breakdown prints ROCm1's total (16,304 MiB) and the free memory it fitted
    against (16,140 MiB); without --gpu-memory the rebuild runs on the card the log names, as a vLLM log's total."""
    config = str(Path(__file__).resolve().parents[2] / "benchmarks" / "vectors" / "granite-4.1-8b" / "config.json")
    doc = json.loads(gsg("verify", "--log", log_path("llama.cpp/granite-4.1-8b-rocm-rx9070xt-b9106-fit-ctx.log"),
                         "-m", config, "--quantization", "q8_0", "-o", "json", "--", "--n-gpu-layers=99").out)
    assert doc["observed"]["gpu_memory_bytes"] == doc["estimated"]["gpu_memory_bytes"] == 16_304 * 2**20
    assert doc["observed"]["free_at_fit_bytes"] == 16_140 * 2**20
