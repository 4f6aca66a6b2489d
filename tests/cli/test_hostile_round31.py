"""Round 31 of hostile input, each the case gsg mishandled before, with its neighbours: a URL whose password (or
user name) holds an unencoded '/', '?' or '#' (`https://admin:p#ss@gpustack.test/`). The character ends the
authority early, so the user info was read as a host and a port, or left in the path, query or fragment: mask_url
showed the URL whole, a refused one's message echoed the password's start as "the port 'p...'", and one whose
password starts with digits (`admin:1234#5678@h`) passed the URL check and was used, against the host 'admin'."""

from __future__ import annotations

import contextlib
import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import respx
from support.soak_socket import soak_against

from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient
from gpustack_guard.cli import main
from gpustack_guard.core.secrets import MASK, mask_url, misplaced_user_info, scrub, url_secrets
from gpustack_guard.core.urls import bad_url, url_problem

MISPLACED = "has user info after a '/', '?' or '#' (a password or user name holding one): percent-encode it there " \
            "(%2F, %3F, %23)"


@pytest.mark.parametrize("url, shown, secrets", [
    ("https://#:pw-55@gpu`tack.test/", "https://gpu`tack.test/", ["pw-55"]),  # the fuzzer's: '#' as the user
    ("https://admin:p#ss-word@gpustack.test/", "https://gpustack.test/", ["p#ss-word", "ss-word"]),
    ("https://admin:p?ss-word@gpustack.test/v1", "https://gpustack.test/v1", ["p?ss-word", "ss-word"]),
    ("https://admin:s3cr3t/pw@gpustack.test:8080", "https://gpustack.test:8080", ["s3cr3t/pw", "s3cr3t"]),
    ("https://admin:1234#5678@gpustack.test/", "https://gpustack.test/", ["1234#5678", "1234", "5678"]),
    ("https://admin:1234?5678@gpustack.test/", "https://gpustack.test/", ["1234?5678", "1234", "5678"]),
    ("https://admin:p#a@b@gpustack.test/x", "https://gpustack.test/x", ["p#a@b"]),  # '@' in it: the last one ends it
    ("https://admin:p#ss-word@gpustack.test/v1?token=t0k-91", f"https://gpustack.test/v1?token={MASK}",
     ["p#ss-word", "ss-word", "t0k-91"]),  # the rest masked as in any URL
    ("admin:p#ss-word@gpustack.test", "gpustack.test", ["p#ss-word", "ss-word"]),  # no scheme
])
def test_user_info_typed_with_a_delimiter_in_its_password_is_masked(url, shown, secrets):
    assert misplaced_user_info(url)
    assert mask_url(url) == shown
    assert url_secrets(url) == secrets


@pytest.mark.parametrize("url", [
    "http://gpustack.test/models/x@v1",  # '@' in the path of a well-formed authority is a path
    "http://gpustack.test:8080/v1?user=a@b.example",  # and in a query value, after '='
    "http://a:b@c@gpustack.test/",  # user info in the authority: the last '@' ends it, as before
    "http://admin:pw@gpustack.test/x#y",  # a fragment without '@'
    # the limit, said: digits before a '/' read as a port, and the rest as a path ('@' in a path stays shown)
    "https://admin:1234/5678@gpustack.test/",
])
def test_near_misses_are_read_as_before(url):
    assert not misplaced_user_info(url)
    assert mask_url(url) == (url if "pw@" not in url and "b@c@" not in url else url.split("//")[0] + "//" +
                             url.rpartition("@")[2])


@pytest.mark.parametrize("url", ["https://#:pw-55@gpustack.test/", "https://admin:p#ss-word@gpustack.test/",
                                 "https://admin:s3cr3t/pw@gpustack.test:8080", "https://admin:1234#5678@gpustack.test/",
                                 "https://admin:1234?5678@gpustack.test/"])
def test_such_a_url_is_refused_with_what_to_do_and_never_echoes_the_password(url):
    """Before: 'has no host', "has the port 'p'" / "'s3cr3t'" (the password's start as the port), or nothing at all
    (digits read as a port: gsg connected to the host 'admin')."""
    assert url_problem(url) == MISPLACED
    shown = bad_url(url)
    assert shown == f"'{mask_url(url)}' {MISPLACED}"
    assert not any(secret in shown for secret in url_secrets(url))


