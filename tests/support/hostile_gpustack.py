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
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from support.fake_gpustack import FakeGPUStack

MODES = ["slow", "drip", "reset", "truncated", "429", "flaky", "redirect", "huge", "wrong-schema"]
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


class HostileGPUStack:
    def __init__(self, mode: str | None = None, *, slow_seconds: float = 5.0, drip_interval: float = 0.05,
                 huge_bytes: int = 4 * 1024**2, times: int | None = None, retry_after: str = "0",
                 only: tuple[str, str] | None = None):
        self.fake = FakeGPUStack.field_notes()
        self.mode, self.slow_seconds, self.drip_interval, self.huge_bytes = mode, slow_seconds, drip_interval, \
            huge_bytes
        self.times = times  # misbehave this many times, then answer normally (None: always)
        self.only = only  # (method, path): misbehave only there
        self.misbehaving = threading.Event()  # set when the first misbehaving request arrives
        self.retry_after = retry_after
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
        response = owner.fake.handle(request)
        content = response.content
        headers = {"Content-Type": response.headers.get("content-type", "application/json")}
        if mode == "wrong-schema" and headers["Content-Type"].startswith("application/json") and content:
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
