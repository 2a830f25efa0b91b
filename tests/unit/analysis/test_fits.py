"""The cost model on synthetic data with known a and b, and on real sweeps."""

from __future__ import annotations

import random

import pytest

from bridge.analysis import fits
from bridge.report import schema
from bridge.report.findings import Why
from bridge.report.hw import Hw
from bridge.view import words

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


# -- plausibility (issue 25) -------------------------------------------------


def test_a_size_off_the_linear_cost_is_named():
    # PBKDF2 under load: 10,000 iterations read 11.5 ms where the line through
    # the other sizes says about 4.6 ms.
    iterations = [1000, 10000, 30000, 100000]
    ms = [0.46e6, 11.5e6, 13.8e6, 46e6]
    f = fits.fit(iterations, ms)
    (flag,) = fits.implausible(f, ms)
    assert flag[0] == 10000 and flag[2] > 2
    fit = schema.CostFit(
        "pbkdf2",
        "python@3.11.7",
        "c",
        "pbkdf2",
        Hw.ON,
        f.a_ns,
        f.b_ns_per_byte,
        None,
        f.r2,
        f.max_rel_residual,
        f.sizes,
        off_line=(schema.OffLine(*flag),),
    )
    (found,) = fits.findings([fit], {"pbkdf2": "iterations"})
    assert found.why is Why.IMPLAUSIBLE_COST and found["size"] == 10000
    text = words.clause(found)
    assert text.startswith("python@3.11.7 pbkdf2 (hw on) at 10,000 iterations: 1,1")
    assert "iteration" in text and "not a linear cost" in text


def test_a_clean_sweep_and_fixed_cost_sizes_are_not_flagged():
    rng = random.Random(5)
    ys = [(1300 + 3.1 * s) * (1 + rng.uniform(-0.05, 0.05)) for s in SIZES]
    assert fits.implausible(fits.fit(SIZES, ys), ys) == []
    # 16 B at twice its time: the per-byte part is a sliver of that call, so
    # its per-byte cost says nothing; it is not flagged.
    ys[0] *= 2
    assert fits.implausible(fits.fit(SIZES, ys), ys) == []
    # 8 KiB 40% slow: flagged.
    ys[4] *= 1.4
    assert [size for size, _, _ in fits.implausible(fits.fit(SIZES, ys), ys)] == [8192]


def test_fits_for_records_the_flags():
    from tests.unit.analysis.test_upgrade import sweep

    results = sweep("erlang@25.2.3", 1300, 3.1)
    slow = results[4]
    results[4] = type(slow)(
        **{**slow.__dict__, "samples": tuple(int(s * 1.5) for s in slow.samples)}
    )
    (fit,) = fits.fits_for(results)
    assert fit.implausible == ()  # figures, not words
    (off,) = fit.off_line
    assert off.size == 8192 and off.ratio > 1.3
    (found,) = fits.findings([fit])
    assert words.clause(found).startswith("erlang@25.2.3 hash (hw on) at 8,192 bytes:")
