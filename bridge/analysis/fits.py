"""The cost model: time per call = a + b·bytes, fitted per runtime and call
over a sweep of message sizes. Pure functions.

`a` is the fixed cost of a call (NIF or interpreter call, context set-up, key
schedule, fetches), `b` the cost of each byte (the hashing itself); 1/b is the
throughput in bytes per ns, i.e. GB/s. This is what explains a 25% difference
at 1000 bytes next to a 4x difference at 16 KiB.

Fitted by Theil-Sen (the median of the pairwise slopes, then the median
intercept): one noisy size cannot drag the line, unlike least squares.

Plausibility: a linear cost pays the same per unit at every size. Where the
per-unit part is at least half of a call (b·size >= a), the per-unit cost a
size shows, (median - a) / size, must lie within 30% of b; a size outside is
named (`off_line`): the line cannot make it, so something else did (load
on the machine, a frequency step, a slow spell that caught that cell).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bridge.report import schema
from bridge.report.findings import Reason, Why, reason
from bridge.report.hw import Hw

MIN_SIZES = 3
PLAUSIBLE = 0.30  # how far a size's per-unit cost may stray from the line's


@dataclass(frozen=True)
class Fit:
    a_ns: float  # fixed ns per call
    b_ns_per_byte: float
    r2: float  # of the line against the per-size medians
    max_rel_residual: float  # worst |fit - median| / median over the sizes
    sizes: tuple[int, ...]

    @property
    def gb_per_s(self) -> float | None:
        return 1 / self.b_ns_per_byte if self.b_ns_per_byte > 0 else None


def theil_sen(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """(intercept, slope). Needs at least two distinct x."""
    slopes = [
        (ys[j] - ys[i]) / (xs[j] - xs[i])
        for i in range(len(xs))
        for j in range(i + 1, len(xs))
        if xs[j] != xs[i]
    ]
    if not slopes:
        raise ValueError("need at least two distinct sizes")
    b = statistics.median(slopes)
    a = statistics.median(y - b * x for x, y in zip(xs, ys, strict=True))
    return a, b


def fit(sizes: Sequence[int], medians: Sequence[float]) -> Fit:
    a, b = theil_sen(sizes, medians)
    predicted = [a + b * x for x in sizes]
    mean = statistics.fmean(medians)
    total = sum((y - mean) ** 2 for y in medians)
    resid = sum((y - p) ** 2 for y, p in zip(medians, predicted, strict=True))
    r2 = 1 - resid / total if total > 0 else 1.0
    worst = max(abs(p - y) / y for y, p in zip(medians, predicted, strict=True) if y > 0)
    return Fit(a, b, r2, worst, tuple(sizes))


def implausible(f: Fit, medians: Sequence[float]) -> list[tuple[int, float, float]]:
    """(size, its per-unit cost, that over b) for each size whose per-unit
    part is at least half of the call and whose per-unit cost strays more
    than PLAUSIBLE from the line's b (see the module doc)."""
    if f.b_ns_per_byte <= 0:
        return []
    out = []
    for size, median in zip(f.sizes, medians, strict=True):
        if size <= 0 or f.b_ns_per_byte * size < f.a_ns:
            continue
        per_unit = (median - f.a_ns) / size
        ratio = per_unit / f.b_ns_per_byte
        if abs(ratio - 1) > PLAUSIBLE:
            out.append((size, per_unit, ratio))
    return out


def findings(
    fits: Sequence[schema.CostFit], units: Mapping[str, str] | None = None
) -> list[Reason]:
    """Each size off its fit's line (IMPLAUSIBLE_COST), for the noise block."""
    return [
        reason(
            Why.IMPLAUSIBLE_COST,
            scenario=f.scenario,
            runtime=f.runtime,
            call_id=f.call_id,
            size=o.size,
            hw=f.hw.value,
            unit=(units or {}).get(f.scenario, "bytes"),
            per_unit=o.per_unit_ns,
            ratio=o.ratio,
            b=f.b_ns_per_byte,
        )
        for f in fits
        for o in f.off_line
    ]


def fits_for(results: Sequence[schema.Result]) -> list[schema.CostFit]:
    """One fit per (scenario, runtime, call, hw) with at least MIN_SIZES sizes,
    with the sizes off its line."""
    groups: dict[tuple[str, str, str, Hw], list[schema.Result]] = {}
    for r in results:
        if r.ok and r.size > 0:
            groups.setdefault((r.scenario, r.runtime, r.call_id, r.hw), []).append(r)
    out = []
    for (scenario, runtime, call_id, hw), rs in groups.items():
        rs = sorted(rs, key=lambda r: r.size)
        if len({r.size for r in rs}) < MIN_SIZES:
            continue
        medians = [r.median() for r in rs]
        f = fit([r.size for r in rs], medians)
        out.append(
            schema.CostFit(
                scenario=scenario,
                runtime=runtime,
                call=rs[0].call,
                call_id=call_id,
                hw=hw,
                a_ns=f.a_ns,
                b_ns_per_byte=f.b_ns_per_byte,
                gb_per_s=f.gb_per_s,
                r2=f.r2,
                max_rel_residual=f.max_rel_residual,
                sizes=f.sizes,
                off_line=tuple(
                    schema.OffLine(size, per_unit, ratio)
                    for size, per_unit, ratio in implausible(f, medians)
                ),
            )
        )
    return out
