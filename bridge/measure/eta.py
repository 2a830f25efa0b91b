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


class Status(str):
    """A progress message that also says how far the run is: still a str, so
    a callback that only prints text can print it as it is. `fraction` is the
    planned share done (0..1), `left_s` the estimate of `Eta.text` (None
    while there is nothing to go by)."""

    fraction: float | None = None
    elapsed_s: float = 0.0
    left_s: float | None = None


def status(eta: Eta, message: str) -> Status:
    """`message` with where `eta` is: the share done, the time spent, the time left."""
    out = Status(message)
    elapsed = eta.clock() - eta.started
    out.elapsed_s = elapsed
    if eta.planned_s > 0:
        out.fraction = min(max(eta.done_s / eta.planned_s, 0.0), 1.0)
    left = eta.left_s(elapsed)
    if left is not None and elapsed >= MIN_ELAPSED_S and elapsed + left >= MIN_TOTAL_S:
        out.left_s = left
    return out


def clock_text(seconds: float) -> str:
    """0:07, 1:20, 1:02:03: the progress line's elapsed and left."""
    s = max(round(seconds), 0)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def progress_line(
    message: str, width: int, elapsed_s: float, fraction: float | None, left_s: float | None
) -> str:
    """One line of at most `width` - 3 columns: a full line would wrap on
    some terminals, and so would the "^C" a terminal echoes after it on
    Ctrl-C, leaving a stale line behind. A bar, the percentage, the time
    spent and left, then the message, cut short with "..."."""
    room = max(width - 3, 10)
    if fraction is not None:
        bar_w = 20 if room >= 70 else 10
        full = int(fraction * bar_w)
        bar = "#" * full + "-" * (bar_w - full)
        left = clock_text(left_s) if left_s is not None else "-:--"
        head = f"[{bar}] {fraction * 100:3.0f}% {clock_text(elapsed_s)} ETA {left} "
    else:
        head = f"{clock_text(elapsed_s)} "
    line = head + str(message)
    if len(line) > room:
        line = line[: room - 3] + "..."
    return line
