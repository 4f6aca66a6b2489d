"""Issue 31, secrets at the CLI: a proxy that echoes what it received (the Authorization header, the request body)
in its error, in every shape an echo takes, never makes gsg print the API key, a URL password or a secret env
value; URLs with passwords and tokens are masked in soak's output and files; bad URLs are usage errors."""

from __future__ import annotations

import base64
import contextlib
import html
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import httpx
import pytest
import yaml
from support import REPO
from support.fake_gpustack import FakeGPUStack
from support.soak_fakes import FakeServer

import gpustack_guard.wiring as wiring
from gpustack_guard.cli import main
from gpustack_guard.core.secrets import MASK, PREFIX_CHARS

KEY = FakeGPUStack.api_key  # "gsg-test-key-0123456789"
HF_TOKEN = "hf_test_secret_token_value"
DB_PASSWORD = 'literal p@ss/w"rd-42 <&>'  # a literal secret value in a spec, with characters encodings change
URL_PASSWORD = "url-password-31337"


def _cut(text: str) -> str:
    """An echo that truncates at a length limit, cutting the first secret after PREFIX_CHARS + 3 characters."""
    start = min(i for i in (text.find(s) for s in (KEY, HF_TOKEN, DB_PASSWORD)) if i != -1)
    return text[:start + PREFIX_CHARS + 3]


# How a proxy writes back what it received (one line: the client shows an error message's first line).
SHAPES = {
    "as-is": lambda text: text,
    "json-escaped": lambda text: json.dumps(text),
    "url-encoded": lambda text: quote(text, safe=""),
    "html-escaped": lambda text: html.escape(text),
    "base64": lambda text: base64.b64encode(text.encode()).decode(),
    "basic-auth": lambda text: "Basic " + base64.b64encode(f"gsg:{KEY}".encode()).decode(),
    "truncated": _cut,
}


def _received(request: httpx.Request) -> str:
    """What the proxy echoes: the Authorization header and, for a write, the env it carried."""
    text = f"Authorization: {request.headers.get('authorization', '')}"
    if request.content:
        body = json.loads(request.content)
        text = f"env {json.dumps(body.get('env'))} " + text
    return text


def _takes_the_lock(request: httpx.Request) -> bool:
    """apply's lock is a model create of its own, with no env: the deployments' writes are the ones echoed."""
    return bool(request.content) and str(json.loads(request.content).get("name", "")).startswith("gsg-lock")


class EchoingProxy:
    """In front of the fake GPUStack: the chosen requests get a 400 whose message echoes what they carried."""

    def __init__(self, fake: FakeGPUStack, shape, writes_only: bool):
        self.fake, self.shape, self.writes_only, self.echoed = fake, shape, writes_only, []

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        chosen = request.method in ("POST", "PUT") and path.startswith("/v2/models") and \
            not _takes_the_lock(request) if self.writes_only else path.startswith("/v2/") and path != "/v2/users/me"
        if not chosen:
            return self.fake.handle(request)
        message = self.shape(_received(request))
        self.echoed.append(message)
        return httpx.Response(400, json={"code": 400, "reason": "BadRequest", "message": f"proxy: {message}"})


@pytest.fixture
def spec_tree(tmp_path, monkeypatch):
    """One spec with a literal secret env value and one from ${HF_TOKEN}; the server URL has a password."""
    folder = tmp_path / "specs"
    folder.mkdir()
    spec = yaml.safe_load((REPO / "specs" / "llama-8b.yaml").read_text())
    spec["env"] = {"DB_PASSWORD": DB_PASSWORD, "HF_TOKEN": "${HF_TOKEN}"}
    (folder / "llama-8b.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    monkeypatch.setenv("GSG_URL", f"http://admin:{URL_PASSWORD}@gpustack.test")
    monkeypatch.setenv("GSG_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    return folder


COMMANDS = {
    "snapshot": (lambda tmp: ["snapshot", "--out", str(tmp / "fleet.yaml")], False),
    "plan": (lambda tmp: ["plan", "specs"], False),
    "drift": (lambda tmp: ["drift", "specs"], False),
    "export": (lambda tmp: ["export", "--out", str(tmp / "exported")], False),
    "apply": (lambda tmp: ["apply", "specs", "--yes"], True),
}


def _decoded_base64_runs(text: str) -> str:
    decoded = []
    for run in re.findall(r"[A-Za-z0-9+/]{8,}", text):
        for start in range(4):  # a run may start mid-group
            piece = run[start:]
            piece = piece[:len(piece) // 4 * 4]
            decoded.append(base64.b64decode(piece).decode("latin-1"))
    return "\n".join(decoded)


def _leaked(text: str) -> list[str]:
    """Any secret, or PREFIX_CHARS of one, as is, JSON-escaped, URL-encoded, HTML-escaped or inside base64
    (computed here, not by gsg's code)."""
    found = []
    decoded = _decoded_base64_runs(text)
    for secret in (KEY, HF_TOKEN, DB_PASSWORD, URL_PASSWORD):
        shapes = {secret, json.dumps(secret)[1:-1], quote(secret, safe=""), html.escape(secret)}
        found += [shape for shape in shapes if shape[:PREFIX_CHARS] in text]
        if secret[:PREFIX_CHARS] in decoded:
            found.append(f"base64 of {secret}")
    return found


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("command", COMMANDS)
def test_an_echoing_proxy_never_makes_gsg_print_a_secret(gsg, spec_tree, tmp_path, monkeypatch, command, shape):
    fake = FakeGPUStack.field_notes()
    args, writes_only = COMMANDS[command]
    proxy = EchoingProxy(fake, SHAPES[shape], writes_only)
    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(proxy.handle))
    result = gsg(*args(tmp_path))
    assert proxy.echoed, result.err  # the proxy did echo: what it echoed holds a secret...
    assert _leaked("".join(proxy.echoed)), proxy.echoed
    assert result.code == 1, result.out + result.err
    assert "proxy: " in result.out + result.err and "Traceback" not in result.err
    assert MASK in result.out + result.err  # ...and gsg showed it masked
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".yaml", ".json")
                      and "specs" not in p.parts)
    assert _leaked(result.out + result.err + written) == []


