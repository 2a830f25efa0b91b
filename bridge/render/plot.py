"""`bridge plot`: pictures fit for a forum post.

Per scenario, panels stacked one above the other, 7 in wide:

- the time per call (ns, median and its 95% CI as an error bar, the unit
  every table prints) against message size, log-log, one line per runtime
  and call, hw on solid with filled markers and hw off dashed and hollow.
  Nothing is nudged sideways: a point sits at its size. A scenario of one
  size draws one row per runtime and call instead, hw on and off as two
  points on it;
- then each ratio the reports hold, as points with their 95% CI around a
  line at 1: hw off over hw on (the hardware verdicts), a runtime over the
  first named of its kind (versions in one report), each further report over
  the first (`--compare`: bridge compare's rows), and each runtime over the
  fastest, as the view's ratio lines hold them (bridge.view.series). A
  marker is filled where its verdict decides something (used, not used,
  faster, slower) and hollow where it does not; the legend under the panel,
  or each row's name (one size), says the verdicts in words;
- a --concurrency report adds throughput against the number of workers and
  its scaling efficiency (bridge.render.plot_levels).

A caption closes the picture: per report, the CPU, each runtime's version,
bridge's version and the date, from the report's provenance
(bridge.render.plot_words). The figure is WIDTH_IN wide at DPI and its
smallest text FONT_PT, so that the PNG scaled to a 700-px forum column
keeps every label at least MIN_PX tall (`px_at`); the PNG is saved whole
(no tight crop), so its width is the figure's.

`series` and `ratio_series` decide what is drawn from the reports alone
(pure, tested without matplotlib); `figure` draws it; `plot` saves it, as
SVG when the name ends in .svg.

A report is someone else's data: every text the picture draws from it is
made safe for a picture first (bridge.render.escape.svg_text), and what
matplotlib warns while drawing (a glyph the font lacks, a layout it could
not make) is gathered and said as bridge's own warnings, escaped, instead of
reaching stderr raw.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bridge.errors import BridgeWarning, UsageError
from bridge.render import plot_axes as axes
from bridge.render import plot_levels
from bridge.render import plot_words as words
from bridge.render.escape import svg_text, term_text
from bridge.report import schema
from bridge.report.comparison import Comparison
from bridge.report.hw import Hw
from bridge.system import output
from bridge.view import series as series_view

INSTALL = (
    "plotting needs matplotlib: pip install 'crypto-bridge[plot]'"
    " (in a checkout: .venv/bin/pip install matplotlib)"
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINES = {Hw.ON: "-", Hw.OFF: "--"}
UNIT = "ns per call"
FASTEST = series_view.FASTEST  # the verdict of the fastest call at a size, against itself
# A forum column is 690-700 px wide. Text of F points on a figure W inches
# wide is F / 72 * 700 / W px tall once the picture is scaled to 700 px,
# whatever the dpi: 8 pt on 7 in is 11.1 px, above MIN_PX. DPI only makes
# the PNG sharp on a 2x screen (1,400 px wide).
WIDTH_IN, DPI = 7.0, 200
FONT_PT, TITLE_PT = 8.0, 9.0
READ_AT_PX, MIN_PX = 700, 10.0
# Panel heights, in inches.
SPEED_IN, RATIO_IN, ROW_IN = 2.7, 2.0, 0.42
# Text stays text in an SVG (searchable, and the legend can be checked), and
# TeX is never run on it. Every size is at least FONT_PT.
RC = {
    "svg.fonttype": "none",
    "text.usetex": False,
    "font.size": FONT_PT,
    "axes.titlesize": TITLE_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT,
    "legend.fontsize": FONT_PT,
    "legend.title_fontsize": FONT_PT,
    "figure.titlesize": TITLE_PT,
    "lines.markersize": 4.5,
    "lines.linewidth": 1.2,
    "errorbar.capsize": 2.5,
}
NAME = words.NAME


def px_at(points: float, width_in: float, width_px: int = READ_AT_PX) -> float:
    """How tall text of `points` is, in pixels, on a figure `width_in` wide
    scaled to `width_px`."""
    return points / 72 * width_px / width_in


@dataclass(frozen=True)
class Series:
    """One runtime's call at one hw state across sizes: the time per call."""

    scenario: str
    report: int  # which report (0: the first)
    runtime: str
    name: str  # the runtime by its version (plot_words.Names)
    call: str  # its short name (plot_words.call_name)
    call_id: str
    hw: Hw
    colour: int  # index into the colour cycle: one per report and runtime
    kind: str  # the runtime's kind: erlang, python, openssl
    marker: str  # one per call
    sizes: tuple[int, ...]
    ns: tuple[float, ...]  # the median, ns per call
    lo: tuple[float, ...] = ()  # its 95% CI; equal to the median when a
    hi: tuple[float, ...] = ()  # cell has none (one openssl run, an import)

    @property
    def label(self) -> str:
        return f"{self.name}: {self.call}"

    @property
    def linestyle(self) -> str:
        return LINES.get(self.hw, ":")

    @property
    def row(self) -> tuple[int, str, str]:
        return (self.report, self.runtime, self.call_id)


