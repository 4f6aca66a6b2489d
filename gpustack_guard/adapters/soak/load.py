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
from typing import Awaitable, Callable

import httpx

from gpustack_guard.adapters.gpustack.transport import BAD_LOCATION, bad_location
from gpustack_guard.adapters.proxy_env import PROXY_ERRORS, proxy_problem
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.json_depth import nests_deeper
from gpustack_guard.core.soak.prompts import Prompt
from gpustack_guard.core.soak.rounds import RequestResult
from gpustack_guard.core.values import frozen_value

# a delta counts when it carries `content` or reasoning: `reasoning_content` (vLLM, SGLang, DeepSeek) or
# `reasoning` (newer vLLM, OpenRouter)

MiB = 1024 ** 2
# What one answer may bring, whatever the endpoint sends: a 32k-token stream is about 5 MiB of SSE.
MAX_ANSWER_BYTES = 64 * MiB
MAX_USAGE_TOKENS = MAX_ANSWER_BYTES  # a usage count past one token a byte of the answer's cap is no count
MAX_LINE_BYTES = 1 * MiB  # one SSE line; a line that never ends is refused here, not buffered
REFUSALS_END_ROUND = 10  # connection refusals in a row (per stream, at least this many in all) end a round
BACKOFF_FIRST_S, BACKOFF_MAX_S = 0.05, 2.0  # after failed requests, doubling: a failing server is not hammered
REFUSED = "connection refused"
# A kept-alive connection the server closed just as we reused it, before any answer: sent again this many times
STALE_CONNECTION_RETRIES = 1
NOT_STREAMED = "not streamed (the endpoint ignores stream: true; TTFT cannot be measured)"
USAGE_PAST_MAX = "usage counts more completion tokens than the request's max_tokens (a proxy's or a wrong count)"
ERROR_ANSWER = "an error answered with HTTP 200 (no stream)"
JSON_ANSWER_READ_BYTES = 64 * 1024  # of a JSON answer to a streamed request: enough for any error object
# llama.cpp ends a request at once with "length" when its slot's share of the context cannot hold the prompt
CUT_AT_ONCE = "no tokens: finish_reason length before the first (the prompt fills the server's context?)"
# A redirect is not followed: the key would go where the server says (another host, or plain http), and a soak
# through a redirect measures one more hop. Before, each request failed as "HTTP 307" for the whole run.
REDIRECT = "a redirect, not followed (the API key goes to the URL given alone: point the URL where it leads)"
REDIRECT_CODES = (301, 302, 303, 307, 308)  # those a client follows (httpx's own list)
NOT_A_STREAM_HTML = "an HTML page, not an event stream (a login page or proxy? point the URL at the engine)"
COMPRESSED = "compressed answer"
# A stream of another API's chunks: the request is chat's, the answer another endpoint's (a gateway routing by
# path, a proxy translating badly). Before, each request was "no tokens" and the soak ran every round on them.
LEGACY_COMPLETIONS = "legacy completions chunks (choices[].text), not chat deltas (point the URL at chat completions)"
RESPONSES_API = "Responses API events (response.*), not chat completion chunks (point the URL at chat completions)"
OTHER_API = "chunks without choices, typed events of another API (Anthropic's messages?), not chat completions"
# A connection that fails in its TLS handshake was "connection refused" before, whatever the cause; and an answer
# in another protocol than HTTP/1.1 (an HTTP/2-only server answering with its frames) was "stream broken".
TLS_UNTRUSTED = "TLS: the server's certificate is not trusted (give its CA with --ca-bundle)"
TLS_NO_HTTP1 = "TLS: the server offers no HTTP/1.1 (an HTTP/2-only server? gsg speaks HTTP/1.1)"
TLS_FAILED = "TLS handshake failed (a plain http:// server on an https:// URL?)"
NOT_HTTP1 = "an answer that is no HTTP/1.1 (an HTTP/2-only server? gsg speaks HTTP/1.1)"
# every request of a soak's first round failing for one of these is a wrong URL, key or model, or an endpoint that
# cannot be soaked (a login page, no streaming, an answer compressed though identity was asked): not a soak result.
# Before, a login page or an endpoint ignoring stream: true failed every request of every round, the whole --rounds
# A 400, 405 or 422 for every request is a request the endpoint will never take (a server refusing stream_options
# or another field, a prompt past its context, a URL that takes no POST): before, every round ran on them.
FATAL_REASONS = (REFUSED, "HTTP 400", "HTTP 401", "HTTP 403", "HTTP 404", "HTTP 405", "HTTP 422", ERROR_ANSWER,
                 NOT_A_STREAM_HTML, NOT_STREAMED, COMPRESSED, LEGACY_COMPLETIONS, RESPONSES_API, OTHER_API,
                 TLS_UNTRUSTED, TLS_NO_HTTP1, TLS_FAILED, NOT_HTTP1, BAD_LOCATION) \
    + tuple(f"HTTP {status}: {REDIRECT}" for status in REDIRECT_CODES)
