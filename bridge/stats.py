"""Pure statistics on samples. No I/O, no clocks.

Vocabulary: a *sample* is one timed run of `loops` back-to-back calls; its
per-call time is duration / loops. The summary of a cell is over the per-call
times of its samples.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import random
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    """The figures of a cell; its CI covers the variation between processes
    when the samples say which process took each (Samples)."""
    if not values:
        raise ValueError("no samples")
    xs = sorted(values)
    n = len(xs)
    return Summary(
        n=n,
        median=statistics.median(xs),
        ci95=hierarchical_median_ci(values),
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
    best = _median_rank(n, confidence)
    return (xs[best - 1], xs[n - best])


def _median_rank(n: int, confidence: float) -> int:
    """The largest 1-based rank j whose [x(j), x(n+1-j)] covers the median
    with `confidence`: 1 - 2 P(B < j) >= confidence. The binomial terms come
    one from the last (in logarithms, which do not underflow as 2**-n does):
    exact binomial coefficients over every rank, each summed again, took
    minutes for a cell of 4,000 samples and hours for 50,000."""
    log_term = -n * math.log(2)  # log P(B = 0)
    below, best = 0.0, 1
    for j in range(1, n // 2 + 1):
        below += math.exp(log_term)  # now P(B < j)
        if 1 - 2 * below < confidence:
            break
        best = j
        log_term += math.log(n - j + 1) - math.log(j)  # P(B = j) from P(B = j - 1)
    return best


def relative_ci(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """Ratio of medians median(b)/median(a) with a percentile-bootstrap 95% CI
    (of processes, then samples, for samples from several processes: see
    median_drawer).

    Deterministic for a given seed, so reports and tests are reproducible.
    """
    if not a or not b:
        raise ValueError("no samples")
    point = statistics.median(b) / statistics.median(a)
    rng = random.Random(seed)
    draw_a, draw_b = median_drawer(a, rng, resamples), median_drawer(b, rng, resamples)
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
    draw_a, draw_b = median_drawer(a, rng, resamples), median_drawer(b, rng, resamples)
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
    at_least = _tails(n, k)  # P(K_i >= k)
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


def _tails(n: int, k: int) -> list[float]:
    """P(K_i >= k) for each sorted index i, K_i ~ binomial(n, (i + 1)/n).
    Further than 5 sqrt(n) from its mean i + 1, K_i reaches k with a
    probability within exp(-50) (2e-22; Hoeffding: exp(-2 t**2 / n)) of 0 or
    1, and is taken as that: summing each tail took O(n log n) terms, half an
    hour for a cell of 4 million samples."""
    reach = 5 * math.sqrt(n) + 1
    return [
        0.0
        if i + 1 < k - reach
        else 1.0
        if i + 1 > k + reach
        else _binomial_tail(n, (i + 1) / n, k)
        for i in range(n)
    ]


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


# -- the low statistic -------------------------------------------------------
# What comparisons between reports, and hardware verdicts without rounds, are
# judged on (docs/reference/statistics.md; with rounds, see paired_ratio):
# the 10th percentile of a cell's per-call times, as an order statistic,
# x(ceil(0.1 n)): the minimum when a cell has 10 samples or fewer. Noise on a
# timing only adds (Chen & Revels, arXiv:1608.04295), so the low end of the
# samples is the part a busy or two-speed machine moves least; the minimum
# itself has no bootstrap CI (a resample never goes below it) and falls as
# more samples are taken, a low quantile has both.
LOW_QUANTILE = 0.10
LOW_STATISTIC = "p10"  # how views label it
# Fewer samples a side than this give no CI worth a verdict: one sample a side
# gives a "CI" of one point ([1.14, 1.14]); two give four resample pairs.
MIN_CI_SAMPLES = 3


def low_rank(n: int) -> int:
    """The 1-based rank of the low statistic among n sorted samples."""
    return max(1, math.ceil(LOW_QUANTILE * n - 1e-9))


def low(values: Sequence[float]) -> float:
    """The low statistic of a cell: x(ceil(0.1 n)) of its sorted samples."""
    xs = sorted(values)
    if not xs:
        raise ValueError("no samples")
    return xs[low_rank(len(xs)) - 1]


def resampled_order_statistic(
    values: Sequence[float], rank: int, rng: random.Random
) -> Callable[[], float]:
    """A function returning the `rank`-th smallest (1-based) of a bootstrap
    resample of `values`, drawn from its exact distribution: with K_i the
    number of the n draws at or below sorted index i (binomial: n,
    (i + 1)/n), the rank-th smallest is xs[i] when K_(i-1) < rank <= K_i
    (as resampled_median does for an odd n)."""
    xs = sorted(values)
    n = len(xs)
    if not xs:
        raise ValueError("no samples")
    if n == 1:
        return lambda: xs[0]
    at_least = _tails(n, rank)
    cumulative = list(
        itertools.accumulate(at_least[i] - (at_least[i - 1] if i else 0.0) for i in range(n))
    )
    total, last, uniform = cumulative[-1], n - 1, rng.random
    return lambda: xs[min(bisect.bisect_right(cumulative, uniform() * total), last)]


def low_ratio_ci(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """low(b)/low(a) with a percentile-bootstrap 95% CI (each side resampled
    on its own; deterministic for a given seed)."""
    if not a or not b:
        raise ValueError("no samples")
    point = low(b) / low(a)
    rng = random.Random(seed)
    draw_a = resampled_order_statistic(a, low_rank(len(a)), rng)
    draw_b = resampled_order_statistic(b, low_rank(len(b)), rng)
    ratios = sorted(draw_b() / draw_a() for _ in range(resamples))
    lo = ratios[int(0.025 * (resamples - 1))]
    hi = ratios[int(math.ceil(0.975 * (resamples - 1)))]
    return point, (lo, hi)


def low_difference_ci(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """low(a) - low(b) with a percentile-bootstrap 95% CI."""
    if not a or not b:
        raise ValueError("no samples")
    point = low(a) - low(b)
    rng = random.Random(seed)
    draw_a = resampled_order_statistic(a, low_rank(len(a)), rng)
    draw_b = resampled_order_statistic(b, low_rank(len(b)), rng)
    diffs = sorted(draw_a() - draw_b() for _ in range(resamples))
    lo = diffs[int(0.025 * (resamples - 1))]
    hi = diffs[int(math.ceil(0.975 * (resamples - 1)))]
    return point, (lo, hi)


# -- paired rounds (an A/B on a two-speed machine) ---------------------------
# A host that switches between two speeds for seconds at a time (on this
# project's 2-vCPU EPYC guest: 1.6-1.8x apart, the fast one 5-35% of the time,
# docs/findings/coverage.md) moves every statistic of a cell that depends on
# which speed its samples caught: the median, the 10th percentile. Two cells
# measured side by side in the same interleaved round mostly caught the same
# speed (two 5-ms samples 5 ms apart did 93% of the time there), and the ratio
# of their round medians does not depend on it. So an A/B with rounds is
# judged on the paired ratios: one ratio per round, their median, and its CI.
# The CI of rounds from several processes resamples the processes, then their
# rounds (hierarchical_median_ci), since a pair of processes can differ for
# reasons of its own.
PAIRED_STATISTIC = "paired"  # how reports name it (HwVerdict.statistic)


@dataclass(frozen=True)
class Paired:
    ratio: float  # b/a: the median of the rounds' ratios
    ci95: tuple[float, float]
    rounds: int  # the paired rounds
    processes: int  # the process pairs they came from (1: one pair, whose own gap it cannot see)


def paired_ratio(
    a: Mapping[int, Sequence[float]],
    b: Mapping[int, Sequence[float]],
    processes: Mapping[int, int] | None = None,
    confidence: float = 0.95,
) -> Paired | None:
    """b/a from rounds that both sides have (round index -> that round's
    per-call times), with `processes[i]` the process pair of round i when
    they were several; None with fewer than MIN_CI_SAMPLES paired rounds."""
    keys = [i for i in sorted(set(a) & set(b)) if a[i] and b[i]]
    keys = [i for i in keys if min(a[i]) > 0 and min(b[i]) > 0]
    if len(keys) < MIN_CI_SAMPLES:
        return None
    # Ratios, not their logarithms: positive, so the hierarchical CI widens
    # them on a log scale (_process_drawer); their median is exp(median(log)).
    ratios = [statistics.median(b[i]) / statistics.median(a[i]) for i in keys]
    procs = [processes.get(i, 0) for i in keys] if processes else None
    several = procs is not None and len(set(procs)) > 1
    lo, hi = hierarchical_median_ci(Samples(ratios, procs) if several else ratios, confidence)
    return Paired(
        statistics.median(ratios),
        (lo, hi),
        len(keys),
        len(set(procs)) if several else 1,
    )


# -- a cell's samples by round ------------------------------------------------
# A cell's samples are cut into its interleaved rounds one after another
# (bridge.analysis.versus.rounds_of gives each round's wall times); these
# cut its other per-sample arrays the same way, for the hardware verdicts
# (bridge.hw.ab) and the comparisons (bridge.analysis.versus) alike.


def round_spans(by_round: Mapping[int, Sequence[float]], n: int) -> Iterator[tuple[int, range]]:
    """(round, the indices of its samples in the cell) for each round, in
    order: round i's start is the sizes of the rounds before it; `n` the
    length of the per-sample array cut."""
    pos = 0
    for i in sorted(by_round):
        yield i, range(pos, min(pos + len(by_round[i]), n))
        pos += len(by_round[i])


def round_waits(
    samples: Sequence[int], waits: Sequence[int], by_round: Mapping[int, Sequence[float]]
) -> dict[int, float]:
    """Per round, the share of its sample windows the cell spent waiting for
    a CPU (each sample's wait over its window), where every sample has a
    wait; a wait below zero was not read."""
    n = len(samples)
    if len(waits) != n:
        return {}
    out = {}
    for i, span in round_spans(by_round, n):
        pairs = [(waits[j], max(waits[j], samples[j])) for j in span]
        pairs = [(w, t) for w, t in pairs if w >= 0 and t > 0]
        if pairs:
            out[i] = sum(w for w, _ in pairs) / sum(t for _, t in pairs)
    return out


def round_cpu(
    cpu_ns: Sequence[int], loops: Sequence[int], by_round: Mapping[int, Sequence[float]]
) -> dict[int, list[float]] | None:
    """The cell's CPU ns per call by round (each sample's CPU time over its
    `loops`), cut as its wall times are; samples whose CPU time was not read
    are left out. None: the cell has no CPU time."""
    n = len(loops)
    if len(cpu_ns) != n:
        return None
    out = {}
    for i, span in round_spans(by_round, n):
        values = [cpu_ns[j] / loops[j] for j in span if cpu_ns[j] > 0]
        if values:
            out[i] = values
    return out


def round_processes(
    procs: Sequence[int], by_round: Mapping[int, Sequence[float]]
) -> dict[int, int] | None:
    """The process of each round (a round's samples come from one process:
    bridge.measure.session), from the process of each sample; None when the
    cell does not record them (one process)."""
    if not procs:
        return None
    return {i: procs[span[0]] for i, span in round_spans(by_round, len(procs)) if span}


def agreeing_rounds_needed(k: int, alpha: float = 0.05) -> int:
    """Of k interleaved rounds, how many must agree on a direction: all of
    them up to 5; beyond, the fewest a one-sided sign test at `alpha` accepts,
    P(Binomial(k, 1/2) >= a) <= alpha. The comparisons (bridge.analysis.versus)
    and the hardware verdicts (bridge.hw.verdicts) ask it."""
    if k <= 5:
        return k
    tail = 0.0
    for a in range(k, -1, -1):
        tail += math.comb(k, a) / 2**k
        if tail > alpha:
            return a + 1
    return 0


# -- clusters (two-speed machines) ------------------------------------------
# A cell's samples form two clusters when the best split of their logarithms
# into two groups (1-D two-means, exact) leaves each group at least 15% of
# the samples (and 4), the groups' medians are at least 1.15x apart, and the
# groups are separated: Ashman's D on the logarithms >= 4.5 (one normal cut
# at its median gives 2.7, a uniform 3.5). Logarithms make a long right tail (a
# timing's usual shape) short, so 16 samples are enough to look.
CLUSTER_MIN_SAMPLES = 16
CLUSTER_MIN_SHARE = 0.15
CLUSTER_MIN_N = 4
CLUSTER_MIN_RATIO = 1.15
CLUSTER_MIN_D = 4.5


@dataclass(frozen=True)
class Cluster:
    n: int
    share: float  # of the cell's samples
    level: float  # the cluster's median


@dataclass(frozen=True)
class Clusters:
    low: Cluster
    high: Cluster
    ashman_d: float  # on the logarithms

    @property
    def ratio(self) -> float:
        return self.high.level / self.low.level


def clusters(values: Sequence[float]) -> Clusters | None:
    """The two clusters of a cell's samples, or None (see above)."""
    xs = sorted(values)
    n = len(xs)
    if n < CLUSTER_MIN_SAMPLES or xs[0] <= 0:
        return None
    logs = [math.log(x) for x in xs]
    prefix, prefix_sq = [0.0], [0.0]
    for x in logs:
        prefix.append(prefix[-1] + x)
        prefix_sq.append(prefix_sq[-1] + x * x)

    def within(i: int, j: int) -> float:
        s, sq, m = prefix[j] - prefix[i], prefix_sq[j] - prefix_sq[i], j - i
        return max(sq - s * s / m, 0.0)

    least = max(CLUSTER_MIN_N, math.ceil(CLUSTER_MIN_SHARE * n))
    if n < 2 * least:
        return None
    cut = min(range(least, n - least + 1), key=lambda k: within(0, k) + within(k, n))
    low_logs, high_logs = logs[:cut], logs[cut:]
    spread = math.sqrt(statistics.variance(low_logs) + statistics.variance(high_logs))
    gap = statistics.fmean(high_logs) - statistics.fmean(low_logs)
    d = math.inf if spread == 0 else math.sqrt(2) * gap / spread
    low_c = Cluster(cut, cut / n, statistics.median(xs[:cut]))
    high_c = Cluster(n - cut, (n - cut) / n, statistics.median(xs[cut:]))
    found = Clusters(low_c, high_c, d)
    if d < CLUSTER_MIN_D or found.ratio < CLUSTER_MIN_RATIO:
        return None
    return found


