"""A hostile /metrics: too many series, huge lines, a series given twice, labels that change every scrape. Each is
one error line naming the endpoint, and nothing gsg keeps across scrapes grows without bound."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from gpustack_guard.adapters.soak import scrape
from gpustack_guard.adapters.soak.scrape import (
    MAX_METRICS_LINE_BYTES,
    MAX_METRICS_LINES,
    MetricsRefused,
    Scraper,
    parse_samples,
)
from gpustack_guard.core.soak.metrics import KEEP_GONE_SERIES, Normaliser

RUNNING = "vllm:num_requests_running"


def _series(count: int, name: str = RUNNING, label: str = "engine") -> str:
    return "".join(f'{name}{{{label}="{i}"}} 1\n' for i in range(count))


@pytest.mark.parametrize("text, outcome", [
    (_series(MAX_METRICS_LINES), MAX_METRICS_LINES),  # at the bound: read
    (_series(MAX_METRICS_LINES + 1), f"more than {MAX_METRICS_LINES:,} lines of the families gsg reads"),
    (f"# TYPE {RUNNING} gauge\n" + _series(MAX_METRICS_LINES),  # its # TYPE line counts too
     f"more than {MAX_METRICS_LINES:,} lines of the families gsg reads"),
    (f"# HELP {RUNNING} x\n" * (MAX_METRICS_LINES + 1), f"more than {MAX_METRICS_LINES:,} lines of the families "
                                                         "gsg reads"),
    (_series(3 * MAX_METRICS_LINES, name="unread_family") + _series(2), 2),  # lines of other families: not counted
    (f'{RUNNING}{{l="{"v" * (MAX_METRICS_LINE_BYTES - 40)}"}} 1\n', 1),  # under the line bound
    (f'{RUNNING}{{l="{"v" * MAX_METRICS_LINE_BYTES}"}} 1\n', f"a line of {RUNNING} is over 16 KiB"),
    (f'# HELP {RUNNING} {"h" * MAX_METRICS_LINE_BYTES}\n', f"a line of {RUNNING} is over 16 KiB"),
    (f'unread_family{{l="{"v" * 10 * MAX_METRICS_LINE_BYTES}"}} 1\n' + _series(1), 1),  # a long unread line
    (f'{RUNNING}{{a="1"}} 3\n{RUNNING}{{a="1"}} 3\n', 1),  # the same sample twice: read once, not summed twice
    (f'{RUNNING}{{a="1"}} 3\n{RUNNING}{{a="1"}} 4\n', f"the series {RUNNING} appears twice with different values"),
    (f'{RUNNING}{{a="1",b="2"}} 3\n{RUNNING}{{b="2",a="1"}} 4\n',  # label order is no difference
     f"the series {RUNNING} appears twice with different values"),
    (f'{RUNNING}{{a="1"}} NaN\n{RUNNING}{{a="1"}} 3\n', f"the series {RUNNING} appears twice with different values"),
    (f'{RUNNING}{{a="1"}} NaN\n{RUNNING}{{a="1"}} NaN\n', 1),  # the same no-reading twice: once (the Normaliser drops it)
    (f'{RUNNING}{{a="1"}} 3\n{RUNNING}{{a="2"}} 3\n', 2),  # other labels: two series
    # OpenMetrics' end: what follows (a second page glued on) is not read; before, read, or refused as a series twice
    (f'{RUNNING}{{a="1"}} 3\n# EOF\n{RUNNING}{{a="1"}} 4\n{RUNNING}{{a="2"}} 3\n', 1),
    (f'{RUNNING}{{a="1"}} 3\n# EOF  \r\n{RUNNING}{{a="2"}} 3\n', 1),
    (f'{RUNNING}{{a="1"}} 3\n# EOF is a comment here\n{RUNNING}{{a="2"}} 3\n', 2),  # no end: a comment
])
def test_an_answer_past_the_bounds_or_with_a_series_twice_is_refused(text, outcome):
    if isinstance(outcome, int):
        assert len(parse_samples(text)) == outcome
    else:
        with pytest.raises(MetricsRefused) as refused:
            parse_samples(text)
        assert str(refused.value) == outcome


def test_the_scraper_names_the_endpoint_and_quotes_no_server_text():
    secret = "sk-" + "s" * 40
    text = f'{RUNNING}{{token="{secret}"}} 1\n{RUNNING}{{token="{secret}"}} 2\n'

    async def go():
        transport = httpx.MockTransport(lambda request: httpx.Response(200, text=text))
        async with httpx.AsyncClient(transport=transport) as client:
            return await Scraper(client, ["http://e/metrics"], None, None, 0.0).scrape_once()

    snapshot = asyncio.run(go())
    assert snapshot.errors == (f"http://e/metrics: the series {RUNNING} appears twice with different values",)
    assert snapshot.running is None


@pytest.mark.parametrize("per_scrape", [1, 500, 5_000])
def test_counters_whose_labels_change_every_scrape_are_remembered_within_a_bound(per_scrape):
    """Before: every series ever seen was kept (a request id as a label grew the table by a scrape a second)."""
    norm = Normaliser()
    for tick in range(12):
        text = "".join(f'vllm:num_preemptions_total{{req="{tick}-{i}"}} 1\n' for i in range(per_scrape))
        text += "".join(f'process_start_time_seconds{{req="{tick}-{i}"}} 5\n' for i in range(per_scrape))
        norm.snapshot(float(tick), parse_samples(text))
        assert len(norm.preemptions.last) <= 2 * per_scrape + KEEP_GONE_SERIES
        assert len(norm.start_times) <= 2 * per_scrape + KEEP_GONE_SERIES


def test_a_steady_series_keeps_its_delta_and_restart_while_others_come_and_go():
    norm = Normaliser()
    totals, restarts = [], []
    for tick, value in enumerate((1, 4, 9, 2, 6)):
        text = f'vllm:num_preemptions_total{{engine="0"}} {value}\n'
        text += "".join(f'vllm:num_preemptions_total{{req="{tick}-{i}"}} 0\n' for i in range(KEEP_GONE_SERIES))
        snapshot = norm.snapshot(float(tick), parse_samples(text))
        totals.append(snapshot.preemptions)
        restarts.append(snapshot.restarted)
    # the fall to 2 is a restart once the next scrape stays below 9 (no process start time on the page)
    assert totals == [0.0, 3.0, 8.0, 8.0, 14.0]
    assert restarts == [False, False, False, False, True]


def test_the_bounds_are_the_documented_ones():
    assert (scrape.MAX_METRICS_LINES, scrape.MAX_METRICS_LINE_BYTES, KEEP_GONE_SERIES) == (10_000, 16 * 1024, 1_000)


@pytest.mark.parametrize("text, samples", [
    # a label value holding a character str.splitlines() cuts at; before: "not Prometheus text"
    (f'{RUNNING}{{model_name="a\u2028b"}} 3\n', [("a\u2028b", 3.0)]),
    (f'{RUNNING}{{model_name="a\x85b"}} 3\n', [("a\x85b", 3.0)]),
    (f'{RUNNING}{{model_name="a\x1cb"}} 3\n', [("a\x1cb", 3.0)]),
    (f'{RUNNING}{{model_name="a\\"b\\nc\\\\"}} 3\n', [('a"b\nc\\', 3.0)]),  # escaped quote, newline, backslash
    (f'{RUNNING}{{model_name="m"}} 3\r\n{RUNNING}{{model_name="n"}} 4\r\n', [("m", 3.0), ("n", 4.0)]),
    (f'{RUNNING}{{model_name="m"}} 3\r{RUNNING}{{model_name="n"}} 4\r', [("m", 3.0), ("n", 4.0)]),
    (f'# TYPE {RUNNING} gauge\n{RUNNING}{{model_name="m"}} 3\n# EOF\n', [("m", 3.0)]),  # OpenMetrics' end marker
    (f'{RUNNING}{{model_name="m"}} 3 1700000000000\n', [("m", 3.0)]),  # a timestamp
    # tokens separated by tabs, or a line indented (the parser reads both); before: the line dropped unread
    (f'{RUNNING}{{model_name="m"}}\t3\n', [("m", 3.0)]),
    (f'# TYPE\t{RUNNING}\tgauge\n{RUNNING}{{model_name="m"}}\t3\t1700000000000\n', [("m", 3.0)]),
    (f'  {RUNNING}{{model_name="m"}} 3\n\t{RUNNING}{{model_name="n"}} 4\n', [("m", 3.0), ("n", 4.0)]),
])
def test_label_values_and_line_ends_the_formats_allow_are_read(text, samples):
    assert [(s.labels["model_name"], s.value) for s in parse_samples(text)] == samples


@pytest.mark.parametrize("text", [f"{RUNNING}\t3\n", f"{RUNNING} \t 3 \t 1700000000000\n", f"\t{RUNNING}\t3\n",
                                  f"# TYPE\t{RUNNING}\tgauge\n{RUNNING}\t3\n"])
def test_a_series_without_labels_separated_by_tabs_is_read(text):
    """Before: the name was cut at a space alone ('vllm:num_requests_running\t3'), no family gsg reads, and the
    line was dropped: the running count unread, and nothing said so."""
    assert [(s.name, s.value) for s in parse_samples(text)] == [(RUNNING, 3.0)]
    assert Normaliser().snapshot(0.0, parse_samples(text)).running == 3.0


@pytest.mark.parametrize("text, read", [
    # a gauge typed counter: the parser named its sample vllm:num_requests_running_total; before: dropped, unsaid
    (f"# TYPE {RUNNING} counter\n{RUNNING} 3\n", [(RUNNING, 3.0)]),
    ("# TYPE vllm:kv_cache_usage_perc counter\nvllm:kv_cache_usage_perc 0.5\n", [("vllm:kv_cache_usage_perc", 0.5)]),
    # a counter typed gauge, or typed counter under its sample's name, reads as it always did
    ("# TYPE vllm:num_preemptions_total gauge\nvllm:num_preemptions_total 7\n", [("vllm:num_preemptions_total", 7.0)]),
    ("# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total 7\n",
     [("vllm:num_preemptions_total", 7.0)]),
])
def test_a_family_typed_otherwise_is_read_under_its_lines_name(text, read):
    assert [(s.name, s.value) for s in parse_samples(text)] == read


def test_one_series_typed_twice_with_two_values_is_refused():
    """Before: both samples renamed by the counter TYPE, dropped: the running count unread, nothing said."""
    text = f"# TYPE {RUNNING} gauge\n{RUNNING} 3\n# TYPE {RUNNING} counter\n{RUNNING} 4\n"
    with pytest.raises(MetricsRefused, match=f"^the series {RUNNING} appears twice with different values$"):
        parse_samples(text)


def test_an_exemplar_on_a_counter_is_read_past():
    text = ('# TYPE vllm:num_preemptions counter\n'
            'vllm:num_preemptions_total{model_name="m"} 5 # {trace_id="abc"} 1.0 1700000000\n')
    assert [(s.name, s.value) for s in parse_samples(text)] == [("vllm:num_preemptions_total", 5.0)]


class _Drip(httpx.AsyncByteStream):
    def __init__(self, piece: bytes, count: int):
        self.piece, self.count, self.sent = piece, count, 0

    async def __aiter__(self):
        for _ in range(self.count):
            self.sent += 1
            yield self.piece


@pytest.mark.parametrize("declared", [True, False])
def test_a_50_mib_metrics_answer_is_refused_at_16_mib_with_or_without_its_length(declared):
    body = _Drip(b"# " + b"x" * (1024 * 1024 - 3) + b"\n", 50)
    headers = {"content-length": str(50 * 1024 * 1024)} if declared else {}

    async def go():
        transport = httpx.MockTransport(lambda request: httpx.Response(200, headers=headers, stream=body))
        async with httpx.AsyncClient(transport=transport) as client:
            return await Scraper(client, ["http://u:pw@e/metrics"], None, None, 0.0).scrape_once()

    snapshot = asyncio.run(go())
    assert snapshot.errors == ("http://e/metrics: answer over 16 MiB",)  # the URL's password is never shown
    assert body.sent == (0 if declared else 17)  # a declared length is refused unread, else at the cap


@pytest.mark.parametrize("content_type, body", [
    ("text/html; charset=utf-8", "<html><body>Sign in</body></html>"),
    ("text/html", f"{RUNNING} 3\n"),  # said to be HTML: not read
    ("text/plain", "\n  <!DOCTYPE html><html>Sign in</html>"),  # HTML under another type
])
def test_a_login_page_at_the_metrics_url_is_a_scrape_error_not_an_empty_reading(content_type, body):
    """Before: no error and no series, every scrape; a run could be called stable on metrics it never saw."""
    async def go():
        transport = httpx.MockTransport(lambda request: httpx.Response(200, headers={"content-type": content_type},
                                                                       text=body))
        async with httpx.AsyncClient(transport=transport) as client:
            return await Scraper(client, ["http://e/metrics"], None, None, 0.0).scrape_once()

    assert asyncio.run(go()).errors == ("http://e/metrics: " + scrape.HTML_PAGE,)


def test_prometheus_text_under_a_plain_content_type_is_still_read():
    async def go():
        transport = httpx.MockTransport(lambda request: httpx.Response(200, text=f"# HELP {RUNNING} x\n{RUNNING} 3\n"))
        async with httpx.AsyncClient(transport=transport) as client:
            return await Scraper(client, ["http://e/metrics"], None, None, 0.0).scrape_once()

    snapshot = asyncio.run(go())
    assert (snapshot.errors, snapshot.running) == ((), 3.0)
