"""An in-process OpenAI-compatible streaming server with a fake /metrics, for `gsg soak` tests and benchmarks.

Plain asyncio sockets on 127.0.0.1 (HTTP/1.1, keep-alive, chunked SSE), so the client under test does real
network I/O. A Scenario says how the server degrades with the seconds since it started: TTFT, memory, KV
usage, preemptions and errors, each with seeded noise. `flavour` picks the metric names an engine exposes.
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import httpx

GIB = 1024 ** 3
MIB = 1024 ** 2


@dataclass
class Scenario:
    name: str = "stable"
    ttft_s: float = 0.08
    ttft_growth_per_s: float = 0.0  # relative TTFT growth per second of uptime
    ttft_jitter: float = 0.25  # ± relative, uniform
    spike_rate: float = 0.02  # share of requests with a 3× TTFT spike (noise a p95 must shrug off)
    itl_s: float = 0.005
    memory_bytes: float = 2 * GIB
    memory_growth_per_s: float = 0.0
    memory_jitter: float = 6 * MIB
    kv_usage: float = 0.35
    kv_growth_per_s: float = 0.0
    preemptions_per_request_per_s: float = 0.0  # probability of a preemption per request grows with uptime
    error_rate: float = 0.0
    reasoning_only: bool = False  # deltas carry reasoning_content only, never content
    send_usage: bool = True
    restart_at_s: float | None = None  # counters and memory go back to zero once, here
    gpu_total_bytes: float = 48 * GIB
    ttft_per_other_running_s: float = 0.0  # queueing: each other request in flight adds this to a TTFT
    cold_until_s: float = 0.0  # answers 503 until this much uptime (a cold start that warm-up rounds absorb)


SCENARIOS = {
    "stable": Scenario("stable"),
    "memory-growth": Scenario("memory-growth", memory_growth_per_s=40 * MIB, ttft_growth_per_s=0.06),
    "preemption": Scenario("preemption", ttft_growth_per_s=0.25, kv_usage=0.9, kv_growth_per_s=0.02,
                           preemptions_per_request_per_s=0.03),
    "failing": Scenario("failing", error_rate=0.25),
    "reasoning": Scenario("reasoning", reasoning_only=True),
    "latency-drift": Scenario("latency-drift", ttft_growth_per_s=0.25),
}

FLAVOURS = ("vllm", "vllm-old", "sglang", "llamacpp", "gpustack")


@dataclass
class FakeEngine:
    scenario: Scenario
    seed: int = 0
    flavour: str = "vllm"
    model: str = "qwen3-8b"
    clock: Callable[[], float] = time.perf_counter  # the uptime's clock (a virtual one beside a virtual loop)
    started: float = field(default_factory=time.perf_counter)
    running: int = 0
    requests: int = 0
    preemptions: int = 0
    restarted: bool = False
    # the running count each time a preemption happened, so tests can check the recommendation
    running_at_preemption: list[int] = field(default_factory=list)

    def __post_init__(self):
        self.rng = random.Random(self.seed)

    def uptime(self) -> float:
        up = self.clock() - self.started
        s = self.scenario
        if s.restart_at_s is not None and up >= s.restart_at_s and not self.restarted:
            self.restarted = True
            self.preemptions = 0
        return up - s.restart_at_s if self.restarted else up

    def ttft(self) -> float:
        s = self.scenario
        base = s.ttft_s * (1 + s.ttft_growth_per_s * self.uptime()) + s.ttft_per_other_running_s * max(
            self.running - 1, 0)
        spike = 3.0 if self.rng.random() < s.spike_rate else 1.0
        return base * spike * (1 + self.rng.uniform(-s.ttft_jitter, s.ttft_jitter))

    def memory(self) -> float:
        s = self.scenario
        return s.memory_bytes + s.memory_growth_per_s * self.uptime() + self.rng.uniform(-1, 1) * s.memory_jitter

    def kv_usage(self) -> float:
        s = self.scenario
        value = s.kv_usage + s.kv_growth_per_s * self.uptime() + self.rng.uniform(-0.02, 0.02)
        return max(0.0, min(value, 1.0))

    def metrics(self) -> str:
        kv, memory = self.kv_usage(), self.memory()
        running, waiting, pre = self.running, 0, self.preemptions
        m = self.model
        start = 1_700_000_000.0 + (100.0 if self.restarted else 0.0)
        process = (f"# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                   f"# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes {memory:.1f}\n"
                   f"# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {start}\n")
        if self.flavour == "vllm":  # vLLM >= 0.9.2 (V1): kv_cache_usage_perc, an engine label
            e = f'engine="0",model_name="{m}"'
            return process + (
                f'# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{{e}}} {running}\n'
                f'# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{{e}}} {waiting}\n'
                f'# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{{{e}}} {kv}\n'
                f'# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total{{{e}}} {pre}.0\n'
                f'vllm:num_preemptions_created{{engine="0",model_name="{m}"}} 1.7e9\n'
                f'# TYPE vllm:time_to_first_token_seconds histogram\n'
                f'vllm:time_to_first_token_seconds_bucket{{le="0.1",model_name="{m}"}} 3.0\n'
                f'vllm:time_to_first_token_seconds_bucket{{le="+Inf",model_name="{m}"}} 4.0\n'
                f'vllm:time_to_first_token_seconds_count{{model_name="{m}"}} 4.0\n'
                f'vllm:time_to_first_token_seconds_sum{{model_name="{m}"}} 0.3\n')
        if self.flavour == "vllm-old":  # vLLM V0 / <= 0.9.1: gpu_cache_usage_perc, no engine label
            return process + (
                f'# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{model_name="{m}"}} {running}\n'
                f'# TYPE vllm:num_requests_swapped gauge\nvllm:num_requests_swapped{{model_name="{m}"}} 0.0\n'
                f'# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{model_name="{m}"}} {waiting}\n'
                f'# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{{model_name="{m}"}} {kv}\n'
                f'# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{{model_name="{m}"}} {pre}.0\n')
        if self.flavour == "sglang":
            return process + (
                f'# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{{model_name="{m}"}} {running}\n'
                f'# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{{model_name="{m}"}} {waiting}\n'
                f'# TYPE sglang:token_usage gauge\nsglang:token_usage{{model_name="{m}"}} {kv}\n'
                f'# TYPE sglang:num_retracted_requests counter\n'
                f'sglang:num_retracted_requests_total{{model_name="{m}"}} {pre}.0\n')
        if self.flavour == "llamacpp":  # no process memory: --pid supplies it
            return (f"# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing {running}\n"
                    f"# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred {waiting}\n"
                    f"# TYPE llamacpp:kv_cache_usage_ratio gauge\nllamacpp:kv_cache_usage_ratio {kv}\n")
        if self.flavour == "gpustack":  # the worker exporter: gpustack:* names, every instance on the worker
            allocated = 0.9 * self.scenario.gpu_total_bytes
            used = allocated + (memory - self.scenario.memory_bytes) + 1 * GIB
            lab = f'worker="w1",model="{m}",instance="{m}-abc"'
            other = 'worker="w1",model="other",instance="other-1"'
            return (f'# TYPE gpustack:num_requests_running gauge\ngpustack:num_requests_running{{{lab}}} {running}\n'
                    f'gpustack:num_requests_running{{{other}}} 7\n'
                    f'# TYPE gpustack:num_requests_waiting gauge\ngpustack:num_requests_waiting{{{lab}}} {waiting}\n'
                    f'# TYPE gpustack:kv_cache_usage_ratio gauge\ngpustack:kv_cache_usage_ratio{{{lab}}} {kv}\n'
                    f'gpustack:kv_cache_usage_ratio{{{other}}} 0.99\n'
                    f'# TYPE gpustack:request_preemptions counter\ngpustack:request_preemptions_total{{{lab}}} {pre}\n'
                    f'# TYPE gpustack:worker_node_gram_used_bytes gauge\n'
                    f'gpustack:worker_node_gram_used_bytes{{worker="w1",gpu="0"}} {used:.0f}\n'
                    f'# TYPE gpustack:worker_node_gram_allocated_bytes gauge\n'
                    f'gpustack:worker_node_gram_allocated_bytes{{worker="w1",gpu="0"}} {allocated:.0f}\n'
                    f'# TYPE gpustack:worker_node_gram_total_bytes gauge\n'
                    f'gpustack:worker_node_gram_total_bytes{{worker="w1",gpu="0"}} '
                    f'{self.scenario.gpu_total_bytes:.0f}\n')
        raise ValueError(self.flavour)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(payload: dict | str) -> bytes:
    body = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return b"data: " + body.encode() + b"\n\n"


class FakeServer:
    """One engine behind one port. Use as `async with FakeServer(...) as server:` or start_in_thread()."""

    def __init__(self, scenario: Scenario | str = "stable", seed: int = 0, flavour: str = "vllm",
                 model: str = "qwen3-8b", api_key: str | None = None,
                 clock: Callable[[], float] = time.perf_counter, metrics_need_key: bool = False):
        scenario = SCENARIOS[scenario] if isinstance(scenario, str) else scenario
        self.engine = FakeEngine(scenario, seed, flavour, model, clock, clock())
        self.api_key = api_key
        self.metrics_need_key = metrics_need_key  # as llama-server's /metrics when started with --api-key
        self.host = "127.0.0.1"
        self.port = 0
        self.seen_bodies: collections.deque = collections.deque(maxlen=100)  # the latest requests
        self.seen_auth: set[str] = set()
        self._server = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def __aenter__(self) -> FakeServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        self.engine.started = self.engine.clock()
        return self

    async def __aexit__(self, *exc) -> None:
        self._server.close()

    def start_in_thread(self) -> FakeServer:
        """Serve from a thread with its own loop (for code under test that calls asyncio.run itself)."""
        ready = threading.Event()

        def serve():
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self.__aenter__())
            ready.set()
            loop.run_forever()

        threading.Thread(target=serve, daemon=True).start()
        ready.wait(5)
        return self

    def stop_thread(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                if "authorization" in headers:
                    self.seen_auth.add(headers["authorization"])
                unkeyed = self.api_key and headers.get("authorization") != f"Bearer {self.api_key}"
                if path.startswith("/metrics") and method == "GET":
                    if self.metrics_need_key and unkeyed:
                        await self._plain(writer, 401, '{"error":"unauthorized"}', "application/json")
                    else:
                        await self._plain(writer, 200, self.engine.metrics(), "text/plain; version=0.0.4")
                elif path.endswith("/chat/completions") and method == "POST":
                    if unkeyed:
                        await self._plain(writer, 401, '{"error":"unauthorized"}', "application/json")
                    else:
                        keep = await self._stream(writer, json.loads(body))
                        if not keep:
                            break
                else:
                    await self._plain(writer, 404, "not found", "text/plain")
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _plain(self, writer, status: int, text: str, content_type: str) -> None:
        data = text.encode()
        reason = {200: "OK", 401: "Unauthorized", 404: "Not Found", 503: "Service Unavailable"}[status]
        writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"
                     % (status, reason.encode(), content_type.encode(), len(data), data))
        await writer.drain()

    async def completion_events(self, body: dict):
        """The SSE events of one completion, as bytes; None first means "answer 503", and a
        ConnectionResetError mid-way means the connection drops."""
        engine, s = self.engine, self.engine.scenario
        self.seen_bodies.append(body)
        engine.requests += 1
        fault = engine.rng.random() < s.error_rate
        if (fault and engine.rng.random() < 0.5) or engine.uptime() < s.cold_until_s:
            yield None
            return
        engine.running += 1
        try:
            up = engine.uptime()
            if engine.rng.random() < s.preemptions_per_request_per_s * up:
                engine.preemptions += 1
                engine.running_at_preemption.append(engine.running)
            yield b""  # the headers go out now
            await asyncio.sleep(engine.ttft())
            tokens = int(body.get("max_tokens") or 8)
            field_name = "reasoning_content" if s.reasoning_only else "content"
            base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": body.get("model")}
            events = [_event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})]
            for i in range(tokens):
                if i:
                    yield b"".join(events)
                    events = []
                    await asyncio.sleep(s.itl_s)
                if fault and i == tokens // 2:
                    raise ConnectionResetError("the fake drops the connection mid-stream")
                events.append(_event({**base, "choices": [{"index": 0, "delta": {field_name: f"w{i} "}}]}))
            events.append(_event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}))
            if s.send_usage:
                events.append(_event({**base, "choices": [], "usage": {
                    "prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": 10 + tokens}}))
            events.append(_event("[DONE]"))
            yield b"".join(events)
        finally:
            engine.running -= 1

    async def _stream(self, writer, body: dict) -> bool:
        """Stream one completion over the socket, chunked; False when the connection was deliberately broken."""
        try:
            async for piece in self.completion_events(body):
                if piece is None:
                    await self._plain(writer, 503, '{"error":"overloaded"}', "application/json")
                    return True
                if piece == b"":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                else:
                    writer.write(_chunk(piece))
                await writer.drain()
        except ConnectionResetError:
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    def transport(self) -> InProcessTransport:
        """The same engine without sockets: for many soaks at once in one event loop."""
        return InProcessTransport(self)


class Router(httpx.AsyncBaseTransport):
    """In-process servers by host name, no sockets: `Router.serve(...)` gives each a made-up host."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.servers: dict[str, FakeServer] = {}
        self.clock = clock

    def serve(self, scenario="stable", seed: int = 0, flavour: str = "vllm", **kw) -> FakeServer:
        server = FakeServer(scenario, seed, flavour, clock=self.clock, **kw)
        server.host, server.port = f"fake-{len(self.servers)}.test", 80
        server.engine.started = self.clock()
        self.servers[f"{server.host}:80"] = server
        return server

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        server = self.servers.get(f"{request.url.host}:{request.url.port or 80}")
        if server is None:
            raise httpx.ConnectError("no such fake server", request=request)
        return await InProcessTransport(server).handle_async_request(request)


class _EventStream(httpx.AsyncByteStream):
    def __init__(self, events):
        self.events = events

    async def __aiter__(self):
        try:
            async for piece in self.events:
                if piece:
                    yield piece
        except ConnectionResetError as exc:
            raise httpx.RemoteProtocolError(str(exc)) from None

    async def aclose(self) -> None:
        await self.events.aclose()


class InProcessTransport(httpx.AsyncBaseTransport):
    def __init__(self, server: FakeServer):
        self.server = server

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        server = self.server
        auth = request.headers.get("authorization")
        if auth:
            server.seen_auth.add(auth)
        unkeyed = server.api_key and auth != f"Bearer {server.api_key}"
        if request.url.path.startswith("/metrics"):
            if server.metrics_need_key and unkeyed:
                return httpx.Response(401, json={"error": "unauthorized"})
            return httpx.Response(200, text=server.engine.metrics())
        if not request.url.path.endswith("/chat/completions"):
            return httpx.Response(404)
        if unkeyed:
            return httpx.Response(401, json={"error": "unauthorized"})
        events = server.completion_events(json.loads(await request.aread()))
        first = await events.__anext__()
        if first is None:
            await events.aclose()
            return httpx.Response(503, json={"error": "overloaded"})
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_EventStream(events))
