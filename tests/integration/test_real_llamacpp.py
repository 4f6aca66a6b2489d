"""gsg's llama.cpp arithmetic against the real `llama-server` (built by llamacpp_build.py) on tiny GGUF files.

llama.cpp runs on CPU, so its own buffer lines can be held against gsg's numbers in CI: the model buffers and the
KV buffer must equal gsg's bytes as llama.cpp prints them (%.2f MiB), the compute buffer must lie within
COMPUTE_TOLERANCE of gsg's (why that much: see the constant). Outside CI the tests skip when the binary has not
been built; with CI=true a missing binary fails them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest
from llama_server import REQUEST_TIMEOUT_S, Buffers, built_binary_or_skip, llama_server, read_buffers
from llamacpp_build import LLAMA_CPP_BUILD_AT_LEAST, LLAMA_CPP_COMMIT, SDIST_VERSION
from tiny_gguf import TinyModel, write_tiny_gguf

from gpustack_guard.adapters.model_sources.resolver import read_local_gguf
from gpustack_guard.core import args as A
from gpustack_guard.core.memory import profiles as MP
from gpustack_guard.core.memory.engine import llamacpp_config
from gpustack_guard.core.memory.engines.llamacpp import (
    compute_buffer,
    estimate_llamacpp,
    kv_streams,
    reserved_outputs,
)
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("llama-server")]

ANY_MEMORY = 64 * GiB  # the verdict is not under test, only the buffers
FIXTURE_LOG = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "llama.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return built_binary_or_skip()


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gguf")
    shapes = {"f16": TinyModel("f16"), "q8_0": TinyModel("q8_0"), "q4_0": TinyModel("q4_0"),
              "f16-tied": TinyModel("f16", tied_output=True), "q8_0-wide": TinyModel("q8_0", heads=4, kv_heads=1)}
    return {name: write_tiny_gguf(folder / f"tiny-{name}.gguf", shape) for name, shape in shapes.items()}


@dataclass(frozen=True)
class Case:
    model: str
    args: tuple[str, ...]


CASES = {
    "f16-fa-off": Case("f16", ("-c", "1000", "-np", "1", "-fa", "off")),
    "f16-fa-on": Case("f16", ("-c", "1000", "-np", "1", "-fa", "on")),
    "q8_0-split-slots": Case("q8_0", ("-c", "1000", "-np", "3", "-fa", "on")),  # 1,024 cells -> 3 x 512
    "q8_0-split-fa-off": Case("q8_0", ("-c", "2048", "-np", "2", "-fa", "off")),
    "q4_0-auto-slots-auto-fa": Case("q4_0", ("-c", "4096",)),  # -np auto: 4 slots in one unified cache
    "q4_0-q8-k-cache": Case("q4_0", ("-c", "512", "-np", "1", "-fa", "on", "--cache-type-k", "q8_0")),
    "f16-tied-ubatch": Case("f16-tied", ("-c", "768", "-np", "1", "-fa", "off", "-ub", "128")),
    "q8_0-wide-heads": Case("q8_0-wide", ("-c", "300", "-np", "1", "-fa", "off", "--cache-type-k", "q4_0")),
    # no -c: this build's n_ctx 0 is the GGUF's context_length (profiles.LLAMACPP_DEFAULT_CTX_BY_BUILD), one slot
    # and the automatic four in one unified cache
    "q4_0-no-ctx-one-slot": Case("q4_0", ("-np", "1", "-fa", "on")),
    "f16-no-ctx-auto-slots": Case("f16", ("-fa", "off")),
}


@dataclass(frozen=True)
class GsgNumbers:
    mapped: int  # the weights llama.cpp leaves in host memory (mmap'd)
    repack: int  # their CPU_REPACK copy
    kv: int
    compute: int


def gsg_numbers(model: Path, args: tuple[str, ...]) -> GsgNumbers:
    """gsg's arithmetic for this run: the flags read as for a deployment, the build the binary is at least. A
    CPU-only build keeps everything on the host, which is -ngl 0 (GPUStack refuses -ngl 0 on a GPU deployment,
    so the engine is called directly); its one compute buffer is that of a single device holding every layer and
    the output, with nothing copied in from another backend (no input-device extras)."""
    facts = read_local_gguf(model)
    flags = A.as_dict(A.parse(list(args), "llamacpp"))
    cfg = llamacpp_config(flags, Policy(), facts, LLAMA_CPP_BUILD_AT_LEAST)
    host = estimate_llamacpp(facts, [ANY_MEMORY], replace(cfg, gpu_layers=0),
                             version=LLAMA_CPP_BUILD_AT_LEAST).extra["host"]
    one_device = estimate_llamacpp(facts, [ANY_MEMORY], cfg, version=LLAMA_CPP_BUILD_AT_LEAST)
    assert host["kv"] == one_device.kv_cache  # the same cache, wherever it lives
    cells = one_device.kv_capacity_tokens // kv_streams(cfg, LLAMA_CPP_BUILD_AT_LEAST)
    ubatch = one_device.extra["ubatch_size"]
    slots = cfg.parallel or MP.LLAMACPP_AUTO_PARALLEL  # this build's -np default is automatic
    outputs = reserved_outputs(ubatch, slots, cfg.batch_size or MP.LLAMACPP_DEFAULT_BATCH, LLAMA_CPP_BUILD_AT_LEAST)
    compute = compute_buffer(cells, ubatch, facts, cfg.flash_attn, output_device=True, outputs=outputs)
    return GsgNumbers(host["weights"], host["cpu_repack"], host["kv"], compute)


def printed(size: int) -> float:
    """A byte count as llama.cpp prints it (%8.2f MiB)."""
    return round(size / MiB, 2)


# The compute buffer is ggml-alloc's high-water mark of the reserved graph; gsg counts the intermediates of the
# stage that peaks (KQ with its mask and the live hidden rows without flash attention; with it, the f16 mask -
# created f16 in this build, llama-graph.cpp - beside the feed-forward rows), with the row counts read from CUDA
# logs (profiles.LLAMACPP_KQ_LIVE_HIDDEN_ROWS, LLAMACPP_FFN_HIDDEN_ROWS). Measured on this build's CPU backend:
# without flash attention within 10 % (KQ dominates); with it gsg is 1.5 MiB low at 512 tokens on these shapes, the
# CPU graph keeping about three more hidden-size rows per token in the feed-forward stage (up to 30 % of a 5 MiB
# buffer). The tolerance holds that gap, so a change of the dominant term (a KQ or mask of the wrong size, cells
# not split per slot: 2x) still fails.
COMPUTE_TOLERANCE = 0.35


def check_buffers(buffers: Buffers, gsg: GsgNumbers) -> None:
    # the mapped buffer spans the file's tensor data, alignment gaps (< 32 B per tensor) included
    assert abs(buffers.model["CPU_Mapped"] - gsg.mapped / MiB) <= 0.01, (buffers.model, gsg)
    assert buffers.model.get("CPU_REPACK", 0.0) == printed(gsg.repack), (buffers.model, gsg)
    assert set(buffers.model) <= {"CPU_Mapped", "CPU_REPACK"}, buffers.model
    assert buffers.kv == {"CPU": printed(gsg.kv)}, (buffers.kv, gsg)
    assert set(buffers.compute) == {"CPU"}, buffers.compute
    assert abs(buffers.compute["CPU"] - gsg.compute / MiB) <= COMPUTE_TOLERANCE * buffers.compute["CPU"], \
        (buffers.compute, gsg.compute / MiB)


@pytest.mark.parametrize("name", list(CASES))
def test_buffers_match_gsg(name, binary, models, tmp_path):
    case = CASES[name]
    log_path = tmp_path / "llama-server.log"
    with llama_server(binary, models[case.model], list(case.args), log_path):
        pass
    text = log_path.read_text(errors="replace")
    buffers = read_buffers(text)
    gsg = gsg_numbers(models[case.model], case.args)
    check_buffers(buffers, gsg)
    verified_by_gsg_verify(text, buffers)


def verified_by_gsg_verify(text: str, buffers: Buffers) -> None:
    """`gsg verify --log`'s parser reads the same run: the CPU device's model buffers (mapped and repacked) and its
    KV buffer to the byte as printed, so the engine's own log becomes a test vector without a second reader."""
    from gpustack_guard.core.verify import patterns as P
    from gpustack_guard.core.verify.logparse import parse_log

    log, _ = parse_log(text.splitlines(True), "llama.cpp")
    terms = log.ranks["CPU"]
    assert log.started and log.binding_rank() == "CPU" and not log.missing(), (log.failure, log.missing())
    assert terms[P.WEIGHTS] == sum(round(v * MiB) for v in buffers.model.values()), (terms, buffers.model)
    assert terms[P.KV_CACHE] == round(buffers.kv["CPU"] * MiB) and \
        terms[P.COMPUTE_BUFFER] == round(buffers.compute["CPU"] * MiB), (terms, buffers)


