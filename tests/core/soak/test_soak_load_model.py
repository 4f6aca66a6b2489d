"""The load model's pure half: arrival schedules, SLO parsing, goodput per request, sweep decisions, the
stored-sample cap and the limits read from the environment."""

from __future__ import annotations

import statistics

import pytest

from gpustack_guard.core.soak.load_model import (
    MAX_RATE,
    MAX_SWEEP_STEPS,
    Slo,
    SoakLimits,
    arrival_offsets,
    describe_slos,
    parse_duration,
    parse_slos,
    parse_sweep,
    pick_samples,
    request_meets,
    round_misses,
    step_outcome,
    sweep_best,
)
from gpustack_guard.core.soak.rounds import RequestResult, aggregate_round


def test_constant_arrivals_are_evenly_spaced_from_the_round_start():
    assert arrival_offsets(4, "constant", 1.0, seed=0, round_index=0) == [0.0, 0.25, 0.5, 0.75]
    assert arrival_offsets(4, "constant", 1.0, seed=9, round_index=3) == [0.0, 0.25, 0.5, 0.75]  # no randomness
    assert arrival_offsets(0.5, "constant", 5.0, 0, 0) == [0.0, 2.0, 4.0]
    assert arrival_offsets(4, "constant", 10.0, 0, 0, limit=3) == [0.0, 0.25, 0.5]


def test_poisson_arrivals_are_seeded_per_run_and_round():
    first = arrival_offsets(4, "poisson", 1.0, seed=0, round_index=0)
    assert first == pytest.approx([0.0, 0.465152, 0.819809, 0.956237], abs=1e-6)  # pinned: a run can be replayed
    assert arrival_offsets(4, "poisson", 1.0, seed=0, round_index=0) == first
    assert arrival_offsets(4, "poisson", 1.0, seed=0, round_index=1) != first  # each round its own draw
    assert arrival_offsets(4, "poisson", 1.0, seed=1, round_index=0) != first


def test_poisson_gaps_have_the_mean_and_spread_of_an_exponential():
    offsets = arrival_offsets(200, "poisson", 100.0, seed=7, round_index=0)
    gaps = [b - a for a, b in zip(offsets, offsets[1:])]
    assert 19_600 <= len(offsets) <= 20_400  # 200/s × 100 s, within ±2 %
    assert statistics.mean(gaps) == pytest.approx(0.005, rel=0.02)
    assert statistics.pstdev(gaps) == pytest.approx(0.005, rel=0.03)  # an exponential's sd equals its mean
    assert all(0 <= o < 100.0 for o in offsets) and offsets == sorted(offsets)


@pytest.mark.parametrize("rate,arrival,message", [(0, "poisson", "outside"), (-1, "constant", "outside"),
                                                  (MAX_RATE * 2, "poisson", "outside"),
                                                  (1, "uniform", "expected one of poisson, constant")])
def test_arrival_arguments_out_of_range_are_refused(rate, arrival, message):
    with pytest.raises(ValueError, match=message):
        arrival_offsets(rate, arrival, 1.0, 0, 0)


def test_slos_parse_with_their_units():
    assert parse_slos("ttft_p99=2s,itl_p99=80ms") == (Slo("ttft", "p99", 2.0), Slo("itl", "p99", 0.08))
    assert parse_slos(" E2E_P50 = 1.5s , ") == (Slo("e2e", "p50", 1.5),)
    assert parse_duration(".5s") == 0.5 and parse_duration("250ms") == 0.25
    assert describe_slos(parse_slos("ttft_p99=2s,itl_p90=80ms")) == "ttft_p99 ≤ 2 s, itl_p90 ≤ 80 ms"


@pytest.mark.parametrize("text,message", [
    ("ttft_p99=2", "ttft_p99: '2' is not a duration: write it with its unit, e.g. 2s or 80ms"),
    ("ttft_p99=0ms", "must be more than 0"),
    ("ttft_p98=2s", "PERCENTILE one of p50, p90, p95, p99"),
    ("tpot_p99=2s", "METRIC one of ttft, itl, e2e"),
    ("ttft_p99", "expected METRIC_PERCENTILE=DURATION"),
    ("ttft_p99=2s,ttft_p99=3s", "ttft_p99 is given twice"),
    ("", "no SLO given"),
    ("ttft_p99=-1s", "is not a duration"),
])
def test_slo_mistakes_are_named(text, message):
    with pytest.raises(ValueError, match=message):
        parse_slos(text)


