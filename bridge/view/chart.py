"""What a scenario's pictures draw, as the view's series (model.Series of
model.Point, each with its 95% CI): the time per call of each runtime's call
at each hw state against the size, in ns as every table speaks; the slow-down
masked (hw off over hw on, the hardware verdict's figure) and each runtime
over the first named of its kind, as ratios around a line at 1; in a
comparison, B/A per cell. A writer draws one picture per metric (bridge.render.html)."""

from __future__ import annotations

from collections import defaultdict

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
    """Each runtime against the first named (or the --baseline) of its kind."""
    names = tables.call_names(ctx, rows)
    masked = any(r.hw.masked for r in rows)
    grouped: dict[tuple[str, str, Hw], list[Point]] = defaultdict(list)
    for r in rows:
        d = ctx.diff(codes.FIRST, r)
        if d is None or d.runtime == d.baseline_runtime:
            continue
        lo, hi = d.ci95 if d.ci95 is not None else (d.ratio, d.ratio)
        tone = _SIGNIFICANCE_TONE.get(d.verdict, Tone.PLAIN)
        point = Point(
            r.size, d.ratio, min(lo, d.ratio), max(hi, d.ratio), _at(ctx, scenario, r.size), tone
        )
        grouped[(r.runtime, r.call_id, r.hw)].append(point)
    metric = words.CHART_BASELINE if ctx.rebased else words.CHART_FIRST
    out = []
    for (runtime, call_id, hw), points in grouped.items():
        call = names[(ctx.report.kind_of(runtime), call_id)]
        label = words.series_label(runtime, call, str(hw), masked)
        out.append(Series(scenario, label, runtime, call, str(hw), metric, tuple(points), True))
    return out


def compared(labels: tuple[str, str], rows: list[Row]) -> tuple[Series, ...]:
    """B/A per cell of one pair of reports, one series per scenario, call,
    runtimes and hw, its points at each size."""
    grouped: dict[tuple, list[Point]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: r.size):
        lo, hi = r.ci95 if r.ci95 is not None else (r.ratio, r.ratio)
        tone = _SIGNIFICANCE_TONE.get(r.verdict, Tone.PLAIN)
        point = Point(
            r.size, r.ratio, min(lo, r.ratio), max(hi, r.ratio), units.short(r.size), tone
        )
        runtimes = r.runtime_a if r.runtime_a == r.runtime_b else f"{r.runtime_a} / {r.runtime_b}"
        hw = str(r.hw_a) if r.hw_a == r.hw_b else f"{r.hw_a}/{r.hw_b}"
        grouped[(r.scenario, runtimes, r.call_id or r.call, hw)].append(point)
    masked = len({k[3] for k in grouped}) > 1
    metric = words.CHART_COMPARED.format(labels[1], labels[0])
    return tuple(
        Series(
            scenario,
            f"{scenario}: {words.series_label(runtimes, call, hw, masked)}",
            runtimes,
            call,
            hw,
            metric,
            tuple(points),
            True,
        )
        for (scenario, runtimes, call, hw), points in grouped.items()
    )
