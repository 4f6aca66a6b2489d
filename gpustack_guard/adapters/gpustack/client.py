"""A small, strict client for GPUStack's `/v2` management API (httpx).

Hostile or broken servers end as one ApiError line naming the endpoint (never the API key or a URL password):
- every request has a deadline for the whole answer (httpx's timeout is per read: a server that drips one byte
  a second would never time out) and every command a deadline over all its requests;
- an answer is read in chunks and refused past a size cap, before it is parsed;
- lists are read page by page, so no single answer holds a whole large fleet;
- reads (and the read-only export and evaluation POSTs) are retried with backoff and jitter on connection
  errors, resets and 502/503/504, never a write (a PUT, a create, a DELETE: the caller re-reads its target
  first); any request is retried on 429, after the server's Retry-After (bounded);
- a redirect is not an answer: the message names where it points.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass
from datetime import MAXYEAR, timezone
from email.utils import parsedate_to_datetime, parsedate_tz
from typing import Any, Callable, Iterator, Mapping
from urllib.parse import urlsplit, urlunsplit

import httpx

from gpustack_guard.adapters.gpustack.transport import (
    ACCEPT_ENCODING,
    BAD_LOCATION,
    BadEncoding,
    BodyTooLarge,
    RequestDeadlinePassed,
    bad_location,
    decoder_for,
    install_deadlines,
    printable,
    read_body,
    request_deadline,
)
from gpustack_guard.adapters.proxy_env import PROXY_ERRORS, proxy_problem
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.secrets import mask_url
from gpustack_guard.core.values import frozen_value

IDEMPOTENT = {"GET", "PUT", "DELETE", "HEAD"}
RETRY_STATUS = {502, 503, 504}
HINTS = {
    401: "the API key is missing, wrong or expired (GSG_API_KEY / --api-key-file)",
    403: "the API key needs the 'management' scope and the organisation OWNER role (or a platform admin)",
}
MiB = 1024**2
MAX_RESPONSE_HEADERS = 500  # header lines of one answer; GPUStack sends about ten, proxies add a few dozen
# h11, as httpcore configures it, refuses a status line plus headers past 100 KiB with this message: the bound
# on a single huge header, named here so the message can give it.
MAX_HEADER_BYTES = 100 * 1024
_HEADER_BLOCK_OVERFLOW = "Receive buffer too long"
_HEADERS_TOO_LARGE = f"the answer's status line and headers are larger than gsg reads ({MAX_HEADER_BYTES // 1024} KiB)"


@frozen_value(eq=True, repr=True)
class Limits:
    """How long and how much gsg waits for and reads from a server; each can be set from the environment."""

    request_deadline: float = 60.0  # seconds for one request, answer complete
    command_deadline: float = 900.0  # seconds for every request of one command together
    max_response_bytes: int = 32 * MiB  # one answer; lists are paged, so this bounds one page
    page_size: int = 500  # list items per request
    max_list_items: int = 1_000_000  # one list; past it the answer is not a fleet gsg can check
    max_list_pages: int = 10_000  # one list; a server whose page count grows with every page would never end
    max_retry_after: float = 30.0  # a 429 asking for a longer wait fails instead of stalling CI

    ENV = {"request_deadline": "GSG_REQUEST_DEADLINE", "command_deadline": "GSG_COMMAND_DEADLINE",
           "max_response_bytes": "GSG_MAX_RESPONSE_BYTES", "page_size": "GSG_PAGE_SIZE",
           "max_list_items": "GSG_MAX_LIST_ITEMS", "max_list_pages": "GSG_MAX_LIST_PAGES",
           "max_retry_after": "GSG_MAX_RETRY_AFTER"}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Limits:
        values: dict[str, Any] = {}  # keyword arguments: an int or a float, per field, as `kind` below
        for name, variable in cls.ENV.items():
            text = environ.get(variable, "").strip()
            if not text:
                continue
            kind = int if name in ("max_response_bytes", "page_size", "max_list_items", "max_list_pages") else float
            try:
                value = kind(text)
            except ValueError:
                value = 0
            if not value > 0 or value != value or value == float("inf"):
                raise GsgError(f"{variable} must be a positive {'whole ' if kind is int else ''}number, not "
                               f"'{printable(text)}'")  # cut: a value of 5,000 digits is not echoed whole
            values[name] = value
        return cls(**values)


class ApiError(GsgError):
    """One GPUStack call failed; `status` is None for transport failures and for a 2xx answer whose body gsg cannot
    use, which `answered` tells apart: the server took the request (a write landed, or will), only its answer is
    unusable, so the write is never sent again as if the answer had been lost."""

    def __init__(self, method: str, path: str, message: str, status: int | None = None, reason: str = ""):
        self.method, self.path, self.status, self.reason = method, path, status, reason
        self.detail = message
        self.answered = False
        super().__init__(message, where=f"{method} {path}")


@dataclass
class _Answer:
    status: int
    reason: str
    headers: httpx.Headers
    body: bytes


# An error answer is read this far for its message; a streamed answer (a log) is never read whole.
MAX_ERROR_BODY_BYTES = 64 * 1024
# Why a streamed answer stopped before its end (StreamedText.stopped)
STOPPED_AT_CAP = "cap"  # the byte cap the caller gave
STOPPED_AT_DEADLINE = "deadline"  # the request deadline passed while the answer was still coming
STOPPED_STALLED = "stalled"  # the server sent nothing for the read timeout
STOPPED_BROKEN = "broken"  # the connection broke mid-answer
STOPPED_BY_READER = "reader"  # the caller had what it needed


@frozen_value(eq=True, repr=True)
class StreamedText:
    """How a streamed answer ended: the bytes handed over and why reading stopped (None: the answer's end)."""

    bytes_read: int
    stopped: str | None = None


@dataclass
class _UnderWay:
    """A streamed answer being handed over: once it has started, how it stopped is a result, not an error."""

    started: bool = False
    kept: int = 0  # bytes handed to the reader so far

    def stopped(self, why: str) -> StreamedText:
        return StreamedText(self.kept, why)


class _Transient(Exception):
    """A failure worth another attempt: the message says what happened if no attempt is left."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class GPUStackClient:
    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 15.0,
                 verify: bool | str = True, retries: int = 3, backoff: float = 0.5,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, limits: Limits | None = None):
        if not base_url.lower().startswith(("http://", "https://")):
            raise GsgError(f"server URL must start with http:// or https://, got '{mask_url(base_url)}'")
        headers = {"Accept": "application/json", "User-Agent": "gpustack-guard", "Accept-Encoding": ACCEPT_ENCODING}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # User info would make httpx send Basic auth in place of the key, and must never be printed: drop it.
        self.base_url = mask_url(base_url).rstrip("/")
        root, query = _root_and_query(base_url)
        try:  # httpx reads the proxy variables here: a proxy URL it cannot use fails now, not mid-command
            self._http = httpx.Client(base_url=root, params=query, headers=headers, timeout=timeout,
                                      verify=verify, transport=transport, follow_redirects=False)
        except PROXY_ERRORS as exc:
            raise GsgError(proxy_problem(exc)) from None
        install_deadlines(self._http)
        self.timeout = timeout
        self.retries, self.backoff, self._sleep, self._clock = retries, backoff, sleep, clock
        self.limits = limits or Limits()
        self._command_end = clock() + self.limits.command_deadline
        self._clock_skew = 0.0  # the server's Date minus this host's time, from the latest answer that had one

    def server_time(self, local: float) -> float:
        """`local` (this host's epoch seconds) on the server's clock, as its latest Date header showed it: the
        apply lease is written and judged on one clock, so a host whose clock runs ahead never takes over a live
        lease and one running behind never writes a lease that others see as expired."""
        return local + self._clock_skew

    def _note_date(self, headers: httpx.Headers) -> None:
        said = _http_date(headers.get("date", ""))
        if said is not None and said != float("inf"):  # unreadable: the last reading (none: this host's clock)
            self._clock_skew = said - time.time()

    def close(self) -> None:
        self._http.close()

    def extend_deadline(self, seconds: float) -> None:
        """Give the command more time (apply --wait polls for as long as the user asked)."""
        self._command_end = max(self._command_end, self._clock() + seconds + self.limits.request_deadline)

    def command_time_out(self) -> str | None:
        """The line saying this command's time limit has run out (no request can be made any more), or None."""
        return self._command_deadline_text() if self._clock() >= self._command_end else None

    # --- transport ---------------------------------------------------------------------------------------
    def request(self, method: str, path: str, *, params: dict | None = None, json_body: Any = None,
                expect_json: bool = True, idempotent: bool | None = None, unique_keys: bool = False) -> Any:
        """One call, retried as the module docstring says; `idempotent` marks a POST that only reads;
        `unique_keys` refuses an answer with a key twice in one object (see parse_json)."""
        return self._answered(method, path, params=params, json_body=json_body, expect_json=expect_json,
                              idempotent=idempotent, unique_keys=unique_keys)[0]

    def _answered(self, method: str, path: str, *, params: dict | None = None, json_body: Any = None,
                  expect_json: bool = True, idempotent: bool | None = None,
                  unique_keys: bool = False) -> tuple[Any, httpx.Headers]:
        """request()'s result with the answer's headers (a list's paging may be in them)."""
        repeatable = method in IDEMPOTENT if idempotent is None else idempotent
        answer = self._retried(method, path, repeatable, lambda: self._send(method, path, params, json_body))
        assert isinstance(answer, _Answer)
        self._note_date(answer.headers)
        return self._result(method, path, answer, expect_json, unique_keys), answer.headers

    def _retried(self, method: str, path: str, repeatable: bool, once: Callable[[], Any]) -> Any:
        """`once()` until its outcome is final: a transient failure or a 5xx retried when the call may be
        repeated, a 429 always (the server refused it unseen), each after the pause the module docstring gives.
        Returns the last _Answer, or at once whatever else `once` returns (a streamed answer already under way)."""
        attempts = self.retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                outcome = once()
            except _Transient as exc:
                if last or not repeatable:
                    raise ApiError(method, path, exc.message) from None
                self._pause(method, path, self._backoff(attempt))
                continue
            if not isinstance(outcome, _Answer):
                return outcome
            if outcome.status == 429 and not last:
                self._pause(method, path, self._retry_after(method, path, outcome, attempt))
                continue
            if outcome.status in RETRY_STATUS and repeatable and not last:
                self._pause(method, path, self._backoff(attempt))
                continue
            return outcome
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, method: str, path: str, params: dict | None, json_body: Any) -> _Answer:
        cap = self.limits.max_response_bytes

        def read_whole(response: httpx.Response, deadline: float, started: float) -> _Answer:
            declared = response.headers.get("content-length", "")
            # ASCII digits only: str.isdigit() also takes '²' (a Latin-1 header byte), which int() refuses
            if declared.isascii() and declared.isdigit() and len(declared) < 20 and int(declared) > cap:
                raise ApiError(method, path, _too_large(cap, int(declared)))
            encoding = "" if response.is_stream_consumed else response.headers.get("content-encoding", "")
            body = read_body(self._chunks_in_time(method, path, response, deadline, started), encoding, cap)
            return _Answer(response.status_code, response.reason_phrase, response.headers, body)

        answer = self._exchange(method, path, params, json_body, read_whole)
        assert isinstance(answer, _Answer)
        return answer

    def _chunks_in_time(self, method: str, path: str, response: httpx.Response, deadline: float,
                        started: float) -> Iterator[bytes]:
        # The network backend (transport.py) holds every connect, send and receive to the deadline; this clock
        # check per chunk is for transports without it (tests' mocks), which also hand over answers read whole.
        for chunk in [response.content] if response.is_stream_consumed else response.iter_raw():
            if self._clock() > deadline:
                raise ApiError(method, path, self._deadline_text(deadline, started))
            yield chunk

    def _exchange(self, method: str, path: str, params: dict | None, json_body: Any,
                  read: Callable[[httpx.Response, float, float], _Answer | StreamedText],
                  under_way: _UnderWay | None = None) -> _Answer | StreamedText:
        """One request under the request and the command deadline, its answer handed to `read(response,
        deadline, started)`. Every failure ends as ApiError, or _Transient when another attempt may help; for a
        streamed answer that `under_way` says has started, a break, a stall or the deadline ends the read with
        what came (StreamedText) instead."""
        now = self._clock()
        if now >= self._command_end:
            raise ApiError(method, path, self._command_deadline_text())
        deadline = min(now + self.limits.request_deadline, self._command_end)
        timeout = httpx.Timeout(max(0.001, min(self.timeout, deadline - now)))
        progress = under_way or _UnderWay()  # a whole answer never counts as started: its failures are errors
        try:
            with request_deadline(deadline - now), \
                    self._http.stream(method, path, params=params, json=json_body, timeout=timeout) as response:
                self._check_headers(method, path, response)
                return read(response, deadline, now)
        except BodyTooLarge:
            raise ApiError(method, path, _too_large(self.limits.max_response_bytes)) from None
        except BadEncoding as exc:
            raise ApiError(method, path, exc.message) from None
        except RequestDeadlinePassed:
            if progress.started:
                return progress.stopped(STOPPED_AT_DEADLINE)
            raise ApiError(method, path, self._deadline_text(deadline, now)) from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # before TimeoutException: no answer yet, retried
            raise _Transient(f"cannot connect to {self.base_url}: {_short(exc)}") from None
        except httpx.TimeoutException:
            overdue = self._clock() >= deadline - 0.01
            if progress.started:
                return progress.stopped(STOPPED_AT_DEADLINE if overdue else STOPPED_STALLED)
            if overdue:
                raise ApiError(method, path, self._deadline_text(deadline, now)) from None
            raise ApiError(method, path, f"timed out after {self.timeout}s waiting for the server") from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            if bad_location(exc):  # an answer (a 3xx), before any body: not retried, its Location not echoed
                raise ApiError(method, path, f"{BAD_LOCATION}: not an API answer (a login page or proxy? point "
                                             "--server at the GPUStack server itself)") from None
            if progress.started:
                return progress.stopped(STOPPED_BROKEN)
            if _HEADER_BLOCK_OVERFLOW in str(exc):  # h11's bound on the status line and headers, as httpcore sets it
                raise ApiError(method, path, _HEADERS_TOO_LARGE) from None
            raise _Transient(f"the connection broke before the answer was complete: {_short(exc)}") from None
        except httpx.DecodingError as exc:
            raise ApiError(method, path, f"the answer cannot be decoded: {_short(exc)}") from None
        except httpx.HTTPError as exc:
            raise ApiError(method, path, f"request failed: {_short(exc)}") from None

    @staticmethod
    def _check_headers(method: str, path: str, response: httpx.Response) -> None:
        lines = response.headers.raw
        if len(lines) > MAX_RESPONSE_HEADERS:
            raise ApiError(method, path, f"the answer has {len(lines):,} header lines, more than gsg reads "
                                         f"({MAX_RESPONSE_HEADERS:,})")
        # h11 stops a header block that outgrows its buffer; one that arrives whole in a single read can pass
        # it by up to a read's size, so the bound itself is checked here
        if sum(len(name) + len(value) + 4 for name, value in lines) > MAX_HEADER_BYTES:
            raise ApiError(method, path, _HEADERS_TOO_LARGE)

    def _deadline_text(self, deadline: float, started: float) -> str:
        if deadline >= self._command_end:
            return self._command_deadline_text()
        return (f"no complete answer within {self.limits.request_deadline:g}s (GSG_REQUEST_DEADLINE); "
                "the server is too slow or stalled")

    def _command_deadline_text(self) -> str:
        return (f"gsg's time limit for this command ran out ({self.limits.command_deadline:g}s over all requests, "
                "GSG_COMMAND_DEADLINE)")

    def _backoff(self, attempt: int) -> float:
        delay = self.backoff * (2 ** attempt)
        return delay + random.uniform(0, delay / 2)  # jitter: retries from many CI jobs do not align

    def _retry_after(self, method: str, path: str, answer: _Answer, attempt: int) -> float:
        text = answer.headers.get("retry-after", "").strip()
        if not text:
            return self._backoff(attempt)
        try:
            wait = float(text)
        except ValueError:
            moment = _http_date(text)
            if moment is None:
                return self._backoff(attempt)
            wait = moment - time.time()  # a year past 9999 is infinite: the bound below refuses it
        wait = max(0.0, wait)
        if wait != wait or wait > self.limits.max_retry_after:
            raise ApiError(method, path, f"HTTP 429 Too Many Requests: the server asks to retry after {text[:40]}, "
                                         f"longer than gsg waits ({self.limits.max_retry_after:g}s, "
                                         "GSG_MAX_RETRY_AFTER)", 429, "Too Many Requests")
        return wait

    def _pause(self, method: str, path: str, seconds: float) -> None:
        if self._clock() + seconds >= self._command_end:
            raise ApiError(method, path, self._command_deadline_text())
        self._sleep(seconds)

    def _result(self, method: str, path: str, answer: _Answer, expect_json: bool, unique_keys: bool = False) -> Any:
        if 300 <= answer.status < 400:
            where = answer.headers.get("location", "")
            target = f" to {_redirect_target(where)}" if where else " without a Location"
            raise ApiError(method, path, f"HTTP {answer.status} redirect{target}: not an API answer (a login page "
                                         "or proxy? point --server at the GPUStack server itself)",
                           answer.status, answer.reason)
        if answer.status >= 400:
            raise _api_error(method, path, answer)
        if not expect_json:
            try:
                return answer.body.decode("utf-8")
            except UnicodeDecodeError:
                raise ApiError(method, path, f"HTTP {answer.status} but the body is not UTF-8 text") from None
        if not answer.body:
            return None
        try:
            return parse_json(method, path, answer.status, answer.body, self.base_url, unique_keys)
        except ApiError as exc:
            exc.answered = True
            raise

    # --- lists -------------------------------------------------------------------------------------------
    def list_all(self, path: str, params: dict | None = None,
                 keep: Callable[[int, dict], Any] | None = None, filtered: tuple[str, ...] = ()) -> list:
        """Every item, page by page (`page`, `perPage`), each passed through `keep(index, item)` as its page
        arrives, so a caller that needs a few fields of 200,000 items never holds them all whole. Items seen
        twice (the list shifted while paging) are kept once. An item whose own field contradicts a filter in
        `params` that `filtered` names (cluster_id, model_id) is refused: a server that ignores the filter hands over
        other clusters' or models' objects, and an export, a prune or a wait would act on them."""
        wanted = {name: (params or {})[name] for name in filtered if (params or {}).get(name) is not None}
        found: list = []
        seen: dict = {}  # id -> the name it was first listed under
        repeated = 0  # items listed again under an id already read (kept once)
        previous: list | None = None  # the last page's items, when the server gives no page count
        page = 1
        while True:
            body, headers = self._answered("GET", path, params={**(params or {}), "page": page,
                                                                "perPage": self.limits.page_size})
            chunk, pages = _envelope("GET", path, body)
            if pages is None and _next_link(headers):
                # RFC 8288 paging: the rest is behind a URL the server names (perhaps on another host, where the
                # API key must not go); read as the whole list, page 1 would hide models from a plan or a prune
                raise ApiError("GET", path, "the server pages this list with Link headers (rel=\"next\"), not "
                                            "GPUStack's 'pagination': gsg does not follow them and the first page is "
                                            "not the whole list; refusing to act on part of it")
            total = _announced_total(body)
            # checked on every page: a count that grows with each page reaches the cap too
            if pages is not None and pages > self.limits.max_list_pages:
                raise ApiError("GET", path, f"the server announces {_count(pages)} pages, more than gsg reads "
                                            f"({self.limits.max_list_pages:,}, GSG_MAX_LIST_PAGES)")
            before = len(found)
            for item in chunk:
                if wanted and isinstance(item, dict):
                    _check_filter(path, page, item, wanted)
                key = item.get("id") if isinstance(item, dict) else None
                if key is not None and isinstance(key, (int, str)):
                    name = item.get("name")
                    if key in seen:
                        # the same row seen again as the list shifts is kept once; under another name it is two
                        # models to gsg, and which one holds the id cannot be told
                        if seen[key] != name:
                            raise ApiError("GET", path, f"id {printable(str(key))} is listed twice under different "
                                                        f"names (page {page}): the list is inconsistent; try again")
                        repeated += 1
                        continue
                    seen[key] = name
                found.append(keep(len(found), item) if keep else item)
            if len(found) > self.limits.max_list_items:
                raise ApiError("GET", path, f"more than {self.limits.max_list_items:,} items (GSG_MAX_LIST_ITEMS)")
            # No page count: the server may page without saying so, and by a size of its own (a page shorter
            # than perPage is no sign of the end), so the next page is read until one adds nothing: empty, or
            # the same items again from a server that ignores `page` (one request more than a counted list).
            silent_end = pages is None and (not chunk or len(found) == before or chunk == previous)
            previous = chunk
            if silent_end or pages is not None and page >= pages:
                # the last page's own count: fewer items than it says were handed over is a list with holes (a
                # proxy or a server dropping items from a page); a prune or a duplicate-name check on it would judge
                # models it never saw
                if total is not None and len(found) < total:
                    # an id listed twice fills a place of the count: the pages held more than the ids read
                    twice = f" distinct ids ({_count(repeated)} item(s) listed again under an id already read)" \
                        if repeated else ""
                    raise ApiError("GET", path, f"the server counts {_count(total)} items but its pages held "
                                                f"{_count(len(found))}{twice}: the list is incomplete; try again")
                return found
            if pages is None:
                if page >= self.limits.max_list_pages:
                    raise ApiError("GET", path, f"more than {self.limits.max_list_pages:,} full pages and no end "
                                                "(GSG_MAX_LIST_PAGES)")
                page += 1
                continue
            if not chunk:  # the rest of the list would be left unread: a prune or an export of part of a fleet
                raise ApiError("GET", path, f"page {page} of {_count(pages)} is empty: the server's pagination is "
                                            "inconsistent; try again")
            if len(found) == before:  # a server that serves the same page again and again would never end
                raise ApiError("GET", path, f"page {page} of {pages} holds only items already read: the "
                                            "server's pagination is broken")
            page += 1

    # --- endpoints ---------------------------------------------------------------------------------------
    def version(self) -> dict:
        body = self.request("GET", "/version")
        if not isinstance(body, dict) or "version" not in body:
            raise ApiError("GET", "/version", "unexpected answer: is this a GPUStack server?")
        version = body["version"]
        if not isinstance(version, str) or len(version) > 64:  # it is echoed in messages and file headers
            shown = "text of " + f"{len(version):,} characters" if isinstance(version, str) else kind_of(version)
            raise ApiError("GET", "/version", f"field 'version' is {shown}, expected a version such as v2.3.0")
        return body

    def me(self) -> dict:
        body = self.request("GET", "/v2/users/me")
        if not isinstance(body, dict):
            raise ApiError("GET", "/v2/users/me", f"unexpected answer: {kind_of(body)}, not a user object")
        return body

    def clusters(self, keep: Callable[[int, dict], Any] | None = None) -> list:
        return self.list_all("/v2/clusters", keep=keep)

    def workers(self, cluster_id: int | None = None, keep: Callable[[int, dict], Any] | None = None) -> list:
        # `is not None`, never truthiness (here and below): a filter of id 0 left out of the query lists every
        # cluster's workers, or every model's instances for --wait
        params = {"cluster_id": cluster_id} if cluster_id is not None else None
        return self.list_all("/v2/workers", params, keep=keep, filtered=("cluster_id",))

    def model_instances(self, cluster_id: int | None = None, model_id: int | None = None,
                        keep: Callable[[int, dict], Any] | None = None) -> list:
        params = {k: v for k, v in (("cluster_id", cluster_id), ("model_id", model_id)) if v is not None}
        return self.list_all("/v2/model-instances", params or None, keep=keep, filtered=("cluster_id", "model_id"))

    def models(self, cluster_id: int | None = None) -> list[dict]:
        path = "/v2/models"
        return self.list_all(path, {"cluster_id": cluster_id} if cluster_id is not None else None,
                             keep=lambda i, m: _model_item(path, i, m), filtered=("cluster_id",))

    def find_models(self, name: str) -> list[dict]:
        """Every model of exactly this name (`?search=` is a case-insensitive substring match)."""
        path = "/v2/models"
        found = self.list_all(path, {"search": name}, keep=lambda i, m: _model_item(path, i, m))
        return [m for m in found if m["name"] == name]


    # The answers every write is bound by (applier.py): one model each, so reading them with unique keys costs
    # nothing; a model of `"id": 7, ..., "id": 9` would be bound as id 9 while a reader taking the first key saw 7.
    def get_model(self, model_id: int) -> dict:
        path = f"/v2/models/{model_id}"
        return _model_item(path, None, self.request("GET", path, unique_keys=True))

    def create_model(self, body: dict) -> dict:
        answer = self.request("POST", "/v2/models", json_body=body, unique_keys=True)
        try:
            return _model_item("/v2/models", None, answer, "POST")
        except ApiError as exc:  # a 2xx (202, 204, a proxy's page) whose body is no model: the POST was taken
            exc.answered = True
            raise

    def update_model(self, model_id: int, body: dict) -> dict:
        """One PUT, never sent again after a 5xx or a broken connection: the first may have landed, and between
        the two another writer's edit would be written over by a document read before it (apply checks the model
        before each PUT; the next apply picks up from what the server holds). A 429 is still waited for: the
        server refused it unseen."""
        path = f"/v2/models/{model_id}"
        answer = self.request("PUT", path, json_body=body, idempotent=False, unique_keys=True)
        return _model_item(path, None, answer, "PUT")

    def delete_model(self, model_id: int) -> None:
        """One DELETE, never sent again after a 5xx or a broken connection: the first may have landed, and a
        server that reuses ids (SQLite gives a new row the highest free rowid) may have handed the id to another
        model by the time a blind retry arrives, which would delete it. The caller reads the id again and decides
        (retry_pause between); a 429 is still waited for: the server refused it unseen."""
        self.request("DELETE", f"/v2/models/{model_id}", idempotent=False)

    def retry_pause(self, method: str, path: str, attempt: int) -> None:
        """The backoff a retried read waits before `attempt` + 1, for a caller that retries a write itself after
        checking its target again; one line when the command's deadline would pass meanwhile."""
        self._pause(method, path, self._backoff(attempt))

    def restart_model(self, model_id: int) -> dict:
        return self.request("POST", f"/v2/models/{model_id}/restart")

    def export_models(self, cluster_id: int | None = None, ids: list[int] | None = None) -> str:
        body = {k: v for k, v in (("cluster_id", cluster_id), ("ids", ids)) if v is not None}
        # a POST only because the id list can be long: it changes nothing, so it is retried like a read
        text = self.request("POST", "/v2/models/export", json_body=body, expect_json=False, idempotent=True)
        if text[:1024].lstrip()[:1] == "<":  # no YAML export starts so: a login or proxy page answered with 200
            raise ApiError("POST", "/v2/models/export", f"HTTP 200 but the body is an HTML page, not an export (is "
                                                         f"{self.base_url} a GPUStack server?)")
        return text

    def evaluate(self, cluster_id: int, specs: list[dict]) -> list[dict]:
        body = self.request("POST", "/v2/model-evaluations", json_body={"cluster_id": cluster_id,
                                                                         "model_specs": specs}, idempotent=True)
        if not isinstance(body, dict) or not isinstance(body.get("results"), list) \
                or not all(isinstance(r, dict) for r in body["results"]):
            raise ApiError("POST", "/v2/model-evaluations", "unexpected answer (no 'results' list of objects)")
        # the results are shown whole (JSON output, SARIF): a number JSON cannot hold would make them invalid
        unfit = _first_unfit_number(body["results"], "results")
        if unfit:
            field, value = unfit
            raise ApiError("POST", "/v2/model-evaluations", f"field '{field[:120]}' is {kind_of(value)}, expected a "
                                                             "finite number")
        return body["results"]

    def instance_log(self, instance_id: int, *, lines: int, max_bytes: int,
                     consume: Callable[[bytes], bool]) -> StreamedText:
        """One model instance's serving log from its first line (never `follow`: the answer must end), handed to
        `consume` as it arrives; see stream_text for how reading stops."""
        # offset 0 + limit: the start of the current run's log, where the engine prints its memory figures (a
        # server that predates `offset` ignores both and sends the whole log from its start: the same lines)
        params = {"offset": 0, "limit": lines, "follow": "false"}
        return self.stream_text(f"/v2/model-instances/{int(instance_id)}/logs", params, max_bytes, consume)

    def stream_text(self, path: str, params: dict | None, max_bytes: int,
                    consume: Callable[[bytes], bool]) -> StreamedText:
        """A GET whose answer is read as it arrives and handed to `consume` chunk by chunk, never held whole.
        Retried as reads are until the answer starts. Once it has started, reading ends without an error at
        `max_bytes`, at the request deadline (an endless answer), when the server stalls or the connection
        breaks, or when `consume` returns False; the result says which."""
        outcome = self._retried("GET", path, True, lambda: self._stream_once(path, params, max_bytes, consume))
        if isinstance(outcome, StreamedText):
            return outcome
        if outcome.status >= 400 and not outcome.body.lstrip().startswith(b"{"):
            raise _text_error("GET", path, outcome)
        self._result("GET", path, outcome, expect_json=False)  # raises: a redirect or an error status
        raise AssertionError("unreachable")  # pragma: no cover

    def _stream_once(self, path: str, params: dict | None, max_bytes: int,
                     consume: Callable[[bytes], bool]) -> StreamedText | _Answer:
        progress = _UnderWay()

        def read_as_it_comes(response: httpx.Response, deadline: float, started: float) -> StreamedText | _Answer:
            consumed = response.is_stream_consumed  # tests' mock transports build answers whole
            raw = [response.content] if consumed else response.iter_raw()
            encoding = "" if consumed else response.headers.get("content-encoding", "")
            if response.status_code >= 300:
                try:
                    body = read_body(raw, encoding, MAX_ERROR_BODY_BYTES)
                except (BodyTooLarge, BadEncoding):
                    body = b""
                return _Answer(response.status_code, response.reason_phrase, response.headers, body)
            progress.started = True
            decoder = decoder_for(encoding) if encoding else None
            for chunk in raw:
                pieces = [chunk] if decoder is None else decoder.decode(chunk, max_bytes - progress.kept)
                for piece in pieces:
                    piece = piece[:max_bytes - progress.kept]
                    progress.kept += len(piece)
                    if piece and not consume(piece):
                        return progress.stopped(STOPPED_BY_READER)
                    if progress.kept >= max_bytes:
                        return progress.stopped(STOPPED_AT_CAP)
                if self._clock() > deadline:  # transports without the deadline backend (tests' mocks)
                    return progress.stopped(STOPPED_AT_DEADLINE)
            return StreamedText(progress.kept)

        return self._exchange("GET", path, params, None, read_as_it_comes, progress)


def _model_item(path: str, index: int | None, item: Any, method: str = "GET") -> dict:
    """A model as the rest of gsg reads it: an object with an integer id and a text name (the plan, the applier
    and export index by both)."""
    where = "the answer" if index is None else f"item {index}"
    if not isinstance(item, dict):
        raise ApiError(method, path, f"{where} is {kind_of(item)}, not a model object")
    for name, kind, label in (("id", int, "an integer"), ("name", str, "text")):
        value = item.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ApiError(method, path, f"{where}: field '{name}' is {kind_of(value)}, expected {label}")
    if not item["id"] <= INT64_MAX:
        raise ApiError(method, path, f"{where}: field 'id' is {kind_of(item['id'])}, expected a 64-bit integer")
    for name, container, label in (("meta", dict, "an object"), ("env", dict, "an object"),
                                   ("backend_parameters", list, "a list")):
        if item.get(name) is not None and not isinstance(item[name], container):
            raise ApiError(method, path, f"{where}: field '{name}' is {kind_of(item[name])}, expected {label}")
    # what plan, drift and apply read beyond those: compared, indexed and parsed as these types
    for name in ("cluster_id", "replicas", "ready_replicas"):
        value = item.get(name)
        if value is not None and (type(value) is not int or not 0 <= value <= INT64_MAX):
            raise ApiError(method, path, f"{where}: field '{name}' is {kind_of(value)}, expected an integer >= 0")
    for position, argument in enumerate(item.get("backend_parameters") or ()):
        if not isinstance(argument, str):
            raise ApiError(method, path, f"{where}: field 'backend_parameters[{position}]' is {kind_of(argument)}, "
                                         "expected text")
    for key, value in (item.get("env") or {}).items():
        if not isinstance(value, str):
            raise ApiError(method, path, f"{where}: field 'env.{printable(key, 60)}' is {kind_of(value)}, "
                                         "expected text")
    return item


def _check_filter(path: str, page: int, item: dict, wanted: dict) -> None:
    """A listed item must not contradict the filter it was asked for (a field it lacks is not checked: older
    servers leave some out)."""
    for name, value in wanted.items():
        own = item.get(name)
        if own is not None and own != value:
            shown = printable(str(own)) if type(own) is int else kind_of(own)
            raise ApiError("GET", path, f"asked for {name}={value} but page {page} lists an item with {name} "
                                        f"{shown}: the server ignored the filter; refusing to act on that list")


def _first_unfit_number(value: Any, name: str) -> tuple[str, Any] | None:
    """The first float that is NaN or infinite (1e999 reads as infinity) or integer past 64 bits, with its path."""
    stack: list[tuple[str, Any]] = [(name, value)]
    while stack:
        where, current = stack.pop()
        if type(current) is float and (current != current or current in (float("inf"), float("-inf"))):
            return where, current
        if type(current) is int and not -INT64_MAX - 1 <= current <= INT64_MAX:
            return where, current
        if isinstance(current, dict):
            stack.extend((f"{where}.{printable(str(k), 60)}", v) for k, v in reversed(current.items()))
        elif isinstance(current, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(current))))
    return None


