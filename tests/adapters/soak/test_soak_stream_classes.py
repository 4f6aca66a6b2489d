"""Round 22: streams that are valid SSE but say odd things about their tokens, and 200 answers that are errors."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from gpustack_guard.adapters.soak.load import NOT_STREAMED, Target, make_client, stream_one
from gpustack_guard.core.soak.prompts import make_prompt


def _outcome(body: bytes, content_type: str = "text/event-stream"):
    """stream_one's (ok, error, tokens, gaps) for one answer of HTTP 200 with `body`."""
    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, headers={"content-type": content_type}, content=body))

    async def go():
        async with make_client(1, 5.0, transport) as client:
            return await stream_one(client, Target("ours", "http://endpoint.test/v1/chat/completions", "m"),
                                    make_prompt(0, 0, 40, 6), 0.0, 5.0)
    result = asyncio.run(go())
    return result.ok, result.error, result.output_tokens, len(result.gaps_s)


def _sse(*chunks: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _delta(delta: dict, index: int = 0, finish: str | None = None, usage: dict | None = None) -> dict:
    chunk: dict = {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        chunk["usage"] = usage
    return chunk


_A = _delta({"content": "a"})
_STOP = _delta({}, finish="stop")


@pytest.mark.parametrize("chunks, outcome", [
    # usage in every chunk, per chunk (1 each) instead of cumulative; before: 1 token for 5 deltas
    ([_delta({"content": "a"}, usage={"completion_tokens": 1})] * 5 + [_STOP], (True, None, 5, 4)),
    # a usage of 0 after 5 deltas; before: 0 tokens from a request that streamed 5 (tokens/s 0)
    ([_A] * 5 + [_STOP, {"choices": [], "usage": {"completion_tokens": 0}}], (True, None, 5, 4)),
    # cumulative usage, as vLLM sends it with continuous_usage_stats: the last count, above the deltas, stands
    ([_delta({"content": "ab"}, usage={"completion_tokens": 2 * k}) for k in range(1, 4)] + [_STOP],
     (True, None, 6, 2)),
    # a count after the stop, above the deltas and within the prompt's max_tokens (6; past it: USAGE_PAST_MAX)
    ([_A] * 2 + [_STOP, {"choices": [], "usage": {"completion_tokens": 5}}], (True, None, 5, 1)),
])
def test_a_usage_count_below_the_deltas_streamed_is_no_total(chunks, outcome):
    assert _outcome(_sse(*chunks)) == outcome


@pytest.mark.parametrize("chunks, outcome", [
    # a tool call is generated tokens too; before: "no tokens"
    ([_delta({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\""}}]})] * 3
     + [_delta({}, finish="tool_calls")], (True, None, 3, 2)),
    # a second choice (n > 1 from a proxy fanning out): only choice 0 is timed; before: 4 tokens, gaps halved
    ([_A, _delta({"content": "b"}, index=1)] * 2 + [_STOP], (True, None, 2, 1)),
    ([_delta({"content": "b"}, index=1)] * 2 + [_delta({}, index=1, finish="stop")], (False, "no tokens", 0, 0)),
    # thinking models: reasoning deltas are tokens the engine counts (usage includes them)
    ([_delta({"reasoning_content": "hm"}), _delta({"reasoning": "hm"}), _A, _STOP], (True, None, 3, 2)),
    # choices null, empty, a delta without content: no token, no failure
    ([{"choices": None}, {"choices": []}, _delta({"role": "assistant"}), _A, _STOP], (True, None, 1, 0)),
])
def test_which_deltas_are_tokens(chunks, outcome):
    assert _outcome(_sse(*chunks)) == outcome


ERROR_ANSWER = "an error answered with HTTP 200 (no stream)"


@pytest.mark.parametrize("body, error", [
    # before: "not streamed (the endpoint ignores stream: true ...)", for an answer that was an error
    (b'{"error": {"message": "model m not found", "code": 404}}', ERROR_ANSWER),
    (b'{"object": "error", "message": "boom", "code": 400}', ERROR_ANSWER),
    (b'{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}', NOT_STREAMED),
    (b'{"error": null, "choices": []}', NOT_STREAMED),
    (b"[" * 5000, NOT_STREAMED),  # too deep to read: still no stream, and no crash
    (b'{"error": "x", "pad": "' + b"x" * 200_000 + b'"}', NOT_STREAMED),  # past the bound read: not read whole
])
def test_a_json_answer_to_a_streamed_request_says_whether_it_was_an_error(body, error):
    assert _outcome(body, "application/json") == (False, error, 0, 0)


