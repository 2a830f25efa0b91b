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

The generated code binds the cell's inputs to names (catalog.usercode.BOUND)
and loops without a fun call per iteration: the timed loop is compiled code
that repeats the expression and keeps its last value, so the compiler cannot
drop it.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bridge.catalog import calls, usercode
from bridge.catalog.usercode import UserCall
from bridge.errors import OperationError, UsageError
from bridge.system import proc

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
            raise UsageError("--pa and --python-path go with user calls (bridge time EXPR...)")
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


class UserDir:
    """The private directory a runtime's user code is written into; removed at stop."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="bridge-user-")
        self.path = Path(self._tmp.name)

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
        file.write_text(json.dumps({"exprs": exprs, "path": list(path)}), encoding="utf-8")
        return str(file)

    def close(self) -> None:
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
    uc: UserCall, job, samples: int, warm: bool, where: tuple[dict[str, str], str]
) -> tuple[list[int], bytes]:
    """`samples` runs of a `sh:` command on the job's inputs (after one run
    to warm the page cache when `warm`): wall ns each, and its output (two
    runs' outputs when the call is checked as random bytes)."""
    base, directory = where
    data_file = Path(directory) / "user-data.bin"
    data_file.write_bytes(job.inputs.data)
    env = shell_env(base, job.inputs, str(data_file))
    timeout = 600 + 30.0
    command_env = (command(uc), env)
    data = job.inputs.data
    if warm:
        run_shell(command_env, data, timeout)
    out, output = [], b""
    for _ in range(samples):
        spent, output = run_shell(command_env, data, timeout)
        out.append(spent)
    if job.call.check is calls.Check.DISTINCT:
        output += run_shell(command_env, data, timeout)[1]
    return out, output


def run_shell(
    argv_env: tuple[str, dict[str, str]], data: bytes, timeout: float
) -> tuple[int, bytes]:
    """One run of the command: (wall ns from spawn to exit, its stdout)."""
    command, env = argv_env
    shown = " ".join(command.split())  # for messages, on one line
    t0 = time.perf_counter_ns()
    try:
        done = proc.run([SHELL, "-c", command], env=env, timeout=timeout, input=data)
    except OSError as exc:
        raise OperationError("failed", f"sh:{shown}: cannot run {SHELL}: {exc.strerror}") from None
    except Exception as exc:  # subprocess.TimeoutExpired
        raise OperationError("failed", f"sh:{shown}: {exc}") from None
    spent = time.perf_counter_ns() - t0
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        said = f": {tail[-1][:160]}" if tail else ""
        raise OperationError("failed", f"sh:{shown}: exited with status {done.returncode}{said}")
    return spent, done.stdout


# -- listening sockets ---------------------------------------------------------------


def listeners(pid: int) -> list[str]:
    """The TCP sockets process `pid` listens on at an address other than
    loopback ("0.0.0.0:4000"), read from /proc: its socket inodes against
    its network namespace's tables."""
    try:
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return []
    out = []
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) < 10 or f[3] != "0A" or f[9] not in inodes:  # 0A: LISTEN
                continue
            address = _address(f[1])
            if address is not None:
                out.append(address)
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


def refuse_listeners(pid: int | None, job, runtime_id: str) -> None:
    """After a user call's batch: a runtime that now listens beyond loopback
    is stopped (the session does so on a WorkerError), with the reason."""
    if pid is None:
        return
    found = listeners(pid)
    if found:
        from bridge.errors import WorkerError

        raise WorkerError(
            f"{runtime_id}: {job.call.label(job.scenario, '')} listens on {', '.join(found)}:"
            " a user call may listen on loopback (127.0.0.1, ::1) only; the runtime is stopped",
            runtime=runtime_id,
        )
