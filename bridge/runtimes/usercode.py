"""The user's calls in the runtimes that run them (bridge.catalog.usercode).

A runtime gets its user calls when it starts, never in a request:

- the Erlang node is started with `-bridge_user DIR`, a private directory
  (0700) holding one generated source file per expression
  (`bridge_user_KEY.erl`, or `.ex` for Elixir) and its text
  (`bridge_user_KEY.expr`); erl/bridge_user.erl compiles one the first time a
  request names its key, and refuses every user request when the node was
  started without the flag. The user's --pa directories (and Elixir's own
  library, for ex:) go on the node's code path with -pa;
- the Python worker is started with `--user FILE`, a JSON file of the
  expressions and the --python-path directories
  (bridge.pyworker.usercode);
- `sh:` commands run beside the openssl runtime, a process per sample, timed
  wall clock from spawn to exit as its `openssl kdf` rows are.

User code is fenced (docs/guide/time.md, "What an expression may do"): each
sample has a wall-clock limit (--timeout), each process a data limit
(--memory-limit), a `sh:` command's output is read up to a limit, and what
user code starts is killed with the worker or the sample that started it
(bridge.system.fence); after each batch, a worker whose processes listen
beyond loopback is stopped.

The generated code binds the cell's inputs to names (catalog.usercode.BOUND)
and loops without a fun call per iteration: the timed loop is compiled code
that repeats the expression and keeps its last value, so the compiler cannot
drop it.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bridge.catalog import calls, usercode
from bridge.catalog.usercode import UserCall
from bridge.errors import OperationError, UsageError, WorkerError
from bridge.settings import Settings
from bridge.system import fence, proc

SHELL = "/bin/sh"
ELIXIR_HINT = "install Elixir (Debian/Ubuntu: apt-get install elixir)"


@dataclass(frozen=True)
class UserCode:
    """What the runtimes of a run need for its user calls."""

    calls: tuple[UserCall, ...]
    pa: tuple[str, ...] = ()  # code paths for the Erlang node, expanded
    python_path: tuple[str, ...] = ()
    elixir: tuple[str, ...] = ()  # Elixir's own ebin directories, when an ex: call needs them

    def of(self, kind: str) -> tuple[UserCall, ...]:
        return tuple(dict.fromkeys(uc for uc in self.calls if uc.kind == kind))


def expand_pa(given: tuple[str, ...]) -> tuple[str, ...]:
    """--pa DIR as `erl -pa` takes it, and also a glob such as
    `_build/*/lib/*/ebin` or a mix/rebar3 `_build/ENV/lib` directory (each
    application's ebin under it). A --pa that names no directory is refused."""
    out: list[str] = []
    for item in given:
        found = sorted(glob.glob(os.path.expanduser(item))) if glob.has_magic(item) else [item]
        dirs = [Path(os.path.expanduser(p)) for p in found if Path(os.path.expanduser(p)).is_dir()]
        if not dirs:
            raise UsageError(f"--pa {item}: no such directory")
        for d in dirs:
            ebins = sorted(p for p in d.glob("*/ebin") if p.is_dir())
            if not any(d.glob("*.beam")) and ebins:
                out += [str(p.resolve()) for p in ebins]  # _build/ENV/lib
            else:
                out.append(str(d.resolve()))
    return tuple(dict.fromkeys(out))


def check_python_path(given: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for item in given:
        p = Path(os.path.expanduser(item))
        if not p.is_dir():
            raise UsageError(f"--python-path {item}: no such directory")
        out.append(str(p.resolve()))
    return tuple(out)


def elixir_paths() -> tuple[str, ...]:
    """The ebin directories of Elixir's own applications, found from the
    `elixir` on PATH (Debian: /usr/bin/elixir -> /usr/lib/elixir/bin/elixir)."""
    exe = shutil.which("elixir")
    if exe is None:
        return ()
    lib = Path(exe).resolve().parent.parent / "lib"
    return tuple(str(p) for p in sorted(lib.glob("*/ebin")) if p.is_dir())


def plan_code(
    calls: tuple[UserCall, ...], pa: tuple[str, ...], python_path: tuple[str, ...]
) -> UserCode | None:
    """The run's user code, or None when it has no user call (then no
    runtime is started with a user path at all)."""
    if not calls:
        if pa or python_path:
            raise UsageError(
                "--pa and --python-path go with user calls (crypto-bridge time EXPR...)"
            )
        return None
    elixir: tuple[str, ...] = ()
    if any(uc.runtime == "elixir" for uc in calls):
        elixir = elixir_paths()
        if not elixir:
            raise UsageError(
                f"ex: expressions need Elixir, and no elixir is on PATH: {ELIXIR_HINT}"
            )
    return UserCode(calls, expand_pa(pa), check_python_path(python_path), elixir)


# -- the Erlang node -------------------------------------------------------------

ERL_ARGS = ", ".join(usercode.BOUND["erlang"])
EX_ARGS = ", ".join(usercode.BOUND["elixir"])


def erlang_source(uc: UserCall) -> str:
    """A module of its own for one Erlang expression: once/7 makes the call,
    loop/9 repeats it N times and returns the last value."""
    mod = f"bridge_user_{uc.key}"
    expr = usercode.body(uc.expr)
    unused = ", ".join(f"_{v}" for v in usercode.BOUND["erlang"])
    return (
        f"-module({mod}).\n"
        "-compile([nowarn_unused_vars, nowarn_shadow_vars]).\n"
        "-export([once/7, loop/9]).\n"
        f"once({ERL_ARGS}) ->\n    begin\n{expr}\n    end.\n"
        f"loop(0, {unused}, BridgeAcc__) -> BridgeAcc__;\n"
        f"loop(BridgeN__, {ERL_ARGS}, _) ->\n"
        f"    BridgeAcc__ = begin\n{expr}\n    end,\n"
        f"    loop(BridgeN__ - 1, {ERL_ARGS}, BridgeAcc__).\n"
    )


def elixir_source(uc: UserCall) -> str:
    mod = f":bridge_user_{uc.key}"
    expr = usercode.body(uc.expr)
    unused = ", ".join(f"_{v}" for v in usercode.BOUND["elixir"])
    return (
        f"defmodule {mod} do\n"
        f"  def once({EX_ARGS}) do\n    _ = {{{EX_ARGS}}}\n    (\n{expr}\n    )\n  end\n"
        f"  def loop(0, {unused}, bridge_acc), do: bridge_acc\n"
        f"  def loop(bridge_n, {EX_ARGS}, _) do\n"
        f"    bridge_acc = (\n{expr}\n    )\n"
        f"    loop(bridge_n - 1, {EX_ARGS}, bridge_acc)\n  end\nend\n"
    )


class Progress:
    """An 8-byte file in which a Python worker writes the CLOCK_MONOTONIC ns
    at which each timed run of a user call begins (bridge.pyworker.usercode),
    and from which the driver reads how long the current one has run. The
    worker writes through a shared mapping (one store per run, no system
    call); the driver reads it about once a second while it waits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        os.ftruncate(self._fd, 8)

    def mark(self) -> None:
        """A step begins now (a request is sent: the worker's first mark follows)."""
        os.pwrite(self._fd, time.monotonic_ns().to_bytes(8, "little", signed=True), 0)

    def age_ns(self) -> int:
        return time.monotonic_ns() - int.from_bytes(os.pread(self._fd, 8, 0), "little", signed=True)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class UserDir:
    """The private directory a runtime's user code is written into; removed at stop."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="bridge-user-")
        self.path = Path(self._tmp.name)
        self.progress: Progress | None = None

    def write_erlang(self, calls: tuple[UserCall, ...]) -> str:
        for uc in calls:
            name = f"bridge_user_{uc.key}"
            if uc.runtime == "elixir":
                (self.path / f"{name}.ex").write_text(elixir_source(uc), encoding="utf-8")
            else:
                (self.path / f"{name}.erl").write_text(erlang_source(uc), encoding="utf-8")
            # Its text for messages, on one line.
            (self.path / f"{name}.expr").write_text(" ".join(uc.shown.split()), encoding="utf-8")
        return str(self.path)

    def write_python(self, calls: tuple[UserCall, ...], path: tuple[str, ...]) -> str:
        file = self.path / "user.json"
        exprs = {uc.key: usercode.body(uc.expr) for uc in calls}
        if self.progress is None:
            self.progress = Progress(self.path / "progress")
        given = {"exprs": exprs, "path": list(path), "progress": str(self.progress.path)}
        file.write_text(json.dumps(given), encoding="utf-8")
        return str(file)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()
        self._tmp.cleanup()


def erl_args(code: UserCode, directory: str) -> list[str]:
    """What the node's command line gets, before -s bridge_worker main."""
    paths = [*code.pa, *code.elixir]
    return [*(["-pa", *paths] if paths else []), "-bridge_user", directory]


# -- sh: a whole process ---------------------------------------------------------


def command(uc: UserCall) -> str:
    return usercode.body(uc.expr)


def shell_env(base: dict[str, str], inputs, data_file: str) -> dict[str, str]:
    return {
        **base,
        "BRIDGE_SIZE": str(inputs.size),
        "BRIDGE_DATA": data_file,
        "BRIDGE_KEY": inputs.key.hex(),
        "BRIDGE_IV": inputs.iv.hex(),
        "BRIDGE_COUNT": str(inputs.count or inputs.size),
    }


def shell_samples(
    uc: UserCall,
    job,
    samples: int,
    warm: bool,
    where: tuple[dict[str, str], str],
    settings: Settings,
) -> tuple[list[int], bytes]:
    """`samples` runs of a `sh:` command on the job's inputs (after one run
    to warm the page cache when `warm`), within the settings' limits: wall
    ns each, and its output (two runs' outputs when the call is checked as
    random bytes)."""
    base, directory = where
    data_file = Path(directory) / "user-data.bin"
    data_file.write_bytes(job.inputs.data)
    env = shell_env(base, job.inputs, str(data_file))
    data = job.inputs.data
    bounds = proc.Bounds(
        timeout=settings.user_timeout_s,
        max_output=max_output(len(data)),
        memory=settings.memory_bytes,
    )
    run = Shell(command(uc), env, bounds)
    if warm:
        run.once(data)
    out, output = [], b""
    for _ in range(samples):
        spent, output = run.once(data)
        out.append(spent)
    if job.call.check is calls.Check.DISTINCT:
        output += run.once(data)[1]
    return out, output


# A sh: call's output is compared with the other calls' (--same-output), so
# it is as long as theirs: a digest, or a cipher's output as long as its
# input. What is read is capped at 16 MiB or twice the input, whichever is
# more; `sh:yes` once grew bridge to 23 GB.
OUTPUT_FLOOR = 16 << 20


def max_output(input_size: int) -> int:
    return max(OUTPUT_FLOOR, 2 * input_size)


class Shell:
    """One `sh:` command, run as often as asked, each run fenced: its stdout
    read up to a limit, its wall clock bounded (--timeout), its memory
    limited (--memory-limit), and what it leaves running killed when it
    exits (bridge.system.fence.Adopting), background jobs and daemons included."""

    def __init__(self, text: str, env: dict[str, str], bounds: proc.Bounds) -> None:
        self.text, self.env, self.bounds = text, env, bounds
        self.shown = " ".join(text.split())  # for messages, on one line

    def once(self, data: bytes) -> tuple[int, bytes]:
        """(wall ns from spawn to exit, its stdout)."""
        try:
            with fence.Adopting():
                done = proc.run_bounded([SHELL, "-c", self.text], self.env, data, self.bounds)
        except OSError as exc:
            raise OperationError(
                "failed", f"sh:{self.shown}: cannot run {SHELL}: {exc.strerror}"
            ) from None
        if done.ending is proc.Ending.TIMED_OUT:
            limit = self.bounds.timeout
            raise OperationError(
                "failed",
                f"sh:{self.shown}: a sample ran past the {limit:g}-s limit (--timeout {limit:g});"
                " it and the processes it started were killed",
            )
        if done.ending is proc.Ending.TOO_MUCH_OUTPUT:
            raise OperationError(
                "failed",
                f"sh:{self.shown}: wrote more than {_size(self.bounds.max_output)} to its"
                " standard output (a sh: call's output is read up to 16 MiB, or twice its"
                " input); it and the processes it started were killed",
            )
        if done.returncode != 0:
            tail = done.stderr_tail.decode("utf-8", "replace").strip().splitlines()
            said = f": {tail[-1][:160]}" if tail else ""
            status = (
                f"was killed by signal {-done.returncode}"
                if done.returncode is not None and done.returncode < 0
                else f"exited with status {done.returncode}"
            )
            raise OperationError("failed", f"sh:{self.shown}: {status}{said}")
        return done.wall_ns, done.stdout


def _size(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


# -- what user code started ------------------------------------------------------------

# A call's batch may leave processes running (a pool, a helper it starts once);
# more than this many is a call that starts one per call and never ends them
# (`os:cmd("sleep 1000 &")`), which would fill the process table.
MAX_STARTED = 64


def listeners(pids: Iterable[int]) -> list[str]:
    """The sockets processes `pids` listen on at an address other than
    loopback ("0.0.0.0:4000", "udp [::]:5353"), read from /proc: their socket
    inodes against their network namespaces' tables. UDP counts when its
    socket is bound and not connected: it takes datagrams from anyone."""
    out: dict[str, None] = {}
    tables: dict[int, list[tuple[str, str]]] = {}  # namespace inode -> (inode, address)
    for pid in pids:
        inodes = _socket_inodes(pid)
        if not inodes:
            continue
        try:
            ns = os.stat(f"/proc/{pid}/ns/net").st_ino
        except OSError:
            continue
        if ns not in tables:
            tables[ns] = _open_sockets(pid)
        for inode, address in tables[ns]:
            if inode in inodes:
                out[address] = None
    return list(out)


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def _open_sockets(pid: int) -> list[tuple[str, str]]:
    """(inode, address) of the listening TCP and unconnected UDP sockets of
    pid's network namespace that are not on loopback."""
    out = []
    for table, state, prefix in (
        ("tcp", "0A", ""),  # 0A: LISTEN
        ("tcp6", "0A", ""),
        ("udp", "07", "udp "),  # 07: unconnected
        ("udp6", "07", "udp "),
    ):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) < 10 or f[3] != state:
                continue
            address = _address(f[1])
            if address is not None:
                out.append((f[9], prefix + address))
    return out


def _address(hex_addr: str) -> str | None:
    """The text of a non-loopback address:port of /proc/net/tcp{,6}; None for loopback."""
    ip, _, port = hex_addr.partition(":")
    raw = bytes.fromhex(ip)
    # /proc writes each 32-bit word in host (little-endian) order.
    words = [raw[i : i + 4][::-1] for i in range(0, len(raw), 4)]
    addr = b"".join(words)
    if len(addr) == 4:
        if addr[0] == 127:
            return None
        return f"{'.'.join(map(str, addr))}:{int(port, 16)}"
    if addr == bytes(15) + b"\1" or (addr[:12] == bytes(10) + b"\xff\xff" and addr[12] == 127):
        return None
    return f"[{addr.hex()}]:{int(port, 16)}"


def refuse_listeners(pids: Iterable[int], job, runtime_id: str) -> None:
    """After a user call's batch: a runtime whose worker, or any process
    below it, now listens beyond loopback is stopped (the session does so on
    a WorkerError), with the reason."""
    found = listeners(pids)
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise WorkerError(
            f"{runtime_id}: {job.call.label(job.scenario, '')} listens on {shown}:"
            " a user call may listen on loopback (127.0.0.1, ::1) only; the runtime and the"
            " processes its code started are stopped",
            runtime=runtime_id,
        )


def refuse_crowd(started: int, job, runtime_id: str) -> None:
    if started > MAX_STARTED:
        raise WorkerError(
            f"{runtime_id}: {job.call.label(job.scenario, '')} left {started} processes"
            f" running (at most {MAX_STARTED}): the runtime and the processes its code"
            " started are stopped",
            runtime=runtime_id,
        )
