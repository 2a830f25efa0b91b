"""Tests moved from test_stats.py."""

from __future__ import annotations

import math

import pytest

from bridge import stats


def test_median_ci_known_ranks():
    # Binomial(n, 1/2): n=10 -> [x(2), x(9)] (coverage 97.9%); n=30 -> [x(10), x(21)] (95.7%).
    assert stats.median_ci(range(1, 11)) == (2, 9)
    assert stats.median_ci(range(1, 31)) == (10, 21)


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
