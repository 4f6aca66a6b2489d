"""What one request and one round measured, and the per-round aggregation."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, TypeVar

from gpustack_guard.core.soak.load_model import Slo, pick_samples, request_meets, round_misses
from gpustack_guard.core.soak.metrics import Snapshot
from gpustack_guard.core.soak.stats import percentile

_T = TypeVar("_T")

# The memory signal, in order of preference: the serving process measured here, the process as its own
# /metrics reports it, GPU memory outside the booked pool, GPU memory used.
MEMORY_SOURCES = ("pid_rss", "process_resident", "gpu_outside_pool", "gpu_used")


def memory_of(snapshot: Snapshot, source: str) -> float | None:
    return {
        "pid_rss": snapshot.pid_rss_bytes,
        "process_resident": snapshot.resident_bytes,
        "gpu_outside_pool": snapshot.gpu_outside_pool_bytes,
        "gpu_used": snapshot.gpu_used_bytes,
    }[source]


@dataclass
class RequestResult:
    started: float  # seconds since the run started
    finished: float
    ok: bool
    ttft_s: float | None = None  # first non-empty content or reasoning delta
    gaps_s: list[float] = field(default_factory=list)  # between consecutive non-empty deltas
    output_tokens: int = 0
    error: str | None = None  # a short reason: "HTTP 503", "timeout", "stream ended early", ...
    retry_after_s: float | None = None  # a 429 or 503's Retry-After, in seconds: the stream waits that long


@dataclass
class RoundStats:
    index: int
    started_s: float
    seconds: float
    requests: int
    errors: int
    error_reasons: dict[str, int]
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    itl_p50_s: float | None
    itl_p95_s: float | None
    output_tokens_per_s: float
    kv_usage_max: float | None = None
    kv_usage_p95: float | None = None
    preemptions: float | None = None
    running_max: float | None = None
    waiting_max: float | None = None
    running_at_first_preemption: float | None = None
    memory: dict[str, float] = field(default_factory=dict)  # max during the round, by source
    idle_memory: dict[str, float] = field(default_factory=dict)  # after the round drained, by source
    gpu_total_bytes: float | None = None
    host_total_bytes: float | None = None
    restarts: int = 0
    restart_at_s: list[float] = field(default_factory=list)  # when a scrape first saw each restart
    scrapes: int = 0  # scrapes of the endpoints that ran to the end (while running and the idle one; not cut short)
    scrape_errors: int = 0
    scrape_error_reasons: dict[str, int] = field(default_factory=dict)  # "<url>: HTTP 404" -> scrapes
    client_lag_p50_s: float | None = None  # how late gsg's own event loop woke up: a busy client inflates TTFT
    client_lag_p95_s: float | None = None
    # the report's memory column: one source's value for every row (memory_column fills copies; None: not measured)
    memory_bytes: float | None = None
    idle_memory_bytes: float | None = None
    ttft_p90_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p90_s: float | None = None
    itl_p99_s: float | None = None
    e2e_p50_s: float | None = None  # a successful request's whole time, sent to last byte
    e2e_p90_s: float | None = None
    e2e_p95_s: float | None = None
    e2e_p99_s: float | None = None
    warmup: bool = False  # run, shown, but left out of the verdict, goodput and the sweep's decision
    step: float | None = None  # the sweep step (a rate or a concurrency) the round ran at
    concurrency: int | None = None  # closed loop: streams kept in flight
    offered_rate: float | None = None  # open loop: requests per second sent on schedule
    slo_met_requests: int | None = None  # requests that met every --slo on their own (None: no --slo)
    slo_misses: list[str] | None = None  # the round's percentiles past an --slo (None: no --slo)
    samples: dict | None = None  # per request, for redrawing the charts (see sample_table)
    samples_dropped_requests: int = 0  # past the stored-sample cap
    samples_cut_gaps: int = 0
    gap_cap_hit: bool = False  # the round stopped starting requests at its cap of inter-token gaps held

    def figure(self, key: str) -> float | None:
        """A percentile by its SLO name: 'ttft_p99' -> ttft_p99_s."""
        return getattr(self, f"{key}_s", None)

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 0.0


def _present(values: Iterable[_T | None]) -> list[_T]:
    return [v for v in values if v is not None]


def aggregate_round(index: int, started_s: float, seconds: float, results: list[RequestResult],
                    snapshots: list[Snapshot], idle: Snapshot | None = None,
                    preemptions_before: float | None = None, client_lags: list[float] | None = None,
                    slos: tuple[Slo, ...] = (), sample_budget: int | None = None,
                    max_gaps: int | None = None) -> RoundStats:
    """One round's figures. `snapshots` were taken while it ran, `idle` once it drained; `preemptions_before`
    is the cumulative preemption count at the end of the previous round (None: first round or no counter).
    With `slos`, how many requests met them and which percentiles missed; with `sample_budget`, the
    per-request samples kept (at most that many values); with `max_gaps`, whether the round's requests reached
    that many inter-token gaps (the load stopped starting requests there)."""
    ok = [r for r in results if r.ok]
    ttfts = _present(r.ttft_s for r in ok)
    gaps = [g for r in ok for g in r.gaps_s]
    e2es = [r.finished - r.started for r in ok]
    reasons = Counter(r.error or "error" for r in results if not r.ok)
    stats = RoundStats(
        index=index, started_s=started_s, seconds=seconds, requests=len(results), errors=sum(reasons.values()),
        error_reasons=dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        ttft_p50_s=percentile(ttfts, 50), ttft_p95_s=percentile(ttfts, 95),
        itl_p50_s=percentile(gaps, 50), itl_p95_s=percentile(gaps, 95),
        output_tokens_per_s=sum(r.output_tokens for r in ok) / seconds if seconds > 0 else 0.0,
        ttft_p90_s=percentile(ttfts, 90), ttft_p99_s=percentile(ttfts, 99),
        itl_p90_s=percentile(gaps, 90), itl_p99_s=percentile(gaps, 99),
        e2e_p50_s=percentile(e2es, 50), e2e_p90_s=percentile(e2es, 90), e2e_p95_s=percentile(e2es, 95),
        e2e_p99_s=percentile(e2es, 99),
    )
    if slos:
        stats.slo_met_requests = sum(1 for r in results
                                     if request_meets(r.ok, r.ttft_s, r.gaps_s, r.finished - r.started, slos))
        stats.slo_misses = round_misses({s.key: stats.figure(s.key) for s in slos}, slos)
    stats.gap_cap_hit = max_gaps is not None and sum(len(r.gaps_s) for r in results) >= max_gaps
    if sample_budget is not None:
        stats.samples, stats.samples_dropped_requests, stats.samples_cut_gaps = sample_table(results, sample_budget)
    stats.client_lag_p50_s = percentile(client_lags or [], 50)
    stats.client_lag_p95_s = percentile(client_lags or [], 95)
    every = snapshots + ([idle] if idle else [])
    kv = _present(s.kv_usage for s in snapshots)
    stats.kv_usage_max = max(kv) if kv else None
    stats.kv_usage_p95 = percentile(kv, 95)
    running = _present(s.running for s in snapshots)
    waiting = _present(s.waiting for s in snapshots)
    stats.running_max = max(running) if running else None
    stats.waiting_max = max(waiting) if waiting else None
    counts = [(s.preemptions, s.running) for s in every if s.preemptions is not None]
    if counts:
        before = preemptions_before if preemptions_before is not None else counts[0][0]
        stats.preemptions = counts[-1][0] - before
        previous = before
        for count, running_then in counts:  # the running count when the first preemption of the round was seen
            if count > previous:
                stats.running_at_first_preemption = running_then
                break
            previous = count
    for source in MEMORY_SOURCES:
        during = _present(memory_of(s, source) for s in snapshots)
        if during:
            stats.memory[source] = max(during)
        idle_value = memory_of(idle, source) if idle is not None else None
        if idle_value is not None:
            stats.idle_memory[source] = idle_value
    totals = _present(s.gpu_total_bytes for s in every)
    stats.gpu_total_bytes = max(totals) if totals else None
    hosts = _present(s.host_total_bytes for s in every)
    stats.host_total_bytes = max(hosts) if hosts else None
    stats.restart_at_s = [s.restart_seen_s if s.restart_seen_s is not None else s.t for s in every if s.restarted]
    stats.restarts = len(stats.restart_at_s)
    # a cut-short tick read --pid alone and is no scrape: its errors are no scrape's either (else a gone process
    # showed in more scrapes than there were)
    scraped = [s for s in every if not s.cut_short]
    stats.scrapes = len(scraped)
    stats.scrape_errors = sum(len(s.errors) for s in scraped)
    stats.scrape_error_reasons = dict(Counter(e for s in scraped for e in s.errors))
    return stats


def sample_table(results: list[RequestResult], budget: int) -> tuple[dict, int, int]:
    """The round's requests in start order, column by column (compact JSON), within `budget` values:
    started_s, ttft_s, e2e_s, output_tokens, error (None: succeeded) and itl_s (each request's gaps).
    Returns (table, requests dropped, gaps cut)."""
    ordered = sorted(results, key=lambda r: r.started)
    kept, kept_gaps, dropped, cut = pick_samples([len(r.gaps_s) for r in ordered], budget)
    rows = [ordered[i] for i in kept]
    table = {"started_s": [round(r.started, 6) for r in rows],
             "ttft_s": [None if r.ttft_s is None else round(r.ttft_s, 6) for r in rows],
             "e2e_s": [round(r.finished - r.started, 6) for r in rows],
             "output_tokens": [r.output_tokens for r in rows],
             "error": [None if r.ok else (r.error or "error") for r in rows],
             "itl_s": [[round(g, 6) for g in r.gaps_s[:n]] for r, n in zip(rows, kept_gaps)]}
    return table, dropped, cut


def choose_memory_source(rounds: list[RoundStats]) -> str | None:
    """The most telling memory signal that every round has (None: none has one in every round)."""
    for source in MEMORY_SOURCES:
        if rounds and all(source in r.memory for r in rounds):
            return source
    return None


def memory_column(rounds: list[RoundStats], source: str | None) -> list[RoundStats]:
    """Copies of the rounds whose memory_bytes / idle_memory_bytes read `source` alone, for a report: one
    column never shows two sources, and the rounds given (shared with the verdicts) are left as they were."""
    return [replace(r, memory_bytes=r.memory.get(source) if source else None,
                    idle_memory_bytes=r.idle_memory.get(source) if source else None) for r in rounds]
