"""`gsg soak` output: a text row per round (as it finishes), the JSON document, and a self-contained report.html.

The HTML has no script and no external resource: inline CSS and SVG, so it opens offline and from a CI artifact.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from gpustack_guard.core.secrets import mask_url
from gpustack_guard.core.soak.rounds import RoundStats
from gpustack_guard.core.soak.verdict import Verdict
from gpustack_guard.core.values import frozen_value

JSON_FORMAT_VERSION = "1.1"  # minor: additive; major: breaking (1.1: the load model, issue 36)
GIB = 1024 ** 3
URL_SETTINGS = ("metrics_urls", "reference_metrics_urls")
MIB = 1024 ** 2


@dataclass
class SoakReport:
    url: str
    model: str
    settings: dict
    rounds: list[RoundStats]
    verdict: Verdict
    reference_url: str | None = None
    reference_model: str | None = None
    reference_rounds: list[RoundStats] = field(default_factory=list)
    interrupted: bool = False
    engines: list[str] = field(default_factory=list)  # whose metric names were seen: vLLM, SGLang, ...
    kv_pool: dict | None = None  # the KV pool the engine allocated (core/soak/metrics.observed_kv_pool)
    metric_names: list[str] = field(default_factory=list)  # which of the engine's own names the signals came from
    goodput: float | None = None  # with --slo: the share of the judged rounds' requests that met every SLO
    slo: dict | None = None  # with --slo: targets, met, misses, met_requests, requests
    sweep: dict | None = None  # with --sweep: dimension, steps, best, not_run, stopped_early
    samples: dict | None = None  # the stored-sample cap and what it left out

    def __post_init__(self) -> None:
        # masked once here, so the text, JSON and HTML (and any later renderer) never hold a URL's password or token
        self.url = mask_url(self.url)
        self.reference_url = mask_url(self.reference_url) if self.reference_url is not None else None
        self.settings = {**self.settings, **{key: [mask_url(str(url)) for url in self.settings[key]]
                                             for key in URL_SETTINGS if isinstance(self.settings.get(key), list)}}


# ---------------------------------------------------------------- text

def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f} s"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f} ms"


def _bytes(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / GIB:.2f} GiB" if abs(value) >= GIB else f"{value / MIB:.0f} MiB"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


@frozen_value(eq=True, repr=True)
class Column:
    heading: str
    width: int
    cell: Callable[[RoundStats], str]
    optional: bool = False  # shown in the text table only while the table still fits TABLE_WIDTH


COLUMNS = (
    Column("round", 5, lambda r: _round_name(r)),
    Column("requests", 8, lambda r: str(r.requests)),
    Column("errors", 6, lambda r: str(r.errors)),
    Column("TTFT p50", 9, lambda r: _s(r.ttft_p50_s)),
    Column("TTFT p95", 9, lambda r: _s(r.ttft_p95_s)),
    Column("TTFT p99", 9, lambda r: _s(r.ttft_p99_s)),
    Column("ITL p50", 8, lambda r: _ms(r.itl_p50_s)),
    Column("ITL p95", 8, lambda r: _ms(r.itl_p95_s)),
    Column("ITL p99", 8, lambda r: _ms(r.itl_p99_s)),
    Column("e2e p95", 9, lambda r: _s(r.e2e_p95_s), optional=True),
    Column("tok/s", 8, lambda r: f"{r.output_tokens_per_s:.1f}"),
    Column("KV max", 6, lambda r: _ratio(r.kv_usage_max)),
    Column("preempt", 7, lambda r: _count(r.preemptions)),
    Column("memory", 9, lambda r: _bytes(r.memory_bytes)),
    Column("idle mem", 9, lambda r: _bytes(r.idle_memory_bytes)),
)
REF_COLUMNS = (Column("ref p50", 9, lambda r: _s(r.ttft_p50_s)), Column("ref p95", 9, lambda r: _s(r.ttft_p95_s)))
SEPARATOR = "  "
# the widest a text row may grow (a maximised terminal, a CI log): optional columns are left out past it, so 146
# characters with e2e p95 alone, 157 without it beside a reference's two columns (168 with it)
TABLE_WIDTH = 160


def _width(columns: tuple[Column, ...]) -> int:
    return sum(c.width for c in columns) + len(SEPARATOR) * (len(columns) - 1)


def table_columns(with_reference: bool = False) -> tuple[Column, ...]:
    """The text table's columns: every one, less the optional ones when the row would pass TABLE_WIDTH."""
    everything = COLUMNS + (REF_COLUMNS if with_reference else ())
    if _width(everything) <= TABLE_WIDTH:
        return everything
    return tuple(c for c in everything if not c.optional)


