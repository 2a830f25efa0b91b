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

`warnings` turns these into sentences when they matter; the frequency
governor and SMT siblings come from the environment block
(bridge.system.environment). The parsers and `warnings` are pure and tested on
canned /proc text; `snapshot` is the only part that reads the machine.
"""

from __future__ import annotations

import contextlib
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
_COUNTS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


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


# -- cells -------------------------------------------------------------------


def cell_shapes(results: Iterable[schema.Result]) -> tuple[schema.CellShape, ...]:
    """Cells whose samples are bimodal or drift (bridge.analysis.stability)."""
    out = []
    for r in results:
        if not r.ok or r.imported or not r.samples:
            continue
        values = r.per_op_ns()
        key = (r.scenario, r.runtime, r.call_id, r.size, r.hw)
        two = stats.clusters(values)
        split = None if two else stability.bimodal(values)
        if two is not None:
            clusters = tuple(
                schema.SampleCluster(round(c.share, 4), round(c.level, 1), c.n)
                for c in (two.low, two.high)
            )
            detail = f"{two.sentence()} (Ashman's D {two.ashman_d:.1f} on the logarithms)"
            out.append(schema.CellShape(*key, "bimodal", round(two.ashman_d, 2), detail, clusters))
        if split is not None:
            share = split.high_n / (split.low_n + split.high_n)
            detail = (
                f"two clusters: {1 - share:.0%} of the samples near {split.low_mean:,.0f} ns,"
                f" {share:.0%} near {split.high_mean:,.0f} ns (Ashman's D {split.ashman_d:.1f})"
            )
            out.append(schema.CellShape(*key, "bimodal", round(split.ashman_d, 2), detail))
        trend = stability.drift(values)
        if trend is not None:
            detail = (
                f"the level moved {trend.shift:+.1%} from the first third of the samples to"
                f" the last (Spearman z {trend.z:+.1f})"
            )
            out.append(schema.CellShape(*key, "drift", round(trend.z, 2), detail))
        process = process_shape(r)
        if process is not None:
            out.append(process)
    return tuple(out)


def process_shape(r: schema.Result) -> schema.CellShape | None:
    """A cell whose figure depends on the worker process that measured it
    (shape "process", statistic: the between-process share of its median's
    variance), or None."""
    split = r.process_split()
    if split is None or split.share < PROCESS_SHARE_MIN or split.spread < PROCESS_SPREAD_MIN:
        return None
    count = _COUNTS.get(split.processes, str(split.processes))
    detail = (
        f"{split.spread:.1%} between {count} processes"
        f" ({split.share:.0%} of its median's variance; the CI covers it,"
        " --processes N spreads it over more)"
    )
    key = (r.scenario, r.runtime, r.call_id, r.size, r.hw)
    return schema.CellShape(*key, "process", round(split.share, 3), detail)


# -- warnings ----------------------------------------------------------------


def warnings(
    use: Usage,
    cells: Sequence[schema.CellShape],
    environment: Mapping[str, Any],
    size_units: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """`size_units`: what each scenario's sizes count (scenario.size_unit),
    for the cells' wording ("at 1,024 iterations"); bytes where not given."""
    size_units = size_units or {}
    out = []
    cpus = use.cpus or environment.get("cpu_count") or 1
    others = use.others_cpus
    busy = busy_machine(use, environment)
    if busy:
        text = f"other processes used {others:.1f} of {cpus} CPUs during the run"
        if use.load_after is not None:
            text += f" (load average {use.load_after[0]:.1f})"
        if use.busy_processes:
            # Shares only: the names and pids of other users' processes stay
            # out of the report (bridge run -v shows them, live).
            counted = use.busy_others
            shares = ", ".join(f"{cpu:.0%}" for cpu in counted.cpu)
            text += (
                f"; {counted.count} of them over {BUSY_PROCESS_MIN:.0%} of a CPU,"
                f" the busiest at {shares}"
            )
        out.append(text + ": they share the CPUs and caches with the measurement")
    if use.steal is not None and use.steal >= STEAL_MIN:
        out.append(
            f"the hypervisor gave {use.steal:.0%} of this machine's CPU time to other"
            " guests (steal): numbers are slower and spread wider than on a quiet host"
        )
    governor = environment.get("cpu_governor")
    if governor and governor != "performance":
        out.append(
            f"CPU frequency governor '{governor}': the clock changes with load, so the"
            " numbers can drift; 'performance' holds it steady"
        )
    siblings = environment.get("smt_siblings") or []
    if siblings and busy:
        pairs = "; ".join(",".join(map(str, group)) for group in siblings[:4])
        out.append(
            f"SMT: CPUs {pairs} share a core, so a busy process on a sibling slows the"
            " measured runtime"
        )
    by_shape: dict[str, list[schema.CellShape]] = {}
    for c in cells:
        by_shape.setdefault(c.shape, []).append(c)
    # A two-speed host also makes the level drift: said in the same sentence.
    both = all(len(by_shape.get(k, ())) > MANY_CELLS for k in ("bimodal", "drift"))
    for shape, group in by_shape.items():
        if both and shape == "drift":
            continue
        if len(group) > MANY_CELLS:  # a machine-wide effect: one sentence, not one per cell
            out.append(_many(shape, group, by_shape.get("drift", ()) if both else ()))
            continue
        for c in group:
            at = verdicts.at(c.size, size_units.get(c.scenario, verdicts.BYTES), brief=True)
            where = f"{c.runtime} {c.call_id} {at} (hw {c.hw})"
            if c.shape == "process":
                out.append(f"{where}: this cell depends on the process: {c.detail}")
                continue
            what = "bimodal" if c.shape == "bimodal" else "drifting"
            out.append(f"{where}: {what} samples, {c.detail}")
    return tuple(out)


