"""Ctrl-C and SIGTERM while a run's report is at stake.

The first SIGINT or SIGTERM raises KeyboardInterrupt, as Python's own
handler does: the session stops measuring and the runner assembles what was
measured. From then on, and from the moment the measurement ends without a
signal, later signals are *held*: recorded, not raised, so that stopping the
workers, removing their temporary directories, assembling, printing and
writing the report all finish. Once the report is safe (written, or kept in a
fallback file), `release()` ends the holding, and a signal ends bridge at
once. The exit status follows the first signal: 130 for SIGINT, 143 for
SIGTERM.

Outside `guarding()` (every command but `run`), and where bridge.cli.main has not
installed the handler (the library used in-process), nothing is held.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
HELD_NOTE = b"\nbridge: stopping once the report is saved\n"


class _State:
    def __init__(self) -> None:
        self.received: list[int] = []
        self.guarding = False  # a run's report is at stake
        self.holding = False  # signals are recorded, not raised
        self.noted = False


_state = _State()


def install() -> None:
    """SIGINT and SIGTERM through `_handle`. A signal the process started
    with ignored (a background job of a non-interactive shell ignores
    SIGINT) stays ignored."""
    for signum in STATUS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _handle)


def _handle(signum: int, frame: object) -> None:
    _state.received.append(signum)
    if _state.holding:
        if not _state.noted:
            _state.noted = True
            # os.write, not sys.stderr: a handler may run inside a write to it.
            with contextlib.suppress(OSError):
                os.write(2, HELD_NOTE)
        return
    if _state.guarding:
        _state.holding = True  # the run stops; what follows saves its report
    raise KeyboardInterrupt


@contextlib.contextmanager
def guarding() -> Iterator[None]:
    """Around a run and the saving of its report: after the first signal,
    or after `hold()`, signals wait until `release()` (or the end of the
    block)."""
    _state.guarding = True
    try:
        yield
    finally:
        release()


def hold() -> None:
    """The measurement is over: from now on signals are held (inside
    `guarding()`; elsewhere this does nothing)."""
    if _state.guarding:
        _state.holding = True


def release() -> None:
    """The report is safe: a signal from now on ends bridge at once."""
    _state.guarding = _state.holding = False


def finish() -> None:
    """bridge has decided its exit status: signals from now on are ignored.
    (Python restores the default handlers while it shuts down, where a late
    SIGTERM would kill bridge and replace its status with "killed by 15",
    and skip the clean-up that atexit does.)"""
    for signum in STATUS:
        signal.signal(signum, signal.SIG_IGN)


def count() -> int:
    """How many SIGINT/SIGTERM bridge has received."""
    return len(_state.received)


def status() -> int | None:
    """The exit status of an interrupted bridge (the first signal's), or
    None when no signal came."""
    return STATUS[_state.received[0]] if _state.received else None


def reset() -> None:
    """Forget every signal (tests that drive the CLI in-process)."""
    _state.__init__()
