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
   once (`clock_ns`), is reported beside it.

Imported only in the worker process (bridge.pyworker.ops), never in the driver.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge.errors import OperationError

CLOCK = time.CLOCK_MONOTONIC
MAX_WORKERS = 1024
MAX_WINDOWS = 100_000
MAX_NS = 60_000_000_000
BATCHES_PER_WINDOW = 8
# How long a thread may take to start, past the barrier, before the others
# would begin without it.
THREAD_START_NS = 20_000_000

Loop = Callable[[int], None]
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
    threads = ints(args, "workers", 1, MAX_WORKERS)
    warmup_ns = ints(args, "warmup_ns", 0, MAX_NS)
    window_ns = ints(args, "window_ns", 1_000_000, MAX_NS)
    count = ints(args, "windows", 1, MAX_WINDOWS)
    batch = ints(args, "batch", 0, 1_000_000_000) if "batch" in args else 0
    start_at = ints(args, "start_at_ns", 0, 2**63 - 1) if "start_at_ns" in args else None
    same = ints(args, "same_output", 0, 1) if "same_output" in args else 1
    call = args.get("call", b"")
    name = call.decode("utf-8", "replace") if isinstance(call, bytes) else ""
    api, once, loop = prepare(name, args)
    try:
        once()
    except ValueError as exc:  # hashlib: unsupported digest in this build
        raise OperationError("unsupported", str(exc)) from exc
    batch = batch or calibrate_batch(loop, window_ns)
    start = start_at if start_at is not None else now() + THREAD_START_NS
    t0 = start + warmup_ns
    results = run_threads(threads, once, loop, batch, Schedule(start, t0, window_ns, count))
    outputs = [r[2] for r in results]
    if same and any(o != outputs[0] for o in outputs):
        raise OperationError("failed", "the concurrent threads computed different bytes")
    return [
        ("api", api),
        ("clock_ns", clock_cost()),
        ("level", threads),
        ("batch", batch),
        ("windows", [list(r[0]) for r in results]),
        ("latency_ns", [r[1] for r in results]),
        ("output", outputs[0]),
        # Processes: how late this one began, against the common start.
        ("start_late_ns", max(0, results[0][3] - start)),
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
    """The batch that lasts about window / 8 on one thread."""
    target = max(1, window_ns // BATCHES_PER_WINDOW)
    n = 1
    while True:
        t = timed(loop, n)
        if t * 2 >= target:
            return max(1, round(n * target / max(t, 1)))
        n *= 2


def timed(loop: Loop, n: int) -> int:
    t0 = now()
    loop(n)
    return now() - t0


Outcome = tuple[list[Window], list[int], bytes, int]  # windows, latencies, output, began


@dataclass(frozen=True)
class Schedule:
    """When a level runs, on the monotonic clock: every worker warms up from
    `start`, and is measured over `count` windows of `window_ns` from `t0`."""

    start: int
    t0: int
    window_ns: int
    count: int


def run_threads(
    n: int, once: Callable[[], bytes], loop: Loop, batch: int, when: Schedule
) -> list[Outcome]:
    """n workers (this thread is the first), each run on `when`."""
    outcomes: list[Outcome | None] = [None] * n
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def work(i: int) -> None:
        try:
            barrier.wait()
            outcomes[i] = worker(once, loop, batch, when)
        except BaseException as exc:  # reported below, on the requesting thread
            errors.append(exc)
            barrier.abort()

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
    return [o for o in outcomes if o is not None]


def worker(once: Callable[[], bytes], loop: Loop, batch: int, when: Schedule) -> Outcome:
    sleep_until(when.start)
    began = now()
    while now() < when.t0:  # warm-up, together
        loop(batch)
    windows, latencies = run_windows(loop, batch, when.t0, when.window_ns, when.count)
    return windows, latencies, once(), began


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