SLOS = (Slo("ttft", "p99", 2.0), Slo("itl", "p99", 0.08))


def test_goodput_is_decided_per_request_on_its_own_figures():
    assert request_meets(True, 1.9, [0.05, 0.07], 2.5, SLOS)
    assert not request_meets(True, 2.1, [0.05], 2.5, SLOS)  # TTFT over
    assert not request_meets(True, 1.0, [0.05] * 99 + [0.5] * 2, 2.5, SLOS)  # its own ITL p99 over
    assert request_meets(True, 1.0, [], 1.0, SLOS)  # one token: no gap to hold against the ITL limit
    assert not request_meets(True, None, [], 1.0, SLOS)  # no first token: cannot have met a TTFT limit
    assert not request_meets(False, 0.1, [0.01], 0.2, SLOS)  # a failure never counts
    assert request_meets(True, 2.0, [0.08], 3.0, SLOS)  # at the limit is within it
    assert not request_meets(True, 0.1, [], 3.0, (Slo("e2e", "p50", 2.999),))


def test_a_round_counts_met_requests_and_names_its_missed_percentiles():
    results = [RequestResult(0.0, 1.0, True, ttft_s=0.5, gaps_s=[0.05, 0.06], output_tokens=3),
               RequestResult(0.1, 3.1, True, ttft_s=2.5, gaps_s=[0.05], output_tokens=2),
               RequestResult(0.2, 0.3, False, error="HTTP 503")]
    r = aggregate_round(0, 0.0, 4.0, results, [], slos=SLOS)
    assert r.slo_met_requests == 1
    assert r.ttft_p99_s == pytest.approx(2.48) and r.e2e_p50_s == pytest.approx(2.0)
    assert r.e2e_p99_s == pytest.approx(2.98) and r.itl_p90_s == pytest.approx(0.058)
    assert r.slo_misses == ["ttft_p99 2.48 s > 2 s"]
    assert aggregate_round(0, 0.0, 4.0, results, []).slo_met_requests is None  # no --slo: no goodput
    assert round_misses({"ttft_p99": None}, SLOS[:1]) == ["ttft_p99 not measured (no successful request)"]
    assert round_misses({"itl_p99": 0.0801}, SLOS[1:]) == ["itl_p99 80.1 ms > 80 ms"]


def test_sweeps_parse_ascending_steps():
    sweep = parse_sweep("rate:1,2,4,8")
    assert (sweep.dimension, sweep.values) == ("rate", (1.0, 2.0, 4.0, 8.0))
    assert parse_sweep("concurrency: 4, 8 ,16").values == (4.0, 8.0, 16.0)
    assert parse_sweep("rate:0.5,1.5").values == (0.5, 1.5)


@pytest.mark.parametrize("text,message", [
    ("rps:1,2", "expected rate:R1,R2,... or concurrency:C1,C2,..."),
    ("rate", "expected rate:R1,R2"),
    ("rate:", "no steps"),
    ("rate:1,x", "rate step 'x' is not a number"),
    ("concurrency:1.5", "is not a whole number"),
    ("rate:2,1", "must be ascending: 1 after 2"),
    ("rate:1,1", "must be ascending"),
    ("rate:0,1", "must be more than 0 and at most 10000"),
    ("rate:1,20000", "at most 10000"),
    ("concurrency:0,2", "between 1 and 4096"),
    ("concurrency:5000", "between 1 and 4096"),
    ("rate:" + ",".join(str(i) for i in range(1, MAX_SWEEP_STEPS + 2)), f"at most {MAX_SWEEP_STEPS}"),
])
def test_sweep_mistakes_are_named(text, message):
    with pytest.raises(ValueError, match=message):
        parse_sweep(text)


