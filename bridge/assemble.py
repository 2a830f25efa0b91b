"""Report assembly: from what a session measured to a `model.Report`. Pure:
everything it needs is passed in (the environment block and the time of
creation included), so the fast tests can check it on fixed records."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import bridge
from bridge import ab, decompose, fits, interop, levels, model, noise, upgrade, versus
from bridge.scenario import Scenario
from bridge.session import Outcome


def report(
    *,
    scenarios: Sequence[Scenario],
    outcome: Outcome,
    contexts: Mapping[str, ab.HwContext],
    checks: Sequence[model.InteropCheck],
    settings: dict[str, Any],
    hw: str,
    environment: dict[str, Any],
    created: str,
    command: Sequence[str] = (),
    reproduce: str = "",
    concurrency: levels.Concurrency | None = None,
    usage: noise.Usage | None = None,
) -> model.Report:
    results = outcome.results
    made = model.Report(
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
        hardware=model.Hardware(hw=hw, experiments=tuple(c.record() for c in contexts.values())),
        interop=tuple(checks),
        errors=(*outcome.errors, *interop.mismatch_errors(checks)),
        skipped=outcome.skipped,
        unstable=outcome.unstable,
        concurrency=concurrency,
        decompositions=tuple(decompose.decompose(scenarios, results, outcome.runtimes)),
        noise=None if usage is None else noise.record(usage, results, environment),
    )
    # The upgrade view, and runtimes against each other with their significance
    # (bridge.versus).
    return dataclasses.replace(
        made, upgrades=tuple(upgrade.in_report(made)), differences=versus.differences(made)
    )
