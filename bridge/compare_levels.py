"""`bridge compare` for level cells (--concurrency): the same call at the
same level lines up across reports, matched like results are (by scenario,
runtime kind and its n-th runtime, call, mode, size and hw), never by
runtime id. Each pair is a `compare.Row`: time per call is the aggregate
one (1 / throughput), ratio B/A with a bootstrap CI over the windows."""

from __future__ import annotations

from collections import defaultdict

from bridge.analysis import compare
from bridge.report import schema
from bridge.report.levels import LevelResult


def _cells(report: schema.Report) -> dict[tuple, dict[str, LevelResult]]:
    if report.concurrency is None:
        return {}
    order: dict[str, dict[str, int]] = defaultdict(dict)
    for rt in report.runtimes:
        order[rt.kind].setdefault(rt.id, len(order[rt.kind]))
    out: dict[tuple, dict[str, LevelResult]] = defaultdict(dict)
    for c in report.concurrency.cells:
        if not c.ok or c.ops() is None:
            continue
        kind = report.kind_of(c.runtime)
        nth = order[kind].get(c.runtime, 0)
        out[(c.scenario, kind, c.call_id, c.mode, c.size, c.level, nth)][c.hw] = c
    return out


def pair(a: schema.Report, b: schema.Report, margin: float) -> list[compare.Row]:
    """Rows for the level cells both reports have."""
    return [_row(key, ca, cb, margin) for key, ca, cb in compare.matched(_cells(a), _cells(b))]


def _row(key: tuple, ca: LevelResult, cb: LevelResult, margin: float) -> compare.Row:
    scenario, kind, call_id, mode, size, level, _ = key
    xa = [1e9 / x for x in ca.window_ops()]
    xb = [1e9 / x for x in cb.window_ops()]
    sa, sb = ca.ops(), cb.ops()
    assert sa is not None and sb is not None
    ma, mb = 1e9 / sa.median, 1e9 / sb.median
    if len(xa) >= 2 and len(xb) >= 2:
        ratio, ci, verdict = compare.judge(xa, xb, margin)
    else:
        ratio, ci, verdict = mb / ma, None, "unknown (no samples)"
    return compare.Row(
        scenario,
        kind,
        cb.call,
        f"{call_id} ×{level} {mode}",
        size,
        ca.hw,
        cb.hw,
        ca.runtime,
        cb.runtime,
        ma,
        mb,
        ratio,
        ci,
        verdict,
    )
