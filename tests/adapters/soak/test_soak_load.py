"""One streamed request against the fake over real loopback sockets: TTFT, ITL, tokens, error reasons."""

from __future__ import annotations

import asyncio
import dataclasses
import socket

import pytest
from support.soak_fakes import SCENARIOS, FakeServer

from gpustack_guard.adapters.soak.load import (
    MAX_USAGE_TOKENS,
    ClientPool,
    Target,
    chat_completions_url,
    drive,
    drive_open,
    make_client,
    stream_one,
)
from gpustack_guard.core.soak.prompts import make_prompt

PROMPT = make_prompt(0, 0, 40, 6)


def one(scenario, transport=None, timeout=10.0, **target):
    async def go():
        async with FakeServer(scenario) as server, make_client(2, timeout, transport) as client:
            t = Target("ours", chat_completions_url(target.pop("url", server.url)), "qwen3-8b", **target)
            return await stream_one(client, t, PROMPT, 0.0, timeout), server
    return asyncio.run(go())


def test_content_stream_timed_and_counted_from_usage():
    result, server = one(dataclasses.replace(SCENARIOS["stable"], ttft_jitter=0.0, spike_rate=0.0))
    assert result.ok and result.error is None
    # the fake waits 0.1 s before its first token: TTFT is that wait (not the whole stream), and TTFT plus the
    # gaps between tokens is the request's time (loose upper bounds: a busy CI machine adds scheduling delay)
    assert 0.08 <= result.ttft_s < 0.5
    assert result.output_tokens == 6 and len(result.gaps_s) == 5
    # the fake sleeps 5 ms before each later token; on a loaded machine two tokens can arrive in one read (a gap
    # near 0, the next one twice as long), so the bound that holds is on their sum, not on each gap
    assert all(0 <= g < 0.3 for g in result.gaps_s) and sum(result.gaps_s) >= 5 * 0.004
    assert abs(result.ttft_s + sum(result.gaps_s) - (result.finished - result.started)) < 0.05
    body = server.seen_bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 6 and body["messages"][0]["content"] == PROMPT.text


def test_reasoning_only_deltas_count_for_ttft_and_tokens():
    result, _ = one(dataclasses.replace(SCENARIOS["reasoning"], ttft_jitter=0.0, spike_rate=0.0, send_usage=False))
    assert result.ok and 0.08 <= result.ttft_s < 0.2
    assert result.output_tokens == 6  # no usage chunk: the non-empty deltas are counted


def test_http_error_is_a_reason():
    async def go():
        async with FakeServer("stable", api_key="sk-right") as server, make_client(1, 5.0) as client:
            t = Target("ours", chat_completions_url(server.url), "m", "sk-wrong")
            return await stream_one(client, t, PROMPT, 0.0, 5.0)
    result = asyncio.run(go())
    assert (result.ok, result.error, result.output_tokens) == (False, "HTTP 401", 0)


def test_dropped_connection_and_refused_connection():
    result, _ = one(dataclasses.replace(SCENARIOS["failing"], error_rate=1.0, ttft_s=0.01))
    assert not result.ok and result.error in ("stream broken", "HTTP 503")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result, _ = one("stable", url=f"http://127.0.0.1:{port}")
    assert (result.ok, result.error) == (False, "connection refused")


def test_timeout_is_a_reason_not_an_exception():
    result, _ = one(dataclasses.replace(SCENARIOS["stable"], ttft_s=2.0), timeout=0.3)
    assert (result.ok, result.error) == (False, "timeout")


def test_drive_keeps_the_concurrency_and_stops_at_the_request_bound():
    async def go():
        async with FakeServer(dataclasses.replace(SCENARIOS["stable"], ttft_s=0.05)) as server:
            clients = [make_client(1, 5.0) for _ in range(3)]
            t = Target("ours", chat_completions_url(server.url), "qwen3-8b")
            results = await drive(clients, t, lambda i: make_prompt(1, i, 20, 2), 30.0, 9, 0.0, 5.0)
            for client in clients:
                await client.aclose()
            return results, server
    results, server = asyncio.run(go())
    assert len(results) == 9 and all(r.ok for r in results)
    assert server.engine.requests == 9 and server.engine.running == 0
    texts = sorted(b["messages"][0]["content"].split()[1] for b in server.seen_bodies)
    assert texts == sorted(f"1-{i}." for i in range(9))  # prompts 0..8, each once


def test_urls_accept_a_root_a_v1_base_or_the_endpoint():
    assert chat_completions_url("http://h:8000") == "http://h:8000/v1/chat/completions"
    assert chat_completions_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert chat_completions_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


def test_the_api_key_goes_in_the_bearer_header():
    result, server = one("stable", api_key="sk-test-123456")
    assert result.ok and server.seen_auth == {"Bearer sk-test-123456"}