MALFORMED = "malformed stream chunk"
# finish reasons of a request the engine gave up on: vLLM's FINISH_REASON_STRINGS (vllm/v1/engine/__init__.py:
# stop, length, abort, error, repetition) and SGLang's abort; such an answer is no completed request
UNFINISHED_REASONS = ("abort", "error")


@frozen_value(eq=True, repr=True)
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


# endpoints of other APIs a --url may name: appended to, they became .../v1/completions/v1/chat/completions, and
# every request of round 1 a 404 told nothing of why
OTHER_ENDPOINTS = {"/completions": "legacy completions", "/responses": "the Responses API",
                   "/messages": "Anthropic's messages API", "/embeddings": "embeddings"}


def other_endpoint(url: str) -> str | None:
    """The other API a URL's path ends at (any case, before a query), if it does: the soak asks chat completions."""
    cut = min((i for i in (url.find("?"), url.find("#")) if i != -1), default=len(url))
    path = url[:cut].rstrip("/").lower()
    if path.endswith("/chat/completions"):
        return None
    return next((name for suffix, name in OTHER_ENDPOINTS.items() if path.endswith(suffix)), None)


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


# one deadline over a whole answer: connect, headers and body (scrape.py uses it too)
whole_answer_deadline = getattr(asyncio, "timeout", _cancel_after)


_BOM = b"\xef\xbb\xbf"


class _Broken(Exception):
    """The answer cannot be read further; the reason is the request's error."""


async def raw_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as sent, undecoded. An answer built in memory (an in-process transport) was read when it was
    made: it is that one chunk."""
    if response.is_stream_consumed:
        yield response.content
        return
    async for data in response.aiter_raw():
        yield data


async def _sse_lines(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body's lines from its raw bytes, split here (httpx's line reader buffers a line however long it
    grows), within MAX_ANSWER_BYTES and MAX_LINE_BYTES. SSE ends a line with LF, CRLF or a lone CR: a CR is read
    as LF, and the LF of a CRLF cut between two chunks is dropped (read as an empty line, it ended the event
    there: an event of two data lines arriving so was two broken chunks), and a leading BOM is dropped, as the
    SSE standard says."""
    # a bytearray grows in place: `bytes += chunk` copies the whole line per chunk, and a line dripped in 10-byte
    # pieces up to MAX_LINE_BYTES cost seconds of the event loop every other stream is timed on
    pending, size, opening, after_cr = bytearray(), 0, True, False
    async for data in raw_chunks(response):
        size += len(data)
        if size > MAX_ANSWER_BYTES:
            raise _Broken(f"answer over {MAX_ANSWER_BYTES // MiB} MiB")
        if after_cr and data[:1] == b"\n":
            data, after_cr = data[1:], False  # the CR that ended the last chunk ended this line already
        if data:
            after_cr = data[-1:] == b"\r"
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\n" not in data:
            pending += data
            if len(pending) > MAX_LINE_BYTES:
                raise _Broken(f"stream line over {MAX_LINE_BYTES // MiB} MiB")
            continue
        *lines, tail = data.split(b"\n")
        if pending:
            lines[0] = bytes(pending + lines[0])
        if opening:
            lines[0], opening = lines[0].removeprefix(_BOM), False
        for line in lines:
            yield line
        pending = bytearray(tail)
    if pending:
        yield bytes(pending).removeprefix(_BOM) if opening else bytes(pending)