def _announced_total(body: Any) -> int | None:
    """`pagination.total` when it is a count (GPUStack's Pagination has it); None when absent or not a number."""
    pagination = body.get("pagination") if isinstance(body, dict) else None
    total = pagination.get("total") if isinstance(pagination, dict) else None
    return total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else None


_LINK_NEXT = re.compile(r"""<[^>]*>\s*(?:;[^,;]*)*;\s*rel\s*=\s*"?[^",;]*\bnext\b""", re.IGNORECASE)


def _next_link(headers: httpx.Headers) -> bool:
    """Whether a Link header (RFC 8288) points to a next page: rel may list several types ("next last")."""
    return any(_LINK_NEXT.search(value[:4096]) for value in headers.get_list("link"))


def _envelope(method: str, path: str, body: Any) -> tuple[list, int | None]:
    """(items, number of pages or None when the server did not say)."""
    if isinstance(body, list):
        return body, None
    if not isinstance(body, dict) or not isinstance(body.get("items"), list):
        raise ApiError(method, path, "unexpected answer: no 'items' list")
    pagination = body.get("pagination")
    if pagination is None:
        return body["items"], None
    pages = pagination.get("totalPage") if isinstance(pagination, dict) else None
    if not isinstance(pages, int) or isinstance(pages, bool) or pages < 0:
        raise ApiError(method, path, f"field 'pagination.totalPage' is {kind_of(pages)}, expected an integer")
    return body["items"], pages


