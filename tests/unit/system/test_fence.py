"""The fence around user code (bridge.system.fence) and the bounded run of a
`sh:` command (bridge.system.proc.run_bounded), with real processes: `sh`,
`sleep`, and a Python child that daemonizes (forks twice, calls setsid,
clears its environment). Each test names its processes by a token of its own
and checks /proc for them afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bridge.system import fence, proc


def running(token: str) -> list[int]:
    """Living `sleep TOKEN` processes."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if argv[1:2] != [token.encode()] or not argv[0].endswith(b"sleep"):
                continue
            if state(int(entry.name)) in ("Z", "X"):
                continue
        except OSError:
            continue
        found.append(int(entry.name))
    return found


def state(pid: int) -> str:
    """The state letter of process `pid` (R, S, T, Z, ...), from /proc/PID/stat."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def appears(token: str, timeout: float = 10.0) -> bool:
    """A `sleep TOKEN` runs, or starts within `timeout`: a daemon's last
    fork may exec sleep after the command that made it has exited (on a busy
    machine, tens of ms later)."""
    deadline = time.monotonic() + timeout
    while not running(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    return bool(running(token))


def gone(token: str, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while running(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running(token)


@pytest.fixture
def token():
    """A sleep duration no other process on the machine uses: 1000.<random>."""
    t = f"1000.{uuid.uuid4().int % 10**9:09d}"
    yield t
    for pid in running(t):  # whatever a failed test left
        os.kill(pid, 9)


# A process that leaves a daemon behind: fork, setsid, fork again, an empty
# environment, then `sleep TOKEN` (the first two exit at once).
DAEMON = (
    "import os, sys\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.execve('/bin/sleep', ['sleep', sys.argv[1]], {})\n"
    "    os._exit(0)\n"
    "os.wait()\n"
)
SH = "/bin/sh"
ENV = {"PATH": "/usr/bin:/bin"}
BOUNDS = proc.Bounds(timeout=20, max_output=1 << 20)


def test_output_past_the_limit_kills_the_group_at_once():
    start = time.monotonic()
    done = proc.run_bounded([SH, "-c", "yes"], ENV, b"", BOUNDS)
    assert done.ending is proc.Ending.TOO_MUCH_OUTPUT
    assert len(done.stdout) == BOUNDS.max_output and done.returncode is None
    assert time.monotonic() - start < 10


def test_the_wall_clock_limit_kills_the_group(token):
    bounds = proc.Bounds(timeout=0.5, max_output=1 << 20)
    done = proc.run_bounded([SH, "-c", f"sleep {token} & sleep {token}"], ENV, b"", bounds)
    assert done.ending is proc.Ending.TIMED_OUT and done.returncode is None
    assert 0.5e9 <= done.wall_ns < 10e9
    assert gone(token)


def test_it_ends_when_the_command_exits_though_a_job_holds_its_output(token):
    # `cmd & cat`: the background sleep keeps stdout open; the run ends when sh exits.
    with fence.Adopting():
        done = proc.run_bounded([SH, "-c", f"sleep {token} & cat"], ENV, b"data", BOUNDS)
    assert done.ending is proc.Ending.EXITED and done.returncode == 0
    assert done.stdout == b"data"
    assert done.wall_ns < 10e9
    assert gone(token)


def test_input_it_does_not_read_and_stderr_it_floods_are_bounded():
    # 8 MiB offered to a command that reads none of it, and 1 MiB of stderr.
    script = "head -c 1048576 /dev/zero | tr '\\0' x >&2; exit 3"
    done = proc.run_bounded([SH, "-c", script], ENV, bytes(8 << 20), BOUNDS)
    assert done.ending is proc.Ending.EXITED and done.returncode == 3
    assert done.stderr_tail == b"x" * proc.STDERR_TAIL


def test_a_data_limit_stops_an_allocation_and_is_inherited():
    bounds = proc.Bounds(timeout=20, max_output=1 << 20, memory=256 << 20)
    code = "bytearray(1 << 30)"
    done = proc.run_bounded([SH, "-c", f"{sys.executable} -c '{code}'"], ENV, b"", bounds)
    assert done.returncode == 1 and b"MemoryError" in done.stderr_tail


def test_adopting_catches_a_daemon_that_left_the_session_and_the_environment(token):
    with fence.Adopting() as adopting:
        done = proc.run_bounded(
            [SH, "-c", f'{sys.executable} -c "{DAEMON}" {token}'], ENV, b"", BOUNDS
        )
        assert done.returncode == 0
        assert appears(token), "the daemon should still run until the sweep"
        killed = adopting.sweep()
    assert killed and gone(token)
    assert not fence.is_subreaper()


def test_the_fence_ends_what_runs_below_its_worker(token):
    f = fence.Fence()
    # The worker: a subreaper that starts a daemon (its environment kept), then waits.
    script = (
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-c', {DAEMON!r}, {token!r}])\n"
        "sys.stdin.read()\n"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        env={**os.environ, **f.env()},
        preexec_fn=proc.child_setup(subreaper=True),
    )
    try:
        appears(token)
        (pid,) = running(token)
        # Its parents exited: it was re-parented to the worker, not to init.
        assert fence._stat(pid).ppid == worker.pid
        assert pid in f.members(worker.pid)
        assert [p.pid for p in f.started(worker.pid)] == [pid]
        assert set(fence.below(worker.pid)) == set(fence.descendants(worker.pid, fence.table()))
        assert [p.pid for p in f.end(worker.pid)] == [pid]
        assert gone(token)
        # The worker is left stopped, for its caller to kill (wire.port): a
        # worker that ran on would start more.
        assert state(worker.pid) == "T"
    finally:
        worker.kill()
        worker.wait()


def test_the_mark_finds_a_process_that_left_the_tree(token):
    f = fence.Fence()
    # A daemon that keeps its environment, from a process that is no subreaper:
    # it goes to init (or to whatever subreaper is above this test).
    script = DAEMON.replace(", {})", ", dict(os.environ))")
    subprocess.run([sys.executable, "-c", script, token], env={**os.environ, **f.env()}, check=True)
    appears(token, timeout=5)
    assert [p.pid for p in f.escaped()] == running(token)
    assert f.end(None) and gone(token)


def test_a_signal_never_reaches_a_process_that_took_a_dead_ones_pid():
    child = subprocess.Popen(["sleep", "30"])
    p = fence._stat(child.pid)
    assert p is not None
    stale = fence.Proc(p.pid, p.ppid, p.start - 1, False)  # same pid, another start
    fence._signal(stale)
    assert child.poll() is None
    fence._signal(p)
    assert child.wait(5) == -9
