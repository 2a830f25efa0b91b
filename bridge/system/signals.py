"""Ctrl-C, SIGTERM and SIGHUP while a run's report is at stake.

The first SIGINT, SIGTERM or SIGHUP raises KeyboardInterrupt, as Python's own
handler does for SIGINT: the session stops measuring and the runner assembles what was
measured. From then on, and from the moment the measurement ends without a
signal, later signals are *held*: recorded, not raised, so that stopping the
workers, removing their temporary directories, assembling, printing and
writing the report all finish. Once the report is safe (written, or kept in a
fallback file), `release()` ends the holding, and a signal ends bridge at
once. The exit status follows the first signal: 130 for SIGINT, 143 for
SIGTERM, 129 for SIGHUP.

SIGHUP comes when the terminal or the ssh session closes. Its default
action would end bridge at once and lose every result measured so far; it is
handled as the others are. A terminal that has hung up fails every write
(EIO), so bridge's standard output and error, where they were that terminal,
are pointed at /dev/null when SIGHUP arrives (`stdout_lost()` says so): the
report is then saved as usual, and with no -o it is kept in a file of its
own (bridge.cli.run). A file or a pipe keeps receiving what bridge says.

Outside `guarding()` (every command but `run`), and where bridge.cli.main has not
installed the handler (the library used in-process), nothing is held.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from collections.abc import Iterator

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
HELD_NOTE = b"\nbridge: stopping once the report is saved\n"


class _State:
    def __init__(self) -> None:
        self.received: list[int] = []
        self.guarding = False  # a run's report is at stake
        self.holding = False  # signals are recorded, not raised
        self.noted = False
        self.stdout_lost = False  # fd 1 was a terminal that hung up


_state = _State()


def install() -> None:
    """SIGINT, SIGTERM and SIGHUP through `_handle`. A signal the process
    started with ignored stays ignored: a background job of a
    non-interactive shell ignores SIGINT, and `nohup bridge ...` SIGHUP."""
    for signum in STATUS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _handle)


def _handle(signum: int, frame: object) -> None:
    _state.received.append(signum)
    if signum == signal.SIGHUP:
        _leave_hung_up_terminal()
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


def _leave_hung_up_terminal() -> None:
    """Point fds 1 and 2 at /dev/null where they are a terminal that hung
    up: a character device that is no longer a tty (the kernel swaps a
    hung-up terminal's file operations before it sends SIGHUP). A terminal
    still there, a file or a pipe is left as it is."""
    for fd in (1, 2):
        try:
            if not stat.S_ISCHR(os.fstat(fd).st_mode) or os.isatty(fd):
                continue
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        except OSError:
            continue
        if fd == 1:
            _state.stdout_lost = True


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
    """How many SIGINT/SIGTERM/SIGHUP bridge has received."""
    return len(_state.received)


def hung_up() -> bool:
    """Whether the first signal was SIGHUP."""
    return bool(_state.received) and _state.received[0] == signal.SIGHUP


def stdout_lost() -> bool:
    """Whether standard output was a terminal that hung up (now /dev/null)."""
    return _state.stdout_lost


def status() -> int | None:
    """The exit status of an interrupted bridge (the first signal's), or
    None when no signal came."""
    return STATUS[_state.received[0]] if _state.received else None


def reset() -> None:
    """Forget every signal (tests that drive the CLI in-process)."""
    _state.__init__()
