"""Short-lived child processes (openssl, erl probes) that never outlive bridge.

`run` is subprocess.run with three guarantees: the child dies with bridge
(PR_SET_PDEATHSIG), it runs in its own session (Ctrl-C reaches bridge, which
then kills the child's whole group), and any exception - timeout, Ctrl-C,
SIGTERM turned into an exception - kills and reaps it before propagating.

`run_bounded` is the same for a command that is the user's own (`sh:`): it
reads at most a given amount of its output, keeps only the tail of its
stderr, ends at its own exit even when a background job it left holds its
output open, and kills its whole group past a wall-clock limit.
"""

from __future__ import annotations

import contextlib
import ctypes
import enum
import os
import resource
import select
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bridge.system import fence

_PR_SET_PDEATHSIG = 1
# Variables that add flags to every erl (and to the erl that erlc starts to
# compile): they could switch on distribution (-sname/-name: epmd and a
# listening socket), so no Erlang process bridge starts sees them.
ERLANG_FLAG_VARS = ("ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS")


def erlang_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """bridge's environment for an erl/erlc child: without ERL_*FLAGS, from
    bridge's own environment or from `extra`. --env refuses them already; a
    report's variables are filtered by bridge.cli.replay. This is the last place
    before a child starts, so it drops them again whatever the caller gave."""
    env = {k: v for k, v in os.environ.items() if k not in ERLANG_FLAG_VARS}
    env.update({k: v for k, v in (extra or {}).items() if k not in ERLANG_FLAG_VARS})
    return env


def die_with_parent() -> None:  # pragma: no cover - runs in the child
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: rely on the context managers


def child_setup(memory: int | None = None, subreaper: bool = False) -> Callable[[], None]:
    """What a child does between fork and exec: die with bridge; with
    `memory`, a data limit in bytes (RLIMIT_DATA, soft and hard, so that it
    cannot be raised again; inherited by what the child starts); with
    `subreaper`, hold the orphans of what it starts (bridge.system.fence)."""

    def setup() -> None:  # pragma: no cover - runs in the child
        die_with_parent()
        if subreaper:
            fence.set_subreaper(True)
        if memory:
            limit_data(memory)

    return setup