def retry_after_s(response: httpx.Response) -> float | None:
    """A 429 or 503's Retry-After in seconds. An HTTP date is not read: it needs the server's clock to agree
    with ours, and the doubling back-off covers it."""
    if response.status_code not in (429, 503):
        return None
    text = response.headers.get("retry-after", "").strip()
    return float(text[:12]) if text.isascii() and text.isdigit() else None


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what it was raised from (httpx's error from httpcore's, from the ssl module's)."""
    found: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(found) < 8 and cause not in found:
        found.append(cause)
        cause = cause.__cause__ or cause.__context__
    return found


def connect_failure(exc: httpx.ConnectError) -> str:
    """Why a connection failed: refused (nothing listens, or a reset), or its TLS handshake, and how."""
    tls = next((c for c in _causes(exc) if isinstance(c, ssl.SSLError)), None)
    if tls is None:
        return REFUSED
    if isinstance(tls, ssl.SSLCertVerificationError):
        return TLS_UNTRUSTED
    # a server that speaks h2 alone ends the handshake with this alert when the client offers http/1.1 only
    return TLS_NO_HTTP1 if "NO_APPLICATION_PROTOCOL" in str(tls).upper() else TLS_FAILED


def _unreadable(response: httpx.Response) -> str | None:
    """Why an answer is not a stream gsg reads, before a byte of its body is read (it may be endless)."""
    if response.status_code in REDIRECT_CODES:
        return f"HTTP {response.status_code}: {REDIRECT}"
    if response.status_code != 200:
        return f"HTTP {response.status_code}"
    if response.headers.get("content-encoding", "identity").lower() not in ("identity", ""):
        return COMPRESSED  # asked for identity: refused unread, so a bomb never inflates here
    kind = response.headers.get("content-type", "").lower()
    if kind.startswith("application/json"):
        return NOT_STREAMED
    if kind.startswith("text/html"):
        return NOT_A_STREAM_HTML
    return None


def _names_an_error(found: object) -> bool:
    """OpenAI's {"error": ...} (any value but null or false: an empty object is an error too) or vLLM's older
    {"object": "error", ...}."""
    if not isinstance(found, dict):
        return False
    error = found.get("error")
    return (error is not None and error is not False) or found.get("object") == "error"


def _json_error(line: bytes) -> bool:
    """Whether one line is a JSON error object."""
    try:
        found = json.loads(line) if not nests_deeper(line) else None
    except (ValueError, RecursionError):
        return False
    return _names_an_error(found)


async def _error_answer(response: httpx.Response) -> bool:
    """Whether a JSON answer to a streamed request is an error object (a gateway's or an engine's, sent with 200),
    read within JSON_ANSWER_READ_BYTES: a longer answer is a whole completion, not an error."""
    body = bytearray()
    async for data in raw_chunks(response):
        body += data
        if len(body) > JSON_ANSWER_READ_BYTES:
            return False
    return _json_error(bytes(body))


def _index_or_none(choice: dict) -> bool:
    """A choice's index is a whole number >= 0, or absent (some servers send none for their one choice)."""
    index = choice.get("index")
    return index is None or (type(index) is int and index >= 0)


def _text_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def _delta_shape_broken(delta: object) -> bool:
    """Whether a delta carries a field of the wrong type where tokens are counted: content is text or a list of
    parts (objects), reasoning text, tool calls a list; 5 or {} there counted as a token before."""
    if delta is None:
        return False
    if not isinstance(delta, dict):
        return True
    content = delta.get("content")
    if not (_text_or_none(content) or (isinstance(content, list) and all(isinstance(p, dict) for p in content))):
        return True
    tool_calls = delta.get("tool_calls")
    return not (_text_or_none(delta.get("reasoning_content")) and _text_or_none(delta.get("reasoning"))
                and (tool_calls is None or isinstance(tool_calls, list)))


def _other_api(chunk: dict) -> str | None:
    """Whether a chunk is another API's answer to the chat request, and which; None for a chat chunk (a usage or
    keep-alive chunk too). Read only when the stream brought no delta: a chat stream is judged by its deltas."""
    choices = chunk.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) and "delta" not in choices[0]:
        if "text" in choices[0]:
            return LEGACY_COMPLETIONS
        if "message" in choices[0]:
            return NOT_STREAMED  # a whole chat.completion sent as one event: its tokens came at once
    if "choices" not in chunk and isinstance(chunk.get("type"), str):
        return RESPONSES_API if chunk["type"].startswith("response.") else OTHER_API
    return None


