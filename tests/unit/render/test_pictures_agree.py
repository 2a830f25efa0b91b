"""The two pictures of a report's ratios agree: the HTML page's inline SVG
(bridge.view.chart) and `bridge plot`'s PNG panels (bridge.render.plot)
draw the same figures (ratio, CI, decided or not) at each size of each
call, over the first named runtime and, under `bridge compare`, over the
first report; both read them from the view's ratio lines (bridge.view.series).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bridge.analysis import compare, findings
from bridge.render import plot
from bridge.report import schema
from bridge.view import build, codes, words
from bridge.view import comparison as compare_view
from bridge.view.model import Series, Tone

REPORTS = Path(__file__).resolve().parents[3] / "docs" / "findings" / "reports"
TONE = {codes.FASTER: Tone.GOOD, codes.SLOWER: Tone.BAD}


def _load(name: str) -> schema.Report:
    return findings.complete(schema.load(REPORTS / name))


def _chart(series: list[Series], metric: str) -> Counter:
    """(scenario, runtime, hw, size, ratio, CI, tone) of each point the
    page draws; a compare's runtime and hw are B's (written after A's where
    they differ), as the plot keys its points."""
    return Counter(
        (
            s.scenario,
            s.runtime.split(" / ")[-1],
            s.hw.split("/")[-1],
            int(p.x),
            p.y,
            p.lo,
            p.hi,
            p.tone,
        )
        for s in series
        if s.metric == metric
        for p in s.points
    )


def _plot(reports: list[schema.Report], question: plot.Question, compared=None) -> Counter:
    named = [(f"r{i}", r) for i, r in enumerate(reports)]
    lines = plot.ratio_series(named, plot.series(named), compared)
    return Counter(
        (
            x.scenario,
            x.row[1],
            "off" if "(hw off)" in x.label else "on",
            p.size,
            p.ratio,
            p.lo,
            p.hi,
            TONE.get(p.verdict, Tone.PLAIN),
        )
        for x in lines
        if x.question is question
        for p in x.points
    )


def test_versions_are_the_same_figures_on_the_page_and_the_plot():
    rep = _load("otp23-otp25.json")
    page = _chart([x for s in build(rep).sections for x in s.series], words.CHART_FIRST)
    drawn = _plot([rep], plot.Question.VERSIONS)
    assert len(drawn) >= 4 and page == drawn


def test_a_compare_is_the_same_figures_on_the_page_and_the_plot():
    a, b = _load("sha256-quick.json"), _load("otp23-otp25.json")
    c = compare.compare([a, b], ["a.json", "b.json"])
    metric = words.CHART_COMPARED.format("b.json", "a.json")
    page = _chart([x for s in compare_view.build(c).sections for x in s.series], metric)
    drawn = _plot([a, b], plot.Question.REPORTS, c)
    assert len(drawn) >= 4 and page == drawn
