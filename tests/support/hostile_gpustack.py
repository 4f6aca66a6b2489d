"""A misbehaving GPUStack on a real loopback socket (threads): the in-memory FakeGPUStack answers, and a mode
decides how badly the answer reaches the client. Real sockets, because dripping bytes, resets and truncated
bodies only exist below httpx's transport.

Modes (applied to /v2/ requests; /v2/users/me answers normally except in `redirect`, so commands reach their
list and write calls):
  slow        the answer starts after `slow_seconds`
  drip        headers at once, then one byte of the body every `drip_interval` seconds
  reset       the connection is reset (RST) without an answer
  truncated   Content-Length promises more than is sent, then the connection closes
  429         Too Many Requests with Retry-After: `retry_after` (0)
  flaky       failures in turn: 503, a reset, 502 (each retry meets the next one)
  redirect    302 to a login page whose URL carries user info and a token
  huge        a 200 JSON body of `huge_bytes` without Content-Length (read until close)
  wrong-schema  valid JSON whose ids and booleans are text and names null
  slow-headers  the status line, then one header line every `drip_interval` seconds, `forever` (5 s), then a reset
  continue-forever  `HTTP/1.1 100 Continue` interim answers every `drip_interval` seconds, as long
  growing-pages  every page of a list holds new items and announces one page more than the last
  absurd-pages  a list that announces 10**12 pages
  gzip-bomb   a gzip body that inflates to `bomb_bytes` of zeros (a few KiB on the wire per MiB)
  deflate-bomb  the same as raw deflate under Content-Encoding: deflate
  br-encoded  Content-Encoding: br, which gsg does not ask for
  many-headers  `many_headers` header lines of a few bytes each
  huge-header  one header line of `huge_header_bytes`
  big-int     the first item's (or the object's) id is an integer of 5,000 digits
  nan-fields  the first item's (or the object's) id is NaN
"""

from __future__ import annotations

import functools
import json
import socket
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from support.fake_gpustack import FakeGPUStack

MODES = ["slow", "drip", "reset", "truncated", "429", "flaky", "redirect", "huge", "wrong-schema", "slow-headers",
         "continue-forever", "growing-pages", "absurd-pages", "gzip-bomb", "deflate-bomb", "br-encoded",
         "many-headers", "huge-header", "big-int", "nan-fields"]
BIG_INT_DIGITS = 5000
REDIRECT_TO = "http://sso-user:sso-pass-5555@login.example/sso?token=redirect-token-7777"


