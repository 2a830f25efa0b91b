"""Report assembly: from what a session measured to a `schema.Report`. Pure:
everything it needs is passed in (the environment block and the time of
creation included), so the fast tests can check it on fixed records."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import bridge
from bridge.analysis import cputime, decompose, fits, interop, noise, upgrade, versus
from bridge.catalog.scenario import Scenario
from bridge.hw import ab
from bridge.measure.session import Outcome
from bridge.report import levels, schema
from bridge.report.hw import HwMode


def report(
    *,
    scenarios: Sequence[Scenario],
    outcome: Outcome,
    contexts: Mapping[str, ab.HwContext],
    checks: Sequence[schema.InteropCheck],
    settings: dict[str, Any],
    hw: HwMode,
    environment: dict[str, Any],
    created: str,
    command: Sequence[str] = (),
    reproduce: str = "",
    concurrency: levels.Concurrency | None = None,
    usage: noise.Usage | None = None,
    cpu_time: schema.CpuTime | None = None,
) -> schema.Report:
    results = outcome.results
    units = {sc.name: sc.size_unit for sc in scenarios}  # the cells' wording: "at 1,024 iterations"
    noise_block = None if usage is None else noise.record(usage, results, environment, units)
    if noise_block is not None and cpu_time is not None:
        # The cells that waited for a CPU, or differ by CPU, say so beside the machine's noise.
        extra = cputime.warnings(cpu_time, units)
        noise_block = dataclasses.replace(noise_block, warnings=(*noise_block.warnings, *extra))
    made = schema.Report(
        bridge_version=bridge.__version__,
        created=created,
        command=list(command),
        reproduce=reproduce,
        settings=settings,
        scenarios=tuple(sc.to_json() for sc in scenarios),
        environment=environment,
        runtimes=outcome.runtimes,
        results=results,
        verdicts=tuple(ab.verdict_list(scenarios, results, outcome.runtimes, contexts)),
        fits=tuple(fits.fits_for(results)),
        tc=outcome.tc,
        hardware=schema.Hardware(hw=hw, experiments=tuple(c.record() for c in contexts.values())),
        interop=tuple(checks),
        errors=(*outcome.errors, *interop.mismatch_errors(checks, scenarios)),
        skipped=outcome.skipped,
        unstable=outcome.unstable,
        concurrency=concurrency,
        decompositions=tuple(decompose.decompose(scenarios, results, outcome.runtimes)),
        noise=noise_block,
        cpu_time=cpu_time,
    )
    # The upgrade view, and runtimes against each other with their significance
    # (bridge.analysis.versus).
    return dataclasses.replace(
        made, upgrades=tuple(upgrade.in_report(made)), differences=versus.differences(made)
    )
