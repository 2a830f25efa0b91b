"""What a run shows while it runs: its progress on stderr, and each
scenario's answer and table on stdout as soon as that scenario is done.

--progress chooses how the progress is shown:

- bar: one line redrawn in place (`\\r`, erase-line): a bar, the share done,
  the time spent and left, the batch running, fitted to the terminal's width;
- lines: plain lines that a log keeps (no escape, no `\\r`): one as each
  runtime starts, one as each round of a scenario ends, and one for the
  batch running when LINE_EVERY_S has passed without a line, so that a log
  never stays silent for long;
- off: nothing;
- auto (the default): the bar on a terminal, lines elsewhere (a pipe, a
  file, ssh without a tty) and under CI (CI=true, as CI services set it) or
  TERM=dumb; nothing with -q, which asks for the answer alone.
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys
import time
from collections.abc import Callable, Mapping

import click

from bridge import plain
from bridge.cli.common import colour_wanted, show_results
from bridge.errors import UsageError
from bridge.measure import eta
from bridge.measure.runner import Finished
from bridge.render import terminal, terminal_width
from bridge.view import section_of

# In lines mode, a batch that starts this long after the last line gets one.
LINE_EVERY_S = 10.0


class ProgressMode(enum.Enum):
    AUTO = "auto"
    BAR = "bar"
    LINES = "lines"
    OFF = "off"


def progress_option(command):
    return click.option(
        "--progress",
        "progress",
        type=click.Choice([m.value for m in ProgressMode]),
        default=ProgressMode.AUTO.value,
        show_default=True,
        help="How the progress shows on stderr: a bar redrawn in place, plain lines"
        " (one as each runtime starts and each round ends, and at least one every"
        f" {LINE_EVERY_S:g} s), or nothing. auto: the bar on a terminal; lines in a pipe,"
        " a file or under CI=true; off with -q.",
    )(command)


def chosen(
    mode: ProgressMode, quiet: bool, tty: bool, env: Mapping[str, str] = os.environ
) -> ProgressMode:
    """What `auto` means here: off with -q, lines under CI or on a dumb or
    absent terminal, else the bar."""
    if mode is not ProgressMode.AUTO:
        return mode
    if quiet:
        return ProgressMode.OFF
    if env.get("CI", "").strip().lower() in ("true", "1", "yes"):
        return ProgressMode.LINES
    if not tty or env.get("TERM") == "dumb":
        return ProgressMode.LINES
    return ProgressMode.BAR


class Progress:
    """The progress printer the session calls with each message; `clear()`
    takes a bar off the screen before anything else is printed."""

    def __init__(self, mode: ProgressMode, clock: Callable[[], float] = time.monotonic) -> None:
        self.mode = mode
        self.clock = clock
        self.started = clock()
        self.fraction: float | None = None
        self.last_line = self.started
        self.drawn = False  # a bar is on the screen

    @property
    def shown(self) -> bool:
        return self.mode in (ProgressMode.BAR, ProgressMode.LINES)

    def __call__(self, message: str) -> None:
        fraction = getattr(message, "fraction", None)
        self.fraction = fraction if fraction is not None else self.fraction
        left = getattr(message, "left_s", None)
        elapsed = self.clock() - self.started
        text = plain.printable(message)
        if self.mode is ProgressMode.BAR:
            if getattr(message, "cell", None) is None:
                message = text  # a cell's note is kept: it shortens itself to fit
            line = eta.progress_line(message, terminal_width(), elapsed, self.fraction, left)
            _to_stderr(f"\r\033[K{plain.printable(line)}", nl=False)
            self.drawn = True
        elif self.mode is ProgressMode.LINES and self._worth_a_line(message):
            _to_stderr(eta.plain_line(text, elapsed, self.fraction, left))
            self.last_line = self.clock()

    def _worth_a_line(self, message: str) -> bool:
        step = getattr(message, "step", eta.Step.CELL)
        if step is not eta.Step.CELL:
            return True
        return self.clock() - self.last_line >= LINE_EVERY_S

    def clear(self) -> None:
        if self.drawn:
            _to_stderr("\r\033[K", nl=False)
            self.drawn = False


def _to_stderr(text: str, nl: bool = True) -> None:
    """The progress: a terminal that has closed (EIO, before SIGHUP's
    handler points stderr elsewhere: bridge.system.signals) loses only it,
    never the run."""
    with contextlib.suppress(OSError):
        click.echo(text, err=True, nl=nl)


def progress(mode: str, quiet: bool) -> Progress:
    try:
        wanted = ProgressMode(mode)
    except ValueError:
        raise UsageError(f"--progress {mode}: one of auto, bar, lines, off") from None
    return Progress(chosen(wanted, quiet, sys.stderr.isatty()))


class Sections:
    """The terminal view, scenario by scenario: the runner calls this with
    each scenario it is done with, and its section (heading, answer, table)
    goes to stdout at once. The view at the end leaves out those printed
    (`printed`). Other formats are whole documents, printed at the end."""

    def __init__(
        self,
        shape,
        rebase: Callable,
        clear: Callable[[], None],
    ) -> None:
        self.shape, self.rebase, self.clear = shape, rebase, clear
        self.printed: list[str] = []
        self.stopped = False  # stdout refused, or a section could not be made

    def __call__(self, finished: Finished) -> None:
        if self.stopped or self.shape.fmt != "table":
            return
        try:
            report = self.rebase(finished.report)
            view = section_of(report, finished.scenario, self.shape.detail)
            text = terminal.section(view, terminal_width(), colour_wanted())
        except Exception:
            # The view at the end shows this scenario, and fails there the
            # same way if it must, after the report is safe.
            self.stopped = True
            return
        self.clear()
        if show_results(("\n" if self.printed else "") + text) is not None:
            self.stopped = True  # the view at the end meets the same stdout and says so
            return
        self.printed.append(finished.scenario)

    def rest(self, whole: str) -> str:
        """The view at the end, after the sections printed already."""
        if self.printed and whole.strip():
            return "\n" + whole
        return whole
