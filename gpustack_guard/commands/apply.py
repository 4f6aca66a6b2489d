"""gsg apply: carry out the plan (from specs, or exactly a saved plan file)."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import field, replace

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import err, interrupted, note, out
from gpustack_guard.adapters.files.regular_file import path_problem, read_json
from gpustack_guard.adapters.gpustack.applier import Applier, describe, ordered_groups, unresolved_references
from gpustack_guard.core.deploy.plan import CONFLICT, desired_digest, live_digest, summary_line
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, GsgError
from gpustack_guard.core.ownership import PROJECT_NAME
from gpustack_guard.core.urls import same_server
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters.plan_output import render_text


@frozen_value(eq=True, repr=True)
class ApplyOptions:
    sources: wiring.SpecSources  # its specs: spec files/folders, or one saved plan (*.json)
    connection: wiring.ConnectionOptions
    ownership: wiring.Ownership = field(default_factory=wiring.Ownership)
    assume_yes: bool = False
    targets: tuple[str, ...] = ()
    allow_empty: bool = False
    restart: bool = True
    wait: bool = False
    wait_timeout: float = 900.0
    poll: float = 2.0
    concurrency: int = 8
    lock: bool = True  # hold the project's apply lease on the server while writing
    lock_timeout: float = 0.0  # seconds to wait for a lease another apply holds


MAX_PLAN_BYTES = 64 << 20  # 64 MiB: a saved plan holds each change's rendered spec, a few KB each


def read_saved_plan(path: str) -> dict:
    """A plan file `gsg plan --out` wrote, checked as apply reads it; one line (GsgError) for anything else."""
    try:  # a regular file within the limit (a FIFO would block, /dev/zero never end), JSON within its depth
        document = read_json(path, MAX_PLAN_BYTES, path)
    except ValueError as exc:
        raise GsgError(f"not a readable plan file: {str(exc).removeprefix(path + ': ')}", where=path) from None
    if not isinstance(document, dict) or str(document.get("format_version", "")).split(".")[0] != "1":
        raise GsgError("not a gsg plan file (format_version 1.x expected)", where=path)
    problem = _plan_shape_problem(document)
    if problem is not None:
        raise GsgError(f"not a gsg plan file: {problem} (save one with `gsg plan --out FILE`)", where=path)
    return document


def _plan_shape_problem(document: dict) -> str | None:  # noqa: C901  (one check per field apply reads)
    """What of a saved plan's fields apply reads has the wrong type (an edited or damaged file), else None."""
    text_or_none = (str, type(None))
    if not isinstance(document.get("target", {}), (dict, type(None))):
        return "`target` is not an object"
    target = document.get("target") or {}
    for key in ("server", "context", "overlay"):
        if not isinstance(target.get(key), text_or_none) or not isinstance(document.get(key), text_or_none):
            return f"`{key}` is not text"
    if not isinstance(document.get("project"), text_or_none):
        return "`project` is not text"
    if document.get("project") and not PROJECT_NAME.match(document["project"]):
        return f"`project` {document['project'][:80]!r} is not a project name"
    overlay = target.get("overlay")
    if overlay and path_problem(overlay):
        return f"`target.overlay` is not an overlay name: {path_problem(overlay)}"
    specs = document.get("specs") or []
    if not isinstance(specs, list) or not all(isinstance(spec, str) for spec in specs):
        return "`specs` is not a list of paths"
    changes = document.get("changes")
    if not isinstance(changes, list):
        return "`changes` is not a list"
    for number, change in enumerate(changes, 1):
        if not isinstance(change, dict) or not isinstance(change.get("name"), str) \
                or not isinstance(change.get("action"), str):
            return f"change {number} is not an object with a `name` and an `action`"
        if not isinstance(change.get("owner") or {}, dict) or not isinstance(change.get("live") or {}, dict):
            return f"change {number}: `owner` or `live` is not an object"
        if not isinstance((change.get("owner") or {}).get("project"), text_or_none):
            return f"change {number}: `owner.project` is not text"
    return None


def _confirm(summary: str, assume_yes: bool, target: str) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise GsgError("apply needs --yes when not run from a terminal")
    answer = input(f"{summary}\nDo you want to perform these actions on {target}? "
                   "Only 'yes' will be accepted: ")
    return answer.strip() == "yes"


