"""The report's optional `concurrency` block (schema bridge.report/1): one
record per level cell, the scaling figures, and the machine they ran on.

A *level cell* is one call of a scenario at one size on one runtime, made by
N concurrent workers at once (N = the level) in one *mode*: Erlang processes
in one node, Python threads in one interpreter, Python worker processes, or
`openssl speed -multi N`. Its raw data are the *windows*: in window i, worker
k completed `calls` calls in `ns` nanoseconds. A window that any worker
missed (it recorded 0, 0) is left out of every figure, and counted.

A level cell also runs *races* (the slowest of N): each of the N workers
makes the same fixed number of calls from a common start, and the slowest
one's time to finish is the race's figure. And it records what the kernel
says of the runtime's threads over the windows: the CPU they used and the
time they waited for one.

A level's measured data are one record, `LevelRaw`: what a runtime returns
for a round (bridge.runtimes), what a level cell adds up over the rounds
(bridge.measure.levelrun) and what a `LevelResult` keeps; its keys are the
cell's own in the JSON. Like `schema.Result`, a record keeps the raw data and writes the figures
derived from them beside it for readers of the JSON; reading a report takes
the raw data back and derives the same figures again, so a report read and
written again is the same text.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from bridge import stats
from bridge.report.codec import EMPTY, NONE, Json, Record, jf
from bridge.report.findings import Reason
from bridge.report.hw import Hw

Window = tuple[tuple[int, int], ...]  # per worker: (calls, ns)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile by the nearest-rank method: an observed value, never
    an interpolation between two (a p99 is a latency that happened)."""
    n = len(sorted_values)
    return sorted_values[min(n - 1, max(0, math.ceil(q * n) - 1))]


@dataclass(frozen=True)
class Spread(Record):
    """Percentiles of a set of durations (sampled latencies, probe lateness)."""

    n: int
    p50_ns: float
    p99_ns: float
    max_ns: float

    @classmethod
    def of(cls, values: Sequence[int]) -> Spread | None:
        if not values:
            return None
        xs = sorted(values)
        return cls(len(xs), percentile(xs, 0.5), percentile(xs, 0.99), float(xs[-1]))


@dataclass(frozen=True)
class Machine(Record):
    """What the levels ran on: a level above the usable CPUs is oversubscribed."""

    logical_cpus: int | None = None
    usable_cpus: int | None = None  # this process's CPU affinity
    physical_cores: int | None = None
    smt_siblings: int | None = None  # hardware threads per core (1: no SMT)
    sockets: int | None = None
    loadavg_start: tuple[float, float, float] | None = None
    loadavg_end: tuple[float, float, float] | None = None
    # Linux's autogroup: CPU time is shared between sessions first (None:
    # not Linux, or not known).
    autogroup: bool | None = None
    # The per-call cells ran pinned to one CPU for each batch
    # (bridge.runtimes.pinning); None: not recorded (reports before it).
    pinned: bool | None = jf(omit=NONE, default=None)

    @property
    def cpus(self) -> int | None:
        return self.usable_cpus or self.logical_cpus


def _no_probe(raw: LevelRaw, value: Any) -> bool:
    return not (raw.probe_ns or raw.probe_idle_ns)


