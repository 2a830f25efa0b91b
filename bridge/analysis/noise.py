"""The machine during a run, shown rather than hidden.

A snapshot is taken before the runtimes start and another after they have
stopped (and been reaped). Between the two:

- load average (/proc/loadavg), before and after;
- where the CPU time went (/proc/stat): busy, stolen by the hypervisor
  (steal: another guest on the host), waiting for I/O;
- bridge's own CPU time (getrusage of the driver and its reaped children:
  workers, openssl runs, erlc), so that what remains of the busy time is
  other processes' (`others_cpus`), and how many of them were busy and how
  busy: every process alive at both snapshots, from /proc/PID/stat. The
  report keeps their count and CPU shares (`busy_others`), never their names
  or pids: those are other users', and reports travel. The names stay in
  memory (`Usage.busy_processes`) for what is shown live (`bridge run -v`,
  `bridge env`); the driver's own time alone is `driver_cpus` (it sleeps in
  select while a worker measures);
- per cell, bimodal or drifting samples (bridge.analysis.stability), and a
  cell whose figure depends on the process that measured it: when its
  samples came from several worker processes and the share of its median's
  variance that lies between them (bridge.stats.process_split) dominates.

`findings` says what matters of these as reasons with their figures
(bridge.report.findings; bridge.view.words words them); the frequency
governor and SMT siblings come from the environment block
(bridge.system.environment). The parsers and `findings` are pure and tested on
canned /proc text; `snapshot` is the only part that reads the machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge import stats
from bridge.analysis import stability
from bridge.hw import verdicts
from bridge.report import schema
from bridge.report.context import Environment
from bridge.report.findings import Reason, Why, reason

# When others' CPU use is worth a warning: a quarter of a CPU on a small
# machine (bridge measures on one CPU and the rest shares caches and the
# scheduler with it), a tenth of the machine on a large one.
OTHERS_MIN_CPUS = 0.25
OTHERS_MIN_SHARE = 0.10
STEAL_MIN = 0.02  # of all CPU time
# A process shown by name: at least this share of one CPU.
BUSY_PROCESS_MIN = 0.10
BUSY_PROCESSES_SHOWN = 5
# A cell depends on the process when over half of its median's variance lies
# between its processes and their medians lie at least 1% apart.
PROCESS_SHARE_MIN = 0.5
PROCESS_SPREAD_MIN = 0.01


@dataclass(frozen=True)
class CpuTimes:
    """One line of /proc/stat, in clock ticks."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int

    @property
    def busy(self) -> int:
        return self.user + self.nice + self.system + self.irq + self.softirq

    @property
    def total(self) -> int:
        return self.busy + self.idle + self.iowait + self.steal

    def minus(self, other: CpuTimes) -> CpuTimes:
        return CpuTimes(*(a - b for a, b in zip(self._values(), other._values(), strict=True)))

    def _values(self) -> tuple[int, ...]:
        return (
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        )


