"""Round 27: a connection that fails in its TLS handshake, or an answer in another protocol than HTTP/1.1 (an
HTTP/2-only server), says so. Before: every TLS failure (an untrusted certificate, https:// to a plain-http port,
a server offering h2 alone) was 'connection refused', and HTTP/2 frames answered were 'stream broken' (not fatal:
every round ran on them)."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess

import httpx
import pytest

from gpustack_guard.adapters.soak.load import (
    FATAL_REASONS,
    NOT_HTTP1,
    REFUSED,
    TLS_FAILED,
    TLS_NO_HTTP1,
    TLS_UNTRUSTED,
    Target,
    connect_failure,
    make_client,
    stream_one,
)
from gpustack_guard.adapters.soak.scrape import Scraper
from gpustack_guard.core.soak.prompts import make_prompt

# an HTTP/2 server's SETTINGS frame and a GOAWAY (PROTOCOL_ERROR): what a prior-knowledge h2c server sends to a
# request line it cannot read
H2_FRAMES = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00" + b"\x00\x00\x08\x07\x00\x00\x00\x00\x00" + bytes(7) + b"\x01"


async def _answering(payload: bytes, tls: ssl.SSLContext | None = None):
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read(65536)
            writer.write(payload)
            await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()
    return await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)


def _stream_at(url: str, payload: bytes, tls: ssl.SSLContext | None = None, verify: bool | str = True):
    async def go():
        server = await _answering(payload, tls)
        port = server.sockets[0].getsockname()[1]
        try:
            async with make_client(1, 5.0, verify=verify) as client:
                return await stream_one(client, Target("ours", url.format(port=port), "m"),
                                        make_prompt(0, 0, 40, 6), 0.0, 5.0)
        finally:
            server.close()
    result = asyncio.run(go())
    return result.ok, result.error


def test_http2_frames_answered_to_a_request_are_no_http1():
    assert _stream_at("http://127.0.0.1:{port}/v1/chat/completions", H2_FRAMES) == (False, NOT_HTTP1)


@pytest.mark.parametrize("payload", [
    b"",  # a close before any byte (after the one resend)
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 100\r\n\r\ndata: {",  # cut short
])
def test_a_close_before_or_inside_an_answer_is_still_a_broken_stream(payload):
    """The neighbours of HTTP/2 frames: a connection closed early is no other protocol."""
    assert _stream_at("http://127.0.0.1:{port}/v1/chat/completions", payload) == (False, "stream broken")


def test_https_to_a_plain_http_port_is_a_tls_failure_not_a_refusal():
    answer = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n"
    assert _stream_at("https://127.0.0.1:{port}/v1/chat/completions", answer) == (False, TLS_FAILED)


def _self_signed(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    return context, str(cert)


def test_an_untrusted_certificate_says_so_and_a_trusted_one_is_served(tmp_path):
    context, cert = _self_signed(tmp_path)
    url = "https://127.0.0.1:{port}/v1/chat/completions"
    assert _stream_at(url, b"", context) == (False, TLS_UNTRUSTED)
    answer = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
              b'data: {"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    assert _stream_at(url, answer, context, verify=cert) == (True, None)


def _connect_error(cause: BaseException) -> httpx.ConnectError:
    """As httpx raises it: from httpcore's ConnectError, from the ssl module's error."""
    try:
        try:
            raise cause
        except BaseException as inner:
            raise httpx.ConnectError(str(inner)) from inner
    except httpx.ConnectError as exc:
        return exc


@pytest.mark.parametrize("cause, reason", [
    (ConnectionRefusedError(111, "Connection refused"), REFUSED),
    (OSError(113, "No route to host"), REFUSED),
    (ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), TLS_UNTRUSTED),
    (ssl.SSLError(1, "[SSL: TLSV1_ALERT_NO_APPLICATION_PROTOCOL] tlsv1 alert no application protocol"), TLS_NO_HTTP1),
    (ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number"), TLS_FAILED),
])
def test_a_connect_error_is_named_by_its_cause(cause, reason):
    assert connect_failure(_connect_error(cause)) == reason
    assert reason == REFUSED or reason in FATAL_REASONS


def test_a_metrics_url_failing_its_tls_handshake_says_so():
    def handler(request: httpx.Request) -> httpx.Response:
        raise _connect_error(ssl.SSLCertVerificationError(1, "certificate verify failed"))

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await Scraper(client, ["https://e/metrics"], None, None, 0.0).scrape_once()
    assert asyncio.run(go()).errors == (f"https://e/metrics: {TLS_UNTRUSTED}",)  # before: 'ConnectError'