@dataclass(frozen=True)
class LevelRaw(Record):
    """What a level cell measured: one round's from a runtime, all rounds'
    in a result (`merged`). A new measured figure is a field here."""

    api: str = ""
    batch: int = 0  # calls between two clock reads (0: openssl, which times itself)
    windows: tuple[Window, ...] = ()
    latency_ns: tuple[int, ...] = ()  # sampled per-call latencies, all workers
    latency_note: str = jf(omit=EMPTY, default="")  # why there are none
    # What the clock reads add to each sampled latency.
    clock_ns: int | None = jf(omit=NONE, default=None)
    # Erlang: how late the 1 ms probe woke, under load, and before the load started.
    probe_ns: tuple[int, ...] = jf(omit=_no_probe, default=())
    probe_idle_ns: tuple[int, ...] = jf(omit=_no_probe, default=())
    # Erlang, at each of the probe's wake-ups under load: the processes
    # running or ready to run in the node (the probe left out).
    probe_active: tuple[int, ...] = jf(omit=EMPTY, default=())
    # scheduler type -> (active, total)
    sched: dict[str, tuple[int, int]] | None = jf(omit=NONE, default=None)
    schedulers_online: int | None = jf(omit=NONE, default=None)
    dirty_cpu_schedulers_online: int | None = jf(
        omit=lambda r, v: r.schedulers_online is None, default=None
    )
    # The bytes the call computed (the first round's).
    output: bytes = jf(key="output_hex", encode=bytes.hex, decode=bytes.fromhex, default=b"")
    # Over the windows, summed over the rounds: their wall span, and the ns
    # the runtime's threads ran on a CPU and waited on a run queue in it
    # (schedstat; Python: the worker threads, Erlang: the normal and dirty
    # CPU scheduler threads). None: not measured, or not in every round.
    span_ns: int | None = jf(omit=NONE, default=None)
    cpu_ns: int | None = jf(omit=NONE, default=None)
    wait_ns: int | None = jf(omit=NONE, default=None)
    # The races: the calls each worker made in one, and per race each
    # worker's ns from the common start to the end of its last call.
    race_calls: int = jf(omit=lambda r, v: not r.race_ns, default=0)
    race_ns: tuple[tuple[int, ...], ...] = jf(omit=EMPTY, default=())

    def merged(self, later: LevelRaw) -> LevelRaw:
        """This round's data followed by a later round's: the samples add up,
        the figures a round reports about itself are the later round's."""
        sched = self.sched
        if later.sched is not None:
            old = self.sched or {}
            sched = {
                k: (old.get(k, (0, 0))[0] + a, old.get(k, (0, 0))[1] + t)
                for k, (a, t) in later.sched.items()
            }
        first = not self.windows  # nothing merged yet: the later round's own

        def add(a: int | None, b: int | None) -> int | None:
            if first:
                return b
            return None if a is None or b is None else a + b

        return dataclasses.replace(
            later,
            windows=self.windows + later.windows,
            latency_ns=self.latency_ns + later.latency_ns,
            probe_ns=self.probe_ns + later.probe_ns,
            probe_idle_ns=self.probe_idle_ns + later.probe_idle_ns,
            probe_active=self.probe_active + later.probe_active,
            sched=sched,
            clock_ns=self.clock_ns if later.clock_ns is None else later.clock_ns,
            output=self.output or later.output,
            span_ns=add(self.span_ns, later.span_ns),
            cpu_ns=add(self.cpu_ns, later.cpu_ns),
            wait_ns=add(self.wait_ns, later.wait_ns),
            race_calls=later.race_calls or self.race_calls,
            race_ns=self.race_ns + later.race_ns,
        )


def _failed(record: Any, value: Any) -> bool:
    return not record.ok


def _measured(record: Any, value: Any) -> bool:
    return not record.ok or not record.imported