class _NotJsonNumber(ValueError):
    """NaN or Infinity: Python's json reads them, JSON has no such numbers."""


def _refuse_constant(text: str) -> Any:
    raise _NotJsonNumber(text)


class _RepeatedKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict:
    found = dict(pairs)
    if len(found) != len(pairs):  # the rare case: find which key came twice
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return found


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)  # built once: json.loads builds one per call with options
_UNIQUE_KEYS_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_unique_object)


class _Unusable:
    """A value json could not turn into a number, kept so the field holding it can be named."""

    def __init__(self, description: str):
        self.description = description


def parse_json(method: str, path: str, status: int, body: bytes, base_url: str, unique_keys: bool = False) -> Any:
    """The JSON body; a body that is not JSON, or holds a number Python cannot read (more digits than
    sys.get_int_max_str_digits(), NaN, Infinity), is one line naming the field. With `unique_keys`, an object
    holding one key twice is refused too: JSON leaves its meaning open (Python keeps the last, other readers the
    first), so which model such an answer describes cannot be told."""
    decoder = _UNIQUE_KEYS_DECODER if unique_keys else _DECODER
    try:
        return decoder.decode(body.decode(json.detect_encoding(body), "surrogatepass"))  # as json.loads does
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ApiError(method, path, f"HTTP {status} but the body is not JSON (is {base_url} a GPUStack "
                                     "server?)") from None
    except _RepeatedKey as exc:
        raise ApiError(method, path, f"an object of the answer holds the key '{printable(exc.key, 60)}' twice: "
                                     "which value is meant cannot be told; refusing the answer") from None
    except ValueError:  # only now, on the failure path, read it again to find the field
        field, description = _unusable_number(body)
        where = f"field '{field[:120]}'" if field else "the answer"
        raise ApiError(method, path, f"{where} is {description}, not a number gsg can use") from None


