"""A real loopback HTTP server in front of `gsg soak`, for answers an in-process fake cannot give (status lines,
framing), and a byte stream cut where a test says: the pieces the soak tests share."""

from __future__ import annotations

import contextlib
import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from gpustack_guard.cli import main


class ByteChunks(httpx.AsyncByteStream):
    """A response body delivered in exactly these reads (a CR at a read's end, a UTF-8 character cut in two)."""

    def __init__(self, pieces: list[bytes]):
        self.pieces = pieces

    async def __aiter__(self):
        for piece in self.pieces:
            yield piece


def answering(body: bytes, content_type: str = "application/json",
              status: int = 200) -> type[BaseHTTPRequestHandler]:
    """A handler that answers every POST with this status, content type and body (framed by its length)."""

    class _Answer(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    return _Answer


def soak_against(handler: type[BaseHTTPRequestHandler], *, path: str = "",
                 others: tuple[ThreadingHTTPServer, ...] = ()) -> tuple[int, str, str, int]:
    """`gsg soak` of five 0.5 s rounds at concurrency 1 against a loopback server of this handler (the URL ends in
    path): exit code, stdout, stderr and the server's port. Servers in others are served and closed with it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    servers = (server, *others)
    for each in servers:
        threading.Thread(target=each.serve_forever, daemon=True).start()
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["soak", "--url", f"http://127.0.0.1:{server.server_port}{path}", "--model", "m",
                         "--rounds", "5", "--round-seconds", "0.5", "--concurrency", "1"])
    finally:
        for each in servers:
            each.shutdown()
            each.server_close()
    return code, out.getvalue(), err.getvalue(), server.server_port
