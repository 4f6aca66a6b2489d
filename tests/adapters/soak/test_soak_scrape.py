"""Metric fixtures of every engine and version, parsed by prometheus_client and normalised to one Snapshot."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import httpx
import pytest

from gpustack_guard.adapters.soak.scrape import Scraper, parse_samples, process_tree_rss, relevant_lines
from gpustack_guard.core.soak.metrics import Normaliser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "soak"


def snapshot_of(name: str, model: str | None = None):
    return Normaliser(model=model).snapshot(1.0, parse_samples((FIXTURES / name).read_text()))


def test_vllm_old_names_v0():
    s = snapshot_of("vllm-0.8.prom", "llama-70b")
    assert (s.kv_usage, s.preemptions, s.running, s.waiting) == (0.987, 0.0, 17.0, 15.0)
    assert s.resident_bytes == 7_516_192_768
    assert s.engines == ("vLLM",)


def test_vllm_new_names_sum_over_the_engine_label_and_take_the_fullest_pool():
    s = snapshot_of("vllm-0.11.prom", "Qwen/Qwen3-8B")
    assert (s.kv_usage, s.running, s.waiting) == (0.62, 11.0, 3.0)
    assert s.resident_bytes == 3_221_225_472


def test_sglang_prefers_the_retraction_counter_to_the_gauge():
    norm = Normaliser(model="qwen3-8b")
    text = (FIXTURES / "sglang.prom").read_text()
    first = norm.snapshot(0.0, parse_samples(text))
    second = norm.snapshot(1.0, parse_samples(text.replace("_total{model_name=\"qwen3-8b\"} 11.0",
                                                           "_total{model_name=\"qwen3-8b\"} 14.0")))
    assert (first.kv_usage, first.running, first.waiting, first.preemptions) == (0.93, 9.0, 4.0, 0.0)
    assert second.preemptions == 3.0
    assert second.engines == ("SGLang",)


def test_llamacpp_has_no_memory_and_no_preemption_counter():
    s = snapshot_of("llamacpp.prom")
    assert (s.kv_usage, s.running, s.waiting, s.preemptions, s.resident_bytes) == (0.25, 3.0, 1.0, None, None)


def test_gpustack_exporter_keeps_our_model_and_sums_the_gpus():
    s = snapshot_of("gpustack-exporter.prom", "llama-70b")
    assert (s.kv_usage, s.running, s.waiting, s.preemptions) == (0.71, 12.0, 3.0, 0.0)
    assert s.gpu_used_bytes == 46_170_898_432 + 45_097_156_608
    assert s.gpu_allocated_bytes == 2 * 43_243_274_240
    assert s.gpu_outside_pool_bytes == 46_170_898_432 + 45_097_156_608 - 2 * 43_243_274_240
    assert s.gpu_total_bytes == 2 * 51_527_024_640
    assert s.host_total_bytes == 274_877_906_944


def test_gpustack_raw_passes_engine_names_with_instance_labels():
    s = snapshot_of("gpustack-raw.prom", "llama-70b")
    assert (s.kv_usage, s.running) == (0.71, 12.0)


def test_a_model_name_no_series_carries_keeps_one_models_series_not_several():
    """A direct vLLM may serve under a name other than --model: then its series are still ours. Two models' series,
    neither named so, are not read: before, their running requests were summed as ours (42) and the other model's
    KV usage could be the verdict's."""
    s = snapshot_of("gpustack-raw.prom", "not-this-name")
    assert (s.kv_usage, s.running, s.errors) == (
        None, None, ("series of 2 models, none named as --model: theirs not read (pass the served name)",))
    one = Normaliser(model="not-this-name").snapshot(1.0, [
        x for x in parse_samples((FIXTURES / "gpustack-raw.prom").read_text()) if x.labels.get("model") != "embedder"])
    assert (one.kv_usage, one.running, one.errors) == (0.71, 12.0, ())


