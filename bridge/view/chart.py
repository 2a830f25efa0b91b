"""What a scenario's pictures draw, as the view's series (model.Series of
model.Point, each with its 95% CI): the time per call of each runtime's call
at each hw state against the size, in ns as every table speaks; the slow-down
masked (hw off over hw on, the hardware verdict's figure) and each runtime
over the first named of its kind, as ratios around a line at 1; in a
comparison, B/A per cell. A writer draws one picture per metric (bridge.render.html)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from bridge.report import schema
from bridge.report.comparison import Row
from bridge.report.hw import Hw
from bridge.view import codes, series, tables, units, words
from bridge.view.context import Context
from bridge.view.model import Point, Series, Tone

_SIGNIFICANCE_TONE = {codes.FASTER: Tone.GOOD, codes.SLOWER: Tone.BAD}
_VERDICT_TONE = {codes.USED: Tone.GOOD, codes.NOT_USED: Tone.MUTED}


def for_scenario(ctx: Context, scenario: str) -> tuple[Series, ...]:
    rows = [r for r in ctx.results(scenario) if r.ok and r.median() > 0]
    if not rows:
        return ()
    return (
        *_times(ctx, scenario, rows),
        *_off_on(ctx, scenario, rows),
        *_first(ctx, scenario, rows),
    )


def _at(ctx: Context, scenario: str, size: int) -> str:
    """Where a point is, as a list of sizes says it: 16 B, 1 KiB; 1,024 iterations."""
    return words.short(size, ctx.unit(scenario))


def _times(ctx: Context, scenario: str, rows: list[schema.Result]) -> list[Series]:
    names = tables.call_names(ctx, rows)
    masked = any(r.hw.masked for r in rows)
    grouped: dict[tuple[str, str, Hw], list[schema.Result]] = defaultdict(list)
    for r in rows:
        grouped[(r.runtime, r.call_id, r.hw)].append(r)
    out = []
    for (runtime, call_id, hw), mine in grouped.items():
        call = names[(ctx.report.kind_of(runtime), call_id)]
        points = []
        for r in sorted(mine, key=lambda r: r.size):
            s = r.summary()
            lo, hi = s.ci95 if s.n > 1 and not r.imported else (s.median, s.median)
            points.append(
                Point(
                    r.size,
                    s.median,
                    min(lo, s.median),
                    max(hi, s.median),
                    _at(ctx, scenario, r.size),
                )
            )
        label = words.series_label(runtime, call, str(hw), masked)
        out.append(Series(scenario, label, runtime, call, str(hw), words.CHART_TIME, tuple(points)))
    return out


def _off_on(ctx: Context, scenario: str, rows: list[schema.Result]) -> list[Series]:
    if not any(r.hw.masked for r in rows):
        return []
    names = tables.call_names(ctx, rows)
    grouped: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for pair in series.pairs(ctx.report, rows):
        figure = pair.off_on()
        if pair.on is None or pair.off is None or figure is None:
            continue
        ratio, ci = figure
        lo, hi = ci if ci is not None else (ratio, ratio)
        v = pair.verdict
        tone = _VERDICT_TONE.get(v.verdict, Tone.PLAIN) if v is not None else Tone.PLAIN
        r = pair.first
        grouped[(r.runtime, r.call_id)].append(
            Point(r.size, ratio, min(lo, ratio), max(hi, ratio), _at(ctx, scenario, r.size), tone)
        )
    out = []
    for (runtime, call_id), points in grouped.items():
        call = names[(ctx.report.kind_of(runtime), call_id)]
        label = words.series_label(runtime, call)
        out.append(
            Series(scenario, label, runtime, call, "", words.CHART_OFF_ON, tuple(points), True)
        )
    return out


def _first(ctx: Context, scenario: str, rows: list[schema.Result]) -> list[Series]:
    """Each runtime against the first named (or the --baseline) of its kind:
    the plot's lines (bridge.view.series), in the rows' order."""
    names = tables.call_names(ctx, rows)
    masked = any(r.hw.masked for r in rows)
    first: dict[tuple[str, str, Hw], int] = {}
    for n, r in enumerate(rows):
        first.setdefault((r.runtime, r.call_id, r.hw), n)
    lines = [
        x
        for x in series.over_first(ctx.report)
        if x.scenario == scenario and (x.runtime, x.call_id, x.hw) in first
    ]
    lines.sort(key=lambda x: first[(x.runtime, x.call_id, x.hw)])
    metric = words.CHART_BASELINE if ctx.rebased else words.CHART_FIRST
    out = []
    for x in lines:
        call = names[(ctx.report.kind_of(x.runtime), x.call_id)]
        label = words.series_label(x.runtime, call, str(x.hw), masked)
        points = _points(x, lambda size: _at(ctx, scenario, size))
        out.append(Series(scenario, label, x.runtime, call, str(x.hw), metric, points, True))
    return out


def compared(labels: tuple[str, str], rows: list[Row]) -> tuple[Series, ...]:
    """B/A per cell of one pair of reports (the plot's lines, bridge.view.series),
    one series per scenario, call, runtimes and hw, its points at each size."""
    lines = series.over_report(rows)
    masked = len({(x.base_hw, x.hw) for x in lines}) > 1
    metric = words.CHART_COMPARED.format(labels[1], labels[0])
    out = []
    for x in lines:
        a, b = x.base_runtime, x.runtime
        runtimes = a if a == b else f"{a} / {b}"
        hw = str(x.hw) if x.hw == x.base_hw else f"{x.base_hw}/{x.hw}"
        label = f"{x.scenario}: {words.series_label(runtimes, x.call_id, hw, masked)}"
        points = _points(x, units.short)
        out.append(Series(x.scenario, label, runtimes, x.call_id, hw, metric, points, True))
    return tuple(out)


def _points(line: series.RatioLine, at: Callable[[int], str]) -> tuple[Point, ...]:
    """A ratio line's points, each worded where it is (`at`) and toned by its verdict."""
    return tuple(
        Point(p.size, p.ratio, *p.bounds, at(p.size), _SIGNIFICANCE_TONE.get(p.verdict, Tone.PLAIN))
        for p in line.points
    )
