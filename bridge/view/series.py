"""What a picture of a report draws, as data: each hw-on cell paired with
its masked twin and the twin's slow-down (off/on, the verdict's figure and
CI), and whether bytes flow through a scenario's calls (MB/s, else ops/s)."""

from __future__ import annotations

from dataclasses import dataclass

from bridge import stats
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.view import units
from bridge.view.context import ordered

# Kinds whose calls move bytes through (a digest, a MAC, a cipher, random
# bytes): MB/s means something there, and nothing on a sign, verify, key
# agreement, key generation or a KDF's iterations.
THROUGHPUT_KINDS = frozenset({"hash", "file-digest", "mac", "cipher", "random"})


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
