"""Bimodal and drifting samples (bridge.analysis.stability), on fixed samples with
known answers, edge cases included."""

from __future__ import annotations

import math
import random

import pytest

from bridge.analysis import stability


def steady(n: int, level: float = 1000.0, spread: float = 0.01, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + spread * rng.gauss(0, 1)) for _ in range(n)]


def test_two_well_separated_clusters_are_bimodal():
    # 70 samples near 1000 ns and 30 near 1200 ns, interleaved as rounds are.
    values = [1000.0 + (i % 7) for i in range(70)] + [1200.0 + (i % 5) for i in range(30)]
    random.Random(2).shuffle(values)
    split = stability.bimodal(values)
    assert split is not None
    assert (split.low_n, split.high_n) == (70, 30)
    assert split.low_mean == pytest.approx(1003, abs=1)
    assert split.high_mean == pytest.approx(1202, abs=1)
    assert split.gap == pytest.approx(0.198, abs=0.002)
    assert split.ashman_d > 50


def test_one_cluster_with_noise_is_not_bimodal():
    assert stability.bimodal(steady(100)) is None
    # A long right tail, as timings have, is not a second mode.
    tail = [1000.0 + 200 * random.Random(3).expovariate(1) for _ in range(100)]
    assert stability.bimodal(tail) is None


def test_a_few_outliers_are_not_a_second_mode():
    values = steady(100)
    values[10:15] = [1500.0] * 5  # 5%: under the 15% a group needs
    assert stability.bimodal(values) is None


def test_clusters_closer_than_three_percent_do_not_count():
    values = [1000.0] * 50 + [1020.0] * 50  # perfectly separated, but 2% apart
    split = stability.best_split(values)
    assert split is not None and split.ashman_d == math.inf
    assert stability.bimodal(values) is None


def test_bimodality_needs_forty_samples():
    values = [1000.0] * 20 + [1300.0] * 19
    assert stability.bimodal(values) is None
    assert stability.bimodal([*values, 1300.0]) is not None


def test_all_equal_samples_are_neither_bimodal_nor_drifting():
    values = [1234.0] * 100
    assert stability.bimodal(values) is None
    assert stability.drift(values) is None
    assert stability.spearman(values) == 0.0


def test_ranks_share_ties():
    assert stability.ranks([10, 30, 20, 20]) == [1.0, 4.0, 2.5, 2.5]


def test_spearman_of_a_monotone_series_is_one():
    assert stability.spearman([1, 2, 3, 5, 8]) == pytest.approx(1.0)
    assert stability.spearman([8, 5, 3, 2, 1]) == pytest.approx(-1.0)


def test_a_level_that_climbs_during_the_run_drifts():
    # +6% from start to end under 1% noise.
    rng = random.Random(4)
    values = [1000 * (1 + 0.06 * i / 100 + 0.01 * rng.gauss(0, 1)) for i in range(100)]
    trend = stability.drift(values)
    assert trend is not None
    assert trend.z > 3
    assert trend.shift == pytest.approx(0.04, abs=0.01)  # last third against first third


def test_a_step_down_drifts_with_a_negative_shift():
    values = [1100.0 + (i % 3) for i in range(50)] + [1000.0 + (i % 3) for i in range(50)]
    trend = stability.drift(values)
    assert trend is not None and trend.z < -3 and trend.shift == pytest.approx(-0.09, abs=0.005)


def test_a_significant_but_small_trend_is_not_drift():
    # Strictly increasing (rho = 1), but only 1% from end to end.
    values = [1000 + i * 0.1 for i in range(100)]
    trend = stability.trend(values)
    assert trend is not None and trend.rho == pytest.approx(1.0)
    assert stability.drift(values) is None


def test_noise_without_a_trend_is_not_drift():
    assert stability.drift(steady(100, spread=0.05)) is None


def test_too_few_samples_are_not_tested():
    assert stability.drift([1000.0, 1100.0, 1200.0, 1300.0, 1400.0]) is None  # openssl: 5 runs
    assert stability.trend([1.0] * 11) is None
    assert stability.best_split([1.0, 2.0, 3.0]) is None
