"""The load model end to end (commands.soak.soak over in-process fake engines on a virtual clock): open-loop
arrivals on schedule, the in-flight cap, warm-up rounds left out of the verdict, goodput against SLOs, rate and
concurrency sweeps, dataset replay and the stored-sample cap. Exact figures: the fakes have no jitter, and the
virtual clock makes every TTFT, gap and arrival the fakes' own."""

from __future__ import annotations

import json

import pytest
from support.soak_fakes import Router, Scenario
from support.virtual_time import VirtualClock, run

from gpustack_guard.commands.soak import SoakOptions, build_report, soak
from gpustack_guard.core.soak.load_model import arrival_offsets
from gpustack_guard.reporters.soak import json_document, render_text

# 100 ms to the first token, 10 ms between tokens, nothing random: a 3-token answer takes 120 ms
FIXED = Scenario("fixed", ttft_s=0.1, ttft_jitter=0.0, spike_rate=0.0, itl_s=0.01)
# queueing: every other request in flight adds 100 ms to a TTFT
QUEUEING = Scenario("queueing", ttft_s=0.1, ttft_jitter=0.0, spike_rate=0.0, itl_s=0.005,
                    ttft_per_other_running_s=0.1)


def _soak(scenario: Scenario, **options):
    clock = VirtualClock()
    router = Router(clock)
    server = router.serve(scenario)
    settings = {"prompt_tokens": 16, "max_tokens": 3, "round_seconds": 2, **options}
    opts = SoakOptions(url=server.url, model="qwen3-8b", output="json", transport_factory=lambda: router,
                       clock=clock, **settings)
    plan, progress = run(soak(opts), clock)
    report = build_report(opts, plan, progress)
    return report, json.loads(json.dumps(json_document(report))), server


def test_constant_arrivals_start_on_schedule_and_every_percentile_is_in_each_round(capsys):
    report, doc, _ = _soak(FIXED, rate=4, arrival="constant", rounds=3, warmup_rounds=1, slo="ttft_p99=150ms")
    assert [r["requests"] for r in doc["rounds"]] == [8, 8, 8, 8]
    assert [r["warmup"] for r in doc["rounds"]] == [True, False, False, False]
    assert {r["offered_rate"] for r in doc["rounds"]} == {4} and {r["concurrency"] for r in doc["rounds"]} == {None}
    for r in doc["rounds"]:
        starts = [t - r["samples"]["started_s"][0] for t in r["samples"]["started_s"]]  # the first at 0
        assert starts == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75], abs=2e-6)
        for metric, value in (("ttft", 0.1), ("itl", 0.01), ("e2e", 0.12)):
            for q in ("p50", "p90", "p95", "p99"):
                assert r[f"{metric}_{q}_s"] == pytest.approx(value, abs=1e-9), (metric, q)
        assert r["samples"]["itl_s"] == [pytest.approx([0.01, 0.01], abs=1e-9)] * 8
        assert r["samples"]["output_tokens"] == [3] * 8 and r["samples"]["error"] == [None] * 8
    assert doc["goodput"] == 1.0  # the warm-up round's 8 requests are not in it
    assert doc["slo"] == {"targets": "ttft_p99 ≤ 150 ms", "met": True, "misses": [], "met_requests": 24,
                          "requests": 24}
    assert doc["settings"]["rate"] == 4 and doc["settings"]["arrival"] == "constant"
    assert doc["settings"]["slo"] == {"ttft_p99_s": 0.15}
    assert "round 1/4: 2 s at 4 requests/s (constant), warm-up ..." in capsys.readouterr().err


def test_poisson_arrivals_follow_the_seeded_schedule_of_each_round():
    report, doc, _ = _soak(FIXED, rate=20, rounds=2, seed=5)
    for index, r in enumerate(doc["rounds"]):
        expected = arrival_offsets(20, "poisson", 2, seed=5, round_index=index)
        starts = [t - r["samples"]["started_s"][0] for t in r["samples"]["started_s"]]  # the first at 0
        assert starts == pytest.approx(expected, abs=2e-6)  # samples are kept to the microsecond
        assert r["requests"] == len(expected) and r["errors"] == 0
    assert doc["settings"]["arrival"] == "poisson"


