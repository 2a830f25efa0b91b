"""What a scenario's sizes count, for the view: bytes for most kinds,
iterations for PBKDF2, "per call" for the fixed-size operations (sign,
verify, key agreement) (scenario.Scenario.size_unit). The wording itself is
bridge.view.words' (size_text, short, at), so that a verdict stored in a report and
every view say a size the same way: "1,024 iterations", never "1024 B";
sign rows are timed per call and show no MB/s. One time unit per column of
times (TimeScale)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bridge.catalog.vocab import ScenarioKind
from bridge.report import schema
from bridge.view import words

BYTES, ITERATIONS, PER_CALL = words.BYTES, words.ITERATIONS, words.PER_CALL
COLUMNS = {BYTES: "bytes", ITERATIONS: "iterations", PER_CALL: "message"}


def unit(report: schema.Report, scenario: str) -> str:
    """The unit of a scenario's sizes, from the report's scenario data (a
    report without it, or an import, counts bytes)."""
    sc = report.scenario(scenario)
    return sc.size_unit if sc is not None else BYTES


def column(unit: str, kind: ScenarioKind | None = None) -> str:
    """The size column's heading: bytes, iterations; the message a
    fixed-size operation signs (a key agreement's: the secret it derives)."""
    return "secret" if kind == ScenarioKind.AGREEMENT else COLUMNS.get(unit, unit)


def column_of(report: schema.Report, scenario: str) -> str:
    return column(unit(report, scenario), report.scenario_kind(scenario))


def throughput(unit: str) -> bool:
    """Does MB/s mean something: do bytes flow through the call?"""
    return unit == BYTES


def size_text(n: int, unit: str = BYTES) -> str:
    """16 bytes, 1 KiB; 1,024 iterations."""
    return words.size_text(n, unit)


def short(n: int, unit: str = BYTES) -> str:
    """16 B, 1 KiB; 1,024 iterations: the form lists of sizes use."""
    return words.short(n, unit)


def cell_value(n: int, unit: str = BYTES) -> str:
    """A size in a table's size column: 1,024 (iterations), 1000 (bytes)."""
    return f"{n:,}" if unit == ITERATIONS else str(n)


def sizes_run(report: schema.Report, scenario: str) -> list[int]:
    return sorted({r.size for r in report.results if r.scenario == scenario})


def at(report: schema.Report, scenario: str, size: int, brief: bool = False) -> str:
    """ "at 16 KiB", "at 1,024 iterations", "per call": where a cell of this
    report's scenario is, in a sentence ("at 16 B" `brief`, in lists)."""
    u = unit(report, scenario)
    several = u == PER_CALL and len(sizes_run(report, scenario)) > 1
    return words.at(size, u, several, brief)


def scenarios_run(report: schema.Report) -> list[str]:
    seen: dict[str, None] = {}
    for r in report.results:
        seen.setdefault(r.scenario, None)
    return list(seen)


def cell(report: schema.Report, scenario: str, runtime: str, call_id: str, size: int) -> str:
    """One cell named for a list of cells (unstable, drifting): its runtime
    and call, its scenario where the run has several, and where it is:
    "openssl@1.1.1w speed-ecdh (x25519) per call",
    "erlang@25.2.3 pbkdf2_hmac at 1,024 iterations"."""
    name = f" ({scenario})" if len(scenarios_run(report)) > 1 else ""
    return f"{runtime} {call_id}{name} {at(report, scenario, size, brief=True)}"


# -- time: one unit per column ------------------------------------------------


@dataclass(frozen=True)
class TimeScale:
    """The unit of a column of per-call times: every figure in the column is
    written in it, and the heading names it ("µs/op"), so that 613,346 and
    5.88ms never share a column."""

    name: str  # ns | µs | ms | s
    ns: float  # nanoseconds in one

    def fmt(self, ns: float) -> str:
        v = ns / self.ns
        if abs(v) >= 100 or self.name == "ns" and abs(v) >= 10:
            return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}"
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"

    def per_op(self) -> str:
        return f"{self.name}/op"


SCALES = (TimeScale("s", 1e9), TimeScale("ms", 1e6), TimeScale("µs", 1e3), TimeScale("ns", 1.0))


def time_scale(values: Iterable[float]) -> TimeScale:
    """The largest unit in which the smallest figure still reads at least
    100 (three digits before the point): nanoseconds for most calls, µs for
    PBKDF2, ms for whole files; one larger where the largest figure would
    need eight digits and the smallest still reads 1 or more (RSA: 40 µs
    beside 117 ms)."""
    xs = [v for v in values if v > 0]
    low, high = min(xs, default=0.0), max(xs, default=0.0)
    i = next((i for i, s in enumerate(SCALES) if low / s.ns >= 100), len(SCALES) - 1)
    while i > 0 and high / SCALES[i].ns >= 1e7 and low / SCALES[i - 1].ns >= 1:
        i -= 1
    return SCALES[i]


def scale_of(results: Iterable[schema.Result]) -> TimeScale:
    """The scale of a table's time column: from its rows' medians."""
    return time_scale(r.median() for r in results if r.ok)
