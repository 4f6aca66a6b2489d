"""Two applies against one server never interleave: apply holds a lease (a stopped model named gsg-lock-PROJECT,
GPUStack's only atomic create-if-absent) while it writes, says who holds it when refused, takes over a lease that
expired or that an earlier run of this process left, and never lets the lease show as a deployment."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

import gpustack_guard.adapters.gpustack.lease as lease_adapter
from gpustack_guard.core.deploy.lease import LEASE, LEASE_EXPIRES, LEASE_HOST, LEASE_PID, LEASE_TOKEN, is_lease

LOCK = "gsg-lock-field-notes-example"  # specs/gsg.yaml's project


def _lease(fake, *, holder="ci@runner-7 pid 4242", expires_in=600.0, host="runner-7", pid=4242, token="feedface",
           expires: str | None = None):
    return fake.create_unmanaged(LOCK, replicas=0, backend_parameters=[], gpu_selector=None, meta={
        LEASE: holder, LEASE_EXPIRES: expires or str(int(time.time() + expires_in)), LEASE_TOKEN: token,
        LEASE_HOST: host, LEASE_PID: str(pid)})


def _writes(fake) -> list[tuple[str, str]]:
    return [(m, p) for m, p in fake.log if m in ("POST", "PUT", "DELETE")]


def test_apply_takes_the_lock_first_and_gives_it_back(gsg, fake, specs):
    assert gsg("apply", str(specs), "--yes").code == 0
    writes = _writes(fake)
    assert writes[0] == ("POST", "/v2/models") and writes[-1][0] == "DELETE"
    assert not any(is_lease(m) for m in fake.models.values())
    assert {m["name"] for m in fake.models.values()} == {"llama-70b", "llama-8b", "llama-70b-q4", "qwen-32b"}


def test_a_lock_held_elsewhere_stops_apply_before_any_write_and_names_the_holder(gsg, fake, specs):
    _lease(fake)
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert f"gsg: error: another apply holds the lock '{LOCK}': ci@runner-7 pid 4242, until " in result.err
    assert "wait (--lock-timeout SECONDS), or delete that model in GPUStack if its apply is gone" in result.err
    assert _writes(fake) == [("POST", "/v2/models")]  # the refused create of the lock, nothing else
    assert {m["name"] for m in fake.models.values()} == {LOCK}


def test_lock_timeout_waits_for_the_holder_to_finish(gsg, fake, specs, monkeypatch):
    import gpustack_guard.wiring as wiring

    monkeypatch.setattr(lease_adapter, "RETRY_SECONDS", 0.05)
    held = _lease(fake)
    refusals = []

    def handle(request: httpx.Request) -> httpx.Response:
        response = fake.handle(request)
        if request.method == "POST" and b'"gsg-lock' in request.content and response.status_code == 409:
            refusals.append(response)
            if len(refusals) == 2:  # the other apply ends while this one waits (not on a clock: a loaded machine)
                fake.models.pop(held["id"])
        return response

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    result = gsg("apply", str(specs), "--yes", "--lock-timeout", "5")
    assert len(refusals) == 2
    assert result.code == 0, result.err
    assert "another apply holds the lock" in result.err and "; retrying" in result.err
    assert not any(is_lease(m) for m in fake.models.values())


def test_a_lock_timeout_of_nan_is_one_line_not_a_retry_loop_without_end(gsg, fake, specs):
    # nan passes the CLI's min/max (every comparison with it is false) and no deadline ever passes it
    _lease(fake)
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes", "--lock-timeout", "nan")
    assert (result.code, result.err.strip()) == (1, "gsg: error: --lock-timeout must be between 0 and 3600 "
                                                    "seconds, not nan")
    assert _writes(fake) == []


def test_a_lock_timeout_past_its_ceiling_is_refused_by_the_lease_itself(fake):
    from gpustack_guard.core.errors import GsgError

    for wait in (-1.0, 3600.5, float("inf")):
        lease = lease_adapter.apply_lease(None, "p", seconds=60, wait=wait, cluster_id=None, note=print)
        with pytest.raises(GsgError, match="^--lock-timeout must be between 0 and 3600 seconds, not"):
            lease.__enter__()


def test_an_expired_lock_is_taken_over(gsg, fake, specs):
    _lease(fake, expires_in=-1)
    assert gsg("apply", str(specs), "--yes").code == 0
    assert LOCK not in {m["name"] for m in fake.models.values()}


@pytest.mark.parametrize("expires", ["1e20", "inf", "nan", "1e400", "99999999999999999999", "253402300800", "-5",
                                     "soon"])
def test_a_lock_whose_expiry_is_no_time_gsg_writes_is_taken_over_as_unreadable(gsg, fake, specs, expires):
    """Past the year 9999, not a number, or negative: counted as expired, as an expiry that cannot be read is (a stuck
    lock is worse than one taken over). Before: 1e20, inf and 1e400 ended apply in 'gsg: internal error:
    OverflowError: timestamp out of range for platform time_t', NaN in 'ValueError: Invalid value NaN' (exit 3)."""
    held = _lease(fake, expires=expires)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 0, result.err
    assert LOCK not in {m["name"] for m in fake.models.values()}
    assert ("DELETE", f"/v2/models/{held['id']}") in _writes(fake)