class _Deltas:
    """What one stream's SSE lines showed: first delta, the gaps between deltas, tokens, how it ended."""

    __slots__ = ("clock", "first", "last", "gaps", "chunks", "usage_tokens", "done", "finished", "error_event",
                 "max_tokens", "cut_at_once", "held", "held_at", "other_api")

    def __init__(self, clock: Callable[[], float], max_tokens: int | None = None):
        self.clock = clock
        self.max_tokens = max_tokens  # what the request allowed: a usage count past it is not this answer's
        self.first: float | None = None
        self.last = 0.0  # read only after the first delta, which sets it
        self.gaps: list[float] = []
        self.chunks = 0
        self.usage_tokens: int | None = None
        self.done = self.finished = False
        self.error_event = False  # an `event: error` line names the event its data lines make up
        self.cut_at_once = False  # finish_reason "length" before any token
        self.other_api: str | None = None  # the first chunk of another API's shape, which one
        # an event's data over several `data:` lines (the SSE standard joins them with LF): the lines so far, read
        # as one chunk when the event ends, timed at its last line
        self.held: bytearray | None = None
        self.held_at = 0.0

    def _choice(self, choices: list, now: float) -> str | None:
        """Choice 0 of a chunk: its delta, timed at `now`, and whether it finished; a reason when it is broken."""
        choice = choices[0]
        if not isinstance(choice, dict) or not all(_index_or_none(c) for c in choices if isinstance(c, dict)):
            return MALFORMED  # an index "0" or 0.5 matched no choice: "no tokens" before, however many streamed
        if choice.get("index") not in (0, None):
            # several choices (a proxy fanning out, n > 1): choice 0 alone is timed, or its gaps halve
            choice = next((c for c in choices if isinstance(c, dict) and c.get("index") in (0, None)), {})
        delta = choice.get("delta")
        reason = choice.get("finish_reason")
        if _delta_shape_broken(delta) or not _text_or_none(reason):
            return MALFORMED
        # a tool call's arguments are generated tokens as much as content is
        if isinstance(delta, dict) and (delta.get("content") or delta.get("reasoning_content")
                                        or delta.get("reasoning") or delta.get("tool_calls")):
            if self.first is None:
                self.first = now
            else:
                self.gaps.append(now - self.last)
            self.last = now
            self.chunks += 1
        if reason in UNFINISHED_REASONS:
            # the engine gave the request up (aborted, or an error inside it): before, a success of its tokens so far
            return f"finish_reason {reason}: the engine ended the request unfinished"
        if reason:
            self.finished = True
            self.cut_at_once = self.first is None and reason == "length"
        return None

    def take(self, line: bytes) -> str | None:
        """One SSE line; a reason when the answer is broken."""
        if not line.startswith(b"data:"):
            if not line:
                self.error_event = False  # an empty line ends the event
                return self.end_event()
            if line.startswith(b"event:"):
                self.error_event = line[6:].strip() == b"error"
            elif line.startswith(b"{") and self.first is None and not self.done:
                # a JSON answer under another content type than JSON's: an error, or choices whole
                return "error in stream" if _json_error(line) else NOT_STREAMED
            elif line.lstrip()[:1] == b"<" and self.first is None and not self.done:
                # a login or proxy page under text/plain, the event-stream type or none: no SSE line starts so;
                # before, "no tokens"
                return NOT_A_STREAM_HTML
            return None
        if self.error_event:
            return "error in stream"  # the stream names this event an error: its data is no chunk
        now = self.clock()  # the chunk's arrival, before gsg spends anything on parsing it
        payload = line[5:].strip()
        if self.held is not None:
            if len(self.held) + 1 + len(payload) > MAX_LINE_BYTES:
                return f"stream event over {MAX_LINE_BYTES // MiB} MiB"
            self.held += b"\n" + payload
            self.held_at = now
            return None
        if payload == b"[DONE]":
            self.done = True  # read on to the end of the body: a connection left mid-body is closed
            return None
        if self.done:
            return "data after [DONE]"  # a second answer on one stream (a proxy mixing them): neither is timed
        chunk = _json_chunk(payload)
        if chunk is None:
            # perhaps the first line of a chunk over several data lines: read whole when its event ends
            self.held, self.held_at = bytearray(payload), now
            return None
        return self._chunk(chunk, now)

    def end_event(self) -> str | None:
        """The end of an event (an empty line, or the body's end): the data lines it held read as one chunk."""
        if self.held is None:
            return None
        payload, self.held = bytes(self.held), None
        chunk = _json_chunk(payload)
        return MALFORMED if chunk is None else self._chunk(chunk, self.held_at)

    def _chunk(self, chunk: object, now: float) -> str | None:
        if not isinstance(chunk, dict):
            return MALFORMED
        if _names_an_error(chunk):
            return "error in stream"
        choices, usage = chunk.get("choices"), chunk.get("usage")
        # choices a list (or null in a usage chunk), usage an object or null: a string or a number there was read
        # past before, and its chunk's tokens (or the answer's count) silently lost
        if not (choices is None or isinstance(choices, list)) or not (usage is None or isinstance(usage, dict)):
            return MALFORMED
        if self.other_api is None:
            self.other_api = _other_api(chunk)
        if choices:
            broken = self._choice(choices, now)
            if broken:
                return broken
        counted = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if counted is not None:
            # the count feeds tokens/s: a boolean, a negative or fractional count, or one past what any answer
            # within MAX_ANSWER_BYTES can hold is a broken answer, not a figure to average
            if type(counted) is not int or not 0 <= counted <= MAX_USAGE_TOKENS:
                return MALFORMED
            # an engine stops at max_tokens: a larger count (a proxy's sum over requests, a lying endpoint) would
            # inflate tok/s; the streamed deltas are no substitute (an engine may send several tokens in one)
            if self.max_tokens is not None and counted > self.max_tokens:
                return USAGE_PAST_MAX
            self.usage_tokens = counted
        return None


