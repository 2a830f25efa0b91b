"""Line up reports (`bridge compare A.json B.json ...`) and say whether each
difference is real or noise.

Results are matched by scenario, runtime *kind*, call and size (level
cells of --concurrency also by mode and level: bridge.analysis.compare), never by
runtime id, so OTP 25 on one machine lines up with OTP 27 on another; the
n-th runtime of a kind in one report pairs with the n-th in the other.
Running nodes measured over distribution (--node) pair by host instead: the
node on db1 with the node on db1, whatever release each runs. The hw
state is matched too, except where each report has only one state for a cell
(a hw-on run against a hw-off run): those pair across, and the row says so.

For each pair: ratio = low(B)/low(A) per call, low being the 10th
percentile of the per-call times (bridge.stats.LOW_STATISTIC: the end of the
samples a busy or two-speed machine moves least), with a bootstrap 95% CI
from the raw samples. The difference is *significant* when the CI clears a
3% noise margin on either side, *within noise* otherwise. Imported reports
(openssl speed text) have no samples: the ratio is shown, the significance
is unknown; a side with fewer than 3 samples (--quick's one openssl run) has
no CI either: "too few samples", with what to rerun.

Each report recorded its machine (the noise block: load average, other
processes' CPU, steal, the share of time spent waiting for a CPU). When the
two differ by more than noise, a difference in the direction of the load
(the busier report slower) is judged again on CPU time per call
(Result.sample_cpu_ns, which waiting for a CPU does not stretch), the same
way: significant there, it stands, its figures the CPU time's (basis cpu);
otherwise, or without CPU time, it is "unequal load", not significant: load
alone makes a call that much slower by wall time (1.58× was seen here, on
identical set-ups).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

from bridge import stats
from bridge.analysis import quietness, upgrade, versus
from bridge.catalog.vocab import RuntimeKind
from bridge.report import schema
from bridge.report.comparison import Comparison, Row
from bridge.report.findings import Basis, Reason, Significance, Why, reason
from bridge.report.hw import Hw
from bridge.report.levels import LevelResult

MARGIN = versus.MARGIN
# Where the loads differed, a difference stands on CPU time per call only
# past this: sharing a CPU moves CPU time too (caches, an SMT sibling), less
# than wall time. Beside two CPU hogs a cell's CPU time per call read
# 0.67-1.15x its idle reading (docs/findings/truth-under-load.md), most
# within 1.10x; a real slowdown (SHA-NI masked at 16 KiB) reads 3-4x.
LOAD_CPU_MARGIN = 0.15
FEW, UNEQUAL = Significance.FEW, Significance.UNEQUAL_LOAD


def _cells(report: schema.Report) -> dict[tuple, dict[Hw, schema.Result]]:
    """(scenario, kind, call_id, size, (host, nth runtime of that kind on
    it)) -> {hw: result}. The host is "" for runtimes bridge started itself."""
    order: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    where: dict[str, tuple[str, str]] = {}
    for rt in report.runtimes:
        group = (rt.kind, rt.node_host)
        order[group].setdefault(rt.id, len(order[group]))
        where.setdefault(rt.id, group)
    cells: dict[tuple, dict[Hw, schema.Result]] = defaultdict(dict)
    for r in report.results:
        if not r.ok:
            continue
        kind = report.kind_of(r.runtime)
        group = where.get(r.runtime, (kind, ""))
        nth = order[group].get(r.runtime, 0)
        cells[(r.scenario, kind, r.call_id, r.size, (group[1], nth))][r.hw] = r
    return cells


def pair(a: schema.Report, b: schema.Report, margin: float = MARGIN) -> list[Row]:
    cells = list(matched(_cells(a), _cells(b)))
    rows = [_row(key, ra, rb, margin) for key, ra, rb in cells]
    # Levels (--concurrency) line up the same way, each level with its own.
    levels = level_pairs(a, b, margin)
    unequal = quietness.unequal(quietness.conditions(a), quietness.conditions(b))
    if not unequal:
        return rows + levels
    weighed = [
        weigh_load(row, unequal, lambda row=row, ra=ra, rb=rb: on_cpu_time(row, ra, rb))
        for row, (_, ra, rb) in zip(rows, cells, strict=True)
    ]
    return weighed + [weigh_load(r, unequal) for r in levels]


def weigh_load(row: Row, unequal: Reason, cpu: Callable[[], Row | None] | None = None) -> Row:
    """A significant row in the direction of the load (the busier report the
    slower one; either, when the measures disagree which was busier or both
    machines were busy): judged on CPU time per call (`cpu` makes that row,
    None where a side has no CPU time), it stands where CPU time finds the
    same difference; otherwise it is "unequal load": the load alone can make
    it. `unequal`: quietness.unequal's UNEQUAL_LOAD."""
    if not row.significant:
        return row
    slower = "B" if row.verdict == Significance.SLOWER else "A"
    busier = unequal["busier"]
    if busier and busier != slower:
        return row  # the busier report was the faster: load does not do that
    settled = cpu() if cpu is not None else None
    if settled is not None and settled.verdict == row.verdict:
        return dataclasses.replace(settled, reasons=(reason(Why.LOAD_CPU, busier=busier),))
    return dataclasses.replace(row, verdict=UNEQUAL, reasons=(unequal,))


