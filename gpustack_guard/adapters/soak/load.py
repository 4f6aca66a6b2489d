"""Streamed /v1/chat/completions at a fixed concurrency, timing every chunk.

TTFT is the first non-empty `content` *or reasoning* delta: a reasoning model streams its thinking first,
and a client that waits for `content` reports TTFT as the whole think time, or 0 (gpustack#6205).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Callable

import httpx

from gpustack_guard.core.soak.prompts import Prompt
from gpustack_guard.core.soak.rounds import RequestResult

# a delta counts when it carries `content` or reasoning: `reasoning_content` (vLLM, SGLang, DeepSeek) or
# `reasoning` (newer vLLM, OpenRouter)


@dataclass(frozen=True)
class Target:
    name: str  # "ours" | "reference"
    url: str  # the chat-completions URL
    model: str
    api_key: str | None = None


def chat_completions_url(url: str) -> str:
    """Accept a server root, a /v1 base or the full endpoint; a query (a gateway's token) stays at the end."""
    cut = min((i for i in (url.find("?"), url.find("#")) if i != -1), default=len(url))
    base, tail = url[:cut].rstrip("/"), url[cut:]
    if base.endswith("/chat/completions"):
        return base + tail
    if base.endswith("/v1") or base.endswith("/v1-openai"):
        return base + "/chat/completions" + tail
    return base + "/v1/chat/completions" + tail


def request_body(model: str, prompt: Prompt) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": prompt.text}], "max_tokens": prompt.max_tokens,
            "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}


@contextlib.asynccontextmanager
async def _cancel_after(seconds: float) -> AsyncIterator[None]:
    """asyncio.timeout for Python 3.10 (3.11 has it): cancel the running task after `seconds`, raise TimeoutError."""
    task = asyncio.current_task()
    fired = []

    def expire() -> None:
        fired.append(True)
        if task is not None:
            task.cancel()

    handle = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        yield
    except asyncio.CancelledError:
        if fired:
            raise TimeoutError from None
        raise
    finally:
        handle.cancel()


_deadline = getattr(asyncio, "timeout", _cancel_after)


async def stream_one(client: httpx.AsyncClient, target: Target, prompt: Prompt, origin: float,
                     timeout: float, clock: Callable[[], float] = time.perf_counter) -> RequestResult:
    """One streamed request; never raises for a server's fault, it returns the reason instead."""
    started = clock()
    first: float | None = None
    last = 0.0  # read only after the first delta, which sets it
    gaps: list[float] = []
    chunks = 0
    usage_tokens = None
    done = finished = False
    headers = {"Authorization": f"Bearer {target.api_key}"} if target.api_key else {}

    def result(ok: bool, error: str | None = None) -> RequestResult:
        tokens = usage_tokens if usage_tokens is not None else chunks
        return RequestResult(started - origin, clock() - origin, ok, first - started if first else None, gaps,
                             tokens if ok else 0, error)

    try:
        async with _deadline(timeout), client.stream("POST", target.url, json=request_body(target.model, prompt),
                                                     headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
                return result(False, f"HTTP {response.status_code}")
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                now = clock()  # the chunk's arrival, before gsg spends anything on parsing it
                payload = line[5:].strip()
                if payload == "[DONE]":
                    done = True  # read on to the end of the body: a connection left mid-body is closed
                    continue
                try:
                    chunk = json.loads(payload)
                except ValueError:
                    return result(False, "malformed stream chunk")
                if chunk.get("error"):
                    return result(False, "error in stream")
                choices = chunk.get("choices")
                if choices:  # one choice (n=1): the hot loop reads it directly
                    choice = choices[0]
                    delta = choice.get("delta")
                    if delta and (delta.get("content") or delta.get("reasoning_content")
                                  or delta.get("reasoning")):
                        if first is None:
                            first = now
                        else:
                            gaps.append(now - last)
                        last = now
                        chunks += 1
                    if choice.get("finish_reason"):
                        finished = True
                usage = chunk.get("usage")
                if usage and usage.get("completion_tokens") is not None:
                    usage_tokens = int(usage["completion_tokens"])
    except TimeoutError:
        return result(False, "timeout")
    except httpx.TimeoutException:
        return result(False, "timeout")
    except httpx.ConnectError:
        return result(False, "connection refused")
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
        return result(False, "stream broken")
    except httpx.HTTPError as exc:
        return result(False, type(exc).__name__)
    if first is None:
        return result(False, "no tokens")
    if not (done or finished):
        return result(False, "stream ended early")
    return result(True)


def ramp_seconds(round_seconds: float) -> float:
    """Streams start spread over this, not at once: 256 requests in the same millisecond measure the
    server's accept queue, and would put a burst into every round's p95."""
    return min(1.0, 0.1 * round_seconds)


async def drive(clients: list[httpx.AsyncClient], target: Target, prompts: Callable[[int], Prompt], seconds: float,
                max_requests: int | None, origin: float, timeout: float, ramp: float = 0.0,
                results: list[RequestResult] | None = None,
                clock: Callable[[], float] = time.perf_counter) -> list[RequestResult]:
    """Keep one request in flight per client until `seconds` pass or `max_requests` started; then drain.
    Stream k starts k/len(clients) of `ramp` seconds late.

    One client (one connection) per stream: httpcore's shared pool assigns requests to connections in
    O(connections × requests) per event, which at 256 streams costs seconds of queueing (measured; see
    benchmarks/soak_overhead.py). The same prompt sequence (prompts(0), prompts(1), ...) for every target,
    so the reference sees what we saw.
    """
    deadline = clock() + seconds
    results = [] if results is None else results  # the caller's list, to watch it fill
    next_index = 0

    async def worker(k: int, client: httpx.AsyncClient) -> None:
        nonlocal next_index
        if ramp and k:
            await asyncio.sleep(ramp * k / len(clients))
        while clock() < deadline and (max_requests is None or next_index < max_requests):
            index = next_index
            next_index += 1
            results.append(await stream_one(client, target, prompts(index), origin, timeout, clock))

    await asyncio.gather(*(worker(k, client) for k, client in enumerate(clients)))
    return results


@functools.lru_cache(maxsize=4)
def _tls_context(verify: bool | str) -> ssl.SSLContext | bool:
    """One context per setting: loading the CA store costs ~25 ms, and a soak opens three clients."""
    if verify is False:
        return False
    return ssl.create_default_context(cafile=verify if isinstance(verify, str) else None)


def make_client(connections: int, timeout: float, transport: httpx.AsyncBaseTransport | None = None,
                verify: bool | str = True) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                             transport=transport, verify=_tls_context(verify))
