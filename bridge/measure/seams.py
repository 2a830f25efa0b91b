"""What the fast tests replace in a run (bridge.measure.runner): the
runtimes, the CPU, the mask check, the clock, the machine's collectors, the
twins' masks kept from past runs. The defaults are the real things."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bridge.analysis import noise
from bridge.hw import hardware
from bridge.measure.plan import Plan
from bridge.measure.startup import MaskChecker, runtime_specs
from bridge.measure.twins import TwinGuesses
from bridge.report import levels
from bridge.runtimes.base import RuntimeSpec
from bridge.system import environment, topology


@dataclass(frozen=True)
class Seams:
    """What the fast tests replace. None: the real thing."""

    specs: Callable[[Plan], list[RuntimeSpec]] | None = None
    cpu: hardware.Cpu | None = None
    check_mask: MaskChecker | None = None
    environment: Callable[[], dict] = environment.collect
    clock: Callable[[], float] | None = None
    machine: Callable[[], levels.Machine] = topology.collect  # CPUs, SMT, load (--concurrency)
    # The machine's state before and after the run (bridge.analysis.noise).
    snapshot: Callable[[], noise.Snapshot] = noise.snapshot
    # The twins' masks of past runs (bridge.measure.twins); None: bridge's cache.
    guesses: TwinGuesses | None = None

    def the_cpu(self) -> hardware.Cpu:
        return self.cpu or environment.cpu()

    def the_guesses(self) -> TwinGuesses:
        return TwinGuesses.in_cache() if self.guesses is None else self.guesses

    def the_specs(self, plan: Plan) -> list[RuntimeSpec]:
        return self.specs(plan) if self.specs else runtime_specs(plan)