def table_header(with_reference: bool = False) -> str:
    return SEPARATOR.join(c.heading.rjust(c.width) for c in table_columns(with_reference))


def _round_name(r: RoundStats) -> str:
    return f"{r.index + 1}{'w' if r.warmup else ''}"  # a warm-up round: shown, left out of the verdict


def table_row(r: RoundStats, reference: RoundStats | None = None, with_reference: bool | None = None) -> str:
    """One round's row; `with_reference` (default: whether `reference` is given) keeps the reference's columns,
    blank, in a table that has them for a round the reference did not answer."""
    with_ref = reference is not None if with_reference is None else with_reference
    cells = []
    for column in table_columns(with_ref):
        source = reference if column in REF_COLUMNS else r
        cells.append((column.cell(source) if source is not None else "-").rjust(column.width))
    return SEPARATOR.join(cells)


def round_load(plan, index: int) -> str:
    """The load round `index` of a plan runs at, in words: 'concurrency 8', '4 requests/s (poisson), warm-up'."""
    per_step = plan.warmup_rounds + plan.rounds
    steps = plan.steps()
    step, concurrency, rate = steps[min(index // per_step, len(steps) - 1)]
    load = f"{rate:g} requests/s ({plan.arrival})" if rate is not None else f"concurrency {concurrency}"
    return load + (", warm-up" if index % per_step < plan.warmup_rounds else "")


def progress_line(index: int, total: int, seconds: float, load: str) -> str:
    return f"gsg soak: round {index + 1}/{total}: {seconds:g} s at {load} ..."


def tick_line(index: int, total: int, elapsed: float, round_seconds: float, requests: int, errors: int) -> str:
    return (f"gsg soak: round {index + 1}/{total}: {min(elapsed, round_seconds):.0f}/{round_seconds:g} s, "
            f"{requests} requests, {errors} errors")


def verdict_text(report: SoakReport) -> str:
    v = report.verdict
    where = f" ({v.locality})" if v.locality else ""
    lines = [f"verdict: {v.verdict}{where}" + (" — interrupted, rounds so far" if report.interrupted else "")]
    lines += [f"  evidence: {e}" for e in v.evidence]
    lines += [f"  warning: {w}" for w in v.warnings]
    lines += [f"  event: {e['kind']} at {e['at_s']:.1f} s" for e in v.events]
    lines += [f"  recommend: {rec.action}: {rec.reason}" for rec in v.recommendations]
    lines += load_lines(report)
    if report.kv_pool:
        lines.append("  " + kv_pool_line(report.kv_pool))
    return "\n".join(lines) + "\n"


def _value(dimension: str, value: float) -> str:
    return f"{value:g} requests/s" if dimension == "rate" else f"concurrency {value:g}"


def load_lines(report: SoakReport) -> list[str]:
    """Goodput, whether the SLOs held, and a sweep's steps, as text lines."""
    lines = []
    if report.slo is not None:
        slo = report.slo
        share = "-" if report.goodput is None else f"{report.goodput:.1%}"
        lines.append(f"  goodput: {share} ({slo['met_requests']} of {slo['requests']} requests met "
                     f"{slo['targets']})")
        lines.append("  SLO: met" if slo["met"] else "  SLO: missed: " + "; ".join(slo["misses"]))
    if report.sweep is not None:
        sweep = report.sweep
        for step in sweep["steps"]:
            share = "-" if step["goodput"] is None else f"{step['goodput']:.1%}"
            lines.append(f"  sweep: {_value(sweep['dimension'], step['value'])}: "
                         + (f"met (goodput {share})" if step["met"] else
                            f"missed (goodput {share}): " + "; ".join(step["misses"]))
                         + (f"; verdict {step['verdict']}" if step.get("verdict") else ""))
        best = sweep["best"]
        lines.append(f"  sweep: highest {sweep['dimension']} meeting the SLOs: "
                     + (_value(sweep["dimension"], best) if best is not None else "none of the steps tried")
                     + (f" (not run after a miss: {', '.join(f'{v:g}' for v in sweep['not_run'])})"
                        if sweep["stopped_early"] else ""))
    return lines


def kv_pool_line(pool: dict) -> str:
    tokens = pool["observed_kv_capacity_tokens"]
    if pool["from"] == "metrics":
        line = f"KV pool: {tokens:,} tokens allocated by the engine (its /metrics)"
        if pool["file_kv_capacity_tokens"] is not None:
            line += (f"; the {pool['file_kind']} given with --observed says {pool['file_kv_capacity_tokens']:,} "
                     f"({pool['difference_percent']:+.1f} %)")
        return line
    return (f"KV pool: {tokens:,} tokens, from the {pool['file_kind']} given with --observed (the metrics export "
            "no pool size)")


def render_text(report: SoakReport) -> str:
    with_ref = bool(report.reference_rounds)
    refs = {r.index: r for r in report.reference_rounds}
    lines = [f"gsg soak {report.model} at {report.url}", table_header(with_ref)]
    lines += [table_row(r, refs.get(r.index), with_ref) for r in report.rounds]
    return "\n".join(lines) + "\n" + verdict_text(report)


# ---------------------------------------------------------------- JSON

def round_json(r: RoundStats) -> dict:
    return {"round": r.index + 1, "started_s": round(r.started_s, 3), "seconds": round(r.seconds, 3),
            "requests": r.requests, "errors": r.errors, "error_reasons": r.error_reasons,
            "warmup": r.warmup, "step": r.step, "concurrency": r.concurrency, "offered_rate": r.offered_rate,
            "ttft_p50_s": r.ttft_p50_s, "ttft_p90_s": r.ttft_p90_s, "ttft_p95_s": r.ttft_p95_s,
            "ttft_p99_s": r.ttft_p99_s, "itl_p50_s": r.itl_p50_s, "itl_p90_s": r.itl_p90_s, "itl_p95_s": r.itl_p95_s,
            "itl_p99_s": r.itl_p99_s, "e2e_p50_s": r.e2e_p50_s, "e2e_p90_s": r.e2e_p90_s, "e2e_p95_s": r.e2e_p95_s,
            "e2e_p99_s": r.e2e_p99_s, "slo_met_requests": r.slo_met_requests,
            "goodput": (r.slo_met_requests / r.requests if r.requests else None)
            if r.slo_met_requests is not None else None, "slo_misses": r.slo_misses,
            "output_tokens_per_s": round(r.output_tokens_per_s, 3), "kv_usage_max": r.kv_usage_max,
            "kv_usage_p95": r.kv_usage_p95, "preemptions": r.preemptions, "running_max": r.running_max,
            "waiting_max": r.waiting_max, "running_at_first_preemption": r.running_at_first_preemption,
            "memory_bytes": r.memory_bytes, "idle_memory_bytes": r.idle_memory_bytes,
            "memory_by_source": r.memory, "restarts": r.restarts, "scrape_errors": r.scrape_errors,
            "client_lag_p50_s": r.client_lag_p50_s, "client_lag_p95_s": r.client_lag_p95_s,
            "samples_dropped_requests": r.samples_dropped_requests, "samples_cut_itl_gaps": r.samples_cut_gaps,
            "gap_cap_hit": r.gap_cap_hit, "samples": r.samples}


def json_document(report: SoakReport) -> dict:
    from gpustack_guard.reporters import json_head

    v = report.verdict
    return {
        **json_head(JSON_FORMAT_VERSION),
        "command": "soak",
        "target": {"url": report.url, "model": report.model},
        "reference": ({"url": report.reference_url, "model": report.reference_model}
                      if report.reference_url else None),
        "settings": report.settings,
        "interrupted": report.interrupted,
        "engines": report.engines,
        "metric_names": report.metric_names,
        "observed_kv_capacity_tokens": report.kv_pool["observed_kv_capacity_tokens"] if report.kv_pool else None,
        "kv_pool": report.kv_pool,
        "verdict": v.verdict,
        "locality": v.locality,
        "goodput": report.goodput,
        "slo": report.slo,
        "sweep": report.sweep,
        "samples": report.samples,
        "evidence": v.evidence,
        "warnings": v.warnings,
        "events": v.events,
        "recommendations": [{"action": r.action, "reason": r.reason, "value": r.value} for r in v.recommendations],
        "trends": {"memory_source": v.memory_source, "memory_slope_bytes_per_s": v.memory_slope_bytes_per_s,
                   "ttft_p95_slope_s_per_round": v.ttft_p95_slope_s_per_round,
                   "seconds_to_memory_limit": v.seconds_to_memory_limit},
        "rounds": [round_json(r) for r in report.rounds],
        "reference_rounds": [round_json(r) for r in report.reference_rounds],
    }


def render_json(report: SoakReport) -> str:
    return json.dumps(json_document(report), indent=2) + "\n"


# ---------------------------------------------------------------- HTML

def _load_html(report: SoakReport) -> str:
    """Goodput, the SLOs and a sweep's steps, as the text output says them."""
    lines = load_lines(report)
    if not lines:
        return ""
    return "<h2>Load and SLOs</h2><ul>" + "".join(f"<li>{html.escape(line.strip())}</li>" for line in lines) + "</ul>"


def _warnings_html(v: Verdict) -> str:
    """What the verdict could not see, and what happened to the instance: their own list, never hidden."""
    items = [html.escape(w) for w in v.warnings]
    items += [html.escape(f"{e['kind']} at {e['at_s']:.1f} s") for e in v.events]
    return f"<h2>Warnings and events</h2><ul>{''.join(f'<li>{i}</li>' for i in items)}</ul>" if items else ""


def describe_settings(settings: dict) -> str:
    shapes = ", ".join(f"{w['prompt_tokens']}→{w['max_tokens']} tokens"
                       + (f" ×{w['weight']:g}" if w["weight"] != 1 else "") for w in settings.get("workload", []))
    if settings.get("rate") is not None:
        load = f"{settings['rate']:g} requests/s ({settings.get('arrival') or 'poisson'} arrivals)"
    elif settings.get("sweep"):
        load = f"a sweep of {settings['sweep']['dimension']} " + ", ".join(f"{v:g}" for v in settings["sweep"]["steps"])
    else:
        load = f"concurrency {settings['concurrency']}"
    warmup = f" after {settings['warmup_rounds']} warm-up round(s)" if settings.get("warmup_rounds") else ""
    dataset = settings.get("dataset")
    prompts = (f"prompts replayed from {dataset['file']} ({dataset['records']} records)" if dataset
               else f"prompts {shapes}")
    parts = [f"{settings['rounds']} rounds of {settings['round_seconds']:g} s{warmup} at {load}",
             f"{prompts} (seed {settings['seed']})"]
    if settings.get("metrics_urls"):
        parts.append("metrics from " + ", ".join(settings["metrics_urls"]))
    if settings.get("pid") is not None:
        parts.append(f"RSS of pid {settings['pid']}")
    return "; ".join(parts)


OURS, OURS_LIGHT, REFERENCE, REFERENCE_LIGHT = "#1f5fa8", "#7fa8d8", "#c0531b", "#e6a27c"
# one shade per percentile, light (p50) to dark (p99)
PERCENTILE_COLOURS = {"p50": "#9ec1e8", "p90": "#5b8fd0", "p95": "#1f5fa8", "p99": "#0b2f5e"}


def percentile_series(rounds: list[RoundStats], metric: str, labels=("p50", "p90", "p95", "p99")) -> list[Series]:
    """One series per percentile of a metric over the rounds (ttft, itl, e2e)."""
    return [Series(f"{metric.upper()} {q}", [r.figure(f"{metric}_{q}") for r in rounds], PERCENTILE_COLOURS[q])
            for q in labels]


def load_charts(report: SoakReport) -> str:
    """Each percentile of TTFT, ITL and end-to-end per round; goodput per round and per sweep step."""
    rounds = report.rounds
    names = [_round_name(r) for r in rounds]
    charts = [svg_chart("TTFT percentiles per round", percentile_series(rounds, "ttft"), _seconds_fmt,
                        x_labels=names),
              svg_chart("Inter-token latency per round", percentile_series(rounds, "itl"), _seconds_fmt,
                        x_labels=names),
              svg_chart("End-to-end latency per round", percentile_series(rounds, "e2e"), _seconds_fmt,
                        x_labels=names)]
    if report.slo is not None:
        goodput = [r.slo_met_requests / r.requests if r.requests and r.slo_met_requests is not None else None
                   for r in rounds]
        charts.append(svg_chart(f"Goodput per round ({report.slo['targets']})", [Series("goodput", goodput, OURS)],
                                lambda x, d: f"{x * 100:.{max(d - 2, 0)}f} %", y_top=1.0, x_labels=names))
    if report.sweep is not None and report.sweep["steps"]:
        steps = report.sweep["steps"]
        charts.append(svg_chart("Goodput per sweep step", [Series("goodput", [s["goodput"] for s in steps], OURS)],
                                lambda x, d: f"{x * 100:.{max(d - 2, 0)}f} %", y_top=1.0,
                                x_labels=[f"{s['value']:g}" for s in steps],
                                x_title="requests/s" if report.sweep["dimension"] == "rate" else "concurrency"))
    return "\n".join(charts)


@dataclass
class Series:
    label: str
    values: list[float | None]
    colour: str
    dashed: bool = False


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 × 10^k apart) covering [low, high]."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step) * step
    ticks = [first]
    while ticks[-1] < high - 1e-12 * step:
        ticks.append(first + step * len(ticks))
    return ticks


def _decimals(step: float) -> int:
    """Decimals that tell ticks `step` apart: 0.25 needs 2, 0.5 needs 1, 20 needs 0."""
    exponent = math.floor(math.log10(step))
    mantissa = round(step / 10 ** exponent, 3)
    return max(0, -exponent + (1 if mantissa == 2.5 else 0))


def svg_chart(title: str, series: list[Series], fmt, width: int = 560, height: int = 250,
              zero_based: bool = True, y_top: float | None = None, x_labels: list[str] | None = None,
              x_title: str = "round") -> str:
    """A line chart over rounds 1..n, one polyline (and dots) per series; fmt(value, decimals) labels the axis.

    Zero-based for latencies; memory is not (a leak of 2 % is invisible on an axis from zero); y_top fixes
    the top (KV usage: 100 %). x_labels name the points (a warm-up round "1w", a sweep's steps)."""
    left, right, top, bottom = 76, 16, 46, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [v for s in series for v in s.values if v is not None]
    n = max((len(s.values) for s in series), default=0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
             f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
             f'<text x="{left}" y="18" font-size="14" font-weight="600" fill="#222">{html.escape(title)}</text>']
    if not points or n == 0:
        parts.append(f'<text x="{left + 10}" y="{top + plot_h / 2}" font-size="13" fill="#777">no data</text></svg>')
        return "".join(parts)
    low = 0.0 if zero_based else min(points)
    high = max(points)
    if not zero_based:
        pad = (high - low) * 0.1 or abs(high) * 0.01 or 1.0
        low, high = low - pad, high + pad
    if y_top is not None and high <= y_top:
        ticks = [y_top * k / 4 for k in range(5)]
    else:
        ticks = nice_ticks(low, high * (1.08 if zero_based else 1.0))
    y_low, y_high = ticks[0], ticks[-1]
    decimals = _decimals(ticks[1] - ticks[0])

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h - plot_h * (v - y_low) / (y_high - y_low)

    for value in ticks:  # grid and y labels
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                     f'stroke="#e3e3e3"/>')
        parts.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" font-size="11" text-anchor="end" '
                     f'fill="#555">{html.escape(fmt(value, decimals))}</text>')
    for i in range(n):
        label = x_labels[i] if x_labels and i < len(x_labels) else str(i + 1)
        parts.append(f'<text x="{x(i):.1f}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle" '
                     f'fill="#555">{html.escape(label)}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 4}" font-size="11" text-anchor="middle" '
                 f'fill="#555">{html.escape(x_title)}</text>')
    for s in series:
        coords = [(x(i), y(v)) for i, v in enumerate(s.values) if v is not None]
        if not coords:
            continue
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        parts.append(f'<polyline fill="none" stroke="{s.colour}" stroke-width="2.5"{dash} points="'
                     + " ".join(f"{a:.1f},{b:.1f}" for a, b in coords) + '"/>')
        parts += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5" fill="{s.colour}"/>' for a, b in coords]
    legend_x = left
    for s in series:  # legend, under the title and above the plot
        if not any(v is not None for v in s.values):
            continue
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        parts.append(f'<line x1="{legend_x}" x2="{legend_x + 18}" y1="32" y2="32" '
                     f'stroke="{s.colour}" stroke-width="2.5"{dash}/>')
        parts.append(f'<text x="{legend_x + 22}" y="36" font-size="11" fill="#333">'
                     f'{html.escape(s.label)}</text>')
        legend_x += 30 + 7 * len(s.label)
    parts.append("</svg>")
    return "".join(parts)


