"""The processes user code starts: kept within bridge's reach, checked, and
ended with the worker (or the `sh:` sample) that started them.

A worker that runs user code, or a `sh:` command, may start processes of its
own (`os:cmd("sleep 1000 &")`, a `subprocess.Popen`, `cmd &`), and one may
leave its process group and session (setsid, a daemon's double fork). Three
things keep them in reach, none of which needs privileges:

- the worker is a child subreaper (PR_SET_CHILD_SUBREAPER, set between fork
  and exec, kept across exec): what its user code leaves running is
  re-parented to the worker instead of to init, so it stays one of the
  worker's descendants for as long as the worker lives. `Fence.end` kills
  them while it still does, then the worker goes;
- bridge itself is a subreaper while a `sh:` sample runs (`Adopting`): what
  the command leaves behind becomes bridge's child and is killed when the
  sample ends;
- every such process inherits BRIDGE_FENCE=TOKEN from its worker's
  environment: a scan of the user's own processes finds one that left the
  tree anyway (its worker died first, killed by the kernel or by the memory
  limit), unless it also cleared its environment.

A cgroup would hold them without these rules, and give one memory limit to
all of them, but it needs root or a delegated subtree, which a login shell
on a shared VM seldom has (CI's unprivileged user has none); the rules above
work for everyone.

Signals go through a pidfd opened on a process whose start time was checked
(`_signal`), so a PID reused between the scan and the kill is never hit.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MARK = "BRIDGE_FENCE"
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
# Passes of scan-and-kill: a process forking as fast as it can gets a new
# child between a scan and its kill, which the next pass finds.
PASSES = 50


@dataclass(frozen=True)
class Proc:
    """One line of the process table, as /proc/PID/stat has it."""

    pid: int
    ppid: int
    start: int  # clock ticks after boot: with the pid, who it is
    zombie: bool


def table() -> dict[int, Proc]:
    """Every process on the machine (its stat is readable by anyone)."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            found = _stat(int(name))
            if found is not None:
                out[found.pid] = found
    return out


def _stat(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # comm, in parentheses, may hold spaces and parentheses: fields follow the last ")".
    rest = raw[raw.rfind(b")") + 2 :].split()
    try:
        return Proc(pid, int(rest[1]), int(rest[19]), rest[0] in (b"Z", b"X"))
    except (IndexError, ValueError):
        return None


# Whether the kernel lists each thread's children (CONFIG_PROC_CHILDREN).
_CHILDREN_LISTS = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def children(pid: int) -> list[Proc] | None:
    """The children of process `pid`, from its threads' children lists
    (cheap: no scan of the whole table); None where the kernel has none."""
    if not _CHILDREN_LISTS:
        return None
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []  # it has gone
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                listed = f.read().split()
        except OSError:
            continue  # the thread has gone
        for child in listed:
            found = _stat(int(child))
            if found is not None and found.ppid == pid:
                out.append(found)
    return out


def descendants(root: int, procs: dict[int, Proc]) -> list[Proc]:
    """The living processes below `root`, parents before their children."""
    children: dict[int, list[Proc]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p)
    out: list[Proc] = []
    todo = list(children.get(root, ()))
    while todo:
        p = todo.pop()
        if p.pid == root:
            continue
        todo += children.get(p.pid, ())
        if not p.zombie:
            out.append(p)
    return out


def below(root: int) -> list[Proc]:
    """descendants(root), found through the children lists from `root` down:
    a small tree costs a few reads, not a scan of every process. A process
    that forks or exits meanwhile may be missed by one call: those that
    kill call again until they find none."""
    out: list[Proc] = []
    todo = [root]
    while todo:
        found = children(todo.pop())
        if found is None:
            return descendants(root, table())
        out += [p for p in found if not p.zombie]
        todo += [p.pid for p in found]
    return out


def marked(token: str) -> list[Proc]:
    """The living processes of this user whose environment holds
    BRIDGE_FENCE=token (another user's environment is not readable, and
    bridge starts none of them)."""
    needle = f"\0{MARK}={token}\0".encode()
    uid = os.getuid()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in b"\0" + env + b"\0":
            found = _stat(int(name))
            if found is not None and not found.zombie:
                out.append(found)
    return out


def _signal(p: Proc, sig: int = signal.SIGKILL) -> None:
    """Signal the process `p` names (pid and start time), never another that
    took its pid: the signal goes through a pidfd opened before the start
    time is checked again."""
    try:
        fd = os.pidfd_open(p.pid)
    except ProcessLookupError:
        return
    except (OSError, AttributeError):  # no pidfd (Linux < 5.3): the short race remains
        now = _stat(p.pid)
        if now is not None and now.start == p.start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p.pid, sig)
        return
    try:
        now = _stat(p.pid)
        if now is not None and now.start == p.start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(fd, sig)
    finally:
        os.close(fd)


