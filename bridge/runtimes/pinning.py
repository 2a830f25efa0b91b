"""The CPU a runtime's measuring process runs on, round by round.

A cell and its masked twin are two processes. Left to the scheduler, one
may spend its windows on a CPU whose sibling thread is busy and the other on
a quiet one, and the A/B then measures the CPUs. So a process that
measures is pinned, for its batch, to the round's CPU, the same for all
runtimes in that round, and the CPU rotates from round to round over the
CPUs bridge may use: over an even number of rounds a cell and its twin have
run on each CPU alike. openssl's children are started on the round's CPU.

After its batch a process is free on every CPU again (base.WorkerRuntime.bench):
a process that has just measured goes on running for a while (its threads
spin before they sleep, it frees what the batch made), and those kept pinned
where the next batch measures took that CPU in turns with it. In 16 control
runs with two processes a side (tests/cli/test_hardware.py, on the project's
2-vCPU EPYC guest), Erlang cells in which a twin waited for a CPU 15% of its
windows or more were 31 of 192 with every process pinned, 19 freed between
batches (30% or more: 13 and 7). What still waits is judged by
bridge.hw.ab (twins that waited unlike need a larger gain). Level cells
(--concurrency) need every CPU: before them the process is let loose too.

A TLS cell has two sides that hand the handshake's messages back and
forth. Erlang's client (the worker node) measures on the round's CPU, and
its server (a node the worker starts below itself, bridge_tls_server) runs
on the other CPUs bridge may use, for the batch (`others`, `apart`); after
it both are free again, and each node has as many schedulers online as it
has CPUs meanwhile (bridge_tls). The server node was never pinned with its
client, but the kernel woke it beside the client that had just written to
it: on the 2-vCPU guest it was seen on the client's pinned CPU 62 times of
99, about half its run time, where the two took that CPU in turns with the
client's two schedulers, one spinning. Two plain nodes outside bridge, at a
load of 12-15: client pinned and server free 5.0-8.9 ms a TLS 1.3
handshake, on a CPU each with one scheduler online 3.6-4.3 ms; both on one
CPU 10-13 ms (load 6-7). Twins still see the same CPUs in the same
proportion: each round puts both twins' clients on its CPU and their
servers on the rest. openssl's s_time and s_server stay free, as the
kernel puts them: neither spins, and pinned apart (one CPU each) they read
19-84% fewer handshakes/s in all 20 openssl cells of the four TLS
scenarios' --quick runs at a load of 10-12 (each run beside one with them
free), each side waiting for its one CPU.

BRIDGE_PIN=off turns it off (each process where the kernel puts it), for
measuring what the pinning does (bench/agreement.py, bench/truth.py).
"""

from __future__ import annotations

import contextlib
import os
import resource
import time
from collections.abc import Iterable
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

    def others(self, round_index: int) -> frozenset[int]:
        """The CPUs bridge may use other than the round's: where Erlang's
        TLS server node runs while its client measures on the round's CPU
        (empty: pinning is off)."""
        cpu = self.cpu_for(round_index)
        return frozenset(c for c in self.cpus if c != cpu)

    def apart(self, pids: Iterable[int], round_index: int) -> frozenset[int]:
        """Processes `pids` (every thread) on others(round_index): the CPUs,
        or none when it could not be done for one of them."""
        others = self.others(round_index)
        placed = [cpustat.set_process_affinity(pid, others) for pid in pids if others]
        return others if placed and all(placed) else frozenset()

    def free(self, pids: Iterable[int]) -> None:
        """Processes `pids` back on every CPU bridge may use."""
        for pid in pids if self.cpus else ():
            cpustat.set_process_affinity(pid, set(self.cpus))

    def children(self) -> Children:
        """What each child process of a batch (openssl) got of the CPU."""
        return Children()

    def unpin(self, pid: int | None) -> None:
        """Process `pid` free on every CPU bridge may use (level cells)."""
        if pid is None or not self.cpus or self._where.get(pid) is None:
            return
        cpustat.set_process_affinity(pid, set(self.cpus))
        self._where[pid] = None


class Children:
    """Per openssl process: the CPU it was pinned to (-1: not pinned), its
    user+system CPU ns and user CPU ns (the children's rusage before and
    after: bridge waits for one child at a time while it measures), and its
    wall time less its CPU time, the time it was not on a CPU. The last is
    the process's, start-up included; `openssl speed` itself does not sleep,
    so that is time spent waiting for a CPU."""

    def __init__(self) -> None:
        self.cpus: list[int] = []
        self.cpu_ns: list[int] = []
        self.wait_ns: list[int] = []
        self.user_ns: list[int] = []

    @contextlib.contextmanager
    def child(self, cpu: int | None):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter_ns()
        with cpustat.calling_thread_on(None if cpu is None else {cpu}):
            yield
        wall = time.perf_counter_ns() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        user = round((after.ru_utime - before.ru_utime) * 1e9)
        system = round((after.ru_stime - before.ru_stime) * 1e9)
        self.cpus.append(cpustat.UNKNOWN if cpu is None else cpu)
        self.cpu_ns.append(user + system)
        self.user_ns.append(user)
        self.wait_ns.append(max(0, wall - user - system))

    def fields(self) -> dict[str, list[int]]:
        return {
            "cpus": self.cpus,
            "cpu_ns": self.cpu_ns,
            "wait_ns": self.wait_ns,
            "user_ns": self.user_ns,
        }
