"""Bring up a run's line-up: each runtime as found, its masked twin for an
A/B, and its --libcrypto variants (each with a twin of its own).

Runtimes boot side by side, in waves: every runtime as found is launched at
once, then readied in turn; then the twins and variants they call for, which
need their partner's provenance (the library decides the mask string), are
launched and readied the same way. An A/B of Erlang and Python so starts in
the time of two node boots instead of four runtimes one after another.

What the run records does not depend on which process booted first: each
runtime, then its twin, then its variants, are committed to the session (with
their cells, skips and errors) in the order the plan lists them, as when they
started one by one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bridge import ab, calls, hardware, model
from bridge.runtimes import libcrypto as other_libcrypto
from bridge.runtimes.base import Job
from bridge.session import Live, RuntimeSpec, Session, Starting

if TYPE_CHECKING:
    from bridge.runner import Plan

MaskChecker = Callable[["Plan", ab.HwContext], model.MaskCheck]
Inputs = Callable  # (scenario, size) -> bridge.inputs.Inputs, made once per run

NO_MASK = (
    "a running node cannot be masked: its libcrypto read OPENSSL_ia32cap when the node"
    " started (bridge env --node points to a local A/B of the same library)"
)


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


@dataclass
class _Node:
    """A runtime of the line-up and what it called for once it was ready:
    its masked twin, its variants, and skips, in line-up order."""

    starting: Starting
    twin: bool = False
    context: ab.HwContext | None = None  # what the A/B could do with it
    after: list[_Node | model.Skipped] = field(default_factory=list)


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
    ) -> None:
        self.plan, self.session, self.made, self.cpu = plan, session, made, cpu
        self.check_mask = once_per_mask(check_mask)
        self.contexts: dict[str, ab.HwContext] = {}

    def start(self, specs: Iterable[RuntimeSpec]) -> None:
        """Every runtime of the run, wave by wave (see the module's comment).
        Interrupted, the runtimes already up are still committed: the report
        lists what ran."""
        roots = [_Node(self.session.launch(spec)) for spec in specs]
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
            return []
        spec, hw = node.starting.spec, self.plan.hw
        if hw in ("off", "both") and not spec.maskable:
            node.after.append(model.Skipped(f"{live.id} (hw off)", spec.kind, NO_MASK))
        elif hw in ("off", "both"):
            twin = self._masked_twin(node, live)
            if twin is not None:
                node.after.append(_Node(self.session.launch(twin), twin=True))
        for variant in other_libcrypto.variants(spec, live, self.plan.libcrypto):
            if isinstance(variant, model.Skipped):
                node.after.append(variant)
            else:
                node.after.append(_Node(self.session.launch(variant)))
        return [x for x in node.after if isinstance(x, _Node)]

    def _commit(self, node: _Node) -> None:
        """A runtime with its cells, then its twin, skips and variants."""
        on = self.session.commit(node.starting)
        if on is None:
            return
        if node.context is not None:
            self.contexts[on.id] = node.context
        hw = self.plan.hw
        if hw != "off" or not node.starting.spec.maskable:
            self.session.add(on, self.jobs(on))
            # Levels run on the machine as found; on the masked twin only for --hw off.
            self.session.add_levels(on, self.jobs(on))
        for after in node.after:
            if isinstance(after, model.Skipped):
                self.session.skipped.append(after)
            elif after.twin:
                off = self.session.commit(after.starting)
                if off is not None:
                    self.session.add(off, self.jobs(off))
                    if hw == "off":
                        self.session.add_levels(off, self.jobs(off))
            else:
                self._commit(after)

    def jobs(self, live: Live) -> Iterator[Job]:
        for sc in self.plan.scenarios:
            for cid in sc.calls.get(live.kind, ()):
                for size in sc.sizes:
                    yield Job(sc, calls.CALLS[live.kind, cid], self.made(sc, size))

    def _masked_twin(self, node: _Node, live: Live) -> RuntimeSpec | None:
        """The twin of a ready runtime with the scenario's features masked
        from process start, when the experiment can be made (see bridge.ab)."""
        spec, info = node.starting.spec, live.info
        features = ab.kinds_features(self.plan.scenarios, spec.kind)
        if not features:
            return None
        cpu = self.cpu
        armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
        ctx = ab.plan(info, features, cpu, os.environ, armcap)
        node.context = ctx
        if ctx.mask is None:
            return None
        ctx.mask_check = self.check_mask(self.plan, ctx)
        if ctx.mask_failed:
            return None  # the verdict says the mask did not take effect
        label = f"{spec.label} ({ctx.mask.variable}={ctx.mask.value})"
        return spec.masked(label, ctx.mask.env(), same_id=info.id)
