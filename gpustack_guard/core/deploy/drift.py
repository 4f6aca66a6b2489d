"""Drift (pure): live GPUStack state against the rendered specs, from the lists plan already uses."""

from __future__ import annotations

from gpustack_guard.core import args as A
from gpustack_guard.core.deploy.plan import (
    CONFLICT,
    CREATE,
    DELETE,
    LEGACY_OWNED,
    REPLACE,
    UPDATE,
    cluster_name_of,
    plan_managed,
)
from gpustack_guard.core.deploy.removals import NO_REMOVALS, OverlayRemovals
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.ownership import LEGACY, PROJECT_OWNED, UNMANAGED, Claims, Owner, owner

# Sync and health are separate questions, as Argo CD keeps them: does live match git, and does it run?
# conflicts: live state apply refuses to touch (a spec's name held by another owner or by two models, a look-alike
# name, an overlay delete of a model not this project's): git and live differ and only a person can settle it
SYNC_KINDS = ("pinned_edits", "changed", "missing", "orphaned", "conflicts")
DRIFT_KINDS = SYNC_KINDS + ("unhealthy",)  # listed in reports; the rest is information only
SYNCED, OUT_OF_SYNC = "Synced", "OutOfSync"
HEALTHY, PROGRESSING, DEGRADED = "Healthy", "Progressing", "Degraded"
# Instance states on the way to running (GPUStack 2.3 ModelInstanceStateEnum): not ready yet, not broken.
ON_THE_WAY = frozenset({"initializing", "pending", "starting", "scheduled", "downloading", "analyzing"})
NO_ORPHANS_WITHOUT_PROJECT = ("orphaned models not checked: without a project identity gsg cannot tell this "
                              "repository's models from another's (declare one in gsg.yaml or --project)")


def _pinned_edits(change) -> list[str]:
    """Pinned flags whose live value differs: hand edits that undo the hardening come first."""
    r = change.rendered
    if r is None or not r.pinned:
        return []
    live = A.as_dict(A.parse(change.live.get("backend_parameters") or [], r.family), r.family) if change.live else {}
    want = r.flags
    return [f"--{k}: live {live.get(k, '(missing)')!s} != pinned {want.get(k)!s}" for k in r.pinned
            if k not in live or not A.same_value(live.get(k), want.get(k), k, r.family)]


def _ours(found: Owner, claims: Claims) -> bool:
    """Models this run answers for: its project's, or (without a project) every gsg marker without one."""
    if claims.project is None:
        return found.kind == LEGACY
    return found.kind == PROJECT_OWNED and found.project == claims.project


