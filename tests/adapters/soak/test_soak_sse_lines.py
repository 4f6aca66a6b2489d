"""The SSE line splitter: lines as sent whatever the chunking, bounded per line and per answer, in linear time."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from support.soak_socket import ByteChunks

import gpustack_guard.adapters.soak.load as load


def _lines(pieces: list[bytes]) -> list[bytes] | str:
    async def collect() -> list[bytes] | str:
        found = []
        try:
            async for line in load._sse_lines(httpx.Response(200, stream=ByteChunks(pieces))):
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
    ([b"data: a\r\n"], [b"data: a"]),
    ([b"data: a\rdata: b\r\r"], [b"data: a", b"data: b", b""]),  # a lone CR ends a line too (SSE allows it)
    # a CRLF cut in two is one line end (before: an empty line more, which ended an event of several data lines)
    ([b"data: a\r", b"\ndata: b\r\n"], [b"data: a", b"data: b"]),
    ([b"data: a\r", b"\n", b"\r\n"], [b"data: a", b""]),  # the LF alone in its chunk; the next CRLF is a line
    ([b"data: a\r", b"", b"\n\n"], [b"data: a", b""]),  # an empty chunk between CR and LF
    ([b"data: a\r", b"\r", b"\n"], [b"data: a", b""]),  # CR, then CRLF: two line ends
    ([b"a\r\n", b"\n"], [b"a", b""]),  # a whole CRLF then an LF: an empty line
    ([b"\xef\xbb", b"\xbfdata: a\n\xef\xbb\xbfx\n"], [b"data: a", b"\xef\xbb\xbfx"]),  # the body's BOM only
    ([b"\xef\xbb\xbfdata: a"], [b"data: a"]),
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
    started = time.process_time()
    lines = _lines(pieces)
    assert lines == [b"abcd" * (load.MiB // 4)]
    assert time.process_time() - started < 5.0


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


def _streamed(body: bytes, content_type: str = "text/event-stream", pieces: int | None = None):
    """stream_one's (ok, error, tokens) for `body`, sent whole or in pieces of `pieces` bytes."""
    from gpustack_guard.adapters.soak.load import Target, make_client, stream_one
    from gpustack_guard.core.soak.prompts import make_prompt

    def answer(request: httpx.Request) -> httpx.Response:
        cut = [body[i:i + pieces] for i in range(0, len(body), pieces)] if pieces else [body]
        return httpx.Response(200, headers={"content-type": content_type}, stream=ByteChunks(cut))

    async def go():
        async with make_client(1, 5.0, httpx.MockTransport(answer)) as client:
            return await stream_one(client, Target("ours", "http://endpoint.test/v1/chat/completions", "m"),
                                    make_prompt(0, 0, 40, 6), 0.0, 5.0)
    result = asyncio.run(go())
    return result.ok, result.error, result.output_tokens


_DELTA = b'data: {"choices": [{"delta": {"content": "a"}}]}'
_DONE = b"data: [DONE]"


@pytest.mark.parametrize("body, outcome", [
    # before: one line of the whole answer, "malformed stream chunk"
    (_DELTA + b"\r\r" + _DELTA + b"\r\r" + _DONE + b"\r\r", (True, None, 2)),
    (_DELTA + b"\r\n\r\n" + _DELTA + b"\r\n\r\n" + _DONE + b"\r\n\r\n", (True, None, 2)),
    (b"\xef\xbb\xbf" + _DELTA + b"\n\n" + _DONE + b"\n\n", (True, None, 1)),  # before: "no tokens"
    # comments, ids, retry and a named event that is no error are not chunks
    (b": ping\n\n" + _DELTA + b"\nid: 3\nretry: 10\nevent: message\n\n: keep\n\n" + _DONE + b"\n\n",
     (True, None, 1)),
    # vLLM's older stream error has no "error" key; before: a success of one token
    (_DELTA + b'\n\ndata: {"object": "error", "message": "boom", "type": "BadRequestError", "code": 400}\n\n'
     + _DONE + b"\n\n", (False, "error in stream", 0)),
    # an error event named by the SSE `event:` field; before: a success
    (_DELTA + b'\n\nevent: error\ndata: {"message": "boom"}\n\n' + _DONE + b"\n\n", (False, "error in stream", 0)),
    (_DELTA + b'\n\nevent: error\n\n' + _DELTA + b"\n\n" + _DONE + b"\n\n", (True, None, 2)),  # it ends there
    # a second answer after [DONE] (a proxy mixing streams); before: 6 tokens
    (_DELTA + b"\n\n" + _DONE + b"\n\n" + (_DELTA + b"\n\n") * 5, (False, "data after [DONE]", 0)),
    (_DELTA + b"\n\n" + _DONE + b"\n\n" + _DONE + b"\n\n", (True, None, 1)),  # [DONE] twice: still done
    (_DELTA + b'\n\ndata: {"choices": [], "usage": {"completion_tokens": 5}}\n\n' + _DONE + b"\n\n",
     (True, None, 5)),  # usage only in the last chunk (within max_tokens 6: a larger count is no count)
])
@pytest.mark.parametrize("pieces", [None, 1, 7])
def test_sse_as_the_standard_allows_and_broken_streams_at_every_chunking(body, outcome, pieces):
    assert _streamed(body, pieces=pieces) == outcome


