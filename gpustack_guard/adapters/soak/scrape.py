"""Prometheus text from each --metrics-url and the RSS of --pid, once a second, normalised into Snapshots.

Parsed with prometheus_client's parser, after dropping every line of a family we do not read: vLLM's
histograms are most of its /metrics, and parsing them every second would steal the event loop from the
streams being timed.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from dataclasses import replace
from typing import Callable, Mapping

import httpx
from prometheus_client.parser import text_string_to_metric_families

from gpustack_guard.adapters.gpustack.transport import BAD_LOCATION, bad_location
from gpustack_guard.adapters.soak.load import connect_failure, raw_chunks, whole_answer_deadline
from gpustack_guard.core.secrets import mask_url
from gpustack_guard.core.soak.metrics import Normaliser, Sample, Snapshot, wanted


def _metric_name(line: str) -> str:
    """A sample line's metric name. The text format separates tokens by blanks or tabs, and its parser reads a line
    indented by them: a name cut at spaces alone was `name\t3`, no family gsg reads, and the line was dropped
    unread (a tab-separated page gave no readings at all, silently)."""
    line = line.lstrip(" \t")
    end = len(line)
    for stop in ("{", " ", "\t"):
        at = line.find(stop)
        if at != -1:
            end = min(end, at)
    return line[:end]


# What one answer may hold of the families gsg reads. A vLLM or SGLang server has a few dozen such lines, a
# GPUStack exporter four per GPU; the parser costs ~17 us a line on the event loop the streams are timed on, so a
# hostile /metrics of 300,000 series held it for 7 s every scrape (and grew the counter tables by as much).
MAX_METRICS_LINES = 10_000
MAX_METRICS_LINE_BYTES = 16 * 1024  # one kept line; vLLM's longest (cache_config_info) is under 2 KiB


class MetricsRefused(ValueError):
    """An answer past gsg's bounds, or one that names a series twice: the message says which (no server text)."""


def relevant_lines(text: str) -> str:
    """The lines of the families normalisation reads, with their # TYPE / # HELP lines; MetricsRefused past
    MAX_METRICS_LINES or MAX_METRICS_LINE_BYTES."""
    kept = []
    # lines end at LF (CRLF and a lone CR are read too); never str.splitlines(), which also cuts at \x85, \u2028
    # and other characters a label value may hold, so one such model name made the whole answer unreadable
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for line in text.split("\n"):
        if line.rstrip() == "# EOF":
            break  # OpenMetrics ends its answer here: what follows is no part of it (a second page glued on)
        if line.startswith("#"):
            parts = line.split(None, 3)
            if not (len(parts) >= 3 and parts[1] in ("TYPE", "HELP")
                    and (wanted(parts[2]) or wanted(parts[2] + "_total"))):
                continue
            name = parts[2]
        else:
            name = _metric_name(line)
            if not (line and wanted(name)):
                continue
        if len(line) > MAX_METRICS_LINE_BYTES:  # the name is one gsg reads: safe to print
            raise MetricsRefused(f"a line of {name} is over {MAX_METRICS_LINE_BYTES // 1024} KiB")
        kept.append(line)
        if len(kept) > MAX_METRICS_LINES:
            raise MetricsRefused(f"more than {MAX_METRICS_LINES:,} lines of the families gsg reads")
    return "\n".join(kept) + "\n"


def parse_samples(text: str, source: int = 0) -> list[Sample]:
    """Samples by their own names: the parser strips `_total` from a counter family's name, not its samples'.
    The exposition format allows NaN and +/-Inf: such a sample is no reading (a gauge with nothing to report); it is
    kept, for the Normaliser to tell a family read in part from one not read, and dropped there, before it reaches
    the trends, the charts' axes and the JSON (which has no such numbers). A series
    given twice (the format allows one sample per series) is read once when both say the same, and refused when
    they differ: which is the reading is unknown, and a counter read 5 then 3 in one answer would be a restart.
    `source` numbers the --metrics-url that answered (Sample.source)."""
    samples: list[Sample] = []
    seen: dict[tuple, float] = {}
    for family in text_string_to_metric_families(relevant_lines(text)):
        for sample in family.samples:
            name = sample.name
            if not wanted(name) and family.type == "counter" and name.endswith("_total") and wanted(name[:-6]):
                # the parser appends _total to a line named as its counter family (`# TYPE x counter` over `x 3`): a
                # gauge gsg reads, typed counter, was dropped unread and unsaid. Every line kept bears a name gsg
                # reads, so the name without the suffix is the line's own
                name = name[:-6]
            if not wanted(name):
                continue
            key = (name, tuple(sorted(sample.labels.items())))
            value = float(sample.value)
            if key in seen:
                if seen[key] == value or (value != value and seen[key] != seen[key]):  # NaN twice is the same
                    continue
                raise MetricsRefused(f"the series {name} appears twice with different values")
            seen[key] = value
            samples.append(Sample(name, sample.labels, value, source))
    return samples