class Question(enum.Enum):
    """What a ratio panel asks."""

    HW = "hw"  # hw off over hw on: does the call use the feature?
    VERSIONS = "versions"  # a runtime over the first named of its kind, one report
    REPORTS = "reports"  # a further report over the first (--compare)
    RUNTIMES = "runtimes"  # a runtime over the fastest at each size


@dataclass(frozen=True)
class Point:
    size: int
    ratio: float
    lo: float  # the 95% CI; equal to the ratio when there is none
    hi: float
    verdict: str  # the code, as the report or the analysis gives it
    said: str  # the verdict in words (plot_words)

    @property
    def decisive(self) -> bool:
        return self.verdict in words.DECISIVE


@dataclass(frozen=True)
class RatioSeries:
    """One ratio of one call across sizes, with its verdicts."""

    scenario: str
    question: Question
    label: str  # who over whom
    row: tuple[int, str, str]  # the speed row it belongs to (report, runtime, call id)
    colour: int
    marker: str
    points: tuple[Point, ...]
    extra: str = ""  # a verdict on the whole series (an upgrade's per call / per byte)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(p.size for p in self.points)

    @property
    def ratio(self) -> tuple[float, ...]:
        return tuple(p.ratio for p in self.points)


def _figures(r: schema.Result) -> tuple[float, float, float]:
    """The median and its 95% CI, ns per call."""
    s = r.summary()
    if s.n < 2 or r.imported:
        return s.median, s.median, s.median
    return s.median, s.ci95[0], s.ci95[1]


class _Style:
    """One colour per report and runtime, one marker per call of a kind."""

    def __init__(self) -> None:
        self.colours: dict[tuple[int, str], int] = {}
        self.markers: dict[tuple[str, str], str] = {}

    def colour(self, n: int, runtime: str) -> int:
        return self.colours.setdefault((n, runtime), len(self.colours))

    def marker(self, kind: str, call_id: str) -> str:
        return self.markers.setdefault((kind, call_id), MARKERS[len(self.markers) % len(MARKERS)])


def series(reports: list[tuple[str, schema.Report]]) -> list[Series]:
    out = []
    names = words.Names(reports)
    for scenario in scenarios(reports):
        style = _Style()
        for n, (_, rep) in enumerate(reports):
            groups: dict[tuple[str, str, Hw], list[schema.Result]] = {}
            for r in rep.results:
                if r.scenario == scenario and r.ok and r.size > 0 and r.median() > 0:
                    groups.setdefault((r.runtime, r.call_id, r.hw), []).append(r)
            for (runtime, call_id, hw), rs in groups.items():
                rs.sort(key=lambda r: r.size)
                figures = [_figures(r) for r in rs]
                out.append(
                    Series(
                        scenario=scenario,
                        report=n,
                        runtime=runtime,
                        name=names.of(n, runtime),
                        call=words.call_name(rs[0].call, call_id),
                        call_id=call_id,
                        hw=hw,
                        colour=style.colour(n, runtime),
                        kind=rep.kind_of(runtime),
                        marker=style.marker(rep.kind_of(runtime), call_id),
                        sizes=tuple(r.size for r in rs),
                        ns=tuple(f[0] for f in figures),
                        lo=tuple(f[1] for f in figures),
                        hi=tuple(f[2] for f in figures),
                    )
                )
    return out