@dataclass(frozen=True)
class LevelResult(Record):
    scenario: str
    runtime: str
    call: str  # the call as a user writes it, with how N of them run
    call_id: str
    mode: str  # processes | threads | multi | clients (bridge.analysis.concurrency.MODES)
    semantics: str = jf(missing="")
    algorithm: str = jf(missing="")
    size: int
    hw: Hw = jf(missing=Hw.ON)
    level: int
    status: str = "ok"  # ok | unsupported | failed
    reason: str = jf(omit=lambda r, v: r.ok, default="")
    raw: LevelRaw = jf(flat=True, omit=_failed, default_factory=LevelRaw)
    oversubscribed: bool = jf(omit=_failed, default=False)
    output_ok: bool | None = jf(omit=_failed, default=None)  # None: nothing to check it against
    # Imported (bridge import-speed of `openssl speed -multi N`): as posted
    # (read back from the written median).
    source: str = jf(omit=_measured, default="measured")
    point_ops_per_s: float | None = jf(write=False, default=None)
    children_ops_per_s: tuple[float, ...] = jf(omit=lambda r, v: not r.ok or not v, default=())
    source_line: int | None = jf(omit=_measured, default=None)

    json_derived_keys: ClassVar[tuple[str, ...]] = (
        *("ops_per_s", "bytes_per_s", "worker_ops_per_s", "dropped_windows"),
        *("latency", "probe", "probe_idle", "scheduler_utilisation", "cpu_use", "slowest"),
    )
    # Keys of the raw record not listed here come after these.
    json_order: ClassVar[tuple[str, ...]] = (
        *("scenario", "runtime", "call", "call_id", "mode", "semantics", "algorithm"),
        *("size", "hw", "level", "status", "reason", "source", "source_line"),
        *("api", "oversubscribed", "ops_per_s", "bytes_per_s", "worker_ops_per_s"),
        *("windows", "dropped_windows", "batch", "latency", "latency_note", "clock_ns"),
        *("latency_ns", "probe", "probe_idle", "probe_ns", "probe_idle_ns", "probe_active"),
        *("scheduler_utilisation", "sched", "schedulers_online", "dirty_cpu_schedulers_online"),
        *("slowest", "race_calls", "race_ns", "cpu_use", "span_ns", "cpu_ns", "wait_ns"),
        *("children_ops_per_s", "output_hex", "output_ok"),
    )

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def imported(self) -> bool:
        return self.source == "imported"

    @property
    def group(self) -> tuple[str, str, str, str, int, Hw]:
        """The cells that differ only by level: scaling compares within one."""
        return (self.scenario, self.runtime, self.call_id, self.mode, self.size, self.hw)

    def complete_windows(self) -> list[Window]:
        """Windows that every worker took part in."""
        return [w for w in self.raw.windows if w and all(c > 0 and ns > 0 for c, ns in w)]

    @property
    def dropped_windows(self) -> int:
        return len(self.raw.windows) - len(self.complete_windows())

    def window_ops(self) -> list[float]:
        """Aggregate throughput of each complete window: the sum of each
        worker's calls per second in it."""
        return [sum(c * 1e9 / ns for c, ns in w) for w in self.complete_windows()]

    def worker_ops(self) -> list[float]:
        """Each worker's median calls per second: shows a worker that was
        starved (an unfair lock, the GIL) next to one that was not."""
        done = self.complete_windows()
        if not done:
            return list(self.children_ops_per_s)
        workers = range(len(done[0]))
        return [statistics.median(w[k][0] * 1e9 / w[k][1] for w in done) for k in workers]

    def ops(self) -> stats.Summary | None:
        values = self.window_ops()
        if values:
            return stats.summarize(values)
        if self.point_ops_per_s is not None:
            return stats.summarize([self.point_ops_per_s])
        return None

    def latency(self) -> Spread | None:
        return Spread.of(self.raw.latency_ns)

    def probe(self) -> Spread | None:
        return Spread.of(self.raw.probe_ns)

    def probe_idle(self) -> Spread | None:
        return Spread.of(self.raw.probe_idle_ns)

    @property
    def output_hex(self) -> str:
        return self.raw.output.hex()

    def utilisation(self) -> dict[str, float] | None:
        if not self.raw.sched:
            return None
        return {k: (a / t if t else 0.0) for k, (a, t) in self.raw.sched.items()}

    def race_slowest(self) -> list[int]:
        """Each race's figure: its slowest worker's time to finish, in ns."""
        return [max(race) for race in self.raw.race_ns if race]

    def slowest(self) -> Slowest | None:
        return Slowest.of(self.raw.race_calls, self.race_slowest())

    def cpu_use(self) -> CpuUse | None:
        return CpuUse.of(self.raw)

    def json_derived(self) -> Json:
        """The figures readers of the JSON want, from the raw data."""
        if not self.ok:
            return {}
        s = self.ops()
        ci = [s.ci95[0], s.ci95[1]] if s and self.raw.windows else None
        median = s.median if s else None
        d: Json = {
            "ops_per_s": {"median": median, "ci95": ci},
            "bytes_per_s": {
                "median": median * self.size if median is not None else None,
                "ci95": [ci[0] * self.size, ci[1] * self.size] if ci else None,
            },
            "worker_ops_per_s": self.worker_ops(),
            "dropped_windows": self.dropped_windows,
        }
        lat = self.latency()
        d["latency"] = lat.to_json() if lat else None
        if self.raw.probe_ns or self.raw.probe_idle_ns:
            probe, idle = self.probe(), self.probe_idle()
            d["probe"] = probe.to_json() if probe else None
            d["probe_idle"] = idle.to_json() if idle else None
        if self.raw.sched is not None:
            d["scheduler_utilisation"] = self.utilisation()
        slowest, use = self.slowest(), self.cpu_use()
        if slowest is not None:
            d["slowest"] = slowest.to_json()
        if use is not None:
            d["cpu_use"] = use.to_json()
        return d

    @classmethod
    def json_read(cls, d: Json) -> Json:
        imported = d.get("source") == "imported"
        return {"point_ops_per_s": float(d["ops_per_s"]["median"]) if imported else None}


