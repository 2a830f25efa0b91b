"""`bridge compare`'s records (bridge.analysis.compare computes them): each
cell of one report against the same cell of another, with its significance
and reasons; what each report recorded of its machine; and the whole
comparison, with its JSON form ("bridge.compare/1"). A view reads these,
never the analysis that made them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bridge.report import schema
from bridge.report.findings import Basis, Reason, Significance, Statistic
from bridge.report.hw import Hw


@dataclass(frozen=True)
class Row:
    """One cell of report B against the same cell of report A: B/A of the
    statistic (`low_a`, `low_b`: the 10th percentiles), its CI, whether it
    is a difference, and why not when it cannot be told."""

    scenario: str
    kind: str
    call: str
    call_id: str
    size: int
    hw_a: Hw
    hw_b: Hw
    runtime_a: str
    runtime_b: str
    median_a: float
    median_b: float
    ratio: float
    ci95: tuple[float, float] | None
    verdict: Significance
    low_a: float | None = None  # the statistic the ratio is of
    low_b: float | None = None
    statistic: Statistic = Statistic.LOW
    reasons: tuple[Reason, ...] = ()
    # CPU: ratio, CI and lows are of CPU time per call (the loads differed)
    basis: Basis = Basis.WALL

    @property
    def significant(self) -> bool:
        return self.verdict in (Significance.FASTER, Significance.SLOWER)

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "reasons"}
        out["ci95"] = list(self.ci95) if self.ci95 else None
        out["reasons"] = [r.to_json() for r in self.reasons]
        return {
            k: v.value if isinstance(v, (Hw, Significance, Statistic, Basis)) else v
            for k, v in out.items()
        }


@dataclass(frozen=True)
class Conditions:
    """What a report recorded of its machine during the run."""

    cpus: int | None
    load: float | None  # the larger 1-minute load average, before or after
    others_cpus: float | None
    steal: float | None
    wait: float | None  # share of the sample windows spent waiting for a CPU

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Comparison:
    labels: list[str]  # one per report
    pairs: list[tuple[int, list[Row]]]  # (index of the report compared with the first, rows)
    # (what, value in each report; None where that report cannot have it)
    environment_diff: list[tuple[str, list[str | None]]]
    # Per report compared with the first: the upgrade view (bridge.analysis.upgrade),
    # where a runtime's version differs between the two.
    upgrades: dict[int, list[schema.Upgrade]] = field(default_factory=dict)
    # What each report recorded of its machine (None: nothing, e.g. imported).
    conditions: list[Conditions | None] = field(default_factory=list)
    # Per report compared with the first, when their machines differed by
    # more than noise: UNEQUAL_LOAD, saying which was busier.
    unequal: dict[int, Reason] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "bridge.compare/1",
            "reports": self.labels,
            "statistic": Statistic.LOW.value,
            "conditions": [c.to_json() if c else None for c in self.conditions],
            "comparisons": [
                {
                    "baseline": self.labels[0],
                    "other": self.labels[i],
                    "unequal_load": self.unequal[i].to_json() if i in self.unequal else None,
                    "rows": [r.to_json() for r in rows],
                    "upgrades": [u.to_json() for u in self.upgrades.get(i, [])],
                }
                for i, rows in self.pairs
            ],
            "environment_diff": [{"what": w, "values": v} for w, v in self.environment_diff],
        }
