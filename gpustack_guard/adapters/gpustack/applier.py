"""Carrying out a plan against GPUStack: ordered, bounded-parallel, stop-on-failure, re-runnable.

Order: deletes (highest wave first) and scale-downs free GPUs, then updates, then creates (lowest wave
first). A failure stops new work, lets in-flight calls finish, and the outcome names what was done, what
failed and what was not attempted. Re-running converges: a POST whose answer was lost is followed by a
lookup by name before any retry, and nothing without gsg's marker is ever changed.

Ctrl-C or SIGTERM is the same kind of stop: no new step starts, the steps in flight finish whole (an update's
PUT is followed by its restart), and the outcome says what was done. A second signal stops waiting for them.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Callable, Iterator, Mapping

from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient
from gpustack_guard.adapters.gpustack.fields import Item
from gpustack_guard.core.deploy.plan import CREATE, DELETE, REPLACE, UPDATE, Change, live_digest
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.ownership import PROJECT, PROJECT_OWNED, SPEC_DIGEST, UNMANAGED, marker, owner

STEP_KINDS = {DELETE: ("delete",), UPDATE: ("update",), CREATE: ("create",), REPLACE: ("delete", "create")}
_NOT_ATTEMPTED = object()  # a step skipped because another in its group failed first


@dataclass(frozen=True)
class Step:
    kind: str  # delete | update | create
    change: Change


@dataclass
class Outcome:
    done: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    not_attempted: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {CREATE: 0, UPDATE: 0, REPLACE: 0, DELETE: 0})
    interrupted: str | None = None  # the signal that stopped the run ("SIGINT", "SIGTERM"), if one did
    unconfirmed: list[str] = field(default_factory=list)  # changed, but the interrupted --wait did not see ready

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted


def ordered_groups(changes: list[Change]) -> list[list[Step]]:
    """Pure: the groups that run one after another; steps within a group are independent."""
    deletes: dict[int, list[Step]] = {}
    updates: dict[int, list[Step]] = {}
    creates: dict[int, list[Step]] = {}
    scale_downs: list[Step] = []
    for c in changes:
        if c.action in (DELETE, REPLACE):
            deletes.setdefault(c.wave, []).append(Step("delete", c))
        if c.action in (CREATE, REPLACE):
            creates.setdefault(c.wave, []).append(Step("create", c))
        if c.action == UPDATE:
            (scale_downs if c.scale_down_only else updates.setdefault(c.wave, [])).append(Step("update", c))
    groups = [deletes[w] for w in sorted(deletes, reverse=True)]
    if scale_downs:
        groups.append(scale_downs)
    groups += [updates[w] for w in sorted(updates)] + [creates[w] for w in sorted(creates)]
    return groups


def unresolved_references(changes: list[Change]) -> list[str]:
    return [f"{c.name}: ${{{name}}}" for c in changes
            if c.rendered is not None and c.action in (CREATE, UPDATE, REPLACE) for name in c.rendered.unresolved_env]


def _live_id(change: Change) -> int:
    """The id of the live model an update, replace or delete acts on: the plan records it on each of them."""
    assert change.live is not None, f"{change.action} of '{change.name}' without the live model"
    return change.live["id"]


class Applier:
    def __init__(self, client: GPUStackClient, cluster_ids: Mapping[str, int], *, restart: bool = True,
                 wait: bool = False, wait_timeout: float = 900.0, poll: float = 2.0, concurrency: int = 8,
                 progress: Callable[[str], None] = lambda _m: None, sleep: Callable[[float], None] = time.sleep,
                 expected: dict[str, dict] | None = None):
        self.client, self.cluster_ids = client, cluster_ids
        self.restart, self.wait, self.wait_timeout, self.poll = restart, wait, wait_timeout, poll
        self.concurrency, self.progress, self.sleep = concurrency, progress, sleep
        self.expected = expected or {}  # name -> {"id", "updated_at", "digest"} seen by a saved plan
        self._stop = threading.Event()  # set by Ctrl-C / SIGTERM: start nothing new
        self._signal: str | None = None

    # --- the run ---------------------------------------------------------------------------------------
    def run(self, changes: list[Change]) -> Outcome:
        outcome = Outcome()
        groups = ordered_groups(changes)
        largest = max((len(g) for g in groups), default=1)
        pool = ThreadPoolExecutor(max_workers=max(1, min(self.concurrency, largest)))
        self._pool = pool  # one pool for every group: threads are started once
        finished = False
        try:
            with self._stop_on_signals():
                self._run_groups(groups, outcome)
            finished = True
        finally:
            # after a second signal (or any exception), do not wait for calls in flight: the process is leaving
            pool.shutdown(wait=finished, cancel_futures=True)
        outcome.interrupted = self._signal
        done = set(outcome.done)
        for c in changes:  # a change counts once all its steps are done (a replace is a delete and a create)
            if c.action in STEP_KINDS and all(f"{kind} {c.name}" in done for kind in STEP_KINDS[c.action]):
                outcome.counts[c.action] += 1
        return outcome

    @contextmanager
    def _stop_on_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM set the stop flag instead of raising wherever the main thread happens to be; a
        second one raises KeyboardInterrupt (stop waiting). Only the main thread may install handlers."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        previous: dict[int, Any] = {}  # what signal.signal returned: a handler, SIG_DFL / SIG_IGN or None

        def stop(signum: int, frame: FrameType | None) -> None:
            if self._stop.is_set():  # the second one: hand it to whoever handled it before (the CLI: exit 130)
                handler = previous.get(signum)
                if callable(handler):
                    handler(signum, frame)
                raise KeyboardInterrupt
            self._signal = signal.Signals(signum).name
            self._stop.set()

        previous.update({s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)})
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def _run_groups(self, groups: list[list[Step]], outcome: Outcome) -> None:
        for index, group in enumerate(groups):
            touched = self._run_group(group, outcome)
            if outcome.failed or self._stop.is_set():
                outcome.not_attempted += [f"{s.kind} {s.change.name}" for g in groups[index + 1:] for s in g]
                break
            if self.wait and touched:
                try:
                    outcome.unconfirmed += self._wait_ready(touched)
                except GsgError as exc:
                    outcome.failed.append(("wait", str(exc)))
                if outcome.failed or self._stop.is_set():
                    outcome.not_attempted += [f"{s.kind} {s.change.name}" for g in groups[index + 1:] for s in g]
                    break

    def _run_group(self, group: list[Step], outcome: Outcome) -> list[dict]:
        """Run one group with at most `concurrency` calls in flight; after a failure nothing new starts."""
        touched: list[dict] = []
        stop = threading.Event()

        def attempt(step: Step):
            if stop.is_set() or self._stop.is_set():
                return _NOT_ATTEMPTED
            try:
                return self._do(step)
            except (ApiError, GsgError):
                stop.set()
                raise

        futures = [(step, self._pool.submit(attempt, step)) for step in group]
        # results in submission order, so the outcome reads like the plan
        for step, future in futures:
            label = f"{step.kind} {step.change.name}"
            try:
                model = future.result()
            except (ApiError, GsgError) as exc:
                outcome.failed.append((step.change.name, f"{step.kind}: {exc}"))
                continue
            if model is _NOT_ATTEMPTED:
                outcome.not_attempted.append(label)
                continue
            outcome.done.append(label)
            self.progress(f"{'deleted' if step.kind == 'delete' else step.kind + 'd'} {step.change.name}")
            if model and step.kind != "delete":
                touched.append(model)
        return touched

    def _do(self, step: Step) -> dict | None:
        return {"delete": self._delete, "update": self._update, "create": self._create}[step.kind](step.change)

    # --- guards ----------------------------------------------------------------------------------------
    def _fresh(self, change: Change) -> dict | None:
        """Re-read the live object: refuse when it is no longer ours or changed since a saved plan."""
        try:
            model = self.client.get_model(_live_id(change))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        if not self._still_ours(change, model):
            raise GsgError(f"'{change.name}' is now owned by {owner(model).describe()}, not as planned; "
                           "refusing to touch it")
        expected = self.expected.get(change.name)
        # content, not updated_at: GPUStack's scheduler rewrites rows on its own (categories, gpus)
        if expected and live_digest(model) != expected.get("digest"):
            raise GsgError(f"'{change.name}' changed on the server since the plan was made; plan again")
        return model

    @staticmethod
    def _still_ours(change: Change, model: dict) -> bool:
        """Ownership as the plan judged it: a delete only of this project's own model; an update of a model whose
        owner is unchanged since the plan (which decided it may be managed) or is this project by now."""
        now = owner(model)
        ours = now.kind == PROJECT_OWNED and change.project is not None and now.project == change.project
        if change.action == DELETE:
            return ours
        planned = change.owner
        return ours or (planned is not None and (now.kind, now.project) == (planned.kind, planned.project))

    # --- operations ------------------------------------------------------------------------------------
    def _delete(self, change: Change) -> None:
        if self._fresh(change) is None:
            return  # already gone: converged
        try:
            self.client.delete_model(_live_id(change))
        except ApiError as exc:
            if exc.status != 404:
                raise

    def _cluster_id(self, change: Change) -> int:
        if change.cluster is not None and change.cluster in self.cluster_ids:
            return self.cluster_ids[change.cluster]
        if change.cluster is None and len(self.cluster_ids) == 1:
            return next(iter(self.cluster_ids.values()))
        raise GsgError(f"'{change.name}': cluster '{change.cluster}' not found on the server")

    def _create_body(self, change: Change) -> dict:
        return {**change.rendered.request_body(create=True), "cluster_id": self._cluster_id(change),
                "meta": self._marker(change)}

    def _marker(self, change: Change) -> dict:
        # The digest covers the masked document: no secret, not even hashed, goes into meta.
        return marker(change.marker_spec or change.spec_file or "", change.rendered.document(), change.project)

    def _create(self, change: Change) -> dict:
        body = self._create_body(change)
        try:
            return self.client.create_model(body)
        except ApiError as exc:
            if exc.status is not None and exc.status < 500 and exc.status != 409:
                raise
            # The answer was lost (timeout, reset, 5xx) or the name exists: look before trying again.
            existing = self.client.find_model(change.name)
            if existing is not None:
                meta = existing.get("meta") or {}
                if owner(existing).kind != UNMANAGED and meta.get(SPEC_DIGEST) == body["meta"][SPEC_DIGEST] \
                        and meta.get(PROJECT) == body["meta"].get(PROJECT):
                    return existing  # our POST went through after all
                raise GsgError(f"'{change.name}' appeared on the server meanwhile and is not this spec's; "
                               "plan again") from None
            if exc.status == 409:
                raise
            return self.client.create_model(body)

    def _update_body(self, change: Change, live: dict) -> dict:
        body = change.rendered.request_body()  # name, source and its id are always in it, as PUT requires
        # GPUStack's validator rewrites this field when a PUT omits it: always send it.
        body.setdefault("distributed_inference_across_workers", live.get("distributed_inference_across_workers"))
        body["meta"] = {**(live.get("meta") or {}), **self._marker(change)}
        return body

    def _update(self, change: Change) -> dict:
        live = self._fresh(change)
        if live is None:
            raise GsgError(f"'{change.name}' disappeared from the server since the plan; plan again")
        model = self.client.update_model(live["id"], self._update_body(change, live))
        if change.restart and self.restart:
            try:
                self.client.restart_model(live["id"])
            except ApiError as exc:
                if exc.status != 409:  # 409: a restart is already in flight, which is what we want
                    raise
        return model

    # --- --wait ----------------------------------------------------------------------------------------
    def _wait_ready(self, models: list[dict]) -> list[str]:
        """Poll until every model is ready; the names still pending when a signal stopped the wait."""
        deadline = time.monotonic() + self.wait_timeout
        pending = {m["id"]: m for m in models}
        restarts: dict[int, int] = {}
        self.client.extend_deadline(self.wait_timeout)  # waiting is what the user asked for: not a slow server
        while pending and not self._stop.is_set():
            for mid in list(pending):
                model = self.client.get_model(mid)
                for inst in self.client.model_instances(model_id=mid, keep=_instance_state):
                    if inst.get("state") == "error":
                        raise GsgError(f"'{model['name']}' instance {inst.get('name')} is in error: "
                                       f"{inst.get('state_message') or 'no message'}")
                    count = inst.get("restart_count") or 0
                    if count > restarts.setdefault(inst["id"], count):
                        raise GsgError(f"'{model['name']}' instance {inst.get('name')} restarted ({count} times): "
                                       f"{inst.get('state_message') or 'likely OOM after a healthy start'}")
                shown = Item("GET", f"/v2/models/{mid}", "the answer", model)
                ready, wanted = shown.count("ready_replicas", 0), shown.count("replicas", 0)
                self.progress(f"waiting: {model['name']} {ready}/{wanted} ready")
                if ready >= wanted:
                    del pending[mid]
            if pending and not self._stop.is_set():
                if time.monotonic() > deadline:
                    raise GsgError(f"timed out waiting for {', '.join(m['name'] for m in pending.values())}")
                if self.sleep is time.sleep:
                    self._stop.wait(self.poll)  # a signal ends the pause at once
                else:
                    self.sleep(self.poll)
        return sorted(m["name"] for m in pending.values())


def _instance_state(index: int, raw) -> dict:
    """What --wait reads of an instance, type-checked (a wrong field is one line, not a crash mid-apply)."""
    item = Item("GET", "/v2/model-instances", f"item {index}", raw)
    return {"id": item.get("id", int), "name": item.get("name", str, None), "state": item.get("state", str, None),
            "state_message": item.get("state_message", str, None), "restart_count": item.count("restart_count", 0)}


def describe(outcome: Outcome) -> str:
    c = outcome.counts
    if outcome.ok:
        return (f"Apply complete: {c[CREATE]} created, {c[UPDATE]} updated, {c[REPLACE]} replaced, "
                f"{c[DELETE]} deleted.")
    if outcome.interrupted:
        lines = [f"Apply interrupted ({outcome.interrupted}): nothing new was started; the steps in flight "
                 "were finished."]
    else:
        lines = ["Apply stopped on a failure."]
    # Names and failure reasons (a server's state message) are one escaped line each (core/echo.py).
    lines.append("  done: " + (untrusted(", ".join(outcome.done)) or "nothing"))
    lines += [f"  failed: {untrusted(name)}: {untrusted(why)}" for name, why in outcome.failed]
    lines.append("  not attempted: " + (untrusted(", ".join(outcome.not_attempted)) or "nothing"))
    if outcome.unconfirmed:
        lines.append("  changed, not yet seen ready (the wait was stopped): "
                     + untrusted(", ".join(outcome.unconfirmed)))
    lines.append("Run apply again: it picks up from the live state." if outcome.interrupted and not outcome.failed
                 else "Fix the cause and run apply again: it picks up from the live state.")
    return "\n".join(lines)


