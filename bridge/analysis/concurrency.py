"""Crypto under concurrency: how each runtime runs N workers at once (its
*modes*), and the figures across levels: scaling with a bootstrap CI,
efficiency, oversubscription, the output check, and the findings. Pure.

Vocabulary (docs/guide/concurrency.md):
- level N: N workers of the same call over the same time windows, all
  started together;
- mode: how the N run. Erlang: processes in one node. Python: threads in one
  interpreter (the GIL), or separate worker processes. openssl: `speed
  -multi N` (forked processes);
- scaling: throughput(N) / throughput(1); efficiency: scaling / N;
- the slowest of N: in a race, each of the N makes the same number of calls
  from a common start; the slowest one's time to finish;
- serialisation: per-call time that grows from level 1 to N faster than
  the CPUs the runtime kept busy (bridge.report.levels.Serialisation);
- level one: level 1's rate beside the per-call cell's median
  (bridge.report.levels.LevelOne).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bridge import plain, stats
from bridge.analysis import interop
from bridge.catalog import calls, negotiated
from bridge.catalog.inputs import Inputs
from bridge.catalog.scenario import FileDigestScenario, Scenario, SignatureScenario, TlsScenario
from bridge.catalog.vocab import RuntimeKind
from bridge.crypto import ec
from bridge.report import schema
from bridge.report.findings import Reason, Why, reason
from bridge.report.levels import (
    Concurrency,
    Gap,
    LevelOne,
    LevelResult,
    Machine,
    Missing,
    Scaling,
    Serialisation,
    Shape,
)

# Fewer windows (or openssl runs) than this at either level: no CI.
MIN_FOR_CI = 3
MAX_LEVEL = 1024
# A window lasts at least this long: ten times Python's GIL switch interval
# (5 ms) and longer than the kernel hands a busy CPU to one thread, so every
# worker gets its turns in every window. With --sample-ms 5 windows, two
# threads each missed whole windows (measured on this project's VM).
WINDOW_MIN_MS = 50


# Serialised: per-call time grew by more than this factor times the CPU use,
# at the low end of its CI. Work grows both alike (CPU use up to the CPUs
# there are, then per-call time); a queue grows per-call time N-fold with
# CPU use flat, so at N = 2 it stands 2x apart, clear of this margin.
SERIALISED_MARGIN = 1.25
# Level 1's rate and a per-call rate agree within this much (or within the
# rate's CI).
AGREE_WITHIN = 0.10
# A side waited when its threads waited for a CPU this share of the time
# they ran or were ready to (bridge.analysis.cputime's WAIT_SHARE_HIGH).
WAITED_SHARE = 0.05
# Level 1 kept more than this many CPUs busy: the call worked in more than
# one thread at once.
PARALLEL_CPUS = 1.1
# Waiting explains level 1's gap when it accounts for at least this share of
# it, as ratios go: 1 / (1 - wait share) against median / rate, on a log
# scale. At a load of 13 a TLS 1.2 handshake's thread waited 77% of the time:
# 4.3x against a gap of 5.1x, 90% of it (the rest, the calls' own spread).
WAITS_EXPLAIN = 0.75
# Races per round of a level cell: over its 20 rounds by default, 40 races;
# over --quick's, enough for a CI of the median.
RACES_PER_ROUND = 2


def window_ms(sample_ms: int) -> int:
    return max(sample_ms, WINDOW_MIN_MS)


@dataclass(frozen=True)
class Mode:
    kind: str  # runtime kind
    name: str  # processes | threads | multi
    semantics: str
    noun: str  # what N of them are, for labels
    one: str  # ... and one of them

    def label(self, call_label: str, n: int) -> str:
        if self.name == "multi":
            return call_label.replace("openssl speed", f"openssl speed -multi {n}", 1)
        return f"{call_label} ×{n} {self.noun if n > 1 else self.one}"

    def describe(self, base_semantics: str) -> str:
        return f"{base_semantics}; {self.semantics}"


ERLANG_PROCESSES = Mode(
    RuntimeKind.ERLANG,
    "processes",
    "N Erlang processes in one node, released together by a barrier; the node's"
    " schedulers share them",
    "processes",
    "process",
)
PYTHON_THREADS = Mode(
    RuntimeKind.PYTHON,
    "threads",
    "N threads in one interpreter: they share the GIL, which hashlib releases only"
    " for inputs of 2048 bytes or more",
    "threads",
    "thread",
)
PYTHON_PROCESSES = Mode(
    RuntimeKind.PYTHON,
    "processes",
    "N worker processes, one interpreter each, started together on the shared CLOCK_MONOTONIC",
    "processes",
    "process",
)
OPENSSL_MULTI = Mode(
    RuntimeKind.OPENSSL,
    "multi",
    "openssl speed -multi N: N forked processes, each counting its own calls for the"
    " same seconds; the counts are summed",
    "processes",
    "process",
)
OPENSSL_CLIENTS = Mode(
    RuntimeKind.OPENSSL,
    "clients",
    "N openssl s_time -new processes at once against one openssl s_server, each counting"
    " its connections for the same seconds; the counts are summed",
    "clients",
    "client",
)
MODES: dict[str, tuple[Mode, ...]] = {
    RuntimeKind.ERLANG: (ERLANG_PROCESSES,),
    RuntimeKind.PYTHON: (PYTHON_THREADS, PYTHON_PROCESSES),
    RuntimeKind.OPENSSL: (OPENSSL_MULTI, OPENSSL_CLIENTS),
}


def mode(kind: str, name: str) -> Mode | None:
    return next((m for m in MODES.get(kind, ()) if m.name == name), None)


def modes_for(kind: str, sc: Scenario) -> tuple[Mode, ...]:
    """How a runtime kind runs a scenario's calls at levels: openssl's TLS
    handshakes as N s_time clients against one s_server, its other calls as
    speed -multi."""
    if kind == RuntimeKind.OPENSSL:
        return (OPENSSL_CLIENTS,) if isinstance(sc, TlsScenario) else (OPENSSL_MULTI,)
    return MODES.get(kind, ())


def runs_levels(sc: Scenario) -> bool:
    """File digests read a whole file per call; they are not run at levels."""
    return not isinstance(sc, FileDigestScenario)


def oversubscribed(level: int, machine: Machine) -> bool:
    cpus = machine.cpus
    return cpus is not None and level > cpus


def machine_findings(
    levels: Iterable[int], machine: Machine, schedulers: int | None, sessions: bool = False
) -> list[Reason]:
    """What the machine makes of the levels: oversubscribed levels, SMT
    siblings, --schedulers above the CPUs, a machine busy as the run started,
    and Linux's autogroup on it where the run had worker processes each in a
    session of its own (`sessions`: Python's processes mode)."""
    out = []
    cpus = machine.cpus
    over = tuple(n for n in levels if cpus is not None and n > cpus)
    if over:
        out.append(reason(Why.OVERSUBSCRIBED, levels=over, cpus=cpus))
    if machine.smt_siblings and machine.smt_siblings > 1:
        out.append(
            reason(Why.SMT_LEVELS, siblings=machine.smt_siblings, cores=machine.physical_cores)
        )
    if schedulers is not None and cpus is not None and schedulers > cpus:
        out.append(reason(Why.SCHEDULERS_OVER, schedulers=schedulers, cpus=cpus))
    load = machine.loadavg_start
    busy = load is not None and cpus is not None and load[0] > cpus / 2
    if busy:
        assert load is not None
        out.append(reason(Why.BUSY_START, load=load[0], cpus=cpus))
    # Measured on this project's VM under load: one or two spinning processes
    # in one session did the same work in a second; in two sessions, twice as
    # much (bridge.view.words says what that does to the modes).
    if busy and machine.autogroup and sessions:
        out.append(reason(Why.AUTOGROUP))
    return out


def output_ok(sc: Scenario, call: calls.Call, data: Inputs, output: bytes) -> bool | None:
    """A level's output checked as the call's own output is (bridge.analysis.interop)."""
    if not output:
        return None
    if call.check is calls.Check.ACCEPTS:
        return output == b"\x01"
    if call.check is calls.Check.SIGNATURE and isinstance(sc, SignatureScenario):
        return ec.verify(sc.curve, data.pub, sc.digest, data.data, output)
    if call.check is calls.Check.NEGOTIATED and isinstance(sc, TlsScenario):
        # What a handshake negotiated: protocol, suite, group, certificates.
        return negotiated.agrees(output, interop.tls_expected(sc, call, data))
    # A scenario's reference bytes, or a per-call kind's own.
    expected = interop.reference(sc, data)
    if expected is None and call.check is calls.Check.REFERENCE:
        expected = interop.expected(sc, call, data)
    return None if expected is None else output == expected


def scaling(cells: Sequence[LevelResult]) -> list[Scaling]:
    """throughput(N) / throughput(1) per group of cells, with a bootstrap 95%
    CI over the windows (the same method `bridge compare` uses)."""
    out = []
    for by_level in _groups(cells).values():
        base = by_level.get(1)
        if base is None:
            continue
        for n, cell in sorted(by_level.items()):
            ratio, ci = ratio_ci(base, cell)
            out.append(
                Scaling(
                    scenario=cell.scenario,
                    runtime=cell.runtime,
                    call_id=cell.call_id,
                    mode=cell.mode,
                    size=cell.size,
                    hw=cell.hw,
                    level=n,
                    scaling=ratio,
                    ci95=ci,
                    efficiency=ratio / n,
                    oversubscribed=cell.oversubscribed,
                )
            )
    return out


def _groups(cells: Sequence[LevelResult]) -> dict[tuple, dict[int, LevelResult]]:
    """The cells with figures that differ only by level, by level."""
    groups: dict[tuple, dict[int, LevelResult]] = {}
    for c in cells:
        if c.ok and c.ops() is not None:
            groups.setdefault(c.group, {})[c.level] = c
    return groups


def ratio_ci(a: LevelResult, b: LevelResult) -> tuple[float, tuple[float, float] | None]:
    """throughput(b) / throughput(a), with a CI when both have enough windows."""
    xa, xb = a.window_ops(), b.window_ops()
    if len(xa) >= MIN_FOR_CI and len(xb) >= MIN_FOR_CI:
        ratio, ci = stats.relative_ci(xa, xb)
        return ratio, ci
    sa, sb = a.ops(), b.ops()
    assert sa is not None and sb is not None
    return sb.median / sa.median, None


def serialisation(cells: Sequence[LevelResult]) -> list[Serialisation]:
    """For each level above 1 of each group: per-call time against CPU use."""
    out = []
    for by_level in _groups(cells).values():
        base = by_level.get(1)
        if base is None:
            continue
        for n, cell in sorted(by_level.items()):
            if n > 1:
                out.append(_shape(base, cell))
    return out


def _shape(base: LevelResult, cell: LevelResult) -> Serialisation:
    n = cell.level
    scale, ci = ratio_ci(base, cell)
    per_call = n / scale if scale > 0 else None
    per_ci = (n / ci[1], n / ci[0]) if ci and ci[0] > 0 else None
    u1, un = base.cpu_use(), cell.cpu_use()
    s1, sn = base.slowest(), cell.slowest()
    why = []
    if u1 is None or un is None or u1.cpus <= 0:
        why.append(Missing.NO_CPU_USE)
    if per_ci is None:
        why.append(Missing.NO_CI)
    cpus = (u1.cpus, un.cpus) if u1 is not None and un is not None else None
    cpu_ratio = cpus[1] / cpus[0] if cpus is not None and cpus[0] > 0 else None
    if why or per_ci is None or cpu_ratio is None:
        shape = Shape.UNKNOWN
    elif per_ci[0] > cpu_ratio * SERIALISED_MARGIN:
        shape = Shape.SERIALISED
    elif per_ci[1] <= cpu_ratio * SERIALISED_MARGIN:
        shape = Shape.WORK
    else:  # the CI reaches both sides of the margin
        shape, why = Shape.UNKNOWN, [Missing.WIDE_CI]
    return Serialisation(
        scenario=cell.scenario,
        runtime=cell.runtime,
        call_id=cell.call_id,
        mode=cell.mode,
        size=cell.size,
        hw=cell.hw,
        level=n,
        shape=shape,
        why=tuple(why),
        per_call_ratio=per_call,
        per_call_ci95=per_ci,
        cpus=cpus,
        cpu_ratio=cpu_ratio,
        slowest_ratio=sn.median_ns / s1.median_ns if s1 and sn and s1.median_ns > 0 else None,
    )


def level_one(
    cells: Sequence[LevelResult], results: Sequence[schema.Result], machine: Machine
) -> list[LevelOne]:
    """Each level-1 cell beside the per-call cell of its call, size and hw."""
    per_call = {(r.scenario, r.runtime, r.call_id, r.size, r.hw): r for r in results if r.ok}
    out = []
    for c in cells:
        r = per_call.get((c.scenario, c.runtime, c.call_id, c.size, c.hw))
        s = c.ops()
        if c.level != 1 or not c.ok or c.imported or r is None or s is None or not r.samples:
            continue
        out.append(_level_one(c, s, r, machine))
    return out


def _level_one(c: LevelResult, s: stats.Summary, r: schema.Result, machine: Machine) -> LevelOne:
    median_ops = 1e9 / r.median()
    calls = sum(r.loops_of(i) for i in range(len(r.samples)))
    mean_ops = calls * 1e9 / sum(r.samples)
    ci = s.ci95 if c.raw.windows and s.n >= MIN_FOR_CI else None
    use = c.cpu_use()
    level_wait = use.wait_share if use else None
    cell_wait = _cell_wait(r)
    ops = s.median

    def agrees(rate: float) -> bool:
        within_ci = ci is not None and ci[0] <= rate <= ci[1]
        return within_ci or abs(ops / rate - 1) <= AGREE_WITHIN

    if agrees(median_ops):
        gap = Gap.AGREE
    elif ops < median_ops and _waits_explain(ops / median_ops, level_wait):
        gap = Gap.WAITED
    elif ops < median_ops and agrees(mean_ops) and not _waited(level_wait, cell_wait):
        gap = Gap.TAIL
    elif ops > median_ops and machine.pinned and use is not None and use.cpus > PARALLEL_CPUS:
        gap = Gap.PINNED
    elif ci is None:
        gap = Gap.FEW
    else:
        gap = Gap.UNEXPLAINED
    return LevelOne(
        scenario=c.scenario,
        runtime=c.runtime,
        call_id=c.call_id,
        mode=c.mode,
        size=c.size,
        hw=c.hw,
        ops=ops,
        ops_ci95=ci,
        median_ops=median_ops,
        mean_ops=mean_ops,
        ratio=ops / median_ops,
        gap=gap,
        level_wait_share=level_wait,
        cell_wait_share=cell_wait,
        cpus=use.cpus if use else None,
    )


def _waits_explain(ratio: float, wait_share: float | None) -> bool:
    """Level 1 at `ratio` of the median: did its waits for a CPU make most of that?"""
    if wait_share is None or wait_share < WAITED_SHARE or not 0 < ratio < 1:
        return False
    if wait_share >= 1:
        return True
    return -math.log(1 - wait_share) >= WAITS_EXPLAIN * -math.log(ratio)


def _waited(*shares: float | None) -> bool:
    return any(w is not None and w >= WAITED_SHARE for w in shares)


def _cell_wait(r: schema.Result) -> float | None:
    """Of the per-call cell's sample windows, the share spent waiting for a
    CPU (worker cells: the measuring thread's run-queue wait)."""
    pairs = [(w, t) for w, t in zip(r.sample_wait_ns, r.samples, strict=False) if w >= 0]
    total = sum(t for _, t in pairs)
    if len(r.sample_wait_ns) != len(r.samples) or not total or r.sample_user_ns:
        return None
    return min(1.0, sum(w for w, _ in pairs) / total)


def block(
    levels: Sequence[int],
    window_ms: int | None,
    schedulers: int | None,
    machine: Machine,
    cells: Sequence[LevelResult],
) -> Concurrency:
    """The measured block: the levels, how they ran, the cells. What they
    say is `with_findings`'s (bridge.analysis.findings computes it)."""
    return Concurrency(
        levels=tuple(levels),
        window_ms=window_ms,
        schedulers=schedulers,
        machine=machine,
        cells=tuple(cells),
    )


def with_findings(
    measured: Concurrency,
    results: Sequence[schema.Result] = (),
    kinds: Mapping[str, str] | None = None,
) -> Concurrency:
    """The block with what its cells say: scaling, serialisation, level 1
    beside `results` (the run's per-call cells), and the findings. `kinds`:
    each runtime's kind (the report's runtimes)."""
    cells = measured.cells
    sessions = any(
        c.mode == PYTHON_PROCESSES.name and (kinds or {}).get(c.runtime) == RuntimeKind.PYTHON
        for c in cells
    )
    m = measured
    said = machine_findings(m.levels, m.machine, m.schedulers, sessions)
    return dataclasses.replace(
        measured,
        scaling=tuple(scaling(cells)),
        findings=tuple([*said, *dropped(cells)]),
        serialisation=tuple(serialisation(cells)),
        level_one=tuple(level_one(cells, results, measured.machine)),
    )


def dropped(cells: Sequence[LevelResult]) -> list[Reason]:
    """Cells that lost more than a tenth of their windows: a worker was off
    the CPU for a whole window, so the figures rest on fewer windows."""
    out = []
    for c in cells:
        n = len(c.raw.windows)
        if n and c.dropped_windows * 10 > n:
            out.append(
                reason(
                    Why.WINDOWS_DROPPED,
                    runtime=c.runtime,
                    call_id=c.call_id,
                    mode=c.mode,
                    size=c.size,
                    level=c.level,
                    dropped=c.dropped_windows,
                    windows=n,
                )
            )
    return out


def parse_levels(text: str) -> tuple[int, ...]:
    """--concurrency 1,2,4: whole numbers from 1 to MAX_LEVEL. Level 1 is
    always measured, since scaling is relative to it. Raises ValueError with
    the offending piece."""
    out: set[int] = {1}
    for piece in text.split(","):
        piece = piece.strip()
        n = plain.whole_number(piece)
        if n is None or not 1 <= n <= MAX_LEVEL:
            raise ValueError(piece)
        out.add(n)
    return tuple(sorted(out))
