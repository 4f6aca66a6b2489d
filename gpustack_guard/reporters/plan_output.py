"""Plan and drift rendering: Terraform-style text, versioned JSON, pull-request markdown."""

from __future__ import annotations

import json

from gpustack_guard.reporters import json_head
from gpustack_guard.core.ownership import LEGACY, UNMANAGED
from gpustack_guard.core.deploy.plan import (CONFLICT, CREATE, DELETE, LEGACY_OWNED, NOOP, REPLACE, UPDATE, desired_digest,
                                 live_digest, summary, summary_line)

PLAN_FORMAT_VERSION = "1.0"
VERB = {CREATE: "will be created", UPDATE: "will be updated in place", REPLACE: "must be replaced",
        DELETE: "will be deleted", CONFLICT: "is in conflict", LEGACY_OWNED: "is legacy owned"}


def _taking(change) -> str:
    """How an update changes ownership: adopt an unmanaged model, claim a legacy one, take over another project's."""
    found = change.owner
    if not change.adopt or found is None:
        return ""
    if found.kind == UNMANAGED:
        return " — adopting it (ownership marker added)"
    if found.kind == LEGACY:
        return f" — claiming it for project '{change.project}' (legacy marker rewritten)"
    return f" — taking it over from project '{found.project}'"


def _show(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False) if not isinstance(value, str) else value


def render_text(changes, findings_text: str = "") -> str:
    lines = []
    shown = [c for c in changes if c.action != NOOP]
    if shown:
        lines += ["gsg will perform the following actions:", ""]
    for c in shown:
        where = f" ({c.spec_file})" if c.spec_file else ""
        extra = ""
        if c.action == UPDATE:
            extra = ", then restarted" if c.restart else ""
            extra += _taking(c)
        if c.action in (REPLACE, DELETE, CONFLICT, LEGACY_OWNED) and c.reason:
            extra = f" ({c.reason})"
        lines.append(f"  # {c.name}{where} {VERB[c.action]}{extra}")
        lines.append(f"{c.symbol:>3} {c.name}")
        if c.action in (UPDATE, REPLACE):
            for f in c.fields:
                lines.append(f"      ~ {f.field}: {_show(f.before)} -> {_show(f.after)}")
            unchanged = len([k for k in c.rendered.document() if k != "name"]) - len(c.fields) if c.rendered else 0
            if unchanged > 0:
                lines.append(f"        ({unchanged} unchanged field{'s' if unchanged != 1 else ''} hidden)")
        elif c.action == CREATE:
            for f in c.fields:
                lines.append(f"      + {f.field}: {_show(f.after)}")
        lines.append("")
    if findings_text:
        lines += [findings_text.rstrip(), ""]
    lines.append(summary_line(changes))
    return "\n".join(lines) + "\n"


def _owner_json(found) -> dict | None:
    if found is None:
        return None
    return {"kind": found.kind, "project": found.project, "spec_file": found.spec_file}


def plan_json(changes, server: str | None, validated: bool, project: str | None = None) -> dict:
    return {
        **json_head(PLAN_FORMAT_VERSION),
        "server": server,
        "validated": validated,
        "project": project,
        "summary": summary(changes),
        "changes": [{
            "action": c.action, "name": c.name, "cluster": c.cluster, "spec_file": c.spec_file, "wave": c.wave,
            "restart": c.restart, "adopt": c.adopt, "reason": c.reason or None, "owner": _owner_json(c.owner),
            "marker_spec": c.marker_spec,
            "fields": [{"field": f.field, "before": f.before, "after": f.after} for f in c.fields],
            "live": ({"id": c.live.get("id"), "updated_at": c.live.get("updated_at"),
                      "digest": live_digest(c.live)} if c.live else None),
            "desired_digest": desired_digest(c),
        } for c in changes],
    }


def render_markdown(changes, evaluations, findings) -> str:
    from gpustack_guard.reporters.markdown import breakdown_table, findings_table

    lines = ["## gsg plan", "", f"**{summary_line(changes)}**", ""]
    rows = [c for c in changes if c.action != NOOP]
    if rows:
        lines += ["| | Deployment | Action | Changes |", "|---|---|---|---|"]
        for c in rows:
            detail = "; ".join(f"`{f.field}`" for f in c.fields[:8]) if c.action != CREATE else "new deployment"
            if c.reason:
                detail = f"{detail} — {c.reason}" if c.fields else c.reason
            where = f"[{c.name}]({c.spec_file})" if c.spec_file else c.name
            lines.append(f"| `{c.symbol}` | {where} | {VERB[c.action]} | {detail.replace('|', '/')} |")
    changed = {c.name for c in rows}
    table = breakdown_table([ev for ev in evaluations if ev.rendered.name in changed])
    if table:
        lines += ["", "### Per-GPU memory of changed deployments (worst rank)", ""] + table
    if findings:
        lines += ["", "### Findings", ""] + findings_table(findings)
    return "\n".join(lines) + "\n"