def _json_chunk(payload: bytes) -> object | None:
    """A data payload's JSON; None when it is none: not JSON, bad UTF-8, an integer past Python's digit limit, or
    nesting past gsg's limit (json's own depth differs by Python release; one 10 KB line of '[' crashed the soak)."""
    try:
        if nests_deeper(payload):
            return None
        return json.loads(payload)
    except (ValueError, RecursionError):
        return None


async def _read_events(response: httpx.Response, seen: _Deltas) -> str | None:
    """The stream's lines into `seen`; the reason the answer is broken, if it is."""
    async for line in _sse_lines(response):
        broken = seen.take(line)
        if broken:
            return broken
    return seen.end_event()  # a body may end without the empty line that ends its last event


def _protocol_failure(exc: httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError, answered: bool) -> str:
    """Why a request broke below HTTP: a 3xx whose Location httpx cannot read (an answer: its text not shown),
    bytes that are no HTTP/1.1 status line (h11 says so; a close before any is "disconnected"), or a break."""
    if bad_location(exc):
        return BAD_LOCATION
    if not answered and isinstance(exc, httpx.RemoteProtocolError) and not str(exc).startswith("Server disconnected"):
        return NOT_HTTP1
    return "stream broken"


async def stream_one(client: httpx.AsyncClient, target: Target, prompt: Prompt, origin: float,
                     timeout: float, clock: Callable[[], float] = time.perf_counter) -> RequestResult:
    """One streamed request; never raises for a server's fault, it returns the reason instead."""
    started = clock()
    seen = _Deltas(clock, prompt.max_tokens)
    headers = {"Accept-Encoding": "identity"}
    if target.api_key:
        headers["Authorization"] = f"Bearer {target.api_key}"

    asked_wait: list[float] = []  # the server's Retry-After, when it gave one

    def result(ok: bool, error: str | None = None) -> RequestResult:
        # each delta is at least one token: a usage count below them is per chunk (some proxies) or broken, no total
        tokens = max(seen.usage_tokens or 0, seen.chunks)
        return RequestResult(started - origin, clock() - origin, ok, seen.first - started if seen.first else None,
                             seen.gaps, tokens if ok else 0, error, asked_wait[0] if asked_wait else None)

    body = request_body(target.model, prompt)

    async def send() -> RequestResult | None:
        """The request, sent again on a new connection when a kept-alive one was closed under it; a result when it
        failed, None when the stream ran to its end."""
        for attempt in range(1 + STALE_CONNECTION_RETRIES):
            answered = False
            try:
                async with client.stream("POST", target.url, json=body, headers=headers) as response:
                    answered = True
                    problem = _unreadable(response)
                    wait = retry_after_s(response)
                    if wait is not None:
                        asked_wait.append(wait)
                    if problem == NOT_STREAMED and await _error_answer(response):
                        problem = ERROR_ANSWER
                    if problem:
                        return result(False, problem)
                    broken = await _read_events(response, seen)
                    if broken:
                        return result(False, broken)
            except _Broken as exc:
                return result(False, str(exc))
            except httpx.TimeoutException:
                return result(False, "timeout")
            except httpx.ConnectError as exc:
                return result(False, connect_failure(exc))
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                if not answered and attempt < STALE_CONNECTION_RETRIES and not bad_location(exc):
                    # closed as we reused it, before a byte of an answer: llama-server closes about one kept-alive
                    # connection in ten that way; the request was not served, so it goes again on a new connection
                    continue
                return result(False, _protocol_failure(exc, answered))
            except httpx.HTTPError as exc:
                return result(False, type(exc).__name__)
            return None
        raise AssertionError("unreachable")  # pragma: no cover

    try:
        # one deadline over the request, a resend's too: --request-timeout is what a request may take, however sent
        async with whole_answer_deadline(timeout):
            failed = await send()
    except TimeoutError:
        return result(False, "timeout")
    if failed is not None:
        return failed
    if seen.first is None:
        # another API's chunks first: a legacy completion cut by "length" is that, not a prompt filling the context
        return result(False, seen.other_api or (CUT_AT_ONCE if seen.cut_at_once else "no tokens"))
    if not (seen.done or seen.finished):
        return result(False, "stream ended early")
    return result(True)


