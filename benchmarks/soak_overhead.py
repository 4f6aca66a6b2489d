"""gsg soak's client overhead: TTFT p95 through gsg's load driver vs a bare httpx streaming loop.

A fake OpenAI-compatible server (tests/support/soak_fakes.py) with a fixed 50 ms TTFT runs in its own process on
one core; the client side is pinned to the other core. Both clients keep the same number of streams in
flight for the same time against the same server, interleaved run by run; gsg runs the whole round loop
(scraping /metrics every second too). Targets: >= 256 streams in flight, TTFT p95 within 2 ms of the bare
loop's. Prints both p95s, their difference and ratio.
Each run is a warm-up round and a measured round of --seconds for both clients, at each of --concurrency (64 and
256 streams by default), then open-loop at --rate (200 requests/s by default, constant arrivals: both clients send
on the same schedule whatever the server does).
A peer load tool beside the bare loop: GuideLLM or AIPerf from a separate virtualenv (--peer-venv, never the
project's own dependencies); the script says whether one was found and whether it ran.
Run from the repository root: python benchmarks/soak_overhead.py [--concurrency 64,256] [--seconds 10] [--runs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

TTFT_S = 0.050
TOKENS = 6
ITL_S = 0.500  # long, slow streams: 256 in flight at ~100 requests a second, which the fake server keeps up with
STREAM_S = TTFT_S + (TOKENS - 1) * ITL_S
# streams start spread over one stream's length: arrivals stay uniform (~concurrency / STREAM_S a second)
# instead of a burst of 256 every STREAM_S, whose queueing would swamp a 2 ms comparison for both clients
RAMP_S = STREAM_S
TARGET_MS = 2.0
MIN_STREAMS = 256
PEER_TOOLS = ("guidellm", "aiperf")  # PyPI names; installed only into --peer-venv
PEER_VENV = os.environ.get("GSG_PEER_VENV", "/tmp/gsg-peers")


def peer_status(venv: str) -> str:
    """Which peer load tool is there to compare with, in one line (the comparison itself is not wired yet)."""
    found = [tool for tool in PEER_TOOLS if (Path(venv) / "bin" / tool).is_file()]
    if not found:
        return (f"peer: neither GuideLLM nor AIPerf in {venv} (python3 -m venv {venv} && {venv}/bin/pip install "
                "guidellm): compared with the bare httpx loop only")
    tool = found[0]
    try:
        version = subprocess.run([str(Path(venv) / "bin" / tool), "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.strip().splitlines()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"peer: {tool} in {venv} does not start ({exc}): compared with the bare httpx loop only"
    return (f"peer: {version[-1] if version else tool} found in {venv}, but its run is not driven by this script "
            "yet (GuideLLM 0.8's `run` takes kind=... options and a tokenizer from the hub, which is offline "
            "here): no peer ratio")


def serve(core: int | None) -> None:
    from support.soak_fakes import FakeServer, Scenario

    if core is not None:
        os.sched_setaffinity(0, {core})
    scenario = Scenario("fixed", ttft_s=TTFT_S, ttft_jitter=0.0, spike_rate=0.0, itl_s=ITL_S)

    async def forever():
        async with FakeServer(scenario) as server:
            print(server.url, flush=True)
            await asyncio.Event().wait()

    asyncio.run(forever())


async def bare_loop(url: str, concurrency: int, seconds: float) -> list[float]:
    """The least a client can do: stream, note the first content line, read to the end.

    Shaped like a gsg soak so that only the client differs: one client per stream (one shared httpx pool
    of 256 connections queues requests for seconds: httpcore assigns connections in O(n²)), a warm-up
    round that opens the connections, then the measured round, the streams starting over the same ramp."""
    import contextlib
    import gc
    import ssl

    import httpx

    context = ssl.create_default_context()
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(httpx.AsyncClient(timeout=60, verify=context))
                   for _ in range(concurrency)]
        for _ in range(2):
            gc.collect()  # as gsg does between rounds
            ttfts: list[float] = []
            deadline = time.perf_counter() + seconds

            async def worker(k: int, client: httpx.AsyncClient) -> None:
                await asyncio.sleep(RAMP_S * k / concurrency)
                i = 0
                while time.perf_counter() < deadline:
                    body = {"model": "m", "messages": [{"role": "user", "content": f"prompt {k}-{i}"}],
                            "max_tokens": TOKENS, "stream": True}
                    i += 1
                    start = time.perf_counter()
                    first = None
                    async with client.stream("POST", url + "/v1/chat/completions", json=body) as response:
                        async for line in response.aiter_lines():
                            if first is None and '"content":"w' in line:
                                first = time.perf_counter() - start
                    if first is not None:
                        ttfts.append(first)

            await asyncio.gather(*(worker(k, c) for k, c in enumerate(clients)))
    return ttfts


async def bare_open_loop(url: str, rate: float, seconds: float) -> list[float]:
    """The least an open-loop client can do: one request every 1/rate seconds, each on its own task, a warm-up
    round and a measured one, as gsg's open loop runs (one connection per request)."""
    import ssl

    import httpx

    context = ssl.create_default_context()
    ttfts: list[float] = []

    async def one(k: int) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": f"prompt {k}"}], "max_tokens": TOKENS,
                "stream": True}
        async with httpx.AsyncClient(timeout=60, verify=context) as client:
            start = time.perf_counter()
            first = None
            async with client.stream("POST", url + "/v1/chat/completions", json=body) as response:
                async for line in response.aiter_lines():
                    if first is None and '"content":"w' in line:
                        first = time.perf_counter() - start
            if first is not None and phase["measured"]:
                ttfts.append(first)

    phase = {"measured": False}
    for measured in (False, True):
        phase["measured"] = measured
        begin, tasks = time.perf_counter(), []
        for k in range(int(rate * seconds)):
            delay = begin + k / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(k)))
        await asyncio.gather(*tasks)
    return ttfts