def _seconds_fmt(value: float, decimals: int) -> str:
    return f"{value * 1000:.{max(decimals - 3, 0)}f} ms" if value < 1 else f"{value:.{max(decimals, 1)}f} s"


VERDICT_COLOUR = {"stable": "#2e7d32", "memory-growth": "#b26a00", "preemption": "#b26a00",
                  "latency-drift": "#b26a00", "failing": "#c62828", "incomplete": "#555555",
                  "inconclusive": "#555555"}


def render_html(report: SoakReport) -> str:
    v = report.verdict
    ours, ref = report.rounds, report.reference_rounds
    n = len(ours)

    def pad(values):
        return (values + [None] * n)[:n]

    ttft = [Series("ours p50", [r.ttft_p50_s for r in ours], OURS_LIGHT),
            Series("ours p95", [r.ttft_p95_s for r in ours], OURS)]
    names = [_round_name(r) for r in ours]
    if ref:
        ttft += [Series("reference p50", pad([r.ttft_p50_s for r in ref]), REFERENCE_LIGHT, True),
                 Series("reference p95", pad([r.ttft_p95_s for r in ref]), REFERENCE, True)]
    def gib(values):
        return [None if v is None else v / GIB for v in values]

    memory = [Series("ours (max)", gib([r.memory_bytes for r in ours]), OURS),
              Series("ours idle", gib([r.idle_memory_bytes for r in ours]), OURS_LIGHT, True)]
    kv = [Series("ours max", [r.kv_usage_max for r in ours], OURS),
          Series("ours p95", [r.kv_usage_p95 for r in ours], OURS_LIGHT, True)]
    if ref:  # series without data (no --reference-metrics-url) draw nothing and get no legend
        memory += [Series("reference (max)", pad(gib([r.memory_bytes for r in ref])), REFERENCE, True),
                   Series("reference idle", pad(gib([r.idle_memory_bytes for r in ref])), REFERENCE_LIGHT, True)]
        kv += [Series("reference max", pad([r.kv_usage_max for r in ref]), REFERENCE, True)]
    esc = html.escape
    rows = []
    refs = {r.index: r for r in ref}
    for r in ours:
        # the page has room for every column, the optional ones too
        cells = [c.cell(r) for c in COLUMNS]
        if ref:
            cells += [c.cell(refs[r.index]) if r.index in refs else "-" for c in REF_COLUMNS]
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    heads = [c.heading for c in COLUMNS + (REF_COLUMNS if ref else ())]
    settings = describe_settings(report.settings)
    locality = f" <span class=\"loc\">{esc(v.locality)}</span>" if v.locality else ""
    interrupted = "<p class=\"warn\">Interrupted: the rounds completed so far.</p>" if report.interrupted else ""
    metrics_line = (f"<p>Metrics read: {esc(', '.join(report.metric_names))}</p>" if report.metric_names else "")
    reference_line = (f"<p>Reference: {esc(report.reference_model or report.model)} at "
                      f"{esc(report.reference_url)}</p>" if report.reference_url else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gsg soak: {esc(report.model)}</title>
<style>
body{{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fafafa}}
h1{{font-size:20px;margin:0 0 6px}}
.verdict{{font-size:22px;font-weight:700;color:{VERDICT_COLOUR.get(v.verdict, "#222")}}}
.loc{{font-size:16px;padding:2px 8px;border-radius:4px;background:#eee;color:#333}}
.charts{{display:flex;flex-wrap:wrap;gap:12px}} .charts svg{{border:1px solid #ddd;background:#fff}}
table{{border-collapse:collapse;margin-top:12px;background:#fff}} td,th{{border:1px solid #ddd;padding:3px 8px;
text-align:right;font-size:13px}} th{{background:#f0f0f0}} .warn{{color:#c62828}} li{{margin:2px 0}}
</style></head><body>
<h1>gsg soak: {esc(report.model)} at {esc(report.url)}</h1>
{reference_line}<p>{esc(settings)}</p>{metrics_line}
<p class="verdict">{esc(v.verdict)}{locality}</p>{interrupted}
<h2>Evidence</h2><ul>{"".join(f"<li>{esc(e)}</li>" for e in v.evidence)}</ul>
{_warnings_html(v)}
<h2>Recommendations</h2><ul>{"".join(f"<li><b>{esc(r.action)}</b>: {esc(r.reason)}</li>" for r in v.recommendations)
                               or "<li>none</li>"}</ul>
{_load_html(report)}
<div class="charts">
{svg_chart("TTFT per round", ttft, _seconds_fmt, x_labels=names)}
{svg_chart("Memory per round" + (f" ({v.memory_source})" if v.memory_source else ""), memory,
           lambda x, d: f"{x:.{d}f} GiB", zero_based=False)}
{svg_chart("KV cache usage per round", kv, lambda x, d: f"{x * 100:.{max(d - 2, 0)}f} %", y_top=1.0)}
{load_charts(report)}
</div>
<h2>Rounds</h2>
<table><tr>{"".join(f"<th>{esc(h)}</th>" for h in heads)}</tr>{"".join(rows)}</table>
</body></html>
"""
