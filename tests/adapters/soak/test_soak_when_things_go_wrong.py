"""`gsg soak` when the endpoint misbehaves (issues 31 and 36): a server that dies, restarts, hides its metrics,
ignores `stream: true`, sends an endless line, a compressed or a huge answer. Each ends bounded, in the verdict's
own words, never as "stable" on evidence the run did not have. In-process servers on a virtual clock."""

from __future__ import annotations

import gzip
import re

import httpx
import pytest
from support.soak_fakes import Router, Scenario
from support.virtual_time import VirtualClock, run

import gpustack_guard.adapters.soak.load as load
from gpustack_guard.adapters.soak.load import NOT_A_STREAM_HTML, NOT_STREAMED, REFUSALS_END_ROUND
from gpustack_guard.commands.soak import SoakOptions, build_report, soak
from gpustack_guard.core.errors import GsgError
from gpustack_guard.reporters.soak import render_text

pytestmark = pytest.mark.xdist_group("soak-scenarios")


class Misbehaving(httpx.AsyncBaseTransport):
    """The router's fake engine, with one thing wrong: `how` says what, `after_s` from when on."""

    def __init__(self, clock: VirtualClock, how: str, after_s: float = 0.0, scenario: Scenario | None = None):
        self.router, self.clock, self.how, self.after_s = Router(clock), clock, how, after_s
        self.server = self.router.serve(scenario or Scenario("stable", ttft_s=0.15))
        self.refused = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        metrics = request.url.path.startswith("/metrics")
        if self.clock() - self.server.engine.started < self.after_s:
            return await self.router.handle_async_request(request)
        if self.how == "dies":
            self.refused += 1
            raise httpx.ConnectError("connection refused", request=request)
        if self.how == "metrics-404" and metrics:
            return httpx.Response(404, text="no metrics here")
        if self.how == "metrics-other-names" and metrics:  # another exporter, or an engine's renamed series
            return httpx.Response(200, text='node_memory_MemFree_bytes 1e9\nvllm:kv_cache_usage_ratio{engine="0"} 0.4\n')
        if self.how == "metrics-nan" and metrics:
            return httpx.Response(200, text="vllm:kv_cache_usage_perc NaN\nvllm:num_requests_running NaN\n")
        if self.how == "metrics-load-balanced" and metrics:  # two replicas behind one URL, answering in turn
            answer = await self.router.handle_async_request(request)
            self.refused += 1
            text = (await answer.aread()).decode()
            if self.refused % 2:
                text = text.replace("process_start_time_seconds 1700000000.0", "process_start_time_seconds 1699999000.0")
            return httpx.Response(200, text=text)
        if self.how == "metrics-load-balanced-untimed" and metrics:  # the same, on pages with no process start time
            answer = await self.router.handle_async_request(request)
            self.refused += 1
            lines = [line for line in (await answer.aread()).decode().splitlines(keepends=True)
                     if "process_start_time_seconds" not in line]
            if self.refused % 2 == 0:  # the other replica had preempted 7 requests
                lines = [re.sub(r"^(vllm:num_preemptions_total\S*) \S+", r"\1 7.0", line) for line in lines]
            return httpx.Response(200, text="".join(lines))
        if metrics:
            return await self.router.handle_async_request(request)
        if self.how == "not-streamed":
            return httpx.Response(200, json={"choices": [{"message": {"content": "hello"}}]})
        if self.how == "endless-line":
            return httpx.Response(200, headers={"content-type": "text/event-stream"},
                                  content=b"data: " + b"x" * (load.MAX_LINE_BYTES + 10))
        if self.how == "gzip":
            return httpx.Response(200, headers={"content-type": "text/event-stream", "content-encoding": "gzip"},
                                  content=gzip.compress(b"\0" * 10_000_000))
        if self.how == "login-page":  # a proxy's sign-in page, typed as plain text
            return httpx.Response(200, headers={"content-type": "text/plain"}, content=b"\n<!DOCTYPE html><p>sign in")
        if self.how == "huge-error":
            return httpx.Response(500, content=b"e" * (4 * load.MAX_ANSWER_BYTES))  # never read
        return await self.router.handle_async_request(request)


def _soak(how: str, *, rounds: int = 4, after_s: float = 0.0, scenario: Scenario | None = None, **options):
    clock = VirtualClock()
    transport = Misbehaving(clock, how, after_s, scenario)

    async def go():
        opts = SoakOptions(url=transport.server.url, model="qwen3-8b", rounds=rounds, round_seconds=2,
                           **{"concurrency": 3, **options}, prompt_tokens=32, max_tokens=3,
                           metrics_urls=[transport.server.url + "/metrics"], output="json",
                           transport_factory=lambda: transport, clock=clock)
        plan, progress = await soak(opts)
        return build_report(opts, plan, progress), clock()

    report, elapsed = run(go(), clock)
    return report, elapsed, transport


