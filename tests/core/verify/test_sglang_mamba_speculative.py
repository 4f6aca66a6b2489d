"""SGLang's mamba pool under a speculative draft: the line goes on with the verify buffers' sizes (memory_pool.py,
printed from 0.5.3), read into their own term and held against the estimate's intermediate states."""

from __future__ import annotations

from pathlib import Path

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "sglang"
H200 = (143771 * MiB, "NVIDIA H200")
NEXT = catalog_facts("Qwen/Qwen3-Next-80B-A3B-Instruct")
NEXT_PER_REQUEST_TP4 = 19_316_736  # 36 linear layers at TP 4, bf16 conv and fp32 ssm (test_sglang_gated_delta)


def gib(x: float) -> int:
    return int(round(x * 2**30))


def terms(text: str) -> dict:
    log, _ = parse_log(text.splitlines(True), "sglang")
    return log.terms()


def test_the_verify_buffers_are_their_own_term_beside_the_slots():
    log, _ = parse_log((FIXTURES / "spec-verify-mamba-intermediate-94gb-capture-oom.log").read_text().splitlines(True),
                       "sglang")
    got = log.terms()
    assert got[P.MAMBA_STATE] == gib(0.07) + gib(3.05)
    assert got[P.MAMBA_SPECULATIVE] == gib(48.75) + gib(0.43)


def test_a_line_without_a_draft_keeps_the_slots_only():
    line = ("[2026-04-14 16:08:49 TP0] Mamba Cache is allocated. max_mamba_cache_size: 186, conv_state size: 0.10GB, "
            "ssm_state size: 4.38GB \n")
    assert terms(line) == {P.MAMBA_STATE: gib(0.10) + gib(4.38)}
    # 0.5.3 prints the draft's buffers without the slot count (max_mamba_cache_size from 0.5.4)
    old = ("[2025-10-01 10:00:00 TP0] Mamba Cache is allocated. conv_state size: 0.21GB, ssm_state size: 9.02GB "
           "intermediate_ssm_state_cache size: 1.41GB intermediate_conv_window_cache size: 0.03GB \n")
    assert terms(old) == {P.MAMBA_STATE: gib(0.21) + gib(9.02), P.MAMBA_SPECULATIVE: gib(1.41) + gib(0.03)}


def test_the_estimate_side_is_the_pools_intermediate_states_only_under_a_draft():
    flags = {"tp-size": "4", "speculative-algorithm": "NEXTN"}
    spec = estimate("sglang", NEXT, [H200] * 4, flags, "0.5.9", Policy(), {})
    assert C.estimated_terms(spec)[P.MAMBA_SPECULATIVE] == 49 * 4 * NEXT_PER_REQUEST_TP4
    plain = estimate("sglang", NEXT, [H200] * 4, {"tp-size": "4"}, "0.5.9", Policy(), {})
    assert P.MAMBA_SPECULATIVE not in C.estimated_terms(plain)
    # printed after the slots' row
    rows = [term for term, _, _ in C.ROWS]
    assert rows.index(P.MAMBA_SPECULATIVE) == rows.index(P.MAMBA_STATE) + 1
