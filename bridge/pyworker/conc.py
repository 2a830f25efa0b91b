"""The Python worker's `conc` operation: one call made by N threads of this
interpreter at once, or by this process as one of N worker processes that the
driver started, over common time windows.

The procedure is erl/bridge_concurrency.erl's, so every runtime is measured
alike:

1. the batch: calls made back to back between two clock reads, calibrated
   on one thread so that it lasts about an eighth of a window (a later round
   passes the batch it got);
2. the start: threads wait at a barrier and then warm up together until the
   common start T0; worker processes are given the warm-up start as a time on
   CLOCK_MONOTONIC, which every process on the machine shares, so N processes
   that the driver asked in turn still begin together;
3. window i is [T0 + i*W, T0 + (i+1)*W). A worker runs batches until one
   ends past the window's end and records (calls, ns) for the window. A
   worker that finds a window already over records (0, 0): the driver drops
   a window that any worker missed;
4. the last call of every batch is timed on its own: the sampled per-call
   latency. It includes the clock reads around it; their cost, measured
   once (`clock_ns`), is reported beside it;
5. over the windows, each thread's CPU time (CLOCK_THREAD_CPUTIME_ID) and
   its run-queue wait (schedstat): `cpu_ns`, `wait_ns`, summed, beside the
   windows' `span_ns`;
6. the races (the slowest of N): after the windows, the N threads make the
   same fixed number of calls (`race_calls`; 0: the calls one thread
   made in the median window of this request) from a common start a few
   milliseconds ahead, each timing its finish from that start, `races`
   times. Worker processes race one
   request at a time (`windows` 0, the start given as `start_at_ns`), since
   they share no barrier.

Imported only in the worker process (bridge.pyworker.ops), never in the driver.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.errors import OperationError
from bridge.pyworker import calibration
from bridge.system import cpustat

CLOCK = time.CLOCK_MONOTONIC
MAX_WORKERS = 1024
MAX_WINDOWS = 100_000
MAX_NS = 60_000_000_000
BATCHES_PER_WINDOW = 8
# How long a thread may take to start, past the barrier, before the others
# would begin without it.
THREAD_START_NS = 20_000_000
MAX_RACES = 1000
# A race starts this long after the last thread reaches its barrier.
RACE_LEAD_NS = 5_000_000

Loop = calibration.Loop
Window = tuple[int, int]


def now() -> int:
    return time.clock_gettime_ns(CLOCK)


def conc(
    args: dict[str, Any],
    prepare: Callable[[str, dict[str, Any]], tuple[str, Callable[[], bytes], Loop]],
    ints: Callable[[dict[str, Any], str, int, int], int],
) -> list[tuple[str, Any]]:
    """`prepare` and `ints` are bridge.pyworker.ops' own: the call and its loop are
    built exactly as for `bench`, and arguments are checked the same way."""

    def opt(key: str, low: int, high: int, default: int) -> int:
        return ints(args, key, low, high) if key in args else default

    threads = ints(args, "workers", 1, MAX_WORKERS)
    warmup_ns = ints(args, "warmup_ns", 0, MAX_NS)
    window_ns = ints(args, "window_ns", 1_000_000, MAX_NS)
    races = opt("races", 0, MAX_RACES, 0)
    race_calls = opt("race_calls", 0, 1_000_000_000, 0)
    # Races alone (a worker process's turn in a race, race_calls given): no windows.
    count = ints(args, "windows", 0 if races and race_calls else 1, MAX_WINDOWS)
    batch = opt("batch", 0, 1_000_000_000, 0)
    start_at = opt("start_at_ns", 0, 2**63 - 1, -1)
    same = opt("same_output", 0, 1, 1)
    call = args.get("call", b"")
    name = call.decode("utf-8", "replace") if isinstance(call, bytes) else ""
    api, once, loop = prepare(name, args)
    try:
        if count:  # a race alone follows this process's windows, which made the call
            once()
    except ValueError as exc:  # hashlib: unsupported digest in this build
        raise OperationError("unsupported", str(exc)) from exc
    batch = batch or (calibrate_batch(loop, window_ns) if count else 1)
    start = start_at if start_at >= 0 else now() + THREAD_START_NS
    when = Schedule(start, start + warmup_ns, window_ns, count)
    plan = Plan(once, loop, batch, when, Race(race_calls, races))
    results = run_threads(threads, plan)
    outputs = [r.output for r in results]
    if same and any(o != outputs[0] for o in outputs):
        raise OperationError("failed", "the concurrent threads computed different bytes")
    return [
        ("api", api),
        ("clock_ns", clock_cost()),
        ("level", threads),
        ("batch", batch),
        ("windows", [list(r.windows) for r in results]),
        ("latency_ns", [r.latencies for r in results]),
        ("output", outputs[0]),
        *cpu_reply(results, count, start),
        *race_reply(results, plan.race),
    ]


def cpu_reply(results: list[Outcome], count: int, start: int) -> list[tuple[str, Any]]:
    """How late this process began against the common start (processes),
    the windows' span, and the threads' CPU and run-queue wait in it."""
    if not count:
        return []
    span = max(r.ended for r in results) - min(r.started for r in results)
    out: list[tuple[str, Any]] = [("start_late_ns", max(0, results[0].began - start))]
    out += [("span_ns", span)]
    if all(r.wait_ns >= 0 for r in results):
        out += [("cpu_ns", sum(r.cpu_ns for r in results))]
        out += [("wait_ns", sum(r.wait_ns for r in results))]
    return out


def race_reply(results: list[Outcome], race: Race) -> list[tuple[str, Any]]:
    """Per race, each thread's finish, from the race's common start."""
    if not race.count:
        return []
    return [
        ("race_calls", results[0].race_calls),
        ("race_ns", [list(x) for x in zip(*(r.races for r in results), strict=True)]),
    ]


def clock_cost() -> int:
    """What timing one call adds to its sampled latency: the median of an
    empty timed region, reported beside the latencies, not subtracted."""
    clock = now
    gaps = []
    for _ in range(1001):
        a = clock()
        b = clock()
        gaps.append(b - a)
    return sorted(gaps)[500]


def calibrate_batch(loop: Loop, window_ns: int) -> int:
    """The batch that lasts about window / 8 on one thread (calibrated as a
    cell's loops are: calibration.calibrate)."""
    target = max(1, window_ns // BATCHES_PER_WINDOW)
    n, t, _ = calibration.calibrate(loop, 0, target, timed)
    return max(1, round(n * target / max(t, 1)))


def timed(loop: Loop, n: int) -> int:
    t0 = now()
    loop(n)
    return now() - t0


@dataclass(frozen=True)
class Schedule:
    """When a level runs, on the monotonic clock: every worker warms up from
    `start`, and is measured over `count` windows of `window_ns` from `t0`."""

    start: int
    t0: int
    window_ns: int
    count: int


@dataclass(frozen=True)
class Race:
    """`count` races of `calls` calls each (0: the calls one thread made
    in the median window, known once the windows are over)."""

    calls: int
    count: int


@dataclass(frozen=True)
class Plan:
    """What every thread of a request does."""

    once: Callable[[], bytes]
    loop: Loop
    batch: int
    when: Schedule
    race: Race


@dataclass
class Outcome:
    """One thread's: its windows and sampled latencies, its output, when it
    began; over the windows its span, CPU time and run-queue wait (-1:
    unknown); each race's finish from the race's start."""

    windows: list[Window] = field(default_factory=list)
    latencies: list[int] = field(default_factory=list)
    output: bytes = b""
    began: int = 0
    started: int = 0
    ended: int = 0
    cpu_ns: int = 0
    wait_ns: int = -1
    races: list[int] = field(default_factory=list)
    race_calls: int = 0


def run_threads(n: int, plan: Plan) -> list[Outcome]:
    """n workers (this thread is the first), each run on `plan`."""
    outcomes: list[Outcome | None] = [None] * n
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)
    race = RaceStart(plan.race.calls)

    def start_race() -> None:  # run by one thread, once all have arrived
        if not race.calls:
            race.calls = race_calls([o.windows for o in outcomes if o is not None])
        race.start = now() + RACE_LEAD_NS

    racing = threading.Barrier(n, action=start_race)

    def work(i: int) -> None:
        try:
            barrier.wait()
            out = outcomes[i] = Outcome()
            worker(plan, out, lambda: run_race(plan, racing, race))
        except BaseException as exc:  # reported below, on the requesting thread
            errors.append(exc)
            barrier.abort()
            racing.abort()

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(1, n)]
    for t in threads:
        t.start()
    work(0)
    for t in threads:
        t.join()
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        exc = (real or errors)[0]
        raise OperationError(
            "failed", f"a thread of the concurrent run failed: {type(exc).__name__}: {exc}"
        )
    done = [o for o in outcomes if o is not None]
    if plan.race.count:
        for o in done:
            o.race_calls = race.calls
    return done