def _target(server: str, context: str | None, overlay: str | None) -> str:
    """How a prompt and a refusal name where apply writes: the server (masked), its context and overlay."""
    named = [f"context {context}"] if context else []
    named += [f"overlay {overlay}"] if overlay else []
    return untrusted(server) + (f" ({', '.join(named)})" if named else "")


def _bound_to_here(saved: dict, connection: wiring.Connection, overlay: str | None, plan_file: str) -> None:
    """A saved plan applies only where it was made: the same server, and the same overlay of the specs."""
    made = saved.get("target") or {"server": saved.get("server")}
    here = _target(connection.client.base_url, connection.options.context, overlay)
    there = _target(str(made.get("server")), made.get("context"), made.get("overlay"))
    if not same_server(made.get("server"), connection.client.base_url):
        raise GsgError(f"the saved plan was made against {there}, not {here}: plan again against this server",
                       where=plan_file)
    if "overlay" in made and made.get("overlay") != overlay:
        raise GsgError(f"the saved plan was made with {there}, not {here}: plan again", where=plan_file)


def _saved_ownership(saved: dict) -> wiring.Ownership:
    """The ownership options a saved plan was made with, read back from its changes."""
    taken = [c.get("owner") or {} for c in saved["changes"] if c.get("adopt")]
    return wiring.Ownership(
        # a delete the overlay asked for (`$patch: delete`) is no prune: it needs neither the flag nor the whole tree
        prune=any(c["action"] == "delete" and not c.get("deleted_by") for c in saved["changes"]),
        adopt=any(o.get("kind") == "unmanaged" for o in taken),
        claim_legacy=any(o.get("kind") == "legacy" for o in taken),
        take_over_from=tuple(sorted({o["project"] for o in taken if o.get("kind") == "project" and o.get("project")})))


def _from_saved_plan(opts: ApplyOptions) -> tuple[ApplyOptions, dict | None]:
    """A saved plan fixes the specs, targets and ownership options it was made with."""
    given = opts.sources
    if not (len(given.specs) == 1 and given.specs[0].endswith(".json")):
        return opts, None
    saved = read_saved_plan(given.specs[0])
    made = saved.get("target") or {}
    sources = replace(given, specs=tuple(saved.get("specs") or []), project=given.project or saved.get("project"),
                      overlay=given.overlay or made.get("overlay"))
    return replace(opts, sources=sources, ownership=_saved_ownership(saved),
                   targets=tuple(c["name"] for c in saved["changes"]), allow_empty=True), saved


def run(opts: ApplyOptions) -> int:
    plan_file = opts.sources.specs[0] if opts.sources.specs else ""
    opts, saved = _from_saved_plan(opts)
    own = opts.ownership
    connection = wiring.connect(opts.connection)
    sources = opts.sources
    overlay = wiring.with_overlay(sources, connection.options.overlay).overlay
    if saved:
        _bound_to_here(saved, connection, overlay, plan_file)
    state = wiring.load_desired(connection, sources, allow_empty=opts.allow_empty)
    claims = wiring.claims_for(state, adopt=own.adopt, claim_legacy=own.claim_legacy,
                               take_over_from=own.take_over_from)
    if saved and saved.get("project") != claims.project:
        raise GsgError(f"the saved plan was made for project {saved.get('project')!r}, these specs are "
                       f"{claims.project!r}; plan again", where=plan_file)
    if wiring.blocked(state, "apply", prune=own.prune, allow_empty=opts.allow_empty):
        return EXIT_FAIL
    secrets = state.report.secret_values
    if saved:  # the plan's names are its targets: one neither side has any more is the plan's, not a --target's
        known = {r.name for r in state.rendered} | {m.get("name") for m in state.live_models}
        gone = sorted(set(opts.targets) - known)
        if gone:
            raise GsgError(f"'{untrusted(gone[0][:80])}' of the saved plan matches no spec and no live model now; "
                           "plan again", where=plan_file)
    changes = wiring.build_plan(state, prune=own.prune, targets=opts.targets, claims=claims)
    expected = _unchanged_since(saved, changes, plan_file) if saved else {}
    conflicts = [c for c in changes if c.action == CONFLICT]
    if conflicts:
        out(render_text(changes), secrets)
        return EXIT_FAIL
    missing = unresolved_references(changes)
    if missing:
        raise GsgError("env references with no value in the environment: " + "; ".join(missing))
    if not any(c.is_change for c in changes):
        out(summary_line(changes) + "\n")
        return EXIT_OK
    out(render_text(changes), secrets)
    if not _confirm(summary_line(changes), opts.assume_yes,
                    _target(connection.client.base_url, connection.options.context, overlay)):
        err("gsg: apply cancelled")
        return EXIT_FAIL
    applier = Applier(connection.client, state.cluster_ids, restart=opts.restart, wait=opts.wait,
                      wait_timeout=opts.wait_timeout, poll=opts.poll, concurrency=opts.concurrency,
                      progress=lambda m: note(f"gsg: {untrusted(m)}", secrets), expected=expected,
                      known_ids={m["id"]: m["name"] for m in state.live_models})
    with _locked(connection, opts, claims.project, state.cluster_ids, secrets, len(ordered_groups(changes))) as lease:
        if opts.lock:
            _still_as_planned(connection, changes)
            from gpustack_guard.adapters.gpustack.lease import ensure_held

            applier.lock_held = lambda: ensure_held(connection.client, lease)
        outcome = applier.run(changes)
    (out if outcome.ok else interrupted if outcome.interrupted else err)(describe(outcome) + "\n", secrets)
    return EXIT_OK if outcome.ok else EXIT_INTERRUPTED if outcome.interrupted and not outcome.failed else EXIT_FAIL


