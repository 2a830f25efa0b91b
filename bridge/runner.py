"""Run a plan: decide which runtimes to start (and their masked twins), hand
them to a session (bridge.session) with the cells to measure, then check the
outputs (bridge.interop) and assemble the report (bridge.assemble).

`Seams` are the parts a fast test replaces: the runtimes, the CPU, the mask
check and the clock. Everything else is the real pipeline.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bridge import (
    ab,
    assemble,
    calls,
    concurrency,
    environment,
    hardware,
    inputs,
    interop,
    levelrun,
    levels,
    model,
    otp,
    topology,
)
from bridge.runtimes import lineup
from bridge.runtimes.base import Job
from bridge.runtimes.openssl import mask_evidence
from bridge.scenario import FileDigestScenario, Scenario
from bridge.session import Live, Progress, RuntimeSpec, Session
from bridge.settings import Settings


@dataclass(frozen=True)
class Plan:
    scenarios: tuple[Scenario, ...]
    settings: Settings
    seed: int
    erl: tuple[str | None, ...] = (None,)  # None: the erl on PATH
    openssl: tuple[str | None, ...] = (None,)
    python: tuple[str | None, ...] = (None,)
    kinds: tuple[str, ...] = calls.RUNTIME_KINDS
    hw: str = "on"  # on | off | both: as found, features masked, or an A/B of the two
    command: tuple[str, ...] = ()
    reproduce: str = ""


MaskChecker = Callable[[Plan, ab.HwContext], model.MaskCheck]


@dataclass(frozen=True)
class Seams:
    """What the fast tests replace. None: the real thing."""

    specs: Callable[[Plan], list[RuntimeSpec]] | None = None
    cpu: hardware.Cpu | None = None
    check_mask: MaskChecker | None = None
    environment: Callable[[], dict] = environment.collect
    clock: Callable[[], float] | None = None
    machine: Callable[[], levels.Machine] = topology.collect  # CPUs, SMT, load (--concurrency)


@dataclass
class Outcome:
    report: model.Report
    interrupted: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.report.errors)


class _Inputs:
    """The inputs of every (scenario, size), made once and shared by all
    runtimes. File-digest files go to a private directory that goes away
    with the run; their digests are computed while they are written."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.file_references: dict[tuple[str, int], bytes] = {}
        self._made: dict[tuple[str, int], inputs.Inputs] = {}
        self._dir: tempfile.TemporaryDirectory | None = None

    def __call__(self, sc: Scenario, size: int) -> inputs.Inputs:
        key = (sc.name, size)
        if key not in self._made:
            self._made[key] = self._make(sc, size)
        return self._made[key]

    def _make(self, sc: Scenario, size: int) -> inputs.Inputs:
        if not isinstance(sc, FileDigestScenario):
            return inputs.for_scenario(self.seed, sc, size)
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="bridge-files-")
        path, digest = inputs.write_file(self.seed, sc.name, size, self._dir.name, sc.digest)
        self.file_references[(sc.name, size)] = digest
        return inputs.Inputs(key=b"", data=b"", path=path, file_size=size)

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


def _specs(plan: Plan) -> list[RuntimeSpec]:
    wanted = {kind for sc in plan.scenarios for kind in sc.calls}
    kinds = tuple(k for k in plan.kinds if k in wanted)
    return lineup.specs(plan.settings, kinds, validate(plan), plan.python, plan.openssl)


def validate(plan: Plan) -> list[otp.Installation | None]:
    """Check explicit --erl paths before anything runs: a typo is a usage
    error (exit 2), not a skipped runtime discovered minutes later."""
    return [otp.locate(e) if e is not None else None for e in plan.erl]