def drift_report(rendered: list, live_models: list[dict], cluster_names: dict[int, str], fleet: Fleet, *,
                 claims: Claims | None = None, whole_project: bool = False,
                 recorded: dict[str, str] | None = None, removals: OverlayRemovals = NO_REMOVALS) -> dict:
    """Owned models that differ from their specs (pinned hand edits listed apart), specs with no live model,
    this project's models no spec declares (only when the whole project was read) or the context's overlay
    deletes, the conflicts plan reports (apply refuses them), models owned elsewhere or unmanaged beside them,
    unhealthy deployments of ours, and the owner of every live model. A name the overlay excludes is not this
    context's business: it shows nowhere."""
    claims = claims or Claims(project=None)
    orphans = whole_project and claims.project is not None
    live_models = removals.managed(live_models)
    changes = plan_managed(rendered, live_models, cluster_names, claims=claims, prune=orphans, recorded=recorded,
                           removals=removals)
    declared = {r.name for r in rendered}
    report: dict = {"project": claims.project, "pinned_edits": [], "changed": [], "missing": [], "orphaned": [],
                    "conflicts": [], "unmanaged": [], "legacy": [], "unhealthy": [], "owners": [],
                    "notes": [] if orphans else [NO_ORPHANS_WITHOUT_PROJECT if claims.project is None else
                                                 f"orphaned models not checked: only part of project "
                                                 f"'{claims.project}' was read (pass its root folder)"]}
    for c in changes:
        if c.action in (UPDATE, REPLACE):
            edits = _pinned_edits(c)
            entry = {"name": c.name, "spec_file": c.spec_file, "action": c.action,
                     "fields": [{"field": f.field, "live": f.before, "spec": f.after} for f in c.fields]}
            if edits:
                report["pinned_edits"].append({"name": c.name, "spec_file": c.spec_file, "edits": edits})
            report["changed"].append(entry)
        elif c.action == CREATE:
            report["missing"].append({"name": c.name, "spec_file": c.spec_file})
        elif c.action == DELETE:
            report["orphaned"].append({"name": c.name, "spec_file": c.spec_file}
                                      | ({"note": c.reason} if c.deleted_by else {}))
        elif c.action == CONFLICT:
            report["conflicts"].append({"name": c.name, "note": c.reason}
                                       | ({"spec_file": c.spec_file} if c.spec_file else {}))
        elif c.action == LEGACY_OWNED:
            report["legacy"].append({"name": c.name, "spec_file": c.spec_file, "note": c.reason})
    clusters = {r.spec.cluster_name for r in rendered} | {None}
    ours = set()
    for model in live_models:
        name, found = model["name"], owner(model)
        in_scope = cluster_name_of(model, cluster_names) in clusters or len(cluster_names) == 1
        if in_scope:
            report["owners"].append({"name": name, "kind": found.kind, "project": found.project,
                                     "spec_file": found.spec_file, "owner": found.describe()})
        if found.kind == UNMANAGED and name not in declared and in_scope:
            report["unmanaged"].append({"name": name, "note": "not managed by gsg (information)"})
        if _ours(found, claims) and name not in removals.deleted:  # on its way out: its health is no question
            ours.add(name)
    report["unhealthy"] = _health_problems(live_models, fleet, ours)
    report["sync"] = OUT_OF_SYNC if any(report[k] for k in SYNC_KINDS) else SYNCED
    report["health"] = _worst(item["health"] for item in report["unhealthy"])
    return report


def _health_problems(live_models: list[dict], fleet: Fleet, ours: set[str]) -> list[dict]:
    """Our deployments that do not run as asked: Degraded (an instance in error, restarts, replicas missing with
    nothing on the way) or Progressing (replicas not ready while instances start or download)."""
    instances: dict[str, list] = {}
    for cluster in fleet.clusters:
        for inst in cluster.instances:
            if inst.model in ours:
                instances.setdefault(inst.model, []).append(inst)
    problems: list[dict] = []
    for model in live_models:
        name = model["name"]
        if name not in ours:
            continue
        own = instances.get(name, [])
        ready, wanted = model.get("ready_replicas") or 0, model.get("replicas") or 0
        if ready < wanted:
            starting = any(i.state in ON_THE_WAY for i in own)
            problems.append({"name": name, "health": PROGRESSING if starting else DEGRADED,
                             "problem": f"{ready}/{wanted} replicas ready" + (" (instances starting)" if starting
                                                                               else "")})
        for inst in own:
            if inst.state == "error":
                problems.append({"name": name, "health": DEGRADED, "problem": f"instance {inst.name} in error"})
            elif inst.restart_count:
                problems.append({"name": name, "health": DEGRADED, "problem": f"instance {inst.name} restarted "
                                 f"{inst.restart_count} time(s): the OOM-after-healthy signal"})
    return problems


def _worst(states) -> str:
    found = set(states)
    return DEGRADED if DEGRADED in found else PROGRESSING if PROGRESSING in found else HEALTHY


def has_drift(report: dict) -> bool:
    """Out of sync: live differs from the specs (health is asked separately, by `degraded`)."""
    return any(report[k] for k in SYNC_KINDS)


def degraded(report: dict) -> bool:
    """A deployment of ours does not run as asked; one still starting is Progressing, not Degraded."""
    return report.get("health") == DEGRADED
