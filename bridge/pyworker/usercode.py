"""The user's Python expressions (`py:` in bridge time, [[calls]] in a
scenario file), in a worker started with them.

The driver starts the worker as `python -m bridge.pyworker.worker --user
FILE`; FILE (in a private directory) holds the expressions by key and the
--python-path directories. Only then does the worker have a user path: a
request names an expression by its key and can bring no code. Without the
flag, `user` requests are refused like any unknown call.

Each expression is compiled once, on its first request, into two functions
of the bound inputs (data, size, key, iv, count, pub, sig): once() returns
its value, loop(n) evaluates it n times in a plain for loop (no function
call per iteration). Names the expression uses that are neither bound nor
built-in are imported as modules when they can be (hashlib, a --python-path
module), so `py:hashlib.sha256(data).digest()` needs no set-up line.

Before each timed run of its loop (bridge.pyworker.ops.before_run), and
before the call for its output, a user call writes the time into FILE's
progress page (a shared mapping: one store, no system call), from which the
driver sees a sample that runs past its --timeout (bridge.runtimes.python).
A MemoryError (the worker's --memory-limit) is its own error class, which
the driver words.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import json
import mmap
import os
import struct
import sys
import time
from collections.abc import Callable
from typing import Any

from bridge.errors import OperationError

ARGS = ("data", "size", "key", "iv", "count", "pub", "sig")  # catalog.usercode.BOUND
EXPRS: dict[str, str] | None = None  # key -> expression; None: no user path in this worker
_compiled: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}
_PACK = struct.Struct("<q").pack_into


def _no_mark() -> None:
    pass


mark: Callable[[], None] = _no_mark  # a step of a user call begins


def enable(path: str) -> None:
    """Called by the worker's main() with its --user FILE, before serving."""
    global EXPRS, mark
    with open(path, encoding="utf-8") as f:
        given = json.load(f)
    EXPRS = {str(k): str(v) for k, v in given["exprs"].items()}
    sys.path[:0] = [str(p) for p in given.get("path", [])]
    if given.get("progress"):
        fd = os.open(str(given["progress"]), os.O_RDWR | os.O_CLOEXEC)
        try:
            page = mmap.mmap(fd, 8)
        finally:
            os.close(fd)
        clock = time.monotonic_ns

        def mark() -> None:
            _PACK(page, 0, clock())


def prepare(args: dict[str, Any], read: Any) -> tuple[str, Callable[[], bytes], Callable]:
    """(api, once, loop) for a `user` request; `read` is the ops module's
    argument readers."""
    if EXPRS is None:
        raise OperationError("unknown_call", "unknown call: user (no user code in this worker)")
    key = read._str(args, "expr")
    if key not in EXPRS:
        raise OperationError("unknown_call", "no such user expression in this worker")
    text = EXPRS[key]
    once_f, loop_f = _compile(key, text)
    size = read._int(args, "size", 0, 1 << 40)
    bound = (
        read._bytes(args, "data"),
        size,
        read._bytes(args, "key"),
        read._bytes(args, "iv"),
        read._int(args, "count", 0, 1 << 40) if "count" in args else size,
        read._bytes(args, "pub"),
        read._bytes(args, "sig"),
    )
    twice = "twice" in args and read._int(args, "twice", 0, 1) == 1

    def one() -> bytes:
        try:
            return as_bytes(once_f(*bound))
        except MemoryError:
            raise  # the worker's memory limit: the driver says so
        except Exception as exc:
            raise OperationError(
                "failed", f"py:{_line(text)} raised {type(exc).__name__}: {_line(str(exc))}"
            ) from None

    def once() -> bytes:
        mark()
        return one() + one() if twice else one()

    def loop(n: int) -> None:
        loop_f(n, *bound)

    return "user code: a Python function compiled once (compile/exec)", once, loop


def _line(text: str) -> str:
    """Text for a one-line message."""
    return " ".join(text.split())


def as_bytes(value: Any) -> bytes:
    """An output as bytes: bytes-like as it is, text as UTF-8, anything else as its repr."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return repr(value).encode()


def _compile(key: str, text: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    if key in _compiled:
        return _compiled[key]
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise OperationError("failed", f"py:{_line(text)}: SyntaxError: {exc.msg}") from None
    names = ", ".join(ARGS)
    source = (
        f"def once({names}):\n    return ({text}\n    )\n"
        f"def loop(bridge_n, {names}):\n    for _ in range(bridge_n):\n        ({text}\n        )\n"
    )
    scope: dict[str, Any] = {"__builtins__": builtins}
    for name in _free_names(tree):
        try:
            scope[name] = importlib.import_module(name)
        except Exception:  # not a module: a NameError when the expression runs
            continue
    try:
        exec(compile(source, f"<py:{key}>", "exec"), scope)
    except SyntaxError as exc:
        raise OperationError("failed", f"py:{_line(text)}: SyntaxError: {exc.msg}") from None
    _compiled[key] = (scope["once"], scope["loop"])
    return _compiled[key]


def _free_names(tree: ast.AST) -> list[str]:
    bound = set(ARGS) | set(dir(builtins))
    seen: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            seen[node.id] = None
    return list(seen)
