"""Wall time beside CPU time, per cell, from the per-sample arrays the
runtimes record (schema.Result.sample_*): CPU ns per call, the share of the
sample windows spent waiting for a CPU, the samples by CPU, cycles per byte
at the TSC's rate (SUPERCOP's unit) and the ratio to the machine's own best.

A cell that waited for a CPU for more than WAIT_SHARE_HIGH of its windows
was timed while another process held its CPU: its wall figure is the call
plus someone else's time slices, not the cost of the call. A call longer
than a time slice is slowed uniformly, so such a cell can have a narrow CI
around a wrong number; the wait share is what shows it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from bridge.catalog.vocab import ScenarioKind
from bridge.hw import verdicts
from bridge.report import schema
from bridge.report.findings import Reason, Why, reason
from bridge.report.scenario import ScenarioRun

# A cell that waited this share of its windows is flagged: at 5% its wall
# figure is already 5% above its CPU time.
WAIT_SHARE_HIGH = 0.05
# Per-CPU medians are shown when they differ by this much (with enough samples).
CPU_SPREAD = 0.05
MIN_PER_CPU = 3
BYTE_KINDS = (ScenarioKind.HASH, ScenarioKind.MAC, ScenarioKind.CIPHER)


def _known(values: Sequence[int], n: int) -> bool:
    return len(values) == n


def cell_cost(
    r: schema.Result,
    byte_oriented: bool,
    tsc_hz: float | None,
    best: Mapping[str, float],
    algorithm: str,
) -> schema.CellCost | None:
    """One cell's figures; None without samples."""
    if not r.ok or r.imported or not r.samples:
        return None
    n = len(r.samples)
    per_call = r.per_op_ns()
    wall = statistics.median(per_call)
    cpu_ns = wait_share = user_ns = None
    if _known(r.sample_cpu_ns, n):
        known = [(c, r.loops_of(i)) for i, c in enumerate(r.sample_cpu_ns) if c >= 0]
        if known:
            cpu_ns = statistics.median(c / k for c, k in known)
    if _known(r.sample_wait_ns, n):
        # Of the windows' wall time: a worker's window is its sample; an
        # openssl window is its whole process, CPU time plus waiting.
        whole = _known(r.sample_user_ns, n) and _known(r.sample_cpu_ns, n)
        pairs = [
            (w, (w + r.sample_cpu_ns[i]) if whole else max(w, r.samples[i]))
            for i, w in enumerate(r.sample_wait_ns)
            if w >= 0 and (not whole or r.sample_cpu_ns[i] >= 0)
        ]
        total = sum(t for _, t in pairs)
        if total > 0:
            wait_share = min(1.0, sum(w for w, _ in pairs) / total)
    if _known(r.sample_user_ns, n):
        known = [(u, r.loops_of(i)) for i, u in enumerate(r.sample_user_ns) if u >= 0]
        if known:
            user_ns = statistics.median(u / k for u, k in known)
    cpb = cpu_cpb = of_best = None
    if byte_oriented and r.size > 0:
        if tsc_hz:
            cpb = wall * tsc_hz / 1e9 / r.size
            if cpu_ns is not None:
                cpu_cpb = cpu_ns * tsc_hz / 1e9 / r.size
        limit = best.get(algorithm)
        if limit:
            of_best = (r.size * 1e9 / wall) / limit if wall > 0 else None
    flag = "waited" if wait_share is not None and wait_share > WAIT_SHARE_HIGH else ""
    return schema.CellCost(
        scenario=r.scenario,
        runtime=r.runtime,
        call_id=r.call_id,
        size=r.size,
        hw=r.hw,
        wall_ns=_r(wall),
        cpu_ns=_r(cpu_ns),
        wait_share=None if wait_share is None else round(wait_share, 4),
        user_ns=_r(user_ns),
        cycles_per_byte=_r(cpb, 3),
        cpu_cycles_per_byte=_r(cpu_cpb, 3),
        of_best=_r(of_best, 3),
        by_cpu=by_cpu(r, per_call),
        flag=flag,
    )