@pytest.mark.parametrize("content_type, body, error", [
    # a whole JSON answer under a content type that is not JSON's; before: "no tokens"
    ("text/plain", b'{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}', load.NOT_STREAMED),
    ("application/json", b'{"choices": []}', load.NOT_STREAMED),
    # an error as plain JSON under the event-stream type; before: "no tokens"
    ("text/event-stream", b'{"error": {"message": "model not found", "code": 404}}', "error in stream"),
    ("text/event-stream", b'{"object": "error", "message": "boom", "code": 400}\n', "error in stream"),
    # a login proxy's page; before: "no tokens"
    ("text/html; charset=utf-8", b"<html>sign in</html>",
     "an HTML page, not an event stream (a login page or proxy? point the URL at the engine)"),
    # ... typed as plain text, as the event stream, or not at all, whatever leads it; before: "no tokens"
    ("text/plain", b"<!DOCTYPE html>\n<html>sign in</html>", load.NOT_A_STREAM_HTML),
    ("text/event-stream", b"\r\n  <html><body>502 Bad Gateway</body></html>", load.NOT_A_STREAM_HTML),
    ("", b": ok\n\n<?xml version='1.0'?><html/>", load.NOT_A_STREAM_HTML),
])
def test_an_answer_that_is_no_event_stream_says_what_it_is(content_type, body, error):
    assert _streamed(body, content_type) == (False, error, 0)


def _finish(reason: str) -> bytes:
    return b'data: {"choices": [{"delta": {}, "finish_reason": ' + reason.encode() + b"}]}\n\n"


def _delta(delta: str) -> bytes:
    return b'data: {"choices": [{"delta": ' + delta.encode() + b"}]}\n\n"


_UNFINISHED = "finish_reason {}: the engine ended the request unfinished"


