"""The round loop: load (ours and the reference side by side), scraping while it runs, an idle sample after."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Callable

import httpx

from gpustack_guard.adapters.soak.load import Target, drive, make_client, ramp_seconds
from gpustack_guard.adapters.soak.scrape import Scraper
from gpustack_guard.core.soak.metrics import Snapshot
from gpustack_guard.core.soak.prompts import WorkloadEntry, prompt_for
from gpustack_guard.core.soak.rounds import RoundStats, aggregate_round

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
    metrics_api_key: str | None = None
    pid: int | None = None
    request_timeout: float = 120.0
    scrape_interval: float = 1.0
    ramp_seconds: float | None = None  # None: ramp_seconds(round_seconds)
    verify: bool | str = True
    transport_factory: Callable[[], httpx.AsyncBaseTransport] | None = None  # tests: in-process servers


async def probe_lag(into: list[float]) -> None:
    """How late a 20 ms sleep wakes up, until cancelled: the client's own share of every latency it measures."""
    while True:
        start = time.perf_counter()
        await asyncio.sleep(LAG_PROBE_S)
        into.append(max(time.perf_counter() - start - LAG_PROBE_S, 0.0))


@dataclass
class SoakProgress:
    """What the loop has finished so far: kept by the caller, so an interrupt still has every round."""
    rounds: list[RoundStats] = field(default_factory=list)
    reference: list[RoundStats] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)


async def run_soak(plan: SoakPlan, progress: SoakProgress,
                   on_round: Callable[[RoundStats, RoundStats | None], None] = lambda ours, ref: None,
                   on_start: Callable[[int], None] = lambda index: None) -> SoakProgress:
    origin = time.perf_counter()

    def client(connections: int = 1) -> httpx.AsyncClient:
        transport = plan.transport_factory() if plan.transport_factory else None
        return make_client(connections, plan.request_timeout, transport, plan.verify)

    async with contextlib.AsyncExitStack() as stack:
        # one client per stream, kept across rounds: the load stays on warm connections
        ours_clients = [await stack.enter_async_context(client()) for _ in range(plan.concurrency)]
        ref_clients = [await stack.enter_async_context(client()) for _ in range(plan.concurrency)] \
            if plan.reference else []
        metrics_client = await stack.enter_async_context(client(max(len(plan.metrics_urls), 1)))
        scraper = Scraper(metrics_client, plan.metrics_urls, plan.pid, plan.target.model, origin,
                          plan.metrics_api_key)
        preemptions_before = None
        for index in range(plan.rounds):
            on_start(index)

            def prompts(i: int, base: int = index * PROMPTS_PER_ROUND):
                return prompt_for(plan.seed, base + i, plan.workload)

            during: list[Snapshot] = []
            lags: list[float] = []
            scraping = asyncio.ensure_future(scraper.run(during, plan.scrape_interval)) if scraper.active else None
            probing = asyncio.ensure_future(probe_lag(lags))
            started = time.perf_counter()
            ramp = plan.ramp_seconds if plan.ramp_seconds is not None else ramp_seconds(plan.round_seconds)
            loads = [drive(ours_clients, plan.target, prompts, plan.round_seconds, plan.round_requests, origin,
                           plan.request_timeout, ramp)]
            if plan.reference:
                loads.append(drive(ref_clients, plan.reference, prompts, plan.round_seconds, plan.round_requests,
                                   origin, plan.request_timeout, ramp))
            try:
                results = await asyncio.gather(*loads)
            finally:
                for task in (scraping, probing):
                    if task:
                        task.cancel()
                        await asyncio.gather(task, return_exceptions=True)
            seconds = time.perf_counter() - started
            idle = await scraper.scrape_once() if scraper.active else None
            stats = aggregate_round(index, started - origin, seconds, results[0], during, idle, preemptions_before,
                                    lags)
            if any(s.preemptions is not None for s in during + ([idle] if idle else [])):
                last = [s for s in during + ([idle] if idle else []) if s.preemptions is not None][-1]
                preemptions_before = last.preemptions
            ref_stats = aggregate_round(index, started - origin, seconds, results[1], []) if plan.reference else None
            progress.rounds.append(stats)
            progress.snapshots += during + ([idle] if idle else [])
            if ref_stats:
                progress.reference.append(ref_stats)
            on_round(stats, ref_stats)
    return progress
