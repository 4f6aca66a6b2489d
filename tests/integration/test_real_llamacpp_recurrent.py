"""The real llama-server on a tiny Mamba GGUF and a tiny LFM2 hybrid: its RS buffer (llama_memory_recurrent's per-sequence conv and scan
rows, F32) equals gsg's recurrent-state term as llama.cpp prints it, for one and for several slots, whatever
--cache-type-k says; and no KV buffer at all (Mamba has no attention layer)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from llama_server import built_binary_or_skip, llama_server
from llamacpp_build import LLAMA_CPP_BUILD_AT_LEAST
from tiny_gguf import TinyLfm2, TinyMamba, write_tiny_lfm2_gguf, write_tiny_mamba_gguf

from gpustack_guard.adapters.model_sources.resolver import read_local_gguf
from gpustack_guard.core import args as A
from gpustack_guard.core.memory.engine import llamacpp_config
from gpustack_guard.core.memory.engines.llamacpp import estimate_llamacpp
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("llama-server")]

# "llama_memory_recurrent:        CPU RS buffer size =     3.14 MiB" (%8.2f MiB; the last one: --fit's dry run
# prints the lines first)
RS_LINE = re.compile(r"llama_memory_recurrent:\s+(?P<name>\S+) RS buffer size =\s*(?P<mib>\d+\.\d\d) MiB")
KV_LINE = re.compile(r"\S+ KV buffer size =\s*(?P<mib>\d+\.\d\d) MiB")
# d_inner = 2 x d_model (the loader refuses other expansion factors); wide enough that a wrong row, layer or slot count moves the printed figure: 4 x 68,608 x 4 B x 3 = 3.14 MiB
SHAPE = TinyMamba(layers=4, hidden=512, inner=1024, state=64, conv=4, dt_rank=16)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return write_tiny_mamba_gguf(tmp_path_factory.mktemp("gguf") / "tiny-mamba.gguf", SHAPE)


@pytest.mark.parametrize("args", [("-c", "512", "-np", "1"), ("-c", "1024", "-np", "3"),
                                  ("-c", "512", "-np", "2", "--cache-type-k", "q8_0")])
def test_rs_buffer_matches_gsg(model, args, tmp_path):
    binary = built_binary_or_skip()
    log_path = tmp_path / "llama-server.log"
    with llama_server(binary, model, list(args), log_path):
        pass
    text = log_path.read_text(errors="replace")
    printed = {m["name"]: float(m["mib"]) for m in RS_LINE.finditer(text)}
    facts = read_local_gguf(model)
    cfg = llamacpp_config(A.as_dict(A.parse(list(args), "llamacpp")), Policy(), facts, LLAMA_CPP_BUILD_AT_LEAST)
    est = estimate_llamacpp(facts, [64 * GiB], replace(cfg, gpu_layers=0), version=LLAMA_CPP_BUILD_AT_LEAST)
    assert printed == {"CPU": round(est.extra["host"]["recurrent_state"] / MiB, 2)}, (printed, est.extra["host"])
    assert all(float(m["mib"]) == 0.0 for m in KV_LINE.finditer(text))  # no attention layer, no KV cache
    assert est.extra["host"]["kv"] == 0
    # gsg verify reads the same line as the recurrent-state term of the CPU device
    from gpustack_guard.core.verify.logparse import parse_log
    from gpustack_guard.core.verify.patterns import RECURRENT_STATE

    log, _ = parse_log(text.splitlines(True), "llama.cpp")
    assert log.ranks["CPU"][RECURRENT_STATE] == round(printed["CPU"] * MiB), log.ranks


def _gsg(model, args):
    facts = read_local_gguf(model)
    cfg = llamacpp_config(A.as_dict(A.parse(list(args), "llamacpp")), Policy(), facts, LLAMA_CPP_BUILD_AT_LEAST)
    return estimate_llamacpp(facts, [64 * GiB], replace(cfg, gpu_layers=0), version=LLAMA_CPP_BUILD_AT_LEAST)


@pytest.mark.parametrize("args", [("-c", "512", "-np", "4"), ("-c", "2048", "-np", "1", "-fa", "on"),
                                  ("-c", "1024", "-np", "3", "--kv-unified")])
def test_hybrid_kv_covers_attention_layers_only_and_rs_the_short_conv_layers(args, tmp_path_factory, tmp_path):
    # LFM2: 2 attention and 4 short-conv layers; a KV cache of all six layers would print three times the figure
    model = write_tiny_lfm2_gguf(tmp_path_factory.mktemp("gguf") / "tiny-lfm2.gguf", TinyLfm2())
    log_path = tmp_path / "llama-server.log"
    with llama_server(built_binary_or_skip(), model, list(args), log_path):
        pass
    text = log_path.read_text(errors="replace")
    rs = {m["name"]: float(m["mib"]) for m in RS_LINE.finditer(text)}
    kv = [float(m["mib"]) for m in KV_LINE.finditer(text)]
    host = _gsg(model, args).extra["host"]
    assert rs == {"CPU": round(host["recurrent_state"] / MiB, 2)}, (rs, host)
    assert kv[-1] == round(host["kv"] / MiB, 2), (kv, host)
