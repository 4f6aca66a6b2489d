"""The verdict: which of memory growth, preemption or failure explains a soak, with the evidence and the fix.

Offered load is held fixed across rounds, so a trend across rounds is the server's, not the client's:
- memory rising monotonically (idle baseline after each round when there is one), no preemptions: the KV
  pool or something outside it is growing (`memory-growth`); recycle before it runs out;
- preemptions recurring, or the KV pool pinned near full with TTFT p95 climbing, memory flat: `preemption`;
  cap --max-num-seqs at what ran when the first preemption came;
- TTFT p95 climbing with flat memory and no preemption seen: `latency-drift` (placement, contention or the
  proxy in between); a reference endpoint serving the same model tells local from shared;
- too many errors: `failing`, whatever else is going on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpustack_guard.core.engine_knobs import KNOBS
from gpustack_guard.core.soak.rounds import RoundStats
from gpustack_guard.core.soak.stats import median, rising_pair_fraction, theil_sen_slope
from gpustack_guard.core.values import frozen_value

STABLE, MEMORY_GROWTH, PREEMPTION, LATENCY_DRIFT, FAILING, INCOMPLETE, INCONCLUSIVE = (
    "stable", "memory-growth", "preemption", "latency-drift", "failing", "incomplete", "inconclusive")
MIN_ROUNDS = 3  # a trend needs three points (Trend.of): fewer rounds cannot show one, so cannot show its absence
MISSING_SIGNAL_SHARE = 0.5  # a metrics URL failing in more than this share of scrapes: its signal is missing
LOCAL, SHARED = "local", "shared"
GIB = 1024 ** 3
MIB = 1024 ** 2


@frozen_value(eq=True, repr=True)
class Thresholds:
    max_error_rate: float = 0.05  # over the whole run
    memory_growth_fraction: float = 0.02  # growth across the run, relative to its median level
    memory_growth_bytes: float = 16 * MIB  # and at least this much, whatever the level
    memory_monotonic: float = 0.8  # share of rising round pairs
    ttft_growth_fraction: float = 0.3  # TTFT p95 growth across the run, relative to its median
    ttft_p50_growth_fraction: float = 0.3  # and the p50 too: one slow request in a round moves a p95, not a p50
    ttft_monotonic: float = 0.75
    kv_pinned: float = 0.95  # KV usage at or above this ...
    kv_pinned_rounds: float = 0.5  # ... in at least this share of rounds
    recycle_at: float = 0.9  # recycle when memory reaches this share of the limit
    client_lag_share: float = 0.1  # the client's loop lag (p95) worth a warning, relative to TTFT p50


@dataclass
class Trend:
    """A per-round series' robust trend: slope per round, growth across the run, monotonicity."""
    values: list[float]
    slope_per_round: float | None
    growth: float | None  # slope × (rounds − 1), in the series' unit
    growth_fraction: float | None  # growth relative to the median level
    rising: float | None  # rising_pair_fraction

    @classmethod
    def of(cls, values: list[float | None]) -> Trend:
        present = [(i, v) for i, v in enumerate(values) if v is not None]
        ys = [v for _, v in present]
        if len(present) < 3:
            return cls(ys, None, None, None, None)
        slope = theil_sen_slope([float(i) for i, _ in present], ys)
        # three or more distinct x (the round indices) always give at least one pairwise slope
        assert slope is not None
        growth = slope * (present[-1][0] - present[0][0])
        level = median(ys)
        return cls(ys, slope, growth, growth / level if level else None, rising_pair_fraction(ys))

    def climbing(self, fraction: float, monotonic: float, min_growth: float = 0.0) -> bool:
        # of() sets growth and rising whenever it sets growth_fraction; the checks only narrow the types
        return (self.growth_fraction is not None and self.growth_fraction >= fraction
                and self.growth is not None and self.growth >= min_growth
                and self.rising is not None and self.rising >= monotonic)


@dataclass
class Recommendation:
    action: str  # e.g. "--max-num-seqs 12", "recycle"
    reason: str
    value: float | None = None