@dataclass(frozen=True)
class Slowest(Record):
    """The slowest of N: over a cell's races, the slowest worker's time to
    finish `calls` calls from the common start: the median over the races
    with its 95% CI, and the fastest and slowest race (their spread)."""

    calls: int
    races: int
    median_ns: float
    ci95: tuple[float, float] | None  # None: too few races for a CI
    min_ns: float
    max_ns: float

    @classmethod
    def of(cls, calls: int, times: Sequence[int]) -> Slowest | None:
        if not times or calls <= 0:
            return None
        s = stats.summarize([float(t) for t in times])
        ci = s.ci95 if len(times) >= MIN_RACES_FOR_CI else None
        return cls(calls, len(times), s.median, ci, s.min, s.max)


# A distribution-free 95% CI of a median needs six values (0.5^6 * 2 < 5%).
MIN_RACES_FOR_CI = 6


@dataclass(frozen=True)
class CpuUse(Record):
    """How many CPUs a cell's work wanted over its windows: the workers
    running, or ready to run and waiting for a CPU; not those blocked (on a
    lock, in a queue, in a receive). Erlang: the mean, over the probe's
    wake-ups, of the processes running or ready to run in the node (every
    run queue; the processes a call hands work to, such as a TLS
    connection's, included). Python: the worker threads' CPU ns plus their
    run-queue wait ns (schedstat), over the span. `wait_share`: of the time
    the runtime's threads (Erlang: its scheduler threads) ran or were ready
    to, the share they waited for a CPU."""

    cpus: float
    wait_share: float | None

    @classmethod
    def of(cls, raw: LevelRaw) -> CpuUse | None:
        cpu, wait, span = raw.cpu_ns, raw.wait_ns, raw.span_ns
        if cpu is None or wait is None:
            return cls(statistics.fmean(raw.probe_active), None) if raw.probe_active else None
        share = wait / (cpu + wait) if cpu + wait else None
        if raw.probe_active:
            return cls(statistics.fmean(raw.probe_active), share)
        return cls((cpu + wait) / span, share) if span else None


class Shape(enum.Enum):
    """How per-call time grew from level 1 to level N against CPU use."""

    SERIALISED = "serialised"  # faster than CPU use: the workers queued (a lock), not worked
    WORK = "work"  # no faster than CPU use: the time went to work, or to waiting for a CPU
    UNKNOWN = "unknown"  # a figure is missing (`why`)


class Missing(enum.Enum):
    """Why a shape is unknown."""

    NO_CPU_USE = "no-cpu-use"  # the runtime does not say what CPU it used (openssl -multi)
    NO_CI = "no-ci"  # too few windows for a CI of the per-call time
    # The per-call time's CI reaches both sides of the margin (a busy
    # machine's windows vary): more windows would tell.
    WIDE_CI = "wide-ci"