def test_both_vllm_kv_names_at_once_count_once():
    text = ('# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name="m"} 0.5\n'
            '# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{model_name="m"} 0.9\n'
            '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 4\n'
            '# TYPE gpustack:num_requests_running gauge\ngpustack:num_requests_running{model_name="m"} 4\n')
    s = Normaliser(model="m").snapshot(0.0, parse_samples(text))
    assert (s.kv_usage, s.running) == (0.5, 4.0)


def test_counter_family_names_lose_total_but_sample_names_keep_it():
    samples = parse_samples((FIXTURES / "vllm-0.8.prom").read_text())
    assert "vllm:num_preemptions_total" in {s.name for s in samples}


def test_histograms_and_unread_families_are_dropped_before_parsing():
    kept = relevant_lines((FIXTURES / "vllm-0.11.prom").read_text())
    assert "inter_token_latency" not in kept and "python_gc" not in kept and "prefix_cache" not in kept
    assert "vllm:num_preemptions_total{engine=\"1\"" in kept


COUNTER_MIXED = ("metrics URL 1 answers from more than one process (a preemption counter fell and came back in the "
                 "next scrape: a load balancer?): its series not read from now on; give each replica's URL")
COUNTER_MIXED_SINCE = ("metrics URL 1 answers from more than one process (a preemption counter fell and came back in "
                       "the next scrape: a load balancer?): its series not read; give each replica's URL")


@pytest.mark.parametrize("values, started, seen, restarts_seen_s, errors", [
    # no process start time (SGLang's and llama.cpp's pages): a fall is a restart once the next scrape stays below
    # where the counter was, dated at the fall, counted from 0; before, a restart at once
    ([10, 14, 2, 5], None, [(0.0, False), (4.0, False), (4.0, False), (9.0, True)], [2.0], {}),
    ([6, 8, 0, 3, 9], None, [(0.0, False), (2.0, False), (2.0, False), (5.0, True), (11.0, False)], [2.0], {}),
    # a crash loop: down twice, one restart, dated at the first fall
    ([6, 8, 3, 1, 2], None, [(0.0, False), (2.0, False), (2.0, False), (2.0, False), (4.0, True)], [2.0], {}),
    # one URL in front of two replicas answering in turn (5, 7): before, a restart every other scrape and 2 more
    # preemptions each time (FAILING for two idle replicas); the first rise cannot be told from preemptions
    ([5, 7, 5, 7, 5, 7], None, [(0.0, False), (2.0, False), (2.0, False), (2.0, False), (None, False),
                               (None, False)], [], {3: (COUNTER_MIXED,), 4: (COUNTER_MIXED_SINCE,),
                                                    5: (COUNTER_MIXED_SINCE,)}),
    # a page with a process start time (vLLM's): the start time tells restarts, a fall counts at once
    ([10, 14, 2, 5], 100.0, [(0.0, False), (4.0, False), (6.0, True), (9.0, False)], [2.0], {}),
])
def test_a_counter_reset_is_a_restart_not_a_negative_delta(values, started, seen, restarts_seen_s, errors):
    norm = Normaliser(model="m")
    line = '# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total{{model_name="m"}} {}\n'
    line += "" if started is None else f"process_start_time_seconds {started}\n"
    snaps = [norm.snapshot(float(i), parse_samples(line.format(v))) for i, v in enumerate(values)]
    assert [(s.preemptions, s.restarted) for s in snaps] == seen
    assert [s.restart_seen_s for s in snaps if s.restarted] == restarts_seen_s
    assert [s.errors for s in snaps] == [errors.get(i, ()) for i in range(len(values))]


def test_a_new_process_start_time_is_a_restart_once_two_scrapes_say_it_dated_at_the_first():
    norm = Normaliser()
    text = "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {}\n"
    snaps = [norm.snapshot(float(t), parse_samples(text.format(v))) for t, v in enumerate((100, 100, 250, 250, 250))]
    assert [(s.restarted, s.restart_seen_s) for s in snaps] == [(False, None), (False, None), (False, None),
                                                                (True, 2.0), (False, None)]


