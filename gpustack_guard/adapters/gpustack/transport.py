"""Below httpx: one deadline for every phase of a request, and bodies decoded within a size cap.

httpx's timeouts apply to each socket operation, so a server that sends one header line a second, or
`100 Continue` interim answers forever, is never timed out. gsg's network backend wraps httpcore's: every
connect, TLS handshake, send and receive waits at most until the current request's deadline, and one that
starts after it fails at once. A blocked receive therefore ends at the deadline itself (the socket's own
timeout), on no extra thread.

Content-Encoding is undone here rather than by httpx, whose decoders inflate each received chunk whole (64 KiB
of a gzip bomb is 64 MiB): gsg's decoder inflates step by step and stops at the cap.
"""

from __future__ import annotations

import contextvars
import ipaddress
import re
import socket
import ssl
import threading
import time
import zlib
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

import httpcore
import httpx

# The real monotonic time at which the request this thread is making must be complete (None: no deadline).
_REQUEST_END: contextvars.ContextVar[float | None] = contextvars.ContextVar("gsg_request_end", default=None)

ACCEPT_ENCODING = "gzip, deflate"  # only what _BoundedDecoder undoes: brotli and zstd are never asked for
_GZIP_NAMES = {"gzip", "x-gzip"}


class RequestDeadlinePassed(Exception):
    """The request's deadline passed in some phase; httpx lets exceptions it does not know pass unchanged."""


@contextmanager
def request_deadline(seconds: float) -> Iterator[None]:
    """Every network operation in this block (on this thread) ends `seconds` from now at the latest."""
    token = _REQUEST_END.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _REQUEST_END.reset(token)


def _bounded(timeout: float | None) -> float | None:
    """The operation's own timeout, shortened to what is left of the request's deadline."""
    end = _REQUEST_END.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise RequestDeadlinePassed()
    return left if timeout is None else min(timeout, left)


def _past_deadline() -> bool:
    end = _REQUEST_END.get()
    return end is not None and time.monotonic() >= end - 0.005  # a socket timeout fires a hair early


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return self._inner.read(max_bytes, _bounded(timeout))
        except httpcore.TimeoutException:
            if _past_deadline():
                raise RequestDeadlinePassed() from None
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._inner.write(buffer, _bounded(timeout))
        except httpcore.TimeoutException:
            if _past_deadline():
                raise RequestDeadlinePassed() from None
            raise

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        try:
            return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))
        except httpcore.TimeoutException:
            if _past_deadline():
                raise RequestDeadlinePassed() from None
            raise

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's backend with every operation bounded by the request deadline (see the module docstring)."""

    def __init__(self, inner: httpcore.NetworkBackend):
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        addresses = _resolve_within_deadline(host, port)
        last: Exception | None = None
        for address in addresses:  # as socket.create_connection does: each address in turn, within the deadline
            try:
                return _DeadlineStream(self._inner.connect_tcp(address, port, _bounded(timeout), local_address,
                                                               socket_options))
            except httpcore.TimeoutException as exc:
                if _past_deadline():
                    raise RequestDeadlinePassed() from None
                last = exc  # an address that swallows the SYN (IPv6 without a route): the next one may answer
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None  # _resolve_within_deadline returns at least one address or raises
        raise last

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _resolve_within_deadline(host: str, port: int) -> list[str]:
    """The host's addresses, the name lookup bounded by the request deadline: getaddrinfo blocks in C and no
    socket timeout covers it, so a name is looked up on a helper thread that is waited for only until the deadline
    (a lookup still running then is abandoned; its thread is a daemon). An IP literal needs no lookup, and no
    deadline means no thread (this is the one place gsg pays for a thread per new connection, never per request:
    connections are pooled)."""
    if _is_ip(host) or _REQUEST_END.get() is None:
        return [host]
    found: list = []
    failed: list[BaseException] = []

    def look_up() -> None:
        try:
            found.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except BaseException as exc:  # handed to the caller's thread below
            failed.append(exc)

    worker = threading.Thread(target=look_up, name="gsg-dns", daemon=True)
    worker.start()
    worker.join(_bounded(None))
    if worker.is_alive():
        raise RequestDeadlinePassed()
    if failed or not found:
        raise httpcore.ConnectError(str(failed[0]) if failed else f"no address for {host}")
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def install_deadlines(client: httpx.Client) -> int:
    """Put DeadlineBackend under each connection pool of `client` (the direct one and any proxy's); returns
    how many pools got it. A transport given by the caller (tests' mocks) has no pool and is left alone."""
    installed = 0
    for transport in [client._transport, *client._mounts.values()]:  # noqa: SLF001 - no public hook exists
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, DeadlineBackend):
            pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
            installed += 1
    return installed