def _busy(headers: dict, seconds: float = 10.0, status: int = 429):
    """drive() for `seconds` of virtual time against a server answering every request `status` with `headers`:
    when each request started."""
    from support.virtual_time import VirtualClock, run

    from gpustack_guard.adapters.soak.load import drive

    clock = VirtualClock()
    transport = httpx.MockTransport(lambda request: httpx.Response(status, headers=headers, text="busy"))

    async def go():
        async with make_client(1, 5.0, transport) as client:
            t = Target("ours", "http://endpoint.test/v1/chat/completions", "m")
            return await drive([client], t, lambda i: make_prompt(0, i, 40, 6), seconds, None, 0.0, 5.0,
                               clock=clock)
    results = run(go(), clock)
    return [round(r.started, 2) for r in results], {r.error for r in results}


@pytest.mark.parametrize("status, headers, started", [
    # before: the doubling back-off alone, 0.05 s up to 2 s: 10 requests in 10 s against a server that asked for 3 s
    (429, {"Retry-After": "3"}, [0.0, 3.0, 6.0, 9.0]),
    (503, {"Retry-After": "4"}, [0.0, 4.0, 8.0]),
    (429, {"Retry-After": "0"}, [0.0, 0.05, 0.15, 0.35, 0.75, 1.55, 3.15, 5.15, 7.15, 9.15]),
    (429, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, [0.0, 0.05, 0.15, 0.35, 0.75, 1.55, 3.15, 5.15, 7.15,
                                                              9.15]),  # a date: the back-off, not a clock read
    (429, {"Retry-After": "1000000000"}, [0.0]),  # past the round: no request more in it, no wait past its end
    (429, {"Retry-After": "1e9"}, [0.0, 0.05, 0.15, 0.35, 0.75, 1.55, 3.15, 5.15, 7.15, 9.15]),  # no delta-seconds
    (500, {"Retry-After": "3"}, [0.0, 0.05, 0.15, 0.35, 0.75, 1.55, 3.15, 5.15, 7.15, 9.15]),  # 429 and 503 only
])
def test_retry_after_on_429_and_503_is_honoured_within_the_round(status, headers, started):
    assert _busy(headers, status=status) == (started, {f"HTTP {status}"})


CUT_AT_ONCE = "no tokens: finish_reason length before the first (the prompt fills the server's context?)"


@pytest.mark.parametrize("chunks, outcome", [
    # llama.cpp with a slot's context full ends at once with "length"; before: "no tokens", no hint why
    ([_delta({"role": "assistant"}, finish="length")], (False, CUT_AT_ONCE, 0, 0)),
    ([_delta({}, finish="length"), {"choices": [], "usage": {"completion_tokens": 0}}], (False, CUT_AT_ONCE, 0, 0)),
    ([_delta({}, finish="stop")], (False, "no tokens", 0, 0)),
    ([_A, _delta({}, finish="length")], (True, None, 1, 0)),  # cut by max_tokens after a token: an answer
    # content that is neither text nor a list of parts is no token; before: a number or an object counted as one
    ([_delta({"content": 5}), _A, _STOP], (False, "malformed stream chunk", 0, 0)),
    ([_delta({"content": {"text": "a"}}), _STOP], (False, "malformed stream chunk", 0, 0)),
    ([_delta({"content": True}), _STOP], (False, "malformed stream chunk", 0, 0)),
    ([_delta({"content": [{"type": "text", "text": "a"}]}), _A, _STOP], (True, None, 2, 1)),  # parts: tokens
    ([_delta({"content": None}), _delta({"content": ""}), _A, _STOP], (True, None, 1, 0)),
])
def test_how_a_stream_without_a_readable_token_says_why(chunks, outcome):
    assert _outcome(_sse(*chunks)) == outcome
