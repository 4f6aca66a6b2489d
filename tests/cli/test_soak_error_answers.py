"""`gsg soak` against a loopback endpoint that answers every streamed request with HTTP 200 and a JSON error (a
gateway that knows no such model): one line naming the endpoint, exit 1, after round 1."""

from __future__ import annotations

import contextlib
import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from gpustack_guard.cli import main


class _ErrorWith200(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length", "0")))
        body = b'{"error": {"message": "model m not found", "code": 404}}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_200_error_for_every_request_of_round_1_is_one_line_and_exit_1():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ErrorWith200)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["soak", "--url", f"http://127.0.0.1:{server.server_port}", "--model", "m", "--rounds", "5",
                         "--round-seconds", "0.5", "--concurrency", "1"])
    finally:
        server.shutdown()
        server.server_close()
    # before: "not streamed (the endpoint ignores stream: true ...)" in a failing verdict after all 5 rounds
    assert code == 1
    assert err.getvalue().splitlines()[-1] == (
        f"gsg: error: http://127.0.0.1:{server.server_port}/v1/chat/completions: an error answered with HTTP 200 "
        "(no stream) for every request of round 1 (check the URL, the key and --model)")
