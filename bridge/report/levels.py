"""The report's optional `concurrency` block (schema bridge.report/1): one
record per level cell, the scaling figures, and the machine they ran on.

A *level cell* is one call of a scenario at one size on one runtime, made by
N concurrent workers at once (N = the level) in one *mode*: Erlang processes
in one node, Python threads in one interpreter, Python worker processes, or
`openssl speed -multi N`. Its raw data are the *windows*: in window i, worker
k completed `calls` calls in `ns` nanoseconds. A window that any worker
missed (it recorded 0, 0) is left out of every figure, and counted.

Like `model.Result`, a record keeps the raw data and writes the figures
derived from them beside it for readers of the JSON; reading a report takes
the raw data back and derives the same figures again, so a report read and
written again is the same text.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bridge import stats
from bridge.report.hw import Hw

Json = dict[str, Any]
Window = tuple[tuple[int, int], ...]  # per worker: (calls, ns)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile by the nearest-rank method: an observed value, never
    an interpolation between two (a p99 is a latency that happened)."""
    n = len(sorted_values)
    return sorted_values[min(n - 1, max(0, math.ceil(q * n) - 1))]


@dataclass(frozen=True)
class Spread:
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

    def to_json(self) -> Json:
        return {"n": self.n, "p50_ns": self.p50_ns, "p99_ns": self.p99_ns, "max_ns": self.max_ns}


@dataclass(frozen=True)
class Machine:
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

    @property
    def cpus(self) -> int | None:
        return self.usable_cpus or self.logical_cpus

    def to_json(self) -> Json:
        return {
            "logical_cpus": self.logical_cpus,
            "usable_cpus": self.usable_cpus,
            "physical_cores": self.physical_cores,
            "smt_siblings": self.smt_siblings,
            "sockets": self.sockets,
            "loadavg_start": list(self.loadavg_start) if self.loadavg_start else None,
            "loadavg_end": list(self.loadavg_end) if self.loadavg_end else None,
            "autogroup": self.autogroup,
        }

    @classmethod
    def from_json(cls, d: Json) -> Machine:
        def load(key: str) -> tuple[float, float, float] | None:
            v = d.get(key)
            return (float(v[0]), float(v[1]), float(v[2])) if v else None

        return cls(
            logical_cpus=d.get("logical_cpus"),
            usable_cpus=d.get("usable_cpus"),
            physical_cores=d.get("physical_cores"),
            smt_siblings=d.get("smt_siblings"),
            sockets=d.get("sockets"),
            loadavg_start=load("loadavg_start"),
            loadavg_end=load("loadavg_end"),
            autogroup=d.get("autogroup"),
        )


