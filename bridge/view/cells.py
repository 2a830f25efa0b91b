"""One tidy row per measured cell (--export-csv): what the cell is, its
figures in ns per call with their CI, and what was found about it: the
hardware verdict of its call at its size with the reason codes, and its
ratio to the row it is compared with (the first named of its kind, or
--baseline; else the fastest of its table). Numbers stay numbers (None where a cell has none); the
writer (bridge.render.csv) adds only the syntax."""

from __future__ import annotations

from dataclasses import dataclass, fields

from bridge import stats
from bridge.report import schema
from bridge.view import codes, units
from bridge.view.context import ordered, scenarios

# A cell may carry several verdicts (features that cannot be masked together
# each keep their own): their features, verdicts and reasons are listed in
# one field each, in the same order, with this between them.
SEPARATOR = ";"


@dataclass(frozen=True)
class CellRow:
    """One cell of one report. `report` is the report's label where several
    are lined up (compare), "" otherwise. Times in `unit` (ns) per call."""

    report: str
    scenario: str
    runtime: str
    kind: str
    version: str
    call_id: str
    call: str
    size: int
    size_unit: str  # bytes | iterations | per call
    hw: str  # on | off (the feature masked)
    status: str  # ok | unsupported
    source: str  # measured | imported (as posted: no samples)
    unit: str
    median: float | None
    ci_low: float | None
    ci_high: float | None
    p10: float | None
    samples: int
    feature: str
    verdict: str  # the hardware verdict, "" where the cell has none
    reason: str  # its reason codes (bridge.report.findings.Why)
    against: str  # first-named (or --baseline) | fastest: what `ratio` is to
    baseline: str  # the runtime of the row this one is compared with
    baseline_call_id: str
    ratio: float | None  # this row's median over the baseline's
    ratio_low: float | None
    ratio_high: float | None
    significance: str  # faster | slower | within noise | ...
    unsupported: str  # the runtime's own words, for a call it refused


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CellRow))
UNIT = "ns"


def rows(report: schema.Report, label: str = "") -> tuple[CellRow, ...]:
    """Every cell of a report (its findings complete: bridge.analysis.findings),
    in the order its tables show them."""
    verdicts: dict[tuple[str, str, str, int], list[schema.HwVerdict]] = {}
    for v in report.verdicts:
        verdicts.setdefault((v.scenario, v.runtime, v.call_id, v.size), []).append(v)
    # Against the first named of its kind (or --baseline) where a row has
    # one; else against the fastest row of its table.
    against: dict[tuple, schema.Difference] = {}
    for d in report.differences or ():
        key = (d.scenario, d.runtime, d.call_id, d.size, d.hw)
        if d.against == codes.FIRST or (d.against == codes.FASTEST and key not in against):
            against[key] = d
    out: list[CellRow] = []
    for scenario in scenarios(report):
        cells = ordered(report, [r for r in report.results if r.scenario == scenario])
        size_unit = units.unit(report, scenario)
        for r in cells:
            found = verdicts.get((r.scenario, r.runtime, r.call_id, r.size), [])
            diff = against.get((r.scenario, r.runtime, r.call_id, r.size, r.hw))
            out.append(_row(report, r, label, size_unit, found, diff))
    return tuple(out)


def _row(
    report: schema.Report,
    r: schema.Result,
    label: str,
    size_unit: str,
    found: list[schema.HwVerdict],
    diff: schema.Difference | None,
) -> CellRow:
    runtime = report.runtime(r.runtime)
    median = lo = hi = p10 = None
    if r.ok and (r.samples or r.point_ns is not None):
        s = r.summary()
        median = s.median
        if len(r.samples) > 1:
            lo, hi = s.ci95
        if r.samples:
            p10 = stats.low(r.per_op_ns())
    ci = diff.ci95 if diff is not None else None
    return CellRow(
        report=label,
        scenario=r.scenario,
        runtime=r.runtime,
        kind=report.kind_of(r.runtime),
        version=runtime.version if runtime is not None else "",
        call_id=r.call_id,
        call=r.call,
        size=r.size,
        size_unit=size_unit,
        hw=r.hw.value,
        status=r.status,
        source=r.source,
        unit=UNIT,
        median=median,
        ci_low=lo,
        ci_high=hi,
        p10=p10,
        samples=len(r.samples),
        feature=SEPARATOR.join(v.feature for v in found),
        verdict=SEPARATOR.join(v.verdict.value for v in found),
        reason=SEPARATOR.join(_codes(v) for v in found),
        against=diff.against if diff is not None else "",
        baseline=diff.baseline_runtime if diff is not None else "",
        baseline_call_id=diff.baseline_call_id if diff is not None else "",
        ratio=diff.ratio if diff is not None else None,
        ratio_low=ci[0] if ci is not None else None,
        ratio_high=ci[1] if ci is not None else None,
        significance=diff.verdict.value if diff is not None else "",
        unsupported="" if r.ok else r.reason,
    )


def _codes(v: schema.HwVerdict) -> str:
    """A verdict's reason codes: why the path does not use the feature, then
    why the verdict was withheld or what limits it ("+" between them)."""
    found = [v.why.reason.value] if v.why is not None else []
    found += [reason.why.value for reason in v.reasons if reason.why.value not in found]
    return "+".join(found)