async def gsg_open_round(url: str, rate: float, seconds: float):
    from gpustack_guard.adapters.soak.load import Target, chat_completions_url
    from gpustack_guard.adapters.soak.runner import SoakPlan, SoakProgress, run_soak
    from gpustack_guard.core.soak.prompts import WorkloadEntry

    plan = SoakPlan(Target("ours", chat_completions_url(url), "m"), rounds=1, round_seconds=seconds,
                    concurrency=1, workload=[WorkloadEntry(16, TOKENS)], metrics_urls=[url + "/metrics"],
                    collect_between_rounds=True, rate=rate, arrival="constant", warmup_rounds=1)
    progress = await run_soak(plan, SoakProgress())
    return [r for r in progress.rounds if not getattr(r, "warmup", False)][-1]


async def gsg_round(url: str, concurrency: int, seconds: float):
    from gpustack_guard.adapters.soak.load import Target, chat_completions_url
    from gpustack_guard.adapters.soak.runner import SoakPlan, SoakProgress, run_soak
    from gpustack_guard.core.soak.prompts import WorkloadEntry

    plan = SoakPlan(Target("ours", chat_completions_url(url), "m"), rounds=2, round_seconds=seconds,
                    concurrency=concurrency, workload=[WorkloadEntry(16, TOKENS)], metrics_urls=[url + "/metrics"],
                    ramp_seconds=RAMP_S, collect_between_rounds=True)  # as the `gsg soak` command runs
    progress = await run_soak(plan, SoakProgress())  # round 1 opens the connections, like the bare loop's
    second = progress.rounds[1]
    # in flight once every stream has started, until the first ones stop starting new requests
    steady = [s for s in progress.snapshots if second.started_s + RAMP_S <= s.t <= second.started_s + seconds]
    return second, steady


def p95(values: list[float]) -> float:
    from gpustack_guard.core.soak.stats import percentile

    return percentile(values, 95)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", default="64,256", help="streams in flight, comma-separated")
    parser.add_argument("--peer-venv", default=PEER_VENV, help="virtualenv holding guidellm or aiperf")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--rate", type=float, default=200.0, help="open-loop requests per second (0: skip)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--core", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.core)
        return 0
    import gc

    gc.collect()
    gc.freeze()  # as `gsg soak` does: start-up objects stay out of full collections, for both clients
    cores = sorted(os.sched_getaffinity(0))
    client_core, server_core = (cores[0], cores[1]) if len(cores) > 1 else (cores[0], None)
    print(peer_status(args.peer_venv))
    worst = 0
    for concurrency in (int(c) for c in str(args.concurrency).split(",")):
        worst = max(worst, measure(args, concurrency, client_core, server_core))
    if args.rate > 0:
        worst = max(worst, measure_open_loop(args, client_core, server_core))
    return worst


