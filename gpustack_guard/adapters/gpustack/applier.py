"""Carrying out a plan against GPUStack: ordered, bounded-parallel, stop-on-failure, re-runnable.

Order: deletes (highest wave first) and scale-downs free GPUs, then updates, then creates (lowest wave
first). A failure stops new work, lets in-flight calls finish, and the outcome names what was done, what
failed and what was not attempted. Re-running converges: a POST whose answer was lost is followed by a
lookup by name before any retry, and nothing without gsg's marker is ever changed.

Every write is bound to its target (core/deploy/binding.py): the answer of each GET, POST and PUT must be the
model asked for (id, name, gsg's marker), and after each write the model is read again and compared, fields
included. A mismatch fails the step with WrongTarget and nothing further is written. An update that needs a
restart marks the model restart-pending first and clears the mark after the restart, so a run that dies in
between leaves a mark the next plan acts on.

Ctrl-C or SIGTERM is the same kind of stop: no new step starts, the steps in flight finish whole (an update's
PUT is followed by its restart), and the outcome says what was done. A second signal stops waiting for them;
the outcome still says what was done and which steps were abandoned in flight.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Any, Callable, Iterator, Mapping

from gpustack_guard.adapters.gpustack.client import RETRY_STATUS, ApiError, GPUStackClient
from gpustack_guard.adapters.gpustack.fields import Item
from gpustack_guard.core.deploy import binding
from gpustack_guard.core.deploy.ignore import keep_live
from gpustack_guard.core.deploy.plan import (
    CREATE,
    DELETE,
    REPLACE,
    SERVER_VOLATILE,
    UPDATE,
    Change,
    live_digest,
    unapplied,
)
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.ownership import (
    PROJECT,
    PROJECT_OWNED,
    RESTART_PENDING,
    SPEC_DIGEST,
    UNMANAGED,
    marker,
    owner,
)
from gpustack_guard.core.values import frozen_value

STEP_KINDS = {DELETE: ("delete",), UPDATE: ("update",), CREATE: ("create",), REPLACE: ("delete", "create")}
_NOT_ATTEMPTED = object()  # a step skipped because another in its group failed first


class WrongTarget(GsgError):
    """The server answered about, or stored, another model than the one a write targets: apply stops."""


@frozen_value(eq=True, repr=True)
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
    abandoned: list[str] = field(default_factory=list)  # in flight when a second signal stopped the wait for them

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
                 expected: dict[str, dict] | None = None, known_ids: Mapping[int, str] | None = None,
                 lock_held: Callable[[], None] | None = None):
        self.client, self.cluster_ids = client, cluster_ids
        self.cluster_names = {cid: name for name, cid in cluster_ids.items()}
        self.known_ids = dict(known_ids or {})  # id -> name of every live model the plan saw
        self._in_flight: set[str] = set()  # steps started and not yet finished (what a second signal abandons)
        self._ended: dict[str, object] = {}  # step label -> None (done), failure text, or _NOT_ATTEMPTED
        self._reported_failures: list[tuple[str, str]] = []
        self._flight_lock = threading.Lock()
        self.restart, self.wait, self.wait_timeout, self.poll = restart, wait, wait_timeout, poll
        self.concurrency, self.progress, self.sleep = concurrency, progress, sleep
        self.expected = expected or {}  # name -> {"id", "updated_at", "digest"} seen by a saved plan
        self._stop = threading.Event()  # set by Ctrl-C / SIGTERM: start nothing new
        self._signal: str | None = None
        self.lock_held = lock_held  # raises GsgError once the apply lock is no longer this run's

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
        except KeyboardInterrupt:
            self._account_after_second_signal(groups, outcome)  # stop waiting, keep the account
        finally:
            # after a second signal (or any exception), do not wait for calls in flight: the process is leaving
            pool.shutdown(wait=finished, cancel_futures=True)
        outcome.interrupted = self._signal
        done = set(outcome.done)
        for c in changes:  # a change counts once all its steps are done (a replace is a delete and a create)
            if c.action in STEP_KINDS and all(f"{kind} {c.name}" in done for kind in STEP_KINDS[c.action]):
                outcome.counts[c.action] += 1
        return outcome

    def _account_after_second_signal(self, groups: list[list[Step]], outcome: Outcome) -> None:
        """What a second signal leaves: steps finished but not yet reported are counted as they ended, steps still
        running are abandoned (their result is unknown: the next plan shows it), the rest were not attempted."""
        self._signal = self._signal or "SIGINT"
        reported = set(outcome.done) | {label for label, _ in self._reported_failures} | set(outcome.not_attempted)
        with self._flight_lock:
            ended, running = dict(self._ended), set(self._in_flight)
        for step in (s for g in groups for s in g):
            label = f"{step.kind} {step.change.name}"
            if label in reported:
                continue
            if label in running:
                outcome.abandoned.append(label)
            elif label in ended and ended[label] is None:
                outcome.done.append(label)
            elif label in ended and ended[label] is not _NOT_ATTEMPTED:
                outcome.failed.append((step.change.name, f"{step.kind}: {ended[label]}"))
            else:
                outcome.not_attempted.append(label)

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
            if index and self.lock_held is not None:  # the first group follows the lock's take at once
                try:
                    self.lock_held()
                except GsgError as exc:
                    outcome.failed.append(("apply lock", str(exc)))
                    outcome.not_attempted += [f"{s.kind} {s.change.name}" for g in groups[index:] for s in g]
                    break
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
            label = f"{step.kind} {step.change.name}"
            if stop.is_set() or self._stop.is_set():
                self._ended_as(label, _NOT_ATTEMPTED)
                return _NOT_ATTEMPTED
            with self._flight_lock:
                self._in_flight.add(label)
            try:
                model = self._do(step)
            except (ApiError, GsgError) as exc:
                stop.set()
                self._ended_as(label, str(exc))
                raise
            except BaseException as exc:
                self._ended_as(label, f"{type(exc).__name__}")
                raise
            self._ended_as(label, None)
            return model

        futures = [(step, self._pool.submit(attempt, step)) for step in group]
        # results in submission order, so the outcome reads like the plan
        for step, future in futures:
            label = f"{step.kind} {step.change.name}"
            try:
                model = future.result()
            except (ApiError, GsgError) as exc:
                outcome.failed.append((step.change.name, f"{step.kind}: {exc}"))
                self._reported_failures.append((label, str(exc)))
                continue
            if model is _NOT_ATTEMPTED:
                outcome.not_attempted.append(label)
                continue
            outcome.done.append(label)
            self.progress(f"{'deleted' if step.kind == 'delete' else step.kind + 'd'} {step.change.name}")
            if model and step.kind != "delete":
                touched.append(model)
        return touched

    def _ended_as(self, label: str, result: object) -> None:
        """Record how a step ended (None: done; text: its failure; _NOT_ATTEMPTED) for the second-signal account."""
        with self._flight_lock:
            self._in_flight.discard(label)
            self._ended[label] = result

    def _do(self, step: Step) -> dict | None:
        return {"delete": self._delete, "update": self._update, "create": self._create}[step.kind](step.change)

    # --- guards ----------------------------------------------------------------------------------------
    def _bound(self, change: Change, answer: dict, what: str, *, model_id: int | None = None,
               meta: dict[str, str | None] | None = None, cluster_id: int | None = None) -> dict:
        """The answer must be the model the step targets; otherwise stop before anything else is written."""
        problem = binding.mismatch(answer, name=change.name, model_id=model_id, marker=meta, cluster_id=cluster_id)
        if problem:
            raise WrongTarget(f"'{change.name}': {what} {problem}; refusing to go on (nothing more is written)")
        return answer

    def _read_back(self, change: Change, model_id: int, meta: dict[str, str | None], what: str,
                   cluster_id: int | None) -> dict:
        """Re-read a model after a write: the same model, carrying what was written, fields included."""
        return self._compared(change, self._reread(change, model_id, what), model_id, meta, what, cluster_id)

    def _reread(self, change: Change, model_id: int, what: str) -> dict:
        try:
            return self.client.get_model(model_id)
        except ApiError as exc:
            if exc.status == 404:
                raise WrongTarget(f"'{change.name}': model id {model_id} is gone right after {what}; "
                                  "refusing to go on (nothing more is written)") from None
            raise

    def _compared(self, change: Change, model: dict, model_id: int, meta: dict[str, str | None], what: str,
                  cluster_id: int | None) -> dict:
        # the cluster too: a spec without `cluster_name:` compares no cluster field, so a model stored in another
        # cluster than the one sent would pass as applied (and every later plan would show no change)
        self._bound(change, model, f"the re-read after {what}", model_id=model_id, meta=meta, cluster_id=cluster_id)
        missing = unapplied(change.rendered, model, self.cluster_names) if change.rendered is not None else []
        if missing:
            fields = ", ".join(sorted({f.field for f in missing}))
            raise WrongTarget(f"'{change.name}': after {what} the server holds other values than were sent "
                              f"({fields}); refusing to go on (nothing more is written)")
        return model

    def _fresh(self, change: Change) -> dict | None:
        """Re-read the live object: refuse when it is another model, no longer ours or changed since a saved plan."""
        model_id = _live_id(change)
        try:
            model = self.client.get_model(model_id)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        self._bound(change, model, f"GET /v2/models/{model_id}", model_id=model_id)
        if not self._still_ours(change, model):
            raise GsgError(f"'{change.name}': its owner changed since the plan (now: {owner(model).describe()}); "
                           "refusing to touch it")
        # content, not updated_at: GPUStack's scheduler rewrites rows on its own (categories, gpus). Against the
        # saved plan's digest, or this run's own plan: a hand edit, or a recreate under the same id, after the plan
        # (with --no-lock, or while an earlier group was written or waited for) is not written over nor deleted.
        expected = self.expected.get(change.name)
        planned = expected.get("digest") if expected else live_digest(change.live) if change.live else None
        if planned is not None and live_digest(model) != planned:
            raise GsgError(f"'{change.name}' changed on the server since the plan was made "
                           f"({_what_changed(change, model, expected)}); nothing was written to it: plan again")
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
        live = self._fresh(change)
        if live is None:  # already gone: converged, unless the name lives on under another id
            again = self._only_one(change)
            if again is not None:
                raise GsgError(f"'{change.name}': model id {_live_id(change)} is gone, but the server now holds this "
                               f"name as id {again.get('id')} (recreated since the plan); it is not deleted: "
                               "plan again")
            return
        self._delete_bound(change, live)
        try:
            still = self.client.get_model(live["id"])
        except ApiError as exc:
            if exc.status == 404:
                return  # gone, as GPUStack's hard delete leaves it
            raise
        self._bound(change, still, "the re-read after the delete", model_id=live["id"])
        raise WrongTarget(f"'{change.name}': the server answered the delete but still holds model id {live['id']}; "
                          "refusing to go on (nothing more is written)")

    def _delete_bound(self, change: Change, live: dict) -> None:
        """DELETE the model `live` (just read and judged by _fresh), retried after a lost answer or a 502/503/504
        only once a re-read shows the id still holds that very model (id, name, owner, fields): the client never
        retries a DELETE blind, as the first may have landed and the id been reused by another model since."""
        model_id, path = live["id"], f"/v2/models/{live['id']}"
        for attempt in range(self.client.retries + 1):
            try:
                self.client.delete_model(model_id)
                return
            except ApiError as exc:
                if exc.status == 404:
                    return  # gone: the caller's re-read tells whether it is
                if exc.status is not None and exc.status not in RETRY_STATUS or attempt == self.client.retries:
                    raise
                failure = f"{exc.method} {exc.path}: {exc.detail}"
            try:
                again = self._fresh(change)
            except ApiError:
                raise  # the re-read failed: that is the one line
            except GsgError as exc:
                raise WrongTarget(f"'{change.name}': the delete of model id {model_id} may or may not have landed "
                                  f"({failure}) and the id no longer holds the model it was sent for "
                                  f"({_reason(exc, change)}); it is not sent again (nothing more is written)") from None
            if again is None:
                return  # the lost DELETE landed
            self.client.retry_pause("DELETE", path, attempt)

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

    def _only_one(self, change: Change) -> dict | None:
        """The one live model of this spec's name, by an exact-name lookup; two are a refusal."""
        try:
            return binding.one_of_name(self.client.find_models(change.name), change.name)  # type: ignore[return-value]
        except ValueError as exc:
            raise WrongTarget(f"'{change.name}': {exc}; refusing to go on (nothing more is written)") from None

    def _create(self, change: Change) -> dict:
        body = self._create_body(change)
        try:
            answer = self.client.create_model(body)
        except ApiError as exc:
            if exc.status is not None and exc.status < 500 and exc.status != 409:
                raise
            # The answer was lost (timeout, reset, 5xx), unusable (a 2xx without a model) or the name exists: look
            # before trying again.
            existing = self._only_one(change)
            if existing is not None:
                meta = existing.get("meta") or {}
                if owner(existing).kind != UNMANAGED and meta.get(SPEC_DIGEST) == body["meta"][SPEC_DIGEST] \
                        and meta.get(PROJECT) == body["meta"].get(PROJECT):
                    # our POST went through: the lookup that found it is its read-back
                    return self._verify_created(change, dict(existing), body, stored=existing)
                raise GsgError(f"'{change.name}' appeared on the server meanwhile and is not this spec's; "
                               "plan again") from None
            if exc.status == 409:
                raise
            if exc.answered:  # the server took this POST (2xx); a second one could make a duplicate
                raise GsgError(f"'{change.name}': the server took the create (HTTP 2xx) but its answer is no model "
                               f"({exc.detail}) and it lists no model of this name; the create is not sent again "
                               "(a second one could make a duplicate): plan again") from None
            answer = self.client.create_model(body)
        self._bound(change, answer, "the create's answer", meta=body["meta"], cluster_id=body["cluster_id"])
        return self._verify_created(change, answer, body)

    def _verify_created(self, change: Change, answer: dict, body: dict, stored: dict | None = None) -> dict:
        taken = binding.taken_id(answer.get("id"), change.name, self.known_ids)
        if taken:
            raise WrongTarget(f"'{change.name}': the create's answer {taken}; refusing to go on "
                              "(nothing more is written)")
        if stored is None:
            stored = self._only_one(change)  # by name: a second model of this name is a duplicate, not success
        if stored is None:
            raise WrongTarget(f"'{change.name}': the server answered the create (id {answer.get('id')}) but lists "
                              "no model of this name; refusing to go on (nothing more is written)")
        if stored.get("id") != answer.get("id"):
            raise WrongTarget(f"'{change.name}': the create answered id {answer.get('id')} but the server lists "
                              f"this name as id {stored.get('id')}; refusing to go on (nothing more is written)")
        # the lookup's item is the stored model, as a GET of its id would show it: it is the read-back
        return self._compared(change, dict(stored), answer["id"], dict(body["meta"]), "the create",
                              body["cluster_id"])

    def _update_body(self, change: Change, live: dict, *, restart_pending: bool) -> dict:
        body = change.rendered.request_body()  # name, source and its id are always in it, as PUT requires
        # PUT replaces the whole document: what the spec leaves to another manager keeps its live value
        body = keep_live(body, live, change.rendered.spec.guard.ignore_differences, change.rendered.family)
        # GPUStack's validator rewrites this field when a PUT omits it: always send it.
        body.setdefault("distributed_inference_across_workers", live.get("distributed_inference_across_workers"))
        meta = {**(live.get("meta") or {}), **self._marker(change)}
        meta.pop(RESTART_PENDING, None)
        if restart_pending:
            meta[RESTART_PENDING] = meta[SPEC_DIGEST]
        body["meta"] = meta
        return body

    def _put(self, change: Change, live: dict, body: dict, what: str) -> dict:
        """One PUT, bound: its answer and a re-read are this model, still in its cluster, with the marker sent (the
        pending mark too)."""
        model_id, cluster_id = live["id"], live.get("cluster_id")
        wanted: dict[str, str | None] = {k: v for k, v in body["meta"].items() if k.startswith("gsg.dev/")}
        wanted.setdefault(RESTART_PENDING, None)
        try:
            answer = self.client.update_model(model_id, body)
        except ApiError as exc:
            if exc.status == 404:  # deleted between the re-read and the PUT: never recreated behind anyone's back
                raise GsgError(f"'{change.name}': model id {model_id} was deleted on the server while apply "
                               f"updated it ({exc.method} {exc.path}: HTTP 404); it is not recreated: plan again"
                               ) from None
            raise
        self._bound(change, answer, f"the answer to {what}", model_id=model_id, meta=wanted, cluster_id=cluster_id)
        return self._read_back(change, model_id, wanted, what, cluster_id)

    def _update(self, change: Change) -> dict:
        live = self._fresh(change)
        if live is None:
            raise GsgError(f"'{change.name}' disappeared from the server since the plan; plan again")
        restart = change.restart and self.restart
        model = self._put(change, live, self._update_body(change, live, restart_pending=restart), "the update")
        if restart:
            try:
                self.client.restart_model(live["id"])
            except ApiError as exc:
                if exc.status != 409:  # 409: a restart is already in flight, which is what we want
                    raise
            model = self._put(change, live, self._update_body(change, self._after_restart(change, model),
                                                              restart_pending=False),
                              "clearing the restart-pending mark")
        return model

    def _after_restart(self, change: Change, written: dict) -> dict:
        """The model read again after its restart: it must still be what the update wrote (the restart's own
        fields aside), or the PUT that clears the mark, a whole document, would put back what someone changed
        meanwhile. Refused, the mark stays and the next apply acts on it."""
        model_id = written["id"]
        wanted = {k: v for k, v in (written.get("meta") or {}).items() if k.startswith("gsg.dev/")}
        model = self._reread(change, model_id, "the restart")
        self._bound(change, model, "the re-read after the restart", model_id=model_id, meta=wanted,
                    cluster_id=written.get("cluster_id"))
        if live_digest(model) != live_digest(written):
            before = replace(change, live=written)
            raise GsgError(f"'{change.name}' changed on the server while apply restarted it "
                           f"({_what_changed(before, model, None)}); the restart-pending mark stays for the next "
                           "apply: plan again")
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
                # bound as every read of apply: another model's ready count would pass this one as ready
                problem = binding.mismatch(model, name=pending[mid]["name"], model_id=mid)
                if problem:
                    raise WrongTarget(f"'{pending[mid]['name']}': GET /v2/models/{mid} while waiting {problem}; "
                                      "refusing to go on (nothing more is written)")
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


