"""The SSE line splitter: lines as sent whatever the chunking, bounded per line and per answer, in linear time."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

import gpustack_guard.adapters.soak.load as load


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]):
        self.pieces = pieces

    async def __aiter__(self):
        for piece in self.pieces:
            yield piece


def _lines(pieces: list[bytes]) -> list[bytes] | str:
    async def collect() -> list[bytes] | str:
        found = []
        try:
            async for line in load._sse_lines(httpx.Response(200, stream=_Pieces(pieces))):
                found.append(line)
        except load._Broken as exc:
            return str(exc)
        return found
    return asyncio.run(collect())


@pytest.mark.parametrize("pieces, expected", [
    ([b"data: a\n\ndata: b\n"], [b"data: a", b"", b"data: b"]),
    ([b"da", b"ta: a", b"\n"], [b"data: a"]),  # a line over three chunks
    ([b"data: a", b"\ndata: b"], [b"data: a", b"data: b"]),  # newline opens a chunk; last line without one
    ([b"data: a\n", b"data: b\n"], [b"data: a", b"data: b"]),  # newline closes a chunk
    ([b"x", b"y\nz", b"w\n"], [b"xy", b"zw"]),  # a chunk ends one line and starts the next
    ([b"\n\n\n"], [b"", b"", b""]),
    ([b"data: a\r\n"], [b"data: a\r"]),  # \r stays: take() strips the payload
    ([b""], []),
])
def test_lines_are_split_as_sent_whatever_the_chunking(pieces, expected):
    assert _lines(pieces) == expected


@pytest.mark.parametrize("pieces, expected", [
    ([b"x" * 1024] * 1024, [b"x" * load.MiB]),  # exactly the cap: kept
    ([b"x" * 1024] * 1025, "stream line over 1 MiB"),  # one piece more: refused
    ([b"x" * 1023 + b"\n"] * 2048, [b"x" * 1023] * 2048),  # 2 MiB of short lines: fine
])
def test_one_line_is_bounded_not_the_answer(pieces, expected):
    assert _lines(pieces) == expected


def test_a_line_dripped_in_tiny_pieces_costs_linear_time():
    """Before: each piece copied the whole line so far (bytes +=), quadratic: 3-12 s measured for a 1 MiB line in
    10-byte pieces (more in these 4-byte ones), holding the event loop every stream is timed on; now linear."""
    pieces = [b"abcd"] * (load.MiB // 4) + [b"\n"]
    started = time.perf_counter()
    lines = _lines(pieces)
    assert lines == [b"abcd" * (load.MiB // 4)]
    assert time.perf_counter() - started < 5.0


def _answered_with(line: bytes):
    from gpustack_guard.adapters.soak.load import Target, make_client, stream_one
    from gpustack_guard.core.soak.prompts import make_prompt

    body = b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n' + line + b"\n\ndata: [DONE]\n\n"
    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=body))

    async def go():
        async with make_client(1, 5.0, transport) as client:
            return await stream_one(client, Target("ours", "http://endpoint.test/v1/chat/completions", "m"),
                                    make_prompt(0, 0, 40, 6), 0.0, 5.0)
    return asyncio.run(go())


@pytest.mark.parametrize("line, error", [
    (b"data: " + b"[" * 5000, "malformed stream chunk"),  # 5 KB of nesting: was a RecursionError out of the soak
    (b"data: " + b"[" * 100_000 + b"]" * 100_000, "malformed stream chunk"),
    (b'data: {"usage": ' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}", "malformed stream chunk"),
    (b'data: {"choices": [{"delta": ' + b"[" * 5000, "malformed stream chunk"),
    (b'data: {"x": ' + b"[" * 50 + b"]" * 50 + b', "choices": [{"delta": {}, "finish_reason": "stop"}]}', None),
])
def test_a_chunk_nested_past_jsons_depth_is_a_malformed_answer_not_a_crash(line, error):
    result = _answered_with(line)
    assert (result.ok, result.error) == (error is None, error)