def test_open_loop_keeps_sending_to_a_slow_server_up_to_the_in_flight_cap(monkeypatch):
    slow = Scenario("slow", ttft_s=1.0, ttft_jitter=0.0, spike_rate=0.0, itl_s=0.01)
    report, doc, server = _soak(slow, rate=10, arrival="constant", rounds=1, round_seconds=1)
    assert (doc["rounds"][0]["requests"], doc["rounds"][0]["errors"]) == (10, 0)  # closed loop at 1 would send 1
    assert doc["rounds"][0]["ttft_p50_s"] == pytest.approx(1.0, abs=1e-9)
    monkeypatch.setenv("GSG_SOAK_MAX_IN_FLIGHT", "3")
    report, doc, server = _soak(slow, rate=10, arrival="constant", rounds=1, round_seconds=1)
    r = doc["rounds"][0]
    assert (r["requests"], r["errors"]) == (10, 7)
    assert r["error_reasons"] == {"not sent: 3 requests already in flight (GSG_SOAK_MAX_IN_FLIGHT)": 7}
    assert server.engine.requests == 3
    assert doc["settings"]["max_in_flight"] == 3


def test_warmup_rounds_absorb_a_cold_start_that_would_otherwise_fail_the_run():
    cold = Scenario("cold", ttft_s=0.1, ttft_jitter=0.0, spike_rate=0.0, itl_s=0.01, cold_until_s=1.5)
    report, doc, _ = _soak(cold, concurrency=2, rounds=3, warmup_rounds=1)
    # cold for 1.5 s: 5 answers of 503 per stream, then 120 ms answers
    assert doc["rounds"][0]["warmup"] and doc["rounds"][0]["error_reasons"] == {"HTTP 503": 10}
    assert [r["requests"] for r in doc["rounds"]] == [17, 33, 33, 33]
    assert [r["errors"] for r in doc["rounds"]] == [10, 0, 0, 0]
    assert doc["verdict"] == "stable"
    report, doc, _ = _soak(cold, concurrency=2, rounds=3)  # the same server without warm-up
    assert doc["verdict"] == "failing"
    assert doc["evidence"][0] == "10 of 83 requests failed (12.0% > 5%): HTTP 503 ×10"


def test_warmup_rounds_do_not_count_towards_the_rounds_a_verdict_needs():
    report, doc, _ = _soak(FIXED, concurrency=1, rounds=2, warmup_rounds=2)
    assert len(doc["rounds"]) == 4 and [r["warmup"] for r in doc["rounds"]] == [True, True, False, False]
    assert doc["verdict"] == "inconclusive"
    assert doc["evidence"][0] == "inconclusive: 2 round(s) completed; a trend needs at least 3"
    assert render_text(report).splitlines()[2].split()[0] == "1w"  # the table marks warm-up rounds


def test_goodput_counts_requests_not_rounds():
    # concurrency 2 on the queueing server: the first stream's requests see TTFT 100 ms until the second
    # stream starts, then every request has one other in flight (200 ms)
    report, doc, _ = _soak(QUEUEING, concurrency=2, rounds=1, slo="ttft_p50=150ms")
    r = doc["rounds"][0]
    assert (r["slo_met_requests"], r["requests"]) == (1, 21)  # the first request alone, of the round's 21
    assert doc["goodput"] == r["goodput"] == 1 / 21
    assert doc["slo"]["met"] is False and (doc["slo"]["met_requests"], doc["slo"]["requests"]) == (1, 21)
    assert doc["slo"]["misses"] == ["round 1: ttft_p50 200 ms > 150 ms"]


def test_a_rate_sweep_finds_the_highest_rate_meeting_the_slos_and_stops_after_a_miss():
    # a 105 ms answer: up to 8 requests/s (one every 125 ms) never overlap; at 16/s each waits behind another
    report, doc, server = _soak(QUEUEING, sweep="rate:2,4,8,16,32", arrival="constant", slo="ttft_p99=150ms",
                                rounds=1, max_tokens=2)
    sweep = doc["sweep"]
    assert [(s["value"], s["met"]) for s in sweep["steps"]] == [(2, True), (4, True), (8, True), (16, False)]
    assert sweep["best"] == 8 and sweep["not_run"] == [32] and sweep["stopped_early"] is True
    assert sweep["steps"][3]["misses"] == ["round 1: ttft_p99 1.5 s > 150 ms"]
    assert [r["step"] for r in doc["rounds"]] == [2, 4, 8, 16]
    assert [r["requests"] for r in doc["rounds"]] == [4, 8, 16, 32]
    assert doc["slo"]["met"] is True and doc["goodput"] == 1.0  # the best step's
    text = render_text(report)
    assert "  sweep: highest rate meeting the SLOs: 8 requests/s (not run after a miss: 32)" in text
    assert "  sweep: 16 requests/s: missed (goodput 3.1%): round 1: ttft_p99 1.5 s > 150 ms; verdict inconclusive" \
        in text.splitlines()