def _unusable_number(body: bytes) -> tuple[str, str]:
    digits = sys.get_int_max_str_digits() or None

    def integer(text: str) -> Any:
        count = len(text.lstrip("-"))
        return _Unusable(f"an integer of {count:,} digits") if digits and count > digits else int(text)

    try:
        value = json.loads(body, parse_int=integer, parse_constant=lambda text: _Unusable(f"'{text}'"))
    except (ValueError, RecursionError):  # this pass reads on past the first bad number: into any nesting after it
        return "", "a number Python cannot read"
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        name, current = stack.pop()
        if isinstance(current, _Unusable):
            return name, current.description
        if isinstance(current, dict):
            stack.extend((f"{name}.{printable(str(key), 60)}" if name else printable(str(key), 60), item)
                         for key, item in reversed(current.items()))
        elif isinstance(current, list):
            stack.extend((f"{name}[{index}]", item) for index, item in reversed(list(enumerate(current))))
    return "", "a number Python cannot read"


INT64_MAX = 2**63 - 1  # GPUStack stores ids, counts and bytes as 64-bit integers


def kind_of(value: Any) -> str:
    """What a server's value is, for a message (never the value itself: it may be huge or hostile)."""
    if value is None:
        return "missing or null"
    if type(value) is int and not -INT64_MAX - 1 <= value <= INT64_MAX:
        return f"an integer of {len(str(abs(value))):,} digits"
    if type(value) is float and value != value:
        return "NaN"
    if type(value) is float and value in (float("inf"), float("-inf")):
        return "an infinite number"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "text", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _count(number: int) -> str:
    """A server's number for a message: written out when short, by its size when absurd."""
    return f"{number:,}" if number < 10**15 else f"a {len(str(number)):,}-digit number of"


