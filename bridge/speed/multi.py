"""`bridge import-speed` of `openssl speed -multi N` runs: each summed number
becomes a level cell (bridge.report.levels) of level N, as posted, with the
children's own numbers beside it.

Scaling needs level 1: a single-process run of the same document with the
same version, path (-evp or not), algorithm and size becomes that cell's
level 1, when it timed by the wall clock (-elapsed) as every -multi run does.
A run timed by user CPU time (speed's default) is not comparable, and is not
paired: its cell has no scaling.
"""

from __future__ import annotations

from collections.abc import Callable

from bridge.analysis import concurrency
from bridge.report.hw import Hw
from bridge.report.levels import Concurrency, LevelRaw, LevelResult, Machine
from bridge.speed.parse import Entry, Run

IMPORTED_LEVEL = "as posted: one number from openssl speed -multi output, no samples"

Call = Callable[[Run, Entry], tuple[str, str]]


def cells(run: Run, rid: str, runs: list[Run], call: Call) -> list[LevelResult]:
    out = []
    for e in run.entries:
        call_id, label = call(run, e)
        children = tuple(
            c.ops_per_s
            for kid in sorted(run.children)
            for c in run.children[kid]
            if c.size == e.size and c.operation == e.operation
        )
        out.append(_cell(run, rid, e, call_id, label, level=run.multi, children=children))
        base = _single(runs, run, e, call_id, call)
        if base is not None:
            out.append(_cell(base[0], rid, base[1], call_id, call(*base)[1], level=1, children=()))
    return out


def _cell(run, rid, e, call_id, label, *, level, children) -> LevelResult:
    m = concurrency.OPENSSL_MULTI
    return LevelResult(
        scenario=e.algorithm,
        runtime=rid,
        call=m.label(label, level) if level > 1 else f"{label} (run {run.index}, one process)",
        call_id=call_id,
        mode=m.name,
        semantics=m.describe(IMPORTED_LEVEL) if level > 1 else IMPORTED_LEVEL,
        algorithm=e.algorithm,
        size=e.size,
        hw=Hw.ON,
        level=level,
        raw=LevelRaw(api=f"openssl speed ({e.source})"),
        source="imported",
        point_ops_per_s=e.ops_per_s,
        children_ops_per_s=children,
        source_line=e.line,
    )


def _single(runs: list[Run], multi: Run, e: Entry, call_id: str, call: Call):
    """(run, entry) of a wall-clock single-process run of the same thing."""
    for run in runs:
        if run.multi or "-elapsed" not in run.command or run.version != multi.version:
            continue
        for x in run.entries:
            same = (x.algorithm, x.operation, x.size) == (e.algorithm, e.operation, e.size)
            if same and call(run, x)[0] == call_id:
                return run, x
    return None


def block(cells_: list[LevelResult]) -> Concurrency | None:
    if not cells_:
        return None
    levels = tuple(sorted({c.level for c in cells_}))
    return concurrency.with_findings(concurrency.block(levels, None, None, Machine(), cells_))