def _rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return 0  # a kernel thread or a zombie: no resident set


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as children:
                found += [int(c) for c in children.read().split()]
    except (OSError, ValueError):
        pass
    return found


def process_tree_rss(pid: int) -> int | None:
    """RSS of the process and its descendants: vLLM's engine core and workers are child processes."""
    own = _rss_bytes(pid)
    if own is None:
        return None
    total, pending, seen = own, _children(pid), {pid}
    while pending:
        child = pending.pop()
        if child in seen:
            continue
        seen.add(child)
        total += _rss_bytes(child) or 0
        pending += _children(child)
    return total


def host_memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


MAX_METRICS_BYTES = 16 * 1024 ** 2  # one /metrics answer (vLLM's, histograms and all, is well under 1 MiB)
SCRAPE_DEADLINE_S = 5.0  # the whole answer, not each read: a server that drips bytes ends here


# a login or proxy page answered with 200: without this, every scrape "succeeded" with no series, and a run
# could be called stable on metrics it never saw
HTML_PAGE = "an HTML page, not Prometheus text (a login page or proxy? point --metrics-url at the engine)"


NOTHING_READ = ("no finite reading of the series gsg reads (another exporter, or names of an engine release gsg "
                "does not know)")


class _Refused(Exception):
    """A /metrics answer gsg does not read: the message says why."""


KEY_REFUSED = "the API key was refused"
# the soak's key goes to a metrics URL on its endpoint's origin alone: another may be another host
KEY_NOT_SENT = "it wants credentials; gsg sends the API key only to a metrics URL on the endpoint's origin"


