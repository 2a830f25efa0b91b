"""compare's gate (bridge.analysis.gate) on made-up comparisons: the
threshold on the CI's near end, its edges, what does not trip it and why,
cells in one report only, and a gate with nothing to judge."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from bridge.analysis import compare, gate
from bridge.analysis.gate import Direction, Outcome, Threshold, Unsure
from bridge.report import schema
from bridge.report.hw import Hw
from tests.unit.analysis.test_compare import LOADED, QUIET, with_noise
from tests.unit.analysis.test_upgrade import NEW, OLD, report, result, sweep

SLOWER5 = Threshold(Direction.SLOWER, 5)
FASTER5 = Threshold(Direction.FASTER, 5)


def row(ratio: float, ci: tuple[float, float] | None, verdict: str) -> compare.Row:
    return compare.Row(
        "sha256", "erlang", "crypto:hash(sha256, Data)", "hash", 16384, Hw.ON, Hw.ON,
        NEW.id, NEW.id, 1000.0, 1000.0 * ratio, ratio, ci, verdict,
    )  # fmt: skip


def test_the_threshold_is_a_change_in_speed_the_same_each_way():
    assert SLOWER5.bound == 1.05
    assert FASTER5.bound == pytest.approx(1 / 1.05)
    assert Threshold(Direction.FASTER, 100).bound == 0.5  # twice as fast
    assert Threshold(Direction.SLOWER, 1000).bound == 11
    # Strictly past: a ratio at the threshold is not past it.
    assert not SLOWER5.past(1.05) and SLOWER5.past(1.0501)
    assert not FASTER5.past(1 / 1.05) and FASTER5.past(0.95)
    # The noise margin: under 3% nothing is past a gate of 0.
    assert Threshold(Direction.SLOWER, 0).past(1.01) and not Threshold(Direction.SLOWER, 0).past(
        1.01, compare.MARGIN
    )
    assert SLOWER5.near_end((1.03, 1.09)) == 1.03 and FASTER5.near_end((0.9, 0.99)) == 0.99


@pytest.mark.parametrize(
    "ratio, ci, verdict, unsure",
    [
        # Significant and the CI's near end past 5%: it trips.
        (1.10, (1.06, 1.14), "slower", None),
        (3.80, (3.62, 4.02), "slower", None),
        # A 6% slowdown whose CI reaches down to 3%: significant, not past 5% with confidence.
        (1.06, (1.031, 1.09), "slower", Unsure.NEAR_END),
        # The near end exactly at the threshold: not past it.
        (1.08, (1.05, 1.11), "slower", Unsure.NEAR_END),
        # Past 5% by its point, but compare could not call it.
        (1.08, (0.96, 1.20), "within noise", Unsure.WITHIN_NOISE),
        (1.20, None, compare.FEW, Unsure.FEW_SAMPLES),
        (1.20, None, "unknown (no samples)", Unsure.NO_SAMPLES),
        (3.80, (3.62, 4.02), compare.UNEQUAL, Unsure.UNEQUAL_LOAD),
    ],
)
def test_a_cell_past_the_threshold(ratio, ci, verdict, unsure):
    found = gate.assess(row(ratio, ci, verdict), SLOWER5)
    assert found is not None and found.unsure is unsure and found.tripped == (unsure is None)
    if ci is not None:
        assert found.near == ci[0]


@pytest.mark.parametrize(
    "ratio, ci, verdict",
    [
        (1.04, (1.031, 1.05), "slower"),  # significant, but under 5% even by its point
        (1.02, (0.99, 1.05), "within noise"),
        (1.04, None, compare.FEW),  # not past 5%: nothing to say
        (0.50, (0.45, 0.55), "faster"),  # the other way
        (0.50, (0.45, 0.55), compare.UNEQUAL),
    ],
)
def test_what_the_slower_gate_says_nothing_about(ratio, ci, verdict):
    assert gate.assess(row(ratio, ci, verdict), SLOWER5) is None


def test_the_faster_gate_reads_the_high_end():
    assert gate.assess(row(0.50, (0.45, 0.55), "faster"), FASTER5).tripped
    # Twice as fast is 100%: a CI up to 0.55 is not past it, and 0.50 itself is not either.
    assert gate.assess(row(0.50, (0.45, 0.55), "faster"), Threshold(Direction.FASTER, 100)) is None
    near = gate.assess(row(0.90, (0.85, 0.96), "faster"), FASTER5)
    assert near.unsure is Unsure.NEAR_END and near.near == 0.96
    assert gate.assess(row(1.10, (1.06, 1.14), "slower"), FASTER5) is None


def test_a_gate_of_zero_is_any_significant_difference():
    zero = Threshold(Direction.SLOWER, 0)
    assert gate.assess(row(1.04, (1.031, 1.05), "slower"), zero).tripped
    # Inside compare's margin nothing is named, however the point lies.
    assert gate.assess(row(1.02, (0.99, 1.05), "within noise"), zero) is None
    assert gate.assess(row(1.05, (0.99, 1.11), "within noise"), zero).unsure is Unsure.WITHIN_NOISE


@pytest.mark.parametrize("bad", [-1, -0.001, 1000.001, math.nan, math.inf, -math.inf])
def test_a_threshold_is_from_0_to_1000(bad):
    with pytest.raises(ValueError):
        gate.check_pct(bad)


def test_threshold_bounds_are_accepted():
    assert gate.check_pct(0) == 0 and gate.check_pct(1000) == 1000 and gate.check_pct(2.5) == 2.5


def judged(a: schema.Report, *others: schema.Report, thresholds=(SLOWER5,)) -> gate.Gate:
    reports = [a, *others]
    labels = ["a.json", *(f"{chr(98 + i)}.json" for i in range(len(others)))]
    return gate.judge(compare.compare(reports, labels), reports, thresholds)


def test_a_real_slowdown_trips_and_the_same_set_up_passes():
    a = report([NEW], sweep(NEW.id, 1000, 1.0))
    slow = report([NEW], sweep(NEW.id, 1100, 1.1))  # 10% slower at every size
    g = judged(a, slow)
    assert g.outcome is Outcome.FAILED and len(g.tripped) == 6 and not g.unsure
    assert all(f.near > 1.05 and f.row.verdict == "slower" for f in g.tripped)
    assert g.lined_up == ((1, 6),)
    # A 20% gate: the same 10% is not past it, and nothing is named.
    wide = judged(a, slow, thresholds=(Threshold(Direction.SLOWER, 20),))
    assert wide.outcome is Outcome.PASSED and not wide.findings
    # The same numbers twice: nothing to say.
    same = judged(a, report([NEW], sweep(NEW.id, 1000, 1.0)))
    assert same.outcome is Outcome.PASSED and not same.findings and not same.one_sided
    # Faster by 10% trips --fail-if-faster 5, not --fail-if-slower.
    fast = report([NEW], sweep(NEW.id, 900, 0.9))
    assert judged(a, fast).outcome is Outcome.PASSED
    both = judged(a, fast, thresholds=(SLOWER5, FASTER5))
    assert both.outcome is Outcome.FAILED
    assert {f.threshold for f in both.tripped} == {FASTER5}


def test_each_other_report_is_judged_against_the_first():
    a = report([NEW], sweep(NEW.id, 1000, 1.0))
    same = report([NEW], sweep(NEW.id, 1000, 1.0))
    slow = report([NEW], sweep(NEW.id, 1100, 1.1))
    g = judged(a, same, slow)
    assert g.outcome is Outcome.FAILED and {f.other for f in g.tripped} == {2}
    data = g.to_json(["a.json", "b.json", "c.json"])
    assert {c["other"] for c in data["cells"]} == {"c.json"}
    assert data["lined_up"] == [
        {"baseline": "a.json", "other": "b.json", "cells": 6},
        {"baseline": "a.json", "other": "c.json", "cells": 6},
    ]


def test_unequal_load_is_named_and_does_not_trip():
    # Identical set-ups, B under load: compare calls it unequal load, not slower.
    a = with_noise(report([NEW], sweep(NEW.id, 1000, 1.0)), QUIET)
    b = with_noise(report([NEW], sweep(NEW.id, 1580, 1.58)), LOADED)
    g = judged(a, b)
    assert g.outcome is Outcome.PASSED and not g.tripped
    assert {f.unsure for f in g.findings} == {Unsure.UNEQUAL_LOAD} and len(g.findings) == 6


def test_too_few_samples_are_named_and_do_not_trip():
    a = report([NEW], [result(NEW.id, 1024, 1000, n=1)])
    b = report([NEW], [result(NEW.id, 1024, 2000, n=1)])
    (found,) = judged(a, b).findings
    assert found.unsure is Unsure.FEW_SAMPLES and found.near is None and not found.tripped


def test_cells_in_one_report_only_are_named_and_do_not_trip():
    python = schema.Runtime("python@3.11.2", "python", "/usr/bin/python3", "3.11.2", {})
    py = result(python.id, 1024, 500, call="hashlib.sha256(data).digest()", call_id="hashlib")
    a = report([NEW, python], sweep(NEW.id, 1000, 1.0) + [py])
    b = report([NEW], sweep(NEW.id, 1000, 1.0, sizes=(16, 64, 256, 1024, 8192)))
    g = judged(a, b)
    assert g.outcome is Outcome.PASSED and g.lined_up == ((1, 5),)
    only = {(u.side, u.kind, u.call_id, u.size) for _, u in g.one_sided}
    assert only == {(0, "python", "hashlib", 1024), (0, "erlang", "hash", 16384)}
    data = g.to_json(["a.json", "b.json"])
    assert {c["only_in"] for c in data["one_sided"]} == {"a.json"}
    # And the other way round: the cells only B has.
    g = judged(b, a)
    assert {(u.side, u.kind) for _, u in g.one_sided} == {(1, "python"), (1, "erlang")}
    assert {c["only_in"] for c in g.to_json(["b.json", "a.json"])["one_sided"]} == {"a.json"}


def test_hw_states_one_side_lacks():
    off = [dataclasses.replace(r, hw=Hw.OFF) for r in sweep(NEW.id, 3000, 3.0)]
    both = report([NEW], sweep(NEW.id, 1000, 1.0) + off)
    on = report([NEW], sweep(NEW.id, 1000, 1.0))
    g = judged(both, on)
    assert len(g.one_sided) == 6 and {u.hw for _, u in g.one_sided} == {Hw.OFF}
    # One state a side pairs across (a hw-on run against a hw-off run): the
    # real slowdown of a masked feature, nothing one-sided.
    masked = report([NEW], off)
    g = judged(on, masked)
    assert not g.one_sided and g.outcome is Outcome.FAILED
    assert {(f.row.hw_a, f.row.hw_b) for f in g.tripped} == {(Hw.ON, Hw.OFF)}


def test_nothing_lined_up_is_nothing_to_judge():
    a = report([NEW], sweep(NEW.id, 1000, 1.0))
    b = report([NEW], [dataclasses.replace(r, scenario="sha512") for r in sweep(NEW.id, 1000, 1)])
    g = judged(a, b)
    assert g.outcome is Outcome.NOTHING and g.empty == (1,) and len(g.one_sided) == 12
    # A failed pair is still a failure when another pair had nothing to judge.
    assert judged(a, b, report([NEW], sweep(NEW.id, 1100, 1.1))).outcome is Outcome.FAILED


def test_versions_pair_by_kind():
    # OTP 23 against OTP 25: the runtimes differ, the cells line up.
    a = report([OLD], sweep(OLD.id, 1000, 1.0))
    b = report([NEW], sweep(NEW.id, 1600, 1.0))
    g = judged(a, b)
    assert g.outcome is Outcome.FAILED and not g.one_sided
    assert {(f.row.runtime_a, f.row.runtime_b) for f in g.tripped} == {(OLD.id, NEW.id)}


def test_the_json_carries_the_outcome_by_code():
    a = report([NEW], sweep(NEW.id, 1000, 1.0))
    g = judged(a, report([NEW], sweep(NEW.id, 1100, 1.1)), thresholds=(SLOWER5, FASTER5))
    data = json.loads(json.dumps(g.to_json(["a.json", "b.json"])))
    assert data["outcome"] == "failed" and data["statistic"] == "p10"
    assert data["thresholds"] == [
        {"direction": "slower", "pct": 5, "bound": 1.05},
        {"direction": "faster", "pct": 5, "bound": round(1 / 1.05, 6)},
    ]
    cell = data["cells"][0]
    assert cell["tripped"] and cell["unsure"] is None and cell["direction"] == "slower"
    assert cell["verdict"] == "slower" and cell["ci95"][0] > 1.05
    assert {"scenario", "kind", "call_id", "size", "hw_a", "hw_b", "ratio"} <= set(cell)
    assert judged(a, a).to_json(["a.json", "b.json"])["outcome"] == "passed"
