"""Round 27: a chat stream read the same however TCP cuts it (every byte boundary, inside a UTF-8 character and
inside a CRLF), and another API's stream answering the chat request (legacy completions, the Responses API,
Anthropic's messages, a whole chat.completion as one event) named as such, fatal in round 1."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from support.soak_socket import ByteChunks

from gpustack_guard.adapters.soak.load import (
    FATAL_REASONS,
    LEGACY_COMPLETIONS,
    NOT_STREAMED,
    OTHER_API,
    RESPONSES_API,
    Target,
    make_client,
    stream_one,
)
from gpustack_guard.core.soak.prompts import make_prompt


def _outcomes(bodies: list[list[bytes]]) -> list[tuple]:
    """stream_one's (ok, error, tokens, gaps) for each answer, given as the pieces it arrives in."""
    async def go():
        found = []
        for pieces in bodies:
            transport = httpx.MockTransport(lambda request, p=pieces: httpx.Response(
                200, headers={"content-type": "text/event-stream"}, stream=ByteChunks(p)))
            async with make_client(1, 5.0, transport) as client:
                result = await stream_one(client, Target("ours", "http://endpoint.test/v1/chat/completions", "m"),
                                          make_prompt(0, 0, 40, 6), 0.0, 5.0)
            found.append((result.ok, result.error, result.output_tokens, len(result.gaps_s)))
        return found
    return asyncio.run(go())


# a BOM, a multi-byte delta (2, 3 and 4 bytes), a comment, `data:` without a space, a role-only first chunk, an
# event of two data lines, the usage alone in the last chunk (stream_options), [DONE]
_STREAM = ('\ufeffdata: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
           ': keep-alive\n\n'
           'data: {"choices":[{"index":0,"delta":{"content":"é€😀"}}]}\n\n'
           'data:{"choices":[{"index":0,"delta":{"reasoning_content":"b"}}]}\n\n'
           'data: {"choices":[{"index":0,\ndata: "delta":{"content":"c"},"finish_reason":"stop"}]}\n\n'
           'data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":4}}\n\n'
           'data: [DONE]\n\n')


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_a_stream_reads_the_same_cut_at_every_byte(line_end):
    """Before: with CRLF, an event of two data lines whose CR and LF arrived apart read as two broken chunks
    ('malformed stream chunk'); so did the whole stream sent a byte at a time."""
    body = _STREAM.replace("\n", line_end).encode()
    expected = (True, None, 4, 2)  # 3 deltas timed (the role-only one is none), usage 4 tokens
    cuts = [[body[:at], body[at:]] for at in range(1, len(body))]
    outcomes = _outcomes([[body], [bytes([b]) for b in body]] + cuts)
    assert set(outcomes) == {expected}


def _sse(*chunks: dict, done: bool = True) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n" if done else b"")


def _events(*events: tuple[str, dict]) -> bytes:
    return b"".join(b"event: %s\ndata: %s\n\n" % (name.encode(), json.dumps(data).encode())
                    for name, data in events)


_LEGACY = [{"object": "text_completion", "choices": [{"index": 0, "text": "a", "finish_reason": None}]},
           {"object": "text_completion", "choices": [{"index": 0, "text": "b", "finish_reason": "stop"}]}]
_RESPONSES = [("response.created", {"type": "response.created", "response": {"status": "in_progress"}}),
              ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "a"}),
              ("response.completed", {"type": "response.completed", "response": {"usage": {"output_tokens": 1}}})]
_ANTHROPIC = [("message_start", {"type": "message_start", "message": {"id": "x"}}),
              ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": "a"}}),
              ("message_stop", {"type": "message_stop"})]
_WHOLE = {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ab"},
                                                    "finish_reason": "stop"}]}


@pytest.mark.parametrize("body, error", [
    # before: "no tokens" for each of these, every request of every round
    (_sse(*_LEGACY), LEGACY_COMPLETIONS),
    (_sse(*_LEGACY, done=False), LEGACY_COMPLETIONS),
    # cut by its length at once: legacy chunks, not the prompt filling the context
    (_sse({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]}), LEGACY_COMPLETIONS),
    (_events(*_RESPONSES), RESPONSES_API),
    (_sse(*(data for _, data in _RESPONSES)), RESPONSES_API),  # without event: lines
    (_events(*_ANTHROPIC), OTHER_API),
    (_sse(_WHOLE), NOT_STREAMED),  # a whole chat.completion as one event
], ids=["legacy", "legacy-no-done", "legacy-length", "responses", "responses-no-event-lines", "anthropic", "whole"])
def test_another_apis_stream_is_named(body, error):
    assert _outcomes([[body]]) == [(False, error, 0, 0)]
    assert error in FATAL_REASONS


@pytest.mark.parametrize("body", [
    # a chat stream with a stray chunk of another shape is judged by its deltas
    _sse({"choices": [{"index": 0, "delta": {"content": "a"}}]}, _LEGACY[0],
         {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    _sse({"type": "keepalive"}, {"choices": [{"index": 0, "delta": {"content": "a"}}]},
         {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
])
def test_a_chat_stream_with_a_stray_chunk_of_another_shape_still_counts(body):
    assert _outcomes([[body]]) == [(True, None, 1, 0)]


@pytest.mark.parametrize("body", [
    _sse({"choices": None}, {"choices": []}, {"choices": [], "usage": {"completion_tokens": 0}}),
    _sse({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}),
])
def test_chat_chunks_without_tokens_are_still_no_tokens(body):
    assert _outcomes([[body]]) == [(False, "no tokens", 0, 0)]