@dataclass(frozen=True)
class LevelResult:
    scenario: str
    runtime: str
    call: str  # the call as a user writes it, with how N of them run
    call_id: str
    mode: str  # processes | threads | multi (bridge.analysis.concurrency.MODES)
    semantics: str
    algorithm: str
    size: int
    hw: Hw
    level: int
    api: str = ""
    status: str = "ok"  # ok | unsupported | failed
    reason: str = ""
    batch: int = 0  # calls between two clock reads (0: openssl, which times itself)
    windows: tuple[Window, ...] = ()
    latency_ns: tuple[int, ...] = ()  # sampled per-call latencies, all workers
    latency_note: str = ""  # why there are none
    clock_ns: int | None = None  # what the clock reads add to each sampled latency
    probe_ns: tuple[int, ...] = ()  # Erlang: how late the 1 ms probe woke, under load
    probe_idle_ns: tuple[int, ...] = ()  # ... and before the load started
    sched: dict[str, tuple[int, int]] | None = None  # scheduler type -> (active, total)
    schedulers_online: int | None = None
    dirty_cpu_schedulers_online: int | None = None
    oversubscribed: bool = False
    output_hex: str = ""
    output_ok: bool | None = None  # None: nothing to check it against
    # Imported (bridge import-speed of `openssl speed -multi N`): as posted.
    source: str = "measured"
    point_ops_per_s: float | None = None
    children_ops_per_s: tuple[float, ...] = ()
    source_line: int | None = None

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
        return [w for w in self.windows if w and all(c > 0 and ns > 0 for c, ns in w)]

    @property
    def dropped_windows(self) -> int:
        return len(self.windows) - len(self.complete_windows())

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
        return Spread.of(self.latency_ns)

    def probe(self) -> Spread | None:
        return Spread.of(self.probe_ns)

    def probe_idle(self) -> Spread | None:
        return Spread.of(self.probe_idle_ns)

    def utilisation(self) -> dict[str, float] | None:
        if not self.sched:
            return None
        return {k: (a / t if t else 0.0) for k, (a, t) in self.sched.items()}

    def to_json(self) -> Json:
        d: Json = {
            "scenario": self.scenario,
            "runtime": self.runtime,
            "call": self.call,
            "call_id": self.call_id,
            "mode": self.mode,
            "semantics": self.semantics,
            "algorithm": self.algorithm,
            "size": self.size,
            "hw": self.hw,
            "level": self.level,
            "status": self.status,
        }
        if self.status != "ok":
            d["reason"] = self.reason
            return d
        s = self.ops()
        ci = [s.ci95[0], s.ci95[1]] if s and self.windows else None
        median = s.median if s else None
        if self.imported:
            d["source"] = "imported"
            d["source_line"] = self.source_line
        d.update(
            api=self.api,
            oversubscribed=self.oversubscribed,
            ops_per_s={"median": median, "ci95": ci},
            bytes_per_s={
                "median": median * self.size if median is not None else None,
                "ci95": [ci[0] * self.size, ci[1] * self.size] if ci else None,
            },
            worker_ops_per_s=self.worker_ops(),
            windows=[[list(p) for p in w] for w in self.windows],
            dropped_windows=self.dropped_windows,
            batch=self.batch,
        )
        lat = self.latency()
        d["latency"] = lat.to_json() if lat else None
        if self.latency_note:
            d["latency_note"] = self.latency_note
        if self.clock_ns is not None:
            d["clock_ns"] = self.clock_ns
        d["latency_ns"] = list(self.latency_ns)
        if self.probe_ns or self.probe_idle_ns:
            probe, idle = self.probe(), self.probe_idle()
            d["probe"] = probe.to_json() if probe else None
            d["probe_idle"] = idle.to_json() if idle else None
            d["probe_ns"] = list(self.probe_ns)
            d["probe_idle_ns"] = list(self.probe_idle_ns)
        if self.sched is not None:
            d["scheduler_utilisation"] = self.utilisation()
            d["sched"] = {k: list(v) for k, v in self.sched.items()}
        if self.schedulers_online is not None:
            d["schedulers_online"] = self.schedulers_online
            d["dirty_cpu_schedulers_online"] = self.dirty_cpu_schedulers_online
        if self.children_ops_per_s:
            d["children_ops_per_s"] = list(self.children_ops_per_s)
        d["output_hex"] = self.output_hex
        d["output_ok"] = self.output_ok
        return d

    @classmethod
    def from_json(cls, d: Json) -> LevelResult:
        imported = d.get("source") == "imported"
        sched = d.get("sched")
        return cls(
            scenario=d["scenario"],
            runtime=d["runtime"],
            call=d["call"],
            call_id=d["call_id"],
            mode=d["mode"],
            semantics=d.get("semantics", ""),
            algorithm=d.get("algorithm", ""),
            size=int(d["size"]),
            hw=Hw(d.get("hw", "on")),
            level=int(d["level"]),
            api=d.get("api", ""),
            status=d.get("status", "ok"),
            reason=d.get("reason", ""),
            batch=int(d.get("batch", 0)),
            windows=tuple(tuple((int(c), int(ns)) for c, ns in w) for w in d.get("windows", ())),
            latency_ns=tuple(int(x) for x in d.get("latency_ns", ())),
            latency_note=d.get("latency_note", ""),
            clock_ns=d.get("clock_ns"),
            probe_ns=tuple(int(x) for x in d.get("probe_ns", ())),
            probe_idle_ns=tuple(int(x) for x in d.get("probe_idle_ns", ())),
            sched=None if sched is None else {k: (int(v[0]), int(v[1])) for k, v in sched.items()},
            schedulers_online=d.get("schedulers_online"),
            dirty_cpu_schedulers_online=d.get("dirty_cpu_schedulers_online"),
            oversubscribed=bool(d.get("oversubscribed", False)),
            output_hex=d.get("output_hex", ""),
            output_ok=d.get("output_ok"),
            source=d.get("source", "measured"),
            point_ops_per_s=float(d["ops_per_s"]["median"]) if imported else None,
            children_ops_per_s=tuple(float(x) for x in d.get("children_ops_per_s", ())),
            source_line=d.get("source_line"),
        )


@dataclass(frozen=True)
class Scaling:
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
    ci95: tuple[float, float] | None  # None: too few windows (or runs) for one
    efficiency: float
    oversubscribed: bool = False

    def to_json(self) -> Json:
        return {
            "scenario": self.scenario,
            "runtime": self.runtime,
            "call_id": self.call_id,
            "mode": self.mode,
            "size": self.size,
            "hw": self.hw,
            "level": self.level,
            "scaling": self.scaling,
            "ci95": list(self.ci95) if self.ci95 else None,
            "efficiency": self.efficiency,
            "oversubscribed": self.oversubscribed,
        }

    @classmethod
    def from_json(cls, d: Json) -> Scaling:
        ci = d.get("ci95")
        return cls(
            scenario=d["scenario"],
            runtime=d["runtime"],
            call_id=d["call_id"],
            mode=d["mode"],
            size=int(d["size"]),
            hw=Hw(d.get("hw", "on")),
            level=int(d["level"]),
            scaling=float(d["scaling"]),
            ci95=(float(ci[0]), float(ci[1])) if ci else None,
            efficiency=float(d["efficiency"]),
            oversubscribed=bool(d.get("oversubscribed", False)),
        )


@dataclass(frozen=True)
class Concurrency:
    """The whole block: the levels asked for, how they were run, the cells,
    the scaling figures, and the warnings a reader must see."""

    levels: tuple[int, ...]
    window_ms: int | None = None
    schedulers: int | None = None  # --schedulers: the node ran with +S N:N
    machine: Machine = field(default_factory=Machine)
    cells: tuple[LevelResult, ...] = ()
    scaling: tuple[Scaling, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_json(self) -> Json:
        return {
            "levels": list(self.levels),
            "window_ms": self.window_ms,
            "schedulers": self.schedulers,
            "machine": self.machine.to_json(),
            "warnings": list(self.warnings),
            "scaling": [s.to_json() for s in self.scaling],
            "cells": [c.to_json() for c in self.cells],
        }

    @classmethod
    def from_json(cls, d: Json) -> Concurrency:
        return cls(
            levels=tuple(int(n) for n in d.get("levels", ())),
            window_ms=d.get("window_ms"),
            schedulers=d.get("schedulers"),
            machine=Machine.from_json(dict(d.get("machine") or {})),
            cells=tuple(LevelResult.from_json(c) for c in d.get("cells", ())),
            scaling=tuple(Scaling.from_json(s) for s in d.get("scaling", ())),
            warnings=tuple(str(w) for w in d.get("warnings", ())),
        )
