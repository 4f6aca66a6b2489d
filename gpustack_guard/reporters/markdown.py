"""Markdown for pull-request comments and $GITHUB_STEP_SUMMARY: findings and per-GPU memory breakdowns."""

from __future__ import annotations

import html

from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.units import gib
from gpustack_guard.reporters.links import line_link

ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}

GITHUB_COMMENT_CHARS = 65_536  # GitHub refuses pull-request comment bodies longer than this
COMMENT_LIMIT = 60_000  # gsg's markdown stays below it: the rest is room for what a workflow adds around it
VALIDATE_POINTER = "`gsg validate -o json` (or `-o sarif`) writes the whole report: keep it as the job's artifact"


def capped(lines: list[str], pointer: str, limit: int = COMMENT_LIMIT) -> str:
    """The lines as one markdown text, whole when it fits in `limit` characters; else the leading lines that fit
    (the title and summary come first, so they stay) and a note of how much was left out and where it is."""
    text = "\n".join(lines) + "\n"
    if len(text) <= limit:
        return text
    note = "\n_… {} more line(s) not shown here (a comment holds {:,} characters): {}_\n"
    budget = limit - len(note.format(len(lines), limit, pointer))
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > budget:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept) + "\n" + note.format(len(lines) - len(kept), limit, pointer)


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
        # the file's name is the file system's: one escaped line, and no `|`, `[` or `]` of it ends the cell or link
        shown = untrusted_cell(str(f.location))
        where = f"[{shown}]({line_link(f.location.file, f.location.line)})" if f.location.line else shown
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


def render(report, fail_level=None, limit: int = COMMENT_LIMIT) -> str:  # fail_level: read by junit only
    from gpustack_guard.reporters import summary_line

    lines = ["## gsg validate", "", summary_line(report).removeprefix("gsg: ").capitalize() + ".", ""]
    lines += findings_table(report.findings)
    table = breakdown_table(report.evaluations)
    if table:
        lines += ["", "### Per-GPU memory (worst rank)", ""] + table
    return capped(lines, VALIDATE_POINTER, limit)
