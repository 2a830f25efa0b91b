"""How long a run has left, and the progress it reports.

The session knows every batch it will ask for and what each is planned to
take (warm-up plus samples × sample time, or openssl runs × their seconds).
Before any batch has finished, the plan is the estimate. Then what the
finished batches really took, against what they were planned to take,
scales the plan of the rest: a busy machine, slow worker replies or a call
slower than one sample all show in that ratio. The ratio is drawn towards 1
(the plan) by a few seconds of prior (PRIOR_S), so that the first batch,
warm-ups and calibration, does not swing it alone. Pure, with the clock
passed in.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from bridge.catalog.vocab import RuntimeKind

# The weight of the plan in the ratio, in planned seconds: a run that has
# finished PRIOR_S of its plan is judged half by its plan, half by its pace.
PRIOR_S = 3.0


class Eta:
    def __init__(self, planned_s: float, clock: Callable[[], float]) -> None:
        self.planned_s = planned_s
        self.done_s = 0.0  # planned seconds of the batches finished
        self.clock = clock
        self.started = clock()

    def finished(self, planned_s: float) -> None:
        self.done_s += planned_s

    def left_s(self, elapsed: float) -> float:
        """Seconds left: the plan of the rest, scaled by the pace so far."""
        rest = max(self.planned_s - self.done_s, 0.0)
        pace = (elapsed + PRIOR_S) / (self.done_s + PRIOR_S)
        return rest * pace


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


class Step(enum.Enum):
    """What a progress message says: a runtime starts (or the run waits for
    one), a cell's batch begins, or a round (or an extra round) ended."""

    START = "start"
    CELL = "cell"
    ROUND = "round"


@dataclass(frozen=True)
class CellNote:
    """The batch a CELL message is about, so that a narrow line can shorten
    the runtime and keep the call (`text(level)`)."""

    round: str  # "round 2/4", "extra round 1 (3 unstable, at most 40 s left)"
    runtime: str  # erlang@25.2.3
    masked: bool  # the twin with the features masked (hw off)
    scenario: str
    call: str
    size: str  # "1000 B"
    index: int
    total: int

    def text(self, level: int = 0) -> str:
        """The message at shortening `level`: 0 in full, then without the
        cell count, with the round as r2/4, the runtime as erl25.2.3, and
        last without the scenario (the call and size always stay)."""
        rnd = self.round if level < 2 else _short_round(self.round)
        runtime = self.runtime if level < 3 else short_runtime(self.runtime)
        hw = " off" if self.masked else ""
        scenario = f" {self.scenario}" if level < 4 else ""
        count = f" ({self.index}/{self.total})" if level < 1 else ""
        return f"{rnd} [{runtime}{hw}]{scenario} {self.call} {self.size}{count}"


LEVELS = 5  # CellNote.text's levels: 0 to 4

# The runtime kinds as a narrow line names them.
_KIND = {RuntimeKind.ERLANG: "erl", RuntimeKind.PYTHON: "py", RuntimeKind.OPENSSL: "ossl"}


def short_runtime(runtime: str) -> str:
    """erlang@25.2.3 -> erl25.2.3, openssl@3.0.19#2 -> ossl3.0.19#2; a
    node's or another name as it is."""
    kind, at, version = runtime.partition("@")
    return f"{_KIND[kind]}{version}" if at and kind in _KIND else runtime


def _short_round(label: str) -> str:
    """ "round 2/4" -> "r2/4"; "extra round 3 (...)" -> "x3"."""
    words = label.split()
    if words[:1] == ["round"] and len(words) > 1:
        return f"r{words[1]}"
    if words[:2] == ["extra", "round"] and len(words) > 2:
        return f"x{words[2]}"
    return label


class Status(str):
    """A progress message that also says how far the run is: still a str, so
    a callback that only prints text can print it as it is. `fraction` is the
    planned share done (0..1), `left_s` the estimate of `Eta.left_s`, `step`
    what the message is about, `cell` the batch of a CELL message."""

    fraction: float | None = None
    elapsed_s: float = 0.0
    left_s: float | None = None
    step: Step = Step.START
    cell: CellNote | None = None


def status(
    eta: Eta | None, message: str, step: Step = Step.CELL, cell: CellNote | None = None
) -> Status:
    """`message` with where `eta` is (the share done, the time spent, the time
    left; nothing without an ETA, which then costs no clock read)."""
    out = Status(message)
    out.step, out.cell = step, cell
    if eta is None:
        return out
    elapsed = eta.clock() - eta.started
    out.elapsed_s = elapsed
    if eta.planned_s > 0:
        out.fraction = min(max(eta.done_s / eta.planned_s, 0.0), 1.0)
        out.left_s = eta.left_s(elapsed)
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
    spent and left, then the message: a cell's shortened until it fits
    (CellNote.text), the runtime before the call; cut short with "..." as a
    last resort."""
    room = max(width - 3, 10)
    if fraction is not None:
        bar_w = 20 if room >= 90 else 10
        full = int(fraction * bar_w)
        bar = "#" * full + "-" * (bar_w - full)
        left = clock_text(left_s) if left_s is not None else "-:--"
        head = f"[{bar}] {fraction * 100:3.0f}% {clock_text(elapsed_s)} ETA {left} "
    else:
        head = f"{clock_text(elapsed_s)} "
    cell = getattr(message, "cell", None)
    texts = [cell.text(level) for level in range(LEVELS)] if cell is not None else [message]
    line = head + texts[-1]
    for text in texts:
        if len(head) + len(text) <= room:
            line = head + text
            break
    if len(line) > room:
        line = line[: room - 3] + "..."
    return line


def plain_line(message: str, elapsed_s: float, fraction: float | None, left_s: float | None) -> str:
    """The progress as one plain line, for a log or a pipe: the share done,
    the time spent and left, the message in full (no bar, no escape)."""
    if fraction is None:
        return f"{clock_text(elapsed_s)} {message}"
    left = clock_text(left_s) if left_s is not None else "-:--"
    return f"{fraction * 100:3.0f}% {clock_text(elapsed_s)} ETA {left} {message}"