def test_the_echoed_line_keeps_what_is_not_secret(gsg, spec_tree, tmp_path, monkeypatch):
    fake = FakeGPUStack.field_notes()
    proxy = EchoingProxy(fake, SHAPES["json-escaped"], writes_only=True)
    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(proxy.handle))
    result = gsg("apply", "specs", "--yes")
    assert result.code == 1
    line = next(line for line in (result.out + result.err).splitlines() if "proxy: " in line)
    assert line.endswith('HTTP 400 BadRequest: proxy: "env {\\"DB_PASSWORD\\": \\"' + MASK + '\\", \\"HF_TOKEN\\": '
                         '\\"' + MASK + '\\"} Authorization: Bearer ' + MASK + '"'), line


# ---------------------------------------------------------------- soak: URLs with secrets, and echoing endpoints

class _EchoingMetrics(BaseHTTPRequestHandler):
    """A /metrics that answers what it received (its request line and Authorization) where a number should be."""

    seen: list[str] = []

    def do_GET(self):  # noqa: N802 - the http.server name
        self.seen.append(self.path)
        echoed = f"{self.path} {self.headers.get('Authorization', '')}".replace(" ", "_")
        body = f"vllm:num_requests_running {echoed}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def echoing_metrics():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoingMetrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def engine():
    server = FakeServer("stable").start_in_thread()
    yield server
    server.stop_thread()


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


SOAK_TOKEN = "soak-query-token-24680"
METRICS_TOKEN = "metrics-token-13579"


def test_soak_masks_url_passwords_and_tokens_in_output_json_and_html(engine, echoing_metrics, tmp_path,
                                                                     monkeypatch):
    monkeypatch.delenv("GSG_API_KEY", raising=False)
    url = f"http://admin:{URL_PASSWORD}@127.0.0.1:{engine.port}/v1"
    reference = f"http://127.0.0.1:{engine.port}/v1#access_token={SOAK_TOKEN}"
    metrics = f"{echoing_metrics}/metrics?token={METRICS_TOKEN}&format=text"
    code, out, err = run_cli("soak", "--url", url, "--model", "qwen3-8b", "--rounds", "1", "--round-seconds", "0.5",
                             "--concurrency", "1", "--metrics-url", metrics, "--reference-url", reference,
                             "--out", str(tmp_path / "soak"), "-o", "json", "--fail-on", "never")
    assert code == 0, err
    document = json.loads(out)
    assert document["target"]["url"] == f"http://127.0.0.1:{engine.port}/v1"
    assert document["reference"]["url"] == f"http://127.0.0.1:{engine.port}/v1#access_token={MASK}"
    assert document["settings"]["metrics_urls"] == [f"{echoing_metrics}/metrics?token={MASK}&format=text"]
    # the metrics endpoint got the token and answered it back where numbers go: refused, counted, not shown
    assert any(METRICS_TOKEN in path for path in _EchoingMetrics.seen)
    assert document["rounds"][0]["scrape_errors"] >= 1
    assert err.startswith(f"gsg soak qwen3-8b at http://127.0.0.1:{engine.port}/v1\n")
    # the engine got the URL's user info as Basic auth: the password reached it, and goes nowhere else
    assert engine.seen_auth == {"Basic " + base64.b64encode(f"admin:{URL_PASSWORD}".encode()).decode()}
    files = (tmp_path / "soak" / "soak.json").read_text() + (tmp_path / "soak" / "report.html").read_text()
    everything = out + err + files
    for secret in (URL_PASSWORD, SOAK_TOKEN, METRICS_TOKEN, "admin:"):
        assert secret not in everything


