"""Run a plan: the runtimes it names (bridge.runtimes.lineup) brought up with
their masked twins (bridge.startup) in a session (bridge.session) that
measures the cells, then the outputs checked (bridge.interop) and the report
assembled (bridge.assemble).

`Seams` are the parts a fast test replaces: the runtimes, the CPU, the mask
check, the clock, the twins' masks kept from past runs. Everything else is
the real pipeline.
"""

from __future__ import annotations

import datetime
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from bridge import (
    ab,
    assemble,
    calls,
    environment,
    hardware,
    inputs,
    interop,
    levelrun,
    levels,
    model,
    noise,
    otp,
    signals,
    topology,
)
from bridge.distribution import NodePlan
from bridge.libcrypto import Directory
from bridge.runtimes import lineup, remote
from bridge.runtimes.openssl import mask_evidence
from bridge.scenario import FileDigestScenario, Scenario
from bridge.session import Progress, RuntimeSpec, Session
from bridge.settings import Settings
from bridge.startup import Lineup, MaskChecker, TwinGuesses


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
    # The twins' masks of past runs (bridge.startup); None: bridge's cache.
    guesses: TwinGuesses | None = None


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
            check_mask = seams.check_mask or (lambda p, ctx: mask_evidence(p.openssl, ctx))
            guesses = seams.guesses
            if guesses is None:
                guesses = TwinGuesses(otp.cache_root() / "twins.json")
            cpu = seams.cpu or environment.cpu()
            starter = Lineup(plan, session, made, cpu, check_mask, guesses)
            try:
                starter.start(specs)
                guesses.save()
                session.measure()
                # From here the run only stops and saves: a signal now waits
                # until the report is safe (bridge.signals).
                signals.hold()
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
        concurrency=levelrun.block(wanted_levels, plan.settings, machine, outcome.levels),
    )
    return Outcome(report=report, interrupted=interrupted)


def inspect(plan: Plan, progress: Progress | None = None) -> tuple[dict, list[model.Runtime], dict]:
    """Start each runtime once, without measuring: environment, provenance,
    and the masks an A/B run would use (`bridge env`)."""
    cpu = environment.cpu()
    armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
    experiments = []
    with Session(plan.settings, progress) as session:
        # All launched at once, to boot side by side (bridge.startup).
        for starting in [session.launch(spec) for spec in _specs(plan)]:
            session.ready(starting)
            live = session.commit(starting)
            if live is None:
                continue
            features = ab.kinds_features(plan.scenarios, live.kind)
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
