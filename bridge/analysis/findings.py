"""A report's findings, computed once, in order, from what was measured.

`compute(base)` takes a report that holds only measurements (results,
runtimes, settings, the machine's figures, the hardware experiments) and
returns every finding: the hardware verdicts, the differences between
runtimes, the upgrade view, the cost fits, the set-up decompositions, the
noise block's cells and findings, the `tls` block, and the concurrency
block's scaling, serialisation, level 1 and findings. `report(base, found)` is the report,
constructed once from the two. bridge.measure.assemble calls both for a run
(and for each scenario as it ends); `complete` gives a report read from disk
the findings it lacks (older reports: no differences), with the same
functions, before any view is built.

The order matters: the upgrade view reads the differences (so a ratio says
the same in a table and a sentence), the noise findings read the fits and
the cells' shapes. Everything here is pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from bridge.analysis import concurrency, cputime, decompose, fits, noise, tls, upgrade, versus
from bridge.catalog.scenario import Facts
from bridge.hw import ab, verdicts
from bridge.report import schema
from bridge.report.context import RunSettings
from bridge.report.levels import Concurrency
from bridge.report.tls import Tls as TlsBlock


@dataclass(frozen=True)
class Findings:
    """What a report's measurements say (see the module)."""

    verdicts: tuple[schema.HwVerdict, ...] = ()
    differences: tuple[schema.Difference, ...] = ()
    upgrades: tuple[schema.Upgrade, ...] = ()
    fits: tuple[schema.CostFit, ...] = ()
    decompositions: tuple[schema.Decomposition, ...] = ()
    noise: schema.Noise | None = None
    tls: TlsBlock | None = None
    concurrency: Concurrency | None = None


def compute(base: schema.Report, baseline: str | None = None) -> Findings:
    """Every finding of `base`, in order. `baseline`: the runtime each of its
    kind is compared with (--baseline), instead of the first named."""
    scenarios = list(base.scenarios)
    units = {sc.name: sc.size_unit for sc in scenarios}
    found_fits = tuple(fits.fits_for(base.results))
    differences = versus.differences(base, baseline)
    return Findings(
        verdicts=hw_verdicts(base, scenarios),
        differences=differences,
        upgrades=tuple(upgrade.in_report(base, differences)),
        fits=found_fits,
        decompositions=tuple(decompose.decompose(scenarios, base.results, base.runtimes)),
        noise=_noise(base, units, found_fits),
        tls=tls.block(base, scenarios),
        concurrency=None
        if base.concurrency is None
        else concurrency.with_findings(
            base.concurrency, base.results, {rt.id: rt.kind for rt in base.runtimes}
        ),
    )


def report(base: schema.Report, found: Findings) -> schema.Report:
    """The report: `base`'s measurements and its findings, constructed once."""
    measured = {
        f.name: getattr(base, f.name)
        for f in dataclasses.fields(schema.Report)
        if f.name not in _FOUND
    }
    return schema.Report(**measured, **{k: getattr(found, k) for k in _FOUND})


# The fields of a report that hold findings, each computed here; every other
# field holds what was measured (and the run's own records), kept as it is.
_FOUND = tuple(f.name for f in dataclasses.fields(Findings))


def complete(loaded: schema.Report) -> schema.Report:
    """A report read from disk with the findings it lacks: the differences
    between runtimes (reports from before them). What it holds stays as it
    was written: its verdicts, and the sentences of reports from before the
    reasons, which a view shows where a finding has no reason codes."""
    if loaded.differences is not None:
        return loaded
    return report(loaded, _kept(loaded, versus.differences(loaded)))


def rebased(loaded: schema.Report, baseline: str) -> schema.Report:
    """A report with its runtimes compared against `baseline` (--baseline)."""
    versus.check_baseline(loaded, baseline)
    return report(loaded, _kept(loaded, versus.differences(loaded, baseline)))


