"""`bridge env`'s quietness check: how steady is this machine right now, on
which CPU, and what to do about it.

A fixed loop (pure Python arithmetic, calibrated to last about one bridge
sample, 5 ms) runs back to back for a few seconds, on each CPU in turn
(pinned with sched_setaffinity, when there are at most 8; otherwise where the
scheduler puts it). Its durations should all be equal: their spread is the
machine's noise, as a measurement sees it. Per CPU:

- CV: stdev / mean of the durations;
- robust CV: 1.4826 x MAD / median, which a few long stalls do not inflate;
- slow: the share of samples more than 5% slower than the median;
- worst: the slowest sample over the median.

Verdict: quiet when every CPU's robust CV is at most 1% and its slow share
at most 5%; noisy when one is over 3% or 20%; otherwise "some noise". The
measuring code is the only part that touches the machine; `summarize`,
`verdict` and `advice` are pure; `advice` says what to do as reasons
(bridge.view.words words them).
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.analysis import noise
from bridge.report import schema
from bridge.report.comparison import Conditions
from bridge.report.findings import Reason, Why, reason

SAMPLE_S = 0.005
MIN_SAMPLES = 5  # however short --quietness-seconds is
SLOW = 1.05  # a sample this much over the median counts as slow
MAX_PINNED_CPUS = 8
QUIET_CV, QUIET_SLOW = 0.01, 0.05
NOISY_CV, NOISY_SLOW = 0.03, 0.20


@dataclass(frozen=True)
class CpuQuietness:
    cpu: int | None  # None: not pinned
    samples: int
    cv: float
    robust_cv: float
    slow: float
    worst: float

    def to_json(self) -> dict[str, Any]:
        return {
            "cpu": self.cpu,
            "samples": self.samples,
            "cv": round(self.cv, 5),
            "robust_cv": round(self.robust_cv, 5),
            "slow": round(self.slow, 4),
            "worst": round(self.worst, 3),
        }


@dataclass(frozen=True)
class Quietness:
    seconds: float
    cpus: tuple[CpuQuietness, ...]
    usage: noise.Usage | None
    verdict: str  # quiet | some noise | noisy
    advice: tuple[Reason, ...]  # what to do (bridge.view.words words it)

    def to_json(self) -> dict[str, Any]:
        u = self.usage
        during = {}
        if u is not None:
            during = {
                "load_after": list(u.load_after) if u.load_after else None,
                "steal": u.steal,
                "others_cpus": u.others_cpus,
                # Live, as `bridge env` prints them: never kept in a report.
                "busy_processes": [dataclasses.asdict(p) for p in u.busy_processes],
            }
        return {
            "seconds": self.seconds,
            "loop_ms": SAMPLE_S * 1000,  # a fixed pure-Python loop, back to back
            "cpus": [c.to_json() for c in self.cpus],
            "during": during,
            "verdict": self.verdict,
            "advice": [a.to_json() for a in self.advice],
        }


def summarize(cpu: int | None, durations: Sequence[float]) -> CpuQuietness:
    mean = statistics.fmean(durations)
    median = statistics.median(durations)
    mad = statistics.median(abs(d - median) for d in durations)
    return CpuQuietness(
        cpu=cpu,
        samples=len(durations),
        cv=statistics.pstdev(durations) / mean if mean > 0 else 0.0,
        robust_cv=1.4826 * mad / median if median > 0 else 0.0,
        slow=sum(d > SLOW * median for d in durations) / len(durations),
        worst=max(durations) / median if median > 0 else 1.0,
    )


def verdict(cpus: Sequence[CpuQuietness]) -> str:
    if any(c.robust_cv > NOISY_CV or c.slow > NOISY_SLOW for c in cpus):
        return "noisy"
    if all(c.robust_cv <= QUIET_CV and c.slow <= QUIET_SLOW for c in cpus):
        return "quiet"
    return "some noise"


def advice(cpus: Sequence[CpuQuietness], usage: noise.Usage | None, found: str) -> list[Reason]:
    if found == "quiet":
        return [reason(Why.QUIET_ENOUGH)]
    out = []
    pinned = [c for c in cpus if c.cpu is not None]
    if len(pinned) > 1:
        best = min(pinned, key=_noisiness)
        worst = max(pinned, key=_noisiness)
        # Only when one CPU is clearly quieter: against noise spread evenly
        # over the CPUs, pinning does not help.
        if _noisiness(best) < 0.5 * _noisiness(worst):
            out.append(reason(Why.PIN_CPU, cpu=best.cpu))
    out.append(reason(Why.UNTIL_STABLE))
    if usage is not None and usage.busy_processes:
        busiest = tuple((p.name, p.pid, p.cpu) for p in usage.busy_processes)
        out.append(reason(Why.BUSY_MEANWHILE, busiest=busiest))
    if usage is not None and usage.steal is not None and usage.steal >= noise.STEAL_MIN:
        out.append(reason(Why.STEAL, steal=usage.steal))
    return out


def _noisiness(c: CpuQuietness) -> float:
    return c.robust_cv + c.slow


# -- the machine a report ran on (bridge compare, the upgrade view) -------------
# Differences that count between two reports' machines: other processes'
# CPU (as bridge.analysis.noise warns), steal, the wait share, load per CPU.
OTHERS_DIFF_CPUS = 0.25
STEAL_DIFF = 0.02
WAIT_DIFF = 0.05
LOAD_DIFF_PER_CPU = 0.5


def busy(c: Conditions, cpus: int) -> bool:
    """Busy as bridge.analysis.noise says: other processes on a quarter of a
    CPU (a tenth of a large machine), steal of 2%, or a tenth of the time
    waiting for a CPU."""
    others = c.others_cpus or 0.0
    return (
        others >= max(noise.OTHERS_MIN_CPUS, noise.OTHERS_MIN_SHARE * cpus)
        or (c.steal or 0.0) >= noise.STEAL_MIN
        or (c.wait or 0.0) >= 0.10
    )


def conditions(report: schema.Report) -> Conditions | None:
    """The report's noise block as Conditions; the wait share where the
    report has one: the median of its cells' (the cpu_time block, optional;
    reports before it have none)."""
    n = report.noise
    if n is None or report.imported_from:
        return None
    loads = [x[0] for x in (n.load_before, n.load_after) if x]
    cells = report.cpu_time.cells if report.cpu_time is not None else ()
    waits = [c.wait_share for c in cells if c.wait_share is not None]
    wait = statistics.median(waits) if waits else None
    return Conditions(
        cpus=n.cpus,
        load=max(loads) if loads else None,
        others_cpus=n.others_cpus,
        steal=n.steal,
        wait=wait,
    )


def unequal(a: Conditions | None, b: Conditions | None) -> Reason | None:
    """None when the machines were alike, or nothing says otherwise; else
    UNEQUAL_LOAD with the side that was busier: "A", "B", or "" when the
    measures disagree or the quieter side was busy too, so that load can
    have moved either."""
    if a is None or b is None:
        return None
    cpus = a.cpus or b.cpus or 1
    votes = []
    for x, y, step in (
        (a.others_cpus, b.others_cpus, OTHERS_DIFF_CPUS),
        (a.steal, b.steal, STEAL_DIFF),
        (a.wait, b.wait, WAIT_DIFF),
        (a.load, b.load, LOAD_DIFF_PER_CPU * cpus),
    ):
        if x is not None and y is not None and abs(x - y) >= step:
            votes.append(0 if x > y else 1)
    if not votes:
        return None
    busier = votes[0] if len(set(votes)) == 1 else None
    if busier is not None and busy(b if busier == 0 else a, cpus):
        busier = None
    return reason(Why.UNEQUAL_LOAD, busier={0: "A", 1: "B"}.get(busier, ""))


# -- measuring ---------------------------------------------------------------


def _loop(n: int) -> int:
    x = 0
    for i in range(n):
        x += i * i
    return x


def _calibrate(clock: Callable[[], float]) -> int:
    n = 1000
    while True:
        t0 = clock()
        _loop(n)
        took = clock() - t0
        if took >= SAMPLE_S / 2:
            return max(1, round(n * SAMPLE_S / took))
        n *= 2


def _run(n: int, seconds: float, clock: Callable[[], float]) -> list[float]:
    durations: list[float] = []
    end = clock() + seconds
    while clock() < end or len(durations) < MIN_SAMPLES:
        t0 = clock()
        _loop(n)
        durations.append(clock() - t0)
    return durations


def check(seconds: float = 3.0, clock: Callable[[], float] = time.perf_counter) -> Quietness:
    """Run the loop for `seconds` in all, split over the CPUs bridge may use."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    targets: list[int | None] = list(allowed) if 1 < len(allowed) <= MAX_PINNED_CPUS else [None]
    before = noise.snapshot()
    n = _calibrate(clock)
    found = []
    for cpu in targets:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        try:
            _loop(n)  # the first run after a move pays for cold caches
            found.append(summarize(cpu, _run(n, seconds / len(targets), clock)))
        finally:
            if cpu is not None:
                os.sched_setaffinity(0, allowed)
    use = noise.usage(before, noise.snapshot(), os.cpu_count())
    result = verdict(found)
    return Quietness(seconds, tuple(found), use, result, tuple(advice(found, use, result)))