def _too_large(cap: int, declared: int | None = None) -> str:
    size = f" ({declared / MiB:.1f} MiB declared)" if declared else ""
    return (f"the answer is larger than gsg reads ({cap / MiB:g} MiB, GSG_MAX_RESPONSE_BYTES){size}; "
            "refused before parsing")


def _http_date(text: str) -> float | None:
    """An HTTP date (Date, Retry-After) as epoch seconds: infinity for a year past what datetime holds (9999; a
    year of 11 digits overflows the parser itself), None when it is no date. '-0000' (the zone unknown) is read as
    UTC, as RFC 5322 says of it, never as this host's zone."""
    try:
        fields = parsedate_tz(text)
        if fields is None:
            return None
        if fields[0] > MAXYEAR:
            return float("inf")
        said = parsedate_to_datetime(text)
    except OverflowError:
        return float("inf")
    except (TypeError, ValueError, IndexError):  # a day or a zone out of range ('31 Feb', '+9999')
        return None
    said = said if said.tzinfo else said.replace(tzinfo=timezone.utc)
    return said.timestamp()


def _redirect_target(location: str) -> str:
    """Where a redirect points, without user info or query (a login redirect may carry tokens)."""
    try:
        parts = urlsplit(mask_url(location[:300]))
    except ValueError:
        return "(an unparseable location)"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")) or "(an empty location)"


