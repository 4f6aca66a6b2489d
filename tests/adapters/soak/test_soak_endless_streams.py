"""Inference endpoints on a real loopback socket that never finish an answer, or finish it the HTTP/1.0 way (no
length, no chunks: the body ends when the connection closes). The request timeout is a deadline over the whole
answer: a stream kept alive by comments or by a delta a tick is cut there, not waited on per read."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from gpustack_guard.adapters.soak.load import Target, make_client, stream_one
from gpustack_guard.core.soak.prompts import make_prompt

DELTA = b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n'


class _Endpoint:
    """Answers every request with `head`, then `tick` every `every` seconds until `ticks` were sent (None: until the
    client leaves), then `tail`, then closes."""

    def __init__(self, head: bytes, tick: bytes, every: float, ticks: int | None, tail: bytes = b""):
        self.head, self.tick, self.every, self.ticks, self.tail = head, tick, every, ticks, tail
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1/chat/completions"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                while len(body) < length:  # read the request whole: closing on unread bytes would be a reset
                    body += conn.recv(65536)
                conn.sendall(self.head)
                sent = 0
                while not self.stop.is_set() and (self.ticks is None or sent < self.ticks):
                    conn.sendall(self.tick)
                    sent += 1
                    time.sleep(self.every)
                conn.sendall(self.tail)
            except OSError:
                pass  # the client left: what a deadline does

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


def _stream(endpoint: _Endpoint, timeout: float):
    async def go():
        async with make_client(1, timeout) as client:
            return await stream_one(client, Target("ours", endpoint.url, "m"), make_prompt(0, 0, 40, 6), 0.0,
                                    timeout)
    started = time.perf_counter()
    try:
        result = asyncio.run(go())
    finally:
        endpoint.close()
    return (result.ok, result.error, result.output_tokens), time.perf_counter() - started


HTTP11_SSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
HTTP10_SSE = b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@pytest.mark.parametrize("tick", [_chunked(b": keep-alive\n\n"), _chunked(DELTA), _chunked(b"\n")])
def test_a_stream_that_never_ends_is_cut_at_the_request_timeout(tick):
    outcome, took = _stream(_Endpoint(HTTP11_SSE, tick, 0.05, None), timeout=0.6)
    assert outcome == (False, "timeout", 0)
    assert 0.5 < took < 3.0


def test_an_http10_body_that_ends_when_the_connection_closes_is_read_whole():
    outcome, _ = _stream(_Endpoint(HTTP10_SSE, DELTA, 0.01, 3, b"data: [DONE]\n\n"), timeout=5.0)
    assert outcome == (True, None, 3)


def test_an_http10_body_closed_before_its_end_is_a_stream_that_ended_early():
    outcome, _ = _stream(_Endpoint(HTTP10_SSE, DELTA, 0.01, 3), timeout=5.0)
    assert outcome == (False, "stream ended early", 0)
