"""`bridge plot` for --concurrency reports: per scenario, the aggregate
throughput (ops/s, the unit of the levels table: the workers' calls per
second summed, median over the windows, 95% CI as an error bar) against the
number of concurrent workers, one line per runtime, call, mode and size,
with a dotted line for perfect scaling from level 1; oversubscribed levels
(more workers than CPUs) are hollow. Under it the scaling efficiency
(throughput(N) / throughput(1) / N, the table's `eff.`) with its CI, around
a line at 1 (perfect scaling), and a legend saying each line's efficiency
at its highest level and, where the report found one, whether the calls
queued (serialised) or worked. Names from the reports are drawn as
bridge.render.escape.svg_text makes them."""

from __future__ import annotations

import re

from bridge.render import plot_axes as axes
from bridge.render import plot_words as words
from bridge.render.escape import svg_text
from bridge.report import schema
from bridge.report.levels import LevelResult, Scaling, Serialisation, Shape

LEVELS_IN, EFFICIENCY_IN = 2.6, 1.9
SHAPES = {
    Shape.SERIALISED: "serialised: the workers queued, they did not work",
    Shape.WORK: "the time went to work (or to waiting for a CPU)",
    Shape.UNKNOWN: "serialised or not: unknown",
}


def scenarios(reports: list[tuple[str, schema.Report]]) -> list[str]:
    names: dict[str, None] = {}
    for _, rep in reports:
        for c in _cells(rep):
            names.setdefault(c.scenario)
    return list(names)


def _cells(rep: schema.Report) -> list[LevelResult]:
    if rep.concurrency is None:
        return []
    return [c for c in rep.concurrency.cells if c.ok and c.ops() is not None]


def _groups(rep: schema.Report, scenario: str) -> dict[tuple, list[LevelResult]]:
    series: dict[tuple, list[LevelResult]] = {}
    for c in _cells(rep):
        if c.scenario == scenario:
            series.setdefault((c.runtime, c.call_id, c.mode, c.size, c.hw), []).append(c)
    return series


def count(reports: list[tuple[str, schema.Report]], scenario: str) -> int:
    """How many lines the throughput panel draws for a scenario."""
    return sum(len(_groups(rep, scenario)) for _, rep in reports)


class _Line:
    """One group of level cells as drawn: its name, colour and figures."""

    def __init__(self, n: int, rep: schema.Report, key: tuple, cells, names: words.Names) -> None:
        runtime, call_id, mode, size, hw = key
        self.key, self.report = key, rep
        cells.sort(key=lambda c: c.level)
        base = re.sub(r"-multi \d+ ", "", cells[0].call.split(" ×")[0])
        unit = words.size_unit(rep, cells[0].scenario)
        where = f", {words.size(size, unit)}" if size > 0 else ""
        masked = ", hw off" if hw.masked else ""
        self.label = (
            f"{names.of(n, runtime)}: {words.call_name(base, call_id)}"
            f" ({svg_text(mode, 16)}{where}{masked})"
        )
        self.cells = cells
        self.levels = [c.level for c in cells]
        self.ops, self.lo, self.hi = [], [], []
        for c in cells:
            s = c.ops()
            assert s is not None
            has_ci = bool(c.raw.windows) and s.n >= 3
            self.ops.append(s.median)
            self.lo.append(s.ci95[0] if has_ci else s.median)
            self.hi.append(s.ci95[1] if has_ci else s.median)


def _lines(reports, scenario: str, names: words.Names) -> list[_Line]:
    return [
        _Line(n, rep, key, cells, names)
        for n, (_, rep) in enumerate(reports)
        for key, cells in _groups(rep, scenario).items()
    ]


def panels(reports, scenario: str, colours, markers, names: words.Names) -> list[axes.Panel]:
    """The throughput panel, the efficiency panel and their legend."""
    from matplotlib.lines import Line2D

    lines = _lines(reports, scenario, names)
    style = [(colours[i % len(colours)], markers[i % len(markers)]) for i in range(len(lines))]
    entries = []
    for line, (colour, marker) in zip(lines, style, strict=True):
        handle = Line2D(
            [], [], color=colour, marker=marker, linestyle="--" if line.key[4].masked else "-"
        )
        entries.append(
            (handle, words.wrapped(f"{line.label}: {_verdict(line)}", words.LEGEND_WRAP))
        )
    return [
        axes.Panel(LEVELS_IN, lambda ax: _throughput(ax, scenario, lines, style)),
        axes.Panel(EFFICIENCY_IN, lambda ax: _efficiency(ax, scenario, lines, style)),
        axes.legend_panel(entries),
    ]