def ratio_series(
    reports: list[tuple[str, schema.Report]],
    drawn: list[Series],
    compared: Comparison | None = None,
) -> list[RatioSeries]:
    """Every ratio the reports hold for the drawn calls, in the order the
    panels stand: hw off/on, versions, reports (`compared`: bridge compare's
    rows of the reports, None for one report), runtimes."""
    look = {(s.scenario, *s.row): s for s in drawn}
    names = words.Names(reports)
    out = _hw(reports, look)
    out += _between(reports, look, names, compared)
    # Each panel's series in the speed panel's order.
    order: dict[tuple, int] = {}
    for n, s in enumerate(drawn):
        order.setdefault((s.scenario, *s.row), n)
    questions = list(Question)
    out.sort(key=lambda r: (questions.index(r.question), order.get((r.scenario, *r.row), 0)))
    return out


def _point(size: int, ratio: float, ci, verdict: str, said: str) -> Point:
    lo, hi = (ci[0], ci[1]) if ci else (ratio, ratio)
    return Point(size, ratio, min(lo, ratio), max(hi, ratio), verdict, said)


def _hw(reports, look) -> list[RatioSeries]:
    """hw off over hw on, the report's hardware verdicts (speedup and CI)."""
    out = []
    for n, (_, rep) in enumerate(reports):
        by: dict[tuple[str, str, str], list[schema.HwVerdict]] = {}
        for v in rep.verdicts:
            if v.speedup is not None and v.speedup > 0 and v.size > 0:
                by.setdefault((v.scenario, v.runtime, v.call_id), []).append(v)
        for (scenario, runtime, call_id), vs in by.items():
            s = look.get((scenario, n, runtime, call_id))
            if s is None:
                continue
            vs.sort(key=lambda v: v.size)
            points = tuple(
                _point(
                    v.size,
                    v.speedup or 0.0,
                    v.speedup_ci95,
                    v.verdict,
                    words.hw_verdict(v.verdict, v.feature),
                )
                for v in vs
            )
            out.append(
                RatioSeries(scenario, Question.HW, s.label, s.row, s.colour, s.marker, points)
            )
    return out


def _between(reports, look, names: words.Names, compared) -> list[RatioSeries]:
    """A runtime over the first named of its kind (two OTPs in one run), a
    further report's over the first's (`--compare`: p10 over p10), each call
    over the fastest at its size: the view's ratio lines (bridge.view.series),
    each size's verdict, and the upgrade's word on what grew (per call, per
    byte) where there is one."""
    question = {
        series_view.Against.FIRST: Question.VERSIONS,
        series_view.Against.REPORT: Question.REPORTS,
        series_view.Against.FASTEST: Question.RUNTIMES,
    }
    out = []
    for line in series_view.ratios([rep for _, rep in reports], compared):
        s = look.get((line.scenario, line.report, line.runtime, line.call_id))
        if s is None:
            continue
        points = tuple(
            _point(p.size, p.ratio, p.ci95, p.verdict, _verdict_said(p.verdict))
            for p in line.points
        )
        label = s.label
        if line.against is not series_view.Against.FASTEST:
            hw_said = " (hw off)" if line.hw.masked else ""
            base = names.of(line.base_report, line.base_runtime)
            label = f"{s.name} over {base}: {s.call}{hw_said}"
        extra = _upgrade(line.upgrade) if line.upgrade else ""
        q = question[line.against]
        out.append(RatioSeries(line.scenario, q, label, s.row, s.colour, s.marker, points, extra))
    return out


def _verdict_said(verdict: str) -> str:
    return "the fastest" if verdict == FASTEST else words.word(verdict)


def _upgrade(u: schema.Upgrade) -> str:
    """What the cost model says grew: per call and per byte."""
    said = {"more": "costs more", "less": "costs less", "same": "same", "unknown": "unknown"}
    call, byte = (said.get(x) or svg_text(x, NAME) for x in (u.per_call, u.per_byte))
    return f"per call: {call}, per byte: {byte}"


