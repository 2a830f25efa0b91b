"""The shape of one cell's samples: two clusters (bimodal) or a trend over
the run (drift). Pure functions on per-call times in the order they were
taken; no I/O, no clocks.

A median with a narrow CI can still mislead: samples from two machine
states (a slow spell, a frequency step) give a median that belongs to
neither, and a level that moves during the run makes the number depend on
when it was taken. hyperfine (issue #481) and pyperf warn about both; so
does bridge.

bimodal: the best split of the sorted samples into two groups (the one
    that minimises the sum of squares within the groups: 1-D k-means, exact)
    leaves at least 15% of the samples in each group, the groups are
    separated by Ashman's D >= 4.5 (D = sqrt(2) |m1 - m2| / sqrt(s1² + s2²);
    one normal distribution cut at its median gives D = 2.7, a uniform one
    3.5), and their means are at least 3% apart (less does not move a
    headline figure). Needs 40 samples: with fewer, a long right tail (which
    timings have) splits off by chance too often (5% of the time at n = 40
    with D >= 4, in simulation; under 2% at D >= 4.5).
drift: Spearman's rank correlation rho between the order of the samples and
    their time per call, |rho| * sqrt(n - 1) > 3 (about p < 0.003 with no
    trend), and the median of the last third of the samples differs from the
    median of the first third by at least 3%. Needs 12 samples.
openssl cells, with a few runs each, are tested by neither.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

BIMODAL_MIN_SAMPLES = 40
DRIFT_MIN_SAMPLES = 12
MIN_SHARE = 0.15
MIN_D = 4.5
MIN_GAP = 0.03
MIN_Z = 3.0
MIN_SHIFT = 0.03


@dataclass(frozen=True)
class Split:
    """The best two-group split of a cell's samples."""

    low_n: int
    high_n: int
    low_mean: float
    high_mean: float
    ashman_d: float

    @property
    def gap(self) -> float:
        return self.high_mean / self.low_mean - 1 if self.low_mean > 0 else math.inf


@dataclass(frozen=True)
class Trend:
    rho: float
    z: float
    shift: float  # median of the last third / median of the first third - 1


def best_split(values: Sequence[float]) -> Split | None:
    """1-D k-means with k = 2, exact: try every cut of the sorted values and
    keep the one with the least sum of squares within the two groups."""
    xs = sorted(values)
    n = len(xs)
    if n < 4:
        return None
    prefix, prefix_sq = [0.0], [0.0]
    for x in xs:
        prefix.append(prefix[-1] + x)
        prefix_sq.append(prefix_sq[-1] + x * x)

    def within(i: int, j: int) -> float:  # sum of squares of xs[i:j] about its mean
        s, sq, m = prefix[j] - prefix[i], prefix_sq[j] - prefix_sq[i], j - i
        return max(sq - s * s / m, 0.0)

    cut = min(range(2, n - 1), key=lambda k: within(0, k) + within(k, n))
    low, high = xs[:cut], xs[cut:]
    spread = math.sqrt(statistics.variance(low) + statistics.variance(high))
    m1, m2 = statistics.fmean(low), statistics.fmean(high)
    d = math.inf if spread == 0 else math.sqrt(2) * (m2 - m1) / spread
    return Split(len(low), len(high), m1, m2, d)


def bimodal(values: Sequence[float]) -> Split | None:
    """The split, when the samples form two clusters (see the module doc)."""
    if len(values) < BIMODAL_MIN_SAMPLES:
        return None
    split = best_split(values)
    if split is None:
        return None
    smaller = min(split.low_n, split.high_n)
    if smaller < MIN_SHARE * len(values):
        return None
    if split.ashman_d < MIN_D or split.gap < MIN_GAP:
        return None
    return split


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(values: Sequence[float]) -> float:
    """Rank correlation between position (0, 1, 2, ...) and value."""
    n = len(values)
    r = ranks(values)
    mean = (n + 1) / 2
    cov = sum((i + 1 - mean) * (ri - mean) for i, ri in enumerate(r))
    var_pos = sum((i + 1 - mean) ** 2 for i in range(n))
    var_r = sum((ri - mean) ** 2 for ri in r)
    if var_r == 0:
        return 0.0
    return cov / math.sqrt(var_pos * var_r)


def trend(values: Sequence[float]) -> Trend | None:
    if len(values) < DRIFT_MIN_SAMPLES:
        return None
    rho = spearman(values)
    third = len(values) // 3
    first, last = statistics.median(values[:third]), statistics.median(values[-third:])
    shift = last / first - 1 if first > 0 else 0.0
    return Trend(rho, rho * math.sqrt(len(values) - 1), shift)


def drift(values: Sequence[float]) -> Trend | None:
    """The trend, when the level moved during the run (see the module doc)."""
    t = trend(values)
    if t is None or abs(t.z) <= MIN_Z or abs(t.shift) < MIN_SHIFT:
        return None
    return t