MIXED = ("metrics URL 1 answers from more than one process (process_start_time_seconds went back: a load balancer?): "
         "its series not read; give each replica's URL")


@pytest.mark.parametrize("pages, seen, restarts_seen_s", [
    # one URL in front of two idle replicas, answering in turn; before: 16 preemptions and 5 restarts in 6 scrapes
    ([(5, 100.0), (7, 200.0)] * 3, [(0.0, False, 2), (None, False, 2), (None, False, None), (None, False, None),
                                    (None, False, None), (None, False, None)], []),
    # three replicas, in turn
    ([(5, 100.0), (7, 200.0), (9, 300.0)] * 2, [(0.0, False, 2), (None, False, 2), (None, False, 2),
                                                (None, False, None), (None, False, None), (None, False, None)], []),
    # the neighbours: a restart (its counter from 0 again), and two in a row (a crash loop) read as one, dated at
    # the scrape that first saw a new start time
    ([(5, 100.0), (6, 100.0), (1, 300.0), (2, 300.0), (3, 300.0)],
     [(0.0, False, 2), (1.0, False, 2), (None, False, 2), (3.0, True, 2), (4.0, False, 2)], [2.0]),
    ([(5, 100.0), (1, 300.0), (0, 400.0), (1, 400.0), (2, 400.0)],
     [(0.0, False, 2), (None, False, 2), (None, False, 2), (1.0, True, 2), (2.0, False, 2)], [1.0]),
])
def test_one_metrics_url_answered_by_several_processes_is_not_read(pages, seen, restarts_seen_s):
    norm = Normaliser(model="m")
    snaps = [norm.snapshot(float(t), parse_samples(_replica(count, started)))
             for t, (count, started) in enumerate(pages)]
    assert [(s.preemptions, s.restarted, s.running) for s in snaps] == seen
    assert [s.errors for s in snaps] == [() if running is not None else (MIXED,) for _, _, running in seen]
    assert [s.restart_seen_s for s in snaps if s.restarted] == restarts_seen_s


def test_pid_rss_counts_the_process_tree():
    own = process_tree_rss(os.getpid())
    assert own is not None and own > 10 * 1024 * 1024
    assert process_tree_rss(2 ** 22 + 12345) is None


def test_scraper_reports_a_dead_endpoint_in_the_snapshot_not_as_an_exception():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/ok":
            return httpx.Response(200, text=(FIXTURES / "llamacpp.prom").read_text())
        return httpx.Response(503)

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await Scraper(client, ["http://e/ok", "http://e/down"], None, None, 0.0).scrape_once()

    s = asyncio.run(go())
    assert s.running == 3.0
    assert s.errors == ("http://e/down: HTTP 503",)


@pytest.mark.parametrize("garbage", ['vllm:num_requests_running{model_name="m" 3\n', "vllm:num_requests_running abc\n"])
def test_garbage_text_is_an_endpoint_error(garbage):
    def handler(request):
        return httpx.Response(200, text=garbage)

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await Scraper(client, ["http://e/metrics"], None, None, 0.0).scrape_once()

    s = asyncio.run(go())
    assert s.running is None
    assert len(s.errors) == 1 and s.errors[0].startswith("http://e/metrics: not Prometheus text")


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-Inf"])
def test_a_sample_that_is_no_finite_number_is_no_reading(value):
    # the exposition format allows these; they reached the trends, the chart axes (an internal error on inf) and
    # the JSON report (NaN is no JSON)
    text = ("# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{model_name=\"m\"} " + value + "\n"
            "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3.0\n"
            "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes " + value + "\n")
    s = Normaliser(model="m").snapshot(1.0, parse_samples(text))
    assert (s.kv_usage, s.running, s.resident_bytes) == (None, 3.0, None)


def _partly(name: str, unread: int = 1) -> str:
    return f"{name}: {unread} of 2 series NaN or infinite, the family not read (a sum or maximum over the rest is no reading)"


