"""Plan and drift rendering: Terraform-style text, versioned JSON, pull-request markdown."""

from __future__ import annotations

import json

from gpustack_guard.core.deploy.plan import (
    CONFLICT,
    CREATE,
    DELETE,
    LEGACY_OWNED,
    NOOP,
    REPLACE,
    UPDATE,
    desired_digest,
    live_digest,
    summary,
    summary_line,
)
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.ownership import LEGACY, UNMANAGED
from gpustack_guard.reporters import json_head
from gpustack_guard.reporters.markdown import COMMENT_LIMIT  # one limit for every pull-request comment

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
    """A field value in a plan line: live values are the server's, so one escaped line either way."""
    return untrusted(json.dumps(value, sort_keys=True, ensure_ascii=False) if not isinstance(value, str) else value)


def render_text(changes, findings_text: str = "") -> str:
    lines = []
    shown = [c for c in changes if c.action != NOOP]
    if shown:
        lines += ["gsg will perform the following actions:", ""]
    for c in shown:
        # Names, spec paths (a deletion's comes from the server's marker), reasons and owners may be server
        # text: each one escaped line, so a name cannot add lines of its own to the plan.
        name = untrusted(c.name)
        where = f" ({untrusted(c.spec_file)})" if c.spec_file else ""
        extra = ""
        if c.action == UPDATE:
            extra = ", then restarted" if c.restart else ""
            extra += untrusted(_taking(c))
            extra += f" ({untrusted(c.reason)})" if c.reason else ""
        if c.action in (REPLACE, DELETE, CONFLICT, LEGACY_OWNED) and c.reason:
            extra = f" ({untrusted(c.reason)})"
        lines.append(f"  # {name}{where} {VERB[c.action]}{extra}")
        lines.append(f"{c.symbol:>3} {name}")
        if c.action in (UPDATE, REPLACE):
            for f in c.fields:
                lines.append(f"      ~ {untrusted(f.field)}: {_show(f.before)} -> {_show(f.after)}")
            unchanged = len([k for k in c.rendered.document() if k != "name"]) - len(c.fields) if c.rendered else 0
            if unchanged > 0:
                lines.append(f"        ({unchanged} unchanged field{'s' if unchanged != 1 else ''} hidden)")
        elif c.action == CREATE:
            for f in c.fields:
                lines.append(f"      + {untrusted(f.field)}: {_show(f.after)}")
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
            "marker_spec": c.marker_spec, "deleted_by": c.deleted_by,
            "fields": [{"field": f.field, "before": f.before, "after": f.after} for f in c.fields],
            "live": ({"id": c.live.get("id"), "updated_at": c.live.get("updated_at"),
                      "digest": live_digest(c.live)} if c.live else None),
            "desired_digest": desired_digest(c),
        } for c in changes],
    }


COMMENT_MARKER = "<!-- gsg-plan -->"  # lets a workflow find and update its one plan comment


def _details(summary: str, body: list[str]) -> list[str]:
    return ["", "<details>", f"<summary>{summary}</summary>", ""] + body + ["", "</details>"]


def render_markdown(changes, evaluations, findings, limit: int = COMMENT_LIMIT) -> str:
    """A pull-request comment that stays under `limit` characters: one table row per change while they fit,
    then a count of the rest; memory and findings folded into <details>, left out with a count if too long."""
    from gpustack_guard.reporters.links import line_link
    from gpustack_guard.reporters.markdown import breakdown_table, findings_table, untrusted_cell

    head = [COMMENT_MARKER, "## gsg plan", "", f"**{summary_line(changes)}**", ""]
    rows = [c for c in changes if c.action != NOOP]
    table: list[str] = []
    for c in rows:
        detail = "; ".join(f"`{untrusted_cell(f.field)}`" for f in c.fields[:8]) if c.action != CREATE \
            else "new deployment"
        if c.action != CREATE and len(c.fields) > 8:
            detail += f"; {len(c.fields) - 8} more"
        if c.reason:
            reason = untrusted_cell(c.reason)
            detail = f"{detail} — {reason}" if c.fields else reason
        # Only a spec of ours is linked: a deletion's spec path is whatever the server's marker says.
        name = untrusted_cell(c.name)
        ours = c.action not in (DELETE, LEGACY_OWNED)
        where = f"[{name}]({line_link(c.spec_file, 0)})" if c.spec_file and ours else name
        table.append(f"| `{c.symbol}` | {where} | {VERB[c.action]} | {detail} |")
    changed = {c.name for c in rows}
    memory = breakdown_table([ev for ev in evaluations if ev.rendered.name in changed])
    sections = [("Per-GPU memory of changed deployments (worst rank)", memory, f"{len(memory) - 2} deployment(s)"),
                ("Findings", findings_table(findings) if findings else [], f"{len(findings)} finding(s)")]
    reserve = 400 * (1 + len(sections))  # the truncation note and the section stubs always fit
    size = sum(len(line) + 1 for line in head)
    lines = list(head)
    if table:
        lines += ["| | Deployment | Action | Changes |", "|---|---|---|---|"]
        for shown, row in enumerate(table):
            if size + len(row) + 1 > limit - reserve:
                lines.append(f"\n_… {len(table) - shown} more change(s) not shown here: the full plan is in the "
                             "job's artifacts (`gsg plan --out plan.json`)._")
                break
            lines.append(row)
            size += len(row) + 1
    for title, body, count in sections:
        if not body:
            continue
        block = _details(f"{title} ({count})", body)
        block_size = sum(len(line) + 1 for line in block)
        if size + block_size > limit - 400:
            block = ["", f"_{title}: {count}, too long for a comment; see the job's artifacts._"]
            block_size = sum(len(line) + 1 for line in block)
        lines += block
        size += block_size
    return "\n".join(lines) + "\n"
