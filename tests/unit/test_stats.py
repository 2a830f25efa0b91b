"""Tests moved from test_stats.py."""

from __future__ import annotations

import itertools
import math
import random
import statistics
import sys
import time

import pytest

from bridge import stats


def test_median_ci_known_ranks():
    # Binomial(n, 1/2): n=10 -> [x(2), x(9)] (coverage 97.9%); n=30 -> [x(10), x(21)] (95.7%).
    assert stats.median_ci(range(1, 11)) == (2, 9)
    assert stats.median_ci(range(1, 31)) == (10, 21)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_median_ci_ranks_are_the_exact_binomials(confidence):
    """The ranks come from the binomial terms one from the last, in
    logarithms; they are those of exact binomial coefficients."""
    for n in range(2, 400):
        pmf = [math.comb(n, i) / 2**n for i in range(n + 1)]
        exact = 1
        for j in range(1, n // 2 + 1):
            if 1 - 2 * sum(pmf[:j]) < confidence:
                break
            exact = j
        assert stats._median_rank(n, confidence) == exact, n


def test_median_ci_of_a_huge_cell():
    """50,000 samples in one cell took hours (exact coefficients, summed
    again for every rank); the interval is the one the normal approximation
    puts near n/2 -/+ 1.96 sqrt(n)/2."""
    lo, hi = stats.median_ci(range(50_000))
    assert 24_770 < lo < 24_790 and 25_210 < hi < 25_230


@pytest.mark.parametrize("n", [1, 2, 3, 10, 101, 400, 5000])
def test_tails_far_from_their_mean_are_taken_as_0_or_1(n):
    """The bootstrap's order statistics sum each binomial tail only within
    5 sqrt(n) of its mean (half an hour for 4 million samples, summing them
    all); outside, the tail is within exp(-50) of 0 or 1."""
    for k in {1, max(1, n // 10), (n + 1) // 2, n}:
        every = [stats._binomial_tail(n, (i + 1) / n, k) for i in range(n)]
        assert max(abs(a - b) for a, b in zip(every, stats._tails(n, k), strict=True)) < 1e-20


def test_median_ci_small_n_is_the_whole_range():
    assert stats.median_ci([5.0, 1.0, 3.0]) == (1.0, 5.0)
    assert stats.median_ci([2.0]) == (2.0, 2.0)


def test_median_ci_is_order_independent():
    xs = [9, 1, 8, 2, 7, 3, 6, 4, 5, 10]
    assert stats.median_ci(xs) == stats.median_ci(sorted(xs))


def test_summarize_all_equal():
    s = stats.summarize([4.0] * 7)
    assert (s.median, s.ci95, s.mean, s.stdev, s.min, s.max) == (
        4.0,
        (4.0, 4.0),
        4.0,
        0.0,
        4.0,
        4.0,
    )
    assert s.ci_halfwidth_rel == 0


def test_summarize_single_sample():
    s = stats.summarize([3.0])
    assert s.n == 1 and s.stdev == 0.0 and s.ci95 == (3.0, 3.0)


def test_summarize_values():
    s = stats.summarize([1, 2, 3, 4, 100])
    assert s.median == 3 and s.min == 1 and s.max == 100
    assert s.mean == pytest.approx(22)
    assert s.stdev == pytest.approx(math.sqrt(sum((x - 22) ** 2 for x in [1, 2, 3, 4, 100]) / 4))


def test_summarize_empty_raises():
    with pytest.raises(ValueError):
        stats.summarize([])


def test_relative_ci_detects_a_clear_difference_and_is_deterministic():
    a = [100 + (i % 5) for i in range(30)]
    b = [300 + (i % 7) for i in range(30)]
    point, (lo, hi) = stats.relative_ci(a, b, seed=3)
    assert point == pytest.approx(3.0, rel=0.05)
    assert 2.8 < lo <= point <= hi < 3.2
    assert stats.relative_ci(a, b, seed=3) == (point, (lo, hi))


def test_relative_ci_of_identical_samples_contains_one():
    a = [100 + (i % 9) for i in range(30)]
    _, (lo, hi) = stats.relative_ci(a, list(reversed(a)))
    assert lo <= 1.0 <= hi


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_the_median_distribution_is_that_of_every_resample(n):
    """Against all n^n resamples, with a tie among the values."""
    xs = [10.0 * i + 1 for i in range(n)]
    if n > 2:
        xs[1] = xs[0]
    exact: dict[float, float] = {}
    for picks in itertools.product(xs, repeat=n):
        m = statistics.median(picks)
        exact[m] = exact.get(m, 0.0) + 1 / n**n
    medians, weights = stats._median_distribution(sorted(xs))
    got: dict[float, float] = {}
    for m, w in zip(medians, weights, strict=True):
        got[m] = got.get(m, 0.0) + w
    assert set(got) <= set(exact)
    assert max(abs(got.get(m, 0.0) - p) for m, p in exact.items()) < 1e-12


@pytest.mark.parametrize("n", [24, 25, 100])
def test_resampled_medians_follow_plain_resamples(n):
    """Resamples made the plain way, and the sampler's draws, against the
    exact distribution: 20,000 of each stay within a Kolmogorov-Smirnov
    distance of 0.015 of it (0.0096 is the 95% bound; the seeds are fixed)."""
    rng = random.Random(n)
    xs = [round(rng.gauss(100, 10), 1) for _ in range(n)]
    medians, weights = stats._median_distribution(sorted(xs))
    exact: dict[float, float] = {}
    for m, w in zip(medians, weights, strict=True):
        exact[m] = exact.get(m, 0.0) + w
    draws = 20_000
    plain_rng = random.Random(2)
    plain = [statistics.median(plain_rng.choices(xs, k=n)) for _ in range(draws)]
    draw = stats.resampled_median(xs, random.Random(1))
    for sample in (plain, [draw() for _ in range(draws)]):
        assert _ks(sorted(sample), exact) < 0.015


def _ks(sample: list[float], exact: dict[float, float]) -> float:
    """The largest gap between a sorted sample's CDF and a discrete one."""
    worst, cdf, i = 0.0, 0.0, 0
    for value in sorted(exact):
        cdf += exact[value]
        while i < len(sample) and sample[i] <= value:
            i += 1
        worst = max(worst, abs(i / len(sample) - cdf))
    return worst


def test_a_bootstrap_of_many_samples_is_quick():
    """2000 resamples of two cells of 10,000 samples (--samples' limit):
    resamples made the plain way took 11 s here, the exact draws 0.34 s.
    Counted in CPU time, which other jobs on a shared machine do not inflate:
    the bound tells the two ways apart, it is no speed target."""
    a = [100 + (i % 97) for i in range(10_000)]
    b = [110 + (i % 89) for i in range(10_000)]
    started = time.process_time()
    ratio, (lo, hi) = stats.relative_ci(a, b)
    assert time.process_time() - started < 4.0
    assert lo <= ratio <= hi


# -- the low statistic and clusters (issue 25) -------------------------------


def two_speeds(n: int, fast_share: float, seed: int, fast: float = 2876, ratio: float = 1.62):
    """A two-speed machine: fast_share of the samples near `fast`, the rest
    `ratio` slower, each with 2% noise (the shape measured on the EPYC guest)."""
    rng = random.Random(seed)
    k = round(n * fast_share)
    xs = [fast * (1 + rng.gauss(0, 0.02)) for _ in range(k)]
    xs += [fast * ratio * (1 + rng.gauss(0, 0.02)) for _ in range(n - k)]
    rng.shuffle(xs)
    return xs


def test_the_low_statistic_is_the_tenth_percentile_as_an_order_statistic():
    assert stats.LOW_STATISTIC == "p10"
    assert [stats.low_rank(n) for n in (1, 3, 10, 11, 24, 100)] == [1, 1, 1, 2, 3, 10]
    assert stats.low([5.0, 1.0, 3.0]) == 1.0
    assert stats.low(list(range(100, 0, -1))) == 10


def test_resampled_order_statistic_matches_plain_resampling():
    rng = random.Random(3)
    xs = [rng.lognormvariate(0, 0.3) for _ in range(24)]
    rank = stats.low_rank(len(xs))
    exact = stats.resampled_order_statistic(xs, rank, random.Random(1))
    fast = sorted(exact() for _ in range(20000))
    plain = sorted(sorted(rng.choices(xs, k=len(xs)))[rank - 1] for _ in range(20000))
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):
        i = int(q * 19999)
        assert fast[i] == pytest.approx(plain[i], rel=0.02)


def test_low_ratio_ci_covers_the_true_ratio_and_has_a_width():
    a = [1000 * (1 + 0.01 * ((i * 7) % 11)) for i in range(30)]
    b = [x * 1.5 for x in a]
    ratio, (lo, hi) = stats.low_ratio_ci(a, b)
    assert ratio == pytest.approx(1.5) and lo <= 1.5 <= hi
    _, (lo, hi) = stats.low_ratio_ci(a, list(reversed(a)))
    assert lo < 1 < hi


def test_clusters_of_a_two_speed_machine_with_their_shares_and_levels():
    found = stats.clusters(two_speeds(100, 0.34, seed=1))
    assert found is not None
    assert found.low.share == pytest.approx(0.34, abs=0.01)
    assert found.high.share == pytest.approx(0.66, abs=0.01)
    assert found.low.level == pytest.approx(2876, rel=0.02)
    assert found.ratio == pytest.approx(1.62, rel=0.03)
    # From 16 samples (a --quick cell has 24) the logarithms are enough.
    assert stats.clusters(two_speeds(24, 0.5, seed=2)) is not None


def test_one_speed_with_a_long_tail_is_not_two():
    rng = random.Random(4)
    false = 0
    for _ in range(200):
        xs = [1000 * (1 + abs(rng.gauss(0, 0.02))) + rng.expovariate(1 / 60) for _ in range(24)]
        false += stats.clusters(xs) is not None
    assert false <= 6  # about 1% in simulation at n = 24
    assert stats.clusters([1000.0] * 30) is None  # no spread: one speed
    assert stats.clusters(two_speeds(100, 0.05, seed=5)) is None  # a few fast samples
    assert stats.clusters(two_speeds(100, 0.4, seed=6, ratio=1.08)) is None  # too close


def test_stdev_is_the_correctly_rounded_one_on_every_python():
    """stats.stdev: the square root of the exact variance, correctly rounded,
    as statistics.stdev computes it from 3.11 on. Reports re-serialise the
    same bytes on 3.10 (tests/unit/report/test_schema.py runs there too)."""
    rng = random.Random(27)
    for _ in range(300):
        xs = [rng.lognormvariate(6, 2) for _ in range(rng.randint(2, 40))]
        got = stats.stdev(xs)
        if sys.version_info >= (3, 11):
            assert got == statistics.stdev(xs)
        assert math.isclose(got, statistics.stdev(xs), rel_tol=1e-12)
    # Exact cases.
    assert stats.stdev([3.0, 5.0]) == math.sqrt(2)
    assert stats.stdev([7.5] * 4) == 0.0


# -- samples from several processes (hierarchical bootstrap) -------------------


def _rerun(rng: random.Random, processes: int, per_process: int, between: float) -> stats.Samples:
    """One simulated run: each process shifts all its samples by its own
    factor (sd `between`); the samples inside vary by 5% (log-normal)."""
    values, procs = [], []
    for p in range(processes):
        level = 1 + rng.gauss(0, between)
        values += [level * math.exp(rng.gauss(0, 0.05)) for _ in range(per_process)]
        procs += [p] * per_process
    return stats.Samples(values, procs)


def test_hierarchical_ci_covers_a_process_effect_that_the_within_process_ci_misses():
    # A default run's three processes of 33 samples, a process effect of 4%
    # against 5% per sample: the true median is 1. Over 150 simulated reruns
    # the two-stage bootstrap's CI covers it near 95% of the time (89%); the
    # CI of the pooled samples, which cannot see the processes, about half the
    # time (51%). (600 resamples instead of 2000 keep the test cheap.)
    rng = random.Random(28)
    runs = [_rerun(rng, 3, 33, 0.04) for _ in range(150)]
    cis = [stats.hierarchical_median_ci(run, resamples=600, seed=i) for i, run in enumerate(runs)]
    within = [stats.median_ci(list(run)) for run in runs]
    covered = sum(lo <= 1 <= hi for lo, hi in cis) / len(runs)
    within_covered = sum(lo <= 1 <= hi for lo, hi in within) / len(runs)
    assert covered >= 0.87 and within_covered <= 0.6, (covered, within_covered)

    # The rerun's promise: a run's CI holds the next run's median (a looser
    # promise to keep than the true median: the next median moves too), and
    # consecutive runs' CIs overlap.
    def kept(intervals):
        pairs = list(zip(intervals[:-1], runs[1:], strict=True))
        holds = sum(lo <= statistics.median(nxt) <= hi for (lo, hi), nxt in pairs) / len(pairs)
        overlap = sum(
            b[0] <= a[1] and a[0] <= b[1] for a, b in zip(intervals, intervals[1:], strict=False)
        )
        return holds, overlap / len(pairs)

    (holds, overlap), (within_holds, within_overlap) = kept(cis), kept(within)
    assert holds >= 0.7 and overlap >= 0.93, (holds, overlap)
    assert within_holds <= 0.45 and within_overlap <= 0.8, (within_holds, within_overlap)


def test_hierarchical_ci_stays_close_to_the_within_ci_without_a_process_effect():
    rng = random.Random(5)
    widths = []
    for i in range(40):
        run = _rerun(rng, 4, 25, 0.0)
        lo, hi = stats.hierarchical_median_ci(run, resamples=600, seed=i)
        wlo, whi = stats.median_ci(list(run))
        widths.append((hi - lo) / (whi - wlo))
    # The two-stage bootstrap counts the samples' spread twice over: wider, not much.
    assert 1.0 <= statistics.median(widths) <= 1.8


def test_one_process_reduces_to_the_order_statistic_ci_and_the_old_bootstraps():
    rng = random.Random(3)
    a = [rng.gauss(100, 5) for _ in range(60)]
    b = [rng.gauss(120, 5) for _ in range(60)]
    one_a, one_b = stats.Samples(a, [0] * 60), stats.Samples(b, [7] * 60)
    assert stats.hierarchical_median_ci(one_a) == stats.median_ci(a)
    assert stats.summarize(one_a) == stats.summarize(a)
    assert stats.relative_ci(one_a, one_b) == stats.relative_ci(a, b)
    assert stats.difference_ci(one_a, one_b) == stats.difference_ci(a, b)
    assert stats.process_split(one_a) is None and stats.process_split(a) is None
    with pytest.raises(ValueError, match="3 processes for 2 samples"):
        stats.Samples([1.0, 2.0], [0, 1, 1])


def test_ratio_ci_of_cells_from_several_processes_covers_their_process_effects():
    # hw on / off twins, each in 4 processes with a 4% process effect; the
    # true ratio is 2. The ratio's CI from the two-stage bootstrap holds it
    # far more often than the one that pools the samples.
    rng = random.Random(11)
    covered = pooled = 0
    for i in range(40):
        on = _rerun(rng, 4, 25, 0.04)
        off = stats.Samples([2 * x for x in _rerun(rng, 4, 25, 0.04)], on.procs)
        _, (lo, hi) = stats.relative_ci(on, off, resamples=600, seed=i)
        covered += lo <= 2 <= hi
        _, (plo, phi) = stats.relative_ci(list(on), list(off), resamples=600, seed=i)
        pooled += plo <= 2 <= phi
    assert covered >= 36 and pooled <= 28, (covered, pooled)  # 40 and 23 of 40


def test_process_split_names_the_share_and_the_spread():
    # Two processes 6.9% apart, each tight: the split is nearly all between.
    rng = random.Random(1)
    values = [4738 * (1 + rng.gauss(0, 0.005)) for _ in range(50)]
    values += [5064 * (1 + rng.gauss(0, 0.005)) for _ in range(50)]
    split = stats.process_split(stats.Samples(values, [0] * 50 + [1] * 50))
    assert split is not None and split.processes == 2
    assert split.share > 0.95 and abs(split.spread - 0.069) < 0.005
    lo, hi = stats.summarize(stats.Samples(values, [0] * 50 + [1] * 50)).ci95
    assert lo < 4760 and hi > 5040  # the CI spans both processes
    # No process effect: a small share.
    flat = [1000 * (1 + rng.gauss(0, 0.05)) for _ in range(100)]
    quiet = stats.process_split(stats.Samples(flat, [i % 4 for i in range(100)]))
    assert quiet is not None and quiet.share < 0.5


def test_a_hierarchical_ci_is_quick_enough_for_every_view():
    run = _rerun(random.Random(2), 4, 25, 0.02)
    started = time.perf_counter()
    stats.hierarchical_median_ci(run, seed=99)
    assert time.perf_counter() - started < 0.5  # a few ms on an idle machine


def test_paired_ratio_needs_three_rounds_and_counts_the_process_pairs():
    a = {i: [100.0, 101.0, 99.0] for i in range(4)}
    b = {i: [x * 1.3 for x in a[i]] for i in range(4)}
    assert stats.paired_ratio({0: a[0], 1: a[1]}, b) is None  # two rounds in common
    one = stats.paired_ratio(a, b)
    assert one.ratio == pytest.approx(1.3) and one.rounds == 4 and one.processes == 1
    # A round one side lacks is not paired; the process pairs come from the rounds kept.
    several = stats.paired_ratio(a, {**b, 9: [1.0]}, {i: i % 2 for i in range(4)})
    assert several.rounds == 4 and several.processes == 2
    assert several.ci95[0] <= several.ratio <= several.ci95[1]
