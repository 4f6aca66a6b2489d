"""The classifier on hand-made rounds: each verdict, its evidence and its numbers."""

from __future__ import annotations

import pytest

from gpustack_guard.core.soak.metrics import Snapshot
from gpustack_guard.core.soak.rounds import RequestResult, RoundStats, aggregate_round, choose_memory_source
from gpustack_guard.core.soak.verdict import classify

GIB = 1024 ** 3
MIB = 1024 ** 2


def make_rounds(ttft_p95, memory=None, idle=None, preemptions=None, kv=None, errors=None, requests=100,
                running_at_first=None, seconds=60.0, gpu_total=None, source="process_resident", p50=None):
    out = []
    for i, p95 in enumerate(ttft_p95):
        r = RoundStats(index=i, started_s=i * (seconds + 1), seconds=seconds, requests=requests,
                       errors=(errors or [0] * len(ttft_p95))[i], error_reasons={}, ttft_p50_s=(p50 or ttft_p95)[i],
                       ttft_p95_s=p95, itl_p50_s=0.01, itl_p95_s=0.02, output_tokens_per_s=500.0)
        if r.errors:
            r.error_reasons = {"HTTP 503": r.errors}
        if memory:
            r.memory[source] = memory[i]
        if idle:
            r.idle_memory[source] = idle[i]
        if preemptions:
            r.preemptions = preemptions[i]
            if preemptions[i] and running_at_first:
                r.running_at_first_preemption = running_at_first
        if kv:
            r.kv_usage_max = kv[i]
        r.gpu_total_bytes = gpu_total
        out.append(r)
    return out, choose_memory_source(out)


FLAT_MEM = [8 * GIB + d * MIB for d in (3, -2, 4, 0, -3, 1)]


def test_noise_only_is_stable():
    rounds, source = make_rounds([0.51, 0.49, 0.55, 0.50, 0.47, 0.52], FLAT_MEM, FLAT_MEM, [0] * 6, [0.4] * 6)
    v = classify(rounds, source)
    assert v.verdict == "stable" and v.locality is None and v.recommendations == []
    assert v.evidence[0].endswith(": flat")


def test_monotonic_memory_without_preemption_is_memory_growth_with_a_recycle_threshold():
    memory = [8 * GIB + i * 256 * MIB for i in range(6)]  # +256 MiB a round of 61 s
    rounds, source = make_rounds([0.50, 0.55, 0.61, 0.66, 0.72, 0.80], memory, memory, [0] * 6, [0.4] * 6)
    v = classify(rounds, source, host_memory_bytes=64 * GIB)
    assert v.verdict == "memory-growth"
    assert v.memory_slope_bytes_per_s == pytest.approx(256 * MIB / 61)
    assert v.seconds_to_memory_limit == pytest.approx((64 * GIB - memory[-1]) / (256 * MIB / 61))
    rec = v.recommendations[0]
    assert rec.action == "recycle" and rec.value == pytest.approx(0.9 * 64 * GIB)
    assert "TTFT p95 tracks the memory growth" in v.evidence


def test_memory_growth_judged_on_the_idle_baseline_when_there_is_one():
    """Memory that rises under load and falls back once the round drains is no leak."""
    during = [8 * GIB + i * 300 * MIB for i in range(6)]
    rounds, source = make_rounds([0.5] * 6, during, FLAT_MEM, [0] * 6)
    assert classify(rounds, source).verdict == "stable"


def test_gpu_memory_outside_the_pool_projects_against_the_card():
    outside = [2 * GIB + i * 64 * MIB for i in range(5)]
    rounds, source = make_rounds([0.5] * 5, outside, outside, gpu_total=48 * GIB, source="gpu_outside_pool")
    for r in rounds:
        r.memory["gpu_used"] = 40 * GIB + r.memory["gpu_outside_pool"] - 2 * GIB
    v = classify(rounds, source)
    assert (v.verdict, v.memory_source) == ("memory-growth", "gpu_outside_pool")
    room = 48 * GIB - rounds[-1].memory["gpu_used"]
    assert v.seconds_to_memory_limit == pytest.approx(room / (64 * MIB / 61))


def test_recurring_preemptions_with_flat_memory_are_preemption_with_max_num_seqs_and_fp8():
    rounds, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, [0, 2, 5, 9, 14, 20],
                                 [0.90, 0.97, 0.99, 0.99, 0.99, 0.99], running_at_first=23)
    v = classify(rounds, source)
    assert v.verdict == "preemption"
    assert [r.action for r in v.recommendations] == ["--max-num-seqs 22", "--kv-cache-dtype fp8"]
    assert "50 preemptions in 5 of 6 rounds" in v.evidence


def test_kv_pinned_with_climbing_ttft_is_preemption_even_without_a_counter():
    rounds, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, None, [0.99] * 6)
    v = classify(rounds, source)
    assert v.verdict == "preemption"
    assert "no preemption counter in the metrics" in v.evidence
    assert [r.action for r in v.recommendations] == ["--kv-cache-dtype fp8"]