def _locked(connection: wiring.Connection, opts: ApplyOptions, project: str | None, cluster_ids: dict,
            secrets: list[str], groups: int):
    """The apply lease for the writes (no lease with --no-lock: a one-off repair while an apply hangs), long
    enough for the whole apply: the command deadline plus a --wait per group of writes."""
    if not opts.lock:
        return nullcontext()
    from gpustack_guard.adapters.gpustack.lease import apply_lease
    from gpustack_guard.core.deploy.lease import lease_seconds

    seconds = lease_seconds(connection.client.limits.command_deadline, groups if opts.wait else 0,
                            opts.wait_timeout)
    return apply_lease(connection.client, project, seconds=seconds, wait=opts.lock_timeout,
                       cluster_id=min(cluster_ids.values()) if cluster_ids else None,
                       note=lambda m: note(m, secrets))


def _still_as_planned(connection: wiring.Connection, changes: list) -> None:
    """With the lock held, the models are still as this run planned them: another apply that finished while
    this one planned or waited (--lock-timeout), or a hand edit, makes it "plan again", never undone. One list
    call, compared with the list the plan was made from (the same representation)."""
    from gpustack_guard.core.deploy.lease import deployments

    listed = deployments(connection.client.models())
    now = {m["name"]: m for m in listed}
    for c in changes:
        if not c.is_change:
            continue
        twins = [m["id"] for m in listed if m["name"] == c.name]
        if len(twins) > 1:  # the plan refuses a name held twice; one appeared since: which is meant is no guess
            raise GsgError(f"'{c.name}' is held by {len(twins)} models on the server now (ids "
                           f"{', '.join(map(str, twins[:5]))}{'...' if len(twins) > 5 else ''}), one since this "
                           "apply planned it; nothing was written: plan again")
        live = now.get(c.name)
        moved = (live is not None) if c.live is None else (live is None or live_digest(live) != live_digest(c.live))
        if moved:
            raise GsgError(f"'{c.name}' changed on the server since this apply planned it (another apply, or a "
                           "hand edit); nothing was written: plan again")


def _unchanged_since(saved: dict, changes: list, plan_file: str) -> dict:
    """Each change must still be the one the saved plan shows; returns the live state it expected per name."""
    planned = {c["name"]: c for c in saved["changes"]}
    expected = {}
    for c in changes:
        before = planned.get(c.name)
        if before is None or before["action"] != c.action or before.get("desired_digest") != desired_digest(c):
            raise GsgError(f"'{c.name}' no longer matches the saved plan (specs or server changed); plan again",
                           where=plan_file)
        seen = before.get("live")
        if c.is_change and c.live is not None and not (isinstance(seen, dict)
                                                       and isinstance(seen.get("digest"), str)):
            # the live model the plan was reviewed against is the write's precondition: without it, a model
            # edited since would be written over (or deleted) as if it were what the plan showed
            raise GsgError(f"'{untrusted(c.name[:80])}': the saved plan does not record the live model it "
                           f"would {c.action} (`live.digest`); plan again", where=plan_file)
        if seen:
            expected[c.name] = seen
    return expected
