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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

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
    noise,
    otp,
    topology,
)
from bridge.distribution import NodePlan
from bridge.libcrypto import Directory
from bridge.runtimes import libcrypto as other_libcrypto
from bridge.runtimes import lineup, remote
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
    nodes: NodePlan | None = None  # --node: running nodes, measured over distribution
    # Per kind, the variables each of its runtimes was given (--env), in the
    # order of erl / python / openssl above.
    env: Mapping[str, tuple[Mapping[str, str], ...]] = field(default_factory=dict)
    # --libcrypto: every runtime again with each directory's library.
    libcrypto: tuple[Directory, ...] = ()


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
    # The machine's state before and after the run (bridge.noise).
    snapshot: Callable[[], noise.Snapshot] = noise.snapshot


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
    installations = validate(plan)
    local = lineup.specs(
        plan.settings, kinds, installations, plan.python, plan.openssl, given=plan.env
    )
    if plan.nodes is None:
        return local
    known = [i for i in installations if i is not None]
    return local + remote.specs(plan.nodes, plan.settings, known)


def validate(plan: Plan) -> list[otp.Installation | None]:
    """Check explicit --erl paths before anything runs: a typo is a usage
    error (exit 2), not a skipped runtime discovered minutes later."""
    return [otp.locate(e) if e is not None else None for e in plan.erl]


def execute(plan: Plan, progress: Progress | None = None, seams: Seams = Seams()) -> Outcome:
    specs = seams.specs(plan) if seams.specs else _specs(plan)
    made = _Inputs(plan.seed)
    kwargs = {"clock": seams.clock} if seams.clock else {}
    interrupted = False
    wanted_levels = sorted({n for sc in plan.scenarios for n in sc.concurrency})
    machine = seams.machine() if wanted_levels else None
    before = seams.snapshot()
    try:
        with Session(plan.settings, progress, **kwargs) as session:
            starter = _Lineup(plan, session, made, seams)
            try:
                for spec in specs:
                    starter.start(spec)
                session.measure()
            except KeyboardInterrupt:
                interrupted = True
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
    report = assemble.report(
        scenarios=plan.scenarios,
        outcome=outcome,
        contexts=starter.contexts,
        checks=checks,
        settings={**plan.settings.to_json(), "seed": plan.seed},
        hw=plan.hw,
        environment=machine_block,
        usage=noise.usage(before, after, machine_block.get("cpu_count")),
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


def once_per_mask(checker: MaskChecker) -> MaskChecker:
    """Check each mask string once per run and OpenSSL generation: the
    runtimes of an A/B mostly share one, and a check starts three openssl
    processes (time that --quick does not have)."""
    seen: dict[tuple, model.MaskCheck] = {}

    def check(plan: Plan, ctx: ab.HwContext) -> model.MaskCheck:
        key = (ctx.mask, hardware.generation(ctx.library[1]) if ctx.library else None)
        if key not in seen:
            seen[key] = checker(plan, ctx)
        return seen[key]

    return check


NO_MASK = (
    "a running node cannot be masked: its libcrypto read OPENSSL_ia32cap when the node"
    " started (bridge env --node points to a local A/B of the same library)"
)


class _Lineup:
    """Starts each runtime as found and, for an A/B, its masked twin, and
    gives each its cells. `contexts` keeps what the A/B could do per runtime."""

    def __init__(self, plan: Plan, session: Session, made: _Inputs, seams: Seams) -> None:
        self.plan, self.session, self.made = plan, session, made
        self.cpu = seams.cpu or environment.cpu()
        self.check_mask = once_per_mask(
            seams.check_mask or (lambda p, ctx: mask_evidence(p.openssl, ctx))
        )
        self.contexts: dict[str, ab.HwContext] = {}

    def start(self, spec: RuntimeSpec) -> None:
        """A runtime as found and, for an A/B, its masked twin, each with its
        cells; then the same with each --libcrypto directory's library."""
        on = self.session.start(spec)
        if on is None:
            return
        if self.plan.hw != "off" or not spec.maskable:
            self.session.add(on, self.jobs(on))
            # Levels run on the machine as found; on the masked twin only for --hw off.
            self.session.add_levels(on, self.jobs(on))
        if self.plan.hw in ("off", "both") and not spec.maskable:
            self.session.skipped.append(model.Skipped(f"{on.id} (hw off)", spec.kind, NO_MASK))
        elif self.plan.hw in ("off", "both"):
            twin = self.masked_twin(spec, on.info)
            off = self.session.start(twin) if twin is not None else None
            if off is not None:
                self.session.add(off, self.jobs(off))
                if self.plan.hw == "off":
                    self.session.add_levels(off, self.jobs(off))
        for variant in other_libcrypto.variants(spec, on, self.plan.libcrypto):
            if isinstance(variant, model.Skipped):
                self.session.skipped.append(variant)
            else:
                self.start(variant)

    def jobs(self, live: Live) -> Iterator[Job]:
        for sc in self.plan.scenarios:
            for cid in sc.calls.get(live.kind, ()):
                for size in sc.sizes:
                    yield Job(sc, calls.CALLS[live.kind, cid], self.made(sc, size))

    def masked_twin(self, spec: RuntimeSpec, info: model.Runtime) -> RuntimeSpec | None:
        """The twin of a runtime with the scenario's features masked from
        process start, when the experiment can be made (see bridge.ab)."""
        features = ab.kinds_features(self.plan.scenarios, spec.kind)
        if not features:
            return None
        cpu = self.cpu
        armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
        ctx = ab.plan(info, features, cpu, os.environ, armcap)
        self.contexts[info.id] = ctx
        if ctx.mask is None:
            return None
        ctx.mask_check = self.check_mask(self.plan, ctx)
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