def parse_stat(text: str) -> dict[str, CpuTimes]:
    """The `cpu` (all CPUs) and `cpuN` lines of /proc/stat. Kernels before
    2.6.11 have no steal column: it reads as 0."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("cpu"):
            values = [int(v) for v in parts[1:9]] + [0] * (8 - len(parts[1:9]))
            out[parts[0]] = CpuTimes(*values)
    return out


def parse_loadavg(text: str) -> tuple[float, float, float]:
    one, five, fifteen = (float(v) for v in text.split()[:3])
    return one, five, fifteen


def parse_pid_stat(text: str) -> tuple[str, int]:
    """(name, utime + stime in ticks) from /proc/PID/stat. The name is in
    parentheses and may itself hold spaces and parentheses."""
    head, _, tail = text.rpartition(")")
    name = head.partition("(")[2]
    fields = tail.split()
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    return name, int(fields[11]) + int(fields[12])


@dataclass(frozen=True)
class Snapshot:
    wall: float
    stat: CpuTimes | None = None
    load: tuple[float, float, float] | None = None
    processes: Mapping[int, tuple[str, int]] = field(default_factory=dict)
    own_cpu_s: float = 0.0  # the driver and its reaped children
    driver_cpu_s: float = 0.0  # the driver alone
    own_pid: int = 0


def snapshot(proc: Path = Path("/proc")) -> Snapshot:
    """The machine now. Whatever cannot be read (not Linux, a locked-down
    /proc) is left out. bridge's own CPU counts its children still running
    (the workers, in the middle of a run) beside the reaped ones, so that a
    snapshot taken while they run does not count them as other processes."""
    stat = load = None
    with contextlib.suppress(OSError, ValueError):
        stat = parse_stat((proc / "stat").read_text()).get("cpu")
    with contextlib.suppress(OSError, ValueError):
        load = parse_loadavg((proc / "loadavg").read_text())
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    processes, parents = _processes(proc)
    me = os.getpid()
    running = sum(processes[pid][1] for pid in _descendants(me, parents)) / _ticks_per_s()
    return Snapshot(
        wall=time.monotonic(),
        stat=stat,
        load=load,
        processes=processes,
        own_cpu_s=own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + running,
        driver_cpu_s=own.ru_utime + own.ru_stime,
        own_pid=me,
    )


def _processes(proc: Path) -> tuple[dict[int, tuple[str, int]], dict[int, int]]:
    """Each process's (name, CPU ticks), and its parent."""
    found: dict[int, tuple[str, int]] = {}
    parents: dict[int, int] = {}
    try:
        entries = list(proc.iterdir())
    except OSError:
        return found, parents
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
            found[int(entry.name)] = parse_pid_stat(text)
            parents[int(entry.name)] = int(text.rpartition(")")[2].split()[1])  # field 4
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or unreadable
    return found, parents


def _descendants(pid: int, parents: Mapping[int, int]) -> set[int]:
    """The processes below `pid` (children, theirs...), as /proc saw them."""
    below: dict[int, list[int]] = {}
    for child, parent in parents.items():
        below.setdefault(parent, []).append(child)
    out: set[int] = set()
    todo = list(below.get(pid, ()))
    while todo:
        child = todo.pop()
        if child not in out:
            out.add(child)
            todo += below.get(child, ())
    return out


@dataclass(frozen=True)
class OtherProcess:
    """A process not bridge's that used a CPU between the snapshots: `cpu` is
    its average share of one CPU. Shown live, never kept in a report."""

    pid: int
    name: str
    cpu: float


@dataclass(frozen=True)
class Usage:
    """What happened between two snapshots."""

    seconds: float
    cpus: int | None
    load_before: tuple[float, float, float] | None
    load_after: tuple[float, float, float] | None
    busy: float | None
    steal: float | None
    iowait: float | None
    bridge_cpus: float | None
    others_cpus: float | None
    # The busiest other processes (at most BUSY_PROCESSES_SHOWN), of
    # `busy_count` that used at least BUSY_PROCESS_MIN of a CPU.
    busy_processes: tuple[OtherProcess, ...]
    driver_cpus: float | None = None
    busy_count: int | None = None  # None: counted as busy_processes (a fake's usage)

    @property
    def busy_others(self) -> schema.BusyOthers:
        """What a report keeps of them: how many, and their shares."""
        count = len(self.busy_processes) if self.busy_count is None else self.busy_count
        return schema.BusyOthers(count, tuple(p.cpu for p in self.busy_processes))


def usage(
    before: Snapshot, after: Snapshot, cpus: int | None, ticks_per_s: int | None = None
) -> Usage:
    seconds = max(after.wall - before.wall, 0.0)
    hz = ticks_per_s or _ticks_per_s()
    busy = steal = iowait = bridge = others = driver = None
    busiest = _busy_processes(before, after, seconds, hz)
    if before.stat and after.stat and seconds > 0:
        delta = after.stat.minus(before.stat)
        if delta.total > 0:
            busy = delta.busy / delta.total
            steal = delta.steal / delta.total
            iowait = delta.iowait / delta.total
            bridge = max(after.own_cpu_s - before.own_cpu_s, 0.0) / seconds
            driver = max(after.driver_cpu_s - before.driver_cpu_s, 0.0) / seconds
            busy_cpus = delta.busy / hz / seconds
            others = max(busy_cpus - bridge, 0.0)
    return Usage(
        seconds=seconds,
        cpus=cpus,
        load_before=before.load,
        load_after=after.load,
        busy=busy,
        steal=steal,
        iowait=iowait,
        bridge_cpus=bridge,
        others_cpus=others,
        busy_processes=busiest[:BUSY_PROCESSES_SHOWN],
        driver_cpus=driver,
        busy_count=len(busiest),
    )


