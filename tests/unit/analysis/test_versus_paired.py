"""Runtimes against each other judged on paired rounds
(bridge.analysis.versus): the median of the rounds' ratios with the
hierarchical CI, on CPU time where a cell waited for a CPU, and never a
difference the rounds do not agree on. Synthetic rounds, known answers."""

from __future__ import annotations

import dataclasses
import random

import pytest

from bridge.analysis import versus
from bridge.report import schema
from bridge.report.findings import Basis, Significance, Why
from tests.unit.analysis.test_versus import TWO_OTPS, first_named, report, result

ROUNDS, PER_ROUND = 5, 4  # test_versus.SETTINGS: 20 samples in 5 rounds


def by_round(levels: list[float], seed: int, spread: float = 0.005) -> list[float]:
    """PER_ROUND samples at each round's level, a little noise about it."""
    rng = random.Random(seed)
    return [lv * (1 + rng.uniform(-spread, spread)) for lv in levels for _ in range(PER_ROUND)]


def cell(rid: str, per_call: list[float], **more) -> schema.Result:
    return dataclasses.replace(result(rid, per_call), **more)


def pair(a: list[float], b: list[float], **more) -> schema.Difference:
    base, other = (cell(r.id, xs) for r, xs in zip(TWO_OTPS, (a, b), strict=True))
    if more:
        base, other = (dataclasses.replace(c, **more) for c in (base, other))
    return first_named(report([base, other], TWO_OTPS))


def test_a_machine_that_moves_both_sides_of_each_round_alike_cancels_out():
    # The machine's speed moves from round to round by up to 1.6x; each round
    # moves both runtimes alike (they ran side by side). The pooled medians
    # cannot tell a 10% difference from that; the rounds can.
    machine = [1.0, 1.6, 0.9, 1.3, 1.1]
    a = by_round([1000 * m for m in machine], seed=1)
    same = pair(a, by_round([1000 * m for m in machine], seed=2))
    assert same.verdict is Significance.NOISE and same.ratio == pytest.approx(1.0, abs=0.01)
    assert same.ci95[1] - same.ci95[0] < 0.03 and same.basis is Basis.WALL
    slower = pair(a, by_round([1100 * m for m in machine], seed=2), procs=_three_processes())
    assert versus.judge(a, by_round([1100 * m for m in machine], seed=2))[2] is Significance.NOISE
    assert slower.verdict is Significance.SLOWER and slower.ratio == pytest.approx(1.1, rel=0.01)
    assert slower.rounds == ROUNDS


def _three_processes() -> tuple[int, ...]:
    """Round i's samples from process i mod 3 (bridge.measure.session)."""
    return tuple(i % 3 for i in range(ROUNDS) for _ in range(PER_ROUND))


def test_drift_that_the_rounds_disagree_on_is_never_significant():
    # Random rounds in which at least one round's ratio lies on the other
    # side of 1 from the rest, however far the rest lie: never a difference.
    rng = random.Random(7)
    for trial in range(40):
        levels_a = [1000 * rng.uniform(0.7, 1.5) for _ in range(ROUNDS)]
        ratios = [rng.uniform(1.05, 2.0) for _ in range(ROUNDS)]
        odd = rng.randrange(ROUNDS)
        ratios[odd] = rng.uniform(0.5, 0.98)
        if trial % 2:  # the other way round: faster in all but one
            ratios = [1 / x for x in ratios]
        a = by_round(levels_a, seed=trial)
        b = by_round([x * r for x, r in zip(levels_a, ratios, strict=True)], seed=trial + 1)
        for procs in ((), _three_processes()):
            d = pair(a, b, procs=procs) if procs else pair(a, b)
            assert not d.significant, (trial, ratios, d)
            if d.reasons and abs(d.ratio - 1) > versus.MARGIN:
                assert d.reasons[0].why is Why.ROUNDS_DISAGREE


def test_one_process_a_side_needs_the_wider_margin_of_two_processes():
    # Every round agrees, 6% apart: with one process a side, a gap between two
    # processes of one runtime (their memory layout) could be all of it.
    levels = [1000.0, 1020, 990, 1010, 1000]
    a, b = by_round(levels, seed=1), by_round([x * 1.06 for x in levels], seed=2)
    one = pair(a, b)
    assert one.verdict is Significance.NOISE and one.ci95[0] > 1.03
    (why,) = one.reasons
    assert why.why is Why.FEW_PROCESS_PAIRS and why["pairs"] == 1 and why["needs"] == 1.08
    three = pair(a, b, procs=_three_processes())
    assert three.verdict is Significance.SLOWER and three.reasons == ()
    # A gap the wider margin clears is called with one process too.
    assert pair(a, by_round([x * 1.2 for x in levels], seed=2)).verdict is Significance.SLOWER


def waited(per_call: list[float], cpu: list[float], share: float, rid: str) -> schema.Result:
    """A cell whose windows were `share` waiting for a CPU: its wall
    samples are its CPU time stretched by the wait."""
    loops = 1000
    return cell(
        rid,
        per_call,
        sample_cpu_ns=tuple(round(x * loops) for x in cpu),
        sample_wait_ns=tuple(round(x * loops * share) for x in per_call),
    )


def test_cells_that_waited_for_a_cpu_are_judged_on_cpu_time():
    # The same call on both; erlang@25 waited for a CPU a third of its
    # windows, every round: 1.5x "slower" by wall time, the same by CPU time.
    levels = [1000.0, 1010, 995, 1005, 1000]
    cpu_a, cpu_b = by_round(levels, seed=1), by_round(levels, seed=2)
    a = waited(cpu_a, cpu_a, 0.0, "erlang@23.2.6")
    b = waited([x * 1.5 for x in cpu_b], cpu_b, 1 / 3, "erlang@25.2.3")
    d = first_named(report([a, b], TWO_OTPS))
    assert d.basis is Basis.CPU and d.verdict is Significance.NOISE
    assert d.ratio == pytest.approx(1.0, abs=0.01)
    # Neither waited: wall time, as before.
    calm = first_named(report([a, waited(cpu_b, cpu_b, 0.01, b.runtime)], TWO_OTPS))
    assert calm.basis is Basis.WALL and calm.ratio == pytest.approx(1.0, abs=0.01)
    # A cell that waited but has no CPU time is judged on wall time.
    blind = dataclasses.replace(b, sample_cpu_ns=())
    assert first_named(report([a, blind], TWO_OTPS)).basis is Basis.WALL


def test_a_difference_keeps_its_basis_through_the_report():
    levels = [1000.0, 1010, 995, 1005, 1000]
    a = waited(by_round(levels, 1), by_round(levels, 1), 0.0, "erlang@23.2.6")
    b = waited(by_round(levels, 2), by_round(levels, 2), 0.2, "erlang@25.2.3")
    d = first_named(report([a, b], TWO_OTPS))
    back = schema.Difference.from_json(d.to_json())
    assert back == d and d.to_json()["basis"] == "cpu"
    # A difference from before the field writes none.
    old = dataclasses.replace(d, basis=None)
    assert "basis" not in old.to_json()