def test_one_stray_preemption_in_a_flat_run_stays_stable():
    rounds, source = make_rounds([0.5] * 6, FLAT_MEM, FLAT_MEM, [0, 0, 1, 0, 0, 0])
    assert classify(rounds, source).verdict == "stable"


def test_climbing_ttft_with_nothing_else_is_latency_drift():
    rounds, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, [0] * 6, [0.4] * 6)
    assert classify(rounds, source).verdict == "latency-drift"


def test_errors_over_the_threshold_fail_whatever_else():
    rounds, source = make_rounds([0.5] * 4, errors=[3, 9, 8, 4])  # 24 of 400
    v = classify(rounds, source)
    assert v.verdict == "failing"
    assert v.evidence[0] == "24 of 400 requests failed (6.0% > 5%): HTTP 503 ×24"


def test_reference_inside_its_band_makes_the_degradation_local():
    ours, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, [0] * 6)
    ref, _ = make_rounds([0.42, 0.45, 0.40, 0.44, 0.41, 0.43])
    v = classify(ours, source, ref)
    assert (v.verdict, v.locality) == ("latency-drift", "local")


def test_reference_drifting_too_makes_it_shared():
    ours, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, [0] * 6)
    ref, _ = make_rounds([0.4, 0.5, 0.6, 0.8, 1.0, 1.3])
    assert classify(ours, source, ref).locality == "shared"


def test_a_stable_run_has_no_locality_even_with_a_reference():
    ours, source = make_rounds([0.5] * 6, FLAT_MEM, FLAT_MEM, [0] * 6)
    ref, _ = make_rounds([0.4, 0.5, 0.6, 0.8, 1.0, 1.3])
    assert classify(ours, source, ref).locality is None


def test_aggregate_round_figures_and_the_running_count_at_the_first_preemption():
    results = [RequestResult(0.0, 1.0, True, 0.1 * (i + 1), [0.01, 0.03], 10) for i in range(10)]
    results.append(RequestResult(0.5, 0.6, False, error="HTTP 503"))
    snaps = [Snapshot(0.0, kv_usage=0.5, preemptions=4.0, running=8.0, resident_bytes=100.0),
             Snapshot(1.0, kv_usage=0.9, preemptions=4.0, running=12.0, resident_bytes=130.0),
             Snapshot(2.0, kv_usage=1.0, preemptions=6.0, running=11.0, resident_bytes=120.0)]
    idle = Snapshot(2.5, kv_usage=0.0, preemptions=7.0, running=0.0, resident_bytes=110.0)
    r = aggregate_round(0, 0.0, 2.0, results, snaps, idle, preemptions_before=3.0)
    assert (r.requests, r.errors, r.error_reasons) == (11, 1, {"HTTP 503": 1})
    assert r.ttft_p50_s == pytest.approx(0.55) and r.ttft_p95_s == pytest.approx(0.955)
    assert r.itl_p50_s == pytest.approx(0.02)
    assert r.output_tokens_per_s == 50.0
    assert (r.kv_usage_max, r.preemptions, r.running_max, r.running_at_first_preemption) == (1.0, 4.0, 12.0, 8.0)
    assert (r.memory, r.idle_memory) == ({"process_resident": 130.0}, {"process_resident": 110.0})


def test_a_busy_client_is_named_in_the_evidence():
    rounds, source = make_rounds([0.5] * 4, p50=[0.2] * 4)
    rounds[2].client_lag_p95_s = 0.045  # 45 ms late against a 200 ms TTFT p50: over a tenth of it
    rounds[3].client_lag_p95_s = 0.004
    v = classify(rounds, source)
    assert v.verdict == "stable"
    assert v.evidence[-1] == ("gsg itself was busy: its event loop woke 45 ms late (p95) in round 3, against a TTFT "
                              "p50 of 200 ms; latencies include the client's share (lower --concurrency or give "
                              "gsg a free core)")


def test_a_given_memory_limit_wins_over_the_metrics():
    memory = [8 * GIB + i * 256 * MIB for i in range(6)]
    rounds, source = make_rounds([0.5] * 6, memory, memory, [0] * 6)
    assert classify(rounds, source).recommendations[0].value is None  # nothing to project against
    v = classify(rounds, source, host_memory_bytes=256 * GIB, memory_limit_bytes=16 * GIB)
    assert v.seconds_to_memory_limit == pytest.approx((16 * GIB - memory[-1]) / (256 * MIB / 61))
    assert v.recommendations[0].value == pytest.approx(0.9 * 16 * GIB)
    assert "(9.25 GiB of 16.00 GiB)" in v.recommendations[0].reason


def test_no_round_is_incomplete_not_stable():
    v = classify([], None)
    assert (v.verdict, v.evidence, v.degraded) == ("incomplete", ["no round completed"], True)


