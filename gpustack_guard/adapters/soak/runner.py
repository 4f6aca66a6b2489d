"""The round loop: load (ours and the reference side by side), scraping while it runs, an idle sample after."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx

from gpustack_guard.adapters.soak.load import (
    REFUSALS_END_ROUND,
    REFUSED,
    ClientPool,
    Target,
    drive,
    drive_open,
    make_client,
    ramp_seconds,
)
from gpustack_guard.adapters.soak.scrape import Scraper
from gpustack_guard.core.soak.load_model import Slo, StepOutcome, Sweep, arrival_offsets, step_outcome
from gpustack_guard.core.soak.metrics import Snapshot
from gpustack_guard.core.soak.prompts import WorkloadEntry, prompt_for
from gpustack_guard.core.soak.rounds import RequestResult, RoundStats, aggregate_round
from gpustack_guard.core.urls import origin as url_origin

LAG_PROBE_S = 0.02
PROMPTS_PER_ROUND = 1_000_000  # round k draws prompts k·10⁶, k·10⁶+1, ...: new nonces, the same distribution


@dataclass
class SoakPlan:
    target: Target
    rounds: int
    round_seconds: float
    concurrency: int
    workload: list[WorkloadEntry]
    seed: int = 0
    round_requests: int | None = None
    reference: Target | None = None
    metrics_urls: list[str] = field(default_factory=list)
    reference_metrics_urls: list[str] = field(default_factory=list)
    pid: int | None = None
    request_timeout: float = 120.0
    scrape_interval: float = 1.0
    ramp_seconds: float | None = None  # None: ramp_seconds(round_seconds)
    # a full garbage collection before each round: what one long `gsg soak` process wants; not many soaks in
    # one process (the tests), where each one's collection would pause all the others' rounds
    collect_between_rounds: bool = False
    verify: bool | str = True
    transport_factory: Callable[[], httpx.AsyncBaseTransport] | None = None  # tests: in-process servers
    # every duration the soak measures or waits out is read off this (tests: the virtual clock of their loop)
    clock: Callable[[], float] = time.perf_counter
    rate: float | None = None  # open loop: requests per second on an arrival schedule, instead of concurrency
    arrival: str = "poisson"
    warmup_rounds: int = 0  # run before the measured rounds of each step, left out of every decision
    slos: tuple[Slo, ...] = ()
    sweep: Sweep | None = None  # steps of rate or concurrency, each warmup_rounds + rounds long
    max_error_rate: float = 0.05  # a sweep step with more failures does not meet the SLOs
    max_in_flight: int = 1024  # open loop's cap (SoakLimits.max_in_flight)
    max_stored_samples: int | None = None  # per-request samples kept over the whole run (None: none kept)
    max_round_gaps: int | None = None  # a round's inter-token gaps held in memory (SoakLimits.max_round_gaps)
    uniform_draw: bool = False  # a dataset's records, drawn with equal chances (not weighed per request)
    dataset: Any = None  # the adapters.soak.dataset.Dataset replayed, for the report's settings

    def steps(self) -> list[tuple[float | None, int, float | None]]:
        """(sweep step, concurrency, rate) of each step; one step (None) without a sweep."""
        if self.sweep is None:
            return [(None, self.concurrency, self.rate)]
        if self.sweep.dimension == "rate":
            return [(v, self.concurrency, v) for v in self.sweep.values]
        return [(v, int(v), None) for v in self.sweep.values]

    @property
    def total_rounds(self) -> int:
        return len(self.steps()) * (self.warmup_rounds + self.rounds)

    def sample_budget(self) -> int | None:
        """The stored-sample cap shared evenly by every planned round, so late rounds keep theirs too."""
        if self.max_stored_samples is None:
            return None
        return self.max_stored_samples // self.total_rounds


def went_down(results: list[RequestResult]) -> float | None:
    """When the endpoint went away, if a round ended with nothing but refused connections since some point
    (drive stops a round after REFUSALS_END_ROUND of them in a row): the start of the first of them."""
    if not results or results[-1].error != REFUSED:
        return None
    first = len(results)
    while first > 0 and results[first - 1].error == REFUSED:
        first -= 1
    if len(results) - first < REFUSALS_END_ROUND:
        return None  # a refusal or two at the end of a round that ran its time: not a dead server
    return min(r.started for r in results[first:])


async def probe_lag(into: list[float], clock: Callable[[], float] = time.perf_counter) -> None:
    """How late a 20 ms sleep wakes up, until cancelled: the client's own share of every latency it measures."""
    while True:
        start = clock()
        await asyncio.sleep(LAG_PROBE_S)
        into.append(max(clock() - start - LAG_PROBE_S, 0.0))