# --- bodies ------------------------------------------------------------------------------------------------

class BodyTooLarge(Exception):
    """More than the cap, counted on decoded bytes (and on received bytes, for an encoding that shrinks)."""


class BadEncoding(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# httpx builds the next request of every 3xx that has a Location, followed or not, and when the Location is no URL it
# raises RemoteProtocolError quoting the part it could not read ("Invalid port: 'hunter2'": a login redirect's URL
# whose password holds an unencoded '#' or '/'). Told apart by httpx's text (_client.py, _redirect_url, 0.27-0.29),
# never shown: it is a redirect, not a broken connection or another protocol, and its text may hold a password.
_BAD_LOCATION = "Invalid URL in location header"
BAD_LOCATION = "a redirect to a Location that is no URL (not followed; its text not shown)"


def bad_location(exc: BaseException) -> bool:
    """Whether httpx refused a redirect's Location as no URL (see _BAD_LOCATION)."""
    return isinstance(exc, httpx.RemoteProtocolError) and str(exc).startswith(_BAD_LOCATION)


def printable(text: str, limit: int = 40) -> str:
    """Server text for a message: printable ASCII only, cut to `limit`."""
    return re.sub(r"[^\x20-\x7e]", "?", text[:limit])


class _BoundedDecoder:
    """One Content-Encoding (gzip or deflate) undone incrementally: decompress() is never allowed to produce
    more than what is left of the cap plus one byte, the rest of the input waits in zlib's unconsumed tail."""

    def __init__(self, coding: str):
        self.coding = coding
        self._inflater: Any = zlib.decompressobj(16 + zlib.MAX_WBITS) if coding in _GZIP_NAMES else None
        self._head = b""  # deflate: the first bytes, until they show whether a zlib header wraps the stream

    def _start_deflate(self) -> None:
        first, second = self._head[0], self._head[1]
        wrapped = first & 0x0F == 8 and (first * 256 + second) % 31 == 0  # RFC 1950 header check
        # HTTP's "deflate" is zlib-wrapped, but some servers send raw deflate: accept both, as browsers do
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def decode(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decoded pieces of `data`, stopping once more than `room` bytes came out."""
        if self._inflater is None:
            self._head += data
            if len(self._head) < 2:
                return
            self._start_deflate()
            data, self._head = self._head, b""
        produced = 0
        try:
            while data and not self._inflater.eof:
                piece = self._inflater.decompress(data, room - produced + 1)
                produced += len(piece)
                yield piece
                if produced > room:
                    return
                data = self._inflater.unconsumed_tail
        except zlib.error as exc:
            raise BadEncoding(f"the {self.coding} data cannot be decoded: {exc}") from None

    def finish(self) -> None:
        if self._inflater is None or not self._inflater.eof:
            raise BadEncoding(f"the {self.coding} data ends before its end marker")


def decoder_for(content_encoding: str) -> _BoundedDecoder | None:
    """None for an unencoded body; BadEncoding for anything gsg did not ask for (ACCEPT_ENCODING)."""
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and (codings[0] in _GZIP_NAMES or codings[0] == "deflate"):
        return _BoundedDecoder(codings[0])
    raise BadEncoding(f"the answer is encoded as '{printable(content_encoding)}'; gsg asks for "
                      f"{ACCEPT_ENCODING} (one coding) only")


def read_body(raw_chunks: Iterable[bytes], content_encoding: str, cap: int) -> bytes:
    """The decoded body; BodyTooLarge as soon as more than `cap` bytes were received or decoded."""
    decoder = decoder_for(content_encoding) if content_encoding else None
    pieces: list[bytes] = []
    received = decoded = 0
    for chunk in raw_chunks:
        received += len(chunk)
        if received > cap:
            raise BodyTooLarge()
        if decoder is None:
            decoded = received
            pieces.append(chunk)
            continue
        for piece in decoder.decode(chunk, cap - decoded):
            decoded += len(piece)
            if decoded > cap:
                raise BodyTooLarge()
            pieces.append(piece)
    if decoder is not None and received:
        decoder.finish()
    return b"".join(pieces)