def scenarios(reports: list[tuple[str, schema.Report]]) -> list[str]:
    return list(
        dict.fromkeys(r.scenario for _, rep in reports for r in rep.results if r.size > 0 and r.ok)
    )


def single_size(drawn: list[Series]) -> bool:
    """One size in the whole scenario: rows of points, not lines of one point."""
    return len({n for s in drawn for n in s.sizes}) == 1


def _feature(reports: list[tuple[str, schema.Report]], scenario: str) -> str:
    """What hw off masked in a scenario, as the verdicts name it."""
    features = {v.feature for _, rep in reports for v in rep.verdicts if v.scenario == scenario}
    if len(features) != 1:
        return "the feature"
    return words.hw_verdict("used", features.pop()).removeprefix("uses ")


def title(
    scenario: str, drawn: list[Series], feature: str = "the feature", unit: str = "bytes"
) -> str:
    """What the speed panel shows, and only what it shows."""
    if single_size(drawn) and drawn:
        head = f"{svg_text(scenario, NAME)}: {UNIT}, {words.size(drawn[0].sizes[0], unit)}"
    else:
        head = f"{svg_text(scenario, NAME)}: {UNIT} by size"
    head += " (median, 95% CI)"
    key = []
    if any(not s.hw.masked for s in drawn) and any(s.hw.masked for s in drawn):
        if single_size(drawn):
            key = [f"● machine as found (hw on), ○ {feature} masked (hw off)"]
        else:
            key = [f"solid, filled: machine as found (hw on); dashed, hollow: {feature} masked"]
    return words.wrapped("\n".join([head, *key]))


QUESTION_TITLES = {
    Question.HW: "hw off / hw on: time with {feature} masked over time as found",
    Question.VERSIONS: "versions: time per call over the first named of its kind",
    Question.REPORTS: "reports: p10 time per call over the first report's",
    Question.RUNTIMES: "runtimes: time per call over the fastest at that size",
}
QUESTION_KEYS = {
    Question.HW: "filled: a verdict (used, not used); hollow: none yet",
    Question.VERSIONS: "filled: a difference (faster, slower); hollow: none",
    Question.REPORTS: "filled: a difference (faster, slower); hollow: none",
    Question.RUNTIMES: "filled: a difference (slower); hollow: none",
}


def ratio_title(scenario: str, question: Question, feature: str = "the feature") -> str:
    head = QUESTION_TITLES[question].format(feature=feature)
    return words.wrapped(
        f"{svg_text(scenario, NAME)}, {head} (95% CI)\n1 = no difference; {QUESTION_KEYS[question]}"
    )


def _matplotlib():
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(INSTALL) from None
    return matplotlib, plt


def figure(reports: list[tuple[str, schema.Report]], compared: Comparison | None = None):
    """The matplotlib figure (the caller closes it)."""
    matplotlib, _ = _matplotlib()
    with matplotlib.rc_context(RC):
        return _figure(reports, compared)


