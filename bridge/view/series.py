"""What a picture of a report draws, as data: each hw-on cell paired with
its masked twin and the twin's slow-down (off/on, the verdict's figure and
CI); each call's ratio across sizes to another runtime (the first named of
its kind, the fastest, or the first report's under `bridge compare`), with
the CI and verdict the findings hold; and whether bytes flow through a
scenario's calls (MB/s, else ops/s)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bridge import stats
from bridge.catalog.vocab import ScenarioKind
from bridge.report import schema
from bridge.report.comparison import Comparison, Row
from bridge.report.hw import Hw
from bridge.view import codes, units
from bridge.view.context import ordered

# Kinds whose calls move bytes through (a digest, a MAC, a cipher, random
# bytes): MB/s means something there, and nothing on a sign, verify, key
# agreement, key generation or a KDF's iterations.
THROUGHPUT_KINDS = frozenset(
    {ScenarioKind.HASH, ScenarioKind.FILE_DIGEST, ScenarioKind.MAC}
    | {ScenarioKind.CIPHER, ScenarioKind.RANDOM}
)


def bytes_flow(report: schema.Report, scenario: str) -> bool:
    kind = report.scenario_kind(scenario)
    # A report without scenario data (an import) counts bytes, as it always did.
    return units.unit(report, scenario) == units.BYTES and (not kind or kind in THROUGHPUT_KINDS)


@dataclass(frozen=True)
class Pair:
    """One call of one runtime at one size: the machine as found, its masked
    twin, and the twin's slow-down (off/on) with its 95% CI."""

    on: schema.Result | None
    off: schema.Result | None
    verdict: schema.HwVerdict | None

    @property
    def first(self) -> schema.Result:
        r = self.on or self.off
        assert r is not None
        return r

    def off_on(self) -> tuple[float, tuple[float, float] | None] | None:
        """hw off over hw on: the verdict's figure, else computed here."""
        v = self.verdict
        if v is not None and v.speedup is not None:
            return v.speedup, v.speedup_ci95
        on, off = self.on, self.off
        if on is None or off is None or not on.ok or not off.ok:
            return None
        if on.imported or off.imported or len(on.samples) < 2 or len(off.samples) < 2:
            m = on.median()
            return (off.median() / m, None) if m > 0 else None
        ratio, ci = stats.relative_ci(on.per_op_ns(), off.per_op_ns())
        return ratio, ci


def pairs(report: schema.Report, results: list[schema.Result]) -> list[Pair]:
    """In the views' order, hw on and off of a call and size in one pair."""
    verdict_of = {(v.scenario, v.runtime, v.call_id, v.size): v for v in report.verdicts}
    grouped: dict[tuple, dict[Hw, schema.Result]] = {}
    for r in ordered(report, results):
        grouped.setdefault((r.scenario, r.runtime, r.call_id, r.size), {})[r.hw] = r
    return [Pair(by.get(Hw.ON), by.get(Hw.OFF), verdict_of.get(k)) for k, by in grouped.items()]


# -- ratios between runtimes and reports -------------------------------------


class Against(enum.Enum):
    """What a ratio line is over."""

    FIRST = "first"  # the first-named runtime of its kind, in the same report
    REPORT = "report"  # the same cell of the first report (`bridge compare`)
    FASTEST = "fastest"  # the fastest call at its size, hw on


# The verdict of the fastest call at a size, against itself (it stands at 1).
FASTEST = "fastest"


@dataclass(frozen=True)
class Ratio:
    size: int
    ratio: float
    ci95: tuple[float, float] | None
    verdict: str  # a Significance, or FASTEST

    @property
    def bounds(self) -> tuple[float, float]:
        """The CI, widened to hold the ratio (the ratio itself where none)."""
        lo, hi = self.ci95 if self.ci95 is not None else (self.ratio, self.ratio)
        return min(lo, self.ratio), max(hi, self.ratio)


@dataclass(frozen=True)
class RatioLine:
    """One runtime's call (report `report`) over `base_runtime` (report
    `base_report`) across sizes, and the upgrade view's word on it where
    the two are versions of one runtime; `base_hw` the base's hw state
    (a compare can pair a report's only state with another's)."""

    against: Against
    scenario: str
    report: int
    runtime: str
    call_id: str
    hw: Hw
    base_report: int
    base_runtime: str
    points: tuple[Ratio, ...]
    upgrade: schema.Upgrade | None = None
    base_hw: Hw = Hw.ON


