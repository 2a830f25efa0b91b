"""Report assembly: from what a session measured to a `schema.Report`. Pure:
everything it needs is passed in (the environment block and the time of
creation included), so the fast tests can check it on fixed records.

The report is built in two steps: the measured report (results, runtimes,
settings, the machine's figures, the hardware experiments), then its findings
(bridge.analysis.findings.compute), and the report is constructed once from
the two."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import bridge
from bridge.analysis import findings, interop, noise
from bridge.catalog.scenario import Scenario
from bridge.hw import ab
from bridge.measure.session import Outcome
from bridge.report import levels, schema
from bridge.report.hw import HwMode
from bridge.report.scenario import ScenarioRun


@dataclass(frozen=True)
class Measured:
    """What a run (or one scenario of it) measured, and around it.

    `usage` is the machine's during the whole run; `windows`, where given,
    its usage from the run's start to the end of each scenario, which that
    scenario's verdicts go by: the verdict printed as the scenario finished
    (bridge.measure.runner) is then the report's, whatever the machine did
    while later scenarios ran."""

    scenarios: Sequence[Scenario]
    outcome: Outcome
    contexts: Mapping[str, ab.HwContext]
    checks: Sequence[schema.InteropCheck]
    settings: dict[str, Any]
    hw: HwMode
    environment: dict[str, Any]
    created: str
    command: Sequence[str] = ()
    reproduce: str = ""
    concurrency: levels.Concurrency | None = None
    usage: noise.Usage | None = None
    cpu_time: schema.CpuTime | None = None
    windows: Mapping[str, noise.Usage] = field(default_factory=dict)


def base(m: Measured) -> schema.Report:
    """The report of what was measured, without findings."""
    outcome = m.outcome
    return schema.Report(
        bridge_version=bridge.__version__,
        created=m.created,
        command=list(m.command),
        reproduce=m.reproduce,
        settings=m.settings,
        scenarios=tuple(ScenarioRun.of(sc) for sc in m.scenarios),
        environment=m.environment,
        runtimes=outcome.runtimes,
        results=outcome.results,
        tc=outcome.tc,
        hardware=schema.Hardware(
            hw=m.hw, experiments=tuple(c.record() for c in m.contexts.values())
        ),
        interop=tuple(m.checks),
        errors=(*outcome.errors, *interop.mismatch_errors(m.checks, m.scenarios)),
        skipped=outcome.skipped,
        unstable=outcome.unstable,
        concurrency=m.concurrency,
        noise=None if m.usage is None else noise.measured(m.usage, m.windows),
        cpu_time=m.cpu_time,
    )


def report(m: Measured) -> schema.Report:
    """The report: what was measured, and its findings, computed once."""
    measured = base(m)
    return findings.report(measured, findings.compute(measured))
