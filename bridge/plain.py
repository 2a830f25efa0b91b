"""Input from outside bridge, taken plainly: files read within bounds, numbers
read as ASCII digits, and text made safe to show.

Files. A size check on `st_size` says nothing about a device or a FIFO (0 for
both), so `bridge report /dev/zero` used to read until memory ran out and
`bridge report FIFO` waited forever. Here a path must name a regular file
(checked before opening, and again on the open descriptor, which is opened
non-blocking so that a file swapped for a FIFO in between cannot block), and
no more than the limit plus one byte is ever read, stdin included. Parsers
recurse (json, tomllib): `check_json_depth` and `check_data_depth` refuse deep
nesting before or after parsing, without recursing themselves.

Numbers. `whole_number` reads ASCII digits only: str.isdigit() accepts '²'
(which int() refuses) and int() accepts Arabic-Indic and fullwidth digits; a
count given as text is 0-9 or not a count.

Text. Reports, scenario files and runtimes' output are data written by
someone else: a terminal escape (ESC [ ...), a C0/C1 control or a bidi
override in a report's `call` would reach the terminal raw, rewrite what was
printed before it or reorder what follows. `printable` spells each such
character as a Python escape (\\x1b, \\u202e), so it shows and does nothing.
Every renderer's output passes through it (`escaped`), and so does every
error line bridge.cli prints.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import stat
from collections.abc import Callable
from typing import Any, BinaryIO, ParamSpec

from bridge.errors import UsageError

# C0 and C1 controls and DEL; ALM, LRM, RLM; the line and paragraph
# separators; the bidi embeddings, overrides and isolates; lone surrogates
# (undecodable bytes, which would also fail to print).
_OTHERS = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_ALL = re.compile(f"[\x00-\x1f{_OTHERS}]")
_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHERS}]")
_BUT_NEWLINE_AND_TAB = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")
_DIGITS = re.compile(r"[0-9]+")
# What a number given as text may look like: ASCII only, no nan or inf.
INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

P = ParamSpec("P")


def _escape(m: re.Match[str]) -> str:
    n = ord(m.group(0))
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(text: str, keep_newlines: bool = False, keep_tabs: bool = False) -> str:
    """`text` with every control, bidi or separator character escaped
    (newlines kept when asked: a renderer's own line breaks; tabs too, for
    a file shown as it is)."""
    if keep_tabs and keep_newlines:
        return _BUT_NEWLINE_AND_TAB.sub(_escape, text)
    return (_BUT_NEWLINE if keep_newlines else _ALL).sub(_escape, text)


def visible(text: str) -> str:
    """`text` with every character that str.isprintable() refuses written as
    Python writes it (\\x1b, \\u200b, \\n): stricter than `printable`, for
    short quotes of a file's own values in a message (report checks, the
    twins' cache), where nothing invisible belongs."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def escaped(render: Callable[P, str]) -> Callable[P, str]:
    """A renderer whose output is `printable`, its line breaks kept."""

    @functools.wraps(render)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        return printable(render(*args, **kwargs), keep_newlines=True)

    return wrapper


def whole_number(text: str) -> int | None:
    """`text` as a non-negative integer when it is ASCII digits only; None otherwise."""
    return int(text) if _DIGITS.fullmatch(text) else None


# -- files: bounded reading ------------------------------------------------

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
