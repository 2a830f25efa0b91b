"""The --concurrency findings beyond throughput and scaling, in words: the
slowest of N workers (a table), a level whose workers waited for each other
(serialised), and why level 1's rate and the per-call median differ. The
findings are bridge.analysis.concurrency's, read from the report."""

from __future__ import annotations

from bridge.report import schema
from bridge.report.levels import Concurrency, Gap, LevelOne, LevelResult, Serialisation, Slowest
from bridge.view import units
from bridge.view.context import si
from bridge.view.model import Cell, Column, Table
from bridge.view.tables import dur, level_order, mode_name, short_level_call

NOUNS = {"processes": "processes", "threads": "threads", "multi": "processes", "clients": "clients"}


def _at(report: schema.Report, scenario: str, size: int) -> str:
    """ " at 16 KiB"; nothing for a fixed-size call."""
    at = units.at(report, scenario, size)
    return "" if at == units.PER_CALL else f" {at}"


def slowest(report: schema.Report, c: Concurrency, cells: list[LevelResult]) -> Table | None:
    """The cells that raced or say what CPU they used: the slowest of N with
    its CI and against level 1, and the CPUs the work wanted."""
    several = len({cell.size for cell in cells}) > 1
    rows = []
    # In the levels table's order, each call named as it names it.
    for cell in sorted(cells, key=level_order(c.cells)):
        slow, use = (cell.slowest(), cell.cpu_use()) if cell.ok else (None, None)
        if slow is None and use is None:
            continue
        base = _base(c, cell)
        base_slow = base.slowest() if base else None
        ratio = "-"
        if slow and base_slow and base_slow.median_ns > 0:
            ratio = f"{slow.median_ns / base_slow.median_ns:.2f}×"
        by = {
            "runtime": Cell(cell.runtime),
            "call": Cell(f"{short_level_call(cell)} ({mode_name(cell.mode)})"),
            "size": Cell(units.cell_value(cell.size, units.unit(report, cell.scenario))),
            "n": Cell(f"{cell.level}*" if cell.oversubscribed else str(cell.level)),
            "calls": Cell(str(slow.calls) if slow else "-"),
            "slowest": Cell(_slowest_text(slow, False), short=dur(slow.median_ns) if slow else "-"),
            "ratio": Cell(ratio),
            "cpus": Cell(f"{use.cpus:.1f}" if use else "-"),
        }
        rows.append(by)
    if not rows:
        return None
    cols = [
        Column("runtime", "runtime", ident=True),
        Column("call", "call (mode)", ident=True),
        *([Column("size", "size", right=True, ident=True)] if several else []),
        Column("n", "N", right=True, ident=True),
        Column("calls", "calls", right=True, drop=1),
        Column("slowest", "slowest (95% CI)", right=True),
        Column("ratio", "× N=1", right=True),
        Column("cpus", "CPUs", right=True),
    ]
    legend = (SLOWEST_TITLE,)
    if any(cell.ok and cell.mode in FIXED_TIME for cell in cells):
        legend += (NO_RACE,)
    return Table(
        "Slowest of N", tuple(cols), tuple(tuple(r[c.key] for c in cols) for r in rows), legend
    )


def findings(report: schema.Report, c: Concurrency, scenario: str) -> list[str]:
    out = []
    for f in c.serialisation:
        if f.scenario == scenario and f.shape.value == "serialised":
            out.append(serialised_sentence(report, c, f))
    for lo in c.level_one:
        if lo.scenario == scenario and lo.gap is not Gap.AGREE:
            out.append(level_one_sentence(report, lo))
    return out


FIXED_TIME = ("multi", "clients")  # openssl's modes: each worker counts for the same seconds
NO_RACE = (
    "No slowest of N for openssl: speed -multi's children and s_time's clients count calls for"
    " a fixed time, not a fixed number; the slowest is the lowest of each worker's figures."
)
SLOWEST_TITLE = (
    "Slowest of N: each of the N makes the same calls from a common start; the time"
    " the last one finished, median over the races (95% CI), and against level 1."
    " CPUs: how many CPUs the work wanted (running, or ready to run and waiting for"
    " one), not counting workers blocked on each other."
)


def _base(c: Concurrency, cell: LevelResult) -> LevelResult | None:
    """Level 1 of the cell's group."""
    return next((x for x in c.cells if x.ok and x.group == cell.group and x.level == 1), None)