def _figure(reports: list[tuple[str, schema.Report]], compared: Comparison | None):
    _, plt = _matplotlib()
    drawn = series(reports)
    ratios = ratio_series(reports, drawn, compared)
    names = scenarios(reports)
    by_level = plot_levels.scenarios(reports)  # --concurrency: throughput by level
    if not names and not by_level:
        raise UsageError("nothing to plot: no results with a message size above 0")
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    panels: list[axes.Panel] = []
    for scenario in names:
        mine = [s for s in drawn if s.scenario == scenario]
        panels += _scenario_panels(reports, scenario, mine, ratios, cycle)
    level_names = words.Names(reports)
    for scenario in by_level:
        panels += plot_levels.panels(reports, scenario, cycle, MARKERS, level_names)
    caption = words.caption(reports)
    panels.append(axes.text_panel(caption))
    height = sum(p.height for p in panels)
    fig = plt.figure(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
    grid = fig.add_gridspec(len(panels), 1, height_ratios=[p.height for p in panels])
    for n, panel in enumerate(panels):
        panel.draw(fig.add_subplot(grid[n]))
    return fig


def _scenario_panels(reports, scenario: str, mine: list[Series], ratios, cycle) -> list[axes.Panel]:
    feature = _feature(reports, scenario)
    unit = words.size_unit(reports[mine[0].report][1], scenario) if mine else "bytes"
    rows = _rows(mine)
    one = single_size(mine)
    out = []
    if one:
        out.append(
            axes.Panel(
                ROW_IN * len(rows) + 0.8,
                lambda ax: _dots(ax, scenario, mine, rows, cycle, feature, unit),
            )
        )
    else:
        out.append(
            axes.Panel(SPEED_IN, lambda ax: _lines(ax, scenario, mine, cycle, feature, unit))
        )
        handles = _speed_legend(mine, cycle)
        out.append(axes.legend_panel(handles))
    for question in Question:
        asked = [r for r in ratios if r.scenario == scenario and r.question is question]
        if not asked or _said_already(question, ratios, mine, len(reports)):
            continue
        heading = ratio_title(scenario, question, feature)
        if one:
            out.append(
                axes.Panel(
                    ROW_IN * len(rows) + 0.8,
                    lambda ax, a=asked, h=heading: _ratio_dots(ax, h, a, rows, cycle),
                )
            )
        else:
            out.append(
                axes.Panel(
                    RATIO_IN, lambda ax, a=asked, h=heading: _ratio_lines(ax, h, a, cycle, unit)
                )
            )
            out.append(axes.legend_panel(_ratio_legend(asked, cycle, unit)))
    return out


def _said_already(
    question: Question, ratios: list[RatioSeries], mine: list[Series], n: int
) -> bool:
    """A panel another one answers: with --compare, the reports' panel is
    the question, and each report's own versions and runtimes are its
    tables'; runtimes of one kind are what the versions panel shows."""
    if n > 1:
        return question in (Question.VERSIONS, Question.RUNTIMES)
    if question is not Question.RUNTIMES:
        return False
    scenario = mine[0].scenario if mine else ""
    versions = any(r.scenario == scenario and r.question is Question.VERSIONS for r in ratios)
    return versions and len({s.kind for s in mine}) == 1


def _rows(mine: list[Series]) -> list[tuple[tuple[int, str, str], str]]:
    """One row per report, runtime and call, in the order drawn: its key and label."""
    return list(dict.fromkeys((s.row, s.label) for s in mine))


def _lines(ax, scenario: str, mine: list[Series], cycle, feature: str, unit: str) -> None:
    for s in mine:
        ax.errorbar(
            s.sizes,
            s.ns,
            yerr=axes.yerr(s.ns, s.lo, s.hi),
            linestyle=s.linestyle,
            marker=s.marker,
            fillstyle="none" if s.hw.masked else "full",
            color=cycle[s.colour % len(cycle)],
            label=s.label,
        )
    ax.set_xscale("log", base=2)
    sizes = sorted({n for s in mine for n in s.sizes})
    ax.set_xticks(sizes, [words.size(n, unit) for n in sizes])
    ax.minorticks_off()
    ax.set_xlabel(words.axis_label(unit))
    axes.log_values(ax, "y")
    ax.set_ylabel(f"{UNIT}\n(median, 95% CI)")
    ax.set_title(title(scenario, mine, feature, unit), loc="left")
    ax.grid(True, which="major", alpha=0.3)


def _speed_legend(mine: list[Series], cycle) -> list[tuple[object, str]]:
    from matplotlib.lines import Line2D

    out = []
    for row, label in _rows(mine):
        s = next(s for s in mine if s.row == row)
        colour = cycle[s.colour % len(cycle)]
        out.append((Line2D([], [], color=colour, marker=s.marker, linestyle="-"), label))
    return out


def _dots(ax, scenario: str, mine: list[Series], rows, cycle, feature: str, unit: str) -> None:
    """One row per runtime and call, its name above it: hw on a filled
    point, hw off a hollow one just below, each with its CI."""
    y_of = _row_labels(ax, rows, {})
    both = len({s.hw for s in mine}) > 1
    for s in mine:
        dy = (-0.15 if s.hw.masked else 0.15) if both else 0.0
        ax.errorbar(
            s.ns,
            [y_of[s.row] + dy],
            xerr=axes.yerr(s.ns, s.lo, s.hi),
            linestyle="none",
            marker=s.marker,
            fillstyle="none" if s.hw.masked else "full",
            color=cycle[s.colour % len(cycle)],
        )
    values = [v for s in mine for v in (*s.lo, *s.hi, *s.ns) if v > 0]
    if values and max(values) / min(values) > 8:
        axes.log_values(ax, "x")
    else:
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: axes.value(v)))
    ax.set_xlabel(f"{UNIT} (median, 95% CI)")
    ax.set_title(title(scenario, mine, feature, unit), loc="left")
    ax.grid(True, axis="x", which="major", alpha=0.3)


