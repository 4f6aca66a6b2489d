"""Taking and giving back the apply lease (core/deploy/lease.py) on a GPUStack server."""

from __future__ import annotations

import getpass
import os
import secrets
import socket
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient
from gpustack_guard.core.deploy.lease import Holder, Lease, lease_body, lease_name, lease_of
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.errors import GsgError

RETRY_SECONDS = 2.0  # between attempts while --lock-timeout lasts
MAX_LOCK_WAIT = 3600.0  # --lock-timeout's ceiling (the CLI's max=)


def this_run() -> Holder:
    """Who takes the lease: user, host and process for people (and a CI job id), a fresh token for matching."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in a container without a passwd entry
        user = "unknown"
    host, pid = socket.gethostname(), os.getpid()
    ci = os.environ.get("GITHUB_RUN_ID") or os.environ.get("CI_JOB_ID") or os.environ.get("BUILD_TAG")
    text = f"{user}@{host} pid {pid}" + (f" (CI job {ci})" if ci else "")
    return Holder(text, secrets.token_hex(8), host, pid)


class LeaseHeld(GsgError):
    pass


def _lease_among(models: list[dict]) -> Lease | None:
    return next((lease for lease in map(lease_of, models) if lease is not None), None)


def _current(client: GPUStackClient, name: str) -> Lease | None:
    return _lease_among(client.find_models(name))


def _holder_gone(lease: Lease, holder: Holder) -> bool:
    """The lease's process on this very host has ended (a killed or crashed apply): its lease is taken over at
    once instead of blocking every apply until it expires. Another host's process cannot be asked."""
    if lease.host != holder.host or lease.pid <= 0 or lease.pid == holder.pid:
        return False
    try:
        os.kill(lease.pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, under another user
        return False
    return False


def _take(client: GPUStackClient, name: str, holder: Holder, seconds: float, cluster_id: int | None,
          now: float) -> Lease:
    """One attempt: the create wins, or the current lease is named. A lease that expired or that an earlier
    run of this process left is taken over (once); a create whose answer was lost is found by its token."""
    for _ in range(2):
        try:
            made = lease_of(client.create_model(lease_body(name, holder, now, seconds, cluster_id)))
        except ApiError as exc:
            if exc.status == 409:
                made = None
            else:
                stored = _current(client, name)  # a 5xx or a timeout after the server stored it
                if stored is not None and stored.held_by(holder):
                    return stored
                raise
        else:
            if made is None or not made.held_by(holder):
                raise GsgError(f"the server answered the lock's create with another model ('{untrusted(name)}'); "
                               "nothing was applied")
            return made
        named = client.find_models(name)  # one look: the lease, or the model that is not one
        current = _lease_among(named)
        if current is None:
            if named:
                raise GsgError(f"a model named '{untrusted(name)}' exists and is not gsg's apply lock: rename it, "
                               "or apply with --no-lock")
            continue  # released between our create and our look: try once more
        stale = current.expired(now) or current.left_by_an_earlier_run_of(holder) or _holder_gone(current, holder)
        if not stale or current.model_id is None:
            until = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(current.expires_at))
            raise LeaseHeld(f"another apply holds the lock '{untrusted(name)}': {untrusted(current.holder)}, "
                            f"until {until}; wait (--lock-timeout SECONDS), or delete that model in GPUStack if "
                            "its apply is gone")
        if _still_the_same(client, current):
            try:
                client.delete_model(current.model_id)
            except ApiError as exc:
                if exc.status != 404:  # 404: another apply took it over first; the next create tells
                    raise
    raise LeaseHeld(f"the lock '{untrusted(name)}' was taken by another apply at the same moment")


def _still_the_same(client: GPUStackClient, stale: Lease) -> bool:
    """Right before a takeover deletes it by id, the id still holds the stale lease (its token): another apply
    may have taken it over meanwhile, and a server that reuses ids would hand that apply's live lease the id."""
    assert stale.model_id is not None
    try:
        now = lease_of(client.get_model(stale.model_id))
    except ApiError as exc:
        if exc.status == 404:
            return False  # gone already: the next create tells who holds it now
        raise
    return now is not None and now.name == stale.name and now.token == stale.token


def ensure_held(client: GPUStackClient, lease: Lease) -> None:
    """Between apply's groups of writes: the lease's id still holds this run's lease (its token). Removed by hand
    (as a held lock's message suggests) or taken over, another apply may be writing the same models by now, so
    this one writes nothing more."""
    if lease.model_id is not None and not _still_the_same(client, lease):
        raise GsgError(f"the apply lock '{untrusted(lease.name)}' was removed or taken over during this apply "
                       f"(model id {lease.model_id} no longer holds it); nothing more is written: plan again")


def checked_lock_wait(wait: float) -> float:
    """`wait` when it is a --lock-timeout gsg honours; one line otherwise (the CLI checks it on parsing too)."""
    if not 0 <= wait <= MAX_LOCK_WAIT:  # also nan, which no deadline ever passes: a retry loop without end
        raise GsgError(f"--lock-timeout must be between 0 and {MAX_LOCK_WAIT:g} seconds, not {wait:g}")
    return wait


@contextmanager
def apply_lease(client: GPUStackClient, project: str | None, *, seconds: float, wait: float,
                cluster_id: int | None, note: Callable[[str], None], clock: Callable[[], float] = time.time,
                sleep: Callable[[float], None] = time.sleep) -> Iterator[Lease]:
    """Hold the project's apply lease for the block; give it back after, whatever happened in it."""
    checked_lock_wait(wait)
    name, holder = lease_name(project), this_run()
    deadline = clock() + wait
    while True:
        try:
            # the server's clock, not this host's: every holder writes and judges expiries on the one clock
            lease = _take(client, name, holder, seconds, cluster_id, client.server_time(clock()))
            break
        except LeaseHeld as exc:
            if clock() >= deadline:
                raise
            note(f"gsg: {exc}; retrying")
            sleep(min(RETRY_SECONDS, max(0.0, deadline - clock())))
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM while the create was in flight: it may have landed
            _give_back_if_taken(client, name, holder)
            raise
    try:
        yield lease
    finally:
        _release(client, lease, note)


def _give_back_if_taken(client: GPUStackClient, name: str, holder: Holder) -> None:
    """An interrupted acquisition leaves no lease behind it: one look for this run's token, one delete."""
    try:
        current = _current(client, name)
        if current is not None and current.held_by(holder) and current.model_id is not None:
            client.delete_model(current.model_id)
    except GsgError:
        pass  # it expires by itself; the interrupt is what the user is told about


def _release(client: GPUStackClient, lease: Lease, note: Callable[[str], None]) -> None:
    if lease.model_id is None:
        return
    for attempt in range(2):
        try:
            # the id must still hold this run's lease: deleted meanwhile (by hand, as a held lock's message
            # suggests, or taken over), a server that reuses ids may have given it to another apply's lease or
            # to a deployment, which a delete by the old id would remove
            if not _still_the_same(client, lease):
                note(f"gsg: warning: the apply lock '{untrusted(lease.name)}' was removed or taken over during "
                     f"this apply; model id {lease.model_id} is no longer it and is left alone")
                return
            client.delete_model(lease.model_id)
            return
        except ApiError as exc:
            if exc.status == 404:
                return  # already gone (taken over after it expired)
            if attempt:
                note(f"gsg: warning: the apply lock '{untrusted(lease.name)}' was not released "
                     f"({untrusted(str(exc))}); it expires by itself, and an apply on this host takes it over "
                     "once this process has ended")