def kill_all(find: Callable[[], Iterable[Proc]]) -> list[Proc]:
    """Kill what `find` returns, again and again until it returns nothing
    (or PASSES run out): the processes killed."""
    killed: dict[tuple[int, int], Proc] = {}
    for _ in range(PASSES):
        found = [p for p in find() if p.pid != os.getpid()]
        if not found:
            break
        for p in found:
            _signal(p)
            killed[(p.pid, p.start)] = p
        time.sleep(0.002)  # a killed process takes a moment to become a zombie
    return list(killed.values())


def set_subreaper(on: bool) -> bool:
    """Make this process a child subreaper, or stop it being one; False
    where the kernel cannot (not Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def is_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        value = ctypes.c_int(0)
        if libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) != 0:
            return False
        return bool(value.value)
    except (OSError, AttributeError):
        return False


class Fence:
    """One worker's processes: what its user code started, found as its
    descendants (the worker is their subreaper) or by its environment mark."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(8)
        # Descendants the worker starts by itself (an Erlang node's
        # erl_child_setup), recorded once it has greeted: not user code's.
        self._own: set[tuple[int, int]] = set()

    def env(self) -> dict[str, str]:
        return {MARK: self.token}

    def settle(self, root: int) -> None:
        """Record what the worker started of itself, before any user code ran."""
        self._own = {(p.pid, p.start) for p in below(root)}

    def members(self, root: int) -> list[int]:
        """The worker and every living process below it."""
        return [root, *(p.pid for p in below(root))]

    def started(self, root: int) -> list[Proc]:
        """The processes user code started that run below the living worker
        (all of them, while it lives: it is their subreaper), less its own."""
        return [p for p in below(root) if (p.pid, p.start) not in self._own]

    def escaped(self) -> list[Proc]:
        """The processes with the worker's mark, wherever they are."""
        return [p for p in marked(self.token) if (p.pid, p.start) not in self._own]

    def end(self, root: int | None) -> list[Proc]:
        """Kill what user code started: with `root`, what runs below the
        living worker, which holds it all; with None, once the worker has
        gone (its pid may then be another's), whatever carries its mark.

        With `root`, the worker and its own helpers are stopped first
        (SIGSTOP), then the helpers are killed with what user code started
        (stopped, an Erlang node's erl_child_setup would not see the node go),
        and the worker stays stopped, for the caller to kill: a worker
        interrupted mid-sample goes on running the user's expression, and a
        process it started after the last pass (`os:cmd("env -i setsid -f
        sleep N")`, a daemon with its environment cleared) went to init with
        the worker, unmarked (the unprivileged CI tier's Ctrl-C test failed
        so once, on 2026-12-04)."""
        if root is None:
            return kill_all(self.escaped)
        own = self._freeze(root)
        killed = kill_all(lambda: self.started(root))
        for p in own:
            _signal(p)
        return killed

    def _freeze(self, root: int) -> list[Proc]:
        """Stop the worker `root` and the helpers it started of itself, so
        that nothing below it starts anything more: the helpers."""
        own = [p for p in below(root) if (p.pid, p.start) in self._own]
        for p in (_stat(root), *own):
            if p is not None:
                _signal(p, signal.SIGSTOP)
        return own


class Adopting:
    """While it is entered, bridge is the subreaper of what its children
    leave running: a `sh:` sample's background jobs and daemons become
    bridge's children instead of init's, and `sweep` kills them (and reaps
    them: they are bridge's to reap)."""

    def __init__(self) -> None:
        self._was = False
        self._before: set[tuple[int, int]] = set()

    def __enter__(self) -> Adopting:
        self._was = is_subreaper()
        if not self._was:
            set_subreaper(True)
        self._before = {(p.pid, p.start) for p in self._children()}
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.sweep()
        finally:
            if not self._was:
                set_subreaper(False)

    @staticmethod
    def _children() -> list[Proc]:
        me = os.getpid()
        found = children(me)
        return found if found is not None else [p for p in table().values() if p.ppid == me]

    def _roots(self) -> list[Proc]:
        """bridge's children that were not its children when it was entered:
        re-parented to it (bridge starts nothing else while a sample runs,
        and the sample's own process is reaped before the sweep)."""
        return [p for p in self._children() if (p.pid, p.start) not in self._before]

    def adopted(self) -> list[Proc]:
        """The living adopted processes, and what runs below them (the whole
        table is read only when there are some)."""
        roots = self._roots()
        if not roots:
            return []
        procs = table()
        out = [p for p in roots if not p.zombie]
        for r in roots:
            out += descendants(r.pid, procs)
        return out

    def sweep(self) -> list[Proc]:
        killed = kill_all(self.adopted)
        # Reap the adopted ones, killed or exited by themselves: bridge's
        # children now. A killed process dies at once unless the kernel
        # holds it (uninterruptible I/O): waited for a moment, then left.
        deadline = time.monotonic() + 1.0
        todo = self._roots()
        while todo and time.monotonic() < deadline:
            left = []
            for p in todo:
                try:
                    pid, _ = os.waitpid(p.pid, os.WNOHANG)
                except ChildProcessError:
                    continue
                if pid == 0:
                    left.append(p)
            todo = left
            if todo:
                time.sleep(0.005)
        return killed