@pytest.mark.parametrize("body, outcome", [
    # vLLM's FINISH_REASON_STRINGS hold abort and error, SGLang's abort: a request the engine gave up on; before: a
    # success of the tokens streamed so far
    (_DELTA + b"\n\n" + _finish('"abort"') + _DONE + b"\n\n", (False, _UNFINISHED.format("abort"), 0)),
    (_DELTA + b"\n\n" + _finish('"error"') + _DONE + b"\n\n", (False, _UNFINISHED.format("error"), 0)),
    (b'data: {"choices": [{"delta": {"content": "a"}, "finish_reason": "abort"}]}\n\n',
     (False, _UNFINISHED.format("abort"), 0)),
    # the reasons of a finished answer
    (_DELTA + b"\n\n" + _finish('"repetition"'), (True, None, 1)),
    (_DELTA + b"\n\n" + _finish('"tool_calls"'), (True, None, 1)),
    (_DELTA + b"\n\n" + _finish('"content_filter"'), (True, None, 1)),
    (_DELTA + b"\n\n" + _finish("null") + _DONE + b"\n\n", (True, None, 1)),
    # a finish reason that is no text; before: a finished answer
    (_DELTA + b"\n\n" + _finish("5"), (False, "malformed stream chunk", 0)),
    (_DELTA + b"\n\n" + _finish("true"), (False, "malformed stream chunk", 0)),
    (_DELTA + b"\n\n" + _finish('{"type": "abort", "message": "out of memory"}'), (False, "malformed stream chunk", 0)),
    # a token field of the wrong type; before: each counted as a token
    (_delta('{"reasoning_content": 5}') + _DONE + b"\n\n", (False, "malformed stream chunk", 0)),
    (_delta('{"reasoning": {"text": "a"}}') + _DONE + b"\n\n", (False, "malformed stream chunk", 0)),
    (_delta('{"tool_calls": true}') + _DONE + b"\n\n", (False, "malformed stream chunk", 0)),
    (_delta('{"tool_calls": {"name": "f"}}') + _DONE + b"\n\n", (False, "malformed stream chunk", 0)),
    (_delta('{"content": [1]}') + _DONE + b"\n\n", (False, "malformed stream chunk", 0)),
    (_delta('"a"') + _DONE + b"\n\n", (False, "malformed stream chunk", 0)),
    # ... and of the right one
    (_delta('{"content": [{"type": "text", "text": "a"}]}') + _DONE + b"\n\n", (True, None, 1)),
    (_delta('{"reasoning": "a"}') + _delta('{"tool_calls": [{"index": 0}]}') + _DONE + b"\n\n", (True, None, 2)),
    (_delta('{"content": null, "reasoning_content": "a", "tool_calls": null}') + _DONE + b"\n\n", (True, None, 1)),
    # an error key whatever its value but null or false; before: {} and "" were a success
    (_DELTA + b'\n\ndata: {"error": {}}\n\n' + _DONE + b"\n\n", (False, "error in stream", 0)),
    (_DELTA + b'\n\ndata: {"error": ""}\n\n' + _DONE + b"\n\n", (False, "error in stream", 0)),
    (b'data: {"error": null, "choices": [{"delta": {"content": "a"}}]}\n\n'
     b'data: {"error": false, "choices": [{"delta": {"content": "a"}}]}\n\n' + _DONE + b"\n\n", (True, None, 2)),
])
@pytest.mark.parametrize("pieces", [None, 1, 7])
def test_finish_reasons_token_fields_and_error_keys_by_type(body, outcome, pieces):
    assert _streamed(body, pieces=pieces) == outcome


_ANSWERED = _DELTA + b"\n\n" + _finish('"stop"')


@pytest.mark.parametrize("body, outcome", [
    # choices that are no list; before: read past ("no tokens", or the answer's tokens short by that chunk's)
    (b'data: {"choices": "a"}\n\n' + _ANSWERED, (False, "malformed stream chunk", 0)),
    (b'data: {"choices": {"0": {"delta": {"content": "a"}}}}\n\n' + _ANSWERED, (False, "malformed stream chunk", 0)),
    (b'data: {"choices": 1}\n\n' + _ANSWERED, (False, "malformed stream chunk", 0)),
    # usage that is no object; before: read past, the answer's count lost
    (_ANSWERED + b'data: {"choices": [], "usage": "5"}\n\n', (False, "malformed stream chunk", 0)),
    (_ANSWERED + b'data: {"choices": [], "usage": [5]}\n\n', (False, "malformed stream chunk", 0)),
    (_ANSWERED + b'data: {"choices": [], "usage": 5}\n\n', (False, "malformed stream chunk", 0)),
    # an index that is no whole number >= 0; before: it matched no choice, "no tokens" however many streamed
    (_delta('{"content": "a"}').replace(b'[{', b'[{"index": "0", ') + _ANSWERED, (False, "malformed stream chunk", 0)),
    (_delta('{"content": "a"}').replace(b'[{', b'[{"index": 0.5, ') + _ANSWERED, (False, "malformed stream chunk", 0)),
    (_delta('{"content": "a"}').replace(b'[{', b'[{"index": -1, ') + _ANSWERED, (False, "malformed stream chunk", 0)),
    (_delta('{"content": "a"}').replace(b'[{', b'[{"index": true, ') + _ANSWERED, (False, "malformed stream chunk", 0)),
    # the right types: null choices and usage (a usage chunk, a proxy's keep-alive), an index 0 or none
    (b'data: {"choices": null, "usage": null}\n\n' + _ANSWERED + b'data: {"choices": null, "usage": '
     b'{"completion_tokens": 4}}\n\n', (True, None, 4)),
    (_delta('{"content": "a"}').replace(b'[{', b'[{"index": 0, ') + _ANSWERED, (True, None, 2)),
])
@pytest.mark.parametrize("pieces", [None, 1, 7])
def test_choices_usage_and_index_by_type(body, outcome, pieces):
    assert _streamed(body, pieces=pieces) == outcome