def ramp_seconds(round_seconds: float) -> float:
    """Streams start spread over this, not at once: 256 requests in the same millisecond measure the
    server's accept queue, and would put a burst into every round's p95."""
    return min(1.0, 0.1 * round_seconds)


def gaps_held(results: list[RequestResult]) -> int:
    """The inter-token gaps a round's results hold: what grows its memory (a float each, per token streamed)."""
    return sum(len(r.gaps_s) for r in results)


async def drive(clients: list[httpx.AsyncClient], target: Target, prompts: Callable[[int], Prompt], seconds: float,
                max_requests: int | None, origin: float, timeout: float, ramp: float = 0.0,
                results: list[RequestResult] | None = None,
                clock: Callable[[], float] = time.perf_counter, max_gaps: int | None = None) -> list[RequestResult]:
    """Keep one request in flight per client until `seconds` pass, `max_requests` started or the results hold
    `max_gaps` inter-token gaps (the round's memory bound: the requests in flight then still finish, each adding
    at most its max_tokens); then drain. Stream k starts k/len(clients) of `ramp` seconds late.

    One client (one connection) per stream: httpcore's shared pool assigns requests to connections in
    O(connections × requests) per event, which at 256 streams costs seconds of queueing (measured; see
    benchmarks/soak_overhead.py). The same prompt sequence (prompts(0), prompts(1), ...) for every target,
    so the reference sees what we saw.
    """
    deadline = clock() + seconds
    results = [] if results is None else results  # the caller's list, to watch it fill
    next_index = 0
    refused_in_a_row = 0
    give_up = max(REFUSALS_END_ROUND, 3 * len(clients))  # a server that is gone: end the round, not hammer it
    gaps = gaps_held(results)

    async def worker(k: int, client: httpx.AsyncClient) -> None:
        nonlocal next_index, refused_in_a_row, gaps
        if ramp and k:
            await asyncio.sleep(ramp * k / len(clients))
        pause = BACKOFF_FIRST_S
        while clock() < deadline and (max_requests is None or next_index < max_requests) \
                and refused_in_a_row < give_up and (max_gaps is None or gaps < max_gaps):
            index = next_index
            next_index += 1
            outcome = await stream_one(client, target, prompts(index), origin, timeout, clock)
            results.append(outcome)
            gaps += len(outcome.gaps_s)
            if outcome.ok:
                refused_in_a_row, pause = 0, BACKOFF_FIRST_S
                continue
            # a failure, answered at once or not: the stream waits before its next request, longer each time,
            # so an erroring or dead server is not hammered (and a round of failures still ends on time)
            refused_in_a_row = refused_in_a_row + 1 if outcome.error == REFUSED else 0
            # a server that said when to come back (429, 503) is asked again then, not sooner
            wait = max(pause, outcome.retry_after_s or 0.0)
            if clock() + wait >= deadline:
                break  # the next request would start after the round's end
            await asyncio.sleep(wait)
            pause = min(pause * 2, BACKOFF_MAX_S)

    await asyncio.gather(*(worker(k, client) for k, client in enumerate(clients)))
    return results