@pytest.mark.parametrize("url", ["http://gpustack.test/models/x@v1", "http://gpustack.test:8080/v1?user=a@b.example",
                                 "http://u:p@h:1/"])
def test_urls_with_an_at_sign_where_it_belongs_stay_usable(url):
    assert url_problem(url) is None


def test_the_pieces_of_such_a_password_are_scrubbed_from_echoes():
    """A client that split the URL at the '#' echoes the pieces apart (its host 'admin', its port '1234'); a piece
    under four characters is masked nowhere, as every short secret (SHORTEST_SECRET)."""
    secrets = url_secrets("https://admin:hunter#2024x@gpustack.test/")
    assert scrub("invalid port 'hunter' in admin:hunter; fragment 2024x@gpustack.test", secrets) == \
        f"invalid port '{MASK}' in admin:{MASK}; fragment {MASK}@gpustack.test"
    assert url_secrets("https://admin:ab#cd@gpustack.test/") == ["ab#cd"]


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_a_context_server_whose_password_holds_a_hash_never_prints_it(gsg, tmp_path, monkeypatch):
    """The fuzzer's case (benchmarks/fuzz.py, seed 3131, context-drift): the error line showed the URL whole."""
    config = tmp_path / "config.yaml"
    config.write_text("contexts:\n  b:\n    server: https://#:pw-55@gpustack.test/\n"
                      "  c:\n    server: https://admin:h#unter2-xyz@gpustack.test/\n")
    monkeypatch.setenv("GSG_CONFIG", str(config))
    result = gsg("config", "view", cwd=tmp_path)
    assert result.code == 1 and "pw-55" not in result.out + result.err and "unter2" not in result.out + result.err
    assert result.err == f"gsg: error: config.yaml:3: context 'b': server 'https://gpustack.test/' {MISPLACED}\n"


@pytest.mark.parametrize("option", ["--url", "--metrics-url", "--reference-url"])
def test_soak_refuses_such_a_url_before_any_request(option):
    args = {"--url": "http://127.0.0.1:9", "--model": "m", "--round-seconds": "0.5"}
    args[option] = "http://admin:1234#5678-pw@127.0.0.1:9/v1"
    code, out, err = _run("soak", *[x for kv in args.items() for x in kv])
    assert (code, out, err) == (1, "", f"gsg: usage error: Invalid value for '{option}': 'http://127.0.0.1:9/v1' "
                                       f"{MISPLACED} (see 'gsg soak --help')\n")


def test_a_server_url_with_digits_before_the_hash_is_refused_not_sent_to_the_host_admin(gsg, tmp_path, monkeypatch,
                                                                                          fake):
    """Before: `--server https://admin:1234#5678@gpustack.test` passed (host 'admin', port 1234): every request went
    there, and the fragment with the password's rest rode along in every message naming the server."""
    monkeypatch.chdir(tmp_path)
    flag = gsg("drift", "specs", "--server", "https://admin:1234#5678@gpustack.test")
    assert (flag.code, flag.out, flag.err) == (1, "", "gsg: usage error: Invalid value for '--server': "
                                               f"'https://gpustack.test' {MISPLACED} (see 'gsg drift --help')\n")
    assert fake.log == []  # nothing was asked of any server
    monkeypatch.setenv("GSG_URL", "https://admin:12#34-pw@gpustack.test")
    env = gsg("drift", "specs")
    assert (env.code, env.out, env.err) == (1, "", "gsg: usage error: Invalid value for GSG_URL: "
                                            f"'https://gpustack.test' {MISPLACED} (see 'gsg drift --help')\n")


@respx.mock
@pytest.mark.parametrize("location", ["https://bob:4242#ter22@sso.example/login?next=/v2",
                                      "https://bob:4242?ter22@sso.example/login"])
