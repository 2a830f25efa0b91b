"""Report assembly: from what a session measured to a `schema.Report`. Pure:
everything it needs is passed in (the environment block and the time of
creation included), so the fast tests can check it on fixed records."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import bridge
from bridge.analysis import (
    cputime,
    decompose,
    fits,
    interop,
    noise,
    quietness,
    tls,
    upgrade,
    versus,
)
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
    windows: Mapping[str, noise.Usage] | None = None,
) -> schema.Report:
    """`usage` is the machine's during the whole run; `windows`, where given,
    its usage from the run's start to the end of each scenario, which that
    scenario's verdicts go by: the verdict printed as the scenario finished
    (bridge.measure.runner) is then the report's, whatever the machine did
    while later scenarios ran."""
    results = outcome.results
    units = {sc.name: sc.size_unit for sc in scenarios}  # the cells' wording: "at 1,024 iterations"
    noise_block = None if usage is None else noise.record(usage, results, environment, units)
    if noise_block is not None and cpu_time is not None:
        # The cells that waited for a CPU, or differ by CPU, say so beside the machine's noise.
        two_speed = frozenset(
            (c.scenario, c.runtime, c.call_id, c.size, str(c.hw))
            for c in noise_block.cells
            if c.shape == "bimodal"
        )
        extra = cputime.warnings(cpu_time, units, two_speed)
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
        fits=tuple(fits.fits_for(results, {sc.name: sc.size_unit for sc in scenarios})),
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
    # The verdicts once more, now that the report says how it sampled and how
    # busy the machine was: a "used" needs its interleaved rounds to agree,
    # and a larger gain on a busy machine (bridge.hw.verdicts). Then the
    # upgrade view, and runtimes against each other with their significance
    # (bridge.analysis.versus).
    found = [
        verdict
        for sc in scenarios
        for verdict in ab.verdict_list(
            [sc],
            results,
            outcome.runtimes,
            contexts,
            rounds=lambda r: versus.rounds_of(made, r),
            busy=quietness.busy((windows or {}).get(sc.name, usage), environment),
            sample_ns=_sample_ns(settings),
            waits=_waits(cpu_time),
            wait_high=cpu_time.wait_share_high if cpu_time is not None else 0.05,
        )
    ]
    # A size off its linear cost model is named with the machine's warnings.
    flags = tuple(text for f in made.fits for text in f.implausible)
    machine = made.noise
    if machine is not None and flags:
        machine = dataclasses.replace(machine, warnings=(*machine.warnings, *flags))
    return dataclasses.replace(
        made,
        noise=machine,
        verdicts=tuple(found),
        upgrades=tuple(upgrade.in_report(made)),
        differences=versus.differences(made),
        tls=tls.block(made, scenarios),
    )


def _sample_ns(settings: Mapping[str, Any]) -> float | None:
    """The planned length of one sample, from the run's settings."""
    ms = settings.get("sample_ms")
    return ms * 1e6 if isinstance(ms, int | float) and ms > 0 else None


def _waits(cpu_time: schema.CpuTime | None) -> dict[schema.CellKey, float]:
    """Each cell's wait share, from the cpu_time block."""
    if cpu_time is None:
        return {}
    return {
        schema.CellKey(c.scenario, c.runtime, c.call_id, c.size, c.hw): c.wait_share
        for c in cpu_time.cells
        if c.wait_share is not None
    }