@dataclass(frozen=True)
class Serialisation(Record):
    """Level N against level 1 of one group of level cells: per-call time
    (N / scaling, with the scaling's CI turned over) against CPU use (CPUs
    busy at N over CPUs busy at 1). Per-call time that grows faster than CPU
    use is time the workers spent neither working nor waiting for a CPU:
    queued behind each other (a lock, a single process, the GIL)."""

    scenario: str
    runtime: str
    call_id: str
    mode: str
    size: int
    hw: Hw
    level: int
    shape: Shape
    why: tuple[Missing, ...] = jf(omit=EMPTY, default=())
    per_call_ratio: float | None = None
    per_call_ci95: tuple[float, float] | None = None
    cpus: tuple[float, float] | None = None  # CPUs busy at level 1, at level N
    cpu_ratio: float | None = None
    slowest_ratio: float | None = None  # the slowest of N's median over level 1's


class Gap(enum.Enum):
    """Why level 1's rate and the per-call median disagree (or that they agree)."""

    AGREE = "agree"  # within 10%, or the median inside the rate's CI
    # Level 1's threads waited for a CPU, and those waits make at least three
    # quarters of the gap (as ratios, on a log scale): a rate counts all the
    # time, the median of short samples keeps the samples that did not wait.
    WAITED = "waited"
    # No waits: the rate agrees with the per-call cell's mean, and the call's
    # own times vary (a rate is a mean, the table's figure a median).
    TAIL = "tail"
    # Level 1 beat the per-call cell, which ran pinned to one CPU, by keeping
    # more than one CPU busy (the call works in more than one thread).
    PINNED = "pinned"
    # Too few windows (openssl: runs) at level 1 for a CI: a gap this small
    # may be the runs' own spread.
    FEW = "few"
    UNEXPLAINED = "unexplained"


@dataclass(frozen=True)
class LevelOne(Record):
    """Level 1's rate (calls per second over the windows) beside the
    per-call cell of the same call, size and hw: 1e9 / its median, and 1e9 /
    its mean (all its samples' time over all their calls, as a rate counts
    it); the waits on each side; the CPUs level 1 kept busy; the verdict."""

    scenario: str
    runtime: str
    call_id: str
    mode: str
    size: int
    hw: Hw
    ops: float
    ops_ci95: tuple[float, float] | None
    median_ops: float
    mean_ops: float
    ratio: float  # ops / median_ops
    gap: Gap
    level_wait_share: float | None = None
    cell_wait_share: float | None = None
    cpus: float | None = None


@dataclass(frozen=True)
class Scaling(Record):
    """throughput(level) / throughput(1) for one group of level cells, with a
    bootstrap 95% CI over their windows; efficiency = scaling / level."""

    scenario: str
    runtime: str
    call_id: str
    mode: str
    size: int
    hw: Hw
    level: int
    scaling: float
    ci95: tuple[float, float] | None = jf(missing=None)  # None: too few windows (or runs)
    efficiency: float
    oversubscribed: bool = False


@dataclass(frozen=True)
class Concurrency(Record):
    """The whole block: the levels asked for, how they were run, the cells,
    the scaling figures, and the warnings a reader must see."""

    levels: tuple[int, ...] = jf(missing=())
    window_ms: int | None = None
    schedulers: int | None = None  # --schedulers: the node ran with +S N:N
    machine: Machine = jf(decode=lambda v: Machine.from_json(v or {}), default_factory=Machine)
    cells: tuple[LevelResult, ...] = ()
    scaling: tuple[Scaling, ...] = ()
    # What a reader must see, in words: reports from before `findings`.
    warnings: tuple[str, ...] | None = jf(omit=NONE, default=None)
    # Added later: written only when there is one, so older reports
    # re-serialise as they were.
    serialisation: tuple[Serialisation, ...] = jf(omit=EMPTY, default=())
    level_one: tuple[LevelOne, ...] = jf(omit=EMPTY, default=())
    # What a reader must see: reasons with their figures (bridge.report.findings).
    findings: tuple[Reason, ...] = jf(omit=EMPTY, default=())

    json_order: ClassVar[tuple[str, ...]] = (
        "levels",
        "window_ms",
        "schedulers",
        "machine",
        "warnings",
        "findings",
        "scaling",
        "serialisation",
        "level_one",
    )