@dataclass
class Verdict:
    verdict: str
    locality: str | None = None  # with a reference endpoint and a degraded verdict: local | shared
    evidence: list[str] = field(default_factory=list)
    recommendations: list[Recommendation] = field(default_factory=list)
    memory_source: str | None = None
    memory_slope_bytes_per_s: float | None = None
    ttft_p95_slope_s_per_round: float | None = None
    seconds_to_memory_limit: float | None = None
    warnings: list[str] = field(default_factory=list)  # what the verdict could not see
    events: list[dict] = field(default_factory=list)  # {"kind": "restart" | "endpoint-down", "at_s": ...}

    @property
    def degraded(self) -> bool:
        return self.verdict != STABLE


def _bytes(value: float) -> str:
    return f"{value / GIB:.2f} GiB" if abs(value) >= GIB else f"{value / MIB:.1f} MiB"


def _duration(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def _pct(value: float) -> str:
    return f"{value * 100:+.0f} %"


def _client_and_restarts(rounds: list[RoundStats], t: Thresholds, restarts: int) -> list[str]:
    """Evidence that is about the measurement itself: gsg's own event loop, and the instance restarting."""
    notes = []
    lagging = [r for r in rounds if r.client_lag_p95_s is not None and r.ttft_p50_s
               and r.client_lag_p95_s > max(t.client_lag_share * r.ttft_p50_s, 0.005)]
    if lagging:
        worst = max(lagging, key=lambda r: r.client_lag_p95_s or 0.0)
        notes.append(f"gsg itself was busy: its event loop woke {(worst.client_lag_p95_s or 0) * 1000:.0f} ms late "
                     f"(p95) in round {worst.index + 1}, against a TTFT p50 of {(worst.ttft_p50_s or 0) * 1000:.0f} "
                     "ms; latencies include the client's share (lower --concurrency or give gsg a free core)")
    if restarts:
        notes.append(f"the instance restarted {restarts} time(s) (a counter went back or the process start time "
                     "moved)")
    return notes


def classify(rounds: list[RoundStats], memory_source: str | None, reference: list[RoundStats] | None = None,
             thresholds: Thresholds = Thresholds(), host_memory_bytes: float | None = None,
             memory_limit_bytes: float | None = None, down_at_s: float | None = None,
             engine: str | None = None) -> Verdict:
    """`engine`: the family whose metrics were seen (vllm, sglang, llamacpp; None: not known), whose flags the
    recommendations name; `host_memory_bytes`: the machine's memory when the signal is a local process's;
    `memory_limit_bytes`: what the signal runs out at, given by the user (a cgroup limit), over any other;
    `down_at_s`: when the endpoint stopped accepting connections (the run then stopped early)."""
    out = _classify(rounds, memory_source, reference, thresholds, host_memory_bytes, memory_limit_bytes, engine)
    _what_was_not_seen(out, rounds, down_at_s)
    return out


def _what_was_not_seen(out: Verdict, rounds: list[RoundStats], down_at_s: float | None) -> None:
    """Restarts and a dead endpoint are events, never folded into "stable"; a missing signal or too few rounds
    make "stable" a claim the evidence cannot carry: inconclusive, with the reason."""
    for r in rounds:
        out.events += [{"kind": "restart", "at_s": round(at, 3), "round": r.index + 1} for at in r.restart_at_s]
    if down_at_s is not None:
        out.events.append({"kind": "endpoint-down", "at_s": round(down_at_s, 3)})
        out.verdict = FAILING
        out.evidence.insert(0, f"the endpoint stopped accepting connections at {down_at_s:.1f} s: the run stopped "
                               "there instead of running on against a dead server")
        out.evidence.insert(1, _last_seen(rounds, out.memory_source))
        out.recommendations = [Recommendation("investigate", "the server went away during the soak: read its log "
                                              "(an OOM or a crash) before reading any trend")]
    restarts = [e for e in out.events if e["kind"] == "restart"]
    if restarts and out.verdict in (STABLE, LATENCY_DRIFT):
        out.verdict = FAILING
        out.evidence.insert(0, "the instance restarted at " + ", ".join(f"{e['at_s']:.1f} s" for e in restarts)
                            + ": a crash under load, whatever the figures before and after it show")
    failed: dict[str, int] = {}
    for r in rounds:
        for reason, count in r.scrape_error_reasons.items():
            failed[reason] = failed.get(reason, 0) + count
    scrapes = sum(r.scrapes for r in rounds)
    missing = False
    for reason, count in sorted(failed.items()):
        out.warnings.append(f"{reason} in {count} of {scrapes} scrapes: the verdict is drawn without what it "
                            "should have shown")
        missing = missing or count > MISSING_SIGNAL_SHARE * scrapes
    if out.verdict != STABLE:
        return
    if missing:
        out.verdict = INCONCLUSIVE
        out.evidence.insert(0, "inconclusive: a metrics endpoint could not be read in most scrapes, so memory, KV "
                               "and preemption were not seen; stable cannot be claimed without them")
    elif len(rounds) < MIN_ROUNDS:
        out.verdict = INCONCLUSIVE
        out.evidence.insert(0, f"inconclusive: {len(rounds)} round(s) completed; a trend needs at least "
                               f"{MIN_ROUNDS}")


def _last_seen(rounds: list[RoundStats], memory_source: str | None) -> str:
    """The engine's state in the last round that read any of it: what was running as it went down (an OOM shows
    as KV or memory at its top, a crash under light load as neither)."""
    for r in reversed(rounds):
        seen = [f"KV usage max {r.kv_usage_max:.0%}" if r.kv_usage_max is not None else "",
                f"{r.running_max:.0f} running" if r.running_max is not None else "",
                f"{r.waiting_max:.0f} waiting" if r.waiting_max is not None else "",
                f"{r.preemptions:.0f} preemptions" if r.preemptions is not None else "",
                f"memory {_bytes(r.memory[memory_source])}" if memory_source in r.memory else ""]
        if any(seen):
            return f"last seen, in round {r.index + 1}: " + ", ".join(part for part in seen if part)
    return "no engine metrics were read before it went down"


def _classify(rounds: list[RoundStats], memory_source: str | None, reference: list[RoundStats] | None,
              thresholds: Thresholds, host_memory_bytes: float | None,
              memory_limit_bytes: float | None, engine: str | None = None) -> Verdict:
    t = thresholds
    out = Verdict(STABLE, memory_source=memory_source)
    if not rounds:
        out.verdict = INCOMPLETE
        out.evidence.append("no round completed")
        return out
    requests = sum(r.requests for r in rounds)
    errors = sum(r.errors for r in rounds)
    error_rate = errors / requests if requests else 0.0
    ttft = Trend.of([r.ttft_p95_s for r in rounds])
    ttft_p50 = Trend.of([r.ttft_p50_s for r in rounds])
    out.ttft_p95_slope_s_per_round = ttft.slope_per_round
    # the chosen source's figures, read here: a round's memory_bytes is a report's column, not the verdict's input
    idle = [r.idle_memory.get(memory_source) if memory_source else None for r in rounds]
    use_idle = all(value is not None for value in idle)
    memory = Trend.of(idle if use_idle else [r.memory.get(memory_source) if memory_source else None
                                             for r in rounds])
    preempt_counts = [r.preemptions for r in rounds if r.preemptions is not None]
    preemptions = sum(preempt_counts)
    preempting_rounds = sum(1 for p in preempt_counts if p > 0)
    kv = [r.kv_usage_max for r in rounds if r.kv_usage_max is not None]
    pinned_rounds = sum(1 for k in kv if k >= t.kv_pinned)
    kv_pinned = bool(kv) and pinned_rounds >= t.kv_pinned_rounds * len(kv)
    # a full pool is preemption's sign only where no counter says otherwise: a counter read at zero in every round
    # with the pool pinned (a prefix cache or a slot's cached prompt holds blocks; requests queue for the rest) was
    # called preemption, and --max-num-seqs cut for preemptions that never happened
    counted_none = bool(preempt_counts) and preemptions == 0
    restarts = sum(r.restarts for r in rounds)
    round_seconds = median([r.seconds for r in rounds]) or 1.0
    if memory.slope_per_round is not None:
        # rounds are spaced by their length plus the drain: the start times give the real clock
        span = rounds[-1].started_s - rounds[0].started_s
        per_round = span / (len(rounds) - 1) if len(rounds) > 1 and span > 0 else round_seconds
        out.memory_slope_bytes_per_s = memory.slope_per_round / per_round

    # the p50 must rise round over round; the p95 (a few slow requests in a short round) must grow as much,
    # but may zigzag on the way
    ttft_climbing = ttft_p50.climbing(t.ttft_p50_growth_fraction, t.ttft_monotonic) and \
        ttft.growth_fraction is not None and ttft.growth_fraction >= t.ttft_growth_fraction
    lag = Trend.of([r.client_lag_p50_s for r in rounds])
    client_bound = False
    if ttft_climbing and lag.growth is not None and lag.growth > 0 and ttft_p50.growth is not None:
        # a client that got busier delays every stream it reads (and, in-process, the server it talks to):
        # a TTFT p50 growth of the order of the client's own typical lag growth is not the server's
        client_bound = ttft_p50.growth <= 1.5 * lag.growth
        ttft_climbing = not client_bound
    memory_growing = memory.climbing(t.memory_growth_fraction, t.memory_monotonic, t.memory_growth_bytes)
    preempting = preemptions > 0 and (preempting_rounds >= 2 or ttft_climbing)

    if ttft.growth_fraction is not None and ttft_p50.growth_fraction is not None:
        out.evidence.append(f"TTFT p95 {ttft.values[0]:.3f} s → {ttft.values[-1]:.3f} s over {len(rounds)} rounds "
                            f"(Theil–Sen {_pct(ttft.growth_fraction)} across the run; p50 "
                            f"{_pct(ttft_p50.growth_fraction)}, {ttft_p50.rising:.0%} of round pairs rising)"
                            f"{'' if ttft_climbing else ': flat'}")
    if client_bound:
        # client_bound is only set above when both growths are known
        assert ttft_p50.growth is not None and lag.growth is not None
        out.evidence.append(f"TTFT p50 grew {ttft_p50.growth * 1000:.0f} ms while gsg's own event-loop lag grew "
                            f"{lag.growth * 1000:.0f} ms (p50): the client, not the server, got slower")
    if memory.growth is not None and memory.growth_fraction is not None:  # growth_fraction implies growth
        label = {"pid_rss": "RSS of --pid", "process_resident": "process resident memory",
                 "gpu_outside_pool": "GPU memory outside the booked pool", "gpu_used": "GPU memory used"}
        what = label.get(memory_source or "", "memory")
        out.evidence.append(
            f"{what}{' (idle, after each round drained)' if use_idle else ''} {_bytes(memory.values[0])} → "
            f"{_bytes(memory.values[-1])} ({_bytes(memory.growth)} across the run, {_pct(memory.growth_fraction)}, "
            f"{memory.rising:.0%} of round pairs rising){'' if memory_growing else ': flat'}")
    elif memory_source is None:
        out.evidence.append("no memory signal: pass --pid or a --metrics-url with process or GPU memory")
    if preempt_counts:
        out.evidence.append(f"{preemptions:.0f} preemptions in {preempting_rounds} of {len(preempt_counts)} rounds")
    else:
        out.evidence.append("no preemption counter in the metrics")
    if kv:
        out.evidence.append(f"KV usage max {max(kv):.0%}; at or above {t.kv_pinned:.0%} in {pinned_rounds} of "
                            f"{len(kv)} rounds")
    out.evidence.extend(_client_and_restarts(rounds, t, restarts))

    if requests and error_rate > t.max_error_rate:
        out.verdict = FAILING
        reasons: dict[str, int] = {}
        for r in rounds:
            for reason, count in r.error_reasons.items():
                reasons[reason] = reasons.get(reason, 0) + count
        top = ", ".join(f"{reason} ×{count}" for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
        out.evidence.insert(0, f"{errors} of {requests} requests failed ({error_rate:.1%} > "
                               f"{t.max_error_rate:.0%}): {top}")
    elif preempting or (kv_pinned and ttft_climbing and not memory_growing and not counted_none):
        out.verdict = PREEMPTION
    elif memory_growing:
        out.verdict = MEMORY_GROWTH
        if ttft_climbing:
            out.evidence.append("TTFT p95 tracks the memory growth")
    elif ttft_climbing:
        out.verdict = LATENCY_DRIFT
        out.evidence.append("TTFT p95 climbs with flat memory and no preemption: placement, contention on the "
                            "GPU or the proxy in front of it")
        if kv_pinned:
            out.evidence.append("the KV pool stayed full but the preemption counter read none: requests waited for "
                                "it (cached prefixes or a queue), which is no preemption")
    if requests and errors and out.verdict != FAILING:
        out.evidence.append(f"{errors} of {requests} requests failed ({error_rate:.1%})")

    _recommend(out, rounds, memory, kv_pinned, max(kv) if kv else None, host_memory_bytes, memory_limit_bytes, t,
               engine)
    if reference:
        _locality(out, reference, t)
    return out


def _recommend(out: Verdict, rounds: list[RoundStats], memory: Trend, kv_pinned: bool, kv_max: float | None,
               host_memory_bytes: float | None, memory_limit_bytes: float | None, t: Thresholds,
               engine: str | None = None) -> None:
    knobs = KNOBS.get(engine or "")
    # without the engine's own metric names the flags are vLLM's (GPUStack's default backend), said so
    flags = knobs or KNOBS["vllm"]
    unknown = "" if knobs else " (the metrics did not name the engine: vLLM's flag shown; {})"
    if out.verdict == PREEMPTION:
        running = next((r.running_at_first_preemption for r in rounds if r.running_at_first_preemption), None)
        if running:
            # that many did not fit in the pool together: one fewer is the most the engine should admit
            seqs = max(int(running) - 1, 1)
            others = ", ".join(f"{k.engine} {k.max_running} {seqs}" for f, k in KNOBS.items() if f != "vllm")
            out.recommendations.append(Recommendation(
                f"{flags.max_running} {seqs}", f"{int(running)} requests were running when the first preemption "
                f"came: admit at most {seqs} so that the rest queue instead of thrashing the KV pool"
                + unknown.format(others), seqs))
        if kv_pinned:
            others = ", ".join(f"{k.engine} {k.compact_kv_args()}" for f, k in KNOBS.items() if f != "vllm")
            out.recommendations.append(Recommendation(
                flags.compact_kv_args(), f"the KV pool was at {kv_max:.0%}: {flags.compact_kv_effect} (check "
                "long-context quality first)" + unknown.format(others)))
    if out.verdict == MEMORY_GROWTH and out.memory_slope_bytes_per_s:
        slope = out.memory_slope_bytes_per_s
        limit = rounds[-1].gpu_total_bytes if out.memory_source in ("gpu_outside_pool", "gpu_used") else \
            (host_memory_bytes or rounds[-1].host_total_bytes)
        last = memory.values[-1]
        # outside-the-pool bytes run out against what the pool left free on the card
        outside = out.memory_source == "gpu_outside_pool" and not memory_limit_bytes
        limit = memory_limit_bytes or limit
        if limit and slope > 0:
            room = limit - (rounds[-1].memory.get("gpu_used", last) if outside else last)
            out.seconds_to_memory_limit = max(room, 0) / slope
            threshold = last + max(room, 0) * t.recycle_at if outside else limit * t.recycle_at
            out.recommendations.append(Recommendation(
                "recycle", f"memory grows {_bytes(slope * 3600)}/h and runs out in about "
                f"{_duration(out.seconds_to_memory_limit)} ({_bytes(last)} of {_bytes(limit)}): recycle the "
                f"instance when it passes {_bytes(threshold)}, in about "
                f"{_duration(max(threshold - last, 0) / slope)}, instead of on a timer", threshold))
        else:
            out.recommendations.append(Recommendation(
                "recycle", f"memory grows {_bytes(slope * 3600)}/h; no memory limit in the metrics to project "
                "against (pass --memory-limit): recycle on this slope", None))
    if out.verdict == FAILING:
        out.recommendations.append(Recommendation(
            "investigate", "fix the errors first: a verdict on latency or memory needs requests that succeed"))


def _locality(out: Verdict, reference: list[RoundStats], t: Thresholds) -> None:
    """The reference's TTFT p50 (the field notes' control: steadier than a p95 over a short round)."""
    ref = Trend.of([r.ttft_p50_s for r in reference])
    if not ref.values:
        out.evidence.append("reference: no successful request")
        return
    level = median(ref.values)
    spread = max(abs(v - level) for v in ref.values) / level if level else 0.0
    # a reference that got faster (warm caches, a quieter neighbour) is inside its band; only an upward drift
    # like the one that counts against us makes the cause shared
    inside = not ref.climbing(t.ttft_p50_growth_fraction, t.ttft_monotonic)
    drift = f"{_pct(ref.growth_fraction)} across the run" if ref.growth_fraction is not None else "too few rounds"
    out.evidence.append(f"reference TTFT p50 median {level:.3f} s, every round within ±{spread:.0%} of it ({drift})")
    if not out.degraded:
        return
    out.locality = LOCAL if inside else SHARED
    if out.locality == LOCAL:
        out.evidence.append("the reference stays inside its band while ours degrades: the cause is local to "
                            "this deployment")
    else:
        out.evidence.append("the reference degrades too: the cause is shared (the cluster, the network or "
                            "the load itself), not this deployment")