def test_the_last_second_of_the_year_9999_is_still_a_lock_held(gsg, fake, specs):
    """The neighbour: the latest expiry gsg can show holds the lock, and is shown."""
    _lease(fake, expires="253402300799")
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert f"another apply holds the lock '{LOCK}': ci@runner-7 pid 4242, until 9999-12-31 23:59:59 UTC;" in result.err


def test_a_lock_an_earlier_run_of_this_process_left_is_taken_over(gsg, fake, specs):
    _lease(fake, host=socket.gethostname(), pid=os.getpid(), token="an-ended-run")
    assert gsg("apply", str(specs), "--yes").code == 0


def test_the_same_host_and_another_live_process_is_still_refused(gsg, fake, specs):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _lease(fake, host=socket.gethostname(), pid=other.pid, holder=f"ci@here pid {other.pid}")
        fake.log.clear()
        result = gsg("apply", str(specs), "--yes")
    finally:
        other.kill()
        other.wait()
    assert result.code == 1 and f"another apply holds the lock '{LOCK}': ci@here pid {other.pid}" in result.err
    assert _writes(fake) == [("POST", "/v2/models")]


def test_a_lock_whose_process_on_this_host_has_ended_is_taken_over(gsg, fake, specs):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # a killed apply: its pid no longer names a process
    _lease(fake, host=socket.gethostname(), pid=ended.pid)
    assert gsg("apply", str(specs), "--yes").code == 0
    assert not any(is_lease(m) for m in fake.models.values())


def test_no_lock_writes_no_lease(gsg, fake, specs):
    _lease(fake)
    assert gsg("apply", str(specs), "--yes", "--no-lock").code == 0
    assert sum(1 for m, p in _writes(fake) if m == "POST") == 4  # the four deployments only


def test_a_lease_never_shows_as_a_deployment(gsg, fake, specs, tmp_path):
    assert gsg("apply", str(specs), "--yes").code == 0
    _lease(fake)
    assert gsg("plan", str(specs), "--prune", "--detailed-exitcode").code == 0
    drift = gsg("drift", str(specs), "--detailed-exitcode")
    assert drift.code == 0 and LOCK not in drift.out
    assert gsg("export", "--out", str(tmp_path / "exported")).code == 0
    assert sorted(p.name for p in (tmp_path / "exported").iterdir()) == [
        "llama-70b-q4.yaml", "llama-70b.yaml", "llama-8b.yaml", "qwen-32b.yaml"]


def test_a_model_of_the_lock_name_that_is_no_lease_is_not_touched(gsg, fake, specs):
    fake.create_unmanaged(LOCK)
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert f"a model named '{LOCK}' exists and is not gsg's apply lock: rename it, or apply with --no-lock" in \
        result.err
    assert {m["name"] for m in fake.models.values()} == {LOCK}
    refused = fake.log.index(("POST", "/v2/models"))
    assert fake.log[refused:] == [("POST", "/v2/models"), ("GET", "/v2/models")]  # one look after the 409


def test_a_lease_held_elsewhere_is_looked_up_once_after_the_409(gsg, fake, specs):
    _lease(fake)
    fake.log.clear()
    assert gsg("apply", str(specs), "--yes").code == 1
    refused = fake.log.index(("POST", "/v2/models"))
    assert fake.log[refused:] == [("POST", "/v2/models"), ("GET", "/v2/models")]


