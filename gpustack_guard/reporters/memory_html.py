"""The memory picture: one self-contained HTML page (inline SVG and CSS, a few lines of inline script, nothing
fetched) with a stacked bar per GPU and the finding that breaks it beside the bar.

Every segment carries `data-kind` and `data-bytes`, the exact numbers of the JSON output, so tests (and anyone)
can check the picture against the arithmetic; heights are `bytes x scale`, one scale for the whole page, so a
24 GB card is half the height of a 48 GB one.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from gpustack_guard.core import echo
from gpustack_guard.core.units import gib


def escape(text: str) -> str:
    """Text in the page: HTML-escaped, and one line with controls written as escapes (GPU and worker names are
    the server's; the page may be printed to a terminal)."""
    return html.escape(echo.escape(text))

BAR_HEIGHT = 320  # pixels for the largest GPU on the page
BAR_WIDTH = 56
# (kind, legend, colour): the order segments stack from the bottom
KINDS = (
    ("weights", "weights", "#4c6ef5"),
    ("activation", "activation peak", "#f59f00"),
    ("non_torch", "non-torch", "#868e96"),
    ("cuda_graphs", "CUDA graphs", "#ae3ec9"),
    ("kv_cache", "KV pool", "#37b24d"),
    ("headroom", "headroom needed outside the budget", "#ffd43b"),
    ("other", "other deployments", "#e8590c"),
    ("foreign", "foreign usage", "#c92a2a"),
)
COLOUR = {kind: colour for kind, _, colour in KINDS}
LEGEND = {kind: legend for kind, legend, _ in KINDS}
ENGINE_PARTS = ("weights", "activation", "non_torch", "cuda_graphs", "kv_cache")


@dataclass
class Segment:
    kind: str
    bytes: int
    owner: str  # the deployment (or "fleet" for other deployments / foreign usage)


@dataclass
class Bar:
    gpu_id: str
    gpu_name: str
    total: int
    segments: list[Segment] = field(default_factory=list)
    findings: list[tuple[str, str, str]] = field(default_factory=list)  # (severity, rule id, message)

    @property
    def used(self) -> int:
        return sum(s.bytes for s in self.segments)

    @property
    def free(self) -> int:
        return self.total - self.used


def deployment_segments(name: str, estimate) -> list[Segment]:
    """One deployment's share of one GPU (its worst rank): the engine's parts, then what it needs outside."""
    parts = estimate.breakdown()
    segments = [Segment(kind, max(int(parts[kind]), 0), name) for kind in ENGINE_PARTS]
    segments.append(Segment("headroom", max(estimate.footprint - sum(s.bytes for s in segments), 0), name))
    return segments


def report_bars(report) -> list[Bar]:
    """A bar per GPU of every cluster the specs landed on, with the deployments placed there."""
    bars: dict[str, Bar] = {}
    for ledger in report.ledgers.values():
        for gid, ref in ledger.gpus.items():
            bar = Bar(gid, ref.gpu.name, ref.total)
            other = ledger.base_allocated[gid]
            foreign = max(ledger.base_used[gid] - other, 0)
            if other:
                names = ", ".join(m for m, _ in ledger.existing[gid]) or "GPUStack"
                bar.segments.append(Segment("other", other, names))
            if foreign:
                bar.segments.append(Segment("foreign", foreign, "processes GPUStack does not manage"))
            bars[gid] = bar
    worst = {"error": 2, "warning": 1, "info": 0}
    for ev in report.evaluations:
        if ev.placement is None:
            continue
        name = ev.rendered.name
        breaking = sorted((f for f in report.findings if f.spec == name and f.severity.value != "info"),
                          key=lambda f: -worst[f.severity.value])
        for gpus, est in zip(ev.placement.replicas, ev.estimates):
            for ref in gpus:
                placed = bars.get(ref.id)
                if placed is None:
                    continue
                placed.segments[:0] = deployment_segments(name, est)  # own deployments at the bottom
                placed.findings += [(f.severity.value, f.rule.id, f"{name}: {f.message}") for f in breaking[:1]]
    for bar in bars.values():
        bar.findings.sort(key=lambda f: -worst[f[0]])
    # GPUs that break first, then those that warn, each group in fleet order (sorted() is stable)
    return sorted(bars.values(), key=lambda b: -max((worst[sev] for sev, _, _ in b.findings), default=0))


def _bar_svg(bar: Bar, scale: float, title: str = "") -> str:
    height = bar.total * scale
    top = 24
    parts = [f'<svg class="bar" width="{BAR_WIDTH + 8}" height="{BAR_HEIGHT + 40}" role="img" '
             f'aria-label="{escape(bar.gpu_id)}" data-gpu="{escape(bar.gpu_id)}" data-total="{bar.total}">',
             f'<rect class="frame" x="4" y="{top + BAR_HEIGHT - height:.2f}" width="{BAR_WIDTH}" height="{height:.2f}" '
             'fill="#f8f9fa" stroke="#343a40"/>']
    y: float = top + BAR_HEIGHT
    for s in bar.segments:
        h = s.bytes * scale
        y -= h
        tip = f"{LEGEND[s.kind]} ({s.owner}): {gib(s.bytes)}"
        parts.append(f'<rect class="seg" x="4" y="{y:.2f}" width="{BAR_WIDTH}" height="{h:.2f}" '
                     f'fill="{COLOUR[s.kind]}" data-kind="{s.kind}" data-owner="{escape(s.owner)}" '
                     f'data-bytes="{s.bytes}"><title>{escape(tip)}</title></rect>')
    if bar.free < 0:  # over the top: what does not fit, drawn above the GPU in red
        parts.append(f'<rect class="overflow" x="4" y="{max(y, 0):.2f}" width="{BAR_WIDTH}" '
                     f'height="{max(top + BAR_HEIGHT - height - max(y, 0), 0):.2f}" fill="none" stroke="#000" '
                     f'stroke-width="3" stroke-dasharray="5 3" data-bytes="{-bar.free}"/>')
    parts.append(f'<text x="{4 + BAR_WIDTH / 2}" y="{top + BAR_HEIGHT + 14}" text-anchor="middle" '
                 f'font-size="10">{escape(gib(bar.total))}</text>')
    if title:
        parts.append(f'<text x="{4 + BAR_WIDTH / 2}" y="12" text-anchor="middle" font-size="10">{escape(title)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _bar_block(bar: Bar, scale: float) -> str:
    free = (f"free {gib(bar.free)}" if bar.free >= 0 else f"over by {gib(-bar.free)}")
    notes = "".join(f'<p class="finding {sev}"><b>{escape(rule)}</b> {escape(message)}</p>'
                    for sev, rule, message in bar.findings) or \
        (f'<p class="finding ok">{"fits" if bar.segments else "unused"}</p>')
    rows = "".join(f"<li><i style=\"background:{COLOUR[s.kind]}\"></i>{escape(LEGEND[s.kind])} "
                   f"<small>({escape(s.owner)})</small>: {escape(gib(s.bytes))}</li>" for s in bar.segments)
    return (f'<div class="gpu" data-gpu="{escape(bar.gpu_id)}">{_bar_svg(bar, scale)}<div class="side">'
            f'<h3>{escape(bar.gpu_id)} <small>{escape(bar.gpu_name)}</small></h3><p>{escape(free)} of '
            f'{escape(gib(bar.total))}</p>{notes}<ul>{rows}</ul></div></div>')


_STYLE = """
body{font:14px system-ui,sans-serif;margin:24px;color:#212529}
.grid{display:flex;flex-wrap:wrap;gap:18px}
.gpu{display:flex;gap:8px;border:1px solid #dee2e6;border-radius:6px;padding:8px;width:340px}
.side{flex:1;min-width:0}.side h3{margin:0 0 4px;font-size:14px}
.finding{margin:4px 0;padding:4px 6px;border-radius:4px;background:#e9ecef;overflow-wrap:anywhere}
.finding.error{background:#ffe3e3}.finding.warning{background:#fff3bf}.finding.ok{background:#d3f9d8}
ul{list-style:none;padding:0;margin:4px 0;font-size:12px}
li i{display:inline-block;width:10px;height:10px;margin-right:4px}
.legend span{margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.options{display:flex;gap:16px;align-items:flex-start}
.option{border:1px solid #adb5bd;border-radius:8px;padding:10px;flex:1;min-width:0}.option code{overflow-wrap:anywhere}
.option.chosen{border:3px solid #37b24d}#detail{position:fixed;right:12px;top:12px;background:#fff;
border:1px solid #adb5bd;padding:6px;font-size:12px;display:none}
"""
# Hovering a segment shows its numbers in a fixed box (the SVG <title> does the same without script).
_SCRIPT = """
document.addEventListener('mouseover', function (e) {
  var d = document.getElementById('detail');
  var t = e.target;
  if (t && t.dataset && t.dataset.kind) {
    var size = (Number(t.dataset.bytes) / 1073741824).toFixed(2);
    d.textContent = t.dataset.kind + ' (' + t.dataset.owner + '): ' + size + ' GiB';
    d.style.display = 'block';
  }
});
"""


def _page(title: str, body: str) -> str:
    legend = "".join(f'<span><i style="background:{c}"></i>{escape(label)}</span>' for _, label, c in KINDS)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1><p class="legend">{legend}</p>{body}'
            f'<div id="detail"></div><script>{_SCRIPT}</script></body></html>\n')


def render_report(report, fail_level=None) -> str:  # fail_level: read by junit only
    """`gsg validate --output html`."""
    bars = report_bars(report)
    scale = BAR_HEIGHT / max((b.total for b in bars), default=1)
    errors = sum(1 for f in report.findings if f.severity.value == "error")
    warnings = sum(1 for f in report.findings if f.severity.value == "warning")
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
    summary = f"<p>{plural(report.specs, 'spec')}: {plural(errors, 'error')}, {plural(warnings, 'warning')}.</p>"
    loose = [f for f in report.findings if f.severity.value == "error" and not any(
        f.spec == ev.rendered.name and ev.placement for ev in report.evaluations)]
    unplaced = "".join(f'<p class="finding error"><b>{escape(f.rule.id)}</b> {escape(str(f.location))}: '
                       f'{escape(f.message)}</p>' for f in loose)
    grid = "".join(_bar_block(b, scale) for b in bars)
    return _page("gsg validate: memory per GPU", summary + unplaced + f'<div class="grid">{grid}</div>')


def advice_bars(option) -> list[Bar]:
    """One bar per deployment: its worst rank (every GPU of a tensor-parallel group holds the same)."""
    bars = []
    for d in option.deployments:
        shown = d.closest  # a pool that does not fit still shows its closest candidate's bar, and why
        if shown is None or shown.estimate is None:
            continue
        est = shown.estimate
        label = d.gpu_ids[0] if len(d.gpu_ids) == 1 else f"{d.gpu_ids[0]} … ({len(d.gpu_ids)} GPUs)"
        bar = Bar(label, d.name if d.fits else f"{d.name} (closest, does not fit)", est.gpu_total,
                  deployment_segments(d.name, est))
        bar.findings = [(f.severity.value, f.rule.id, f.message) for f in
                        sorted(shown.findings, key=lambda f: -f.severity.rank) if f.severity.value != "info"][:1]
        bars.append(bar)
    return bars


def render_advice(advice) -> str:
    """`gsg advise --output html`: the compared options side by side, the chosen one outlined."""
    options = [(o, advice_bars(o)) for o in advice.options]
    scale = BAR_HEIGHT / max((b.total for _, bars in options for b in bars), default=1)
    blocks = []
    for option, bars in options:
        chosen = " chosen" if option is advice.chosen else ""
        head = (f'<h2>{escape(option.kind)}{" (recommended)" if chosen else ""}</h2><p>'
                + ("fits, resident weights " + escape(gib(option.resident_weights)) if option.fits
                   else "does not fit") + f". {escape(option.queueing)}</p>")
        why = "".join(f'<p class="finding error">{escape(d.name)}: {escape(d.why_not)}</p>'
                      for d in option.deployments if not d.fits)
        shares = "".join(f"<li>{escape(s.workload.name)}: {s.at_peak} of {s.workload.concurrency} running at peak, "
                         f"{s.alone} alone</li>" for s in option.shares)
        flags = "".join(f"<p><code>{escape(d.name)}: {escape(' '.join(d.chosen.parameters))}</code></p>"
                        for d in option.deployments if d.fits)
        grid = "".join(_bar_block(b, scale) for b in bars)
        blocks.append(f'<section class="option{chosen}" data-option="{escape(option.kind)}">{head}'
                      f'{escape(option.note)}{why}<ul>{shares}</ul>{flags}<div class="grid">{grid}</div></section>')
    t = advice.target
    title = f"gsg advise: {t.model} on {len(t.gpu_ids)} x {gib(t.gpu_memory)}"
    decision = f"<p><b>Decision: {escape(advice.decision)}</b> — {escape(advice.reason)}</p>"
    hints = "".join(f"<p>would fit: {escape(h)}</p>" for h in advice.would_fit)
    return _page(title, decision + hints + f'<div class="options">{"".join(blocks)}</div>')