def on_cpu_time(
    row: Row, ra: schema.Result, rb: schema.Result, margin: float = LOAD_CPU_MARGIN
) -> Row | None:
    """The row judged on CPU time per call (low(b)/low(a) of each sample's
    CPU ns over its calls, with its bootstrap CI), as judge_low judges wall
    time but against `margin`; None where a side recorded no CPU time (an
    older report, an imported one) or too little of it for a CI."""
    a, b = cpu_per_call(ra), cpu_per_call(rb)
    if min(len(a), len(b)) < stats.MIN_CI_SAMPLES:
        return None
    ratio, ci, verdict, _ = judge_low(a, b, margin)
    if ci is None:
        return None
    return dataclasses.replace(
        row,
        ratio=ratio,
        ci95=ci,
        verdict=verdict,
        low_a=stats.low(a),
        low_b=stats.low(b),
        basis=Basis.CPU,
    )


def cpu_per_call(r: schema.Result) -> list[float]:
    """A cell's CPU ns per call, sample by sample; samples whose CPU time
    was not read are left out; [] when the cell has none."""
    if len(r.sample_cpu_ns) != len(r.samples):
        return []
    return [c / r.loops_of(i) for i, c in enumerate(r.sample_cpu_ns) if c > 0]


T = TypeVar("T")


def matched(
    ca: Mapping[tuple, Mapping[Hw, T]], cb: Mapping[tuple, Mapping[Hw, T]]
) -> Iterator[tuple[tuple, T, T]]:
    """(key, a, b) for each cell both reports have, by key and then by hw;
    a key with a single hw state on each side pairs those two, whichever
    they are. Results and level cells (bridge.analysis.compare) alike."""
    for key, by_hw_a in ca.items():
        by_hw_b = cb.get(key)
        if not by_hw_b:
            continue
        matches = [(hw, hw) for hw in by_hw_a if hw in by_hw_b]
        if not matches and len(by_hw_a) == 1 and len(by_hw_b) == 1:
            matches = [(next(iter(by_hw_a)), next(iter(by_hw_b)))]
        for hw_a, hw_b in matches:
            yield key, by_hw_a[hw_a], by_hw_b[hw_b]


def judge_low(
    a: Sequence[float], b: Sequence[float], margin: float = MARGIN, what: str = "sample"
) -> tuple[float, tuple[float, float] | None, Significance, tuple[Reason, ...]]:
    """low(b)/low(a) (bridge.stats.low) with its bootstrap 95% CI, the call
    (slower | faster: the CI clears the margin | within noise) and why there
    is none: too few samples when a side has fewer than a CI needs, or all
    of a side's samples equal (no CI then). `what` one sample is."""
    fewest = min(len(a), len(b))
    if fewest < stats.MIN_CI_SAMPLES:
        few = reason(Why.TOO_FEW_SAMPLES, what=what, have=fewest, need=stats.MIN_CI_SAMPLES)
        return stats.low(b) / stats.low(a), None, FEW, (few,)
    ratio, ci = stats.low_ratio_ci(a, b)
    if ci[0] == ci[1]:
        return ratio, None, FEW, (reason(Why.SAMPLES_EQUAL),)
    return ratio, ci, versus.side(ci, margin), ()


