"""A kept-alive connection the server closes as the client reuses it (the real llama-server does this to about one
request in ten): sent again once on a new connection, never counted as the server's failure; a stream that broke
after the server answered is not sent again."""

from __future__ import annotations

import asyncio
import json

from gpustack_guard.adapters.soak.load import (
    STALE_CONNECTION_RETRIES,
    Target,
    chat_completions_url,
    make_client,
    stream_one,
)
from gpustack_guard.core.soak.prompts import make_prompt

PROMPT = make_prompt(0, 0, 40, 3)
EVENTS = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in (
    {"choices": [{"index": 0, "delta": {"content": "w0 "}}]},
    {"choices": [{"index": 0, "delta": {"content": "w1 "}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})) + b"data: [DONE]\n\n"
HALF = EVENTS[: EVENTS.index(b"data: ", 10)]  # the first event only


class Closer:
    """Raw HTTP/1.1 on loopback. `drop(connection, request)` says what to do with the n-th request (0-based) on the
    k-th connection: "answer", "close" (read it, close without a byte) or "break" (headers and one event, then close)."""

    def __init__(self, drop):
        self.drop = drop
        self.requests: list[tuple[int, int]] = []
        self.connections = 0

    async def __aenter__(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def handle(self, reader, writer):
        connection, self.connections = self.connections, self.connections + 1
        try:
            for n in range(100):
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                await reader.readexactly(length)
                self.requests.append((connection, n))
                what = self.drop(connection, n)
                if what == "close":
                    return
                body = HALF if what == "break" else EVENTS
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(EVENTS), body))  # "break" promises the whole body and sends part of it
                await writer.drain()
                if what == "break":
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def run(drop, requests: int):
    async def go():
        async with Closer(drop) as server, make_client(1, 5.0) as client:
            target = Target("ours", chat_completions_url(server.url), "m")
            results = [await stream_one(client, target, PROMPT, 0.0, 5.0) for _ in range(requests)]
            return results, server
    return asyncio.run(go())


def test_a_reused_connection_closed_before_an_answer_is_sent_again_on_a_new_one():
    # the second request on the first connection meets a closed socket, as llama-server's keep-alive does
    results, server = run(lambda connection, n: "close" if (connection, n) == (0, 1) else "answer", 3)
    assert [(r.ok, r.error, r.output_tokens) for r in results] == [(True, None, 2)] * 3
    assert server.requests == [(0, 0), (0, 1), (1, 0), (1, 1)]  # sent again on the second connection
    assert all(r.ttft_s is not None and r.ttft_s > 0 for r in results)


def test_a_server_that_closes_every_request_is_stream_broken_after_one_retry():
    assert STALE_CONNECTION_RETRIES == 1
    results, server = run(lambda connection, n: "close", 2)
    assert [(r.ok, r.error) for r in results] == [(False, "stream broken")] * 2
    assert len(server.requests) == 2 * (1 + STALE_CONNECTION_RETRIES)  # bounded: never a retry loop


def test_a_stream_broken_after_the_answer_began_is_not_sent_again():
    results, server = run(lambda connection, n: "break" if connection == 0 else "answer", 1)
    assert [(r.ok, r.error) for r in results] == [(False, "stream broken")]
    assert server.requests == [(0, 0)]  # the server was serving it: a second send would double the load


def _timed_against_hostile(forever: float, timeout: float):
    """One request to the hostile server's slow-headers: a status line, header lines dripping for `forever`
    seconds, then a reset before the answer is complete; the reset looks like a stale connection, so the request
    is sent again (and meets the same)."""
    from support.hostile_gpustack import HostileGPUStack

    async def go(url):
        async with make_client(1, timeout) as client:
            return await stream_one(client, Target("ours", url + "/v2/chat/completions", "m"), PROMPT, 0.0, timeout)

    with HostileGPUStack("slow-headers", forever=forever, drip_interval=0.02) as server:
        result = asyncio.run(go(server.url()))
        return result, len(server.requests)


def test_a_resend_after_a_stale_close_lives_inside_the_requests_deadline():
    # the first send ends by the reset at 0.4 s: its resend has what is left of the 0.7 s, not a fresh 0.7 s
    result, sent = _timed_against_hostile(forever=0.4, timeout=0.7)
    assert sent == 2 and (result.ok, result.error) == (False, "timeout")
    assert 0.65 <= result.finished - result.started < 0.95  # a fresh deadline would have ended near 1.1 s


def test_a_resend_that_fails_before_the_deadline_is_stream_broken():
    # the near miss: both sends end by their resets (0.2 s each) well within 2 s
    result, sent = _timed_against_hostile(forever=0.2, timeout=2.0)
    assert sent == 2 and (result.ok, result.error) == (False, "stream broken")
    assert 0.35 <= result.finished - result.started < 1.0