def test_a_concurrency_sweep_with_warmup_per_step():
    report, doc, _ = _soak(QUEUEING, sweep="concurrency:1,2,4", slo="ttft_p99=150ms", rounds=1, warmup_rounds=1,
                           max_tokens=2)
    assert [(s["value"], s["met"]) for s in doc["sweep"]["steps"]] == [(1, True), (2, False)]
    assert doc["sweep"]["best"] == 1 and doc["sweep"]["not_run"] == [4]
    assert [(r["step"], r["warmup"], r["concurrency"]) for r in doc["rounds"]] == [
        (1, True, 1), (1, False, 1), (2, True, 2), (2, False, 2)]


def test_no_step_meeting_the_slos_says_so():
    report, doc, _ = _soak(QUEUEING, sweep="concurrency:2,4", slo="ttft_p99=50ms", rounds=1, max_tokens=2)
    assert doc["sweep"]["best"] is None and doc["slo"]["met"] is False
    assert "  sweep: highest concurrency meeting the SLOs: none of the steps tried (not run after a miss: 4)" \
        in render_text(report)


def test_a_dataset_is_replayed_with_its_prompts_and_output_lengths(tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_text('{"prompt": "What is a KV cache?", "output_tokens": 2}\n'
                    '{"conversations": [{"from": "human", "value": "Explain paged attention."},'
                    ' {"from": "gpt", "value": "abcdefgh"}]}\n'
                    '{"conversations": [{"from": "human", "value": "no reply"}]}\n')
    report, doc, server = _soak(FIXED, concurrency=2, rounds=1, round_seconds=1, dataset_file=str(data))
    bodies = list(server.seen_bodies)
    texts = {b["messages"][0]["content"].split(". ", 1)[1] for b in bodies}
    assert texts == {"What is a KV cache?", "Explain paged attention."}
    assert all(b["messages"][0]["content"].startswith("Request 0-") for b in bodies)  # the nonce
    assert {b["max_tokens"] for b in bodies} == {2}  # "abcdefgh": 8 characters, 2 tokens
    assert doc["settings"]["dataset"] == {"file": str(data), "records": 2, "skipped": 1, "prompt_tokens_mean": 5.5,
                                          "max_tokens_mean": 2.0}
    assert doc["settings"]["workload"] == []


def test_the_stored_sample_cap_is_said_in_the_json(monkeypatch):
    monkeypatch.setenv("GSG_SOAK_MAX_SAMPLES", "60")  # 30 a round over 2 rounds: 5 of 8 requests (6 values each)
    report, doc, _ = _soak(FIXED, rate=4, arrival="constant", rounds=2)
    assert [len(r["samples"]["started_s"]) for r in doc["rounds"]] == [4, 4]  # every 2nd request
    assert [r["samples_dropped_requests"] for r in doc["rounds"]] == [4, 4]
    assert doc["samples"] == {"cap": 60, "per_round": 30, "truncated": True, "dropped_requests": 8,
                              "cut_itl_gaps": 0}
    assert doc["warnings"][-1] == ("stored samples capped at 60 values (GSG_SOAK_MAX_SAMPLES; 30 a round): 8 "
                                   "requests' samples and 0 inter-token gaps not stored in the JSON; every "
                                   "percentile is still from all requests")
    assert doc["rounds"][0]["requests"] == 8  # the percentiles still count all of them
    monkeypatch.delenv("GSG_SOAK_MAX_SAMPLES")
    report, doc, _ = _soak(FIXED, rate=4, arrival="constant", rounds=2)
    assert doc["samples"]["truncated"] is False and doc["warnings"] == []


def test_the_report_charts_each_percentile_per_round_and_goodput_per_step():
    from gpustack_guard.reporters.soak import render_html

    report, doc, _ = _soak(QUEUEING, sweep="rate:2,16", arrival="constant", slo="ttft_p99=150ms", rounds=1,
                           warmup_rounds=1, max_tokens=2)
    page = render_html(report)
    for title in ("TTFT percentiles per round", "Inter-token latency per round", "End-to-end latency per round",
                  "Goodput per round (ttft_p99 ≤ 150 ms)", "Goodput per sweep step"):
        assert f'aria-label="{title}"' in page, title
    for legend in ("TTFT p50", "TTFT p90", "TTFT p95", "TTFT p99", "ITL p99", "E2E p99"):
        assert f">{legend}</text>" in page, legend
    assert '>1w</text>' in page and '>2</text>' in page  # warm-up rounds named on the axis
    assert '>requests/s</text>' in page and '>16</text>' in page  # the sweep chart's axis: the steps
    assert "<li>sweep: highest rate meeting the SLOs: 2 requests/s</li>" in page
    assert "after 1 warm-up round(s) at a sweep of rate 2, 16" in page