def test_a_redirect_to_a_url_with_such_a_password_names_where_without_it(location):
    """A Location httpx reads (digits before the '#': host 'bob', port 4242) is masked by the same reading as any
    URL: before, 'https://bob:4242' was named as where the redirect pointed."""
    respx.get("http://gpustack.test/v2/users/me").mock(return_value=httpx.Response(302, headers={"Location": location}))
    with pytest.raises(ApiError) as exc:
        GPUStackClient("http://gpustack.test", "k", sleep=lambda _s: None).me()
    text = str(exc.value)
    assert text.startswith("GET /v2/users/me: HTTP 302 redirect to https://sso.example/login: not an API answer")
    assert "bob" not in text and "4242" not in text and "ter22" not in text


@respx.mock
@pytest.mark.parametrize("location", ["https://bob:hunter2#x@sso.example/login", "https://bob:hunter2/x@sso.example/",
                                      "http://sso.example:hunter2/", "http://hunter2\x00/"])
def test_a_redirect_whose_location_is_no_url_is_one_line_without_it_and_not_retried(location):
    """httpx refuses such a Location while building the redirect (followed or not) and quotes it: "Invalid port:
    'hunter2'". Before, that was "the connection broke before the answer was complete: ... Invalid port:
    'hunter2'", after three retries of a server that had answered."""
    route = respx.get("http://gpustack.test/v2/users/me").mock(
        return_value=httpx.Response(302, headers={"Location": location}))
    with pytest.raises(ApiError) as exc:
        GPUStackClient("http://gpustack.test", "k", sleep=lambda _s: None).me()
    assert str(exc.value) == ("GET /v2/users/me: a redirect to a Location that is no URL (not followed; its text not "
                              "shown): not an API answer (a login page or proxy? point --server at the GPUStack server "
                              "itself)")
    assert route.call_count == 1


# --- the same Location at soak's endpoints ------------------------------------------------------------------------
BAD_LOCATIONS = ["https://bob:hunter2#x@sso.example/login", "http://sso.example:hunter2/"]


def _redirecting_to(location: str) -> type[BaseHTTPRequestHandler]:
    class Redirecting(BaseHTTPRequestHandler):
        requests = 0

        def _answer(self) -> None:
            type(self).requests += 1
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(302)
            self.send_header("location", location)
            self.send_header("content-length", "0")
            self.end_headers()

        do_POST = do_GET = _answer  # noqa: N815 (http.server's names)

        def log_message(self, *args) -> None:
            pass

    return Redirecting


@pytest.mark.parametrize("location", BAD_LOCATIONS)
def test_soak_against_a_redirect_whose_location_is_no_url_is_one_line_naming_it(location):
    """Before: "an answer that is no HTTP/1.1 (an HTTP/2-only server? ...)", each request sent twice (taken for a
    kept-alive connection closed under it)."""
    handler = _redirecting_to(location)
    code, out, err, port = soak_against(handler)
    assert code == 1
    assert err.splitlines()[-1] == (
        f"gsg: error: http://127.0.0.1:{port}/v1/chat/completions: a redirect to a Location that is no URL (not "
        "followed; its text not shown) for every request of round 1 (check the URL, the key and --model)")
    assert "hunter2" not in out + err
    assert handler.requests <= 4  # one request each (round 1 of 0.5 s, the back-off between): none sent twice


@pytest.mark.parametrize("location", BAD_LOCATIONS)
def test_a_metrics_url_redirecting_to_a_location_that_is_no_url_is_said_so(gsg, location):
    """Before: "RemoteProtocolError in 3 of 3 scrapes"."""
    from support.soak_fakes import FakeServer

    metrics = ThreadingHTTPServer(("127.0.0.1", 0), _redirecting_to(location))
    threading.Thread(target=metrics.serve_forever, daemon=True).start()
    server = FakeServer("stable", seed=1).start_in_thread()
    try:
        result = gsg("soak", "--url", server.url, "--model", "qwen3-8b", "--concurrency", "1", "--prompt-tokens",
                     "16", "--max-tokens", "4", "--rounds", "1", "--round-seconds", "0.5", "--metrics-url",
                     f"http://127.0.0.1:{metrics.server_port}/metrics")
    finally:
        server.stop_thread()
        metrics.shutdown()
        metrics.server_close()
    warnings = [line for line in result.out.splitlines() if "/metrics:" in line]
    assert len(warnings) == 1, result.out
    assert warnings[0].startswith(f"  warning: http://127.0.0.1:{metrics.server_port}/metrics: a redirect to a "
                                  "Location that is no URL (not followed; its text not shown) in ")
    assert "hunter2" not in result.out + result.err