async def _tick(on_tick, every: float, index: int, started: float, results: list[RequestResult],
                clock: Callable[[], float]) -> None:
    while True:
        await asyncio.sleep(every)
        on_tick(index, clock() - started, results)


def keys_for_origin(urls: list[str], target: Target | None) -> dict[str, str]:
    """The metrics URLs on the target's origin (scheme, host, port), each with the target's API key: a metrics URL
    on another origin is another server, which gets no key (as a redirect's target gets none)."""
    if target is None or not target.api_key:
        return {}
    return {url: target.api_key for url in urls if url_origin(url) == url_origin(target.url)}


class _Watch:
    """One endpoint's metrics over the rounds: sampled while a round runs, once more after it drains."""

    def __init__(self, scraper: Scraper):
        self.scraper = scraper
        self.during: list[Snapshot] = []
        self.idle: Snapshot | None = None
        self.task: asyncio.Future | None = None
        self.preemptions_before: float | None = None

    def start(self, interval: float) -> None:
        self.during, self.idle = [], None
        if self.scraper.active:
            self.task = asyncio.ensure_future(self.scraper.run(self.during, interval))

    async def stop(self) -> None:
        if self.task:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None

    @property
    def snapshots(self) -> list[Snapshot]:
        return self.during + ([self.idle] if self.idle else [])

    async def aggregate(self, index: int, started_s: float, seconds: float, results, lags=None,
                        slos: tuple[Slo, ...] = (), sample_budget: int | None = None,
                        max_gaps: int | None = None) -> RoundStats:
        if self.scraper.active:
            self.idle = await self.scraper.scrape_once()
        stats = aggregate_round(index, started_s, seconds, results, self.during, self.idle, self.preemptions_before,
                                lags, slos, sample_budget, max_gaps)
        counted = [s for s in self.snapshots if s.preemptions is not None]
        if counted:
            self.preemptions_before = counted[-1].preemptions
        return stats


@dataclass
class SoakProgress:
    """What the loop has finished so far: kept by the caller, so an interrupt still has every round."""
    rounds: list[RoundStats] = field(default_factory=list)
    reference: list[RoundStats] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    down_at_s: float | None = None  # the endpoint refused every connection from then on: the run stopped
    steps: list[StepOutcome] = field(default_factory=list)  # a sweep's steps decided so far


def decide_step(plan: SoakPlan, value: float, rounds: list[RoundStats]) -> StepOutcome:
    """Whether a sweep step's measured rounds (warm-up left out) met the SLOs."""
    measured = [r for r in rounds if r.step == value and not r.warmup]
    return step_outcome(value, [r.slo_misses or [] for r in measured], sum(r.requests for r in measured),
                        sum(r.errors for r in measured), sum(r.slo_met_requests or 0 for r in measured),
                        plan.max_error_rate)


def _label(stats: RoundStats, ref_stats: RoundStats | None, warmup: bool, step: float | None, concurrency: int,
           rate: float | None) -> None:
    """What load a round ran at, and whether it was a warm-up."""
    for each in (stats, ref_stats):
        if each is not None:
            each.warmup, each.step = warmup, step
            each.concurrency, each.offered_rate = (None, rate) if rate is not None else (concurrency, None)


