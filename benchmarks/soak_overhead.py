"""gsg soak's client overhead: TTFT p95 through gsg's load driver vs a bare httpx streaming loop.

A fake OpenAI-compatible server (tests/support/soak_fakes.py) with a fixed 50 ms TTFT runs in its own process on
one core; the client side is pinned to the other core. Both clients keep the same number of streams in
flight for the same time against the same server, interleaved run by run; gsg runs the whole round loop
(scraping /metrics every second too). Targets: >= 256 streams in flight, TTFT p95 within 2 ms of the bare
loop's. Prints both p95s, their difference and ratio.
Each run is a warm-up round and a measured round of --seconds for both clients, at each of --concurrency (64 and
256 streams by default), then open-loop at --rate (200 requests/s by default, constant arrivals: both clients send
on the same schedule whatever the server does).
A peer load tool beside both: GuideLLM from a separate virtualenv (--peer-venv, GSG_PEER_VENV, never the project's
own dependencies), run offline with a byte-level tokenizer built in that virtualenv, at the same streams or rate
against the same server, a warm-up window and a measured one of --seconds; its TTFT p95 is read from its JSON and
printed with the gsg / GuideLLM ratio. When it cannot run (absent, AIPerf only, no tokenizer, failed), one line says why.
Measured 2026-12-05 on the 2-core VM, best of 3, TTFT p95 gsg / bare / GuideLLM 0.8.1:
  64 streams    52.94 / 52.85 / 52.74 ms   gsg - bare +0.09 ms, gsg / GuideLLM 1.004
  256 streams   53.71 / 51.82 / 64.39 ms   +1.89 ms, 0.834
  200 req/s     54.92 / 61.24 / 1917 ms    -6.32 ms (the bare loop opens a client per request), 0.029 (GuideLLM's
                10 worker processes share the one client core and fall behind the schedule)
Run from the repository root: python benchmarks/soak_overhead.py [--concurrency 64,256] [--rate 200] [--seconds 10]
[--runs 2] [--peer-venv /tmp/gsg-peers]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
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
PEER_STARTUP_S = 240.0  # GuideLLM imports torch, datasets and transformers and forks its workers before the clock
# Run inside the peer's own Python: a byte-level BPE with no merges (one token per byte) is enough for GuideLLM to
# size synthetic prompts in tokens, and it is built here instead of downloaded (the hub is offline).
TOKENIZER_SCRIPT = """
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
vocab = {ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
vocab["<|endoftext|>"] = len(vocab)
tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tokenizer.decoder = decoders.ByteLevel()
PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>").save_pretrained(sys.argv[1])
"""


@dataclass
class Peer:
    """A peer load tool we can drive, or why not (`runnable` False: the script prints `reason` and goes on)."""

    name: str
    venv: Path
    version: str = ""
    tokenizer: Path | None = None
    reason: str = ""

    @property
    def runnable(self) -> bool:
        return self.tokenizer is not None


def find_peer(venv: str, workdir: Path) -> Peer:
    """GuideLLM from the peer virtualenv with a local tokenizer, or the reason it cannot run here."""
    root = Path(venv)
    found = [tool for tool in PEER_TOOLS if (root / "bin" / tool).is_file()]
    if not found:
        return Peer("none", root, reason=(
            f"neither GuideLLM nor AIPerf in {venv} (python3 -m venv {venv} && {venv}/bin/pip install guidellm): "
            "compared with the bare httpx loop only"))
    if "guidellm" not in found:
        return Peer("aiperf", root, reason=f"AIPerf in {venv} is not driven by this script (GuideLLM is): no "
                                           "peer ratio")
    try:
        version = subprocess.run([str(root / "bin" / "guidellm"), "--version"], capture_output=True, text=True,
                                 timeout=120).stdout.strip().splitlines()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Peer("guidellm", root, reason=f"guidellm in {venv} does not start ({exc}): no peer ratio")
    # `guidellm --version` prints "guidellm version: 0.8.1"
    peer = Peer("GuideLLM", root, version="GuideLLM " + (version[-1].split()[-1] if version else "(no version)"))
    tokenizer = workdir / "tokenizer"
    try:
        made = subprocess.run([str(root / "bin" / "python"), "-c", TOKENIZER_SCRIPT, str(tokenizer)],
                              capture_output=True, text=True, timeout=300)
        last = (made.stderr.strip().splitlines() or ["no message"])[-1] if made.returncode else ""
    except (OSError, subprocess.TimeoutExpired) as exc:
        last = str(exc)
    if last:
        peer.reason = f"{peer.version}: the local tokenizer could not be built in {venv} ({last}): no peer ratio"
        return peer
    peer.tokenizer = tokenizer
    return peer


def guidellm_p95(report: dict) -> tuple[float, int] | None:
    """TTFT p95 in seconds of the completed requests of GuideLLM's (single) benchmark, and how many; None if none
    completed (GuideLLM counts requests cut off at the end of the run as incomplete, not in these figures)."""
    ttft = report["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"]
    if not ttft["count"]:
        return None
    return ttft["percentiles"]["p95"] / 1000, int(ttft["count"])


def run_guidellm(peer: Peer, url: str, profile: str, seconds: float, workdir: Path) -> tuple[float, int] | str:
    """One GuideLLM run of a warm-up and a measured window of `seconds` each (as gsg's two rounds); the TTFT p95
    of the measured window and its request count, or the one line that says why there is none."""
    output = workdir / "guidellm.json"
    output.unlink(missing_ok=True)
    command = [str(peer.venv / "bin" / "guidellm"), "run",
               "--backend", f"kind=openai_http,target={url},model=m,validate_backend=false",
               "--profile", f"{profile},warmup={seconds:g}",
               "--constraint", f"kind=max_duration,seconds={2 * seconds:g}",
               "--tokenizer", f"kind=huggingface_auto,model={peer.tokenizer}",
               "--data", f"kind=synthetic_text,prompt_tokens=16,output_tokens={TOKENS}",
               "--output", f"kind=json,path={output}", "--disable-console"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PEER_STARTUP_S + 2 * seconds,
                              cwd=workdir, env=env)
    except subprocess.TimeoutExpired:
        return f"GuideLLM did not finish within {PEER_STARTUP_S + 2 * seconds:g} s"
    if done.returncode != 0 or not output.is_file():
        last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or ["no message"])[-1]
        return f"GuideLLM exited {done.returncode}: {last[:200]}"
    figures = guidellm_p95(json.loads(output.read_text()))
    return figures if figures is not None else "GuideLLM completed no request in its measured window"


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


async def first_token_seconds(client, url: str, body: dict, clock=time.perf_counter) -> float | None:
    """Streams one chat completion to its end and gives the seconds to its first content chunk (the fake server's
    tokens are "w..."), or None when none came; both bare loops time a request this one way."""
    start = clock()
    first = None
    async with client.stream("POST", url + "/v1/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if first is None and '"content":"w' in line:
                first = clock() - start
    return first


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
                    first = await first_token_seconds(client, url, body)
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
            first = await first_token_seconds(client, url, body)
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
    with tempfile.TemporaryDirectory(prefix="gsg-peer-") as workdir:
        peer = find_peer(args.peer_venv, Path(workdir))
        print(f"peer: {peer.version} from {peer.venv}, offline with a local byte-level tokenizer" if peer.runnable
              else f"peer: {peer.reason}", flush=True)
        worst = 0
        for concurrency in (int(c) for c in str(args.concurrency).split(",")):
            profile = f"kind=concurrent,streams=[{concurrency}],rampup_duration={RAMP_S:g}"
            worst = max(worst, measure(args, concurrency, client_core, server_core, peer, profile, Path(workdir)))
        if args.rate > 0:
            profile = f"kind=constant,rate=[{args.rate:g}]"
            worst = max(worst, measure(args, 0, client_core, server_core, peer, profile, Path(workdir)))
    return worst


def start_server(server_core: int | None) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, __file__, "--serve"] +
                              (["--core", str(server_core)] if server_core is not None else []),
                              stdout=subprocess.PIPE, text=True)
    return server, server.stdout.readline().strip()


def measure(args, concurrency: int, client_core: int, server_core: int | None, peer: Peer, profile: str,
            workdir: Path) -> int:
    """Interleaved runs of gsg, the bare loop and the peer against one fresh server: closed loop at `concurrency`
    streams, or open loop at --rate when `concurrency` is 0. 0 when gsg is within target of the bare loop."""
    open_loop = concurrency == 0
    server, url = start_server(server_core)
    bare_p95s: list[float] = []
    gsg_p95s: list[float] = []
    peer_p95s: list[float] = []
    in_flight: list[float] = []
    peer_failure = ""
    try:
        os.sched_setaffinity(0, {client_core})  # the clients get one core, the peer's worker processes too
        if not open_loop:
            asyncio.run(bare_loop(url, 16, 1.0))  # warm both paths up
        for _ in range(args.runs):  # interleaved: a slow spell of the machine hits all alike
            cpu = time.process_time()
            bare = asyncio.run(bare_open_loop(url, args.rate, args.seconds) if open_loop
                               else bare_loop(url, concurrency, args.seconds))
            bare_cpu = (time.process_time() - cpu) / (2 * args.seconds)
            bare_p95s.append(p95(bare))
            cpu = time.process_time()
            if open_loop:
                stats, snapshots = asyncio.run(gsg_open_round(url, args.rate, args.seconds)), []
            else:
                stats, snapshots = asyncio.run(gsg_round(url, concurrency, args.seconds))
            gsg_cpu = (time.process_time() - cpu) / (2 * args.seconds)
            gsg_p95s.append(stats.ttft_p95_s)
            running = sorted(s.running for s in snapshots if s.running is not None)
            in_flight.append(running[len(running) // 2] if running else 0)  # the server's own count
            line = (f"run: bare p95 {bare_p95s[-1] * 1000:.2f} ms ({len(bare)} requests, client CPU {bare_cpu:.0%}); "
                    f"gsg p95 {gsg_p95s[-1] * 1000:.2f} ms ({stats.requests} requests, {stats.errors} errors, "
                    f"client CPU {gsg_cpu:.0%}"
                    + ("" if open_loop else f", median {in_flight[-1]:.0f} streams in flight") + ")")
            if peer.runnable and not peer_failure:
                outcome = run_guidellm(peer, url, profile, args.seconds, workdir)
                if isinstance(outcome, str):
                    peer_failure = outcome
                else:
                    peer_p95s.append(outcome[0])
                    line += f"; {peer.name} p95 {outcome[0] * 1000:.2f} ms ({outcome[1]} requests)"
            print(line, flush=True)
    finally:
        server.kill()
        server.wait()
    return report(args, concurrency, client_core, server_core, peer, bare_p95s, gsg_p95s, peer_p95s,
                  in_flight, peer_failure)


def report(args, concurrency: int, client_core: int, server_core: int | None, peer: Peer, bare_p95s: list[float],
           gsg_p95s: list[float], peer_p95s: list[float], in_flight: list[float], peer_failure: str) -> int:
    """The side-by-side lines of one step (best of the runs for each client); 0 when gsg is within target."""
    open_loop = concurrency == 0
    bare_best, gsg_best = min(bare_p95s), min(gsg_p95s)
    diff_ms = (gsg_best - bare_best) * 1000
    load = (f"open loop at {args.rate:g} requests/s (constant arrivals)" if open_loop
            else f"--concurrency {concurrency}")
    print(f"{load}: server fixed TTFT {TTFT_S * 1000:.0f} ms, {TOKENS} tokens every {ITL_S * 1000:.0f} ms; "
          f"clients on core {client_core}, server on core {server_core}")
    print(f"  bare httpx loop: TTFT p95 {bare_best * 1000:.2f} ms (best of {len(bare_p95s)})")
    streams_ok = True
    if open_loop:
        print(f"  gsg soak:        TTFT p95 {gsg_best * 1000:.2f} ms (best of {len(gsg_p95s)})")
    else:
        streams = min(in_flight)
        streams_ok = streams >= min(MIN_STREAMS, concurrency)
        print(f"  gsg soak:        TTFT p95 {gsg_best * 1000:.2f} ms (best of {len(gsg_p95s)}); median streams in "
              f"flight {streams:.0f} (target >= {min(MIN_STREAMS, concurrency)})")
    if peer_p95s:
        peer_best = min(peer_p95s)
        print(f"  {peer.name + ':':<17}TTFT p95 {peer_best * 1000:.2f} ms (best of {len(peer_p95s)}, {peer.version})"
              f"; gsg / {peer.name} ratio {gsg_best / peer_best:.3f}")
    else:
        print(f"  {peer.name if peer.runnable else 'peer'}: not measured ("
              f"{peer_failure or peer.reason})")
    ok = diff_ms <= TARGET_MS and streams_ok  # overhead is what gsg adds: being faster than the bare loop is not
    print(f"  gsg - bare: {diff_ms:+.2f} ms (target: at most {TARGET_MS:g} ms added); gsg / bare ratio "
          f"{gsg_best / bare_best:.3f} {'OK' if ok else 'OVER TARGET'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
