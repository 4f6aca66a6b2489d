"""The hostile-server matrix: every misbehaviour x every command that talks to GPUStack, over a real loopback
socket. Each run: exit 1, one line on stderr naming the endpoint, bounded time and memory, and neither the API
key nor a URL password nor the redirect's credentials anywhere in the output."""

import resource
import shutil
import time

import pytest
from support import REPO
from support.hostile_gpustack import MODES, HostileGPUStack

URL_PASSWORD = "url-pass-9876"
SECRETS = ["gsg-test-key-0123456789", URL_PASSWORD, "sso-pass-5555", "redirect-token-7777"]
COMMANDS = {
    "snapshot": lambda tmp: ["snapshot", "--out", str(tmp / "fleet.yaml")],
    "plan": lambda tmp: ["plan", str(tmp / "specs")],
    "apply": lambda tmp: ["apply", str(tmp / "specs"), "--yes"],
    "drift": lambda tmp: ["drift", str(tmp / "specs")],
    "export": lambda tmp: ["export", "--out", str(tmp / "exported")],
    "validate": lambda tmp: ["validate", str(tmp / "specs"), "--server-check"],
    "verify": lambda tmp: ["verify", str(tmp / "specs")],
}
# these wait out the request deadline in each of the seven commands: a shorter one than the others' 0.5 s
DEADLINE = {"slow": "0.2", "drip": "0.2", "slow-headers": "0.2", "continue-forever": "0.2",
            # bombs and header floods test their caps, not the deadline: a loaded CI machine makes them slow to send
            "gzip-bomb": "3", "deflate-bomb": "3", "many-headers": "3", "huge-header": "3"}
# What each mode must say (besides naming the endpoint).
SAYS = {
    "slow": ["no complete answer within 0.2s"],
    "drip": ["no complete answer within 0.2s"],
    "reset": ["the connection broke"],
    "truncated": ["the connection broke"],
    "429": ["HTTP 429"],
    "flaky": ["HTTP 502", "HTTP 503", "the connection broke"],  # whichever failure the last retry met
    "redirect": ["HTTP 302 redirect to http://login.example/sso:"],
    "huge": ["larger than gsg reads (1 MiB"],
    "wrong-schema": ["expected an integer"],
    "slow-headers": ["no complete answer within 0.2s (GSG_REQUEST_DEADLINE)"],
    "continue-forever": ["no complete answer within 0.2s (GSG_REQUEST_DEADLINE)"],
    # an empty list announcing a second page is refused on its first (an empty page before the last)
    "growing-pages": ["the server announces 6 pages, more than gsg reads (5, GSG_MAX_LIST_PAGES)",
                      "page 1 of 2 is empty: the server's pagination is inconsistent; try again"],
    "absurd-pages": ["the server announces 1,000,000,000,000 pages, more than gsg reads (5, GSG_MAX_LIST_PAGES)"],
    "gzip-bomb": ["the answer is larger than gsg reads (1 MiB, GSG_MAX_RESPONSE_BYTES); refused before parsing"],
    "deflate-bomb": ["the answer is larger than gsg reads (1 MiB, GSG_MAX_RESPONSE_BYTES); refused before parsing"],
    "br-encoded": ["the answer is encoded as 'br'; gsg asks for gzip, deflate (one coding) only"],
    "many-headers": ["the answer has 2,005 header lines, more than gsg reads (500)"],
    "huge-header": ["the answer's status line and headers are larger than gsg reads (100 KiB)"],
    # the first item's id, or the answer's own where a list is empty
    "big-int": ["id' is an integer of 5,000 digits, not a number gsg can use"],
    "nan-fields": ["id' is 'NaN', not a number gsg can use"],
}


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


