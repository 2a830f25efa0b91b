"""The view's ratio lines (bridge.view.series): what `bridge plot` draws
between runtimes and between reports, read from the findings the cli
completes a report with and from bridge compare's rows, never recomputed."""

from __future__ import annotations

from pathlib import Path

from bridge.analysis import compare, findings
from bridge.report import schema
from bridge.view import codes, series

REPORTS = Path(__file__).resolve().parents[3] / "docs" / "findings" / "reports"


def _load(name: str) -> schema.Report:
    return findings.complete(schema.load(REPORTS / name))


def test_versions_are_the_reports_differences_against_the_first_named():
    rep = _load("otp23-otp25.json")
    lines = [x for x in series.ratios([rep]) if x.against is series.Against.FIRST]
    assert lines
    firsts = {
        (d.scenario, d.runtime, d.call_id, d.hw, d.size): d
        for d in rep.differences or ()
        if d.against == codes.FIRST
    }
    for line in lines:
        assert [p.size for p in line.points] == sorted(p.size for p in line.points)
        assert (line.report, line.base_report) == (0, 0)
        for p in line.points:
            d = firsts[(line.scenario, line.runtime, line.call_id, line.hw, p.size)]
            assert (p.ratio, p.ci95, p.verdict) == (d.ratio, d.ci95, d.verdict)
            assert line.base_runtime == d.baseline_runtime
        # Two OTPs: the upgrade view's word on what grew rides with the line.
        assert line.upgrade is not None and line.upgrade.new == line.runtime


def test_reports_are_compares_rows_over_the_first_report():
    a, b = _load("sha256-quick.json"), _load("otp23-otp25.json")
    compared = compare.compare([a, b], ["a", "b"])
    assert not [x for x in series.ratios([a, b]) if x.against is series.Against.REPORT]
    lines = [x for x in series.ratios([a, b], compared) if x.against is series.Against.REPORT]
    ((_, rows),) = compared.pairs
    drawn = {(x.scenario, x.runtime, x.call_id, x.hw, p.size): p for x in lines for p in x.points}
    assert len(drawn) == sum(r.ratio > 0 and r.size > 0 for r in rows)
    for r in rows:
        p = drawn[(r.scenario, r.runtime_b, r.call_id, r.hw_b, r.size)]
        assert (p.ratio, p.ci95, p.verdict) == (r.ratio, r.ci95, r.verdict)
    assert all((x.report, x.base_report) == (1, 0) for x in lines)


def test_the_fastest_stands_at_1_at_each_of_its_sizes():
    """Sign and verify apart: each table's fastest call at a size stands at
    1, once, and is the baseline the differences name."""
    rep = _load("ecdsa-p256.json")
    lines = [x for x in series.ratios([rep]) if x.against is series.Against.FASTEST]
    baselines = {
        (d.scenario, d.baseline_runtime, d.baseline_call_id, d.size)
        for d in rep.differences or ()
        if d.against == codes.FASTEST and not d.hw.masked
    }
    at_1 = {
        (x.scenario, x.runtime, x.call_id, p.size): p
        for x in lines
        for p in x.points
        if p.verdict == series.FASTEST
    }
    assert set(at_1) == baselines and len(at_1) >= 2
    assert all(p.ratio == 1.0 and p.ci95 is None for p in at_1.values())
    for x in lines:
        assert len({p.size for p in x.points}) == len(x.points)
