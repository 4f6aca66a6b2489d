"""Every vector `gsg verify --record` wrote under tests/fixtures/vectors/ replays through today's estimate: the
same estimated terms as when it was recorded (a change to the arithmetic shows here, vector by vector) and the
same comparison with what the engine logged (verdicts, KV capacity within the recorded tolerance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack_guard.adapters.files.vectors import load_vector, vector_files
from gpustack_guard.commands.verify_record import replay

VECTORS = Path(__file__).resolve().parents[1] / "fixtures" / "vectors"
FILES = vector_files(VECTORS)


def test_the_fixture_logs_converted_into_vectors_are_there():
    assert len(FILES) >= 5
    engines = {load_vector(path)["engine"] for path in FILES}
    assert engines == {"vllm", "sglang", "llama.cpp"}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_recorded_vector_replays_to_its_recorded_estimate_and_comparison(path):
    vector = load_vector(path)
    estimated, verdict, reasons = replay(vector)
    # every recorded term keeps its value; a term the arithmetic gained since is new, not a change
    assert {k: v for k, v in estimated.items() if k in vector["estimated"]} == vector["estimated"]
    assert verdict == vector["engine_verdict"]
    assert reasons == vector["reasons"]


def test_the_recorded_comparisons_hold_exact_numbers():
    by_name = {p.name: load_vector(p) for p in FILES}
    rtx3090 = next(v for n, v in by_name.items() if n.startswith("Llama-3.1-8B-Instruct-vllm-0.6.4")
                   and v["started"])
    assert (rtx3090["observed"]["kv_capacity_tokens"], rtx3090["estimated"]["kv_capacity_tokens"]) == (31_232, 31_504)
    assert rtx3090["source"] == "https://github.com/vllm-project/vllm/issues/10517"
    refused = next(v for n, v in by_name.items() if n.startswith("Llama-3.1-8B-Instruct-vllm-0.6.4")
                   and not v["started"])
    assert refused["failure_kind"] == refused["engine_verdict"] == "kv-below-max-model-len"
    l40s = next(v for n, v in by_name.items() if n.startswith("Llama-3.1-8B-Instruct-vllm-0.8.5"))
    assert l40s["reasons"] == ["KV capacity is off by +18.6 % (188,240 estimated, 158,656 logged; tolerance 5 %)"]
    assert l40s["gpu"] == {"name": "NVIDIA L40S", "memory_bytes": 47_663_399_567}
