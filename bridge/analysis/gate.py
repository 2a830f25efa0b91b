"""compare's gate: `--fail-if-slower PCT` and `--fail-if-faster PCT`.

A cell trips the gate when compare calls its difference significant
(bridge.analysis.compare: the bootstrap 95% CI of B/A clears the 3% noise
margin) in the gate's direction, and the CI's *near end* (the end nearest 1:
the low end for slower, the high end for faster) is past the threshold too.
So a cell trips only when the data say, at 95%, that it moved by at least
PCT; a 6% slowdown whose CI reaches down to 3% does not trip a 5% gate. The
point estimate would trip on noise about half the time for a change of
exactly PCT, and the far end far more often.

PCT is a change in speed, the same each way on a log scale: slower by 5%
is B/A above 1.05, faster by 5% is A/B above 1.05 (B/A below 1/1.05), so
100 is twice as slow, or twice as fast.

Cells that do not trip are still named when their ratio is past the
threshold (and the noise margin) with a reason code (`Unsure`), and so are
cells that only one report has (`compare.Unpaired`): neither trips the gate.

Findings only, as codes and figures; bridge.cli words them.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bridge import stats
from bridge.analysis import compare
from bridge.report import schema

MAX_PCT = 1000.0  # 11x: past this a threshold is a typo, not a gate


class Direction(enum.Enum):
    SLOWER = "slower"
    FASTER = "faster"


class Outcome(enum.Enum):
    PASSED = "passed"
    FAILED = "failed"  # a cell is past a threshold
    NOTHING = "nothing-to-judge"  # a pair of reports with no cell lined up


class Unsure(enum.Enum):
    """Why a cell whose ratio is past the threshold does not trip the gate."""

    NEAR_END = "near-end"  # significant, but the CI's near end is within the threshold
    WITHIN_NOISE = "within-noise"  # the CI reaches into compare's noise margin
    FEW_SAMPLES = "few-samples"  # a side has too few samples for a CI
    NO_SAMPLES = "no-samples"  # imported numbers: no samples at all
    UNEQUAL_LOAD = "unequal-load"  # the reports' machines differed in the direction of the change


# compare's verdicts (Row.verdict) that say why a cell is not significant.
_WITHHELD = {
    "within noise": Unsure.WITHIN_NOISE,
    compare.FEW: Unsure.FEW_SAMPLES,
    "unknown (no samples)": Unsure.NO_SAMPLES,
    compare.UNEQUAL: Unsure.UNEQUAL_LOAD,
}


def check_pct(value: float) -> float:
    """PCT itself: a finite number from 0 to MAX_PCT; ValueError otherwise."""
    if not math.isfinite(value) or not 0 <= value <= MAX_PCT:
        raise ValueError(value)
    return value


@dataclass(frozen=True)
class Threshold:
    direction: Direction
    pct: float

    @property
    def bound(self) -> float:
        """The ratio B/A the threshold is at."""
        factor = 1 + self.pct / 100
        return factor if self.direction is Direction.SLOWER else 1 / factor

    def past(self, ratio: float, margin: float = 0.0) -> bool:
        """Whether B/A `ratio` is beyond the threshold (strictly), and beyond
        1 ± `margin` too."""
        if self.direction is Direction.SLOWER:
            return ratio > max(self.bound, 1 + margin)
        return ratio < min(self.bound, 1 - margin)

    def near_end(self, ci: tuple[float, float]) -> float:
        """The end of a CI of B/A nearest 1 on this side."""
        return ci[0] if self.direction is Direction.SLOWER else ci[1]

    def to_json(self) -> dict[str, Any]:
        return {"direction": self.direction.value, "pct": self.pct, "bound": round(self.bound, 6)}


@dataclass(frozen=True)
class Finding:
    """A lined-up cell past a threshold: it trips the gate (`unsure` None),
    or its ratio is past but the evidence is not (`unsure` says why)."""

    other: int  # the report compared with the first (index into the labels)
    row: compare.Row
    threshold: Threshold
    unsure: Unsure | None

    @property
    def tripped(self) -> bool:
        return self.unsure is None

    @property
    def near(self) -> float | None:
        """The CI's end nearest 1 (None without a CI)."""
        return self.threshold.near_end(self.row.ci95) if self.row.ci95 else None


