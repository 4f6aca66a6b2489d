"""Ctrl-C and SIGTERM (issue 13): apply starts nothing new, finishes the steps in flight whole, says what was done
and exits 130; the next run converges. Other commands take the same clean path."""

import signal
import threading
import time

import httpx
import pytest

SPEC_NAMES = {"llama-70b", "llama-8b", "llama-70b-q4", "qwen-32b"}


def signalling(fake, monkeypatch, when, signum=signal.SIGTERM, repeat=1):
    """Wire the fake in so that the first request matching `when(method, path)` first sends `signum` to the main
    thread (as a terminal or CI would; `repeat` times), then is answered: the signal lands while that call is in
    flight."""
    import gpustack_guard.wiring as connect

    sent = []

    def handle(request: httpx.Request) -> httpx.Response:
        if not sent and when(request.method, request.url.path) and b'"gsg-lock' not in request.content:
            sent.append(request.url.path)
            for _ in range(repeat):
                signal.pthread_kill(threading.main_thread().ident, signum)
                time.sleep(0.2)  # the main thread runs its handler meanwhile
        return fake.handle(request)

    monkeypatch.setattr(connect, "transport_factory", lambda: httpx.MockTransport(handle))
    return sent


@pytest.mark.parametrize("signum,name", [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")])
def test_a_signal_during_create_finishes_it_starts_nothing_else_and_the_next_run_converges(
        gsg, fake, specs, monkeypatch, signum, name):
    # what the process had before gsg ran: SIGINT is SIG_IGN where the runner started it in the background
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    sent = signalling(fake, monkeypatch, lambda m, p: (m, p) == ("POST", "/v2/models"), signum)
    stopped = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert sent == ["/v2/models"] and stopped.code == 130, stopped.err
    lines = [line for line in stopped.err.splitlines() if not line.startswith("gsg: created ")]  # progress
    assert lines[0] == f"Apply interrupted ({name}): nothing new was started; the steps in flight were finished."
    created = [m["name"] for m in fake.models.values()]
    assert len(created) == 1 and lines[1] == f"  done: create {created[0]}"
    assert lines[2].startswith("  not attempted: create ") and lines[2].count("create") == 3
    assert lines[3] == "Run apply again: it picks up from the live state."
    again = gsg("apply", str(specs), "--yes")
    assert again.code == 0 and "Apply complete: 3 created, 0 updated, 0 replaced, 0 deleted." in again.out
    assert {m["name"] for m in fake.models.values()} == SPEC_NAMES
    assert gsg("plan", str(specs), "--detailed-exitcode").code == 0
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before  # handlers restored


def test_an_update_in_flight_still_gets_its_restart(gsg, fake, specs, monkeypatch):
    assert gsg("apply", str(specs), "--yes").code == 0
    spec = specs / "llama-8b.yaml"
    spec.write_text(spec.read_text().replace("max_num_seqs: 64", "max_num_seqs: 32"))
    model_id = fake.by_name("llama-8b")["id"]
    signalling(fake, monkeypatch, lambda m, p: (m, p) == ("PUT", f"/v2/models/{model_id}"))
    fake.log.clear()
    stopped = gsg("apply", str(specs), "--yes")
    assert stopped.code == 130 and "  done: update llama-8b" in stopped.err
    assert ("POST", f"/v2/models/{model_id}/restart") in fake.log
    assert "--max-num-seqs=32" in fake.by_name("llama-8b")["backend_parameters"]
    assert gsg("plan", str(specs), "--detailed-exitcode").code == 0


def test_a_second_signal_stops_waiting(gsg, fake, specs, monkeypatch):
    sent = signalling(fake, monkeypatch, lambda m, p: (m, p) == ("POST", "/v2/models"), repeat=2)
    stopped = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert sent == ["/v2/models"] and stopped.code == 130, stopped.err
    # the second signal stops the wait, not the account: the create in flight is abandoned, the rest not started
    assert stopped.err.splitlines() == [
        "Apply interrupted (SIGTERM, twice): nothing new was started; the wait for the steps in flight was stopped.",
        "  done: nothing",
        "  not attempted: create llama-70b, create llama-8b, create qwen-32b",
        "  abandoned in flight (a second signal; the server may or may not have done them, the next plan shows it): "
        "create llama-70b-q4",
        "Run apply again: it picks up from the live state."]
    time.sleep(0.5)  # the abandoned calls finish on their own
    again = gsg("apply", str(specs), "--yes")
    assert again.code == 0, again.err
    assert {m["name"] for m in fake.models.values()} == SPEC_NAMES


def test_sigterm_during_a_snapshot_writes_no_file(gsg, fake, tmp_path, monkeypatch):
    signalling(fake, monkeypatch, lambda m, p: p == "/v2/workers")
    result = gsg("snapshot", "--out", str(tmp_path / "fleet.yaml"))
    assert result.code == 130 and result.err == "gsg: interrupted\n"
    assert list(tmp_path.glob("*fleet.yaml*")) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_sigterm_to_a_real_process_mid_apply(tmp_path, specs):
    """The whole path in a child process, as CI cancels a job: SIGTERM while a create is in flight on a slow
    server; the create finishes, nothing else starts, the summary says so, exit 130."""
    import os
    import subprocess
    import sys

    from support.hostile_gpustack import HostileGPUStack

    with HostileGPUStack("slow", slow_seconds=1.0, only=("POST", "/v2/models")) as server:
        env = {**os.environ, "GSG_URL": server.url(), "GSG_API_KEY": server.fake.api_key, "GSG_OFFLINE": "1",
               "HF_TOKEN": "hf_test_secret_token_value"}
        # --no-lock: the slow server slows every create, the lock's too (a signal then is test_apply_lock's)
        child = subprocess.Popen([sys.executable, "-m", "gpustack_guard", "apply", str(specs), "--yes",
                                  "--concurrency", "1", "--no-lock"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, cwd=tmp_path)
        assert server.misbehaving.wait(30), "the create never arrived"
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=30)
        models = sorted(m["name"] for m in server.fake.models.values())
    assert child.returncode == 130, err
    assert "Apply interrupted (SIGTERM): nothing new was started; the steps in flight were finished." in err
    assert len(models) == 1 and f"  done: create {models[0]}" in err and "Traceback" not in err


def test_a_signal_while_waiting_for_readiness_says_what_is_not_yet_ready(gsg, fake, specs, monkeypatch):
    fake.ready_after_polls = 10**6  # never ready on its own
    reads = []  # GETs of the model: the first is the read-back after the create, the second the first poll

    def first_poll(method, path):
        if method == "GET" and path.startswith("/v2/models/"):
            reads.append(path)
        return len(reads) == 2

    signalling(fake, monkeypatch, first_poll)
    start = time.monotonic()
    stopped = gsg("apply", str(specs), "--yes", "--wait", "--target", "llama-8b")
    assert stopped.code == 130 and time.monotonic() - start < 10, stopped.err  # not the 2 s poll, not 900 s
    assert "Apply interrupted (SIGTERM)" in stopped.err and "  done: create llama-8b" in stopped.err
    assert "  changed, not yet seen ready (the wait was stopped): llama-8b" in stopped.err
