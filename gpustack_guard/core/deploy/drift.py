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
    plan,
)
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.ownership import LEGACY, PROJECT_OWNED, UNMANAGED, Claims, Owner, owner

DRIFT_KINDS = ("pinned_edits", "changed", "missing", "orphaned", "unhealthy")  # the rest is information only
NO_ORPHANS_WITHOUT_PROJECT = ("orphaned models not checked: without a project identity gsg cannot tell this "
                              "repository's models from another's (declare one in gsg.yaml or --project)")


def _pinned_edits(change) -> list[str]:
    """Pinned flags whose live value differs: hand edits that undo the hardening come first."""
    r = change.rendered
    if r is None or not r.pinned:
        return []
    live = A.as_dict(A.parse(change.live.get("backend_parameters") or [], r.family)) if change.live else {}
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
                 recorded: dict[str, str] | None = None) -> dict:
    """Owned models that differ from their specs (pinned hand edits listed apart), specs with no live model,
    this project's models no spec declares (only when the whole project was read), models owned elsewhere or
    unmanaged beside them, unhealthy deployments of ours, and the owner of every live model."""
    claims = claims or Claims(project=None)
    orphans = whole_project and claims.project is not None
    changes = plan(rendered, live_models, cluster_names, claims=claims, prune=orphans, recorded=recorded)
    declared = {r.name for r in rendered}
    report: dict = {"project": claims.project, "pinned_edits": [], "changed": [], "missing": [], "orphaned": [],
                    "unmanaged": [], "legacy": [], "unhealthy": [], "owners": [],
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
            report["orphaned"].append({"name": c.name, "spec_file": c.spec_file})
        elif c.action == CONFLICT:
            report["unmanaged"].append({"name": c.name, "note": c.reason})
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
        if _ours(found, claims):
            ours.add(name)
            if (model.get("ready_replicas") or 0) < (model.get("replicas") or 0):
                report["unhealthy"].append({"name": name, "problem": f"{model.get('ready_replicas') or 0}/"
                                            f"{model.get('replicas')} replicas ready"})
    for cluster in fleet.clusters:
        for inst in cluster.instances:
            if inst.model not in ours:
                continue
            if inst.state == "error":
                report["unhealthy"].append({"name": inst.model, "problem": f"instance {inst.name} in error"})
            elif inst.restart_count:
                report["unhealthy"].append({"name": inst.model, "problem": f"instance {inst.name} restarted "
                                            f"{inst.restart_count} time(s): the OOM-after-healthy signal"})
    return report


def has_drift(report: dict) -> bool:
    return any(report[k] for k in DRIFT_KINDS)