def _row(key: tuple, ra: schema.Result, rb: schema.Result, margin: float) -> Row:
    a, b = ra.per_op_ns(), rb.per_op_ns()
    ma, mb = stats.summarize(a).median, stats.summarize(b).median
    if ra.samples and rb.samples:
        what = "openssl run" if key[1] == RuntimeKind.OPENSSL else "sample"
        ratio, ci, verdict, reasons = judge_low(a, b, margin, what)
    else:
        ratio, ci, verdict = mb / ma, None, Significance.UNKNOWN
        reasons = (reason(Why.NO_SAMPLES),)
    scenario, kind, call_id, size, _ = key
    return Row(
        scenario,
        kind,
        rb.call,
        call_id,
        size,
        ra.hw,
        rb.hw,
        ra.runtime,
        rb.runtime,
        ma,
        mb,
        ratio,
        ci,
        verdict,
        low_a=stats.low(a),
        low_b=stats.low(b),
        reasons=reasons,
    )


ENV_FIELDS = (
    ("CPU", "cpu_model"),
    ("arch", "arch"),
    ("OS", "os"),
    ("kernel", "kernel"),
    ("CPU flags", "cpu_flags"),
)


def environment_diff(reports: list[schema.Report]) -> list[tuple[str, list[str | None]]]:
    """What differs between the environments: CPU, OS, kernel, OTP, OpenSSL...

    A value is None where a report cannot have it: an imported `openssl speed`
    paste has no environment block and no Erlang or Python runtimes, so its
    empty fields are not differences. A row is listed when the reports that
    can have it disagree."""
    table: list[tuple[str, list[str | None]]] = []
    measured = [not r.imported_from for r in reports]
    for label, key in ENV_FIELDS:
        values = [
            _text(getattr(r.environment, key)) if m else None
            for r, m in zip(reports, measured, strict=True)
        ]
        table.append((label, values))
    for kind, what in (
        (RuntimeKind.ERLANG, "OTP"),
        (RuntimeKind.PYTHON, "Python"),
        (RuntimeKind.OPENSSL, "openssl CLI"),
    ):
        can = measured if kind != RuntimeKind.OPENSSL else [True] * len(reports)
        table.append(
            (what, [_versions(r, kind) if c else None for r, c in zip(reports, can, strict=True)])
        )
    table.append(
        (
            "Erlang's libcrypto",
            [_erlang_lib(r) if m else None for r, m in zip(reports, measured, strict=True)],
        )
    )
    return [(w, v) for w, v in table if len({x for x in v if x is not None}) > 1]


def _text(value) -> str:
    """A machine fact as text ("": the report does not have it)."""
    if value is None:
        return ""
    return " ".join(value) if isinstance(value, (list, tuple)) else str(value)


def _versions(report: schema.Report, kind: str) -> str:
    return ", ".join(dict.fromkeys(rt.version for rt in report.runtimes if rt.kind == kind)) or "-"


def _erlang_lib(report: schema.Report) -> str:
    libs = [rt.details.library for rt in report.runtimes if rt.kind == RuntimeKind.ERLANG]
    return ", ".join(dict.fromkeys(libs)) or "-"


def compare(reports: list[schema.Report], labels: list[str]) -> Comparison:
    pairs = [(i, pair(reports[0], reports[i])) for i in range(1, len(reports))]
    upgrades = {
        i: upgrade.between(reports[0], reports[i], (labels[0], labels[i]), rows)
        for i, rows in pairs
    }
    found = [quietness.conditions(r) for r in reports]
    unequal = {i: quietness.unequal(found[0], found[i]) for i in range(1, len(reports))}
    return Comparison(
        labels=labels,
        pairs=pairs,
        environment_diff=environment_diff(reports),
        upgrades={i: u for i, u in upgrades.items() if u},
        conditions=found,
        unequal={i: u for i, u in unequal.items() if u is not None},
    )


# -- level cells (--concurrency) -------------------------------------------------
# `bridge compare` for level cells (--concurrency): the same call at the
# same level lines up across reports, matched like results are (by scenario,
# runtime kind and its n-th runtime, call, mode, size and hw), never by
# runtime id. Each pair is a `Row`: time per call is the aggregate
# one (1 / throughput), ratio B/A with a bootstrap CI over the windows.


