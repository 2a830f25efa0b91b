"""Runtimes against each other within one run: `× first named` (each runtime
against the first-named runtime of its kind, same call, size and hw) and
`× fastest` (each row against the fastest row of its table), each with its
significance. Pure functions over a report.

The margin is `bridge compare`'s: a difference must clear ±3%. The method
is the hardware verdicts': the cells were measured in interleaved rounds,
side by side (bridge.measure.session.compared_together), so each round
gives one ratio, and the figure is the median of the rounds' ratios with the
hierarchical CI (stats.paired_ratio: process pairs, then rounds). A slow
spell of a shared machine that lands on one runtime's batch moves one
round's ratio, not the figure. A difference is only called when
 - each side has samples in at least MIN_ROUNDS of the same rounds
   (otherwise: "unresolved": drift and a difference cannot be told apart;
   --quick gives openssl cells 1 run, so its openssl rows are unresolved),
 - the rounds agree: the ratio lies on the same side of 1 in every round
   when there are at most 5; beyond that, in so many rounds that a fair coin
   would agree that often less than 5% of the time (a one-sided sign test:
   20 of 30, 15 of 20); otherwise it is drift, called within noise,
 - and, with fewer than hw.verdicts.FEW_PAIRS process pairs, its CI clears
   the wider margin a gap between two processes of one runtime needs.
Where either cell waited for a CPU in a usual round, the rounds are judged
on CPU time per call (`basis`). A report that does not say how it sampled
gets `compare`'s ratio of medians with a bootstrap CI from the raw samples.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence

from bridge import settings, stats
from bridge.analysis import noise
from bridge.analysis.cputime import WAIT_SHARE_HIGH
from bridge.catalog import calls
from bridge.catalog.scenario import size_unit
from bridge.catalog.vocab import RuntimeKind, ScenarioKind
from bridge.errors import UsageError
from bridge.hw import verdicts as hwv
from bridge.report import schema
from bridge.report.findings import Basis, Reason, Significance, Why, reason

# As `bridge compare`: a difference must clear 3% to count.
MARGIN = 0.03
MIN_ROUNDS = 3
FIRST, FASTEST = "first-named", "fastest"
# Each runtime of a version matrix (three or more of a kind) against the one
# named before it, where that is not its baseline already.
NEIGHBOUR = "neighbour"
UNRESOLVED, UNKNOWN = Significance.UNRESOLVED, Significance.UNKNOWN


def of(report: schema.Report) -> tuple[schema.Difference, ...]:
    """The report's own section, or, for a report from before it, computed now
    (once per report, by identity: the views ask several times, and each
    bootstrap costs tens of milliseconds). The commands complete a report
    before any view (bridge.analysis.findings.complete); this serves views
    handed a report directly."""
    if report.differences is not None:
        return report.differences
    for seen, diffs in _computed:
        if seen is report:
            return diffs
    diffs = differences(report)
    _computed.insert(0, (report, diffs))
    del _computed[4:]
    return diffs


# The last few reports computed by `of`, by identity (reports are unhashable).
_computed: list[tuple[schema.Report, tuple[schema.Difference, ...]]] = []


def differences(
    report: schema.Report, baseline: str | None = None
) -> tuple[schema.Difference, ...]:
    """`× first named` (against `baseline` in its kind, when given: --baseline),
    each runtime against its neighbour in a version matrix, and `× fastest`."""
    out = [*_versus_first(report, baseline), *_versus_neighbour(report), *_versus_fastest(report)]
    return tuple(out)


def choices(report: schema.Report) -> list[str]:
    """The runtimes a --baseline may name: every measured runtime (a masked
    twin shares its runtime's id), in the order they were named."""
    return list(
        dict.fromkeys([rt.id for rt in report.runtimes] + [r.runtime for r in report.results])
    )


def check_name(baseline: str) -> None:
    """Before a run: --baseline names a runtime of a kind bridge runs (its
    version is known only once it has started: `rebased` checks the rest)."""
    kind = baseline.split("@")[0].split("#")[0]
    if kind not in calls.RUNTIME_KINDS:
        raise UsageError(
            f"--baseline {baseline!r} is not a runtime name; expected KIND@VERSION as the"
            f" report names it, KIND one of {', '.join(calls.RUNTIME_KINDS)}"
            " (e.g. erlang@25.2.3, openssl@1.1.1w)"
        )


def check_baseline(report: schema.Report, baseline: str) -> None:
    """--baseline names a runtime of this report (its report name, e.g.
    erlang@25.2.3 or openssl@1.1.1w)."""
    names = choices(report)
    if baseline not in names:
        raise UsageError(
            f"--baseline {baseline!r} is not a runtime of this report; choose one of"
            f" {', '.join(names) or '(none)'}"
        )


def index(diffs: Sequence[schema.Difference]) -> dict[tuple, schema.Difference]:
    """(against, scenario, runtime, call_id, size, hw) -> its difference."""
    return {(d.against, d.scenario, d.runtime, d.call_id, d.size, d.hw): d for d in diffs}


def several(report: schema.Report) -> dict[str, list[str]]:
    """Runtime ids per kind, in the order they were named, for the kinds that
    have more than one (a masked twin shares its runtime's id). Kept for the
    last few reports, by identity: every sentence that names a runtime asks."""
    for seen, kinds in _kinds:
        if seen is report:
            return kinds
    kinds = _several(report)
    _kinds.insert(0, (report, kinds))
    del _kinds[4:]
    return kinds


_kinds: list[tuple[schema.Report, dict[str, list[str]]]] = []


def _several(report: schema.Report) -> dict[str, list[str]]:
    return report.several()


def group(report: schema.Report, r: schema.Result) -> str:
    """The comparison group of a row: sign, verify, keygen, setup, process
    or "" (the scenario's one operation)."""
    return calls.role(report.kind_of(r.runtime), r.call_id)


def _versus_first(report: schema.Report, baseline: str | None = None) -> list[schema.Difference]:
    kinds = several(report)
    order = {rid: i for ids in kinds.values() for i, rid in enumerate(ids)}
    if baseline in order:
        order[baseline] = -1  # the chosen baseline goes first in its kind
    groups: dict[tuple, list[schema.Result]] = defaultdict(list)
    for r in report.results:
        kind = report.kind_of(r.runtime)
        if _valid(r) and kind in kinds:
            groups[(r.scenario, kind, r.call_id, r.size, r.hw)].append(r)
    out = []
    for rows in groups.values():
        rows.sort(key=lambda r: order[r.runtime])
        first = rows[0]
        out += [_judge(report, FIRST, first, r) for r in rows[1:]]
    return out


def _versus_neighbour(report: schema.Report) -> list[schema.Difference]:
    """In a kind of three or more runtimes: each against the one named just
    before it (same call, size and hw), where that one is not the first
    named (whose ratio `× first named` gives already)."""
    kinds = {k: ids for k, ids in several(report).items() if len(ids) > 2}
    before = {ids[i]: ids[i - 1] for ids in kinds.values() for i in range(2, len(ids))}
    cells = {r.key: r for r in report.results if _valid(r)}
    out = []
    for r in report.results:
        prev = before.get(r.runtime)
        if prev is None or not _valid(r):
            continue
        base = cells.get(schema.CellKey(r.scenario, prev, r.call_id, r.size, r.hw))
        if base is not None:
            out.append(_judge(report, NEIGHBOUR, base, r))
    return out


def _versus_fastest(report: schema.Report) -> list[schema.Difference]:
    groups: dict[tuple, list[schema.Result]] = defaultdict(list)
    for r in report.results:
        kind = report.kind_of(r.runtime)
        if _valid(r) and not calls.is_part(kind, r.call_id):  # parts do not compete
            groups[(r.scenario, r.size, r.hw, group(report, r))].append(r)
    out = []
    for rows in groups.values():
        best = min(rows, key=lambda r: r.median())
        out += [_judge(report, FASTEST, best, r) for r in rows if r is not best]
    return out


def _valid(r: schema.Result) -> bool:
    """A cell a ratio can be made of: measured, with a time above zero (a
    pasted `openssl speed` line can say 0 operations)."""
    return r.ok and r.median() > 0


def _judge(
    report: schema.Report, against: str, base: schema.Result, r: schema.Result
) -> schema.Difference:
    def record(ratio, ci, verdict, rounds=None, reasons=(), basis=None) -> schema.Difference:
        return schema.Difference(
            scenario=r.scenario,
            size=r.size,
            hw=r.hw,
            against=against,
            runtime=r.runtime,
            call_id=r.call_id,
            baseline_runtime=base.runtime,
            baseline_call_id=base.call_id,
            ratio=ratio,
            ci95=ci,
            verdict=verdict,
            rounds=rounds,
            reasons=tuple(reasons),
            basis=basis,
        )

    if not base.samples or not r.samples:
        return record(r.median() / base.median(), None, UNKNOWN, None, (reason(Why.NO_SAMPLES),))
    ra, rb = rounds_of(report, base), rounds_of(report, r)
    if ra is None or rb is None:  # no round plan in the settings: the CI alone
        ratio, ci, verdict = judge(base.per_op_ns(), r.per_op_ns())
        fewest = min(len(base.samples), len(r.samples))
        if fewest < stats.MIN_CI_SAMPLES:
            what = "openssl run" if _openssl(report, base, r) else "sample"
            few = reason(Why.TOO_FEW_SAMPLES, what=what, have=fewest, need=stats.MIN_CI_SAMPLES)
            return record(ratio, None, Significance.FEW, None, (few,))
        return record(ratio, ci, verdict, None, _lopsided(report, ratio, ci, (base, r)))
    k = len(set(ra) & set(rb))
    basis, a, b = _basis(report, (base, r), (ra, rb))
    paired = stats.paired_ratio(a, b, _round_pairs(report, (base, r), (ra, rb)))
    if k < MIN_ROUNDS or paired is None:
        ratio, ci, _ = judge(base.per_op_ns(), r.per_op_ns())
        return record(
            ratio, ci, UNRESOLVED, k, (reason(Why.FEW_ROUNDS, rounds=k, need=MIN_ROUNDS),)
        )
    ratio, ci = paired.ratio, paired.ci95
    verdict = side(ci)
    why = _not_called(paired, (a, b), verdict)
    if why is not None:
        return record(ratio, ci, Significance.NOISE, k, (why,), basis)
    reasons = _lopsided(report, ratio, ci, (base, r))
    if verdict is Significance.NOISE and (straddled := _straddled(ratio, ci)) is not None:
        reasons = (*reasons, straddled)
    return record(ratio, ci, verdict, k, reasons, basis)


def _straddled(ratio: float, ci: tuple[float, float]) -> Reason | None:
    """Why a difference within noise is not called when its CI leaves the
    ±MARGIN band (0.97x, CI 0.88-0.99): the CI reaches both sides of the edge
    on its point's side. None where the CI lies inside the band: that is
    what within noise says."""
    lo, hi = ci
    if lo >= 1 - MARGIN and hi <= 1 + MARGIN:
        return None
    edge = 1 + MARGIN if ratio > 1 else 1 - MARGIN
    if not lo <= edge <= hi:  # the band's other edge, the point inside
        edge = 1 - MARGIN if edge > 1 else 1 + MARGIN
    return reason(Why.WITHIN_NOISE, lo=lo, hi=hi, margin=round(edge, 4))


def _not_called(
    paired: stats.Paired,
    rounds: tuple[Mapping[int, Sequence[float]], Mapping[int, Sequence[float]]],
    verdict: Significance,
) -> Reason | None:
    """Why a difference whose paired rounds' point or CI lies outside the
    margin is not called (None: it is called, or there is nothing to say):
    the rounds disagree on its side (a sign test), or, with fewer than
    FEW_PAIRS process pairs, its CI does not clear the wider margin that a
    gap between two processes of one runtime needs (as the hardware
    verdicts ask of twins: bridge.hw.verdicts.ONE_PAIR_MARGIN)."""
    slower = paired.ratio > 1 + MARGIN
    if not verdict.significant and not slower and paired.ratio >= 1 - MARGIN:
        return None
    a, b = rounds
    keys = sorted(i for i in set(a) & set(b) if a[i] and b[i])
    per_round = [statistics.median(b[i]) / statistics.median(a[i]) for i in keys]
    agree = sum((x > 1) if slower else (x < 1) for x in per_round)
    n = len(per_round)
    if agree < stats.agreeing_rounds_needed(n):
        return reason(Why.ROUNDS_DISAGREE, agree=agree, rounds=n)
    if not verdict.significant or paired.processes >= hwv.FEW_PAIRS:
        return None
    wide = MARGIN + hwv.ONE_PAIR_MARGIN
    if side(paired.ci95, wide).significant:
        return None
    needs = round(1 + wide if slower else 1 - wide, 4)
    return reason(Why.FEW_PROCESS_PAIRS, pairs=paired.processes, needs=needs)


def _basis(
    report: schema.Report,
    cells: tuple[schema.Result, schema.Result],
    rounds: tuple[dict[int, list[float]], dict[int, list[float]]],
) -> tuple[Basis, Mapping[int, Sequence[float]], Mapping[int, Sequence[float]]]:
    """What two cells' rounds are judged on, and those rounds: CPU time per
    call where either cell waited for a CPU in a usual round (the report's
    wait_share_high of its windows or more), and both have CPU time in
    MIN_ROUNDS of the same rounds; wall time otherwise. Waiting stretches a
    cell's wall time by what other processes ran, and two cells, in two
    processes, need not wait alike."""
    keys = set(rounds[0]) & set(rounds[1])
    high = report.cpu_time.wait_share_high if report.cpu_time is not None else WAIT_SHARE_HIGH
    sides = list(zip(cells, rounds, strict=True))
    waits = [stats.round_waits(c.samples, c.sample_wait_ns, by) for c, by in sides]
    usual = [statistics.median(w[i] for i in keys if i in w) for w in waits if keys & set(w)]
    if max(usual, default=0.0) >= high:
        a, b = (_cpu_rounds(c, by) for c, by in sides)
        if a is not None and b is not None and len(set(a) & set(b)) >= MIN_ROUNDS:
            return Basis.CPU, a, b
    return Basis.WALL, rounds[0], rounds[1]


def _cpu_rounds(r: schema.Result, by_round: Mapping[int, Sequence[float]]):
    loops = [r.loops_of(j) for j in range(len(r.samples))]
    return stats.round_cpu(r.sample_cpu_ns, loops, by_round)


def _round_pairs(
    report: schema.Report,
    cells: tuple[schema.Result, schema.Result],
    rounds: tuple[dict[int, list[float]], dict[int, list[float]]],
) -> dict[int, int] | None:
    """The pair of processes (one of each cell) that made each round, as a
    number, for the hierarchical CI; every openssl run is a process of its
    own. None: one process a side."""
    sides = []
    for c, by in zip(cells, rounds, strict=True):
        if report.kind_of(c.runtime) == RuntimeKind.OPENSSL:
            sides.append({i: i for i in by})
        else:
            sides.append(stats.round_processes(c.procs, by) or {})
    if not sides[0] and not sides[1]:
        return None
    keys = set(rounds[0]) & set(rounds[1])
    pairs = {i: (sides[0].get(i, 0), sides[1].get(i, 0)) for i in keys}
    ids = {p: n for n, p in enumerate(sorted(set(pairs.values())))}
    return {i: ids[p] for i, p in pairs.items()}


def _openssl(report: schema.Report, *cells: schema.Result) -> bool:
    return any(report.kind_of(c.runtime) == RuntimeKind.OPENSSL for c in cells)


# A CI whose point estimate lies this close to an edge (a share of its width),
# and that spans more than LOPSIDED_WIDTH: the bootstrap saw something the
# point does not, and the difference says what.
LOPSIDED_EDGE = 0.1
LOPSIDED_WIDTH = 1.1


def _lopsided(
    report: schema.Report,
    ratio: float,
    ci: tuple[float, float],
    cells: tuple[schema.Result, schema.Result],
) -> tuple[Reason, ...]:
    """Why a CI sits lopsided about its point (1.50x, CI 0.47-1.53): a side
    whose processes differ, or whose samples sit at two speeds. The bootstrap
    resamples the processes (and the samples): with two or three of them, or
    two speeds, its medians fall in separate heaps, and the point in one."""
    lo, hi = ci
    if lo <= 0 or hi / lo <= LOPSIDED_WIDTH:
        return ()
    at = (ratio - lo) / (hi - lo)
    if LOPSIDED_EDGE <= at <= 1 - LOPSIDED_EDGE:
        return ()
    out = []
    for r in cells:
        unit = size_unit(report.scenario_kind(r.scenario))
        shape = noise.process_shape(r) or noise.two_speed_shape(r)
        found = None if shape is None else noise.cell_reason(shape, unit)
        if found is not None:
            out.append(found)
    return tuple(out)


def side(ci: tuple[float, float], margin: float = MARGIN) -> Significance:
    """slower | faster (the CI clears the margin) | within noise."""
    if ci[0] > 1 + margin:
        return Significance.SLOWER
    if ci[1] < 1 - margin:
        return Significance.FASTER
    return Significance.NOISE


def judge(
    a: Sequence[float], b: Sequence[float], margin: float = MARGIN
) -> tuple[float, tuple[float, float], Significance]:
    """median(b)/median(a) with its bootstrap 95% CI from the raw samples,
    and the call: slower | faster (the CI clears the margin) | within noise."""
    ratio, ci = stats.relative_ci(a, b)
    return ratio, ci, side(ci, margin)


def judge_pair(report: schema.Report, base: schema.Result, r: schema.Result) -> schema.Difference:
    """`r` against `base` as `× first named` judges two cells (the upgrade
    view asks of pairs the table may not show)."""
    return _judge(report, FIRST, base, r)


def is_drift(d: schema.Difference) -> bool:
    """A CI that clears the margin, called within noise because the rounds
    disagree (reports from before the reasons: in the note's words)."""
    if d.verdict != Significance.NOISE:
        return False
    return any(r.why is Why.ROUNDS_DISAGREE for r in d.reasons) or d.note.endswith(": drift")


def rounds_of(report: schema.Report, r: schema.Result) -> dict[int, list[float]] | None:
    """A cell's per-call times by round, as the session took them: round i
    holds samples_in_round(i) samples (openssl and whole-file cells:
    openssl_runs_in_round(i)), then --until-stable rounds of the first
    round's size, at least one (settings.round_share). None when the
    report does not say how it sampled."""
    s = report.settings
    if s.rounds is None or s.samples is None:
        return None
    n_rounds = max(1, s.rounds)
    few = (
        report.kind_of(r.runtime) == RuntimeKind.OPENSSL
        or report.scenario_kind(r.scenario) == ScenarioKind.FILE_DIGEST
    )
    total = (5 if s.openssl_runs is None else s.openssl_runs) if few else s.samples
    values = r.per_op_ns()
    out: dict[int, list[float]] = {}
    pos, i = 0, 0
    while pos < len(values):
        size = settings.round_share(total, n_rounds, i)
        if size:
            out[i] = values[pos : pos + size]
            pos += size
        i += 1
    return out
