"""Bring up a run's line-up: each runtime as found, its masked twin for an
A/B, and its --libcrypto variants (each with a twin of its own).

Runtimes boot side by side, in waves: every runtime as found is launched at
once, then readied in turn; then the twins and variants they call for, which
need their partner's provenance (the library decides the mask string), are
launched and readied the same way. An A/B of Erlang and Python so starts in
the time of two node boots instead of four runtimes one after another.

A twin's mask is known only once its partner is up, but it is the same from
one run to the next: the mask each twin had is kept in bridge's cache
(TwinGuesses), and a twin whose mask is known is launched beside its partner,
in the first wave. The guess is checked once the partner is ready: the twin
is kept only if its mask is the one the partner's library calls for, and
stopped before it measures anything if not (the right one is then launched as
before). A first run, or one after an upgrade, starts as if nothing was kept.

What the run records does not depend on which process booted first: each
runtime, then its twin, then its variants, are committed to the session (with
their cells, skips and errors) in the order the plan lists them, as when they
started one by one.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from bridge.catalog import calls, usercode
from bridge.hw import ab, hardware
from bridge.measure.plan import Plan
from bridge.measure.session import Session, Starting
from bridge.measure.twins import TwinGuesses
from bridge.report import provenance, schema
from bridge.report.whynot import LibraryBuild
from bridge.runtimes import lineup, other_libcrypto, remote
from bridge.runtimes.base import Job, Live, RuntimeSpec
from bridge.runtimes.openssl import mask_evidence
from bridge.system import libbuild, otp
from bridge.system.libcrypto import CannotTell

MaskChecker = Callable[[Plan, ab.HwContext], schema.MaskCheck]
Inputs = Callable  # (scenario, size) -> bridge.catalog.inputs.Inputs, made once per run

NO_MASK = (
    "a running node cannot be masked: its libcrypto read OPENSSL_ia32cap when the node"
    " started (bridge env --node points to a local A/B of the same library)"
)


def once_per_mask(checker: MaskChecker) -> MaskChecker:
    """Check each mask string once per run and OpenSSL generation: the
    runtimes of an A/B mostly share one, and a check starts three openssl
    processes (time that --quick does not have)."""
    seen: dict[tuple, schema.MaskCheck] = {}

    def check(plan: Plan, ctx: ab.HwContext) -> schema.MaskCheck:
        key = (ctx.mask, hardware.generation(ctx.library[1]) if ctx.library else None)
        if key not in seen:
            seen[key] = checker(plan, ctx)
        return seen[key]

    return check


@dataclass
class _Node:
    """A runtime of the line-up and what it called for once it was ready:
    its masked twin, its variants, and skips, in line-up order."""

    starting: Starting
    twin: bool = False
    guess: Starting | None = None  # its twin, launched on the mask it had last time
    context: ab.HwContext | None = None  # what the A/B could do with it
    after: list[_Node | schema.Skipped] = field(default_factory=list)


class Lineup:
    """Starts the runtimes of a plan in a session and gives each its cells.
    `contexts` keeps what the A/B could do per runtime."""

    def __init__(
        self,
        plan: Plan,
        session: Session,
        made: Inputs,
        cpu: hardware.Cpu,
        check_mask: MaskChecker,
        guesses: TwinGuesses | None = None,
    ) -> None:
        self.plan, self.session, self.made, self.cpu = plan, session, made, cpu
        self.check_mask = once_per_mask(check_mask)
        self.guesses = guesses if guesses is not None else TwinGuesses()
        self.contexts: dict[str, ab.HwContext] = {}

    def start(self, specs: Iterable[RuntimeSpec]) -> None:
        """Every runtime of the run, wave by wave (see the module's comment).
        Interrupted, the runtimes already up are still committed: the report
        lists what ran."""
        roots = [self._launch(spec) for spec in specs]
        wave = roots
        try:
            while wave:
                for node in wave:
                    self.session.ready(node.starting)
                wave = [child for node in wave for child in self._expand(node)]
        finally:
            for node in roots:
                self._commit(node)

    def _expand(self, node: _Node) -> list[_Node]:
        """Launch what a ready runtime calls for; return those launched."""
        live = node.starting.live
        if live is None or node.twin:
            if node.guess is not None:
                self.session.discard(node.guess)
            return []
        spec, masks = node.starting.spec, self.plan.hw.masks
        if masks and not spec.maskable:
            node.after.append(schema.Skipped(f"{live.id} (hw off)", spec.kind, NO_MASK))
        elif masks:
            twin = self._masked_twin(node, live)
            self.guesses.put(self._guess_key(spec), twin.mask_env if twin else None)
            started = self._adopt(node.guess, twin)
            if started is not None:
                node.after.append(_Node(started, twin=True))
        for variant in other_libcrypto.variants(spec, live, self.plan.libcrypto):
            if isinstance(variant, schema.Skipped):
                node.after.append(variant)
            else:
                node.after.append(self._launch(variant))
        return [x for x in node.after if isinstance(x, _Node)]

    def _launch(self, spec: RuntimeSpec) -> _Node:
        """Launch a runtime and, when a past run knew its twin's mask, the twin."""
        node = _Node(self.session.launch(spec))
        if self.plan.hw.masks and spec.maskable:
            mask_env = self.guesses.get(self._guess_key(spec))
            if mask_env:
                # same_id stays empty: a guess is readied only once adopted.
                guessed = spec.masked(_twin_label(spec, mask_env), mask_env, same_id="")
                node.guess = self.session.launch(guessed)
        return node

    def _adopt(self, guess: Starting | None, twin: RuntimeSpec | None) -> Starting | None:
        """The twin to ready: the guessed one if its mask is right (now with
        its partner's id), else the right one launched now; a wrong guess
        is stopped."""
        if guess is not None and twin is not None and guess.spec.mask_env == twin.mask_env:
            guess.spec = twin
            return guess
        if guess is not None:
            self.session.discard(guess)
        return self.session.launch(twin) if twin is not None else None

    def _guess_key(self, spec: RuntimeSpec) -> str:
        features = sorted(ab.kinds_features(self.plan.scenarios, spec.kind))
        return json.dumps([spec.kind, spec.label, features])

    def _commit(self, node: _Node) -> None:
        """A runtime with its cells, then its twin, skips and variants."""
        on = self.session.commit(node.starting)
        if on is None:
            return
        if node.context is not None:
            self.contexts[on.id] = node.context
        hw = self.plan.hw
        if hw.as_found or not node.starting.spec.maskable:
            self.session.add(on, self.jobs(on))
            # Levels run on the machine as found; on the masked twin only for --hw off.
            self.session.add_levels(on, self.level_jobs(on))
        for after in node.after:
            if isinstance(after, schema.Skipped):
                self.session.skipped.append(after)
            elif after.twin:
                off = self.session.commit(after.starting)
                if off is not None:
                    self.session.add(off, self.jobs(off))
                    if hw.levels_state.masked:
                        self.session.add_levels(off, self.level_jobs(off))
            else:
                self._commit(after)

    def level_jobs(self, live: Live) -> Iterator[Job]:
        """The jobs run at --concurrency levels: not a user's sh: command,
        which is one whole process per sample."""
        return (job for job in self.jobs(live) if job.call.op != "user_shell")

    def jobs(self, live: Live) -> Iterator[Job]:
        for sc in self.plan.scenarios:
            for cid in sc.calls.get(live.kind, ()):
                for size in sc.sizes:
                    yield Job(sc, calls.CALLS[live.kind, cid], self.made(sc, size))
            # The user's calls (bridge time, [[calls]]), after the scenario's own.
            if self.plan.user is None or live.info.node_host:
                continue
            for n, uc in enumerate(sc.user_calls, 1):
                if uc.kind == live.kind:
                    call = usercode.as_call(sc, n)
                    for size in sc.sizes:
                        yield Job(sc, call, self.made(sc, size))

    def _masked_twin(self, node: _Node, live: Live) -> RuntimeSpec | None:
        """The twin of a ready runtime with the scenario's features masked
        from process start, when the experiment can be made (see bridge.hw.ab)."""
        spec, info = node.starting.spec, live.info
        features = ab.kinds_features(self.plan.scenarios, spec.kind)
        if not features:
            return None
        cpu = self.cpu
        armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
        ctx = ab.plan(info, features, cpu, os.environ, armcap)
        ctx.build = library_build(live)
        node.context = ctx
        if ctx.mask is None:
            return None
        ctx.mask_check = self.check_mask(self.plan, ctx)
        if ctx.mask_failed:
            return None  # the verdict says the mask did not take effect
        mask_env = ctx.mask.env()
        return spec.masked(_twin_label(spec, mask_env), mask_env, same_id=info.id)


def library_build(live: Live) -> LibraryBuild:
    """What a runtime's libcrypto says about its build (bridge.system.libbuild):
    the file its process maps, and the openssl runtime's `version -a`."""
    try:
        seen = live.driver.mapped_libcrypto()
    except CannotTell:
        seen = []
    d = live.info.details
    version_a = d.version_a if isinstance(d, provenance.OpensslDetails) else None
    return libbuild.collect(seen[0].path if seen else None, version_a)


# A guess becomes the environment of a process: only a capability mask can
# come from the file, never another variable (LD_PRELOAD...) or a value that
# is not one.
def _twin_label(spec: RuntimeSpec, mask_env: Mapping[str, str]) -> str:
    masks = " ".join(f"{k}={v}" for k, v in mask_env.items())
    return f"{spec.label} ({masks})"


def runtime_specs(plan: Plan) -> list[RuntimeSpec]:
    """The runtimes a plan names: local ones by kind, then its --node ones."""
    wanted = {kind for sc in plan.scenarios for kind in sc.calls}
    kinds = tuple(k for k in plan.kinds if k in wanted)
    installations = validate(plan)
    local = lineup.specs(
        plan.settings, kinds, installations, plan.python, plan.openssl, given=plan.env
    )
    if plan.user is not None:  # the user's calls: only a plan from the command line has them
        local = [dataclasses.replace(s, make=_with_user(s.make, plan.user)) for s in local]
    if plan.nodes is None:
        return local
    known = [i for i in installations if i is not None]
    return local + remote.specs(plan.nodes, plan.settings, known)


def _with_user(make, code):
    return lambda hw, env: make(hw, env).with_user(code)


def validate(plan: Plan) -> list[otp.Installation | None]:
    """Check explicit --erl paths before anything runs: a typo is a usage
    error (exit 2), not a skipped runtime discovered minutes later."""
    return [otp.locate(e) if e is not None else None for e in plan.erl]


def check_mask(plan: Plan, ctx: ab.HwContext) -> schema.MaskCheck:
    """Whether a mask does what it should, asked of the plan's openssl."""
    return mask_evidence(plan.openssl, ctx)
