"""Where -ngl put llama.cpp's output layer, read from the log's own load lines (compare.output_layer_env): llama.cpp
PR #18148 prints "offloading output layer to GPU" before "offloading N repeating layers" and places the output layer
first, older builds (and ollama's bundled ones) print it after and place it last. The order wins over the build,
given or assumed; a log without the lines leaves the build to decide."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from support import public_vectors as PV

from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as MP
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "llama.cpp"
FIRST = {MP.LLAMACPP_OUTPUT_LAYER_ENV: "first"}
LAST = {MP.LLAMACPP_OUTPUT_LAYER_ENV: "last"}
OUTPUT = "load_tensors: offloading output layer to GPU"
NON_REPEATING = "llm_load_tensors: offloading non-repeating layers to GPU"
REPEATING = "load_tensors: offloading 30 repeating layers to GPU"
NONE_REPEATING = "load_tensors: offloading 0 repeating layers to GPU"
PARTIAL = "load_tensors: offloaded 31/33 layers to GPU"
NOTHING = "load_tensors: offloaded 0/33 layers to GPU"


def read(*lines: str):
    log, _ = parse_log([line + "\n" for line in lines], "llama.cpp")
    return log


@pytest.mark.parametrize("lines, env", [
    # both lines: their order decides (src/llama-model.cpp@0c1e57098 prints the output line first, @4227c9be last)
    ((OUTPUT, REPEATING, PARTIAL), FIRST),
    ((REPEATING, OUTPUT, "load_tensors: offloaded 33/33 layers to GPU"), LAST),
    ((REPEATING, NON_REPEATING, "llm_load_tensors: offloaded 31/31 layers to GPU"), LAST),  # builds of 2023-24
    ((OUTPUT, "load_tensors: offloading 0 repeating layers to GPU", "load_tensors: offloaded 1/33 layers to GPU"),
     FIRST),  # -ngl 1 in the newer form: the output layer alone
    # only the repeating line, with layers offloaded: the older form (the newer prints the output line first then)
    ((REPEATING, "load_tensors: offloaded 30/33 layers to GPU"), LAST),
    # ollama's Go engine names the output layer's CPU: no GPU output line, the repeating one alone
    (('time=x level=INFO source=ggml.go:482 msg="offloading 20 repeating layers to GPU"',
      'time=x level=INFO source=ggml.go:486 msg="offloading output layer to CPU"',
      'time=x level=INFO source=ggml.go:494 msg="offloaded 20/49 layers to GPU"'), LAST),
    # nothing to tell by: the repeating line alone with nothing offloaded (both forms print it), or without the
    # total line; the output line alone (an excerpt cut after it, or starting at it); neither line
    ((NONE_REPEATING, NOTHING), {}),
    ((REPEATING,), {}),
    ((OUTPUT, PARTIAL), {}),
    ((OUTPUT,), {}),
    ((PARTIAL,), {}),
    (("load_tensors:        CUDA0 model buffer size =  4854.94 MiB",), {}),
])
def test_the_load_lines_order_gives_the_placement(lines, env):
    log = read(*lines)
    assert C.output_layer_env(log) == env
    # what the log shows wins over the deployment's own env, as the sampler line does (printed_env)
    assert C.deployment_env(log, {MP.LLAMACPP_OUTPUT_LAYER_ENV: "first"}, None) == (env or FIRST)


def test_other_engines_logs_carry_no_placement():
    log, _ = parse_log([REPEATING + "\n", "INFO 05-16 14:53:28 api_server.py:149] vLLM API server version 0.6.4\n"],
                       "vllm")
    assert C.output_layer_env(log) == {}


# every llama.cpp fixture that prints either line, by the placement its lines show (the rest print neither)
FIXTURE_ORDERS = {
    "first": ["bielik-11b-q8-rocm-pro-vii-b7972-q8kv-40-of-51-kv-oom.log",
              "gemma4-e2b-vulkan-rtx3060-laptop-b9849-fit-iswa.log", "gpt-oss-20b-metal-m5-b8164-iswa.log",
              "granite-4.1-8b-rocm-rx9070xt-b9106-fit-ctx.log", "phi4-mini-vulkan-rx580-rx560-fit-compute-oom.log",
              "qwen3-4b-q4km-8192-sched-reserve.log", "qwen35-27b-b8586-rtx4070-26-of-65-compute-oom.log",
              "qwen35-9b-vulkan-gtx1070ti-b9849-fit-31-of-33.log", "qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-18-of-33.log",
              "qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-20-of-33-one-slot.log",
              "qwen36-27b-mtp-mmproj-rtx5090-q8kv-4-slots.log",
              "qwen38-27b-vulkan-rtx3090-b9849-mtp-draft-context.log"],
    "last": ["command-r-two-gpus.log", "glm4-a6000-ik.log", "ik-command-a-111b-row-split-4x3090-cuda-split.log",
             "mistral-7b-v02-q5km-4x-mi100-rocm-llama-cpp-python-4096.log",
             "mixtral-8x7b-q8-partial-10-layers.log", "ollama-0.20.2-qwen25-coder-7b-q4km-rtx3060-4096.log",
             "ollama-0.5-phi4-q4km-rtx4060-laptop-29-of-41-no-mmap-swa-assert.log",
             "ollama-deepseek-r1-671b-q4km-8x-mi250x.log", "ollama-deepseek-v3-q4km-1-of-62-layers-kv-host.log",
             "ollama-gemma2-2b-rocm-rx6600-swa-full-two-streams.log",
             "ollama-go-engine-qwen3-coder-next-20-of-49-layers.log", "ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log",
             "qwen25-7b-mathtutor-f16-sycl-a770-b7300-decimal-comma.log",
             "qwen3-30b-a3b-q4km-4090-5090-b5622-experts-on-cpu-foreign.log", "ramalama-llama3-70b-q4km-two-3090-cut.log",
             "tinyllama-f32-gtx1050ti-llamafile.log", "trilm-3.9b-rtx4080.log", "yi-34b-iq4xs-3090-3060-weights.log"],
}


def test_every_llama_cpp_fixture_gives_the_placement_its_lines_show():
    found: dict[str, list[str]] = {"first": [], "last": []}
    for path in sorted(LOGS.glob("*.log")):
        log, _ = parse_log(path.read_text(encoding="utf-8").splitlines(True), "llama.cpp")
        shown = C.output_layer_env(log).get(MP.LLAMACPP_OUTPUT_LAYER_ENV)
        if shown is not None:
            found[shown].append(path.name)
    assert found == FIXTURE_ORDERS


def vector(log: str) -> PV.Vector:
    return next(v for v in PV.VECTORS if v.log == log)


@pytest.mark.parametrize("log, version, figures", [
    # ollama's runner prints no build, and its vendored llama.cpp the older order: 29 of 65 layers are the last 29
    # blocks, the output layer on the host (its weight copied for the batch into CUDA0's compute buffer at b9500).
    # Before: the assumed newest build took the output layer first, 28 blocks: KV 476.00 MiB, weights 8.29 GiB
    ("ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log", None,
     {P.KV_CACHE: (516_947_968, 516_947_968), P.WEIGHTS: (8_523_496_817, 8_555_738_340)}),
    ("ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log", "b9500",
     {P.KV_CACHE: (516_947_968, 516_947_968), P.WEIGHTS: (8_523_496_817, 8_555_738_340),
      P.COMPUTE_BUFFER: (960_579_502, 960_581_632)}),
    # a llama-server log of early 2024 cut before its build line, 10 of 33 layers (the repeating line alone): the
    # last 10 blocks. Before, at the assumed newest build: 9 blocks, KV 18.00 MiB, weights 13.05 GiB
    ("mixtral-8x7b-q8-partial-10-layers.log", None,
     {P.KV_CACHE: (20_971_520, 20_971_520), P.WEIGHTS: (15_420_295_741, 15_420_129_280)}),
])
def test_verify_places_an_unnumbered_logs_layers_as_its_lines_show(log, version, figures):
    outcome = PV.run(replace(vector(log), version=version))
    assert outcome.problem is None
    assert {term: (outcome.observed[term], outcome.estimated[term]) for term in figures} == figures


def test_the_report_says_when_the_log_places_otherwise_than_the_build():
    from gpustack_guard.commands import verify as V

    qwq = vector("ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log")
    log = PV.parse(qwq)
    opts = V.VerifyOptions(log=str(qwq.path), model=qwq.model, gpu_memory=qwq.gpu[1], quantization=qwq.quantization)
    notes = V.report(opts, log, V.rebuild(opts, log), [])["notes"]
    assert [n for n in notes if "load lines" in n] == [
        "the log's load lines offload the output layer after the repeating layers (the placement before llama.cpp PR "
        f"#18148): -ngl's layers are placed as the log shows, not as {MP.DEFAULT_VERSIONS['llamacpp']} places them "
        "(GSG_LLAMACPP_OUTPUT_LAYER=last)"]
    # a build the order agrees with, or a full offload (both placements put every layer on the GPUs): no note
    assert C.output_layer_notes(log, "b8100") == []
    full, _ = parse_log((LOGS / "ollama-gemma2-2b-rocm-rx6600-swa-full-two-streams.log").read_text().splitlines(True),
                        "llama.cpp")
    assert C.output_layer_env(full) == LAST and C.output_layer_notes(full, "b9500") == []


@pytest.mark.parametrize("value, placed", [("first", True), ("last", False), (" LAST ", False), (None, None)])
def test_the_placement_key_is_read_as_first_or_last(value, placed):
    env = {} if value is None else {MP.LLAMACPP_OUTPUT_LAYER_ENV: value}
    assert engine.llamacpp_output_first(env) is placed


@pytest.mark.parametrize("value", ["", "output-first", "1", "x" * 500])
def test_another_value_of_the_placement_key_is_refused_in_one_line(value):
    with pytest.raises(ValueError) as caught:
        engine.llamacpp_output_first({MP.LLAMACPP_OUTPUT_LAYER_ENV: value})
    message = str(caught.value)
    assert "\n" not in message and len(message) < 300
    assert message.startswith("env GSG_LLAMACPP_OUTPUT_LAYER=") and message.endswith(
        ": gsg reads 'first' or 'last' (where -ngl puts the output layer)")