def execute(plan: Plan, progress: Progress | None = None, seams: Seams = Seams()) -> Outcome:
    specs = seams.specs(plan) if seams.specs else _specs(plan)
    cpu = seams.cpu or environment.cpu()
    checker = seams.check_mask or (lambda plan, ctx: mask_evidence(plan.openssl, ctx))
    contexts: dict[str, ab.HwContext] = {}
    interrupted = False
    made = _Inputs(plan.seed)
    kwargs = {"clock": seams.clock} if seams.clock else {}
    wanted_levels = sorted({n for sc in plan.scenarios for n in sc.concurrency})
    machine = seams.machine() if wanted_levels else None
    try:
        with Session(plan.settings, progress, **kwargs) as session:
            try:
                for spec in specs:
                    _start_pair(plan, session, spec, cpu, checker, contexts, made)
                session.measure()
            except KeyboardInterrupt:
                interrupted = True
                session.interrupted()
        outcome = session.outcome()
        checks = interop.checks(
            plan.scenarios, outcome.results, outcome.runtimes, made, made.file_references
        )
    finally:
        made.close()
    report = assemble.report(
        scenarios=plan.scenarios,
        outcome=outcome,
        contexts=contexts,
        checks=checks,
        settings={**plan.settings.to_json(), "seed": plan.seed},
        hw=plan.hw,
        environment=seams.environment(),
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        command=plan.command,
        reproduce=plan.reproduce,
        concurrency=_levels_block(plan, wanted_levels, machine, outcome.levels),
    )
    return Outcome(report=report, interrupted=interrupted)


def _levels_block(plan, wanted, machine, cells) -> levels.Concurrency | None:
    """The report's concurrency block: the levels, the machine (with the load
    average at the end too), each cell marked oversubscribed or not."""
    if machine is None:
        return None
    machine = dataclasses.replace(machine, loadavg_end=topology.loadavg())
    marked = [levelrun.mark(c, concurrency.oversubscribed(c.level, machine)) for c in cells]
    settings = plan.settings
    window = concurrency.window_ms(settings.sample_ms)
    return concurrency.block(wanted, window, settings.schedulers, machine, marked)


def _start_pair(plan, session, spec, cpu, checker, contexts, made) -> None:
    """A runtime as found and, for an A/B, its masked twin, each with its cells."""
    on = session.start(spec)
    if on is None:
        return
    if plan.hw != "off":
        session.add(on, jobs(plan, on, made))
        # Levels run on the machine as found; on the masked twin only for --hw off.
        session.add_levels(on, jobs(plan, on, made))
    if plan.hw in ("off", "both"):
        twin = masked_twin(plan, spec, on.info, cpu, checker, contexts)
        off = session.start(twin) if twin is not None else None
        if off is not None:
            session.add(off, jobs(plan, off, made))
            if plan.hw == "off":
                session.add_levels(off, jobs(plan, off, made))


def jobs(plan: Plan, live: Live, made: _Inputs) -> Iterator[Job]:
    for sc in plan.scenarios:
        for cid in sc.calls.get(live.kind, ()):
            for size in sc.sizes:
                yield Job(sc, calls.CALLS[live.kind, cid], made(sc, size))


def masked_twin(
    plan: Plan,
    spec: RuntimeSpec,
    info: model.Runtime,
    cpu: hardware.Cpu,
    checker: MaskChecker,
    contexts: dict[str, ab.HwContext],
) -> RuntimeSpec | None:
    """The twin of a runtime with the scenario's features masked from process
    start, when the experiment can be made (see bridge.ab)."""
    features = ab.kinds_features(plan.scenarios, spec.kind)
    if not features:
        return None
    armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
    ctx = ab.plan(info, features, cpu, os.environ, armcap)
    contexts[info.id] = ctx
    if ctx.mask is None:
        return None
    ctx.mask_check = checker(plan, ctx)
    if ctx.mask_failed:
        return None  # the verdict says the mask did not take effect
    label = f"{spec.label} ({ctx.mask.variable}={ctx.mask.value})"
    return spec.masked(label, ctx.mask.env(), same_id=info.id)


def inspect(plan: Plan, progress: Progress | None = None) -> tuple[dict, list[model.Runtime], dict]:
    """Start each runtime once, without measuring: environment, provenance,
    and the masks an A/B run would use (`bridge env`)."""
    cpu = environment.cpu()
    armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
    experiments = []
    with Session(plan.settings, progress) as session:
        for spec in _specs(plan):
            live = session.start(spec)
            if live is None:
                continue
            features = ab.kinds_features(plan.scenarios, spec.kind)
            ctx = ab.plan(live.info, features, cpu, os.environ, armcap)
            if ctx.mask is not None:
                ctx.mask_check = mask_evidence(plan.openssl, ctx)
            experiments.append(ctx.record())
    hw = {
        "experiments": [e.to_json() for e in experiments],
        "skipped": [s.to_json() for s in session.skipped],
        "errors": [e.to_json() for e in session.errors],
    }
    return environment.collect(), [x.info for x in session.live], hw