@dataclass(frozen=True)
class Gate:
    thresholds: tuple[Threshold, ...]
    lined_up: tuple[tuple[int, int], ...]  # (other report, cells lined up with the first)
    findings: tuple[Finding, ...]
    one_sided: tuple[tuple[int, compare.Unpaired], ...]  # (other report, the cell)

    @property
    def tripped(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.tripped)

    @property
    def unsure(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.tripped)

    @property
    def empty(self) -> tuple[int, ...]:
        """The other reports with no cell lined up with the first."""
        return tuple(i for i, n in self.lined_up if n == 0)

    @property
    def outcome(self) -> Outcome:
        if self.tripped:
            return Outcome.FAILED
        return Outcome.NOTHING if self.empty else Outcome.PASSED

    def to_json(self, labels: Sequence[str]) -> dict[str, Any]:
        def cell(other: int) -> dict[str, Any]:
            return {"baseline": labels[0], "other": labels[other]}

        return {
            "outcome": self.outcome.value,
            "thresholds": [t.to_json() for t in self.thresholds],
            "statistic": stats.LOW_STATISTIC,
            "lined_up": [{**cell(i), "cells": n} for i, n in self.lined_up],
            "cells": [
                {
                    **cell(f.other),
                    **_row_json(f.row),
                    "direction": f.threshold.direction.value,
                    "pct": f.threshold.pct,
                    "tripped": f.tripped,
                    "unsure": f.unsure.value if f.unsure else None,
                }
                for f in self.findings
            ],
            "one_sided": [
                {**cell(i), "only_in": labels[0 if u.side == 0 else i], **_unpaired_json(u)}
                for i, u in self.one_sided
            ],
        }


def _row_json(r: compare.Row) -> dict[str, Any]:
    return {
        "scenario": r.scenario,
        "kind": r.kind,
        "call": r.call,
        "call_id": r.call_id,
        "size": r.size,
        "hw_a": str(r.hw_a),
        "hw_b": str(r.hw_b),
        "runtime_a": r.runtime_a,
        "runtime_b": r.runtime_b,
        "ratio": r.ratio,
        "ci95": list(r.ci95) if r.ci95 else None,
        "verdict": r.verdict,
    }


def _unpaired_json(u: compare.Unpaired) -> dict[str, Any]:
    return {
        "scenario": u.scenario,
        "kind": u.kind,
        "call": u.call,
        "call_id": u.call_id,
        "size": u.size,
        "hw": str(u.hw),
        "runtime": u.runtime,
    }


def assess(
    row: compare.Row, threshold: Threshold, other: int = 1, margin: float = compare.MARGIN
) -> Finding | None:
    """What the gate makes of one row (of report `other` against the first)
    at one threshold; None when there is nothing to say: the ratio is not
    past the threshold, or not past compare's noise margin."""
    if row.verdict == threshold.direction.value and row.ci95 is not None:
        if threshold.past(threshold.near_end(row.ci95)):
            return Finding(other, row, threshold, None)
        if threshold.past(row.ratio, margin):
            return Finding(other, row, threshold, Unsure.NEAR_END)
        return None
    why = _WITHHELD.get(row.verdict)
    if why is None or not threshold.past(row.ratio, margin):
        return None
    return Finding(other, row, threshold, why)


def judge(
    comparison: compare.Comparison,
    reports: Sequence[schema.Report],
    thresholds: Sequence[Threshold],
) -> Gate:
    """The gate over a comparison of `reports` (the first the baseline)."""
    findings = [
        found
        for i, rows in comparison.pairs
        for row in rows
        for threshold in thresholds
        if (found := assess(row, threshold, i)) is not None
    ]
    one_sided = tuple(
        (i, u) for i in range(1, len(reports)) for u in compare.unpaired(reports[0], reports[i])
    )
    return Gate(
        thresholds=tuple(thresholds),
        lined_up=tuple((i, len(rows)) for i, rows in comparison.pairs),
        findings=tuple(findings),
        one_sided=one_sided,
    )
