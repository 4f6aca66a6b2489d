"""A proxy that echoes what it received in its error message (the Authorization header, the request body with a
secret env value) never makes gsg print a secret, in any shape the echo gives it (issue 31): one test per shape."""

import base64
import json
from urllib.parse import quote

import httpx
import pytest

KEY = "gsg-test-key-0123456789"
HF = "hf_test_secret_token_value"
SHAPES = {
    "header as is": lambda s: f"Authorization: Bearer {s}",
    "json-escaped": lambda s: json.dumps({"headers": {"authorization": f"Bearer {s}"}}),
    "url-encoded": lambda s: "auth=" + quote(f"Bearer {s}", safe=""),
    "base64": lambda s: "credentials " + base64.b64encode(s.encode()).decode(),
    "cut short": lambda s: f"bad token {s[:12]}... (truncated)",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("secret", [KEY, HF], ids=["api-key", "env-value"])
def test_an_echoing_proxy_never_makes_gsg_print_a_secret(gsg, fake, specs, monkeypatch, shape, secret):
    import gpustack_guard.wiring as connect

    def echo(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v2/models" and request.method == "POST":
            return httpx.Response(500, json={"message": "upstream said: " + SHAPES[shape](secret)})
        return fake.handle(request)

    monkeypatch.setattr(connect, "transport_factory", lambda: httpx.MockTransport(echo))
    monkeypatch.setenv("HF_TOKEN", HF)
    result = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert result.code == 1 and "upstream said" in result.err, result.err
    printed = result.out + result.err
    assert secret not in printed and SHAPES[shape](secret) not in printed and "********" in printed