def test_a_lost_answer_to_the_lock_create_is_found_by_its_token(gsg, fake, specs, monkeypatch):
    import gpustack_guard.wiring as wiring

    lost = []

    def handle(request: httpx.Request) -> httpx.Response:
        response = fake.handle(request)
        if not lost and request.method == "POST" and b'"gsg-lock' in request.content:
            lost.append(1)
            return httpx.Response(500, json={"message": "the proxy lost it"})  # after the server stored it
        return response

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    assert gsg("apply", str(specs), "--yes").code == 0 and lost
    assert not any(is_lease(m) for m in fake.models.values())


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_taking_the_lock_leaves_no_lock_and_writes_nothing(gsg, fake, specs, monkeypatch, signum):
    import gpustack_guard.wiring as wiring

    def handle(request: httpx.Request) -> httpx.Response:
        response = fake.handle(request)
        if request.method == "POST" and b'"gsg-lock' in request.content:
            signal.pthread_kill(threading.main_thread().ident, signum)
            time.sleep(0.2)
        return response

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 130
    assert fake.models == {}  # the lock it took was given back; no deployment was written


def test_the_lease_outlasts_the_command_deadline_and_every_wait():
    from gpustack_guard.core.deploy.lease import DEFAULT_LEASE_SECONDS, lease_seconds

    assert lease_seconds(900.0, 0, 900.0) == DEFAULT_LEASE_SECONDS == 1800
    assert lease_seconds(7200.0, 0, 900.0) == 7200.0  # GSG_COMMAND_DEADLINE raised past the default lease
    assert lease_seconds(900.0, 3, 600.0) == 1800 + 3 * 600  # --wait after deletes and two waves



def test_an_apply_with_wait_asks_for_a_lease_over_all_its_waits(gsg, fake, specs, monkeypatch):
    import json as _json

    import gpustack_guard.wiring as wiring

    asked: list[tuple[float, dict]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and b'"gsg-lock' in request.content:
            asked.append((time.time(), _json.loads(request.content)))
        return fake.handle(request)

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    spec = specs / "llama-8b.yaml"
    spec.write_text(spec.read_text().replace("\nguard:\n", "\nguard:\n  wave: 1\n", 1))
    assert gsg("apply", str(specs), "--yes", "--wait", "--wait-timeout", "100").code == 0
    (sent_at, body), = asked
    # two waves of creates -> two groups, each waited for: 1,800 s (the default command deadline, 900 s, is
    # shorter) + 2 x 100 s; the expiry is whole seconds of the wall clock at the create
    assert int(body["meta"][LEASE_EXPIRES]) - int(sent_at) in (2000, 1999)


@pytest.mark.parametrize("given", ["3600.5", "-1", "inf", "nan"])
def test_the_cli_refuses_a_lock_timeout_outside_the_lease_ceiling_before_any_request(gsg, fake, specs, given):
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes", "--lock-timeout", given)
    shown = {"3600.5": "3600.5", "-1": "-1", "inf": "inf", "nan": "nan"}[given]
    assert (result.code, result.err.strip()) == (1, "gsg: error: --lock-timeout must be between 0 and 3600 "
                                                    f"seconds, not {shown}")
    assert fake.log == []  # on parsing: nothing was asked of the server


def test_the_cli_lock_timeout_ceiling_is_the_lease_constant(gsg, fake, specs, monkeypatch):
    monkeypatch.setattr(lease_adapter, "MAX_LOCK_WAIT", 60.0)
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes", "--lock-timeout", "61")
    assert (result.code, result.err.strip()) == (1, "gsg: error: --lock-timeout must be between 0 and 60 seconds, "
                                                    "not 61")
    assert fake.log == []
    assert gsg("apply", str(specs), "--yes", "--lock-timeout", "60").code == 0


@pytest.mark.parametrize("pid", ["²", "٣", "1²", "-5", "9" * 40])
def test_a_lease_pid_that_is_no_decimal_number_is_no_process_not_a_crash(gsg, fake, specs, pid):
    """Before: '²' passed str.isdigit() and int() refused it: "internal error: ValueError" (exit 3) on every apply
    while such a lease stood."""
    _lease(fake, pid="PID")
    next(m for m in fake.models.values() if is_lease(m))["meta"][LEASE_PID] = pid
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and "Traceback" not in result.err
    assert f"another apply holds the lock '{LOCK}': ci@runner-7 pid 4242" in result.err


def _server_clock(fake, monkeypatch, skew: float, posted: list[dict]) -> None:
    """The fake behind a server whose clock (its Date header) is `skew` seconds off this host's."""
    import json
    from email.utils import formatdate

    import gpustack_guard.wiring as wiring

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and b'"gsg-lock' in request.content:
            posted.append(json.loads(request.content))
        response = fake.handle(request)
        response.headers["Date"] = formatdate(time.time() + skew, usegmt=True)
        return response

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))


