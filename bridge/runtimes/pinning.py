"""The CPU a runtime's measuring process runs on, round by round.

A cell and its masked twin are two processes. Left to the scheduler, one
may spend its windows on a CPU whose sibling thread is busy and the other on
a quiet one, and the A/B then measures the CPUs. So each round every
runtime's process is pinned to one CPU, the same for all runtimes in that
round, and the CPU rotates from round to round over the CPUs bridge may use:
over an even number of rounds a cell and its twin have run on each CPU
alike. Level cells (--concurrency) need every CPU: before them the process
is let loose again. openssl's children are started on the round's CPU.

BRIDGE_PIN=off turns it off (each process where the kernel puts it), for
measuring what the pinning does (bench/agreement.py, bench/truth.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from bridge.system import cpustat

ENV = "BRIDGE_PIN"


@dataclass
class Pinning:
    cpus: tuple[int, ...]  # the CPUs bridge may use, in order; () = never pin
    _where: dict[int, int | None] = field(default_factory=dict)  # pid -> pinned CPU

    @classmethod
    def from_env(cls) -> Pinning:
        if os.environ.get(ENV, "").lower() in ("0", "off", "no", "false"):
            return cls(())
        cpus = cpustat.allowed_cpus()
        return cls(cpus if len(cpus) > 1 else ())

    @property
    def on(self) -> bool:
        return bool(self.cpus)

    def cpu_for(self, round_index: int) -> int | None:
        return self.cpus[round_index % len(self.cpus)] if self.cpus else None

    def pin(self, pid: int | None, round_index: int) -> int | None:
        """Process `pid` (every thread) on the round's CPU; the CPU, or None."""
        cpu = self.cpu_for(round_index)
        if pid is None or cpu is None:
            return None
        if self._where.get(pid) != cpu:
            self._where[pid] = cpu if cpustat.set_process_affinity(pid, {cpu}) else None
        return self._where[pid]

    def unpin(self, pid: int | None) -> None:
        """Process `pid` free on every CPU bridge may use (level cells)."""
        if pid is None or not self.cpus or self._where.get(pid) is None:
            return
        cpustat.set_process_affinity(pid, set(self.cpus))
        self._where[pid] = None