async def _bounded_get(client: httpx.AsyncClient, url: str, api_key: str | None = None) -> bytes:
    headers = {"Accept-Encoding": "identity"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    async with whole_answer_deadline(SCRAPE_DEADLINE_S), client.stream("GET", url, timeout=SCRAPE_DEADLINE_S,
                                                                        headers=headers) as response:
        if response.status_code in (401, 403):
            raise _Refused(f"HTTP {response.status_code} ({KEY_REFUSED if api_key else KEY_NOT_SENT})")
        if response.status_code != 200:
            raise _Refused(f"HTTP {response.status_code}")
        if response.headers.get("content-encoding", "identity").lower() not in ("identity", ""):
            raise _Refused("compressed answer (asked for identity)")
        if response.headers.get("content-type", "").lower().startswith("text/html"):
            raise _Refused(HTML_PAGE)
        declared = response.headers.get("content-length", "")
        # a length said up front past the cap: refused before a byte is read
        if declared.isascii() and declared.isdigit() and int(declared[:20]) > MAX_METRICS_BYTES:
            raise _Refused(f"answer over {MAX_METRICS_BYTES // 1024 ** 2} MiB")
        chunks, size = [], 0
        async for data in raw_chunks(response):
            size += len(data)
            if size > MAX_METRICS_BYTES:
                raise _Refused(f"answer over {MAX_METRICS_BYTES // 1024 ** 2} MiB")
            chunks.append(data)
        # a leading BOM (a proxy's or a file server's) is no part of the first line: read with it, the first series'
        # name was '\ufeffvllm:...', dropped unread, and an HTML page behind one was not seen as HTML
        body = b"".join(chunks).removeprefix(b"\xef\xbb\xbf")
        if body[:1024].lstrip()[:1] == b"<":  # no Prometheus line starts so
            raise _Refused(HTML_PAGE)
        return body


class Scraper:
    def __init__(self, client: httpx.AsyncClient, urls: list[str], pid: int | None, model: str | None,
                 origin: float, clock: Callable[[], float] = time.perf_counter,
                 keys: Mapping[str, str] | None = None):
        self.client = client
        # the API key of each URL that gets one: llama-server's /metrics wants it when started with --api-key
        # (its public paths are /health, /models and their /v1 forms), so before every scrape of it was a 401
        self.keys = dict(keys or {})
        self.clock = clock
        self.urls = urls
        self.shown = {url: mask_url(url) for url in urls}  # as errors name them (printed, kept in soak.json)
        self.pid = pid
        self.origin = origin
        self.normaliser = Normaliser(model=model)

    @property
    def active(self) -> bool:
        return bool(self.urls) or self.pid is not None

    async def _fetch(self, source: int, url: str) -> list[Sample] | str:
        shown = self.shown[url]
        try:
            body = await _bounded_get(self.client, url, self.keys.get(url))
        except _Refused as exc:
            return f"{shown}: {exc}"
        except (httpx.TimeoutException, TimeoutError):
            # a slow or dripping /metrics: the deadline, not an exception's name
            return f"{shown}: no whole answer within {SCRAPE_DEADLINE_S:g} s"
        except httpx.ConnectError as exc:
            return f"{shown}: {connect_failure(exc)}"  # a TLS failure was 'ConnectError', as a refusal was
        except httpx.HTTPError as exc:
            return f"{shown}: {BAD_LOCATION if bad_location(exc) else type(exc).__name__}"
        try:
            samples = parse_samples(body.decode("utf-8", errors="replace"), source)
        except MetricsRefused as exc:
            return f"{shown}: {exc}"
        except (ValueError, TypeError, IndexError):
            # the parser's message quotes the server's line: not repeated (it may carry escapes or secrets)
            return f"{shown}: not Prometheus text"
        # a page of other names (another exporter, an engine release that renamed its series) or of no numbers: a
        # scrape that read nothing, said so; before it counted as read, and a run could be called stable on none
        return samples if any(math.isfinite(s.value) for s in samples) else f"{shown}: {NOTHING_READ}"

    def _pid_reading(self) -> tuple[float | None, tuple[str, ...]]:
        if self.pid is None:
            return None, ()
        rss = process_tree_rss(self.pid)
        return rss, (() if rss is not None else (f"--pid {self.pid}: no such process",))

    async def _answers(self) -> tuple[list[Sample], tuple[str, ...]]:
        answers = await asyncio.gather(*(self._fetch(source, url) for source, url in enumerate(self.urls)))
        samples = [s for answer in answers if isinstance(answer, list) for s in answer]
        return samples, tuple(answer for answer in answers if isinstance(answer, str))

    async def scrape_once(self) -> Snapshot:
        rss, pid_errors = self._pid_reading()
        samples, errors = await self._answers()
        return self.normaliser.snapshot(self.clock() - self.origin, samples, rss, errors + pid_errors)

    async def run(self, into: list[Snapshot], interval: float = 1.0) -> None:
        """Scrape every `interval` seconds into `into` until cancelled.

        The process's memory is read as a tick starts, before the endpoints are asked: a /metrics that answers
        slowly under load (seconds, on a busy machine) would otherwise leave a short round with no memory reading
        at all. When the round ends while an endpoint is still answering, that tick is kept with the memory alone,
        marked cut short: not counted as a scrape of the endpoints, so a hung endpoint still shows as failing in
        the scrapes that ran to the end (the idle one after every round always does)."""
        while True:
            started = self.clock()
            rss, pid_errors = self._pid_reading()
            try:
                samples, errors = await self._answers()
            except asyncio.CancelledError:
                if self.pid is not None:
                    into.append(replace(self.normaliser.snapshot(started - self.origin, [], rss, pid_errors),
                                        cut_short=True))
                raise
            into.append(self.normaliser.snapshot(self.clock() - self.origin, samples, rss, errors + pid_errors))
            await asyncio.sleep(max(interval - (self.clock() - started), 0.05))