def measure_open_loop(args, client_core: int, server_core: int | None) -> int:
    """--rate requests a second on one schedule, interleaved runs of both clients against a fresh server."""
    server = subprocess.Popen([sys.executable, __file__, "--serve"] +
                              (["--core", str(server_core)] if server_core is not None else []),
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        os.sched_setaffinity(0, {client_core})
        bare_p95s, gsg_p95s = [], []
        for _ in range(args.runs):
            bare = asyncio.run(bare_open_loop(url, args.rate, args.seconds))
            bare_p95s.append(p95(bare))
            stats = asyncio.run(gsg_open_round(url, args.rate, args.seconds))
            gsg_p95s.append(stats.ttft_p95_s)
            print(f"open-loop run: bare p95 {bare_p95s[-1] * 1000:.2f} ms ({len(bare)} requests); gsg p95 "
                  f"{gsg_p95s[-1] * 1000:.2f} ms ({stats.requests} requests, {stats.errors} errors)", flush=True)
    finally:
        server.kill()
        server.wait()
    bare_best, gsg_best = min(bare_p95s), min(gsg_p95s)
    diff_ms = (gsg_best - bare_best) * 1000
    ok = abs(diff_ms) <= TARGET_MS
    print(f"open loop at {args.rate:g} requests/s (constant arrivals): bare TTFT p95 {bare_best * 1000:.2f} ms, "
          f"gsg {gsg_best * 1000:.2f} ms; difference {diff_ms:+.2f} ms (target within {TARGET_MS:g} ms); ratio "
          f"{gsg_best / bare_best:.3f} {'OK' if ok else 'OVER TARGET'}")
    return 0 if ok else 1


def measure(args, concurrency: int, client_core: int, server_core: int | None) -> int:
    """One concurrency: interleaved runs of both clients against a fresh server; 0 when within target."""
    server = subprocess.Popen([sys.executable, __file__, "--serve"] +
                              (["--core", str(server_core)] if server_core is not None else []),
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        os.sched_setaffinity(0, {client_core})  # gsg gets one core
        bare_p95s, gsg_p95s, in_flight = [], [], []
        asyncio.run(bare_loop(url, 16, 1.0))  # warm both paths up
        for _ in range(args.runs):  # interleaved: a slow spell of the machine hits both alike
            cpu = time.process_time()
            bare = asyncio.run(bare_loop(url, concurrency, args.seconds))
            bare_cpu = (time.process_time() - cpu) / (2 * args.seconds)
            bare_p95s.append(p95(bare))
            cpu = time.process_time()
            stats, snapshots = asyncio.run(gsg_round(url, concurrency, args.seconds))
            gsg_cpu = (time.process_time() - cpu) / (2 * args.seconds)
            gsg_p95s.append(stats.ttft_p95_s)
            running = sorted(s.running for s in snapshots if s.running is not None)
            in_flight.append(running[len(running) // 2] if running else 0)  # the server's own count
            print(f"run: bare p95 {bare_p95s[-1] * 1000:.2f} ms ({len(bare)} requests, client CPU {bare_cpu:.0%}); "
                  f"gsg p95 {gsg_p95s[-1] * 1000:.2f} ms ({stats.requests} requests, {stats.errors} errors, client "
                  f"CPU {gsg_cpu:.0%}, median {in_flight[-1]:.0f} streams in flight)", flush=True)
    finally:
        server.kill()
        server.wait()
    bare_best, gsg_best = min(bare_p95s), min(gsg_p95s)
    diff_ms = (gsg_best - bare_best) * 1000
    ratio = gsg_best / bare_best
    streams = min(in_flight)
    print(f"server: fixed TTFT {TTFT_S * 1000:.0f} ms, {TOKENS} tokens every {ITL_S * 1000:.0f} ms; client on core "
          f"{client_core}, server on core {server_core}")
    print(f"bare httpx loop: TTFT p95 {bare_best * 1000:.2f} ms (best of {args.runs})")
    print(f"gsg soak:        TTFT p95 {gsg_best * 1000:.2f} ms (best of {args.runs}); median streams in flight "
          f"{streams:.0f} (target >= {min(MIN_STREAMS, concurrency)}) at --concurrency {concurrency}")
    ok = abs(diff_ms) <= TARGET_MS and streams >= min(MIN_STREAMS, concurrency)
    print(f"difference: {diff_ms:+.2f} ms (target within {TARGET_MS:g} ms); ratio: {ratio:.3f} "
          f"{'OK' if ok else 'OVER TARGET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