# --- snapshot --out over a file that is no fleet ------------------------------------------------------------------
NOT_A_FLEET = {
    "a readme": b"# My project\n",
    "a spec": b"name: llama-8b\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\n",
    "a contexts file": b"current-context: a\ncontexts:\n  a:\n    server: http://gpustack.test\n",
    "empty": b"",
    "bad YAML": b"clusters: [\n",
    "two documents": b"clusters: []\n---\nclusters: []\n",
    "a list": b"- clusters: []\n",
    "binary": bytes(range(256)),
}


@pytest.mark.parametrize("case", sorted(NOT_A_FLEET))
def test_snapshot_out_never_replaces_a_file_that_is_no_fleet(gsg, fake, specs, case):
    """`gsg snapshot --out README.md` (or a spec, or the contexts file) replaced it with the fleet, exit 0; the
    neighbour of round 28's plan --out and render --out. Refused before the server is asked for anything."""
    target = specs.parent / "out.yaml"
    target.write_bytes(NOT_A_FLEET[case])
    result = gsg("snapshot", "--out", "out.yaml")
    assert (result.code, result.out, result.err) == (
        1, "", "gsg: error: out.yaml: exists and is not a fleet file (one mapping with `clusters`, as gsg snapshot "
               "writes); refusing to overwrite it (remove it or write the snapshot elsewhere); nothing written\n")
    assert target.read_bytes() == NOT_A_FLEET[case]
    assert fake.log == []
    assert not [p.name for p in specs.parent.iterdir() if p.name.endswith(".tmp")]


def test_snapshot_out_replaces_an_earlier_snapshot_and_a_fleet_written_by_hand(gsg, fake, specs):
    from support import FLEET

    assert gsg("snapshot", "--out", "snaps/fleet.yaml").code == 0  # a new file, in a folder not made yet
    again = gsg("snapshot", "--out", "snaps/fleet.yaml")
    assert (again.code, again.err) == (0, "gsg: wrote snaps/fleet.yaml: 1 cluster(s), 4 worker(s), 12 GPU(s)\n")
    by_hand = specs.parent / "fleet.yaml"
    by_hand.write_bytes(FLEET.read_bytes())  # examples/fleet.yaml: no snapshot header, `clusters` all the same
    assert gsg("snapshot", "--out", "fleet.yaml").code == 0
    assert by_hand.read_text().startswith("# gsg fleet snapshot of http://gpustack.test")
    valid = gsg("validate", "specs", "--offline", "--fleet", "fleet.yaml")
    assert valid.code in (0, 1) and "fleet.yaml:" not in valid.err  # what it wrote is a fleet validate reads


