"""Pure statistics on samples. No I/O, no clocks.

Vocabulary: a *sample* is one timed run of `loops` back-to-back calls; its
per-call time is duration / loops. The summary of a cell is over the per-call
times of its samples.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction


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


def stdev(xs: Sequence[float]) -> float:
    """The sample standard deviation (n - 1), the square root of the exact
    variance correctly rounded: what statistics.stdev gives from Python 3.11
    on (3.10's can differ in the last digit), so that a report reads back and
    writes the same bytes on every Python bridge runs on."""
    if len(xs) < 2 or not all(math.isfinite(x) for x in xs):
        return statistics.stdev(xs)
    # Exact sums, one integer per denominator (floats' are powers of two).
    sx: dict[int, int] = defaultdict(int)
    sxx: dict[int, int] = defaultdict(int)
    for x in xs:
        num, den = x.as_integer_ratio()
        sx[den] += num
        sxx[den] += num * num
    total = sum(Fraction(num, den) for den, num in sx.items())
    squares = sum(Fraction(num, den * den) for den, num in sxx.items())
    n = len(xs)
    variance = (n * squares - total * total) / (n * (n - 1))
    return _sqrt_of_fraction(variance.numerator, variance.denominator)


# 2 * 53 + 3 bits: enough for the round-to-odd square root to round right.
_SQRT_BITS = 2 * sys.float_info.mant_dig + 3


def _sqrt_of_fraction(n: int, m: int) -> float:
    """sqrt(n/m) as a float, correctly rounded (round-to-odd, then one
    rounding to float; the method of Python 3.11's statistics module)."""

    def rto(n: int, m: int) -> int:
        a = math.isqrt(n // m)
        return a | (a * a * m != n)

    q = (n.bit_length() - m.bit_length() - _SQRT_BITS) // 2
    if q >= 0:
        return (rto(n, m << 2 * q) << q) / 1
    return rto(n << -2 * q, m) / (1 << -q)


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
        stdev=stdev(xs) if n > 1 else 0.0,
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
    draw_a, draw_b = resampled_median(a, rng), resampled_median(b, rng)
    ratios = sorted(draw_b() / draw_a() for _ in range(resamples))
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
    draw_a, draw_b = resampled_median(a, rng), resampled_median(b, rng)
    diffs = sorted(draw_a() - draw_b() for _ in range(resamples))
    lo = diffs[int(0.025 * (resamples - 1))]
    hi = diffs[int(math.ceil(0.975 * (resamples - 1)))]
    return point, (lo, hi)


def resampled_median(values: Sequence[float], rng: random.Random) -> Callable[[], float]:
    """A function that returns the median of a bootstrap resample of
    `values` (n draws with replacement), drawn from the exact distribution of
    that median instead of by making the resample: one random number and a
    bisection a draw instead of n draws and a sort, so 2000 resamples of a
    100-sample cell take about a millisecond instead of 50.
    tests/unit/test_stats.py checks it against enumerated resamples and
    against resamples made the plain way."""
    xs = sorted(values)
    if not xs:
        raise ValueError("no samples")
    medians, weights = _median_distribution(xs)
    cumulative = list(itertools.accumulate(weights))
    total, last, uniform = cumulative[-1], len(medians) - 1, rng.random
    return lambda: medians[min(bisect.bisect_right(cumulative, uniform() * total), last)]


def _median_distribution(xs: list[float]) -> tuple[list[float], list[float]]:
    """The values a resample's median takes, with their probabilities.

    A resample draws n indices into the sorted values, uniformly. With K_i
    the number of draws at or below index i (binomial: n, (i + 1)/n), the
    k-th smallest index is i when K_(i-1) < k <= K_i. An odd n (k = (n+1)/2)
    needs only that. An even n averages the k-th and (k+1)-th (k = n/2):
    both are i when K_i > k; otherwise exactly k draws are at or below i,
    the other n - k lie above it, uniformly, and the (k+1)-th is the smallest
    of them. Probabilities under 1e-18 are left out."""
    n = len(xs)
    if n == 1:
        return [xs[0]], [1.0]
    k = (n + 1) // 2 if n % 2 else n // 2
    at_least = [_binomial_tail(n, (i + 1) / n, k) for i in range(n)]  # P(K_i >= k)
    medians, weights = [], []
    for i in range(n):
        p_kth = at_least[i] - (at_least[i - 1] if i else 0.0)
        if p_kth < _TINY:
            continue
        if n % 2:
            medians.append(xs[i])
            weights.append(p_kth)
            continue
        # P(K_(i-1) < k, K_i = k): the (k+1)-th draw lies above i.
        exactly = _binomial_pmf(n, (i + 1) / n, k)
        if i:
            stay = ((n - 1 - i) / (n - i)) ** (n - k)  # none of n - k draws above i-1 is at i
            exactly -= _binomial_pmf(n, i / n, k) * stay
        exactly = min(max(exactly, 0.0), p_kth)
        medians.append(xs[i])
        weights.append(p_kth - exactly)
        above, none_yet = n - 1 - i, 1.0
        for j in range(i + 1, n):
            none_after = ((n - 1 - j) / above) ** (n - k)  # no draw in (i, j]
            w = exactly * (none_yet - none_after)
            none_yet = none_after
            if w >= _TINY:
                medians.append((xs[i] + xs[j]) / 2)
                weights.append(w)
            elif j > i + 1:
                break
    return medians, weights


_TINY = 1e-18


def _binomial_pmf(n: int, p: float, m: int) -> float:
    if p >= 1.0:
        return 1.0 if m == n else 0.0
    log = math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)
    return math.exp(log + m * math.log(p) + (n - m) * math.log1p(-p))


def _binomial_tail(n: int, p: float, k: int) -> float:
    """P(X >= k) for X binomial(n, p), summing the side away from the mean
    from its term next to k outward (the terms only shrink) until they no
    longer count."""
    if p >= 1.0:
        return 1.0
    odds = p / (1 - p)
    upper = k > n * p  # k is above the mean: the upper tail is the small side
    m = k if upper else k - 1
    term = _binomial_pmf(n, p, m)
    total = 0.0
    while 0 <= m <= n:
        total += term
        if term <= total * 1e-17:  # also a term that underflowed to 0
            break
        if upper:
            term *= (n - m) / (m + 1) * odds
            m += 1
        else:
            term *= m / (n - m + 1) / odds
            m -= 1
    return min(total, 1.0) if upper else max(1.0 - total, 0.0)