def test_a_live_lease_is_judged_on_the_servers_clock_not_on_a_host_clock_that_runs_ahead(gsg, fake, specs,
                                                                                           monkeypatch):
    """Before: the expiry was compared with this host's clock, so a host two hours ahead took over (deleted) a
    lease another apply held for ten more minutes, and both applies wrote at once."""
    posted: list[dict] = []
    _server_clock(fake, monkeypatch, -7200.0, posted)  # the server (and the holder) run two hours behind us
    held = _lease(fake, expires_in=600.0 - 7200.0)  # ten minutes left on the holder's and the server's clock
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1, result.err
    assert f"gsg: error: another apply holds the lock '{LOCK}': ci@runner-7 pid 4242, until " in result.err
    assert fake.models.get(held["id"]) == held and _writes(fake) == [("POST", "/v2/models")]


def test_the_lease_apply_writes_expires_on_the_servers_clock(gsg, fake, specs, monkeypatch):
    """Before: written on this host's clock, a host two hours behind wrote a lease every other host (and the
    server) saw as expired at once, free to take over mid-apply."""
    posted: list[dict] = []
    _server_clock(fake, monkeypatch, 7200.0, posted)
    started = time.time()
    assert gsg("apply", str(specs), "--yes").code == 0
    expires = int(posted[0]["meta"][LEASE_EXPIRES])
    assert started + 7200 + 1800 - 5 <= expires <= time.time() + 7200 + 1800 + 5


def test_an_expired_lease_is_still_taken_over_on_the_servers_clock(gsg, fake, specs, monkeypatch):
    posted: list[dict] = []
    _server_clock(fake, monkeypatch, 7200.0, posted)  # expired on the server's clock, live on ours
    _lease(fake, expires_in=3600.0)
    assert gsg("apply", str(specs), "--yes").code == 0
    assert not any(is_lease(m) for m in fake.models.values())


@pytest.mark.parametrize("meanwhile", ["taken over, id reused", "taken over, new id"])
def test_a_takeover_never_deletes_a_lease_another_apply_took_over_meanwhile(gsg, fake, specs, monkeypatch,
                                                                            meanwhile):
    """Before: the takeover deleted the expired lease's id without looking again, so when another apply had taken
    it over between the look and the delete (a server reusing the id), its live lease was deleted and both applies
    wrote at once."""
    import gpustack_guard.wiring as wiring

    stale = _lease(fake, expires_in=-1, token="a-dead-run")
    live = {LEASE: "ci@runner-9 pid 99", LEASE_EXPIRES: str(int(time.time() + 600)), LEASE_TOKEN: "a-live-run",
            LEASE_HOST: "runner-9", LEASE_PID: "99"}

    def handle(request: httpx.Request) -> httpx.Response:
        response = fake.handle(request)
        if request.method == "GET" and request.url.params.get("search") == LOCK and stale["id"] in fake.models:
            # right after this look shows the expired lease, another apply takes it over
            if meanwhile == "taken over, id reused":
                fake.models[stale["id"]]["meta"] = dict(live)
            else:
                del fake.models[stale["id"]]
                fake.create_unmanaged(LOCK, replicas=0, backend_parameters=[], gpu_selector=None, meta=dict(live))
        return response

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1, result.err
    assert f"gsg: error: another apply holds the lock '{LOCK}': ci@runner-9 pid 99, until " in result.err
    assert [m["meta"][LEASE_TOKEN] for m in fake.models.values()] == ["a-live-run"]
    assert not [w for w in _writes(fake) if w[0] == "DELETE"]  # the other apply removed the dead lease, not us