# bridge's stop signals (bridge.system.signals), held while a child is forked.
_STOP = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def popen(
    argv: Sequence[str], setup: Callable[[], None] = die_with_parent, **kw
) -> subprocess.Popen:
    """subprocess.Popen in a session of its own, without inherited fds but
    `pass_fds`, `setup` run in the child between fork and exec, and bridge's
    stop signals held over the fork. A preexec_fn makes the child run Python
    between fork and exec (os.register_at_fork's hooks, then `setup`); a
    Ctrl-C that bridge's handler turned into KeyboardInterrupt there broke
    logging's at-fork lock handling and printed "Exception ignored ...
    Traceback" (a level of --concurrency starting its processes). Held, the
    signal reaches bridge once the child exists; the child restores the mask
    before `setup`, since exec keeps a blocked one."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)

    def child() -> None:  # pragma: no cover - runs in the child
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        setup()

    try:
        return subprocess.Popen(
            list(argv), preexec_fn=child, start_new_session=True, close_fds=True, **kw
        )
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def limit_data(memory: int) -> None:
    """RLIMIT_DATA (what a process has written or may write: heap, anonymous
    mappings, thread stacks) at `memory` bytes, or the limit already in place
    if that is lower. Not RLIMIT_AS: an Erlang node reserves 1 GiB of address
    space for its literals at start and maps 2 GiB in all at rest, none of it
    written, and will not start under 2 GiB of RLIMIT_AS."""
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    value = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (value, value))


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float,
    input: bytes | None = None,
    cwd: str | None = None,
) -> subprocess.CompletedProcess:
    """Run to completion and capture stdout/stderr (bytes).

    Raises subprocess.TimeoutExpired (after killing the child) and OSError
    (cannot start) like subprocess.run does.
    """
    proc = popen(
        argv,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=None if env is None else dict(env),
        cwd=cwd,
    )
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except BaseException:
        kill_group(proc)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class Ending(enum.Enum):
    """How a bounded run ended."""

    EXITED = "exited"
    TIMED_OUT = "timed out"
    TOO_MUCH_OUTPUT = "too much output"


@dataclass(frozen=True)
class Bounds:
    """What a bounded run may take: seconds of wall clock, bytes of
    standard output, bytes of data memory (None: no limit)."""

    timeout: float
    max_output: int
    memory: int | None = None


@dataclass(frozen=True)
class Finished:
    ending: Ending
    returncode: int | None  # None unless it exited
    stdout: bytes
    stderr_tail: bytes
    wall_ns: int  # from just before the spawn to its exit (or to the kill)


STDERR_TAIL = 4096


def run_bounded(
    argv: Sequence[str], env: Mapping[str, str], data: bytes, bounds: Bounds
) -> Finished:
    """Run `argv` with `data` on its stdin, in a session of its own. It ends
    when the process exits: what it wrote by then is read, and its group is
    killed (a background job that still holds the output goes, instead of
    keeping the run waiting for an end of file). Past `bounds.timeout`, or
    past `bounds.max_output` bytes on stdout, the group is killed. Raises
    OSError when it cannot start."""
    t0 = time.perf_counter_ns()
    proc = popen(
        argv,
        child_setup(bounds.memory),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
    )
    try:
        return _bounded(proc, data, bounds, t0)
    finally:
        _end(proc)


def _bounded(proc: subprocess.Popen, data: bytes, bounds: Bounds, t0: int) -> Finished:
    out, err = bytearray(), bytearray()
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    stdin = proc.stdin.fileno()
    for fd in (*streams, stdin):
        os.set_blocking(fd, False)
    exited = _exit_fd(proc.pid)
    poller = select.poll()
    for fd in streams:
        poller.register(fd, select.POLLIN)
    pending = memoryview(data)
    if pending:
        poller.register(stdin, select.POLLOUT)
    else:
        proc.stdin.close()
    if exited is not None:
        poller.register(exited, select.POLLIN)
    deadline = time.monotonic() + bounds.timeout
    ending = None
    try:
        while ending is None:
            left = deadline - time.monotonic()
            if left <= 0:
                ending = Ending.TIMED_OUT
                break
            # Without a pidfd, exit is checked every 10 ms.
            wait = left if exited is not None else min(left, 0.01)
            for fd, _ in poller.poll(wait * 1000):
                if fd == stdin:
                    pending = _feed(proc, poller, pending)
                elif fd in streams:
                    _drain(fd, streams[fd], poller, bounds.max_output + 1)
            del err[:-STDERR_TAIL]  # its tail is all a message quotes
            if len(out) > bounds.max_output:
                ending = Ending.TOO_MUCH_OUTPUT
            elif _has_exited(proc.pid):
                ending = Ending.EXITED
        wall = time.perf_counter_ns() - t0
        if ending is Ending.EXITED:  # what it wrote before it exited
            _drain(proc.stdout.fileno(), out, poller, bounds.max_output + 1, all_now=True)
            _drain(proc.stderr.fileno(), err, poller, len(err) + STDERR_TAIL, all_now=True)
            if len(out) > bounds.max_output:
                ending = Ending.TOO_MUCH_OUTPUT
    finally:
        if exited is not None:
            os.close(exited)
    # The group goes while its leader is a zombie, not yet reaped: its pid,
    # the group's id, cannot have been taken by another process.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    code = proc.wait()
    return Finished(
        ending=ending,
        returncode=code if ending is Ending.EXITED else None,
        stdout=bytes(out[: bounds.max_output]),
        stderr_tail=bytes(err[-STDERR_TAIL:]),
        wall_ns=wall,
    )


def _exit_fd(pid: int) -> int | None:
    """A descriptor readable when `pid` exits (a pidfd, Linux 5.3), or None."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def _has_exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (WNOWAIT)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _feed(proc: subprocess.Popen, poller: select.poll, pending: memoryview) -> memoryview:
    """Write what the child's stdin takes now; close it when all is written
    or the child closed its end (a command that does not read its input)."""
    fd = proc.stdin.fileno()
    try:
        pending = pending[os.write(fd, pending[: 1 << 16]) :]
    except BlockingIOError:
        return pending
    except OSError:  # EPIPE: it will not read the rest
        pending = pending[:0]
    if not pending:
        poller.unregister(fd)
        proc.stdin.close()
    return pending


def _drain(fd: int, buf: bytearray, poller: select.poll, cap: int, all_now: bool = False) -> None:
    """Read what `fd` has into `buf`: one read (the loop checks the limits
    between reads), or with `all_now` everything it has now, up to `cap` bytes."""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            with contextlib.suppress(KeyError, ValueError):
                poller.unregister(fd)
            return
        buf += chunk
        if not all_now or len(buf) >= cap:
            return


def _end(proc: subprocess.Popen) -> None:
    """Whatever happened, nothing of the run is left: its group killed, the
    child reaped, the pipes closed."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            stream.close()
