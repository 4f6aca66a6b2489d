"""gsg drift: read-only report of live state against the specs (a constant number of list calls)."""

from __future__ import annotations

import json

from gpustack_guard import __version__
from gpustack_guard import args as A
from gpustack_guard.errors import EXIT_CHANGES, EXIT_OK, GsgError
from gpustack_guard.output import out

DRIFT_FORMAT_VERSION = "1.0"


def _pinned_edits(change) -> list[str]:
    """Pinned flags whose live value differs: hand edits that undo the hardening come first."""
    r = change.rendered
    if r is None or not r.pinned:
        return []
    live = A.as_dict(A.parse(change.live.get("backend_parameters") or [], r.family)) if change.live else {}
    want = r.flags
    return [f"--{k}: live {live.get(k, '(missing)')!s} != pinned {want.get(k)!s}" for k in r.pinned
            if k not in live or not A.same_value(live.get(k), want.get(k))]


def collect(state, fleet) -> dict:
    from gpustack_guard.plan import CONFLICT, CREATE, DELETE, REPLACE, UPDATE, plan
    from gpustack_guard.ownership import owned_by_gsg

    changes = plan(state.rendered, state.live_models, state.cluster_names, prune=True)
    declared = {r.name for r in state.rendered}
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
    clusters = {r.spec.cluster_name for r in state.rendered} | {None}
    for model in state.live_models:
        name = model["name"]
        if not owned_by_gsg(model) and name not in declared and (
                state.cluster_names.get(model.get("cluster_id")) in clusters or len(state.cluster_names) == 1):
            report["unmanaged"].append({"name": name, "note": "not managed by gsg (information)"})
        if owned_by_gsg(model) and (model.get("ready_replicas") or 0) < (model.get("replicas") or 0):
            report["unhealthy"].append({"name": name, "problem":
                                        f"{model.get('ready_replicas') or 0}/{model.get('replicas')} replicas ready"})
    owned = {m["name"] for m in state.live_models if owned_by_gsg(m)}
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
    return any(report[k] for k in ("pinned_edits", "changed", "missing", "orphaned", "unhealthy"))


def render_text(report: dict) -> str:
    lines = []
    titles = [("pinned_edits", "Pinned backend arguments changed by hand"), ("changed", "Live fields differ"),
              ("missing", "Specs with no live model"), ("orphaned", "gsg-managed models no spec declares"),
              ("unhealthy", "Unhealthy deployments"), ("unmanaged", "Unmanaged models (information)")]
    for key, title in titles:
        if not report[key]:
            continue
        lines.append(f"{title}:")
        for item in report[key]:
            where = f" ({item['spec_file']})" if item.get("spec_file") else ""
            lines.append(f"  {item['name']}{where}")
            for edit in item.get("edits", []):
                lines.append(f"    ! {edit}")
            for f in item.get("fields", []):
                lines.append(f"    ~ {f['field']}: live {json.dumps(f['live'])} -> spec {json.dumps(f['spec'])}")
            if item.get("problem"):
                lines.append(f"    {item['problem']}")
            if item.get("note"):
                lines.append(f"    {item['note']}")
        lines.append("")
    lines.append("Drift detected." if has_drift(report) else "No drift: live deployments match the specs.")
    return "\n".join(lines) + "\n"


def render_markdown(report: dict) -> str:
    lines = ["## gsg drift", "", "**Drift detected.**" if has_drift(report) else "**No drift.**", ""]
    rows = [(k, i) for k in ("pinned_edits", "changed", "missing", "orphaned", "unhealthy", "unmanaged")
            for i in report[k]]
    if rows:
        lines += ["| Kind | Deployment | Detail |", "|---|---|---|"]
        for kind, item in rows:
            detail = "; ".join(item.get("edits", []) or [f["field"] for f in item.get("fields", [])]) or \
                item.get("problem") or item.get("note") or ""
            lines.append(f"| {kind.replace('_', ' ')} | {item['name']} | {detail.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def run(connection, specs: list[str], *, output: str | None = None, detailed_exitcode: bool = False,
        offline: bool = False, templates: list[str] | None = None) -> int:
    from gpustack_guard.commands.desired import load_desired

    fmt = (output or "text").lower()
    if fmt not in ("text", "json", "markdown"):
        raise GsgError(f"drift --output must be text, json or markdown, not '{fmt}'")
    state = load_desired(connection, specs, offline=offline, templates=templates)
    fleet = connection.last_fleet
    report = collect(state, fleet)
    secrets = state.report.secret_values
    if fmt == "json":
        out(json.dumps({"format_version": DRIFT_FORMAT_VERSION, "tool": {"name": "gsg", "version": __version__},
                        "drift": has_drift(report), **report}, indent=2) + "\n", secrets)
    elif fmt == "markdown":
        out(render_markdown(report), secrets)
    else:
        out(render_text(report), secrets)
    return EXIT_CHANGES if detailed_exitcode and has_drift(report) else EXIT_OK