def _kept(loaded: schema.Report, differences: tuple[schema.Difference, ...]) -> Findings:
    """A report's own findings, with these differences."""
    found = {k: getattr(loaded, k) for k in _FOUND}
    return Findings(**{**found, "differences": differences})


# -- the hardware verdicts -------------------------------------------------------


def hw_verdicts(base: schema.Report, scenarios: list[Facts]) -> tuple[schema.HwVerdict, ...]:
    """A verdict per cell and feature of the A/B, judged scenario by
    scenario on the machine up to that scenario's end (noise.windows): the
    verdict printed as a scenario finished is then the report's."""
    info = {rt.id: rt for rt in base.runtimes if not rt.masked}
    arch = base.environment.arch or ""
    contexts = {
        e.runtime: ab.HwContext.of(e, info[e.runtime], arch)
        for e in base.hardware.experiments or ()
        if e.runtime in info
    }
    if not contexts:
        return ()
    cpu_time = base.cpu_time
    seen = ab.Seen(
        rounds=lambda r: versus.rounds_of(base, r),
        sample_ns=_sample_ns(base.settings),
        waits=_waits(cpu_time),
        wait_high=cpu_time.wait_share_high if cpu_time is not None else 0.05,
        reruns=_reruns(base.settings),
    )
    out = []
    for sc in scenarios:
        busy = noise.busy(base.noise, sc.name, base.environment)
        scenario_seen = ab.Seen(**{**seen.__dict__, "busy": busy})
        out += ab.verdict_list([sc], base.results, base.runtimes, contexts, scenario_seen)
    return tuple(out)


def _sample_ns(settings: RunSettings) -> float | None:
    """The planned length of one sample, from the run's settings."""
    ms = settings.sample_ms
    return ms * 1e6 if ms is not None and ms > 0 else None


def _waits(cpu_time: schema.CpuTime | None) -> dict[schema.CellKey, float]:
    """Each cell's wait share, from the cpu_time block."""
    if cpu_time is None:
        return {}
    return {
        schema.CellKey(c.scenario, c.runtime, c.call_id, c.size, c.hw): c.wait_share
        for c in cpu_time.cells
        if c.wait_share is not None
    }


def _reruns(settings: RunSettings) -> verdicts.Reruns:
    """The options that give a verdict more evidence, from the run's
    settings: --quick's one process and four rounds are what to drop;
    otherwise three process pairs (each needs three rounds) and twice the
    rounds."""
    rounds = settings.rounds if settings.rounds is not None and settings.rounds > 0 else 20
    samples = settings.samples
    per_round = samples // rounds if samples is not None and samples >= rounds else 0
    if settings.quick:
        return verdicts.Reruns(
            processes="without --quick",
            rounds="without --quick",
            per_round=per_round,
        )
    pairs = verdicts.FEW_PAIRS
    processes = f"--processes {pairs}"
    if rounds < 3 * pairs:
        processes += f" --rounds {3 * pairs}"
    return verdicts.Reruns(
        processes=processes, rounds=f"--rounds {2 * rounds}", per_round=per_round
    )


# -- the noise block -------------------------------------------------------------


def _noise(
    base: schema.Report, units: Mapping[str, str], found_fits: tuple[schema.CostFit, ...]
) -> schema.Noise | None:
    """The noise block with the cells' shapes and what the machine, the cells,
    their CPU time and the fits say, in that order; then what to do."""
    block = base.noise
    if block is None:
        return None
    cells = noise.cell_shapes(base.results)
    two_speed = frozenset(
        (c.scenario, c.runtime, c.call_id, c.size, str(c.hw)) for c in cells if c.shape == "bimodal"
    )
    said = [
        *noise.machine_findings(block, base.environment),
        *noise.cell_findings(cells, units),
        *cputime.findings(base.cpu_time, units, two_speed),
        *fits.findings(found_fits, units),
    ]
    cpus = block.cpus or base.environment.cpu_count or 1
    if noise.noisy(block, cells, cpus):
        said.append(noise.what_to_do())
    return noise.with_findings(block, cells, said)