# -- samples from more than one process ----------------------------------------
#
# A worker process carries state that moves all its samples together (memory
# layout, hash seed, the CPU it settles on, which of a host's speeds it
# catches), so the spread inside one process cannot see it. A cell whose
# samples come from several processes records which process took each one
# (`Samples.procs`); its CI then comes from a hierarchical bootstrap:
# processes resampled, then samples within each (hierarchical_median_ci).


class Samples(list):
    """Per-call times (a list of floats, as everywhere else in this module)
    with the process each came from: `procs[i]` is the process of sample i,
    or None when one process took them all. What the functions of this module
    do with a plain list they do with one process's Samples, unchanged."""

    procs: tuple[int, ...] | None

    def __init__(self, values=(), procs: Sequence[int] | None = None) -> None:
        super().__init__(values)
        self.procs = tuple(procs) if procs is not None else None
        if self.procs is not None and len(self.procs) != len(self):
            raise ValueError(f"{len(self.procs)} processes for {len(self)} samples")


def process_groups(values: Sequence[float]) -> list[list[float]]:
    """The samples by process, in the order each process first appears
    (one group for a plain list or a one-process Samples)."""
    procs = getattr(values, "procs", None)
    if not procs:
        return [list(values)]
    groups: dict[int, list[float]] = {}
    for p, x in zip(procs, values, strict=True):
        groups.setdefault(p, []).append(x)
    return list(groups.values())