def by_cpu(r: schema.Result, per_call: Sequence[float]) -> tuple[schema.CpuFigure, ...]:
    """The cell's samples by the CPU they ran on (-1: unknown, left out)."""
    if len(r.sample_cpus) != len(per_call):
        return ()
    groups: dict[int, list[float]] = {}
    for cpu, v in zip(r.sample_cpus, per_call, strict=True):
        if cpu >= 0:
            groups.setdefault(cpu, []).append(v)
    return tuple(
        schema.CpuFigure(cpu, len(vs), _r(statistics.median(vs)))
        for cpu, vs in sorted(groups.items())
    )


def _r(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def record(
    results: Iterable[schema.Result],
    scenarios: Sequence[ScenarioRun],
    tsc: tuple[float, str] | None,
    limits: Sequence[schema.Limit] = (),
) -> schema.CpuTime | None:
    """The report's cpu_time block, or None when no cell recorded CPU time
    and there is no TSC rate to give cycles."""
    kinds = {sc.name: sc.kind for sc in scenarios}
    algorithms = {sc.name: sc.limit_algorithm for sc in scenarios}
    best = {lim.algorithm: lim.bytes_per_s for lim in limits}
    tsc_hz = tsc[0] if tsc else None
    cells = []
    for r in results:
        c = cell_cost(
            r, kinds.get(r.scenario) in BYTE_KINDS, tsc_hz, best, algorithms.get(r.scenario, "")
        )
        if c is not None:
            cells.append(c)
    if not cells or not (tsc or any(c.cpu_ns is not None for c in cells)):
        return None
    return schema.CpuTime(
        tsc_hz=None if tsc is None else round(tsc[0]),
        tsc_source="" if tsc is None else tsc[1],
        wait_share_high=WAIT_SHARE_HIGH,
        limits=tuple(limits),
        cells=tuple(cells),
    )


def limit_algorithms(scenarios: Sequence[ScenarioRun]) -> list[str]:
    """The algorithms of the byte-oriented scenarios, each once."""
    out: list[str] = []
    for sc in scenarios:
        if sc.kind in BYTE_KINDS:
            alg = sc.limit_algorithm
            if alg and alg not in out:
                out.append(alg)
    return out


# -- findings ------------------------------------------------------------------


def findings(
    block: schema.CpuTime | None,
    size_units: Mapping[str, str] | None = None,
    two_speed: frozenset[tuple[str, str, str, int, str]] = frozenset(),
) -> tuple[Reason, ...]:
    """For the noise block: the cells that waited for a CPU (one finding a
    runtime: a busy machine costs a line a runtime, not one a cell), and the
    cells whose samples differ by CPU; a cell in `two_speed` (scenario,
    runtime, call, size, hw), which the noise block calls two-speed, is left
    out of the second. `size_units`: what each scenario's sizes count."""
    if block is None:
        return ()

    def where(c: schema.CellCost) -> dict:
        return {
            "scenario": c.scenario,
            "runtime": c.runtime,
            "call_id": c.call_id,
            "size": c.size,
            "hw": c.hw.value,
            "unit": (size_units or {}).get(c.scenario, verdicts.BYTES),
        }

    out = []
    waited: dict[str, list[schema.CellCost]] = {}
    for c in block.cells:
        if c.flag == "waited":
            waited.setdefault(c.runtime, []).append(c)
    for runtime, cells in waited.items():
        shares = [c.wait_share or 0.0 for c in cells]
        if len(cells) == 1:
            out.append(reason(Why.CELL_WAITED, **where(cells[0]), share=shares[0]))
        else:
            out.append(
                reason(
                    Why.CELLS_WAITED,
                    runtime=runtime,
                    cells=len(cells),
                    lo=min(shares),
                    hi=max(shares),
                )
            )
    # A cell the noise block already calls two-speed differs by CPU for that reason.
    for c in block.cells:
        if _cpu_spread(c) is None:
            continue
        if (c.scenario, c.runtime, c.call_id, c.size, str(c.hw)) in two_speed:
            continue
        cpus = tuple((f.cpu, f.median_ns, f.samples) for f in c.by_cpu)
        out.append(reason(Why.CELL_BY_CPU, **where(c), cpus=cpus))
    return tuple(out)


def _cpu_spread(c: schema.CellCost) -> float | None:
    figures = [f for f in c.by_cpu if f.samples >= MIN_PER_CPU]
    if len(figures) < 2:
        return None
    lo = min(f.median_ns for f in figures)
    hi = max(f.median_ns for f in figures)
    return hi / lo - 1 if lo > 0 and hi / lo - 1 > CPU_SPREAD else None