@pytest.fixture
def hostile_env(tmp_path, monkeypatch):
    import gpustack_guard.wiring as connect

    pauses: list[float] = []
    monkeypatch.setattr(connect, "retry_sleep", pauses.append)  # retries do not really sleep
    monkeypatch.setenv("GSG_REQUEST_DEADLINE", "0.5")
    monkeypatch.setenv("GSG_MAX_RESPONSE_BYTES", str(1024**2))
    monkeypatch.setenv("GSG_MAX_LIST_PAGES", "5")
    monkeypatch.setenv("HF_TOKEN", "hf_test_secret_token_value")
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    monkeypatch.chdir(tmp_path)
    return pauses


@pytest.mark.parametrize("mode", MODES)
def test_every_command_fails_in_one_line_within_bounds(gsg, hostile_env, tmp_path, monkeypatch, mode):
    monkeypatch.setenv("GSG_REQUEST_DEADLINE", DEADLINE.get(mode, "0.5"))
    with HostileGPUStack(mode) as server:
        monkeypatch.setenv("GSG_URL", server.url(f"gsg:{URL_PASSWORD}"))
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        for command, argv in COMMANDS.items():
            rss_before, start = _peak_rss_mib(), time.monotonic()
            result = gsg(*argv(tmp_path))
            elapsed, grown = time.monotonic() - start, _peak_rss_mib() - rss_before
            where = f"{mode} x {command}: {result.err!r}"
            assert result.code == 1, where
            lines = result.err.splitlines()
            assert len(lines) == 1 and lines[0].startswith("gsg: error: "), where
            assert " /v2/" in lines[0] and any(s in lines[0] for s in SAYS[mode]), where
            assert "Traceback" not in result.err and len(lines[0]) < 400, where
            assert not any(s in result.out + result.err for s in SECRETS), where
            assert elapsed < 5 and grown < 256, (where, elapsed, grown)
    assert not (tmp_path / "fleet.yaml").exists() and not (tmp_path / "exported").exists()


def test_a_healthy_loopback_server_works_for_every_command(gsg, hostile_env, tmp_path, monkeypatch):
    """The control row: the same harness with no misbehaviour succeeds, so the matrix fails for the mode."""
    with HostileGPUStack(None) as server:
        monkeypatch.setenv("GSG_URL", server.url(f"gsg:{URL_PASSWORD}"))
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        for command, argv in COMMANDS.items():
            result = gsg(*argv(tmp_path))
            if command == "verify":  # the fake serves no instance logs: each running instance is "not verified"
                assert result.code == 1 and "4 not verified" in result.err, result.err
                continue
            assert result.code == 0, (command, result.err)
            assert not any(s in result.out + result.err for s in SECRETS), command
    snapshot = (tmp_path / "fleet.yaml").read_text()
    assert f"http://127.0.0.1:{server.port}" in snapshot and "@" not in snapshot.splitlines()[0]


def test_429_waits_as_retry_after_says_then_succeeds(gsg, hostile_env, tmp_path, monkeypatch):
    with HostileGPUStack("429", times=2, retry_after="2") as server:
        monkeypatch.setenv("GSG_URL", server.url())
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        result = gsg("snapshot", "--out", str(tmp_path / "f.yaml"))
    assert result.code == 0, result.err
    assert hostile_env == [2.0, 2.0]  # the pauses the server asked for, not gsg's backoff
    assert [p.split("?")[0] for m, p in server.requests].count("/v2/models") == 3


def test_a_flaky_server_that_recovers_within_the_retries_is_fine(gsg, hostile_env, tmp_path, monkeypatch):
    with HostileGPUStack("flaky", times=3) as server:  # 503, a reset, 502 on the first list, then healthy
        monkeypatch.setenv("GSG_URL", server.url())
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        result = gsg("export", "--out", str(tmp_path / "exported"))
    assert result.code == 0, result.err
    assert len(hostile_env) == 3