def _row_labels(ax, rows, said: dict[tuple[int, str, str], str]) -> dict:
    """Rows from the top, each named inside the panel, above its points, so
    that the data spans the picture's width; returns each row's y."""
    from matplotlib.transforms import blended_transform_factory

    y_of = {row: 2 * (len(rows) - 1 - i) for i, (row, _) in enumerate(rows)}
    where = blended_transform_factory(ax.transAxes, ax.transData)
    for row, label in rows:
        text = label + (f": {said[row]}" if row in said else "")
        ax.text(
            0.01,
            y_of[row] + 0.55,
            axes.cut(text, 110),
            transform=where,
            va="bottom",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.8},
        )
    ax.set_ylim(-0.8, 2 * len(rows) - 0.2)
    ax.set_yticks([])
    return y_of


def _ratio_lines(ax, heading: str, asked: list[RatioSeries], cycle, unit: str) -> None:
    values = []
    for s in asked:
        colour = cycle[s.colour % len(cycle)]
        ax.errorbar(
            s.sizes,
            s.ratio,
            yerr=[[p.ratio - p.lo for p in s.points], [p.hi - p.ratio for p in s.points]],
            color=colour,
            linestyle="-",
            linewidth=0.8,
            marker="none",
        )
        axes.markers(ax, [(p.size, p.ratio, p.decisive) for p in s.points], s.marker, colour)
        values += [v for p in s.points for v in (p.lo, p.hi) if v > 0]
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xscale("log", base=2)
    sizes = sorted({n for s in asked for n in s.sizes})
    ax.set_xticks(sizes, [words.size(n, unit or "bytes") for n in sizes])
    ax.minorticks_off()
    axes.ratio_axis(ax, "y", values)
    ax.set_xlabel(words.axis_label(unit or "bytes"))
    ax.set_ylabel("ratio (95% CI)")
    ax.set_title(heading, loc="left")
    ax.grid(True, which="major", alpha=0.3)


def _ratio_legend(asked: list[RatioSeries], cycle, unit: str) -> list[tuple[object, str]]:
    from matplotlib.lines import Line2D

    out = []
    for s in asked:
        colour = cycle[s.colour % len(cycle)]
        found = words.verdicts_at([(p.size, p.said) for p in s.points], unit, len(s.points) > 1)
        text = f"{s.label}: {found}" + (f"; {s.extra}" if s.extra else "")
        handle = Line2D([], [], color=colour, marker=s.marker, linestyle="-")
        out.append((handle, words.wrapped(text, words.LEGEND_WRAP)))
    return out


def _ratio_dots(ax, heading: str, asked: list[RatioSeries], rows, cycle) -> None:
    """One row per runtime and call, as the speed panel's: the ratio with
    its CI, the figure and the verdict in words beside the row's name."""
    said = {}
    for s in asked:
        p = s.points[0]
        ci = (p.lo, p.hi) if p.lo != p.hi else None
        figure = words.ratio_text(p.ratio, ci) if p.verdict != FASTEST else "1×"
        said[s.row] = f"{figure}, {p.said}"
    y_of = _row_labels(ax, rows, said)
    values = []
    for s in asked:
        p, y = s.points[0], y_of.get(s.row)
        if y is None:
            continue
        colour = cycle[s.colour % len(cycle)]
        ax.errorbar(
            [p.ratio],
            [y],
            xerr=[[p.ratio - p.lo], [p.hi - p.ratio]],
            color=colour,
            linestyle="none",
            marker="none",
        )
        axes.markers(ax, [(p.ratio, y, p.decisive)], s.marker, colour)
        values += [v for v in (p.lo, p.hi) if v > 0]
    ax.axvline(1.0, color="black", linewidth=1)
    axes.ratio_axis(ax, "x", values)
    ax.set_xlabel("ratio (95% CI)")
    ax.set_title(heading, loc="left")
    ax.grid(True, axis="x", which="major", alpha=0.3)


