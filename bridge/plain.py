"""Input from outside bridge, taken plainly: files read within bounds, numbers
read as ASCII digits, and text made safe to show.

Files. A size check on `st_size` says nothing about a device or a FIFO (0 for
both), so `bridge report /dev/zero` used to read until memory ran out and
`bridge report FIFO` waited forever. Here a path must name a regular file
(checked before opening, and again on the open descriptor, which is opened
non-blocking so that a file swapped for a FIFO in between cannot block), and
no more than the limit plus one byte is ever read, stdin included. Parsers
recurse (json, tomllib): `check_json_depth` and `check_data_depth` refuse deep
nesting before or after parsing, without recursing themselves. And json.loads
amplifies (a dict per 3 bytes of `{},`): `check_json_cost` counts what a text
would parse into, before it is decoded, and refuses one that would not fit.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, ParamSpec, TypeVar

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
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):  # replaced between the stat and the open
            raise UsageError(f"{name}: is {_not_regular(st.st_mode)}, {what}")
        try:
            return _bounded(f, limit, name, what, expected=st.st_size)
        except OSError as exc:
            raise UsageError(f"{name}: cannot read ({exc.strerror})") from None


def read_stream(stream: BinaryIO, limit: int, name: str, what: str) -> bytes:
    """At most `limit` bytes of a binary stream (stdin), read in chunks."""
    try:
        return _bounded(stream, limit, name, what)
    except OSError as exc:
        raise UsageError(f"{name}: cannot read ({exc.strerror})") from None


def _bounded(f: BinaryIO, limit: int, name: str, what: str, expected: int = 0) -> bytes:
    """At most limit + 1 bytes; a file of known size in one read (one
    buffer: chunks joined held the file twice, 512 MiB for a 256 MiB report)."""
    if expected:
        first = f.read(min(expected + 1, limit + 1))
        # All of it (a file that grew is read on, and past the limit refused).
        if len(first) <= min(expected, limit):
            return first
        parts, total = [first], len(first)
    else:
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


def _both(pattern: str, flags: int = 0) -> dict[type, re.Pattern]:
    """The pattern for str and for bytes (JSON's syntax is ASCII): a report
    is counted before it is decoded."""
    return {str: re.compile(pattern, flags), bytes: re.compile(pattern.encode(), flags)}


# A JSON string (escapes included): brackets inside one do not nest.
_JSON_STRINGS = _both(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_STRING = _JSON_STRINGS[str]
# From a point outside any string: text and whole strings, as far as they go
# before the end given (a string that the end cuts stops it, at its quote).
_PAIRED = _both(r'(?:[^"]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.DOTALL)
_NOT_BRACKET = _both(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1, 91: 1, 123: 1, 93: -1, 125: -1}  # and as bytes
# Text is taken a segment at a time: re.sub gathers a string per piece
# before joining them, so removing the strings of a whole 32 MiB report at
# once held 400 MB of pieces.
SEGMENT = 1 << 18

Text = TypeVar("Text", str, bytes)


def _mark(mark: str, text: Text) -> Text:
    return mark if isinstance(text, str) else mark.encode()  # type: ignore[return-value]


def json_depth(text: str | bytes) -> int:
    """How deep the arrays and objects of a JSON text nest, by a linear scan
    (json.loads recurses, and a deep enough text exhausts its stack)."""
    depth = deepest = 0
    not_bracket = _NOT_BRACKET[type(text)]
    for bare, _, _ in _outside_strings(text):
        brackets = not_bracket.sub(bare[:0], bare)
        if brackets:
            steps = itertools.accumulate(map(_STEP.__getitem__, brackets), initial=depth)
            deepest = max(deepest, max(steps))
            opened = brackets.count(_mark("[", text)) + brackets.count(_mark("{", text))
            depth += opened - (len(brackets) - opened)
    return deepest


def _outside_strings(text: Text) -> Iterator[tuple[Text, int, int]]:
    """(the text with each string as one 's', how many strings, their
    characters with their quotes) for each segment of `text`, in order, each
    segment ending outside any string; a string longer than a segment is one
    of its own. ('["a"]' is '[s]': a list that is not empty.)"""
    string, paired, one = _JSON_STRINGS[type(text)], _PAIRED[type(text)], _mark("s", text)
    pos, n = 0, len(text)
    while pos < n:
        end = min(pos + SEGMENT, n)
        cut = paired.match(text, pos, end).end()  # type: ignore[union-attr]
        if cut > pos:
            bare, strings = string.subn(one, text[pos:cut])
            yield bare, strings, (cut - pos) - len(bare) + strings
        if cut < end:  # text[cut] opens a string that runs past the segment
            m = string.match(text, cut)
            stop = m.end() if m else n  # unterminated: the rest is its
            yield one, 1, stop - cut
            pos = stop
        else:
            pos = end


def _few_brackets(text: str | bytes, limit: int) -> bool:
    """No more opening brackets than the limit: no need to scan."""
    return text.count(_mark("[", text)) + text.count(_mark("{", text)) <= limit


def check_json_depth(text: str | bytes, name: str, limit: int = MAX_DEPTH) -> None:
    if not _few_brackets(text, limit) and json_depth(text) > limit:
        raise UsageError(f"{name}: nested deeper than {limit} levels")


# -- what parsing JSON costs ---------------------------------------------------
#
# json.loads amplifies: a 32 MiB report of tiny objects took 993 MB, so the
# 256 MiB limit let a report take about 8 GB. `json_shape` counts what a text
# would make without parsing it, in linear time and bounded memory (a
# segment at a time, its strings removed, then str.count), even before it is
# decoded; `JsonShape.parsed_bytes` bounds the memory from the counts. The
# costs are CPython 3.11's on 64-bit Linux, measured with tracemalloc over
# 100,000-element texts (each with its slot in the enclosing list or dict):
# an empty dict 72 B, one of 1-5 keys 192 B, of 6-10 keys 280 B, 40 keys
# 840 B (200 B + 40 B per member covers them); an empty list 64 B plus 8 B
# per item; an int 36 B, a float 32 B, a big int 44 B; a string 57 B plus 1,
# 2 or 4 bytes per character (its widest decides). tests/unit/test_plain_files.py
# holds the bound against tracemalloc.
COST_OBJECT = 200
COST_MEMBER = 40
COST_ARRAY = 72
COST_VALUE = 44
COST_STRING = 64


@dataclass(frozen=True)
class JsonShape:
    """What parsing a JSON text would make, counted outside its strings."""

    objects: int
    arrays: int
    members: int  # ':' (one per key of an object)
    # Every value in a list, every member of an object, and the text's own
    # value: a ',' before each but the first of a container that has one.
    items: int
    strings: int
    string_chars: int  # the strings' characters (bytes, if counted undecoded)
    width: int  # bytes per character of the widest string: 1, 2 or 4
    text_bytes: int  # the text itself, as Python holds it while it parses

    @property
    def values(self) -> int:
        """Every value, container and key: what a check of the parsed data
        walks (bridge.report.check counts the same)."""
        return self.items + self.members

    def parsed_bytes(self) -> int:
        """An upper bound on what json.loads allocates for it (the text aside)."""
        return (
            self.objects * COST_OBJECT
            + self.members * COST_MEMBER
            + self.arrays * COST_ARRAY
            + self.items * COST_VALUE
            + self.strings * COST_STRING
            + self.string_chars * self.width
        )


# Escapes that make a parsed string 4 bytes (a surrogate pair: an emoji) or
# 2 bytes (past Latin-1) per character.
_WIDE_ESCAPES = ((4, _both(r"\\u[dD][89abAB]")), (2, _both(r"\\u(?!00)")))
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_PAST_LATIN1 = re.compile("[\u0100-\uffff]")


def text_width(text: str) -> int:
    """Bytes per character Python stores `text` at, which its widest
    character decides (a regex search in C, not a max() over each one)."""
    if _ASTRAL.search(text):
        return 4
    return 2 if _PAST_LATIN1.search(text) else 1


def utf8_width(raw: bytes) -> int:
    """Bytes per character of `raw` once decoded from UTF-8 (without
    decoding: the lead bytes of its widest character tell): a text with one
    emoji is stored at 4 bytes per character, 1 GiB for a 256 MiB file."""
    if re.search(rb"[\xf0-\xf4]", raw):
        return 4
    return 2 if re.search(rb"[\xc4-\xef]", raw) else 1


def json_shape(text: str | bytes) -> JsonShape:
    """Count what `text` (or its UTF-8 bytes, not yet decoded) would parse
    into, without parsing it."""
    width = own = text_width(text) if isinstance(text, str) else utf8_width(text)
    for wide, patterns in _WIDE_ESCAPES:
        if wide > width and patterns[type(text)].search(text):
            width = wide
            break
    marks = ("{", "[", ":", ",", "{}", "[]")
    counts = dict.fromkeys((*marks, "strings", "chars"), 0)
    last = text[:0]  # the end of the segment before, for a '[]' across two
    for bare, strings, chars in _outside_strings(text):
        for mark in marks:
            counts[mark] += bare.count(_mark(mark, text))
        seam = last + bare[:1]
        counts["[]"] += seam == _mark("[]", text)
        counts["{}"] += seam == _mark("{}", text)
        last = bare[-1:]
        counts["strings"] += strings
        counts["chars"] += chars
    # An empty '[]' or '{}' holds no item ('[ ]' counts one more: a bound).
    empty = counts["{}"] + counts["[]"]
    return JsonShape(
        objects=counts["{"],
        arrays=counts["["],
        members=counts[":"],
        items=counts[","] + counts["{"] + counts["["] - empty + 1,
        strings=counts["strings"],
        string_chars=counts["chars"],
        width=width,
        text_bytes=len(text) * own,
    )


def check_json_cost(text: str | bytes, name: str, budget: int, max_items: int) -> JsonShape:
    """Refuse, before it is decoded or parsed, a JSON text with more than
    `max_items` values (keys and containers included), or whose text and
    parse would take more than `budget` bytes; then, as check_json_depth,
    one nested too deep."""
    shape = json_shape(text)
    if shape.values > max_items:
        raise TooLarge(f"{name}: more than {max_items} values")
    # Undecoded, the bytes and the text are held together while it decodes.
    decoding = shape.text_bytes + (len(text) if isinstance(text, bytes) else 0)
    cost = max(shape.parsed_bytes() + shape.text_bytes, decoding)
    if cost > budget:
        raise TooLarge(
            f"{name}: reading it would take about {cost >> 20} MiB ({shape.values} values,"
            f" {shape.objects} objects, {shape.arrays} lists, {shape.strings} strings),"
            f" more than {budget >> 20} MiB"
        )
    check_json_depth(text, name)
    return shape


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