def test_chat_streams_and_metrics_are_exported(binary, models, tmp_path):
    with llama_server(binary, models["q8_0"], ["-c", "512", "-np", "1"], tmp_path / "log") as server:
        body = {"messages": [{"role": "user", "content": "Hello, tiny model!"}], "max_tokens": 8, "stream": True}
        chunks = []
        with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=REQUEST_TIMEOUT_S) as r:
            assert r.status_code == 200
            chunks = [line for line in r.iter_lines() if line.startswith("data: ")]
        assert chunks[-1] == "data: [DONE]"
        events = [json.loads(line.removeprefix("data: ")) for line in chunks[:-1]]
        assert events and all(e["object"] == "chat.completion.chunk" for e in events)
        assert events[-1]["choices"][0]["finish_reason"] in ("length", "stop")
        metrics = httpx.get(f"{server.url}/metrics", timeout=REQUEST_TIMEOUT_S).text
    names = {line.split("{")[0].split(" ")[0] for line in metrics.splitlines() if line.startswith("llamacpp:")}
    assert {"llamacpp:prompt_tokens_total", "llamacpp:tokens_predicted_total"} <= names, names
    assert "llamacpp:requests_processing" in names


def test_the_fixture_log_is_this_build(binary):
    """The log kept under tests/fixtures is the one this build writes (refresh it when the pin moves)."""
    fixture = FIXTURE_LOG / f"llama-cpp-python-{SDIST_VERSION}-{LLAMA_CPP_COMMIT}-tiny-q4_0.log"
    assert fixture.is_file(), fixture
    text = fixture.read_text()
    assert read_buffers(text).kv == {"CPU": 2.25}
    verified_by_gsg_verify(text, read_buffers(text))
