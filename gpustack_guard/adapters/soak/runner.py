"""The round loop: load (ours and the reference side by side), scraping while it runs, an idle sample after."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from dataclasses import dataclass, field
from typing import Callable

import httpx

from gpustack_guard.adapters.soak.load import REFUSALS_END_ROUND, REFUSED, Target, drive, make_client, ramp_seconds
from gpustack_guard.adapters.soak.scrape import Scraper
from gpustack_guard.core.soak.metrics import Snapshot
from gpustack_guard.core.soak.prompts import WorkloadEntry, prompt_for
from gpustack_guard.core.soak.rounds import RequestResult, RoundStats, aggregate_round

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

    async def aggregate(self, index: int, started_s: float, seconds: float, results, lags=None) -> RoundStats:
        if self.scraper.active:
            self.idle = await self.scraper.scrape_once()
        stats = aggregate_round(index, started_s, seconds, results, self.during, self.idle, self.preemptions_before,
                                lags)
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
        # one client per stream, kept across rounds: the load stays on warm connections
        ours_clients = [await stack.enter_async_context(client()) for _ in range(plan.concurrency)]
        ref_clients = [await stack.enter_async_context(client()) for _ in range(plan.concurrency)] \
            if plan.reference else []
        urls = len(plan.metrics_urls) + len(plan.reference_metrics_urls)
        metrics_client = await stack.enter_async_context(client(max(urls, 1)))
        # the API key never goes to a metrics URL: engines and GPUStack's exporter serve /metrics without one,
        # and a metrics URL may be another host
        ours_watch = _Watch(Scraper(metrics_client, plan.metrics_urls, plan.pid, plan.target.model, origin,
                                    clock))
        ref_watch = _Watch(Scraper(metrics_client, plan.reference_metrics_urls, None,
                                   plan.reference.model if plan.reference else None, origin, clock))
        for index in range(plan.rounds):
            if plan.collect_between_rounds:
                # between rounds, not during them: a full collection inside a round is a pause in every
                # stream's timing; and a soak of hours must not keep its cyclic garbage
                gc.collect()
            on_start(index)

            def prompts(i: int, base: int = index * PROMPTS_PER_ROUND):
                return prompt_for(plan.seed, base + i, plan.workload)

            lags: list[float] = []
            ours_results: list[RequestResult] = []
            ours_watch.start(plan.scrape_interval)
            ref_watch.start(plan.scrape_interval)
            probing = asyncio.ensure_future(probe_lag(lags, clock))
            started = clock()
            ticking = asyncio.ensure_future(_tick(on_tick, tick_seconds, index, started, ours_results, clock)) \
                if on_tick else None
            ramp = plan.ramp_seconds if plan.ramp_seconds is not None else ramp_seconds(plan.round_seconds)
            loads = [drive(ours_clients, plan.target, prompts, plan.round_seconds, plan.round_requests, origin,
                           plan.request_timeout, ramp, ours_results, clock)]
            if plan.reference:
                loads.append(drive(ref_clients, plan.reference, prompts, plan.round_seconds, plan.round_requests,
                                   origin, plan.request_timeout, ramp, clock=clock))
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
            stats = await ours_watch.aggregate(index, started - origin, seconds, results[0], lags)
            ref_stats = await ref_watch.aggregate(index, started - origin, seconds, results[1]) \
                if plan.reference else None
            progress.rounds.append(stats)
            progress.snapshots += ours_watch.snapshots
            if ref_stats:
                progress.reference.append(ref_stats)
            on_round(stats, ref_stats)
            progress.down_at_s = went_down(results[0])
            if progress.down_at_s is not None:
                break  # the rest of the plan would only count refused connections
    return progress