@pytest.mark.parametrize("mode,says", [
    ("wrong-schema", "GPUStack could not evaluate: results[0]: field 'compatible' is text, expected a boolean"),
    ("reset", "GPUStack could not evaluate: the connection broke"),
    ("drip", "GPUStack could not evaluate: no complete answer within 0.5s"),
    ("slow-headers", "GPUStack could not evaluate: no complete answer within 0.5s"),
    ("continue-forever", "GPUStack could not evaluate: no complete answer within 0.5s"),
])
def test_server_check_on_a_broken_evaluation_endpoint_is_a_finding_and_asks_once(
        gsg, hostile_env, tmp_path, monkeypatch, mode, says):
    with HostileGPUStack(mode, only=("POST", "/v2/model-evaluations")) as server:
        monkeypatch.setenv("GSG_URL", server.url())
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        result = gsg("validate", str(tmp_path / "specs"), "--server-check", "-o", "json")
    import json

    assert result.code == 0, result.err  # GPUStack's view is information: its absence fails nothing
    unavailable = [f for f in json.loads(result.out)["findings"] if f["rule"] == "server-evaluation-unavailable"]
    assert len(unavailable) == 4 and says in unavailable[0]["message"], unavailable
    first = unavailable[0]["spec"]
    later = "GPUStack could not evaluate: not asked after the server failed on " + repr(first)
    asked = [p for m, p in server.requests if m == "POST"]
    if mode == "wrong-schema":  # the server answers, only badly: each spec is asked
        assert len(asked) == 4 and all(says in f["message"] for f in unavailable)
    else:  # down or too slow: asked once (reset: with its 3 retries), the rest not asked
        assert len(asked) == (4 if mode == "reset" else 1) and all(f["message"] == later for f in unavailable[1:])


def test_the_command_deadline_bounds_a_server_slow_on_every_request(gsg, hostile_env, tmp_path, monkeypatch):
    """Each answer in time for the request deadline, but the command as a whole is not."""
    monkeypatch.setenv("GSG_REQUEST_DEADLINE", "5")
    monkeypatch.setenv("GSG_COMMAND_DEADLINE", "1")
    with HostileGPUStack("slow", slow_seconds=0.4) as server:
        monkeypatch.setenv("GSG_URL", server.url())
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        start = time.monotonic()
        result = gsg("snapshot", "--out", str(tmp_path / "fleet.yaml"))
        elapsed = time.monotonic() - start
    assert result.code == 1 and elapsed < 2, (result.err, elapsed)
    assert result.err.endswith("gsg's time limit for this command ran out (1s over all requests, "
                               "GSG_COMMAND_DEADLINE)\n"), result.err
    assert result.err.startswith("gsg: error: GET /v2/") and len(result.err.splitlines()) == 1


def test_a_bad_limit_in_the_environment_is_one_line(gsg, hostile_env, monkeypatch):
    monkeypatch.setenv("GSG_REQUEST_DEADLINE", "soon")
    monkeypatch.setenv("GSG_URL", "http://127.0.0.1:9")
    result = gsg("snapshot", "--out", "f.yaml")
    assert (result.code, result.err) == (1, "gsg: error: GSG_REQUEST_DEADLINE must be a positive number, not "
                                            "'soon'\n")


def test_a_200_mb_answer_is_cut_at_the_default_cap_in_bounded_memory(gsg, hostile_env, tmp_path, monkeypatch):
    monkeypatch.delenv("GSG_MAX_RESPONSE_BYTES")  # the default: 32 MiB
    monkeypatch.setenv("GSG_REQUEST_DEADLINE", "30")  # the size cap, not the clock, is under test
    with HostileGPUStack("huge", huge_bytes=200 * 1024**2) as server:
        monkeypatch.setenv("GSG_URL", server.url())
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        rss_before, start = _peak_rss_mib(), time.monotonic()
        result = gsg("snapshot", "--out", str(tmp_path / "fleet.yaml"))
        elapsed, grown = time.monotonic() - start, _peak_rss_mib() - rss_before
    assert result.err == ("gsg: error: GET /v2/models: the answer is larger than gsg reads (32 MiB, "
                          "GSG_MAX_RESPONSE_BYTES); refused before parsing\n")
    assert result.code == 1 and elapsed < 20 and grown < 256, (elapsed, grown)