def _few_groups_factor(g: int) -> float:
    """Resampling g processes with replacement spreads their mean by only
    (g - 1)/g of its variance (Davison & Hinkley, Bootstrap Methods and their
    Application, 1997, §3.8): the bootstrap's deviations are widened by
    sqrt(g / (g - 1)) to make up for it."""
    return math.sqrt(g / (g - 1))


def _process_drawer(
    groups: list[list[float]], rng: random.Random, bulk: int = 2000
) -> Callable[[], float]:
    """A function returning one two-stage bootstrap replicate of a cell's
    median: `len(groups)` processes drawn with replacement, then each drawn
    process's median from a resample of its own samples (drawn from its exact
    distribution, as resampled_median does), combined as the mean of the
    process medians weighted by their samples. The replicate is returned on
    the scale of the pooled median, its deviation from the observed mean of
    process medians widened by `factor` (_few_groups_factor): for positive
    values (times) as a ratio, pooled * (replicate / observed) ** factor,
    else pooled + factor * (replicate - observed).
    Replicates are made `bulk` at a time (random.choices does the bisections
    in bulk), a few milliseconds for a CI's 2000."""
    g = len(groups)
    tables = []
    for x in groups:
        medians, weights = _median_distribution(sorted(x))
        tables.append((medians, list(itertools.accumulate(weights)), len(x)))
    total = sum(len(x) for x in groups)
    observed = sum(len(x) * statistics.median(x) for x in groups) / total
    pooled = statistics.median([v for x in groups for v in x])
    factor = _few_groups_factor(g)
    positive = all(v > 0 for x in groups for v in x)
    ready: list[float] = []

    def make() -> None:
        picks = rng.choices(range(g), k=g * bulk)
        counts = [0] * g
        for p in picks:
            counts[p] += 1
        drawn = [
            iter(rng.choices(m, cum_weights=c, k=counts[i])) for i, (m, c, _) in enumerate(tables)
        ]
        sizes = [n for _, _, n in tables]
        values = [sizes[p] * next(drawn[p]) for p in picks]
        weights = [sizes[p] for p in picks]
        for k in range(0, len(picks), g):
            mean = sum(values[k : k + g]) / sum(weights[k : k + g])
            if positive:  # times: widened on a log scale, so never below 0
                ready.append(pooled * math.exp(factor * math.log(mean / observed)))
            else:
                ready.append(pooled + factor * (mean - observed))
        ready.reverse()  # popped from the end, in the order made

    def draw() -> float:
        if not ready:
            make()
        return ready.pop()

    return draw


