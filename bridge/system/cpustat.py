"""What a thread got of the CPU: the kernel's per-thread counters, the CPU a
thread last ran on, CPU affinity, and the TSC's rate.

- `/proc/PID/task/TID/schedstat` holds three numbers: the ns the thread has
  run on a CPU, the ns it has waited on a run queue (runnable, no CPU), and
  its time slices. Read before and after a sample window, the differences
  say what the window's wall time was made of.
- Field 39 of `/proc/PID/task/TID/stat` is the CPU the thread last ran on.
- The TSC's rate (SUPERCOP's cycles) is measured here against
  CLOCK_MONOTONIC with a tiny rdtsc routine on x86-64 (unprivileged), or read
  from the kernel's log when that is readable; `/proc/cpuinfo`'s "cpu MHz" is
  the current core clock, not the TSC, and is never used.

The readers keep their files open and re-read them with pread, so a sample
boundary costs a few microseconds (Python). The worker imports this module:
nothing here loads libcrypto.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import time
from dataclasses import dataclass

UNKNOWN = -1  # a sample whose CPU or CPU time could not be read


def parse_schedstat(text: str) -> tuple[int, int]:
    """(ns on a CPU, ns waiting on a run queue) from a schedstat line."""
    parts = text.split()
    if len(parts) < 2:
        raise ValueError(f"not a schedstat line: {text[:60]!r}")
    return int(parts[0]), int(parts[1])


def parse_stat_cpu(text: str) -> int:
    """The CPU a thread last ran on: field 39 of its stat line (the command
    name, field 2, may hold spaces and parentheses: count after the last ')')."""
    rest = text[text.rindex(")") + 1 :].split()
    return int(rest[39 - 3])


def _pread(fd: int) -> str:
    return os.pread(fd, 512, 0).decode("ascii", "replace")


@functools.cache
def _libc_getcpu():
    """libc's sched_getcpu (about 0.1 us; the stat file costs tens), or None."""
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = []
    return fn if fn() >= 0 else None


class ThreadStat:
    """One thread's schedstat and stat, kept open. `read()` gives (cpu ns,
    wait ns), `cpu()` the CPU it last ran on. The default is the calling
    thread (/proc/thread-self), whose CPU comes from sched_getcpu."""

    def __init__(self, pid: int | None = None, tid: int | None = None) -> None:
        base = "/proc/thread-self" if pid is None else f"/proc/{pid}/task/{tid or pid}"
        self._sched = os.open(f"{base}/schedstat", os.O_RDONLY)
        try:
            self._stat = os.open(f"{base}/stat", os.O_RDONLY)
        except OSError:
            os.close(self._sched)
            raise
        self._getcpu = _libc_getcpu() if pid is None else None

    def read(self) -> tuple[int, int]:
        return parse_schedstat(_pread(self._sched))

    def cpu(self) -> int:
        if self._getcpu is not None:
            return int(self._getcpu())
        return self.stat_cpu()

    def stat_cpu(self) -> int:
        return parse_stat_cpu(_pread(self._stat))

    def close(self) -> None:
        for fd in (self._sched, self._stat):
            with contextlib.suppress(OSError):
                os.close(fd)


def open_self() -> ThreadStat | None:
    """The calling thread's reader, or None where /proc has no schedstat
    (not Linux, or a kernel without CONFIG_SCHEDSTATS' per-task figures)."""
    try:
        stat = ThreadStat()
        stat.read()
        stat.cpu()
    except (OSError, ValueError, IndexError):
        return None
    return stat


def process_cpu_ns(pid: int) -> int:
    """The CPU time of process `pid` so far, all its threads, in ns: its
    process CPU clock (clock_getcpuclockid(3): the clock id is
    MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) = (~pid << 3) | 2, the kernel's
    posix-cpu-timers.h), which counts the slice running now too. UNKNOWN
    when it cannot be read (not Linux, the process gone)."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except (OSError, OverflowError, AttributeError):
        return UNKNOWN


# -- affinity ------------------------------------------------------------------


def allowed_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on, in order."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return ()


def set_process_affinity(pid: int, cpus: set[int] | frozenset[int]) -> bool:
    """Every thread of process `pid` on `cpus` (sched_setaffinity of a pid
    moves one thread only; the threads a process makes later inherit the
    affinity of the thread that makes them). False when it could not be done."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        tids = [pid]
    done = False
    for tid in tids:
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(tid, cpus)
            done = True
    return done


@contextlib.contextmanager
def calling_thread_on(cpus: set[int] | None):
    """The calling thread on `cpus` for the block (a child forked inside it
    inherits them), then back where it was."""
    if not cpus:
        yield
        return
    try:
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, cpus)
    except OSError:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, before)


# -- the TSC -------------------------------------------------------------------


@dataclass(frozen=True)
class TscRate:
    hz: float
    source: str

    def to_json(self) -> dict:
        return {"hz": round(self.hz), "source": self.source}


# x86-64: rdtsc; shl rdx, 32; or rax, rdx; ret
_RDTSC = bytes.fromhex("0f3148c1e2204809d0c3")
_KERNEL_TSC = re.compile(
    r"tsc: (?:Refined TSC clocksource calibration: |Detected )([\d.]+) MHz", re.IGNORECASE
)


def _rdtsc_function():
    import ctypes
    import mmap
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        return None, None
    buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(_RDTSC)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    return ctypes.CFUNCTYPE(ctypes.c_uint64)(address), buf


def measure_tsc(duration_s: float = 0.02) -> float | None:
    """The TSC's rate in Hz, against CLOCK_MONOTONIC over `duration_s`
    (best of three), or None where there is no rdtsc (not x86-64, or no
    executable memory)."""
    try:
        rdtsc, buf = _rdtsc_function()
    except (OSError, ValueError, TypeError, AttributeError, PermissionError):
        return None
    if rdtsc is None:
        return None
    rates = []
    try:
        for _ in range(3):
            t0, c0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC), rdtsc()
            end = t0 + int(duration_s * 1e9)
            while time.clock_gettime_ns(time.CLOCK_MONOTONIC) < end:
                pass
            t1, c1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC), rdtsc()
            rates.append((c1 - c0) / ((t1 - t0) / 1e9))
    finally:
        del rdtsc
        with contextlib.suppress(BufferError):
            buf.close()
    # A preemption between the two reads inflates neither: both clocks run on.
    rates.sort()
    return rates[1]


def kernel_tsc_mhz() -> float | None:
    """The kernel's own TSC figure from its log (refined calibration first),
    where the log is readable without privileges."""
    try:
        done = subprocess.run(
            ["dmesg"], capture_output=True, timeout=5, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _KERNEL_TSC.findall(done.stdout.decode("utf-8", "replace"))
    refined = [f for f in found if f]
    return float(refined[-1]) if refined else None


def tsc_rate() -> TscRate | None:
    """The TSC's rate and where it came from: measured (x86-64), else the
    kernel's log, else None."""
    measured = measure_tsc()
    if measured is not None:
        return TscRate(measured, "rdtsc against CLOCK_MONOTONIC, measured by bridge over 20 ms")
    mhz = kernel_tsc_mhz()
    if mhz is not None:
        return TscRate(mhz * 1e6, "kernel log (dmesg): tsc calibration")
    return None