async def run_soak(plan: SoakPlan, progress: SoakProgress,
                   on_round: Callable[[RoundStats, RoundStats | None], None] = lambda ours, ref: None,
                   on_start: Callable[[int], None] = lambda index: None,
                   on_tick: Callable[[int, float, list[RequestResult]], None] | None = None,
                   tick_seconds: float = 10.0) -> SoakProgress:
    """`on_tick(round, seconds so far, our results so far)` every `tick_seconds` while a round runs."""
    clock = plan.clock
    origin = clock()

    def client(connections: int = 1) -> httpx.AsyncClient:
        transport = plan.transport_factory() if plan.transport_factory else None
        return make_client(connections, plan.request_timeout, transport, plan.verify)

    async with contextlib.AsyncExitStack() as stack:
        # one client per stream, kept across rounds: the load stays on warm connections; made as a step needs
        # them (a concurrency sweep's last step needs the most)
        ours_clients: list[httpx.AsyncClient] = []
        ref_clients: list[httpx.AsyncClient] = []

        async def streams(into: list[httpx.AsyncClient], count: int) -> list[httpx.AsyncClient]:
            while len(into) < count:
                into.append(await stack.enter_async_context(client()))
            return into[:count]

        async def new_client() -> httpx.AsyncClient:
            return await stack.enter_async_context(client())

        ours_pool, ref_pool = ClientPool(new_client), ClientPool(new_client)
        urls = len(plan.metrics_urls) + len(plan.reference_metrics_urls)
        metrics_client = await stack.enter_async_context(client(max(urls, 1)))
        # an endpoint's API key goes to its metrics URLs on its own origin alone (llama-server's /metrics wants it)
        ours_watch = _Watch(Scraper(metrics_client, plan.metrics_urls, plan.pid, plan.target.model, origin,
                                    clock, keys_for_origin(plan.metrics_urls, plan.target)))
        ref_watch = _Watch(Scraper(metrics_client, plan.reference_metrics_urls, None,
                                   plan.reference.model if plan.reference else None, origin, clock,
                                   keys_for_origin(plan.reference_metrics_urls, plan.reference)))
        index = 0
        budget = plan.sample_budget()
        for step, concurrency, rate in plan.steps():
            for k in range(plan.warmup_rounds + plan.rounds):
                if plan.collect_between_rounds:
                    # between rounds, not during them: a full collection inside a round is a pause in every
                    # stream's timing; and a soak of hours must not keep its cyclic garbage
                    gc.collect()
                on_start(index)

                def prompts(i: int, base: int = index * PROMPTS_PER_ROUND):
                    return prompt_for(plan.seed, base + i, plan.workload, plan.uniform_draw)

                if rate is None:  # made before the round's clock starts
                    ours_streams = await streams(ours_clients, concurrency)
                    ref_streams = await streams(ref_clients, concurrency) if plan.reference else []
                lags: list[float] = []
                ours_results: list[RequestResult] = []
                ours_watch.start(plan.scrape_interval)
                ref_watch.start(plan.scrape_interval)
                probing = asyncio.ensure_future(probe_lag(lags, clock))
                started = clock()
                ticking = asyncio.ensure_future(_tick(on_tick, tick_seconds, index, started, ours_results,
                                                      clock)) if on_tick else None
                if rate is not None:
                    # both endpoints get the same schedule: the reference sees what we saw, when we saw it
                    offsets = arrival_offsets(rate, plan.arrival, plan.round_seconds, plan.seed, index,
                                              plan.round_requests)
                    loads = [drive_open(ours_pool, plan.target, prompts, offsets, origin, plan.request_timeout,
                                        plan.max_in_flight, ours_results, clock, plan.max_round_gaps)]
                    if plan.reference:
                        loads.append(drive_open(ref_pool, plan.reference, prompts, offsets, origin,
                                                plan.request_timeout, plan.max_in_flight, clock=clock,
                                                max_gaps=plan.max_round_gaps))
                else:
                    ramp = plan.ramp_seconds if plan.ramp_seconds is not None else ramp_seconds(plan.round_seconds)
                    loads = [drive(ours_streams, plan.target, prompts,
                                   plan.round_seconds, plan.round_requests, origin, plan.request_timeout, ramp,
                                   ours_results, clock, plan.max_round_gaps)]
                    if plan.reference:
                        loads.append(drive(ref_streams, plan.reference, prompts,
                                           plan.round_seconds, plan.round_requests, origin, plan.request_timeout,
                                           ramp, clock=clock, max_gaps=plan.max_round_gaps))
                try:
                    results = await asyncio.gather(*loads)
                finally:
                    for task in (probing, ticking):
                        if task:
                            task.cancel()
                            await asyncio.gather(task, return_exceptions=True)
                    await ours_watch.stop()
                    await ref_watch.stop()
                seconds = clock() - started
                stats = await ours_watch.aggregate(index, started - origin, seconds, results[0], lags, plan.slos,
                                                   budget, plan.max_round_gaps)
                ref_stats = await ref_watch.aggregate(index, started - origin, seconds, results[1],
                                                      max_gaps=plan.max_round_gaps) if plan.reference else None
                _label(stats, ref_stats, k < plan.warmup_rounds, step, concurrency, rate)
                progress.rounds.append(stats)
                progress.snapshots += ours_watch.snapshots
                if ref_stats:
                    progress.reference.append(ref_stats)
                on_round(stats, ref_stats)
                index += 1
                progress.down_at_s = went_down(results[0])
                if progress.down_at_s is not None:
                    if step is not None:  # the step it died in is decided on what it ran (a miss), not dropped
                        progress.steps.append(decide_step(plan, step, progress.rounds))
                    return progress  # the rest of the plan would only count refused connections
            if step is not None:
                progress.steps.append(decide_step(plan, step, progress.rounds))
                if not progress.steps[-1].met:
                    break  # a higher step than one that missed would only miss by more
    return progress
