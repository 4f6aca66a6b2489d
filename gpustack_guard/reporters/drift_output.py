"""Drift rendering: text for a terminal or a scheduled job's log, versioned JSON, markdown for a ticket."""

from __future__ import annotations

import json

from gpustack_guard.core.deploy.drift import DRIFT_KINDS, has_drift
from gpustack_guard.core.echo import untrusted
from gpustack_guard.reporters import json_head
from gpustack_guard.reporters.markdown import COMMENT_LIMIT, capped, untrusted_cell

DRIFT_FORMAT_VERSION = "1.2"  # 1.1: sync and health; 1.2: conflicts (were listed under unmanaged)
DRIFT_POINTER = "`gsg drift -o json` writes the whole report: keep it as the job's artifact"


def _sync(report: dict) -> str:
    return report.get("sync") or ("OutOfSync" if has_drift(report) else "Synced")


def _health(report: dict) -> str:
    return report.get("health") or "Healthy"


def render_json(report: dict) -> str:
    return json.dumps({**json_head(DRIFT_FORMAT_VERSION), "drift": has_drift(report), **report}, indent=2) + "\n"


def render_text(report: dict) -> str:
    """Every name, path, problem and owner may be the server's text: each is one escaped line."""
    u = untrusted
    lines = []
    titles = [("pinned_edits", "Pinned backend arguments changed by hand"), ("changed", "Live fields differ"),
              ("missing", "Specs with no live model"),
              ("orphaned", "gsg-managed models no spec declares or the overlay deletes"),
              ("conflicts", "Conflicts apply refuses (a person must settle them)"),
              ("unhealthy", "Unhealthy deployments"), ("unmanaged", "Unmanaged or owned elsewhere (information)"),
              ("legacy", "Legacy-owned models no spec here declares (information)")]
    for key, title in titles:
        if not report[key]:
            continue
        lines.append(f"{title}:")
        for item in report[key]:
            where = f" ({u(item['spec_file'])})" if item.get("spec_file") else ""
            lines.append(f"  {u(item['name'])}{where}")
            for edit in item.get("edits", []):
                lines.append(f"    ! {u(edit)}")
            for f in item.get("fields", []):
                live, spec = u(json.dumps(f["live"])), u(json.dumps(f["spec"]))
                lines.append(f"    ~ {u(f['field'])}: live {live} -> spec {spec}")
            if item.get("problem"):
                health = f"{item['health']}: " if item.get("health") else ""
                lines.append(f"    {health}{u(item['problem'])}")
            if item.get("note"):
                lines.append(f"    {u(item['note'])}")
        lines.append("")
    if report["owners"]:
        project = f" (this run: project '{report['project']}')" if report.get("project") else ""
        lines.append(f"Owners{project}:")
        owners = [(u(o["name"]), u(o["owner"])) for o in report["owners"]]
        width = max(len(name) for name, _ in owners)
        lines += [f"  {name:<{width}}  {owner}" for name, owner in owners]
        lines.append("")
    lines += [f"Note: {u(note)}" for note in report.get("notes", [])]
    lines.append("Drift detected." if has_drift(report) else "No drift: live deployments match the specs.")
    lines.append(f"Sync: {_sync(report)}   Health: {_health(report)}")
    return "\n".join(lines) + "\n"


def render_markdown(report: dict, limit: int = COMMENT_LIMIT) -> str:
    lines = ["## gsg drift", "", "**Drift detected.**" if has_drift(report) else "**No drift.**", "",
             f"Sync: **{_sync(report)}** · Health: **{_health(report)}**", ""]
    rows = [(k, i) for k in DRIFT_KINDS + ("unmanaged", "legacy") for i in report[k]]
    if rows:
        lines += ["| Kind | Deployment | Detail |", "|---|---|---|"]
        for kind, item in rows:
            detail = "; ".join(item.get("edits", []) or [f["field"] for f in item.get("fields", [])]) or \
                item.get("problem") or item.get("note") or ""
            if item.get("health"):
                detail = f"{item['health']}: {detail}"
            lines.append(f"| {kind.replace('_', ' ')} | {untrusted_cell(item['name'])} | {untrusted_cell(detail)} |")
    if report["owners"]:
        lines += ["", "| Deployment | Owner |", "|---|---|"]
        lines += [f"| {untrusted_cell(o['name'])} | {untrusted_cell(o['owner'])} |" for o in report["owners"]]
    lines += [f"\n_{untrusted_cell(note)}_" for note in report.get("notes", [])]
    return capped(lines, DRIFT_POINTER, limit)
