"""Processes for the tests of user code's fence: bridge run as a real CLI
process with its peak memory, and what it left behind, found in /proc.

Every process bridge starts inherits a canary variable from the test; a
process that cleared its environment is found by its command line, a
`sleep TOKEN` whose token no other process uses."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

CANARY = "BRIDGE_TEST_CANARY"
# A Python child that daemonizes (fork, setsid, fork), clears its environment
# and sleeps TOKEN, listening on 0.0.0.0 when asked: what py: or os:cmd may start.
DAEMON = (
    "import os,socket,sys,time\n"
    "if os.fork(): sys.exit(0)\n"
    "os.setsid()\n"
    "if os.fork(): sys.exit(0)\n"
    "s = socket.socket()\n"
    "if sys.argv[2:] == ['listen']: s.bind(('0.0.0.0', 0)); s.listen()\n"
    "os.set_inheritable(s.fileno(), True)  # sleep holds it\n"
    "os.execve('/bin/sleep', ['sleep', sys.argv[1]], {})\n"
)


def py_daemon(tok: str, *extra: str) -> str:
    """A py: expression that leaves that daemon behind."""
    argv = [sys.executable, "-c", DAEMON, tok, *extra]
    return f"py:__import__('subprocess').Popen({argv!r}, env={{}}).wait()"


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss: int | None  # bytes: bridge's, or any process it waited for (peak_of only)

    @property
    def errors(self) -> list[str]:
        return [x for x in self.stderr.splitlines() if x.startswith("bridge: error:")]


def token() -> str:
    """A `sleep` argument no other process uses: 1000.NNNNNNNNN."""
    return f"1000.{uuid.uuid4().int % 10**9:09d}"


def run_bridge(
    *args: str,
    canary: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    during: Callable[[subprocess.Popen], None] | None = None,
) -> Measured:
    """`python -m bridge ARGS` with the canary in its environment. wait4's
    ru_maxrss is the largest resident set of the process and of every
    descendant it waited for (its workers, its sh: processes)."""
    full = {**os.environ, **(env or {}), CANARY: canary}
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bridge", *args],
        cwd=ROOT,
        env=full,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        if during is not None:
            during(proc)
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return Measured(proc.returncode, stdout, stderr, time.monotonic() - start, None)


def peak_of(*args: str, canary: str, env: dict[str, str] | None = None, timeout: float = 300):
    """run_bridge, with its peak memory: bridge runs under a small Python
    parent that waits for it with wait4 and prints ru_maxrss (KiB)."""
    code = (
        "import os, subprocess, sys\n"
        "p = subprocess.Popen(sys.argv[1:])\n"
        "_, status, usage = os.wait4(p.pid, 0)\n"
        "sys.stderr.write(f'\\nPEAK_KIB {usage.ru_maxrss}\\n')\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    full = {**os.environ, **(env or {}), CANARY: canary}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "bridge", *args],
        cwd=ROOT,
        env=full,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.monotonic() - start
    stderr, _, tail = done.stderr.rpartition("\nPEAK_KIB ")
    return Measured(done.returncode, done.stdout, stderr, seconds, int(tail.split()[0]) * 1024)


def tagged(canary: str) -> dict[int, str]:
    """Living processes with the canary in their environment: pid -> comm."""
    found = {}
    needle = f"{CANARY}={canary}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if _zombie(entry):
                continue
            found[int(entry.name)] = (entry / "comm").read_text().strip()
        except OSError:
            continue
    return found


def sleepers(*tokens: str) -> list[int]:
    """Living `sleep TOKEN` processes, for any of the tokens."""
    wanted = {t.encode() for t in tokens}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if (
                argv[0].endswith(b"sleep")
                and argv[1:2]
                and argv[1] in wanted
                and not _zombie(entry)
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _zombie(entry: Path) -> bool:
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")


def left_behind(canary: str, *tokens: str, wait: float = 3.0) -> dict[int, str]:
    """What the run left running (given a moment to go), then killed."""
    deadline = time.monotonic() + wait
    while True:
        left = {**tagged(canary), **{p: "sleep" for p in sleepers(*tokens)}}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def listening_inodes() -> set[str]:
    """Sockets that listen (TCP) or are bound unconnected (UDP), any address."""
    found = set()
    for table in ("tcp", "tcp6", "udp", "udp6"):
        path = Path(f"/proc/net/{table}")
        if path.exists():
            for line in path.read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == ("0A" if table.startswith("tcp") else "07"):
                    found.add(fields[9])
    return found


def sockets_of(pid: int) -> set[str]:
    found = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            found.add(link[8:-1])
    return found