def test_a_server_that_dies_stops_the_run_early_and_is_failing_with_the_time():
    report, elapsed, transport = _soak("dies", rounds=50, after_s=3.0)
    v = report.verdict
    assert v.verdict == "failing" and len(report.rounds) == 2  # died in round 2, nothing after
    down = [e for e in v.events if e["kind"] == "endpoint-down"]
    assert down == [{"kind": "endpoint-down", "at_s": 3.13}]
    assert v.evidence[0] == ("the endpoint stopped accepting connections at 3.1 s: the run stopped there instead of "
                             "running on against a dead server")
    # what the engine showed last (before: nothing of it in the verdict)
    assert v.evidence[1] == ("last seen, in round 2: KV usage max 37%, 0 running, 0 waiting, 0 preemptions, "
                             "memory 2.00 GiB")
    # backed off and stopped: a few attempts, not thousands, and far from the 100 s planned
    assert REFUSALS_END_ROUND <= transport.refused == 15 and round(elapsed, 6) == 3.880439


def test_a_restart_is_an_event_and_never_stable():
    report, _, _ = _soak("none", scenario=Scenario("stable", ttft_s=0.15, restart_at_s=3.0))
    v = report.verdict
    assert [e["kind"] for e in v.events] == ["restart"] and v.verdict == "failing"
    assert v.evidence[0] == ("the instance restarted at 3.2 s: a crash under load, whatever the figures before and "
                             "after it show")


def test_metrics_that_cannot_be_read_are_a_warning_and_make_stable_inconclusive():
    report, _, _ = _soak("metrics-404")
    v = report.verdict
    assert v.verdict == "inconclusive"
    assert v.warnings == [f"{report.settings['metrics_urls'][0]}: HTTP 404 in 16 of 16 scrapes: the verdict is drawn "
                          "without what it should have shown"]
    assert v.evidence[0].startswith("inconclusive: a metrics endpoint could not be read")


@pytest.mark.parametrize("how", ["metrics-other-names", "metrics-nan"])
def test_a_metrics_page_with_nothing_gsg_reads_is_a_warning_and_makes_stable_inconclusive(how):
    """Before: every scrape counted as read, no warning, and the run was called stable on no KV, preemption or
    memory reading at all."""
    report, _, _ = _soak(how)
    v = report.verdict
    assert v.verdict == "inconclusive"
    assert v.warnings == [f"{report.settings['metrics_urls'][0]}: no finite reading of the series gsg reads (another "
                          "exporter, or names of an engine release gsg does not know) in 16 of 16 scrapes: the verdict "
                          "is drawn without what it should have shown"]
    assert v.evidence[0].startswith("inconclusive: a metrics endpoint could not be read")


def test_one_metrics_url_in_front_of_two_replicas_is_a_warning_not_a_restart():
    # before: a restart at every other scrape, and the verdict "failing" on restarts that never happened; the
    # first two scrapes read (the second start time is a restart only if it stays)
    report, _, _ = _soak("metrics-load-balanced")
    v = report.verdict
    assert (v.verdict, sum(r.restarts for r in report.rounds)) == ("inconclusive", 0)
    assert v.warnings == ["metrics URL 1 answers from more than one process (process_start_time_seconds went back: a "
                          "load balancer?): its series not read; give each replica's URL in 14 of 16 scrapes: the "
                          "verdict is drawn without what it should have shown"]


def test_one_metrics_url_in_front_of_two_replicas_without_start_times_is_a_warning_not_restarts():
    # SGLang's and llama.cpp's pages carry no process start time: before, each fall of the counter from the other
    # replica's 7 to 0 was a restart and each rise 7 preemptions (the verdict "preemption", 7 restarts); now the second
    # fall comes back to 7 and the URL is not read from then on (its first rise, 7, could not be told apart)
    report, _, _ = _soak("metrics-load-balanced-untimed")
    v = report.verdict
    assert (v.verdict, sum(r.restarts for r in report.rounds)) == ("inconclusive", 0)
    assert [r.preemptions for r in report.rounds] == [7.0, None, None, None]
    assert v.warnings == [
        "metrics URL 1 answers from more than one process (a preemption counter fell and came back in the next "
        "scrape: a load balancer?): its series not read from now on; give each replica's URL in 1 of 16 scrapes: the "
        "verdict is drawn without what it should have shown",
        "metrics URL 1 answers from more than one process (a preemption counter fell and came back in the next "
        "scrape: a load balancer?): its series not read; give each replica's URL in 12 of 16 scrapes: the verdict "
        "is drawn without what it should have shown"]


def test_fewer_than_three_rounds_are_inconclusive():
    assert _soak("none", rounds=2)[0].verdict.verdict == "inconclusive"
    assert _soak("none", rounds=3)[0].verdict.verdict == "stable"  # the neighbour: enough rounds


