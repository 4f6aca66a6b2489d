"""The apply lock (pure): a lease record in GPUStack itself, so two applies against one server never interleave.

GPUStack 2.3 has no lock or lease object. The nearest thing with an atomic "create if absent" is a model: names
are unique per organisation (a second POST of a name is 409 AlreadyExists). So the lease is a model that never
runs (replicas 0, no route) named after the project, holding who took it and until when in its meta; the first
POST wins, the others are told who holds it. An expired lease (a killed apply) is taken over. gsg hides leases
from plan, drift, export and the fleet: they are bookkeeping, not deployments.
"""

from __future__ import annotations

from gpustack_guard.core.values import frozen_value

LEASE = "gsg.dev/lease"  # meta: marks a model as gsg's lease (the holder's description)
LEASE_EXPIRES = "gsg.dev/lease-expires"  # meta: epoch seconds after which the lease may be taken over
LEASE_TOKEN = "gsg.dev/lease-token"  # meta: random per apply run: tells this run's lease from any other
LEASE_HOST = "gsg.dev/lease-host"  # meta: host and process of the holder, to tell a lease left by a dead apply
LEASE_PID = "gsg.dev/lease-pid"
LEASE_PREFIX = "gsg-lock"
# The last second of the year 9999: an expiry past it (1e20, 'inf') was shown with time.gmtime, an OverflowError
# and exit 3 on apply; as with any expiry that cannot be read, such a lease counts as expired.
LATEST_EXPIRY = 253_402_300_799.0
LEASE_SOURCE_REPO = "gpustack-guard/apply-lock"  # never downloaded: a model with 0 replicas is never scheduled
DEFAULT_LEASE_SECONDS = 1800  # past the longest apply without --wait; --wait adds its own timeout


@frozen_value(eq=True, repr=True)
class Holder:
    """Who takes a lease: shown to people (text), matched by the token, and host + pid to spot a dead holder."""

    text: str
    token: str
    host: str
    pid: int


@frozen_value(eq=True, repr=True)
class Lease:
    """A lease as the server holds it: its model, holder, token and expiry."""

    name: str
    holder: str
    expires_at: float
    model_id: int | None = None
    token: str = ""
    host: str = ""
    pid: int = 0

    def expired(self, now: float) -> bool:
        return now >= self.expires_at

    def held_by(self, holder: Holder) -> bool:
        return bool(self.token) and self.token == holder.token

    def left_by_an_earlier_run_of(self, holder: Holder) -> bool:
        """Same host and process, another token: a run of this process that has ended (one apply at a time)."""
        return self.host == holder.host and self.pid == holder.pid and self.token != holder.token


def lease_seconds(command_deadline: float, waits: int, wait_timeout: float) -> float:
    """How long a lease must last so that it cannot expire under its own apply: every request of the command
    ends within the command deadline, and each --wait (one per group of writes) may add its whole timeout."""
    return max(DEFAULT_LEASE_SECONDS, command_deadline) + waits * wait_timeout


def lease_name(project: str | None) -> str:
    """One lease per project (two projects write disjoint models); one per server without a project."""
    return f"{LEASE_PREFIX}-{project}" if project else LEASE_PREFIX


def is_lease(model: dict) -> bool:
    meta = model.get("meta")
    return isinstance(meta, dict) and LEASE in meta


def deployments(models: list[dict]) -> list[dict]:
    """The live models that are deployments: gsg's leases left out."""
    return [m for m in models if not is_lease(m)]


def lease_body(name: str, holder: Holder, now: float, seconds: float, cluster_id: int | None) -> dict:
    """The model that is the lease: stopped, unrouted, described so that the GPUStack UI says who holds it."""
    body = {"name": name, "source": "huggingface", "huggingface_repo_id": LEASE_SOURCE_REPO, "replicas": 0,
            "categories": [], "enable_model_route": False,
            "description": f"gsg apply lock held by {holder.text} (not a deployment; expires {int(now + seconds)})",
            "meta": {LEASE: holder.text, LEASE_EXPIRES: str(int(now + seconds)), LEASE_TOKEN: holder.token,
                     LEASE_HOST: holder.host, LEASE_PID: str(holder.pid)}}
    if cluster_id is not None:
        body["cluster_id"] = cluster_id
    return body


def lease_of(model: dict) -> Lease | None:
    """The lease a model holds; None for a model that is not one. A lease whose expiry cannot be read counts
    as expired: a stuck lock is worse than a lock taken over."""
    if not is_lease(model):
        return None
    meta = model["meta"]
    try:
        expires = float(meta.get(LEASE_EXPIRES) or 0)
    except (TypeError, ValueError):
        expires = 0.0
    if not 0.0 <= expires <= LATEST_EXPIRY:  # NaN too: gsg writes whole epoch seconds, never these
        expires = 0.0
    pid = str(meta.get(LEASE_PID) or "")
    return Lease(str(model.get("name")), str(meta.get(LEASE)), expires,
                 model.get("id") if isinstance(model.get("id"), int) else None, str(meta.get(LEASE_TOKEN) or ""),
                 str(meta.get(LEASE_HOST) or ""),
                 # ASCII digits only: str.isdigit() also takes '²', which int() refuses (an internal error on apply)
                 int(pid) if pid.isascii() and pid.isdigit() and len(pid) < 10 else 0)