def plot(
    reports: list[tuple[str, schema.Report]], out: Path, compared: Comparison | None = None
) -> int:
    """Draw and save; returns how many series were drawn. `reports` carry
    their findings (bridge.analysis.findings.complete) and `compared` is
    bridge compare's rows of them, None for one report: the cli's work,
    since a picture computes no finding. What matplotlib warns meanwhile is
    said as bridge's warnings (`_said`)."""
    if out.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"-o {out}: the picture must be .png or .svg")
    matplotlib, _ = _matplotlib()
    with _gathered() as heard, matplotlib.rc_context(RC):
        n = _save(reports, out, compared)
    for message in _said(heard):
        warnings.warn(BridgeWarning(message), stacklevel=2)
    return n


def _save(reports: list[tuple[str, schema.Report]], out: Path, compared: Comparison | None) -> int:
    fig = _figure(reports, compared)
    _, plt = _matplotlib()
    drawn = series(reports)
    level_lines = sum(
        plot_levels.count(reports, scenario) for scenario in plot_levels.scenarios(reports)
    )
    # Written as reports are (bridge.report.output.write_output): a temporary file
    # in the target's directory, then renamed, so a full disk leaves no
    # empty picture. Its name ends in .tmp: the format is said, not guessed.
    picture = out.suffix.lower()[1:]
    try:
        output.write_output(out, lambda f: write(fig, f, picture))
    finally:
        plt.close(fig)
    return len(drawn) + level_lines


# What matplotlib says when the font has no glyph for a character.
_GLYPH = re.compile(r"Glyph (\d+) .*missing from (current )?font")


def write(fig, f, picture: str) -> None:
    """The figure into an open file, whole: no tight crop, so a PNG is
    WIDTH_IN * DPI pixels wide, the width its text sizes were chosen for."""
    fig.savefig(f, format=picture, dpi=DPI)


@contextlib.contextmanager
def _gathered() -> Iterator[list[str | BridgeWarning]]:
    """What matplotlib warns (warnings.warn) or logs (its loggers) while the
    block runs, gathered instead of printed: the messages quote a report's
    text raw (an ESC, a BEL), and Python's warning line is no message for a
    user. A BridgeWarning of bridge's own is kept as it is."""
    heard: list[str | BridgeWarning] = []

    class Gather(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            heard.append(record.getMessage())

    log = logging.getLogger("matplotlib")
    handler, propagate = Gather(logging.WARNING), log.propagate
    log.addHandler(handler)
    log.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield heard
    finally:
        log.removeHandler(handler)
        log.propagate = propagate
    heard += [w.message if isinstance(w.message, BridgeWarning) else str(w.message) for w in caught]


def _said(heard: list[str | BridgeWarning]) -> list[str]:
    """The gathered messages as bridge's warnings: the glyphs the font
    lacks in one line, any other message once, shortened and escaped."""
    own = [str(m) for m in heard if isinstance(m, BridgeWarning)]
    theirs = [m for m in heard if not isinstance(m, BridgeWarning)]
    glyphs = len({g[1] for m in theirs if (g := _GLYPH.search(m))})
    out = list(dict.fromkeys(own))
    if glyphs:
        out.append(
            f"the picture's font has no glyph for {glyphs} character"
            f"{'s' * (glyphs != 1)} of the reports' names: drawn as empty boxes"
        )
    for message in dict.fromkeys(m for m in theirs if not _GLYPH.search(m)):
        out.append(f"matplotlib: {axes.cut(term_text(message), 200)}")
    return out
