"""`gsg soak` against a loopback endpoint that answers the chat request with another API's stream (a gateway routing
it to legacy completions or to the Responses API): one line naming the endpoint and the shape, exit 1, after round 1
(before: 'no tokens' for every request of every round, and a failing verdict at the end)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from support.soak_socket import answering, soak_against

from gpustack_guard.adapters.soak.load import LEGACY_COMPLETIONS, RESPONSES_API
from gpustack_guard.cli import main

_BODIES = {
    LEGACY_COMPLETIONS: b"".join(b"data: " + json.dumps({"choices": [{"index": 0, "text": t, "finish_reason": f}]})
                                 .encode() + b"\n\n" for t, f in (("a", None), ("b", "stop"))) + b"data: [DONE]\n\n",
    RESPONSES_API: b"".join(b"event: %s\ndata: %s\n\n" % (t.encode(), json.dumps({"type": t, "delta": "a"}).encode())
                            for t in ("response.created", "response.output_text.delta", "response.completed")),
}


@pytest.mark.parametrize("reason", [LEGACY_COMPLETIONS, RESPONSES_API])
def test_another_apis_stream_for_every_request_of_round_1_is_one_line_and_exit_1(reason):
    code, _, err, port = soak_against(answering(_BODIES[reason], "text/event-stream"), path="/v1")
    assert code == 1
    assert err.splitlines()[-1] == (
        f"gsg: error: http://127.0.0.1:{port}/v1/chat/completions: {reason} for every request of "
        "round 1 (check the URL, the key and --model)")
    assert "round 2/5" not in err


@pytest.mark.parametrize("flag, url, api", [
    ("--url", "http://127.0.0.1:9/v1/completions", "legacy completions"),
    ("--url", "http://127.0.0.1:9/v1/completions/?x=1", "legacy completions"),
    ("--url", "http://127.0.0.1:9/V1/Responses", "the Responses API"),
    ("--url", "http://127.0.0.1:9/v1/messages", "Anthropic's messages API"),
    ("--url", "http://127.0.0.1:9/v1/embeddings", "embeddings"),
    ("--reference-url", "http://127.0.0.1:9/v1/responses", "the Responses API"),
])
def test_a_url_naming_another_apis_endpoint_is_refused_before_any_request(flag, url, api):
    """Before: appended to (.../v1/completions/v1/chat/completions), every request of round 1 was an HTTP 404."""
    ours = url if flag == "--url" else "http://127.0.0.1:9"
    args = ["soak", "--url", ours, "--model", "m", "--rounds", "1", "--round-seconds", "0.5"]
    if flag == "--reference-url":
        args += [flag, url]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    assert code == 1 and err.getvalue().splitlines()[-1] == (
        f"gsg: error: {flag} names the endpoint of {api}: gsg soaks chat completions (give the server's root, its "
        "/v1 or its /v1/chat/completions)")


REFUSAL = b'{"error": {"message": "stream_options: extra inputs are not permitted"}}'


@pytest.mark.parametrize("status", [400, 405, 422])
def test_a_request_refused_for_every_request_of_round_1_is_one_line_and_exit_1(status):
    """A server refusing the request itself (stream_options on an old engine, a URL taking no POST): before, 'HTTP
    400' for every request of every round and a failing verdict at the end."""
    code, out, err, port = soak_against(answering(REFUSAL, status=status))
    assert code == 1
    assert err.splitlines()[-1] == (
        f"gsg: error: http://127.0.0.1:{port}/v1/chat/completions: HTTP {status} for every request of "
        "round 1 (check the URL, the key and --model)")
    assert "extra inputs" not in err + out  # the server's text is not repeated
