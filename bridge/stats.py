"""Pure statistics on samples. No I/O, no clocks.

Vocabulary: a *sample* is one timed run of `loops` back-to-back calls; its
per-call time is duration / loops. The summary of a cell is over the per-call
times of its samples.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    ci95: tuple[float, float]
    mean: float
    stdev: float
    min: float
    max: float

    @property
    def ci_halfwidth_rel(self) -> float:
        """Half the CI width relative to the median (0.01 = ±1%)."""
        if self.median <= 0:
            return math.inf
        return (self.ci95[1] - self.ci95[0]) / 2 / self.median


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no samples")
    xs = sorted(values)
    n = len(xs)
    return Summary(
        n=n,
        median=statistics.median(xs),
        ci95=median_ci(xs),
        mean=statistics.fmean(xs),
        stdev=statistics.stdev(xs) if n > 1 else 0.0,
        min=xs[0],
        max=xs[-1],
    )


def median_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval for the median.

    The interval between order statistics x(j) and x(k) covers the median with
    probability P(j <= B < k), B ~ Binomial(n, 1/2) (e.g. Conover, Practical
    Nonparametric Statistics, 3rd ed., §3.2). We take the narrowest symmetric
    pair whose coverage reaches `confidence`; with too few samples for that
    (n < 6 at 95%), the interval is the whole range, which is the honest answer.
    """
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("no samples")
    if n == 1:
        return (xs[0], xs[0])
    pmf = [math.comb(n, i) / 2**n for i in range(n + 1)]
    # j is 1-based lower rank; coverage of [x(j), x(n+1-j)] = 1 - 2 * P(B < j)
    best = 1
    for j in range(1, n // 2 + 1):
        if 1 - 2 * sum(pmf[:j]) >= confidence:
            best = j
        else:
            break
    return (xs[best - 1], xs[n - best])


def relative_ci(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """Ratio of medians median(b)/median(a) with a percentile-bootstrap 95% CI.

    Deterministic for a given seed, so reports and tests are reproducible.
    """
    if not a or not b:
        raise ValueError("no samples")
    point = statistics.median(b) / statistics.median(a)
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        ma = statistics.median(rng.choices(a, k=len(a)))
        mb = statistics.median(rng.choices(b, k=len(b)))
        ratios.append(mb / ma)
    ratios.sort()
    lo = ratios[int(0.025 * (resamples - 1))]
    hi = ratios[int(math.ceil(0.975 * (resamples - 1)))]
    return point, (lo, hi)


def difference_ci(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """median(a) - median(b) with a percentile-bootstrap 95% CI (deterministic
    for a given seed, like relative_ci)."""
    if not a or not b:
        raise ValueError("no samples")
    point = statistics.median(a) - statistics.median(b)
    rng = random.Random(seed)
    diffs = sorted(
        statistics.median(rng.choices(a, k=len(a))) - statistics.median(rng.choices(b, k=len(b)))
        for _ in range(resamples)
    )
    lo = diffs[int(0.025 * (resamples - 1))]
    hi = diffs[int(math.ceil(0.975 * (resamples - 1)))]
    return point, (lo, hi)
