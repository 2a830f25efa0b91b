"""A cell's loop count, as both workers find it (erl/bridge_measure.erl
alike): bridge.pyworker.ops for a cell's samples, bridge.pyworker.conc for a
level's batch."""

from __future__ import annotations

from collections.abc import Callable

Loop = Callable[[int], None]


def calibrate(
    loop: Loop, warmup_ns: int, sample_ns: int, timer: Callable[[Loop, int], int]
) -> tuple[int, int, int]:
    """(iterations, ns that many took, ns spent in all), `timer` timing n
    iterations of `loop`: the count doubles until a run lasts half a sample,
    and counts once two runs in a row at it do, the shorter kept, and
    `warmup_ns` have passed. One run stretched by a wait for the CPU would
    otherwise set the cell's loops: beside two busy loops a masked twin
    calibrated to 1 call a sample where its partner made 21, and a control
    read slower masked."""
    n, spent, best = 1, 0, None  # best: the shorter long run at n so far
    while True:
        t = timer(loop, n)
        spent += t
        if t * 2 < sample_ns:
            n, best = n * 2, None
        elif best is not None and spent >= warmup_ns:
            return n, min(best, t), spent
        else:
            best = t if best is None else min(best, t)
