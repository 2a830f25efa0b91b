"""Run a plan: the runtimes it names (bridge.runtimes.lineup) brought up with
their masked twins (bridge.measure.startup) in a session (bridge.measure.session) that
measures the cells, then the outputs checked (bridge.analysis.interop) and the report
assembled (bridge.measure.assemble).

The session measures scenario by scenario; as each is done, `on_scenario`
gets the report of that scenario alone (`Finished`), assembled as the whole
run's will be, so that the caller can show its answer while the next one
runs. Its verdicts go by the machine's usage up to that moment, and so do
that scenario's verdicts in the whole report (assemble's `windows`).

`Seams` (bridge.measure.seams) are the parts a fast test replaces; everything
else is the real pipeline.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

from bridge.analysis import cputime, interop, noise
from bridge.catalog.inputs import RunInputs
from bridge.catalog.vocab import RuntimeKind
from bridge.measure import assemble, levelrun, limits
from bridge.measure.plan import Plan
from bridge.measure.seams import Seams
from bridge.measure.session import Outcome as Measured
from bridge.measure.session import Progress, Session
from bridge.measure.startup import Lineup, check_mask
from bridge.report import schema
from bridge.report.levels import Machine
from bridge.report.scenario import ScenarioRun
from bridge.system import cpustat, tlscert


@dataclass
class Outcome:
    report: schema.Report
    interrupted: bool = False
    # Other processes busy during a busy run, by name and pid: shown live
    # (bridge run -v), never kept in the report (bridge.analysis.noise).
    busiest: tuple[noise.OtherProcess, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.report.errors)


@dataclass(frozen=True)
class Finished:
    """A scenario the session is done with, and its report alone."""

    scenario: str
    report: schema.Report


OnScenario = Callable[[Finished], None]


def execute(
    plan: Plan,
    progress: Progress | None = None,
    seams: Seams | None = None,
    on_scenario: OnScenario | None = None,
) -> Outcome:
    seams = seams or Seams()
    specs = seams.the_specs(plan)
    made = RunInputs(plan.seed, tlscert.make)
    kwargs = {"clock": seams.clock} if seams.clock else {}
    interrupted = False
    wanted_levels = sorted({n for sc in plan.scenarios for n in sc.concurrency})
    machine = seams.machine() if wanted_levels else None
    before = seams.snapshot()
    windows: dict[str, noise.Usage] = {}
    try:
        with Session(plan.settings, progress, **kwargs) as session:
            guesses = seams.the_guesses()
            cpu = seams.the_cpu()
            starter = Lineup(plan, session, made, cpu, seams.check_mask or check_mask, guesses)
            parts = _Parts(plan, session, starter, made, seams, machine)

            def done(name: str) -> None:
                windows[name] = noise.usage(before, seams.snapshot(), None)
                if on_scenario is not None:
                    on_scenario(Finished(name, parts.report_of(name, windows[name])))

            try:
                starter.start(specs)
                guesses.save()
                session.measure(done, [sc.name for sc in plan.scenarios])
            except KeyboardInterrupt:
                interrupted = True  # the first signal; later ones are held
                session.interrupted()
        # Every worker has been stopped and reaped: its CPU time is bridge's.
        after = seams.snapshot()
        outcome = session.outcome()
        checks = interop.checks(
            plan.scenarios, outcome.results, outcome.runtimes, made, made.file_references
        )
    finally:
        made.close()
    machine_block = seams.environment()
    cpu_time = _cpu_time(plan, outcome, machine_block, seams)
    usage = noise.usage(before, after, machine_block.get("cpu_count"))
    report = assemble.report(
        assemble.Measured(
            scenarios=plan.scenarios,
            outcome=outcome,
            contexts=starter.contexts,
            checks=checks,
            settings={**plan.settings.to_json(), "seed": plan.seed},
            hw=plan.hw,
            environment=machine_block,
            usage=usage,
            created=_now(),
            command=plan.command,
            reproduce=plan.reproduce,
            concurrency=levelrun.block(wanted_levels, plan.settings, machine, outcome.levels),
            cpu_time=cpu_time,
            windows=windows,
        )
    )
    busiest = usage.busy_processes if noise.busy_machine(usage, report.environment) else ()
    return Outcome(report=report, interrupted=interrupted, busiest=busiest)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class _Parts:
    """The report of one finished scenario, as the whole run's is made."""

    def __init__(
        self,
        plan: Plan,
        session: Session,
        starter: Lineup,
        made: RunInputs,
        seams: Seams,
        machine: Machine | None,
    ) -> None:
        self.plan, self.session, self.starter = plan, session, starter
        self.made, self.seams, self.machine = made, seams, machine
        self.environment: dict | None = None  # collected once, at the first scenario's end

    def report_of(self, name: str, window: noise.Usage) -> schema.Report:
        plan = self.plan
        scenarios = tuple(sc for sc in plan.scenarios if sc.name == name)
        outcome = self.session.outcome(name)
        checks = interop.checks(
            scenarios, outcome.results, outcome.runtimes, self.made, self.made.file_references
        )
        if self.environment is None:
            self.environment = self.seams.environment()
        # The machine's best (bridge.measure.limits) is for the whole run's
        # report; a cell's wait share, which the verdicts read, is its own.
        cpu_time = _cpu_time(plan, outcome, self.environment, self.seams, best=False)
        wanted = sorted({n for sc in scenarios for n in sc.concurrency})
        return assemble.report(
            assemble.Measured(
                scenarios=scenarios,
                outcome=outcome,
                contexts=self.starter.contexts,
                checks=checks,
                settings={**plan.settings.to_json(), "seed": plan.seed},
                hw=plan.hw,
                environment=self.environment,
                usage=window,
                created=_now(),
                command=plan.command,
                reproduce=plan.reproduce,
                concurrency=levelrun.block(wanted, plan.settings, self.machine, outcome.levels),
                cpu_time=cpu_time,
                windows={name: window},
            )
        )


def _cpu_time(
    plan: Plan, outcome: Measured, machine_block: dict, seams: Seams, best: bool = True
) -> schema.CpuTime | None:
    """CPU time beside wall time, cycles per byte at the TSC's rate and the
    share of the machine's best (bridge.analysis.cputime). The best is
    openssl's, measured once a day per binary and CPU (bridge.measure.limits).
    Not for fake runtimes (the fast tests)."""
    if not outcome.results or seams.specs is not None:
        return None
    scenarios = [ScenarioRun.of(sc) for sc in plan.scenarios]
    algorithms = cputime.limit_algorithms(scenarios)
    openssl = next(
        (r for r in outcome.runtimes if r.kind == RuntimeKind.OPENSSL and not r.masked), None
    )
    found = (
        limits.collect(
            algorithms,
            outcome.results,
            {sc.name: sc.limit_algorithm for sc in scenarios},
            openssl.executable if openssl else None,
            str(machine_block.get("cpu_model", "")),
        )
        if algorithms and best
        else ()
    )
    tsc = cpustat.tsc_rate()
    return cputime.record(
        outcome.results, scenarios, None if tsc is None else (tsc.hz, tsc.source), found
    )