@pytest.mark.parametrize("texts, field, read, errors", [
    # one engine's KV gauge unread beside the other's 0.2: before, the pool read as 20 % full
    (['vllm:kv_cache_usage_perc{engine="0"} 0.2\nvllm:kv_cache_usage_perc{engine="1"} NaN\n'], "kv_usage", None,
     (_partly("vllm:kv_cache_usage_perc"),)),
    # one GPU's memory unread: before, the total dropped by 80 GB for that scrape (then "grew" by as much)
    (['gpustack:worker_node_gram_used_bytes{gpu="0"} 8e10\ngpustack:worker_node_gram_used_bytes{gpu="1"} +Inf\n'],
     "gpu_used_bytes", None, (_partly("gpustack:worker_node_gram_used_bytes"),)),
    (['vllm:num_requests_running{engine="0"} 5\nvllm:num_requests_running{engine="1"} -Inf\n'], "running", None,
     (_partly("vllm:num_requests_running"),)),
    # across two --metrics-url, one replica's reading NaN: the sum over the other is no reading either
    (['vllm:num_requests_waiting{model_name="m"} 7\n', 'vllm:num_requests_waiting{model_name="m"} NaN\n'],
     "waiting", None, (_partly("vllm:num_requests_waiting"),)),
    # the neighbours: all NaN is no reading, silently (a gauge with nothing to report); all finite is read
    (['vllm:kv_cache_usage_perc{engine="0"} NaN\nvllm:kv_cache_usage_perc{engine="1"} NaN\n'], "kv_usage", None, ()),
    (['vllm:kv_cache_usage_perc{engine="0"} 0.2\nvllm:kv_cache_usage_perc{engine="1"} 0.9\n'], "kv_usage", 0.9, ()),
    # another model's NaN on GPUStack's exporter does not make ours unread
    (['gpustack:num_requests_running{model="m"} 4\ngpustack:num_requests_running{model="other"} NaN\n'],
     "running", 4.0, ()),
])
def test_a_family_read_in_part_is_not_read(texts, field, read, errors):
    samples = [s for source, text in enumerate(texts) for s in parse_samples(text, source)]
    snapshot = Normaliser(model="m").snapshot(1.0, samples)
    assert (getattr(snapshot, field), snapshot.errors) == (read, errors)


def test_a_counter_read_in_part_for_one_scrape_keeps_its_run_total():
    norm = Normaliser(model="m")
    pages = ["10", "NaN", "14"]
    snaps = [norm.snapshot(float(t), parse_samples(f'vllm:num_preemptions_total{{engine="0"}} {v}\n'
                                                   'vllm:num_preemptions_total{engine="1"} 2\n'))
             for t, v in enumerate(pages)]
    assert [(s.preemptions, s.restarted, len(s.errors)) for s in snaps] == [(0.0, False, 0), (None, False, 1),
                                                                            (4.0, False, 0)]


def _cut_short_run(answer_after_s: float, round_s: float):
    """A Scraper over one endpoint that answers after `answer_after_s` (asyncio time), run for `round_s`."""
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(answer_after_s)
        return httpx.Response(200, text=(FIXTURES / "llamacpp.prom").read_text())

    async def go():
        into: list = []
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            scraper = Scraper(client, ["http://e/metrics"], os.getpid(), None, time.perf_counter())
            task = asyncio.ensure_future(scraper.run(into, 0.1))
            await asyncio.sleep(round_s)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        return into

    return asyncio.run(go())


def test_a_round_that_ends_while_metrics_answer_slowly_keeps_the_process_memory():
    # the CI run where llama-server took seconds to answer /metrics: the round ended first and had no memory
    # reading at all, so the soak lost its memory source (it was read only once the endpoints had answered)
    into = _cut_short_run(answer_after_s=5.0, round_s=0.3)
    assert len(into) == 1
    cut = into[0]
    assert cut.cut_short and cut.pid_rss_bytes is not None and cut.pid_rss_bytes > 10 * 1024 * 1024
    assert cut.running is None and cut.errors == ()
    assert 0.0 <= cut.t < 0.1  # when the tick started and the memory was read, not when the round ended