def median_drawer(
    values: Sequence[float], rng: random.Random, bulk: int = 2000
) -> Callable[[], float]:
    """Bootstrap replicates of the median of `values`: of its samples
    (resampled_median) for one process, of its processes and then their
    samples (_process_drawer) for several."""
    groups = process_groups(values)
    if len(groups) == 1:
        return resampled_median(groups[0], rng)
    return _process_drawer(groups, rng, bulk)


def hierarchical_median_ci(
    values: Sequence[float], confidence: float = 0.95, *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """A CI for the median of samples taken by several processes, covering
    the process-to-process variation as well as the sample-to-sample one: a
    percentile interval of the two-stage bootstrap (_process_drawer). With one
    process it is median_ci's distribution-free interval, as before.
    Deterministic for a given seed; cached, since every view asks again."""
    groups = process_groups(values)
    if len(groups) == 1:
        return median_ci(groups[0], confidence)
    key = tuple(tuple(x) for x in groups)
    return _hierarchical_ci(key, confidence, resamples, seed)


@functools.lru_cache(maxsize=4096)
def _hierarchical_ci(
    groups: tuple[tuple[float, ...], ...], confidence: float, resamples: int, seed: int
) -> tuple[float, float]:
    draw = _process_drawer([list(x) for x in groups], random.Random(seed), resamples)
    reps = sorted(draw() for _ in range(resamples))
    tail = (1 - confidence) / 2
    lo = reps[int(tail * (resamples - 1))]
    hi = reps[int(math.ceil((1 - tail) * (resamples - 1)))]
    return (lo, hi)


@dataclass(frozen=True)
class ProcessSplit:
    """How a cell's samples split between its processes.

    `share`: the part of the variance of the cell's median that lies between
    processes (0..1): the variance of the process medians beyond what their
    own samples' spread explains, against that spread; over 0.5 the process
    a sample ran in moves the figure more than the samples do. `spread`: the
    largest process median over the smallest, less 1 (0.069: the processes'
    medians lie 6.9% apart)."""

    processes: int
    share: float
    spread: float
    medians: tuple[float, ...]


def process_split(values: Sequence[float]) -> ProcessSplit | None:
    """The split of a cell's samples between processes, or None for one."""
    groups = process_groups(values)
    g = len(groups)
    if g < 2:
        return None
    medians = tuple(statistics.median(x) for x in groups)
    weights = [len(x) / sum(len(y) for y in groups) for x in groups]
    # Each process median's own sampling variance, from its distribution-free CI.
    own = [((hi - lo) / (2 * 1.96)) ** 2 for lo, hi in (median_ci(x) for x in groups)]
    within = sum(w * w * v for w, v in zip(weights, own, strict=True))
    excess = statistics.variance(medians) - statistics.fmean(own)
    between = max(0.0, excess) * sum(w * w for w in weights)
    total = between + within
    share = between / total if total > 0 else 0.0
    low = min(medians)
    spread = max(medians) / low - 1 if low > 0 else 0.0
    return ProcessSplit(g, share, spread, medians)