def _reason(exc: GsgError, change: Change) -> str:
    """A refusal's reason for a message that names the model and says what happens itself: without the "'name': "
    it starts with and the "; refusing ..." (or "; plan again") it ends with."""
    text = str(exc)
    prefix = f"'{change.name}'"
    text = text[len(prefix):].lstrip(": ") if text.startswith(prefix) else text
    return text.rpartition("; ")[0] or text


CHANGED_FIELDS_SHOWN = 6  # of a model changed since the plan, the fields its error names


def _what_changed(change: Change, model: dict, expected: dict | None) -> str:
    """The fields of the live model that differ from what the plan saw (a saved plan kept only its id)."""
    if expected and expected.get("id") is not None and expected.get("id") != model.get("id"):
        return f"it was model id {expected.get('id')} then, it is id {model.get('id')} now: deleted and recreated"
    if expected or change.live is None:
        return "its fields"
    then, now = change.live, model
    # a key on one side only differs too (null beside absent is a different digest)
    keys = sorted(k for k in set(then) | set(now) if k not in SERVER_VOLATILE
                  and (k in then, then.get(k)) != (k in now, now.get(k)))
    if not keys:  # equal to Python, not in the digest's JSON (1 and 1.0, 1 and true)
        return "its fields"
    shown = ", ".join(untrusted(str(k)[:40]) for k in keys[:CHANGED_FIELDS_SHOWN])
    more = "..." if len(keys) > CHANGED_FIELDS_SHOWN else ""
    return shown + more + (": recreated under the same id" if "created_at" in keys else "")