def test_ticks_that_ran_to_the_end_are_not_cut_short():
    into = _cut_short_run(answer_after_s=0.0, round_s=0.35)
    assert len(into) >= 3
    assert not any(s.cut_short for s in into)
    assert all(s.running == 3.0 and s.pid_rss_bytes for s in into)


def test_a_cut_short_tick_is_no_scrape_so_a_hung_endpoint_still_counts_as_failing():
    from gpustack_guard.core.soak.metrics import Snapshot
    from gpustack_guard.core.soak.rounds import aggregate_round

    cut = Snapshot(t=0.5, pid_rss_bytes=100.0, cut_short=True)
    idle = Snapshot(t=2.5, pid_rss_bytes=90.0, errors=("http://e/metrics: TimeoutError",))
    stats = aggregate_round(0, 0.0, 2.0, [], [cut], idle)
    assert (stats.scrapes, stats.scrape_errors) == (1, 1)
    assert (stats.memory["pid_rss"], stats.idle_memory["pid_rss"]) == (100.0, 90.0)


def test_a_cut_short_tick_adds_no_scrape_error_so_errors_never_outnumber_scrapes():
    # the process gone: every tick reads no memory, the cut-short one too; counting its error as a scrape's
    # while not counting the tick itself read "--pid 7: no such process in 3 of 2 scrapes"
    from gpustack_guard.core.soak.metrics import Snapshot
    from gpustack_guard.core.soak.rounds import aggregate_round
    from gpustack_guard.core.soak.verdict import classify

    gone = ("--pid 7: no such process",)
    during = [Snapshot(t=0.2, errors=gone), Snapshot(t=1.2, errors=gone, cut_short=True)]
    stats = aggregate_round(0, 0.0, 2.0, [], during, Snapshot(t=2.5, errors=gone))
    assert (stats.scrapes, stats.scrape_errors, stats.scrape_error_reasons) == (2, 2, {gone[0]: 2})
    warnings = classify([stats], None).warnings
    assert warnings == ["--pid 7: no such process in 2 of 2 scrapes: the verdict is drawn without what it "
                        "should have shown"]


_OPENMETRICS = """# HELP vllm:num_preemptions Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions counter
vllm:num_preemptions_total{engine="0",model_name="m"} 3.0 # {trace_id="abc"} 1.0 1700000000.0
vllm:num_preemptions_created{engine="0",model_name="m"} 1.7e9
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5 1700000000.000
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="m"} 9
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 4
vllm:time_to_first_token_seconds_count{model_name="m"} 9
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 4
# EOF
"""


def test_openmetrics_text_and_a_broken_histogram_still_read_the_gauges():
    """OpenMetrics (`_created`, an exemplar, a timestamp, `# EOF`) and a histogram without `+Inf` and with its
    buckets out of order: the histogram is no family gsg reads, dropped unparsed; `_created` is no preemption."""
    norm = Normaliser(model="m")
    first = norm.snapshot(1.0, parse_samples(_OPENMETRICS))
    assert (first.kv_usage, first.running, first.preemptions, first.errors) == (0.5, 4.0, 0.0, ())
    second = norm.snapshot(2.0, parse_samples(_OPENMETRICS.replace("} 3.0 #", "} 5.0 #")))
    assert (second.preemptions, second.restarted) == (2.0, False)


class _Drip(httpx.AsyncByteStream):
    """A /metrics body that never ends: a line of a gauge every second."""

    async def __aiter__(self):
        while True:
            await asyncio.sleep(1.0)
            yield b"vllm:num_requests_running 1\n"


@pytest.mark.parametrize("how", ["drip", "read-timeout"])
def test_a_scrape_that_never_finishes_ends_at_its_deadline_and_says_so(how):
    from support.virtual_time import VirtualClock, run

    from gpustack_guard.adapters.soak.scrape import SCRAPE_DEADLINE_S

    clock = VirtualClock()

    def handler(request: httpx.Request) -> httpx.Response:
        if how == "read-timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        return httpx.Response(200, stream=_Drip())

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            snap = await Scraper(client, ["http://e/metrics?token=s3cret"], None, None, 0.0, clock).scrape_once()
            return snap, clock()
    snap, elapsed = run(go(), clock)
    # before: "TimeoutError" / "ReadTimeout", an exception's name
    assert snap.errors == ("http://e/metrics?token=********: no whole answer within 5 s",)
    assert elapsed <= SCRAPE_DEADLINE_S + 0.01