def test_snapshot_out_through_a_link_to_a_file_that_is_no_fleet_is_refused(gsg, fake, specs, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "theirs.md"
    outside.write_text("# theirs\n")
    (specs.parent / "fleet.yaml").symlink_to(outside)
    result = gsg("snapshot", "--out", "fleet.yaml")
    assert result.code == 1 and result.err.startswith("gsg: error: fleet.yaml: exists and is not a fleet file")
    assert outside.read_text() == "# theirs\n" and (specs.parent / "fleet.yaml").is_symlink()


# --- validate --report over a file that is no report --------------------------------------------------------------
REPORT_FORMATS = ["text", "json", "github", "sarif", "junit", "markdown", "gitlab", "html"]
NOT_A_REPORT = {
    "a readme": b"# My project\n",
    "a spec": b"name: llama-8b\nsource: huggingface\n",
    "a JSON object of another tool": b'{"tool": {"name": "other"}}\n',
    "a package named gsg": b'{"name": "gsg", "version": "1.0.0"}\n',
    "a JSON list of numbers": b"[1, 2]\n",
    "HTML": b"<!DOCTYPE html><html><title>docs</title></html>\n",
    "binary": bytes(range(256)),
}


@pytest.mark.parametrize("case", sorted(NOT_A_REPORT))
def test_validate_report_never_replaces_a_file_that_is_no_report(gsg, specs, case):
    """`gsg validate --report json=README.md` replaced the readme with the report, exit 0; the neighbour of round
    28's plan --out and render --out. Checked before anything is written: no other report of the run is either."""
    from support import FLEET

    target = specs.parent / "out.txt"
    target.write_bytes(NOT_A_REPORT[case])
    result = gsg("validate", "specs", "--offline", "--fleet", str(FLEET), "--report", "sarif=new.sarif",
                 "--report", "json=out.txt")
    assert (result.code, result.err) == (  # the run's own report on stdout stays, as for a file the run reads
        1, "gsg: error: out.txt: exists and is not a gsg validate report; refusing to overwrite it (remove it or "
           "write the report elsewhere); nothing written\n")
    assert target.read_bytes() == NOT_A_REPORT[case]
    assert not (specs.parent / "new.sarif").exists()


@pytest.mark.parametrize("first", REPORT_FORMATS)
def test_validate_report_replaces_an_earlier_report_of_any_format(gsg, specs, first):
    from support import FLEET

    order = [first] + [f for f in REPORT_FORMATS if f != first]
    for fmt in order:
        result = gsg("validate", "specs", "--offline", "--fleet", str(FLEET), "--report", f"{fmt}=report.out")
        assert result.code == 0, (first, fmt, result.err)
    assert (specs.parent / "report.out").read_text()[:2] == ("<!" if order[-1] == "html" else "[\n")  # the last


@pytest.mark.parametrize("fmt", ["text", "github", "gitlab"])
def test_an_earlier_report_of_no_findings_is_replaced(gsg, specs, fmt):
    """Text and github write nothing when nothing is found, gitlab an empty list: such a file is replaced."""
    from support import FLEET

    for spec in specs.glob("*.yaml"):
        if spec.name != "llama-8b.yaml":
            spec.unlink()
    first = gsg("validate", "specs", "--offline", "--fleet", str(FLEET), "--report", f"{fmt}=report.out")
    assert first.code == 0 and (specs.parent / "report.out").read_text().strip() in ("", "[]"), first.out
    again = gsg("validate", "specs", "--offline", "--fleet", str(FLEET), "--report", f"{fmt}=report.out")
    assert again.code == 0, again.err


# --- soak --out over files of those names that no soak wrote ------------------------------------------------------
def _soak_into(gsg, folder):
    from support.soak_fakes import FakeServer

    server = FakeServer("stable", seed=1).start_in_thread()
    try:
        return gsg("soak", "--url", server.url, "--model", "qwen3-8b", "--concurrency", "1", "--prompt-tokens", "16",
                   "--max-tokens", "4", "--rounds", "1", "--round-seconds", "0.5", "--out", str(folder)), server
    finally:
        server.stop_thread()


@pytest.mark.parametrize("name, data", [("report.html", b"<html><title>our site</title></html>\n"),
                                        ("soak.json", b'{"name": "gsg", "command": "soak"}\n'),
                                        ("soak.json", b'{"format_version": "1.0", "tool": {"name": "gsg"}, '
                                                      b'"command": "validate"}\n'),
                                        ("report.html", bytes(range(256)))])
def test_soak_out_never_replaces_files_of_its_names_that_no_soak_wrote(gsg, tmp_path, name, data):
    """`gsg soak --out docs` replaced the site's report.html, exit 0. Refused before the first request."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / name).write_bytes(data)
    result, server = _soak_into(gsg, folder)
    assert (result.code, result.err) == (
        1, f"gsg: error: {folder / name}: exists and is not the {name} of a gsg soak; refusing to overwrite it "
           "(remove it or give --out another folder); nothing written\n")
    assert (folder / name).read_bytes() == data and sorted(p.name for p in folder.iterdir()) == [name]
    assert server.engine.requests == 0


def test_soak_out_replaces_an_earlier_soak_s_files_and_empty_ones(gsg, tmp_path):
    folder = tmp_path / "soak"
    first, _ = _soak_into(gsg, folder)
    assert first.code == 0, first.err
    again, _ = _soak_into(gsg, folder)
    assert again.code == 0, again.err
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "soak.json").write_bytes(b"")
    (empty / "report.html").write_bytes(b"\n")
    third, _ = _soak_into(gsg, empty)
    assert third.code == 0, third.err
    assert (empty / "report.html").read_text().startswith("<!DOCTYPE html>")