def not_sent_reason(cap: int) -> str:
    return f"not sent: {cap} requests already in flight (GSG_SOAK_MAX_IN_FLIGHT)"


class ClientPool:
    """Open loop's clients: one connection each (as drive's streams), made when none is idle, kept for reuse
    across rounds so the load stays on warm connections."""

    def __init__(self, make: Callable[[], Awaitable[httpx.AsyncClient]]):
        self.make = make
        self.idle: list[httpx.AsyncClient] = []

    async def acquire(self) -> httpx.AsyncClient:
        return self.idle.pop() if self.idle else await self.make()

    def release(self, client: httpx.AsyncClient) -> None:
        self.idle.append(client)


async def drive_open(pool: ClientPool, target: Target, prompts: Callable[[int], Prompt], offsets: list[float],
                     origin: float, timeout: float, max_in_flight: int,
                     results: list[RequestResult] | None = None,
                     clock: Callable[[], float] = time.perf_counter,
                     max_gaps: int | None = None) -> list[RequestResult]:
    """Open loop: request i starts offsets[i] seconds after the call, whether or not earlier ones answered
    (a slow server meets more load, not less); then drain. An arrival that finds `max_in_flight` requests
    still running is not sent and counts as a failed request with that reason: the cap keeps a dead-slow
    server from growing gsg's connections without bound, and a rate the server cannot carry shows up.
    REFUSALS_END_ROUND refused connections in a row stop the schedule (the server is gone), and so do `max_gaps`
    inter-token gaps held (the round's memory bound, as in drive)."""
    start = clock()
    results = [] if results is None else results
    running: set[asyncio.Future] = set()
    refused_in_a_row = 0
    gaps = gaps_held(results)

    async def one(index: int) -> None:
        nonlocal refused_in_a_row, gaps
        client = await pool.acquire()
        try:
            outcome = await stream_one(client, target, prompts(index), origin, timeout, clock)
        finally:
            pool.release(client)
        results.append(outcome)
        gaps += len(outcome.gaps_s)
        refused_in_a_row = refused_in_a_row + 1 if outcome.error == REFUSED else 0

    try:
        for index, offset in enumerate(offsets):
            wait = start + offset - clock()
            if wait > 0:
                await asyncio.sleep(wait)
            if refused_in_a_row >= REFUSALS_END_ROUND or (max_gaps is not None and gaps >= max_gaps):
                break
            if len(running) >= max_in_flight:
                now = clock() - origin
                results.append(RequestResult(now, now, False, error=not_sent_reason(max_in_flight)))
                continue
            task = asyncio.ensure_future(one(index))
            running.add(task)
            task.add_done_callback(running.discard)
        if running:
            await asyncio.gather(*running)
    finally:  # cancelled (an interrupt): no request outlives the round
        for pending in list(running):
            pending.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
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
    try:  # httpx reads the proxy variables here: one it cannot use is one line, not an internal error
        return httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                                 transport=transport, verify=_tls_context(verify))
    except PROXY_ERRORS as exc:
        raise GsgError(proxy_problem(exc)) from None
