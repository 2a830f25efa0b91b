"""How long a run has left, for the progress line.

The session knows every batch it will ask for and what each is planned to
take (warm-up plus samples × sample time, or openssl runs × their seconds).
What the finished batches really took, against what they were planned to
take, scales the plan of the rest: a busy machine, slow worker replies or a
call slower than one sample all show in that ratio. Pure, with the clock
passed in.
"""

from __future__ import annotations

from collections.abc import Callable

# Say nothing for short runs: an estimate needs a few batches behind it, and
# a run of a few seconds needs none.
MIN_ELAPSED_S = 2.0
MIN_TOTAL_S = 5.0


class Eta:
    def __init__(self, planned_s: float, clock: Callable[[], float]) -> None:
        self.planned_s = planned_s
        self.done_s = 0.0  # planned seconds of the batches finished
        self.clock = clock
        self.started = clock()

    def finished(self, planned_s: float) -> None:
        self.done_s += planned_s

    def left_s(self, elapsed: float) -> float | None:
        """Seconds left, or None while there is nothing to go by."""
        if self.done_s <= 0:
            return None
        return max(self.planned_s - self.done_s, 0.0) * elapsed / self.done_s

    def text(self) -> str:
        """ "", or e.g. " - about 1 min 20 s left"."""
        elapsed = self.clock() - self.started
        left = self.left_s(elapsed)
        if left is None or elapsed < MIN_ELAPSED_S or elapsed + left < MIN_TOTAL_S:
            return ""
        return f" - about {duration(left)} left"


def duration(seconds: float) -> str:
    """A rounded human duration: 8 s, 45 s, 1 min 20 s, 2 h 5 min."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        minutes, rest = divmod(round(seconds / 10) * 10 if s >= 600 else s, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"
