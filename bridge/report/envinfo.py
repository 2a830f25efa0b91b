"""What `bridge env` says of the machine and its runtimes, without measuring:
the report's own records (the machine, each runtime's provenance, the A/B
experiment each would have), one record for all of it. `--format json`
writes it as it always did: environment, runtimes, hardware."""

from __future__ import annotations

from dataclasses import dataclass

from bridge.report.codec import Record
from bridge.report.context import Environment
from bridge.report.schema import HwExperiment, RunError, Runtime, Skipped


@dataclass(frozen=True)
class EnvHardware(Record):
    """The masks a run would use per runtime (its experiment), and the
    runtimes that could not start (skipped, or an error)."""

    experiments: tuple[HwExperiment, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    errors: tuple[RunError, ...] = ()


@dataclass(frozen=True)
class EnvDescription(Record):
    """`bridge env`: the machine (a report's `environment`), each runtime
    started once, and the experiments."""

    environment: Environment
    runtimes: tuple[Runtime, ...] = ()
    hardware: EnvHardware = EnvHardware()
