"""The cost model on synthetic data with known a and b, and on real sweeps."""

from __future__ import annotations

import random

import pytest

from bridge.analysis import fits

SIZES = [16, 64, 256, 1024, 8192, 16384]


def test_exact_line_is_recovered():
    f = fits.fit(SIZES, [300 + 0.65 * s for s in SIZES])
    assert f.a_ns == pytest.approx(300) and f.b_ns_per_byte == pytest.approx(0.65)
    assert f.r2 == pytest.approx(1.0) and f.max_rel_residual == pytest.approx(0, abs=1e-12)
    assert f.gb_per_s == pytest.approx(1 / 0.65)


def test_noise_and_one_wild_point_barely_move_it():
    rng = random.Random(4)
    ys = [(120 + 2.1 * s) * (1 + rng.uniform(-0.02, 0.02)) for s in SIZES]
    ys[2] *= 3  # one disturbed size
    f = fits.fit(SIZES, ys)
    assert f.b_ns_per_byte == pytest.approx(2.1, rel=0.05)
    assert 0 < f.a_ns < 400


def test_needs_two_distinct_sizes():
    with pytest.raises(ValueError):
        fits.theil_sen([16, 16], [1.0, 2.0])