def test_soak_names_the_masked_endpoint_when_every_request_fails(engine):
    url = f"http://127.0.0.1:{engine.port}/v1/chat/completions?api_key={SOAK_TOKEN}"
    code, out, err = run_cli("soak", "--url", url, "--model", "m", "--rounds", "2", "--round-seconds", "0.5",
                             "--concurrency", "1")
    assert code == 1
    assert err.splitlines()[-1] == (f"gsg: error: http://127.0.0.1:{engine.port}/v1/chat/completions?api_key={MASK}: "
                                    "HTTP 404 for every request of round 1 (check the URL, the key and --model)")
    assert SOAK_TOKEN not in out + err


@pytest.mark.parametrize("option", ["--url", "--metrics-url", "--reference-url", "--reference-metrics-url"])
@pytest.mark.parametrize("url,problem", [
    ("http://admin:pw-77@h:99999/?token=t-77", f"'http://h:99999/?token={MASK}' has the port '99999': a port is a "
                                               "number from 1 to 65535"),
    ("gpustack.local:8000", "'gpustack.local:8000' has no scheme: write http://HOST[:PORT] or https://HOST[:PORT]"),
    ("ftp://h", "'ftp://h' has the scheme 'ftp': gsg speaks http:// and https:// only"),
    ("http://h/a b", "'http://h/a b' has a space or a control character (percent-encode it, %20)"),
    ("http://h/\x1b]0;owned\x07", "'http://h/\\x1b]0;owned\\x07' has a space or a control character "
                                  "(percent-encode it, %20)"),
    ("http://:8000", "'http://:8000' has no host"),
    ("http://[::1/", "'http://[::1/' has an IPv6 host that is not valid (write it in brackets: http://[::1]:8080)"),
])
def test_soak_refuses_a_bad_url_as_a_usage_error_naming_the_option(option, url, problem):
    args = {"--url": "http://127.0.0.1:9", "--model": "m", "--round-seconds": "0.5"}
    if option == "--reference-metrics-url":
        args["--reference-url"] = "http://127.0.0.1:9"
    args[option] = url
    code, out, err = run_cli("soak", *[x for kv in args.items() for x in kv])
    assert (code, out, err) == (1, "", f"gsg: usage error: Invalid value for '{option}': {problem} "
                                       "(see 'gsg soak --help')\n")


@pytest.mark.parametrize("command", ["snapshot", "plan", "drift", "export", "apply", "validate"])
def test_a_bad_server_url_is_a_usage_error_from_the_flag_or_gsg_url(gsg, tmp_path, monkeypatch, command):
    args = {"snapshot": ["--out", "f.yaml"], "plan": ["specs"], "drift": ["specs"], "export": ["--out", "e"],
            "apply": ["specs", "--yes"], "validate": ["specs", "--server-check"]}[command]
    monkeypatch.chdir(tmp_path)
    flag = gsg(command, *args, "--server", "http://admin:pw-88@gpustack.test:0")
    assert (flag.code, flag.out, flag.err) == (1, "", "gsg: usage error: Invalid value for '--server': "
                                               "'http://gpustack.test:0' has the port '0': a port is a number from "
                                               f"1 to 65535 (see 'gsg {command} --help')\n")
    monkeypatch.setenv("GSG_URL", "gpustack.test")
    env = gsg(command, *args)
    assert (env.code, env.err) == (1, "gsg: usage error: Invalid value for GSG_URL: 'gpustack.test' has no scheme: "
                                      f"write http://HOST[:PORT] or https://HOST[:PORT] (see 'gsg {command} --help')\n")


def test_a_bad_server_url_in_a_contexts_file_names_its_line(gsg, tmp_path, monkeypatch):
    config = tmp_path / "config.yaml"
    config.write_text("contexts:\n  prod:\n    api-key-env: K\n    server: http://u:pw-99@prod.test:http/\n")
    monkeypatch.setenv("GSG_CONFIG", str(config))
    result = gsg("snapshot", "--out", str(tmp_path / "f.yaml"), "--context", "prod")
    assert (result.code, result.err) == (1, f"gsg: error: {config}:4: context 'prod': server 'http://prod.test:http/' "
                                            "has the port 'http': a port is a number from 1 to 65535\n")
    assert "pw-99" not in result.out + result.err


def test_drift_over_all_contexts_shows_each_server_masked(gsg, tmp_path, monkeypatch):
    fake = FakeGPUStack.field_notes()
    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(fake.handle))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"contexts": {"prod": {
        "server": "http://admin:pw-drift-55@gpustack.test/?token=tok-drift-55", "api-key-env": "K"}}}))
    monkeypatch.setenv("GSG_CONFIG", str(config))
    monkeypatch.setenv("K", fake.api_key)
    (tmp_path / "specs").mkdir()
    monkeypatch.chdir(tmp_path)
    text = gsg("drift", "specs", "--all-contexts")
    as_json = gsg("drift", "specs", "--all-contexts", "-o", "json")
    assert f"== context prod (http://gpustack.test/?token={MASK}) ==" in text.out, text.out + text.err
    assert json.loads(as_json.out)["contexts"][0]["server"] == f"http://gpustack.test/?token={MASK}"
    assert "pw-drift-55" not in text.out + text.err + as_json.out + as_json.err
    assert "tok-drift-55" not in text.out + text.err + as_json.out + as_json.err
