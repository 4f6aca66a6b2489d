"""Drift (pure): live GPUStack state against the rendered specs, from the lists plan already uses."""

from __future__ import annotations

from gpustack_guard import args as A
from gpustack_guard.fleet import Fleet
from gpustack_guard.ownership import owned_by_gsg
from gpustack_guard.plan import CONFLICT, CREATE, DELETE, REPLACE, UPDATE, plan

DRIFT_KINDS = ("pinned_edits", "changed", "missing", "orphaned", "unhealthy")  # unmanaged is information only


def _pinned_edits(change) -> list[str]:
    """Pinned flags whose live value differs: hand edits that undo the hardening come first."""
    r = change.rendered
    if r is None or not r.pinned:
        return []
    live = A.as_dict(A.parse(change.live.get("backend_parameters") or [], r.family)) if change.live else {}
    want = r.flags
    return [f"--{k}: live {live.get(k, '(missing)')!s} != pinned {want.get(k)!s}" for k in r.pinned
            if k not in live or not A.same_value(live.get(k), want.get(k))]


def drift_report(rendered: list, live_models: list[dict], cluster_names: dict[int, str], fleet: Fleet) -> dict:
    """Owned models that differ from their specs (pinned hand edits listed apart), specs with no live model,
    owned models no spec declares, unmanaged models beside them, and unhealthy owned deployments."""
    changes = plan(rendered, live_models, cluster_names, prune=True)
    declared = {r.name for r in rendered}
    report = {"pinned_edits": [], "changed": [], "missing": [], "orphaned": [], "unmanaged": [], "unhealthy": []}
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
    clusters = {r.spec.cluster_name for r in rendered} | {None}
    for model in live_models:
        name = model["name"]
        if not owned_by_gsg(model) and name not in declared and (
                cluster_names.get(model.get("cluster_id")) in clusters or len(cluster_names) == 1):
            report["unmanaged"].append({"name": name, "note": "not managed by gsg (information)"})
        if owned_by_gsg(model) and (model.get("ready_replicas") or 0) < (model.get("replicas") or 0):
            report["unhealthy"].append({"name": name, "problem":
                                        f"{model.get('ready_replicas') or 0}/{model.get('replicas')} replicas ready"})
    owned = {m["name"] for m in live_models if owned_by_gsg(m)}
    for cluster in fleet.clusters:
        for inst in cluster.instances:
            if inst.model not in owned:
                continue
            if inst.state == "error":
                report["unhealthy"].append({"name": inst.model, "problem": f"instance {inst.name} in error"})
            elif inst.restart_count:
                report["unhealthy"].append({"name": inst.model, "problem": f"instance {inst.name} restarted "
                                            f"{inst.restart_count} time(s): the OOM-after-healthy signal"})
    return report


def has_drift(report: dict) -> bool:
    return any(report[k] for k in DRIFT_KINDS)
