"""What a scenario's sizes count, for the renderers: bytes for most kinds,
iterations for PBKDF2 (scenario.KdfScenario.size_unit). A column, a
sentence or a verdict then says "100,000 iterations", never "100000 bytes",
and a throughput in MB/s is left out where it would mean nothing."""

from __future__ import annotations

from bridge.catalog.scenario import KINDS
from bridge.hw import verdicts
from bridge.report import schema

BYTES = "bytes"


def of_kind(kind: str) -> str:
    cls = KINDS.get(kind)
    return cls.size_unit if cls else BYTES


def unit(report: schema.Report, scenario: str) -> str:
    """The unit of a scenario's sizes, from the report's scenario data (a
    report without it, or from before a kind existed, counts bytes)."""
    return of_kind(report.scenario_kind(scenario))


def size_text(n: int, unit: str = BYTES) -> str:
    """16 bytes, 1 KiB; 100,000 iterations."""
    return verdicts.size_text(n, unit)


def short(n: int, unit: str = BYTES) -> str:
    """16 B, 1 KiB; 100,000 iterations: the form lists of sizes use."""
    text = size_text(n, unit)
    return text.replace(" bytes", " B") if unit == BYTES else text