def _busy_processes(
    before: Snapshot, after: Snapshot, seconds: float, hz: int
) -> tuple[OtherProcess, ...]:
    """Processes alive at both snapshots (bridge's workers were not yet) that
    used at least BUSY_PROCESS_MIN of a CPU in between, busiest first."""
    if seconds <= 0:
        return ()
    found = []
    for pid, (name, ticks) in after.processes.items():
        if pid == after.own_pid or pid not in before.processes:
            continue
        then_name, then_ticks = before.processes[pid]
        if then_name != name:
            continue  # the pid was reused
        share = (ticks - then_ticks) / hz / seconds
        if share >= BUSY_PROCESS_MIN:
            found.append(OtherProcess(pid, name, round(share, 3)))
    found.sort(key=lambda p: -p.cpu)
    return tuple(found)


def _ticks_per_s() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, AttributeError):
        return 100


# -- the measured block ---------------------------------------------------------


def measured(use: Usage, windows: Mapping[str, Usage] | None = None) -> schema.Noise:
    """The noise block's figures: the machine during the whole run, and up to
    the end of each scenario (`windows`). What they say comes later
    (`findings`, from bridge.analysis.findings)."""
    return schema.Noise(
        seconds=round(use.seconds, 3),
        cpus=use.cpus,
        load_before=use.load_before,
        load_after=use.load_after,
        busy=_round(use.busy),
        steal=_round(use.steal),
        iowait=_round(use.iowait),
        bridge_cpus=_round(use.bridge_cpus),
        driver_cpus=_round(use.driver_cpus),
        others_cpus=_round(use.others_cpus),
        busy_others=use.busy_others,
        windows=tuple(
            schema.NoiseWindow(
                scenario=name,
                seconds=round(w.seconds, 3),
                others_cpus=_round(w.others_cpus),
                steal=_round(w.steal),
                load=w.load_after[0] if w.load_after else None,
            )
            for name, w in (windows or {}).items()
        ),
    )


def _busy_machine(others: float | None, cpus: int) -> bool:
    return others is not None and others >= max(OTHERS_MIN_CPUS, OTHERS_MIN_SHARE * cpus)


def busy_machine(use: Usage, environment: Environment) -> bool:
    """Did other processes use enough CPU to be said (and named live, -v)?"""
    return _busy_machine(use.others_cpus, use.cpus or environment.cpu_count or 1)


def busy(block: schema.Noise | None, scenario: str, environment: Environment) -> tuple[Reason, ...]:
    """What kept the machine busy up to the end of `scenario` (its window;
    the whole run where the block has none), as the hardware verdicts'
    reasons: other processes on a quarter of a CPU or a tenth of the machine
    (BUSY_MACHINE), steal (BUSY_HOST); () on a quiet machine or when unknown."""
    if block is None:
        return ()
    window = block.window(scenario)
    others, steal = (
        (window.others_cpus, window.steal) if window else (block.others_cpus, block.steal)
    )
    cpus = block.cpus or environment.cpu_count or 1
    needs = round(verdicts.BUSY_NEEDS, 4)
    out = []
    if _busy_machine(others, cpus):
        out.append(reason(Why.BUSY_MACHINE, others_cpus=others, cpus=cpus, needs=needs))
    if steal is not None and steal >= STEAL_MIN:
        out.append(reason(Why.BUSY_HOST, steal=steal, needs=needs))
    return tuple(out)


# -- cells -------------------------------------------------------------------


def cell_shapes(results: Iterable[schema.Result]) -> tuple[schema.CellShape, ...]:
    """Cells whose samples are bimodal or drift (bridge.analysis.stability),
    or whose figure depends on the process that measured it, with the
    figures that say how."""
    out: list[schema.CellShape] = []
    for r in results:
        if not r.ok or r.imported or not r.samples:
            continue
        two = two_speed_shape(r)
        out += [two] if two is not None else []
        trend = stability.drift(r.per_op_ns())
        if trend is not None:
            out.append(
                schema.CellShape(*_key(r), "drift", round(trend.z, 2), shift=round(trend.shift, 4))
            )
        process = process_shape(r)
        out += [process] if process is not None else []
    return tuple(out)


