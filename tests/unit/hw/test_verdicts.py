"""Verdict logic on synthetic samples (ns per call)."""

from __future__ import annotations

import random

from bridge.hw import verdicts


def noisy(center: float, spread: float, n: int = 60, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [center * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def test_no_difference_is_not_used():
    v = verdicts.decide(noisy(1000, 0.01, seed=1), noisy(1000, 0.01, seed=2))
    assert v.verdict == "not-used"
    assert 0.98 < v.speedup < 1.02


def test_clear_difference_is_used():
    v = verdicts.decide(noisy(1000, 0.02), noisy(3200, 0.02, seed=3))
    assert v.verdict == "used"
    assert 3.0 < v.ci95[0] <= v.speedup <= v.ci95[1] < 3.4


def test_noisy_data_is_inconclusive_not_used():
    v = verdicts.decide(noisy(1000, 0.6, n=12), noisy(1100, 0.6, n=12, seed=5))
    assert v.verdict == "inconclusive"
    assert "noise" in v.reason


def test_faster_when_masked_is_inconclusive():
    v = verdicts.decide(noisy(2000, 0.01), noisy(1000, 0.01, seed=7))
    assert v.verdict == "inconclusive"


def test_verdicts_without_numbers():
    assert verdicts.decide([1.0], [2.0], cpu_has=False).verdict == "cpu-lacks"
    assert verdicts.decide([1.0], [2.0], already_masked=True).verdict == "masked"
    assert verdicts.decide([1.0], [2.0], via_openssl=False).verdict == "not-openssl"
    assert verdicts.decide([1.0], [2.0], cannot_mask="1.0.2").verdict == "cannot-test"
    assert verdicts.decide(None, [2.0]).verdict == "cannot-test"


def test_cpu_lacks_wins_over_a_measured_difference():
    # Never claim "used" on a CPU without the feature, whatever the numbers say.
    v = verdicts.decide(noisy(1000, 0.01), noisy(3000, 0.01), cpu_has=False)
    assert v.verdict == "cpu-lacks" and v.speedup is None


def test_small_speedup_explains_fixed_cost_and_where_it_shows():
    v = verdicts.Verdict("used", 1.22, (1.18, 1.26))
    text = verdicts.explain(
        v, who="Erlang crypto:macN", feature="SHA", size=1000, best=(16384, 3.1)
    )
    assert "1.22× slower without it at 1000 bytes" in text
    assert "fixed cost" in text and "16 KiB: 3.10×" in text


def test_large_speedup_needs_no_caveat():
    v = verdicts.Verdict("used", 3.2, (3.1, 3.3))
    text = verdicts.explain(v, who="openssl speed -evp sha256", feature="SHA", size=16384)
    assert text == "openssl speed -evp sha256 uses SHA: 3.20× slower without it at 16 KiB"
