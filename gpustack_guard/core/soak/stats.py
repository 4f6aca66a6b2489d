"""Order statistics and robust trends over short series (a soak has a handful of rounds, not thousands)."""

from __future__ import annotations

from typing import Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between closest ranks; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * q / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 50.0)


def theil_sen_slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Median of the pairwise slopes: one outlying round cannot tilt it, unlike least squares."""
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i])
              for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[j] != xs[i]]
    return median(slopes)


def rising_pair_fraction(ys: Sequence[float]) -> float | None:
    """Share of ordered pairs (i < j) with y_j > y_i, ties counting half: 1.0 is strictly monotonic rising.

    Kendall-style: robust to one noisy round where "every step rises" is not.
    """
    pairs = [(ys[i], ys[j]) for i in range(len(ys)) for j in range(i + 1, len(ys))]
    if not pairs:
        return None
    return sum(1.0 if b > a else 0.5 if b == a else 0.0 for a, b in pairs) / len(pairs)