def _level_cells(report: schema.Report) -> dict[tuple, dict[Hw, LevelResult]]:
    if report.concurrency is None:
        return {}
    order: dict[str, dict[str, int]] = defaultdict(dict)
    for rt in report.runtimes:
        order[rt.kind].setdefault(rt.id, len(order[rt.kind]))
    out: dict[tuple, dict[Hw, LevelResult]] = defaultdict(dict)
    for c in report.concurrency.cells:
        if not c.ok or c.ops() is None:
            continue
        kind = report.kind_of(c.runtime)
        nth = order[kind].get(c.runtime, 0)
        out[(c.scenario, kind, c.call_id, c.mode, c.size, c.level, nth)][c.hw] = c
    return out


def level_pairs(a: schema.Report, b: schema.Report, margin: float) -> list[Row]:
    """Rows for the level cells both reports have."""
    both = matched(_level_cells(a), _level_cells(b))
    return [_level_row(key, ca, cb, margin) for key, ca, cb in both]


def _level_row(key: tuple, ca: LevelResult, cb: LevelResult, margin: float) -> Row:
    scenario, kind, call_id, mode, size, level, _ = key
    xa = [1e9 / x for x in ca.window_ops()]
    xb = [1e9 / x for x in cb.window_ops()]
    sa, sb = ca.ops(), cb.ops()
    assert sa is not None and sb is not None
    ma, mb = 1e9 / sa.median, 1e9 / sb.median
    if len(xa) >= 2 and len(xb) >= 2:
        ratio, ci, verdict, reasons = judge_low(xa, xb, margin, "window")
    else:
        ratio, ci, verdict = mb / ma, None, Significance.UNKNOWN
        reasons = (reason(Why.NO_SAMPLES),)
    return Row(
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
        low_a=stats.low(xa),
        low_b=stats.low(xb),
        reasons=reasons,
    )


# -- cells one report has and the other lacks ------------------------------------
# What compare's gate (bridge.analysis.gate) names besides the rows: a cell
# with nothing to line up with cannot be judged, and says so.


@dataclasses.dataclass(frozen=True)
class Unpaired:
    """A cell of one report that no cell of the other lines up with (by the
    rules of `matched`): a call, size, hw state or runtime kind measured on
    one side only, or that failed on the other (failed cells are not lined
    up)."""

    side: int  # 0: only in the baseline (A), 1: only in the other report (B)
    scenario: str
    kind: str
    call: str
    call_id: str  # a level cell's as its Row's: "macN ×2 processes"
    size: int
    hw: Hw
    runtime: str


def unpaired(a: schema.Report, b: schema.Report) -> list[Unpaired]:
    """The cells of `a` and of `b` that `pair` has no row for, A's first."""
    out = []
    for ca, cb in ((_cells(a), _cells(b)), (_level_cells(a), _level_cells(b))):
        for side, item in _unmatched(ca, cb):
            level = f" ×{item.level} {item.mode}" if isinstance(item, LevelResult) else ""
            kind = (a if side == 0 else b).kind_of(item.runtime)
            out.append(
                Unpaired(
                    side,
                    item.scenario,
                    kind,
                    item.call,
                    f"{item.call_id}{level}",
                    item.size,
                    item.hw,
                    item.runtime,
                )
            )
    return sorted(out, key=lambda u: u.side)


def _unmatched(
    ca: Mapping[tuple, Mapping[Hw, T]], cb: Mapping[tuple, Mapping[Hw, T]]
) -> Iterator[tuple[int, T]]:
    """(side, cell) for each cell `matched` leaves out: a key on one side
    only, or a hw state the other side lacks (unless each side has one
    state, which pair across)."""
    for key, by_hw_a in ca.items():
        by_hw_b = cb.get(key) or {}
        if len(by_hw_a) == 1 and len(by_hw_b) == 1:
            continue
        yield from ((0, x) for hw, x in by_hw_a.items() if hw not in by_hw_b)
        yield from ((1, x) for hw, x in by_hw_b.items() if hw not in by_hw_a)
    for key, by_hw_b in cb.items():
        if not ca.get(key):
            yield from ((1, x) for x in by_hw_b.values())
