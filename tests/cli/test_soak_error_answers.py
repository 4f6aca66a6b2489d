"""`gsg soak` against a loopback endpoint that answers every streamed request with HTTP 200 and a JSON error (a
gateway that knows no such model): one line naming the endpoint, exit 1, after round 1."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from support.soak_socket import answering, soak_against

# an OpenAI-style error object answered with 200 and no stream
_ErrorWith200 = answering(b'{"error": {"message": "model m not found", "code": 404}}')


def test_a_200_error_for_every_request_of_round_1_is_one_line_and_exit_1():
    code, _, err, port = soak_against(_ErrorWith200)
    # before: "not streamed (the endpoint ignores stream: true ...)" in a failing verdict after all 5 rounds
    assert code == 1
    assert err.splitlines()[-1] == (
        f"gsg: error: http://127.0.0.1:{port}/v1/chat/completions: an error answered with HTTP 200 "
        "(no stream) for every request of round 1 (check the URL, the key and --model)")


# Byte gauges and a token pool that are finite one by one but not summed (1e308 twice): before, round 1 ended in
# 'gsg: internal error: ValueError: cannot convert float NaN to integer' (exit 3) or OverflowError, and soak.json
# held 'Infinity'.
ABSURD_METRICS = (
    'process_resident_memory_bytes{pid="1"} 1e308\nprocess_resident_memory_bytes{pid="2"} 1e308\n'
    'gpustack:worker_node_gram_used_bytes{gpu="0"} 1e308\ngpustack:worker_node_gram_used_bytes{gpu="1"} 1e308\n'
    'sglang:max_total_num_tokens{model_name="qwen3-8b",dp="0"} 1e308\n'
    'sglang:max_total_num_tokens{model_name="qwen3-8b",dp="1"} 1e308\n'
    'sglang:num_running_reqs{model_name="qwen3-8b"} 2\n')


def test_metrics_whose_sums_overflow_are_not_read_and_the_soak_ends_with_valid_json(gsg, tmp_path):
    import json

    from support.soak_fakes import FakeServer

    server = FakeServer("stable", seed=1).start_in_thread()
    server.engine.metrics = lambda: ABSURD_METRICS
    try:
        result = gsg("soak", "--url", server.url, "--model", "qwen3-8b", "--concurrency", "2", "--prompt-tokens",
                     "16", "--max-tokens", "4", "--rounds", "3", "--round-seconds", "0.5", "--metrics-url",
                     server.url + "/metrics", "-o", "json", "--out", str(tmp_path / "soak"))
    finally:
        server.stop_thread()

    def no_constant(text):
        raise AssertionError(f"{text} in the JSON")

    assert result.code == 0, result.err
    for text in (result.out, (tmp_path / "soak" / "soak.json").read_text()):
        document = json.loads(text, parse_constant=no_constant)
        assert document["kv_pool"] is None
    rows = [line.split() for line in result.err.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 3 and all(row[-2:] == ["-", "-"] for row in rows), result.err  # memory, idle memory


class _Elsewhere(BaseHTTPRequestHandler):
    """Where the redirect points: records what reached it."""
    seen: list[str | None] = []

    def do_POST(self) -> None:  # noqa: N802
        _Elsewhere.seen.append(self.headers.get("authorization"))
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_a_redirect_for_every_request_of_round_1_is_one_line_and_the_key_stays_home(monkeypatch):
    elsewhere = ThreadingHTTPServer(("127.0.0.1", 0), _Elsewhere)

    class Redirecting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(307)
            self.send_header("location", f"http://127.0.0.1:{elsewhere.server_port}/v1/chat/completions")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    monkeypatch.setenv("GSG_API_KEY", "sk-redirected-77")
    code, out, err, port = soak_against(Redirecting, others=(elsewhere,))
    # before: "HTTP 307" for every request of all 5 rounds, a failing verdict
    assert code == 1
    assert err.splitlines()[-1] == (
        f"gsg: error: http://127.0.0.1:{port}/v1/chat/completions: HTTP 307: a redirect, not followed "
        "(the API key goes to the URL given alone: point the URL where it leads) for every request of round 1 "
        "(check the URL, the key and --model)")
    assert _Elsewhere.seen == []
    assert "sk-redirected-77" not in out + err