def _key(r: schema.Result) -> tuple:
    return (r.scenario, r.runtime, r.call_id, r.size, r.hw)


def two_speed_shape(r: schema.Result) -> schema.CellShape | None:
    """A cell whose samples sit at two levels (bridge.stats.clusters, else
    bridge.analysis.stability.bimodal), with the two clusters, or None."""
    values = r.per_op_ns()
    two = stats.clusters(values)
    if two is not None:
        clusters = tuple(
            schema.SampleCluster(round(c.share, 4), round(c.level, 1), c.n)
            for c in (two.low, two.high)
        )
        return schema.CellShape(*_key(r), "bimodal", round(two.ashman_d, 2), clusters=clusters)
    split = stability.bimodal(values)
    if split is None:
        return None
    n = split.low_n + split.high_n
    clusters = (
        schema.SampleCluster(round(split.low_n / n, 4), round(split.low_mean, 1), split.low_n),
        schema.SampleCluster(round(split.high_n / n, 4), round(split.high_mean, 1), split.high_n),
    )
    return schema.CellShape(*_key(r), "bimodal", round(split.ashman_d, 2), clusters=clusters)


def process_shape(r: schema.Result) -> schema.CellShape | None:
    """A cell whose figure depends on the worker process that measured it
    (shape "process", statistic: the between-process share of its median's
    variance), or None."""
    split = r.process_split()
    if split is None or split.share < PROCESS_SHARE_MIN or split.spread < PROCESS_SPREAD_MIN:
        return None
    return schema.CellShape(
        *_key(r),
        "process",
        round(split.share, 3),
        spread=round(split.spread, 4),
        processes=split.processes,
    )


def _cell(c: schema.CellShape | schema.CellCost, unit: str) -> dict[str, Any]:
    """The parameters that name a cell in a finding."""
    return {
        "scenario": c.scenario,
        "runtime": c.runtime,
        "call_id": c.call_id,
        "size": c.size,
        "hw": c.hw.value,
        "unit": unit,
    }


def cell_reason(c: schema.CellShape, unit: str = verdicts.BYTES) -> Reason | None:
    """What one cell's shape says, with its figures; None for a shape from a
    report that kept only its words (`detail`)."""
    where = _cell(c, unit)
    if c.shape == "bimodal" and len(c.clusters) == 2:
        low, high = c.clusters
        return reason(
            Why.CELL_TWO_SPEEDS,
            **where,
            low_share=low.share,
            low_ns=low.ns,
            high_ns=high.ns,
            d=c.statistic,
        )
    if c.shape == "drift" and c.shift is not None:
        return reason(Why.CELL_DRIFT, **where, shift=c.shift, z=c.statistic)
    if c.shape == "process" and c.spread is not None and c.processes is not None:
        return reason(
            Why.CELL_BY_PROCESS,
            **where,
            spread=c.spread,
            processes=c.processes,
            share=c.statistic,
        )
    return None


# -- findings ------------------------------------------------------------------


def machine_findings(block: schema.Noise, environment: Environment) -> list[Reason]:
    """What the machine did that a reader must know: other processes busy,
    steal, a governor that moves the clock, SMT siblings on a busy machine."""
    out = []
    cpus = block.cpus or environment.cpu_count or 1
    others = block.others_cpus
    busy_machine = _busy_machine(others, cpus)
    # How many others were busy and their shares, never who: an older
    # report's names and pids are counted the same way.
    counted = block.busy_others
    if counted is None and block.busy_processes:
        counted = schema.BusyOthers(
            len(block.busy_processes), tuple(p.cpu for p in block.busy_processes)
        )
    if busy_machine:
        out.append(
            reason(
                Why.OTHERS_BUSY,
                others_cpus=others,
                cpus=cpus,
                load=block.load_after[0] if block.load_after else None,
                busy_count=counted.count if counted else 0,
                shares=counted.cpu if counted else (),
            )
        )
    if block.steal is not None and block.steal >= STEAL_MIN:
        out.append(reason(Why.STEAL, steal=block.steal))
    governor = environment.cpu_governor
    if governor and governor != "performance":
        out.append(reason(Why.GOVERNOR, governor=str(governor)))
    siblings = environment.smt_siblings or ()
    if siblings and busy_machine:
        out.append(reason(Why.SMT, siblings=tuple(tuple(g) for g in siblings[:4])))
    return out