@dataclass
class RaceStart:
    """What the threads of a request share for a race: its calls and start."""

    calls: int
    start: int = 0


def race_calls(windows: list[list[Window]]) -> int:
    """The calls one worker made in the median window (at level 1 a race lasts
    about a window), at least one; as erl/bridge_concurrency.erl."""
    calls = sorted(c for ws in windows for c, _ in ws if c > 0)
    return calls[(len(calls) + 1) // 2 - 1] if calls else 1


def worker(plan: Plan, out: Outcome, race_once: Callable[[], int]) -> None:
    """The windows (when there are any), then the races, then the output."""
    when, loop, batch = plan.when, plan.loop, plan.batch
    if when.count:
        sleep_until(when.start)
        out.began = now()
        while now() < when.t0:  # warm-up, together
            loop(batch)
        stat = cpustat.open_self()
        try:
            wait0 = stat.read()[1] if stat else 0
            cpu0, out.started = time.thread_time_ns(), now()
            out.windows, out.latencies = run_windows(
                loop, batch, when.t0, when.window_ns, when.count
            )
            out.ended, out.cpu_ns = now(), time.thread_time_ns() - cpu0
            out.wait_ns = stat.read()[1] - wait0 if stat else -1
        finally:
            if stat:
                stat.close()
    out.races = [race_once() for _ in range(plan.race.count)]
    out.output = plan.once()


def run_race(plan: Plan, racing: threading.Barrier, race: RaceStart) -> int:
    """One race: this thread's finish, from the common start. Without
    windows (a worker process's turn), the start is the request's."""
    if plan.when.count:
        racing.wait()
        start = race.start
    else:
        start = plan.when.start
    sleep_until(start)
    plan.loop(race.calls)
    return now() - start


def run_windows(
    loop: Loop, batch: int, t0: int, window_ns: int, count: int
) -> tuple[list[Window], list[int]]:
    clock, windows, latencies = now, [], []
    for i in range(count):
        start, end = clock(), t0 + (i + 1) * window_ns
        if start >= end:
            windows.append((0, 0))  # missed: descheduled for a whole window
            continue
        calls = 0
        while True:
            if batch > 1:
                loop(batch - 1)
            a = clock()
            loop(1)
            b = clock()
            latencies.append(b - a)
            calls += batch
            if b >= end:
                break
        windows.append((calls, b - start))
    return windows, latencies


def sleep_until(t: int) -> None:
    """Sleep most of the way, then spin: sleep wakes late by up to a
    scheduler tick, and the start should be sharp."""
    left = t - now()
    if left > 2_000_000:
        time.sleep((left - 1_000_000) / 1e9)
    while now() < t:
        pass