def ratios(reports: Sequence[schema.Report], compared: Comparison | None = None) -> list[RatioLine]:
    """Every report's own differences (against the first named, against the
    fastest: the findings the cli completes a report with), then each
    further report's over the first (`compared`: bridge compare's rows);
    only the points a plot's log axes can hold (size and ratio above 0)."""
    out = []
    for n, rep in enumerate(reports):
        out += over_first(rep, n)
    if compared is not None:
        out += _reports(compared)
    out = [x for x in (_drawable(line) for line in out) if x.points]
    for n, rep in enumerate(reports):
        out += _fastest(n, rep)
    return out


def _drawable(line: RatioLine) -> RatioLine:
    return replace(line, points=tuple(p for p in line.points if p.ratio > 0 and p.size > 0))


def over_first(rep: schema.Report, n: int = 0) -> list[RatioLine]:
    """Each runtime's call over the first named of its kind (the findings'
    differences), one line per call, hw state and base, sizes in order."""
    by: dict[tuple, list[schema.Difference]] = {}
    for d in rep.differences or ():
        if d.against == codes.FIRST:
            key = (d.scenario, d.runtime, d.call_id, d.hw, d.baseline_runtime)
            by.setdefault(key, []).append(d)
    out = []
    for (scenario, runtime, call_id, hw, base), ds in by.items():
        up = next(
            (
                u
                for u in rep.upgrades
                if (u.scenario, u.call_id, u.hw, u.new, u.old)
                == (scenario, call_id, hw, runtime, base)
            ),
            None,
        )
        points = tuple(Ratio(d.size, d.ratio, d.ci95, d.verdict) for d in ds)
        line = RatioLine(Against.FIRST, scenario, n, runtime, call_id, hw, n, base, _sized(points))
        out.append(replace(line, upgrade=up, base_hw=hw))
    return out


def over_report(rows: Sequence[Row], i: int = 1) -> list[RatioLine]:
    """Report `i`'s cells over the first report's (compare's rows), one
    line per call, runtimes and hw states, in the order of their smallest size."""
    by: dict[tuple, list[Row]] = {}
    for row in sorted(rows, key=lambda r: r.size):
        key = (row.scenario, row.runtime_a, row.runtime_b, row.call_id, row.hw_a, row.hw_b)
        by.setdefault(key, []).append(row)
    out = []
    for (scenario, a, b, call_id, hw_a, hw_b), rs in by.items():
        points = tuple(Ratio(r.size, r.ratio, r.ci95, r.verdict) for r in rs)
        out.append(
            RatioLine(Against.REPORT, scenario, i, b, call_id, hw_b, 0, a, points, None, hw_a)
        )
    return out


def _reports(c: Comparison) -> list[RatioLine]:
    out = []
    for i, rows in c.pairs:
        for line in over_report(rows, i):
            old = f"{c.labels[0]}: {line.base_runtime}"
            new = f"{c.labels[i]}: {line.runtime}"
            up = next(
                (
                    u
                    for u in c.upgrades.get(i, ())
                    if (u.scenario, u.call_id, u.hw, u.old, u.new)
                    == (line.scenario, line.call_id, line.hw, old, new)
                ),
                None,
            )
            out.append(replace(line, upgrade=up))
    return out


def _fastest(n: int, rep: schema.Report) -> list[RatioLine]:
    """Each call over the fastest at its size, hw on; the fastest itself
    stands at 1 (verdict FASTEST)."""
    by: dict[tuple[str, str, str], list[Ratio]] = {}
    for d in rep.differences or ():
        if d.against == codes.FASTEST and not d.hw.masked and d.ratio > 0 and d.size > 0:
            by.setdefault((d.scenario, d.runtime, d.call_id), []).append(
                Ratio(d.size, d.ratio, d.ci95, d.verdict)
            )
            fastest = (d.scenario, d.baseline_runtime, d.baseline_call_id)
            if all(p.size != d.size for p in by.get(fastest, [])):
                by.setdefault(fastest, []).append(Ratio(d.size, 1.0, None, FASTEST))
    return [
        RatioLine(Against.FASTEST, scenario, n, runtime, call_id, Hw.ON, n, "", _sized(points))
        for (scenario, runtime, call_id), points in by.items()
    ]


def _sized(points: Sequence[Ratio]) -> tuple[Ratio, ...]:
    return tuple(sorted(points, key=lambda p: p.size))