def _wrong(value):
    """Every id becomes text, every name null and every boolean text, however deep."""
    if isinstance(value, dict):
        return {k: ("seven" if k == "id" else None if k == "name" else _wrong(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_wrong(v) for v in value]
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


@functools.lru_cache(maxsize=4)
def bomb(size: int, wbits: int) -> bytes:
    """`size` zeros compressed (gzip for wbits 31, raw deflate for -15): about 1 KiB per MiB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(1024**2)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    return b"".join(parts) + packer.flush()


def _marked(value, marker: str):
    """The answer with a placeholder where the first item's (or the object's) id was."""
    target = value
    if isinstance(value, dict) and isinstance(value.get("items"), list) and value["items"]:
        target = value["items"][0]
    elif isinstance(value, dict) and isinstance(value.get("results"), list) and value["results"]:
        target = value["results"][0]
    if isinstance(target, dict):
        target["id"] = marker
    return value


class HostileGPUStack:
    def __init__(self, mode: str | None = None, *, slow_seconds: float = 5.0, drip_interval: float = 0.05,
                 huge_bytes: int = 4 * 1024**2, times: int | None = None, retry_after: str = "0",
                 only: tuple[str, str] | None = None, bomb_bytes: int = 64 * 1024**2,
                 many_headers: int = 2_000, huge_header_bytes: int = 10 * 1024**2, forever: float = 5.0):
        self.fake = FakeGPUStack.field_notes()
        self.mode, self.slow_seconds, self.drip_interval, self.huge_bytes = mode, slow_seconds, drip_interval, \
            huge_bytes
        self.times = times  # misbehave this many times, then answer normally (None: always)
        self.only = only  # (method, path): misbehave only there
        self.misbehaving = threading.Event()  # set when the first misbehaving request arrives
        self.retry_after = retry_after
        self.bomb_bytes, self.many_headers, self.huge_header_bytes = bomb_bytes, many_headers, huge_header_bytes
        self.forever = forever
        self.requests: list[tuple[str, str]] = []
        self._turn = 0
        self._stopping = threading.Event()
        handler = type("Handler", (_Handler,), {"owner": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that hung up is not news
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def url(self, user_info: str = "") -> str:
        return f"http://{user_info + '@' if user_info else ''}127.0.0.1:{self.port}"

    def __enter__(self) -> HostileGPUStack:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_turn(self) -> int:
        self._turn += 1
        return self._turn


class _Handler(BaseHTTPRequestHandler):
    owner: HostileGPUStack
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args) -> None:  # quiet: stderr is what the tests read
        pass

    def _any(self) -> None:
        owner = self.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        owner.requests.append((self.command, self.path))
        request = httpx.Request(self.command, f"http://gpustack.test{self.path}",
                                headers={k: v for k, v in self.headers.items()}, content=body)
        path = request.url.path
        mode = owner.mode if path.startswith("/v2/") and (path != "/v2/users/me" or owner.mode == "redirect") \
            else None
        if mode and owner.only and (self.command, path) != owner.only:
            mode = None
        if mode:
            owner.misbehaving.set()
        if mode and owner.times is not None:
            mode = mode if owner.times > 0 else None
            owner.times -= 1
        try:
            self._answer(mode, request)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    do_GET = do_POST = do_PUT = do_DELETE = _any

    def _send(self, status: int, body: bytes, headers: dict | None = None, length: int | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def _reset(self) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def _json(self, status: int, value) -> None:
        body = json.dumps(value).encode()
        self._send(status, body, {"Content-Type": "application/json"}, len(body))

    def _answer(self, mode: str | None, request: httpx.Request) -> None:
        owner = self.owner
        if mode == "flaky":
            mode = ["503", "reset", "502"][owner.next_turn() % 3]
        if mode == "reset":
            return self._reset()
        if mode in ("429", "503", "502"):
            status = int(mode)
            headers = {"Retry-After": owner.retry_after} if status == 429 else {}
            body = json.dumps({"code": status, "reason": "Busy", "message": "try later"}).encode()
            return self._send(status, body, {"Content-Type": "application/json", **headers}, len(body))
        if mode == "redirect":
            return self._send(302, b"", {"Location": REDIRECT_TO}, 0)
        if mode == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            piece = b'{"id": 1, "name": "' + b"x" * 1000 + b'"},'
            self.wfile.write(b'{"items": [')
            for _ in range(owner.huge_bytes // len(piece)):
                self.wfile.write(piece)
            self.wfile.write(b'{"id": 2, "name": "y"}], "pagination": {"totalPage": 1}}')
            self.close_connection = True
            return None
        if mode == "slow":
            if owner._stopping.wait(owner.slow_seconds):
                return None
        if mode == "slow-headers":
            self.send_response(200)
            self.flush_headers()
            # each line in time for httpx's per-read timeout, the whole never (for `forever` seconds: a client
            # that does not stop fails its test instead of hanging it)
            for index in range(int(owner.forever / owner.drip_interval)):
                if owner._stopping.wait(owner.drip_interval):
                    return None
                self.wfile.write(f"X-Padding-{index}: {index}\r\n".encode())
                self.wfile.flush()
            return self._reset()
        if mode == "continue-forever":
            for _ in range(int(owner.forever / owner.drip_interval)):
                if owner._stopping.wait(owner.drip_interval):
                    return None
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.wfile.flush()
            return self._reset()
        if mode == "br-encoded":
            return self._send(200, b"\x1b\x03\x00\xf8", {"Content-Type": "application/json",
                                                        "Content-Encoding": "br"}, 4)
        if mode in ("gzip-bomb", "deflate-bomb"):
            body = bomb(owner.bomb_bytes, 31 if mode == "gzip-bomb" else -15)
            return self._send(200, body, {"Content-Type": "application/json",
                                          "Content-Encoding": "gzip" if mode == "gzip-bomb" else "deflate"},
                              len(body))
        if mode == "many-headers":
            return self._send(200, b"{}", {"Content-Type": "application/json",
                                           **{f"h{i}": "1" for i in range(owner.many_headers)}}, 2)
        if mode == "huge-header":
            return self._send(200, b"{}", {"Content-Type": "application/json",
                                           "X-Huge": "a" * owner.huge_header_bytes}, 2)
        if mode == "growing-pages" and request.method == "GET" and "page" in request.url.params:
            page = int(request.url.params["page"])
            first = owner.fake.handle(httpx.Request("GET", request.url.copy_set_param("page", "1"),
                                                         headers=request.headers))
            value = json.loads(first.content)
            value["items"] = [{**item, "id": page * 10**6 + index, "name": f"{item.get('name')}-{page}"}
                              for index, item in enumerate(value["items"])]
            value["pagination"] = {**value.get("pagination", {}), "page": page, "totalPage": page + 1}
            return self._json(200, value)
        response = owner.fake.handle(request)
        content = response.content
        headers = {"Content-Type": response.headers.get("content-type", "application/json")}
        is_json = headers["Content-Type"].startswith("application/json") and content
        if mode == "absurd-pages" and is_json:
            value = json.loads(content)
            if isinstance(value, dict) and "pagination" in value:
                value["pagination"]["totalPage"] = 10**12
            content = json.dumps(value).encode()
        if mode in ("big-int", "nan-fields") and is_json:
            number = "9" * BIG_INT_DIGITS if mode == "big-int" else "NaN"
            content = json.dumps(_marked(json.loads(content), "@@number@@")).replace('"@@number@@"', number).encode()
        if mode == "wrong-schema" and is_json:
            content = json.dumps(_wrong(json.loads(content))).encode()
        if mode == "truncated":
            self._send(response.status_code, content[: len(content) // 2], headers, len(content) + 1000)
            return None
        if mode == "drip":
            self.send_response(response.status_code)
            self.send_header("Content-Type", headers["Content-Type"])
            self.send_header("Content-Length", str(len(content)))
            self.send_header("Connection", "close")
            self.end_headers()
            for index in range(len(content)):
                if owner._stopping.wait(owner.drip_interval):
                    return None
                self.wfile.write(content[index:index + 1])
                self.wfile.flush()
            self.close_connection = True
            return None
        self._send(response.status_code, content, headers, len(content))
        return None