def _throughput(ax, scenario: str, lines: list[_Line], style) -> None:
    for line, (colour, marker) in zip(lines, style, strict=True):
        ax.errorbar(
            line.levels,
            line.ops,
            yerr=axes.yerr(line.ops, line.lo, line.hi),
            color=colour,
            marker=marker,
            linestyle="--" if line.key[4].masked else "-",
        )
        hollow = [
            (c.level, y) for c, y in zip(line.cells, line.ops, strict=True) if c.oversubscribed
        ]
        if hollow:
            ax.scatter(
                *zip(*hollow, strict=True), s=60, facecolors="white", edgecolors=colour, zorder=3
            )
        if line.levels[0] == 1:
            ideal = [line.ops[0] * x for x in line.levels]
            ax.plot(line.levels, ideal, linestyle=":", color=colour, alpha=0.6)
    levels = sorted({x for line in lines for x in line.levels})
    ax.set_xticks(levels)
    axes.log_values(ax, "y")
    ax.set_xlabel("concurrent workers (level)")
    ax.set_ylabel("ops/s, all workers\n(median, 95% CI)")
    ax.set_title(
        words.wrapped(
            f"{svg_text(scenario, 48)}: throughput against concurrency (median, 95% CI)\n"
            "dotted: perfect scaling from 1 worker; hollow: more workers than CPUs"
        ),
        loc="left",
    )
    ax.grid(True, which="major", alpha=0.3)


def _scaling(line: _Line) -> list[Scaling]:
    conc = line.report.concurrency
    runtime, call_id, mode, size, hw = line.key
    found = [
        s
        for s in (conc.scaling if conc else ())
        if (s.scenario, s.runtime, s.call_id, s.mode, s.size, s.hw)
        == (line.cells[0].scenario, runtime, call_id, mode, size, hw)
    ]
    return sorted(found, key=lambda s: s.level)


def _serialisation(line: _Line) -> Serialisation | None:
    conc = line.report.concurrency
    runtime, call_id, mode, size, hw = line.key
    found = [
        s
        for s in (conc.serialisation if conc else ())
        if (s.scenario, s.runtime, s.call_id, s.mode, s.size, s.hw)
        == (line.cells[0].scenario, runtime, call_id, mode, size, hw)
    ]
    return max(found, key=lambda s: s.level) if found else None


def _verdict(line: _Line) -> str:
    """The line's efficiency at its highest level, and what the report found."""
    scaled = [s for s in _scaling(line) if s.level > 1]
    if not scaled:
        return "one level: no scaling"
    top = scaled[-1]
    ci = (
        f" (CI {top.ci95[0] / top.level:.0%}–{top.ci95[1] / top.level:.0%})"
        if top.ci95
        else " (no CI)"
    )
    said = f"efficiency {top.efficiency:.0%} at {top.level}{ci}"
    found = _serialisation(line)
    return said + (f"; {SHAPES[found.shape]}" if found else "")


def _efficiency(ax, scenario: str, lines: list[_Line], style) -> None:
    values = []
    for line, (colour, marker) in zip(lines, style, strict=True):
        scaled = _scaling(line)
        if not scaled:
            continue
        xs = [s.level for s in scaled]
        ys = [s.efficiency for s in scaled]
        lo = [s.ci95[0] / s.level if s.ci95 else s.efficiency for s in scaled]
        hi = [s.ci95[1] / s.level if s.ci95 else s.efficiency for s in scaled]
        ax.errorbar(xs, ys, yerr=axes.yerr(ys, lo, hi), color=colour, marker="none", linewidth=0.8)
        axes.markers(ax, [(x, y, True) for x, y in zip(xs, ys, strict=True)], marker, colour)
        values += [v for v in (*lo, *hi) if v > 0]
    ax.axhline(1.0, color="black", linewidth=1)
    levels = sorted({x for line in lines for x in line.levels})
    ax.set_xticks(levels)
    axes.ratio_axis(ax, "y", values or [1.0], percent=True)
    ax.set_xlabel("concurrent workers (level)")
    ax.set_ylabel("efficiency (95% CI)")
    ax.set_title(
        words.wrapped(
            f"{svg_text(scenario, 48)}: scaling efficiency, throughput(N) / throughput(1) / N\n"
            "100% = perfect scaling; 100%/N = no gain from N workers"
        ),
        loc="left",
    )
    ax.grid(True, which="major", alpha=0.3)
