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

from bridge.hw import verdicts
from bridge.report import schema

# A cell that waited this share of its windows is flagged: at 5% its wall
# figure is already 5% above its CPU time.
WAIT_SHARE_HIGH = 0.05
# Per-CPU medians are shown when they differ by this much (with enough samples).
CPU_SPREAD = 0.05
MIN_PER_CPU = 3
BYTE_KINDS = ("hash", "mac", "cipher", "file")


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
    scenarios: Sequence[Mapping],
    tsc: tuple[float, str] | None,
    limits: Sequence[schema.Limit] = (),
) -> schema.CpuTime | None:
    """The report's cpu_time block, or None when no cell recorded CPU time
    and there is no TSC rate to give cycles."""
    kinds = {str(sc.get("name")): str(sc.get("kind", "")) for sc in scenarios}
    algorithms = {str(sc.get("name")): scenario_algorithm(sc) for sc in scenarios}
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


def scenario_algorithm(sc: Mapping) -> str:
    """The algorithm whose openssl limit a scenario's cells are held to: a
    MAC's digest, a hash's digest, a cipher's name."""
    for key in ("digest", "cipher", "algorithm"):
        value = sc.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def limit_algorithms(scenarios: Sequence[Mapping]) -> list[str]:
    """The algorithms of the byte-oriented scenarios, each once."""
    out: list[str] = []
    for sc in scenarios:
        if str(sc.get("kind", "")) in BYTE_KINDS:
            alg = scenario_algorithm(sc)
            if alg and alg not in out:
                out.append(alg)
    return out


# -- sentences -----------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{x:.0%}"


def warnings(
    block: schema.CpuTime | None,
    size_units: Mapping[str, str] | None = None,
    two_speed: frozenset[tuple[str, str, str, int, str]] = frozenset(),
) -> tuple[str, ...]:
    """For the noise block: the cells that waited for a CPU, and the cells
    whose samples differ by CPU, one sentence each for the whole run with the
    runtimes named in it (a busy machine costs two lines, not one per runtime
    and cell); a cell in `two_speed` (scenario, runtime, call, size, hw), which
    the noise block calls two-speed, is left out of the second. `size_units`:
    what each scenario's sizes count, for the wording ("at 1,024 iterations")."""
    if block is None:
        return ()

    def at(c: schema.CellCost) -> str:
        return verdicts.at(c.size, (size_units or {}).get(c.scenario, verdicts.BYTES), brief=True)

    out = []
    waited: dict[str, list[schema.CellCost]] = {}
    for c in block.cells:
        if c.flag == "waited":
            waited.setdefault(c.runtime, []).append(c)
    if waited:
        parts = []
        for runtime, cells in waited.items():
            if len(cells) == 1:
                (c,) = cells
                parts.append(f"{runtime} {c.call_id} {at(c)} (hw {c.hw}) {_pct(c.wait_share or 0)}")
                continue
            shares = [c.wait_share or 0 for c in cells]
            parts.append(f"{runtime} {_pct(min(shares))}-{_pct(max(shares))} in {len(cells)} cells")
        out.append(
            f"waited for a CPU in the sample windows: {'; '.join(parts)}: another process held"
            " the CPU, so those wall figures are not the cost of the calls (their CPU time per"
            " call is in the report, cpu_time)"
        )
    # A cell the noise block already calls two-speed differs by CPU for that reason.
    spread = [
        c
        for c in block.cells
        if _cpu_spread(c) is not None
        and (c.scenario, c.runtime, c.call_id, c.size, str(c.hw)) not in two_speed
    ]
    if spread:
        listed = "; ".join(
            f"{c.runtime} {c.call_id} {at(c)} (hw {c.hw}): "
            + ", ".join(f"CPU {f.cpu} {f.median_ns:,.0f} ns ({f.samples})" for f in c.by_cpu)
            for c in spread[:3]
        )
        more = f"; and {len(spread) - 3} more cells" if len(spread) > 3 else ""
        out.append(f"samples differ by CPU: {listed}{more}")
    return tuple(out)


def _cpu_spread(c: schema.CellCost) -> float | None:
    figures = [f for f in c.by_cpu if f.samples >= MIN_PER_CPU]
    if len(figures) < 2:
        return None
    lo = min(f.median_ns for f in figures)
    hi = max(f.median_ns for f in figures)
    return hi / lo - 1 if lo > 0 and hi / lo - 1 > CPU_SPREAD else None


def lines(report: schema.Report) -> list[str]:
    """The cost paragraph of the views: per byte-oriented cell (hw as found),
    cycles per byte and the share of the machine's best, and CPU time where
    it differs from wall time. One paragraph per scenario."""
    block = report.cpu_time
    if block is None:
        return []
    out = []
    scenarios: dict[str, list[schema.CellCost]] = {}
    for c in block.cells:
        if not c.hw.masked and (c.cycles_per_byte is not None or c.of_best is not None):
            scenarios.setdefault(c.scenario, []).append(c)
    for name, cells in scenarios.items():
        parts = []
        for c in cells:
            bits = []
            if c.cycles_per_byte is not None:
                bits.append(f"{c.cycles_per_byte:.2f} cycles/B")
            if c.user_ns is not None and block.tsc_hz and c.size:
                # What `openssl speed` prints without -elapsed: its user CPU time.
                bits.append(f"(user CPU {c.user_ns * block.tsc_hz / 1e9 / c.size:.2f})")
            if c.of_best is not None:
                bits.append(f"{c.of_best:.2f}x the best")
            parts.append(f"{c.runtime} {c.call_id} {c.size} B {' '.join(bits)}")
        limits = ", ".join(
            f"{lim.algorithm} {lim.bytes_per_s / 1e6:,.0f} MB/s" for lim in block.limits
        )
        rate = (
            f"TSC {block.tsc_hz / 1e9:.3f} GHz ({block.tsc_source})" if block.tsc_hz else "no TSC"
        )
        best = f"; the best: openssl speed -evp at 16 KiB, {limits}" if limits else ""
        out.append(f"Cost of {name} ({rate}{best}): " + "; ".join(parts) + ".")
    return out