def _api_error(method: str, path: str, answer: _Answer) -> ApiError:
    status = answer.status
    reason, message = answer.reason, ""
    try:
        body = json.loads(answer.body) if answer.body else None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        body = None
    if isinstance(body, dict):
        reason = str(body.get("reason") or reason)[:100]
        message = _detail_text(body.get("message") or body.get("detail"))
        if isinstance(body.get("error"), dict):  # OpenAI-shaped errors on /v1
            message = _detail_text(body["error"].get("message")) or message  # null or a list: no "None", no repr
    first = message.strip().splitlines()[0][:300] if message.strip() else ""
    if status == 422 and "\n" in message.strip():
        first += f" (+{len(message.strip().splitlines()) - 1} lines)"
    text = f"HTTP {status} {reason}" + (f": {first}" if first else "")
    if status in HINTS:
        text += f" — {HINTS[status]}"
    return ApiError(method, path, text, status, reason)


DETAIL_ENTRIES_SHOWN = 3  # of a validation error's list, the entries one error line names


def _detail_text(detail: Any) -> str:
    """An error body's message or detail as text. FastAPI's validation errors are a list of {loc, msg, input}: each
    is 'field: msg', never its `input` (the request's own values, secrets included) nor Python's repr of the list."""
    if isinstance(detail, str):
        return detail
    if isinstance(detail, dict):
        return _detail_text(detail.get("message") or detail.get("msg"))
    if not isinstance(detail, list):
        return ""
    parts = []
    for entry in detail:
        if isinstance(entry, dict) and isinstance(entry.get("msg"), str):
            loc = [str(p) for p in entry.get("loc") or () if isinstance(p, (str, int))]
            where = ".".join(loc[1:] if loc[:1] == ["body"] else loc)
            parts.append(f"{where}: {entry['msg']}" if where else entry["msg"])
        elif isinstance(entry, str):
            parts.append(entry)
    shown = "; ".join(parts[:DETAIL_ENTRIES_SHOWN]).replace("\n", " ")
    more = len(parts) - DETAIL_ENTRIES_SHOWN
    return shown + (f" (+{more} more)" if more > 0 else "")