# More cells of one shape than this are said in one sentence: on a two-speed
# host every cell is bimodal, and a sentence each buried the answer.
MANY_CELLS = 2


def _many(
    shape: str, group: Sequence[schema.CellShape], drifting: Sequence[schema.CellShape] = ()
) -> str:
    """One sentence for many cells of one shape: which (runtime, call, hw
    modes), and the range of what was seen; each cell's figures stay in the
    report (noise.cells)."""
    calls: dict[tuple[str, str], list[str]] = {}
    for c in group:
        calls.setdefault((c.runtime, c.call_id), []).append(str(c.hw))
    names = "; ".join(
        f"{runtime} {call_id} (hw {', '.join(dict.fromkeys(hws))})"
        for (runtime, call_id), hws in calls.items()
    )
    n = len(group)
    if shape == "bimodal":
        gaps = [c.clusters[1].ns / c.clusters[0].ns for c in group if len(c.clusters) == 2]
        fast = [c.clusters[0].share for c in group if len(c.clusters) == 2]
        figures = (
            f": a fast and a slow level {min(gaps):.2f}-{max(gaps):.2f}× apart, the fast one"
            f" {min(fast):.0%}-{max(fast):.0%} of the samples"
            if gaps
            else ""
        )
        drift = ""
        if drifting:
            zs = [abs(c.statistic) for c in drifting]
            drift = (
                f"; in {len(drifting)} cells the level also drifted within the run (Spearman |z|"
                f" {min(zs):.1f}-{max(zs):.1f})"
            )
        return (
            f"two speeds in {n} cells ({names}){figures}{drift}: the host (a busy sibling thread"
            " or a frequency state), not the code; the median of such a cell depends on the"
            " share of its samples each level caught, and a rerun can land elsewhere;"
            " hardware verdicts compare the twins round by round, at the same speed"
        )
    if shape == "drift":
        zs = [abs(c.statistic) for c in group]
        return (
            f"drifting samples in {n} cells ({names}): the level moved between the first and"
            f" the last third of the samples (Spearman |z| {min(zs):.1f}-{max(zs):.1f})"
        )
    return f"{n} cells depend on the process ({names}): see noise.cells in the report"


def busy_machine(use: Usage, environment: Mapping[str, Any]) -> bool:
    """Did other processes use enough CPU to be warned about?"""
    cpus = use.cpus or environment.get("cpu_count") or 1
    others = use.others_cpus
    return others is not None and others >= max(OTHERS_MIN_CPUS, OTHERS_MIN_SHARE * cpus)


def advice(use: Usage, cells: Sequence[schema.CellShape], environment: Mapping[str, Any]) -> str:
    """What to do about it, when the machine or the samples were noisy."""
    cpus = use.cpus or environment.get("cpu_count") or 1
    others = use.others_cpus or 0.0
    # A process effect is no fault of the machine's: its remedy is in its warning.
    shaped = [c for c in cells if c.shape != "process"]
    if others < max(OTHERS_MIN_CPUS, OTHERS_MIN_SHARE * cpus) and not shaped:
        return ""
    return (
        "run again on a quieter machine, pin bridge to its quietest CPU"
        " (taskset -c N bridge run ...; bridge env measures each CPU), or add --until-stable"
    )


def record(
    use: Usage,
    results: Iterable[schema.Result],
    environment: Mapping[str, Any],
    size_units: Mapping[str, str] | None = None,
) -> schema.Noise:
    cells = cell_shapes(results)
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
        cells=cells,
        warnings=warnings(use, cells, environment, size_units),
        advice=advice(use, cells, environment),
    )


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
