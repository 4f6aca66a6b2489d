"""Markdown for pull-request comments and $GITHUB_STEP_SUMMARY: findings and per-GPU memory breakdowns."""

from __future__ import annotations

import html

from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.units import gib
from gpustack_guard.reporters.links import line_link

ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def untrusted_cell(text: object) -> str:
    """Text gsg did not write (a server's model name, state message, owner) in a markdown table cell: one
    escaped line, no HTML (a `</details>` or `<img>` stays text), no link syntax, no column break. gsg's own
    backtick code spans in the same text keep working."""
    shown = html.escape(untrusted(text), quote=False)
    return shown.replace("|", "\\|").replace("[", "\\[").replace("]", "\\]")


def findings_table(findings) -> list[str]:
    if not findings:
        return ["No findings."]
    lines = ["| | Rule | Where | Spec | Message | Fix |", "|---|---|---|---|---|---|"]
    for f in findings:
        where = f"[{f.location}]({line_link(f.location.file, f.location.line)})" if f.location.line \
            else f.location.file
        lines.append(f"| {ICON[f.severity.value]} | `{f.rule.id}` {f.rule.name} | {where} | {_cell(f.spec or '')} "
                     f"| {_cell(f.message)} | {_cell(f.fix or '')} |")
    return lines


def breakdown_table(evaluations) -> list[str]:
    rows = [ev for ev in evaluations if ev.estimate]
    if not rows:
        return []
    lines = ["| Deployment | GPUs | Requested | Weights | Activation | Non-torch | Graphs | KV cache | Headroom "
             "| KV tokens | Max len | Verdict |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ev in rows:
        e = ev.estimate
        # GPU ids hold the server's worker names
        gpus = untrusted_cell(", ".join(g.id for g in ev.placement.replicas[0])) if ev.placement else ""
        lines.append(f"| {ev.rendered.name} | {gpus} | {gib(e.requested)} | {gib(e.weights)} | {gib(e.activation)} "
                     f"| {gib(e.non_torch)} | {gib(e.cuda_graphs)} | {gib(e.kv_cache)} | {gib(e.headroom)} "
                     f"| {e.kv_capacity_tokens:,} | {e.max_model_len:,} | {e.verdict} |")
    return lines


def render(report, fail_level=None) -> str:  # fail_level: read by junit only
    from gpustack_guard.reporters import summary_line

    lines = ["## gsg validate", "", summary_line(report).removeprefix("gsg: ").capitalize() + ".", ""]
    lines += findings_table(report.findings)
    table = breakdown_table(report.evaluations)
    if table:
        lines += ["", "### Per-GPU memory (worst rank)", ""] + table
    return "\n".join(lines) + "\n"
