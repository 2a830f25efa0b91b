"""What a scenario's sizes count, for the renderers: bytes for most kinds,
iterations for PBKDF2, "per call" for the fixed-size operations (sign,
verify, key agreement) (scenario.Scenario.size_unit). The wording itself is
hw.verdicts' (size_text, short, at), so that a verdict stored in a report and
every view say a size the same way: "1,024 iterations", never "1024 B";
sign rows are timed per call and show no MB/s."""

from __future__ import annotations

from bridge.catalog.scenario import KINDS
from bridge.hw import verdicts
from bridge.report import schema

BYTES, ITERATIONS, PER_CALL = verdicts.BYTES, verdicts.ITERATIONS, verdicts.PER_CALL
COLUMNS = {BYTES: "bytes", ITERATIONS: "iterations", PER_CALL: "message"}


def of_kind(kind: str) -> str:
    cls = KINDS.get(kind)
    return cls.size_unit if cls else BYTES


def unit(report: schema.Report, scenario: str) -> str:
    """The unit of a scenario's sizes, from the report's scenario data (a
    report without it, or from before a kind existed, counts bytes)."""
    return of_kind(report.scenario_kind(scenario))


def column(unit: str, kind: str = "") -> str:
    """The size column's heading: bytes, iterations; the message a
    fixed-size operation signs (a key agreement's: the secret it derives)."""
    return "secret" if kind == "agreement" else COLUMNS.get(unit, unit)


def column_of(report: schema.Report, scenario: str) -> str:
    return column(unit(report, scenario), report.scenario_kind(scenario))


def throughput(unit: str) -> bool:
    """Does MB/s mean something: do bytes flow through the call?"""
    return unit == BYTES


def size_text(n: int, unit: str = BYTES) -> str:
    """16 bytes, 1 KiB; 1,024 iterations."""
    return verdicts.size_text(n, unit)


def short(n: int, unit: str = BYTES) -> str:
    """16 B, 1 KiB; 1,024 iterations: the form lists of sizes use."""
    return verdicts.short(n, unit)


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
    return verdicts.at(size, u, several, brief)


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