@pytest.mark.parametrize("body, outcome", [
    # one event's data over several lines, joined with LF as the SSE standard says (a proxy pretty-printing its
    # chunks); before: "malformed stream chunk"
    (b'data: {"choices":\ndata: [{"delta": {"content": "a"}}]}\n\n' + _DONE + b"\n\n", (True, None, 1)),
    (b'data: {\ndata:   "choices": [\ndata:     {"delta": {"content": "a"}}\ndata:   ]\ndata: }\n\n'
     + _DELTA + b"\n\n" + _DONE + b"\n\n", (True, None, 2)),
    (b'data: {"choices":\n: a comment inside the event\nid: 4\ndata: [{"delta": {"content": "a"}}]}\n\n'
     + _DONE + b"\n\n", (True, None, 1)),
    # the body ends without the empty line closing its last event
    (_DELTA + b'\n\ndata: {"choices": [{"delta": {},\ndata: "finish_reason": "stop"}]}', (True, None, 1)),
    # a chunk per data line, events not separated (single LF): each read alone, as before
    (_DELTA + b"\n" + _DELTA + b"\n" + _DONE + b"\n", (True, None, 2)),
    # JSON cut across two events, or a joined event that is no JSON: still malformed
    (b'data: {"choices":\n\ndata: [{"delta": {"content": "a"}}]}\n\n' + _DONE + b"\n\n",
     (False, "malformed stream chunk", 0)),
    (_DELTA + b'\n\ndata: {"choices":\ndata: [DONE]\n\n', (False, "malformed stream chunk", 0)),
    (_DELTA + b"\n\ndata: not json\n\n" + _DONE + b"\n\n", (False, "malformed stream chunk", 0)),
    (_DELTA + b'\n\ndata: {"choices": [', (False, "malformed stream chunk", 0)),
    # an event whose data lines are an error object
    (_DELTA + b'\n\ndata: {"error":\ndata: {"message": "boom"}}\n\n' + _DONE + b"\n\n", (False, "error in stream", 0)),
])
@pytest.mark.parametrize("pieces", [None, 1, 7])
def test_an_events_data_over_several_lines_is_one_chunk(body, outcome, pieces):
    assert _streamed(body, pieces=pieces) == outcome


def test_an_event_of_data_lines_is_bounded_as_a_line_is():
    line = b"data: " + b"x" * 1000 + b"\n"  # 1,001 bytes held each: the payload and the LF joining it
    body = b'data: {"choices":\n' + line * (load.MiB // 1001 + 1) + b"\n" + _DONE + b"\n\n"
    assert _streamed(body) == (False, "stream event over 1 MiB", 0)
    under = b'data: {"choices":\n' + line * (load.MiB // 1001 - 1) + b"\n" + _DONE + b"\n\n"
    assert _streamed(under) == (False, "malformed stream chunk", 0)  # within the bound: read, and no JSON


@pytest.mark.parametrize("status, error", [
    (301, f"HTTP 301: {load.REDIRECT}"), (302, f"HTTP 302: {load.REDIRECT}"), (303, f"HTTP 303: {load.REDIRECT}"),
    (307, f"HTTP 307: {load.REDIRECT}"), (308, f"HTTP 308: {load.REDIRECT}"),
    (300, "HTTP 300"), (304, "HTTP 304"),  # no redirect a client follows
])
def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(status, error):
    from gpustack_guard.adapters.soak.load import Target, make_client, stream_one
    from gpustack_guard.core.soak.prompts import make_prompt

    seen: list[tuple[str, str | None]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.host, request.headers.get("authorization")))
        return httpx.Response(status, headers={"location": "http://elsewhere.test/v1/chat/completions"})

    async def go():
        async with make_client(1, 5.0, httpx.MockTransport(answer)) as client:
            return await stream_one(client, Target("ours", "https://endpoint.test/v1/chat/completions", "m", "sk-9"),
                                    make_prompt(0, 0, 40, 6), 0.0, 5.0)
    result = asyncio.run(go())
    assert (result.ok, result.error, result.output_tokens) == (False, error, 0)
    assert seen == [("endpoint.test", "Bearer sk-9")]
    assert (error in load.FATAL_REASONS) == (status not in (300, 304))