_TERMINAL_ESCAPE = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _text_error(method: str, path: str, answer: _Answer) -> ApiError:
    """An error answer in plain text (GPUStack's log proxy writes its reason so, after a terminal escape): the
    status, with the first line of the text when it has one."""
    text = _TERMINAL_ESCAPE.sub(b"", answer.body).decode("utf-8", "replace").strip()
    first = printable(text.splitlines()[0], 200) if text else ""
    message = f"HTTP {answer.status} {answer.reason}".rstrip() + (f": {first}" if first else "")
    if answer.status in HINTS:
        message += f" — {HINTS[answer.status]}"
    return ApiError(method, path, message, answer.status, answer.reason)


def _root_and_query(url: str) -> tuple[str, httpx.QueryParams]:
    """The server URL without user info, query or fragment, and its query's parameters. httpx appends each path to
    the base URL's text, query included ('http://h/?token=t' + '/v2/models' is '/?token=t/v2/models', the root page),
    so a query (an auth gateway's token) is sent as parameters of every request instead; and unmasked: mask_url's
    form would send '********' as the token."""
    try:
        parts = urlsplit(url)
    except ValueError:  # the CLI refuses such a URL first; a direct caller gets the old reading
        return mask_url(url).rstrip("/"), httpx.QueryParams()
    host = parts.netloc.rpartition("@")[2]
    return (urlunsplit((parts.scheme, host, parts.path, "", "")).rstrip("/"),
            httpx.QueryParams(parts.query))


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]