def cell_findings(
    cells: Sequence[schema.CellShape], size_units: Mapping[str, str] | None = None
) -> list[Reason]:
    """The cells' shapes: one finding per cell, or one for all the cells of
    a shape when more than MANY_CELLS have it (a machine-wide effect).
    `size_units`: what each scenario's sizes count (bytes where not given)."""
    size_units = size_units or {}
    by_shape: dict[str, list[schema.CellShape]] = {}
    for c in cells:
        by_shape.setdefault(c.shape, []).append(c)
    # A two-speed host also makes the level drift: said in the same finding.
    both = all(len(by_shape.get(k, ())) > MANY_CELLS for k in ("bimodal", "drift"))
    out = []
    for shape, group in by_shape.items():
        if both and shape == "drift":
            continue
        if len(group) > MANY_CELLS:
            out.append(_many(shape, group, by_shape.get("drift", ()) if both else ()))
            continue
        for c in group:
            found = cell_reason(c, size_units.get(c.scenario, verdicts.BYTES))
            if found is not None:
                out.append(found)
    return out


# More cells of one shape than this are one finding, not one per cell: on a
# two-speed host every cell is bimodal, and a sentence each buried the answer.
MANY_CELLS = 2


def _many(
    shape: str, group: Sequence[schema.CellShape], drifting: Sequence[schema.CellShape] = ()
) -> Reason:
    """One finding for many cells of one shape: which (runtime, call, hw
    modes), and the range of what was seen (`drifting`: the cells whose level
    also drifted, said with two speeds); each cell's figures stay in the
    report (noise.cells)."""
    calls: dict[tuple[str, str], list[str]] = {}
    for c in group:
        calls.setdefault((c.runtime, c.call_id), []).append(c.hw.value)
    named = tuple((rt, cid, tuple(dict.fromkeys(hws))) for (rt, cid), hws in calls.items())
    n = len(group)
    if shape == "bimodal":
        two = [c for c in group if len(c.clusters) == 2]
        gaps = [c.clusters[1].ns / c.clusters[0].ns for c in two] or [0.0]
        fast = [c.clusters[0].share for c in two] or [0.0]
        zs = [abs(c.statistic) for c in drifting] or [0.0]
        return reason(
            Why.CELLS_TWO_SPEEDS,
            cells=n,
            calls=named,
            gap_lo=round(min(gaps), 4),
            gap_hi=round(max(gaps), 4),
            fast_lo=min(fast),
            fast_hi=max(fast),
            drifting=len(drifting),
            z_lo=min(zs),
            z_hi=max(zs),
        )
    if shape == "drift":
        zs = [abs(c.statistic) for c in group]
        return reason(Why.CELLS_DRIFT, cells=n, calls=named, z_lo=min(zs), z_hi=max(zs))
    return reason(Why.CELLS_BY_PROCESS, cells=n, calls=named)


def noisy(block: schema.Noise, cells: Sequence[schema.CellShape], cpus: int) -> bool:
    """Was the run noisy enough to say what to do about it (NOISY_RUN)?
    A process effect is no fault of the machine's: its remedy is in its own
    finding."""
    shaped = [c for c in cells if c.shape != "process"]
    return _busy_machine(block.others_cpus or 0.0, cpus) or bool(shaped)


def what_to_do() -> Reason:
    """What to do about a noisy run: a quieter machine, a pinned CPU,
    --until-stable (NOISY_RUN)."""
    return reason(Why.NOISY_RUN)


def with_findings(
    block: schema.Noise,
    cells: tuple[schema.CellShape, ...],
    findings: Sequence[Reason],
) -> schema.Noise:
    """The measured block with the cells' shapes and what it all says."""
    return dataclasses.replace(block, cells=cells, findings=tuple(findings))


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