@pytest.mark.parametrize("how,reason,after_s", [
    ("not-streamed", NOT_STREAMED, 3.0),  # from round 2: a first round of them ends the soak (below)
    ("endless-line", "stream line over 1 MiB", 0.0),  # the limits scaled down below: the test's CPU, not the rule
    ("gzip", "compressed answer", 3.0),
    ("login-page", NOT_A_STREAM_HTML, 3.0),
    ("huge-error", "HTTP 500", 0.0),
])
def test_answers_gsg_does_not_read_are_named_failures(how, reason, after_s, monkeypatch):
    monkeypatch.setattr(load, "MAX_LINE_BYTES", load.MiB)  # as shipped; the answer cap scaled to 4 MiB
    monkeypatch.setattr(load, "MAX_ANSWER_BYTES", 4 * load.MiB)
    report, _, _ = _soak(how, rounds=3, after_s=after_s)
    assert report.verdict.verdict == "failing"
    assert set(report.rounds[-1].error_reasons) == {reason}
    assert (report.rounds[0].errors == 0) is (after_s > 0)
    assert any(reason in e for e in report.verdict.evidence)


@pytest.mark.parametrize("how,reason", [
    ("not-streamed", NOT_STREAMED),
    ("gzip", "compressed answer"),
    ("login-page", NOT_A_STREAM_HTML),
])
def test_an_endpoint_that_cannot_be_soaked_ends_the_soak_after_round_1_in_one_line(how, reason):
    # before: every request of all 3 rounds failed with the reason, and a failing verdict came at the end
    with pytest.raises(GsgError) as raised:
        _soak(how, rounds=3)
    assert str(raised.value) == (f"http://fake-0.test:80/v1/chat/completions: {reason} for every request of round 1 "
                                 "(check the URL, the key and --model)")


# a sweep of two steps of three 2 s rounds: the first step runs 0-6 s of the server's uptime, the second 6-12 s
SWEEP = {"sweep": "concurrency:2,3", "slo": "ttft_p99=10s", "rounds": 3}


def _steps(report) -> list[tuple[float, str, str]]:
    return [(s["value"], s["verdict"], s["verdict_reason"]) for s in report.sweep["steps"]]


def test_each_sweep_step_has_its_own_verdict_a_restart_in_the_second_step_fails_that_step_only():
    steady = Scenario("stable", ttft_s=0.15, ttft_jitter=0.0, spike_rate=0.0, restart_at_s=8.0)
    report, _, _ = _soak("none", scenario=steady, **SWEEP)
    (first, first_verdict, first_reason), (second, second_verdict, second_reason) = _steps(report)
    assert (first, first_verdict) == (2, "stable")
    assert first_reason == ("TTFT p95 0.150 s → 0.150 s over 3 rounds (Theil–Sen +0 % across the run; p50 +0 %, 67% "
                            "of round pairs rising): flat")
    assert (second, second_verdict) == (3, "failing")
    # restart_at_s 8.0, as the next scrape saw it
    assert second_reason == ("the instance restarted at 8.2 s: a crash under load, whatever the figures before and "
                             "after it show")
    assert "  sweep: concurrency 2: met (goodput 100.0%); verdict stable" in render_text(report)


def test_a_server_dying_in_the_second_step_fails_that_step_and_not_the_first():
    report, _, _ = _soak("dies", after_s=7.0, **SWEEP)
    assert [(value, verdict) for value, verdict, _ in _steps(report)] == [(2, "stable"), (3, "failing")]
    assert _steps(report)[1][2] == ("the endpoint stopped accepting connections at 7.1 s: the run stopped there "
                                    "instead of running on against a dead server")
    # the step it died in is listed, as a miss on what it ran, not dropped from the sweep
    died = report.sweep["steps"][1]
    assert died["met"] is False and died["misses"] == ["13 of 27 requests failed (48.1% > 5%)"]


def test_a_server_dying_in_the_first_step_ends_the_sweep_there():
    report, _, _ = _soak("dies", after_s=1.0, **SWEEP)
    assert [(value, verdict) for value, verdict, _ in _steps(report)] == [(2, "failing")]
    assert report.sweep["best"] is None and report.sweep["not_run"] == [3] and report.sweep["stopped_early"] is True
    assert report.sweep["steps"][0]["met"] is False
    assert report.sweep["steps"][0]["misses"] == ["20 of 31 requests failed (64.5% > 5%)",
                                                  "round 2: ttft_p99 not measured (no successful request)"]


def test_a_step_of_fewer_than_three_rounds_is_inconclusive_on_its_own():
    report, _, _ = _soak("none", **{**SWEEP, "rounds": 2})
    assert _steps(report) == [(2, "inconclusive", "inconclusive: 2 round(s) completed; a trend needs at least 3"),
                              (3, "inconclusive", "inconclusive: 2 round(s) completed; a trend needs at least 3")]
    assert "  sweep: concurrency 3: met (goodput 100.0%); verdict inconclusive" in render_text(report)
