"""`bridge plot` for --concurrency reports: throughput against the number of
concurrent workers, one line per runtime, call, mode and size, with each
point's 95% CI as an error bar and a dotted line for perfect scaling from
level 1. Oversubscribed levels (more workers than CPUs) are hollow. Names
from the reports are drawn as bridge.render.escape.svg_text makes them."""

from __future__ import annotations

import re

from bridge.render.escape import svg_text
from bridge.report import schema
from bridge.report.levels import LevelResult
from bridge.view import words


def scenarios(reports: list[tuple[str, schema.Report]]) -> list[str]:
    names: dict[str, None] = {}
    for _, rep in reports:
        for c in _cells(rep):
            names.setdefault(c.scenario)
    return list(names)


def _cells(rep: schema.Report) -> list[LevelResult]:
    if rep.concurrency is None:
        return []
    return [c for c in rep.concurrency.cells if c.ok and c.ops() is not None and c.size > 0]


def _groups(rep: schema.Report, scenario: str) -> dict[tuple, list[LevelResult]]:
    series: dict[tuple, list[LevelResult]] = {}
    for c in _cells(rep):
        if c.scenario == scenario:
            series.setdefault((c.runtime, c.call_id, c.mode, c.size, c.hw), []).append(c)
    return series


def count(reports: list[tuple[str, schema.Report]], scenario: str) -> int:
    """How many lines `draw` draws for a scenario."""
    return sum(len(_groups(rep, scenario)) for _, rep in reports)


def draw(ax, reports: list[tuple[str, schema.Report]], scenario: str, colours, markers) -> int:
    """One panel; returns how many lines it drew."""
    lines = 0
    colour_of: dict[str, str] = {}
    levels: set[int] = set()
    for n, (label, rep) in enumerate(reports):
        series = _groups(rep, scenario)
        for (runtime, _, mode, size, hw), cells in series.items():
            cells.sort(key=lambda c: c.level)
            base = re.sub(r"-multi \d+ ", "", cells[0].call.split(" ×")[0])
            name = f"{svg_text(rep.kind_of(runtime), 16)}: {svg_text(base, 60)}"
            name += f" ({svg_text(mode, 16)}, {_size(size)})"
            colour = colour_of.setdefault(name, colours[len(colour_of) % len(colours)])
            xs = [c.level for c in cells]
            ys, lo, hi = [], [], []
            for c in cells:
                s = c.ops()
                assert s is not None
                mbs = s.median * size / 1e6
                ys.append(mbs)
                has_ci = bool(c.raw.windows) and s.n >= 3
                lo.append(mbs - s.ci95[0] * size / 1e6 if has_ci else 0.0)
                hi.append(s.ci95[1] * size / 1e6 - mbs if has_ci else 0.0)
            where = f" [{svg_text(label, 48)}]" if len(reports) > 1 else ""
            ax.errorbar(
                xs,
                ys,
                yerr=[lo, hi],
                color=colour,
                marker=markers[n % len(markers)],
                linestyle="--" if hw.masked else "-",
                capsize=3,
                label=f"{name} {svg_text(runtime, 48)}{where}",
            )
            hollow = [(c.level, y) for c, y in zip(cells, ys, strict=True) if c.oversubscribed]
            if hollow:
                ax.scatter(*zip(*hollow, strict=True), s=90, facecolors="white", edgecolors=colour)
            if xs[0] == 1:
                ax.plot(xs, [ys[0] * x for x in xs], linestyle=":", color=colour, alpha=0.5)
            levels.update(xs)
            lines += 1
    ax.set_xticks(sorted(levels))
    ax.set_xlabel("concurrent workers (level)")
    ax.set_ylabel("aggregate throughput (MB/s, median, 95% CI)")
    ax.set_title(
        f"{svg_text(scenario, 48)}: throughput against concurrency (dotted: perfect scaling)"
    )
    ax.grid(True, alpha=0.3)
    # Outside the data, right of the panel.
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return lines


def _size(n: int) -> str:
    return words.short(n)
