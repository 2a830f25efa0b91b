"""Bounded reading of every file bridge is given: reports, pasted openssl
speed output, scenarios and the cache's files.

A size check on `st_size` says nothing about a device or a FIFO (0 for both),
so `bridge report /dev/zero` used to read until memory ran out and
`bridge report FIFO` waited forever. Here a path must name a regular file
(checked before opening, and again on the open descriptor, which is opened
non-blocking so that a file swapped for a FIFO in between cannot block), and
no more than the limit plus one byte is ever read, stdin included.

Parsers recurse (json, tomllib): `check_json_depth` and `check_data_depth`
refuse deep nesting before or after parsing, without recursing themselves.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from typing import Any, BinaryIO

from bridge.errors import UsageError

CHUNK = 1 << 16
# Real reports nest 6 levels deep (tests/fixtures); scenarios 3.
MAX_DEPTH = 64

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class TooLarge(UsageError):
    """More than the limit: the one refusal a caller may word its own way."""


def _not_regular(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _mib(limit: int) -> str:
    if limit >= 2**20:
        return f"{limit // 2**20} MiB"
    return f"{limit // 2**10} KiB" if limit >= 2**10 else f"{limit} bytes"


def read_bytes(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """At most `limit` bytes of the regular file at `path`, or a UsageError
    naming the file: missing, not regular (`what` ends the sentence: "not a
    report"), unreadable or larger than the limit."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{name}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{name}: is {_not_regular(st.st_mode)}, {what}")
    if st.st_size > limit:
        raise TooLarge(f"{name}: larger than {_mib(limit)}, {what}")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UsageError(f"{name}: cannot read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):  # replaced between the stat and the open
            raise UsageError(f"{name}: is {_not_regular(mode)}, {what}")
        try:
            return _bounded(f, limit, name, what)
        except OSError as exc:
            raise UsageError(f"{name}: cannot read ({exc.strerror})") from None


def read_stream(stream: BinaryIO, limit: int, name: str, what: str) -> bytes:
    """At most `limit` bytes of a binary stream (stdin), read in chunks."""
    try:
        return _bounded(stream, limit, name, what)
    except OSError as exc:
        raise UsageError(f"{name}: cannot read ({exc.strerror})") from None


def _bounded(f: BinaryIO, limit: int, name: str, what: str) -> bytes:
    parts, total = [], 0
    while total <= limit:
        chunk = f.read(min(CHUNK, limit + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    if total > limit:
        raise TooLarge(f"{name}: larger than {_mib(limit)}, {what}")
    return b"".join(parts)


def decode(raw: bytes, name: str, what: str) -> str:
    """Strict UTF-8: binary data is refused, not turned into U+FFFD."""
    if b"\0" in raw:
        raise UsageError(f"{name}: binary data, {what}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{name}: binary data (not UTF-8 text), {what}") from None


# -- nesting -----------------------------------------------------------------

# A JSON string (escapes included): brackets inside one do not nest.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest, by a linear scan
    (json.loads recurses, and a deep enough text exhausts its stack)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _few_brackets(text: str, limit: int) -> bool:
    """No more opening brackets than the limit: no need to scan."""
    return text.count("[") + text.count("{") <= limit


def check_json_depth(text: str, name: str, limit: int = MAX_DEPTH) -> None:
    if not _few_brackets(text, limit) and json_depth(text) > limit:
        raise UsageError(f"{name}: nested deeper than {limit} levels")


# TOML: strings (four kinds) and comments, whose brackets do not nest; then
# the brackets of arrays and inline tables (and table headers, which close on
# their line).
_TOML_TOKEN = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|([\[\]{}])',
    re.DOTALL,
)


def toml_depth(text: str) -> int:
    depth = deepest = 0
    for m in _TOML_TOKEN.finditer(text):
        bracket = m.group(1)
        if bracket:
            depth += _STEP[bracket]
            deepest = max(deepest, depth)
    return deepest


def check_toml_depth(text: str, name: str, limit: int = MAX_DEPTH) -> None:
    if not _few_brackets(text, limit) and toml_depth(text) > limit:
        raise UsageError(f"{name}: nested deeper than {limit} levels")


def data_depth(value: Any) -> int:
    """How deep parsed data nests (TOML's dotted keys nest without brackets),
    without recursing."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list | tuple):
            deepest = max(deepest, depth + 1)
            stack.extend((x, depth + 1) for x in v)
    return deepest


def check_data_depth(value: Any, name: str, limit: int = MAX_DEPTH) -> None:
    if data_depth(value) > limit:
        raise UsageError(f"{name}: nested deeper than {limit} levels")
