"""Short-lived child processes (openssl, erl probes) that never outlive bridge.

`run` is subprocess.run with three guarantees: the child dies with bridge
(PR_SET_PDEATHSIG), it runs in its own session (Ctrl-C reaches bridge, which
then kills the child's whole group), and any exception - timeout, Ctrl-C,
SIGTERM turned into an exception - kills and reaps it before propagating.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence

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
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=None if env is None else dict(env),
        cwd=cwd,
        preexec_fn=die_with_parent,
        start_new_session=True,
        close_fds=True,
    )
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except BaseException:
        kill_group(proc)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
