"""The load a soak offers (pure): open-loop arrival schedules, SLOs and goodput, sweeps, stored samples, limits.

Closed loop (--concurrency C) keeps C requests in flight: a slow server slows its own load down, which hides
queueing. Open loop (--rate R) sends on a schedule whatever the server does, as `vllm bench serve
--request-rate` and GuideLLM's `constant`/`poisson` profiles do, so queueing shows in TTFT and goodput.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from gpustack_guard.core.soak.metrics import whole
from gpustack_guard.core.soak.stats import percentile
from gpustack_guard.core.values import frozen_value

ARRIVALS = ("poisson", "constant")
MAX_RATE = 10_000.0  # requests per second: past this the client, not the server, is what gets measured
MAX_WARMUP_ROUNDS = 100
MAX_SWEEP_STEPS = 16
MAX_CONCURRENCY = 4096
MAX_ROUND_SECONDS = 86_400.0  # a day: past it a round is a typo (or inf), and its schedule would never end
MAX_REQUEST_TIMEOUT = 86_400.0
MAX_ROUND_ARRIVALS = 1_000_000  # open loop: requests one round schedules (its offsets are made before it starts)
METRICS = ("ttft", "itl", "e2e")
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0}
SLO_EXAMPLE = "ttft_p99=2s,itl_p99=80ms"


# ---------------------------------------------------------------- limits


@frozen_value(eq=True, repr=True)
class SoakLimits:
    """What a soak keeps and sends at most; each can be set from the environment."""

    max_stored_samples: int = 200_000  # values kept for the JSON (a TTFT, an E2E, a token count, each ITL gap)
    max_in_flight: int = 1024  # open loop: requests in flight at once; an arrival past it is not sent
    max_dataset_bytes: int = 1024 ** 3  # --dataset file size (ShareGPT's V3 file is about 640 MiB)
    max_dataset_entries: int = 1_000_000  # --dataset records kept
    # a round's requests keep every inter-token gap for exact ITL percentiles (~32 bytes a gap in a list: 4 M is
    # ~128 MiB, 256 streams at 60 tokens/s for 4 minutes); once this many are held the round starts no request
    max_round_gaps: int = 4_000_000

    ENV = {"max_stored_samples": "GSG_SOAK_MAX_SAMPLES", "max_in_flight": "GSG_SOAK_MAX_IN_FLIGHT",
           "max_dataset_bytes": "GSG_SOAK_MAX_DATASET_BYTES", "max_dataset_entries": "GSG_SOAK_MAX_DATASET_ENTRIES",
           "max_round_gaps": "GSG_SOAK_MAX_ROUND_GAPS"}

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> SoakLimits:
        """Raises ValueError naming the variable when a value is not a positive whole number."""
        values = {}
        for name, variable in cls.ENV.items():
            text = environ.get(variable, "").strip()
            if not text:
                continue
            value = whole(text)  # ASCII digits, at most 18: int() refuses '²' (a digit to isdigit()) and 4,300+
            if value is None or value < 1:
                raise ValueError(f"{variable} must be a positive whole number, not '{text[:40]}'")
            values[name] = value
        return cls(**values)


# ---------------------------------------------------------------- arrivals


def arrival_offsets(rate: float, arrival: str, seconds: float, seed: int, round_index: int,
                    limit: int | None = None) -> list[float]:
    """When each request of a round starts, in seconds from the round's start: the first at 0, then gaps of
    1/rate (constant) or exponential gaps of mean 1/rate (poisson, seeded by seed and round: the same run gives
    the same schedule, each round its own). At most `limit` requests."""
    if not 0 < rate <= MAX_RATE:
        raise ValueError(f"rate {rate} is outside (0, {MAX_RATE:g}]")
    if arrival not in ARRIVALS:
        raise ValueError(f"arrival {arrival!r}: expected one of {', '.join(ARRIVALS)}")
    rng = random.Random(seed * 1_000_033 + round_index)
    offsets: list[float] = []
    at = 0.0
    while at < seconds and (limit is None or len(offsets) < limit):
        offsets.append(at)
        at = len(offsets) / rate if arrival == "constant" else at + rng.expovariate(rate)
    return offsets


# ---------------------------------------------------------------- SLOs and goodput


@frozen_value(eq=True, repr=True)
class Slo:
    metric: str  # ttft | itl | e2e
    label: str  # p50 | p90 | p95 | p99
    limit_s: float

    @property
    def key(self) -> str:
        return f"{self.metric}_{self.label}"

    @property
    def percentile(self) -> float:
        return PERCENTILES[self.label]


_DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(ms|s)$")


def parse_duration(text: str) -> float:
    """'2s' -> 2.0, '80ms' -> 0.08; a unit is required (2 could be seconds or milliseconds)."""
    match = _DURATION.match(text.strip().lower())
    if not match:
        raise ValueError(f"{text!r} is not a duration: write it with its unit, e.g. 2s or 80ms")
    value = float(match.group(1)) / (1000.0 if match.group(2) == "ms" else 1.0)
    if value <= 0:
        raise ValueError(f"{text!r}: a limit must be more than 0")
    return value


def parse_slos(text: str) -> tuple[Slo, ...]:
    """'ttft_p99=2s,itl_p99=80ms' -> the SLOs, one per metric and percentile; ValueError names the bad part."""
    slos: dict[str, Slo] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        metric, _, label = name.strip().lower().partition("_")
        if not sep or metric not in METRICS or label not in PERCENTILES:
            raise ValueError(f"{part!r}: expected METRIC_PERCENTILE=DURATION with METRIC one of "
                             f"{', '.join(METRICS)} and PERCENTILE one of {', '.join(PERCENTILES)}, "
                             f"e.g. {SLO_EXAMPLE}")
        try:
            slo = Slo(metric, label, parse_duration(value))
        except ValueError as exc:
            raise ValueError(f"{name.strip().lower()}: {exc}") from None
        if slo.key in slos:
            raise ValueError(f"{slo.key} is given twice")
        slos[slo.key] = slo
    if not slos:
        raise ValueError(f"no SLO given, e.g. {SLO_EXAMPLE}")
    return tuple(slos.values())


def describe_slos(slos: Sequence[Slo]) -> str:
    return ", ".join(f"{s.key} ≤ {_duration_text(s.limit_s)}" for s in slos)


def _duration_text(seconds: float) -> str:
    return f"{seconds * 1000:g} ms" if seconds < 1 else f"{seconds:g} s"


def request_value(metric: str, q: float, ttft_s: float | None, gaps_s: Sequence[float], e2e_s: float) -> float | None:
    """One request's own value of an SLO's metric: its TTFT, its end-to-end time, or the q-th percentile of
    its own inter-token gaps (None: a one-token answer has no gap to hold against an ITL limit)."""
    if metric == "ttft":
        return ttft_s
    if metric == "e2e":
        return e2e_s
    return percentile(gaps_s, q)


def request_meets(ok: bool, ttft_s: float | None, gaps_s: Sequence[float], e2e_s: float,
                  slos: Iterable[Slo]) -> bool:
    """Goodput counts a request when it succeeded and its own TTFT, ITL and end-to-end time are within every
    limit (per request, as vllm bench serve's --goodput); a failed request never counts."""
    if not ok:
        return False
    for slo in slos:
        value = request_value(slo.metric, slo.percentile, ttft_s, gaps_s, e2e_s)
        if value is None and slo.metric != "itl":
            return False  # a success without a first token cannot show it met a TTFT limit
        if value is not None and value > slo.limit_s:
            return False
    return True


def round_misses(figures: Mapping[str, float | None], slos: Iterable[Slo]) -> list[str]:
    """The SLOs a round's own percentiles miss, as 'ttft_p99 2.31 s > 2 s'; a percentile the round could not
    measure (no successful request) misses too."""
    missed = []
    for slo in slos:
        value = figures.get(slo.key)
        if value is None:
            missed.append(f"{slo.key} not measured (no successful request)")
        elif value > slo.limit_s:
            missed.append(f"{slo.key} {_duration_text(value)} > {_duration_text(slo.limit_s)}")
    return missed


# ---------------------------------------------------------------- sweeps


@frozen_value(eq=True, repr=True)
class Sweep:
    dimension: str  # rate | concurrency
    values: tuple[float, ...]  # ascending


def parse_sweep(text: str) -> Sweep:
    """'rate:1,2,4,8' or 'concurrency:4,8,16': ascending steps, each a valid --rate or --concurrency."""
    dimension, sep, rest = text.strip().partition(":")
    dimension = dimension.strip().lower()
    if not sep or dimension not in ("rate", "concurrency"):
        raise ValueError(f"{text!r}: expected rate:R1,R2,... or concurrency:C1,C2,..., e.g. rate:1,2,4,8")
    values: list[float] = []
    for part in (p.strip() for p in rest.split(",") if p.strip()):
        try:
            value = float(part) if dimension == "rate" else int(part)
        except ValueError:
            raise ValueError(f"{dimension} step {part!r} is not a {'number' if dimension == 'rate' else 'whole number'}"
                             ) from None
        if dimension == "rate" and not (0 < value <= MAX_RATE and math.isfinite(value)):
            raise ValueError(f"rate step {part}: must be more than 0 and at most {MAX_RATE:g} requests/s")
        if dimension == "concurrency" and not 1 <= value <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency step {part}: must be between 1 and {MAX_CONCURRENCY}")
        if values and value <= values[-1]:
            raise ValueError(f"{dimension} steps must be ascending: {part} after {values[-1]:g}")
        values.append(float(value))
    if not values:
        raise ValueError(f"{text!r}: no steps, e.g. {dimension}:1,2,4,8")
    if len(values) > MAX_SWEEP_STEPS:
        raise ValueError(f"{len(values)} steps: a sweep has at most {MAX_SWEEP_STEPS}")
    return Sweep(dimension, tuple(values))


@dataclass
class StepOutcome:
    value: float
    met: bool
    reasons: list[str]  # why not: the first misses, or the error rate
    goodput: float | None


def step_outcome(value: float, rounds_misses: Sequence[list[str]], requests: int, errors: int,
                 met_requests: int, max_error_rate: float) -> StepOutcome:
    """A step meets the SLOs when every measured round's percentiles are within them (an SLO held only on
    average over rounds is not held) and at most max_error_rate of its requests failed."""
    reasons = [f"round {i + 1}: {miss}" for i, misses in enumerate(rounds_misses) for miss in misses][:3]
    if not rounds_misses:
        reasons = ["no measured round"]
    if requests and errors / requests > max_error_rate:
        reasons.insert(0, f"{errors} of {requests} requests failed ({errors / requests:.1%} > {max_error_rate:.0%})")
    return StepOutcome(value, not reasons, reasons, met_requests / requests if requests else None)


def sweep_best(outcomes: Sequence[StepOutcome]) -> float | None:
    """The highest step that met the SLOs (the sweep stops at the first that does not)."""
    met = [o.value for o in outcomes if o.met]
    return max(met) if met else None


# ---------------------------------------------------------------- stored samples


SAMPLE_SCALARS = 4  # started, TTFT, end-to-end, output tokens: what one stored request costs before its gaps


def pick_samples(gap_counts: Sequence[int], budget: int) -> tuple[list[int], list[int], int, int]:
    """Which requests' samples a round keeps within `budget` values: all of them when they fit, else every
    k-th (spread over the round, not its first seconds); gaps past the budget are cut.

    Returns (indices kept, gaps kept per kept index, requests dropped, gaps cut from kept requests)."""
    total = sum(SAMPLE_SCALARS + g for g in gap_counts)
    stride = 1 if total <= budget else math.ceil(total / max(budget, 1))
    kept, kept_gaps = [], []
    left = budget
    for index in range(0, len(gap_counts), stride):
        if left < SAMPLE_SCALARS:
            break
        left -= SAMPLE_SCALARS
        gaps = min(gap_counts[index], left)
        left -= gaps
        kept.append(index)
        kept_gaps.append(gaps)
    cut_gaps = sum(gap_counts[i] for i in kept) - sum(kept_gaps)
    return kept, kept_gaps, len(gap_counts) - len(kept), cut_gaps