def test_a_step_meets_the_slos_only_when_every_round_does_and_errors_stay_low():
    met = step_outcome(2.0, [[], []], requests=100, errors=5, met_requests=90, max_error_rate=0.05)
    assert (met.met, met.reasons, met.goodput) == (True, [], 0.9)
    one_round = step_outcome(4.0, [[], ["ttft_p99 2.5 s > 2 s"]], 100, 0, 60, 0.05)
    assert (one_round.met, one_round.reasons) == (False, ["round 2: ttft_p99 2.5 s > 2 s"])
    errors = step_outcome(8.0, [[]], 100, 6, 94, 0.05)
    assert errors.reasons == ["6 of 100 requests failed (6.0% > 5%)"]
    assert step_outcome(16.0, [], 0, 0, 0, 0.05).reasons == ["no measured round"]
    assert sweep_best([met, one_round]) == 2.0
    assert sweep_best([one_round]) is None
    assert sweep_best([]) is None


def test_samples_fit_the_budget_spread_over_the_round():
    assert pick_samples([2] * 6, 100) == ([0, 1, 2, 3, 4, 5], [2] * 6, 0, 0)  # 36 values fit
    assert pick_samples([2] * 6, 20) == ([0, 2, 4], [2, 2, 2], 3, 0)  # every 2nd: 18 values
    assert pick_samples([10], 8) == ([0], [4], 0, 6)  # one long answer: its gaps cut at the budget
    assert pick_samples([0, 0], 3) == ([], [], 2, 0)  # not even one request's scalars
    assert pick_samples([], 10) == ([], [], 0, 0)


def test_a_round_keeps_its_samples_in_start_order_within_the_budget():
    results = [RequestResult(0.5, 1.0, True, ttft_s=0.1, gaps_s=[0.01, 0.02], output_tokens=3),
               RequestResult(0.2, 0.4, False, error="timeout")]
    r = aggregate_round(0, 0.0, 1.0, results, [], sample_budget=100)
    assert r.samples == {"started_s": [0.2, 0.5], "ttft_s": [None, 0.1], "e2e_s": [0.2, 0.5],
                         "output_tokens": [0, 3], "error": ["timeout", None], "itl_s": [[], [0.01, 0.02]]}
    assert (r.samples_dropped_requests, r.samples_cut_gaps) == (0, 0)
    small = aggregate_round(0, 0.0, 1.0, results, [], sample_budget=5)
    assert small.samples["started_s"] == [0.2] and small.samples_dropped_requests == 1
    assert aggregate_round(0, 0.0, 1.0, results, []).samples is None


def test_limits_come_from_the_environment_and_refuse_nonsense():
    assert SoakLimits.from_env({}) == SoakLimits()
    limits = SoakLimits.from_env({"GSG_SOAK_MAX_SAMPLES": "50", "GSG_SOAK_MAX_IN_FLIGHT": " 2 "})
    assert (limits.max_stored_samples, limits.max_in_flight) == (50, 2)
    for bad in ("0", "-3", "1.5", "lots", "²", "9" * 19):  # ² is a digit to isdigit(), not int()
        with pytest.raises(ValueError, match=f"GSG_SOAK_MAX_DATASET_BYTES must be a positive whole number, not '{bad}'"):
            SoakLimits.from_env({"GSG_SOAK_MAX_DATASET_BYTES": bad})


def test_a_rounds_cap_of_inter_token_gaps_is_a_named_limit_and_is_reported_when_reached():
    from gpustack_guard.core.soak.rounds import RequestResult, aggregate_round

    assert SoakLimits().max_round_gaps == 4_000_000
    assert SoakLimits.from_env({"GSG_SOAK_MAX_ROUND_GAPS": "1000"}).max_round_gaps == 1000
    # a failed request's gaps are held in memory too: they count
    results = [RequestResult(0.0, 1.0, True, 0.1, [0.01] * 7), RequestResult(0.5, 1.0, False, 0.1, [0.02] * 5)]
    hit = [aggregate_round(0, 0.0, 2.0, results, [], max_gaps=cap).gap_cap_hit for cap in (None, 11, 12, 13)]
    assert hit == [False, True, True, False]