def _instance_state(index: int, raw) -> dict:
    """What --wait reads of an instance, type-checked (a wrong field is one line, not a crash mid-apply)."""
    item = Item("GET", "/v2/model-instances", f"item {index}", raw)
    return {"id": item.get("id", int), "name": item.get("name", str, None), "state": item.state("state", None),
            "state_message": item.get("state_message", str, None), "restart_count": item.count("restart_count", 0)}


def describe(outcome: Outcome) -> str:
    c = outcome.counts
    if outcome.ok:
        return (f"Apply complete: {c[CREATE]} created, {c[UPDATE]} updated, {c[REPLACE]} replaced, "
                f"{c[DELETE]} deleted.")
    if outcome.interrupted:
        lines = [f"Apply interrupted ({outcome.interrupted}): nothing new was started; the steps in flight "
                 "were finished." if not outcome.abandoned else
                 f"Apply interrupted ({outcome.interrupted}, twice): nothing new was started; the wait for the steps "
                 "in flight was stopped."]
    else:
        lines = ["Apply stopped on a failure."]
    # Names and failure reasons (a server's state message) are one escaped line each (core/echo.py).
    lines.append("  done: " + (", ".join(untrusted(d) for d in outcome.done) or "nothing"))
    lines += [f"  failed: {untrusted(name)}: {untrusted(why)}" for name, why in outcome.failed]
    lines.append("  not attempted: " + (", ".join(untrusted(n) for n in outcome.not_attempted) or "nothing"))
    if outcome.abandoned:
        lines.append("  abandoned in flight (a second signal; the server may or may not have done them, the next "
                     "plan shows it): " + ", ".join(untrusted(n) for n in outcome.abandoned))
    if outcome.unconfirmed:
        lines.append("  changed, not yet seen ready (the wait was stopped): "
                     + untrusted(", ".join(outcome.unconfirmed)))
    lines.append("Run apply again: it picks up from the live state." if outcome.interrupted and not outcome.failed
                 else "Fix the cause and run apply again: it picks up from the live state.")
    return "\n".join(lines)


