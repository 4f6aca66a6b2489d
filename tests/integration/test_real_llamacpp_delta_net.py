"""The real llama-server on a tiny Qwen3.5 (qwen35) GGUF: its CPU compute buffer at two micro-batches and two
contexts is gsg's Gated DeltaNet stage (profiles.LLAMACPP_DELTA_NET_FORMS) plus the CPU graph's extra hidden row
and 9 values per token (tests/core/memory/test_llamacpp_delta_net.py keeps 39 such runs as data and says why),
to the printed 0.01 MiB; and its KV and RS buffers are gsg's."""

from __future__ import annotations

from dataclasses import replace

import pytest
from llama_server import built_binary_or_skip, llama_server, read_buffers
from llamacpp_build import LLAMA_CPP_BUILD_AT_LEAST
from tiny_gguf import TinyQwen35, write_tiny_qwen35_gguf

from gpustack_guard.adapters.model_sources.resolver import read_local_gguf
from gpustack_guard.core import args as A
from gpustack_guard.core.memory.engine import llamacpp_config
from gpustack_guard.core.memory.engines.llamacpp import compute_buffer, delta_net_scratch, estimate_llamacpp
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("llama-server")]

SHAPE = TinyQwen35()  # 3 delta-net layers (768 conv channels) and 1 attention layer; n_ff 512
CPU_EXTRA_VALUES_PER_TOKEN = SHAPE.hidden + 9


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return write_tiny_qwen35_gguf(tmp_path_factory.mktemp("gguf") / "tiny-qwen35.gguf", SHAPE)


@pytest.mark.parametrize(("ctx", "ubatch"), [(1024, 256), (1024, 512), (4096, 256), (4096, 512)])
def test_compute_buffer_is_the_delta_net_stage(model, ctx, ubatch, tmp_path):
    args = ["-c", str(ctx), "-ub", str(ubatch), "-np", "1", "-fa", "on"]
    log_path = tmp_path / "llama-server.log"
    with llama_server(built_binary_or_skip(), model, args, log_path):
        pass
    buffers = read_buffers(log_path.read_text(errors="replace"))
    facts = read_local_gguf(model)
    cfg = llamacpp_config(A.as_dict(A.parse(args, "llamacpp")), Policy(), facts, LLAMA_CPP_BUILD_AT_LEAST)
    host = estimate_llamacpp(facts, [64 * GiB], replace(cfg, gpu_layers=0),
                             version=LLAMA_CPP_BUILD_AT_LEAST).extra["host"]
    assert buffers.kv == {"CPU": round(host["kv"] / MiB, 2)}, (buffers.kv, host)
    gsg = compute_buffer(ctx, ubatch, facts, True, output_device=True, version=LLAMA_CPP_BUILD_AT_LEAST,
                         outputs=1, sequences=1)
    # the delta-net stage is the peak here, so the rule is what is measured
    assert gsg == delta_net_scratch(ctx, ubatch, facts, True, False, LLAMA_CPP_BUILD_AT_LEAST, 1)
    expected = (gsg + CPU_EXTRA_VALUES_PER_TOKEN * ubatch * 4) / MiB
    assert abs(buffers.compute["CPU"] - expected) <= 0.01, (buffers.compute, expected)