def _slowest_text(slow: Slowest | None, ascii_only: bool) -> str:
    """ "41.5 ms (13.0-83.4)": the CI in the median's unit where both ends
    have it."""
    if slow is None:
        return "-"
    head = dur(slow.median_ns)
    if slow.ci95 is None:
        return f"{head} (n={slow.races})"
    sep = "-" if ascii_only else "–"
    lo, hi = (dur(v) for v in slow.ci95)
    unit = head.split(" ")[-1]
    if lo.endswith(f" {unit}") and hi.endswith(f" {unit}"):
        lo, hi = lo.removesuffix(f" {unit}"), hi.removesuffix(f" {unit}")
    return f"{head} ({lo}{sep}{hi})"


def serialised_sentence(
    report: schema.Report, c: Concurrency, f: Serialisation, ascii_only: bool = False
) -> str:
    """A level whose per-call time grew faster than the CPUs its work wanted."""
    x, sep = ("x", "-") if ascii_only else ("×", "–")
    cell = next((x_ for x_ in c.cells if (*x_.group, x_.level) == (*_group_of(f), f.level)), None)
    call = cell.call.split(" ×")[0] if cell else f.call_id
    noun = NOUNS.get(f.mode, "workers")
    ci = (
        f" (95% CI {f.per_call_ci95[0]:.2f}{sep}{f.per_call_ci95[1]:.2f})"
        if f.per_call_ci95
        else ""
    )
    cpus = f" ({f.cpus[0]:.1f} to {f.cpus[1]:.1f})" if f.cpus else ""
    slow = (
        f"; the slowest of {f.level} took {f.slowest_ratio:.2f}{x} as long as one alone"
        if f.slowest_ratio
        else ""
    )
    return (
        f"{f.scenario}{_at(report, f.scenario, f.size)}: from 1 to {f.level} {noun} of"
        f" {f.runtime} {call}, per-call time grew {f.per_call_ratio or 0:.2f}{x}{ci} while"
        f" the CPUs the work wanted grew {f.cpu_ratio or 0:.2f}{x}{cpus}{slow}: the {noun}"
        " waited for each other (a lock, one process or thread doing the work, the GIL),"
        " not for work or for a CPU."
    )


def _group_of(f: Serialisation) -> tuple:
    return (f.scenario, f.runtime, f.call_id, f.mode, f.size, f.hw)


def level_one_sentence(report: schema.Report, lo: LevelOne, ascii_only: bool = False) -> str:
    """Why level 1's rate and the per-call median disagree."""
    x = "x" if ascii_only else "×"
    head = (
        f"{lo.scenario}{_at(report, lo.scenario, lo.size)}: {lo.runtime} {lo.call_id}"
        f" at level 1 ({lo.mode}) did {_rate(lo.ops)}/s, {lo.ratio:.2f}{x} the per-call"
        f" median's {_rate(lo.median_ops)}/s"
    )
    waits = _waits(lo)
    if lo.gap is Gap.WAITED and lo.level_wait_share is not None:
        alone = lo.ops / (1 - lo.level_wait_share)
        return (
            f"{head}: its threads waited for a CPU {lo.level_wait_share:.0%} of the time they"
            f" wanted one, and the rate counts that time (without it, {_rate(alone)}/s); the"
            " median of the per-call cell's short samples keeps those that did not wait"
            f" (their mean: {_rate(lo.mean_ops)}/s)."
        )
    if lo.gap is Gap.TAIL:
        return (
            f"{head}: the rate counts every call, the median the middle one, and this"
            f" call's times vary (the per-call cell's mean: {_rate(lo.mean_ops)}/s{waits})."
        )
    if lo.gap is Gap.PINNED:
        return (
            f"{head}: level 1's work wanted {lo.cpus or 0:.1f} CPUs at once (it runs in more"
            " than one thread, as a TLS client and its server in one node), while the"
            f" per-call cell ran pinned to one CPU for its batch{waits}."
        )
    if lo.gap is Gap.FEW:
        return f"{head}: too few runs at level 1 for a CI, so the gap may be their own spread."
    return (
        f"{head}, and neither the waits for a CPU nor the spread of the calls' times"
        f" explains it (the per-call cell's mean: {_rate(lo.mean_ops)}/s{waits})."
    )


def _waits(lo: LevelOne) -> str:
    parts = []
    if lo.level_wait_share is not None:
        parts.append(f"level 1 waited for a CPU {lo.level_wait_share:.0%}")
    if lo.cell_wait_share is not None:
        parts.append(f"the per-call samples {lo.cell_wait_share:.0%}")
    return f"; {', '.join(parts)}" if parts else ""


def _rate(ops: float) -> str:
    return si(ops) if ops >= 1000 else f"{ops:,.0f}"