@pytest.mark.parametrize("status, key, error", [
    # before: "HTTP 401" alone, as if the engine were broken
    (401, None, "http://e/metrics: HTTP 401 (it wants credentials; gsg sends the API key only to a metrics URL on "
                "the endpoint's origin)"),
    (403, None, "http://e/metrics: HTTP 403 (it wants credentials; gsg sends the API key only to a metrics URL on "
                "the endpoint's origin)"),
    (404, None, "http://e/metrics: HTTP 404"),
    # a key sent (a metrics URL on the endpoint's origin, runner.keys_for_origin) and refused says so, unshown
    (401, "sk-metrics-7731", "http://e/metrics: HTTP 401 (the API key was refused)"),
    (403, "sk-metrics-7731", "http://e/metrics: HTTP 403 (the API key was refused)"),
])
def test_a_metrics_url_that_wants_auth_says_whether_a_key_was_sent(status, key, error):
    seen: list = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(status, text="no")

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            keys = {"http://e/metrics": key} if key else {}
            return await Scraper(client, ["http://e/metrics"], None, None, 0.0, keys=keys).scrape_once()
    snap = asyncio.run(go())
    assert (snap.errors, seen) == ((error,), [f"Bearer {key}" if key else None])
    assert "sk-metrics" not in snap.errors[0]


def _replica(preemptions: int, started: float) -> str:
    return (f'vllm:num_preemptions_total{{model_name="m",engine="0"}} {preemptions}\n'
            f'vllm:num_requests_running{{model_name="m",engine="0"}} 2\n'
            f"process_start_time_seconds {started}\n")


def test_two_replicas_with_the_same_series_are_two_series_not_one_restarting():
    """Two --metrics-url of two replicas of one engine: the same names and labels. Before, read as one series, each
    scrape saw the counter fall from 10 to 3 and the start time move: a restart every scrape, and preemptions
    40 where the replicas counted 2 + 2 (a false restart and a false preemption verdict)."""
    pages = {"/a": [_replica(10, 100.0), _replica(11, 100.0), _replica(12, 100.0), _replica(12, 100.0)],
             "/b": [_replica(3, 200.0), _replica(3, 200.0), _replica(4, 200.0), _replica(5, 200.0)]}
    asked = {"/a": 0, "/b": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        page = pages[request.url.path][asked[request.url.path]]
        asked[request.url.path] += 1
        return httpx.Response(200, text=page)

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            scraper = Scraper(client, ["http://a.test/a", "http://b.test/b"], None, "m", 0.0)
            return [await scraper.scrape_once() for _ in range(4)]

    snapshots = asyncio.run(go())
    assert [(s.preemptions, s.restarted, s.running) for s in snapshots] == [
        (0.0, False, 4.0), (1.0, False, 4.0), (3.0, False, 4.0), (4.0, False, 4.0)]


def test_one_replica_restarting_beside_another_is_one_restart():
    norm = Normaliser()
    a = [parse_samples(_replica(v, 100.0), 0) for v in (5, 6)] + [parse_samples(_replica(v, 300.0), 0) for v in (1, 2)]
    b = [parse_samples(_replica(v, 200.0), 1) for v in (7, 8, 9, 10)]
    snapshots = [norm.snapshot(float(t), a[t] + b[t]) for t in range(4)]
    # the restarted replica's counters wait a scrape for its start time to be confirmed; the other's go on
    assert [(s.preemptions, s.restarted, s.restart_seen_s) for s in snapshots] == [
        (0.0, False, None), (2.0, False, None), (3.0, False, None), (6.0, True, 2.0)]