def test_ttft_growth_explained_by_the_clients_own_lag_is_not_drift():
    rounds, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, [0] * 6)
    for r, lag in zip(rounds, [0.01, 0.3, 0.6, 0.9, 1.2, 1.5]):
        r.client_lag_p50_s = lag
    v = classify(rounds, source)
    assert v.verdict == "stable"
    assert any(e.startswith("TTFT p50 grew ") and e.endswith("the client, not the server, got slower")
               for e in v.evidence)
    for r in rounds:
        r.client_lag_p50_s = 0.002  # the same TTFT with an idle client: the server's
    assert classify(rounds, source).verdict == "latency-drift"


PREEMPTING = dict(ttft_p95=[0.5, 0.6, 0.8, 1.1, 1.5, 2.0], memory=FLAT_MEM, idle=FLAT_MEM,
                  preemptions=[0, 2, 5, 9, 14, 20], kv=[0.90, 0.97, 0.99, 0.99, 0.99, 0.99], running_at_first=23)


@pytest.mark.parametrize(("engine", "actions", "kv_effect"), [
    ("vllm", ["--max-num-seqs 22", "--kv-cache-dtype fp8"], "fp8 halves the bytes per token, doubling what fits"),
    ("sglang", ["--max-running-requests 22", "--kv-cache-dtype fp8_e5m2"],
     "fp8_e5m2 halves the bytes per token, doubling what fits"),
    ("llamacpp", ["--parallel 22", "--cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on"],
     "q8_0 stores 32 values in 34 bytes instead of 64, nearly doubling what fits"),
])
def test_recommendations_name_the_engines_own_flags(engine, actions, kv_effect):
    rounds, source = make_rounds(**PREEMPTING)
    v = classify(rounds, source, engine=engine)
    assert [r.action for r in v.recommendations] == actions
    assert [r.reason for r in v.recommendations] == [
        "23 requests were running when the first preemption came: admit at most 22 so that the rest queue instead "
        "of thrashing the KV pool",
        f"the KV pool was at 99%: {kv_effect} (check long-context quality first)"]
    assert v.recommendations[0].value == 22


def test_an_engine_the_metrics_did_not_name_gets_vllms_flags_and_the_others_said():
    rounds, source = make_rounds(**PREEMPTING)
    v = classify(rounds, source, engine=None)  # GPUStack's exporter alone names no engine
    assert [r.action for r in v.recommendations] == ["--max-num-seqs 22", "--kv-cache-dtype fp8"]
    assert v.recommendations[0].reason.endswith(
        "(the metrics did not name the engine: vLLM's flag shown; SGLang --max-running-requests 22, llama.cpp "
        "--parallel 22)")
    assert v.recommendations[1].reason.endswith(
        "(the metrics did not name the engine: vLLM's flag shown; SGLang --kv-cache-dtype fp8_e5m2, llama.cpp "
        "--cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on)")


def test_kv_pinned_on_llamacpp_names_its_cache_types():
    rounds, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, None, [0.99] * 6)
    v = classify(rounds, source, engine="llamacpp")  # llama.cpp exports no preemption counter
    assert [r.action for r in v.recommendations] == ["--cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on"]


@pytest.mark.parametrize("preemptions, verdict, actions", [
    # a counter read at zero in every round: the full pool (cached prefixes hold its blocks) preempted nothing;
    # before, "preemption" and --max-num-seqs cut for preemptions that never came
    ([0] * 6, "latency-drift", []),
    # the neighbours: no counter at all (the pool is the only sign), and a counter that saw one
    (None, "preemption", ["--kv-cache-dtype fp8"]),
    ([0, 0, 0, 1, 0, 0], "preemption", ["--max-num-seqs 15", "--kv-cache-dtype fp8"]),
])
def test_a_pinned_kv_pool_is_preemption_only_where_no_counter_read_zero(preemptions, verdict, actions):
    rounds, source = make_rounds([0.5, 0.6, 0.8, 1.1, 1.5, 2.0], FLAT_MEM, FLAT_MEM, preemptions, [1.0] * 6,
                                 running_at_first=16)
    v = classify(rounds, source)
    assert (v.verdict, [r.action for r in v.recommendations]) == (verdict, actions)
    note = ("the KV pool stayed full but the preemption counter read none: requests waited for it (cached prefixes "
            "or a queue), which is no preemption")
    assert (note in v.evidence) == (verdict == "latency-drift")


def test_a_pinned_kv_pool_with_flat_latency_and_no_preemption_is_stable():
    rounds, source = make_rounds([0.5] * 6, FLAT_MEM, FLAT_MEM, [0] * 6, [1.0] * 6)
    v = classify(rounds, source)
    assert (v.verdict, v.evidence[-1]) == ("stable", "KV usage max 100%; at or above 95% in 6 of 6 rounds")