def _streamed(usage_line: bytes, prompt=PROMPT):
    """One request answered with two content deltas and then `usage_line` (an in-memory SSE answer)."""
    import httpx

    body = (b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n'
            b'data: {"choices": [{"delta": {"content": "b"}, "finish_reason": "stop"}]}\n\n'
            + usage_line + b"\n\ndata: [DONE]\n\n")
    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=body))

    async def go():
        async with make_client(1, 5.0, transport) as client:
            return await stream_one(client, Target("ours", "http://endpoint.test/v1/chat/completions", "m"),
                                    prompt, 0.0, 5.0)
    return asyncio.run(go())


# a prompt that allows any count: these read the count's own bounds, not max_tokens
UNBOUNDED = make_prompt(0, 0, 40, MAX_USAGE_TOKENS + 1)


# no count, or one below the two deltas streamed (each is a token at least): the deltas are counted
@pytest.mark.parametrize("count, tokens", [("7", 7), ("0", 2), ("1", 2), (str(MAX_USAGE_TOKENS), MAX_USAGE_TOKENS),
                                           ("null", 2)])
def test_a_usage_count_that_is_a_count_is_the_answers_tokens(count, tokens):
    result = _streamed(b'data: {"choices": [], "usage": {"completion_tokens": ' + count.encode() + b"}}", UNBOUNDED)
    assert (result.ok, result.error, result.output_tokens) == (True, None, tokens)


@pytest.mark.parametrize("count", ["-5", "true", "2.5", '"7"', str(MAX_USAGE_TOKENS + 1), "1" + "0" * 30])
def test_a_usage_count_that_is_no_count_is_a_malformed_answer_not_a_figure(count):
    result = _streamed(b'data: {"choices": [], "usage": {"completion_tokens": ' + count.encode() + b"}}", UNBOUNDED)
    assert (result.ok, result.error, result.output_tokens) == (False, "malformed stream chunk", 0)


# round 22: an endpoint (or a proxy summing over requests) that reports more tokens than the request allowed
# had its count taken whole, so tok/s showed 10,000 tokens for an answer of two deltas and max_tokens 6
@pytest.mark.parametrize("count, ok, tokens", [("6", True, 6), ("7", False, 0), ("10000", False, 0)])
def test_a_usage_count_past_max_tokens_is_a_lie_not_a_figure(count, ok, tokens):
    result = _streamed(b'data: {"choices": [], "usage": {"completion_tokens": ' + count.encode() + b"}}")
    reason = None if ok else ("usage counts more completion tokens than the request's max_tokens (a proxy's or a "
                              "wrong count)")
    assert (result.ok, result.error, result.output_tokens) == (ok, reason, tokens)


# a round's memory bound: the requests stop starting once the round holds max_gaps inter-token gaps
@pytest.mark.parametrize("max_gaps,requests", [(None, 5), (7, 2), (8, 2), (9, 3), (12, 3), (13, 4)])
def test_drive_stops_starting_requests_at_the_rounds_cap_of_gaps(max_gaps, requests):
    async def go():
        async with FakeServer(dataclasses.replace(SCENARIOS["stable"], ttft_s=0.01, itl_s=0.001)) as server, \
                make_client(1, 5.0) as client:
            t = Target("ours", chat_completions_url(server.url), "qwen3-8b")
            # one stream, 5 tokens a request: 4 gaps each
            return await drive([client], t, lambda i: make_prompt(1, i, 20, 5), 30.0, 5, 0.0, 5.0,
                               max_gaps=max_gaps)
    results = asyncio.run(go())
    assert [len(r.gaps_s) for r in results] == [4] * requests


@pytest.mark.parametrize("max_gaps,sent", [(None, 4), (4, 1), (5, 2), (8, 2), (9, 3)])
def test_the_open_loop_schedule_stops_at_the_rounds_cap_of_gaps(max_gaps, sent):
    async def go():
        async with FakeServer(dataclasses.replace(SCENARIOS["stable"], ttft_s=0.01, itl_s=0.001)) as server:
            pool = ClientPool(_client_maker())
            t = Target("ours", chat_completions_url(server.url), "qwen3-8b")
            # arrivals 0.15 s apart: each request has answered before the next is due
            results = await drive_open(pool, t, lambda i: make_prompt(1, i, 20, 5), [0.0, 0.15, 0.3, 0.45], 0.0,
                                       5.0, 8, max_gaps=max_gaps)
            for client in pool.idle:
                await client.aclose()
            return results
    results = asyncio.run(go())
    assert [len(r.gaps_s) for r in results] == [4] * sent


def _client_maker():
    async def make():
        return make_client(1, 5.0)
    return make
