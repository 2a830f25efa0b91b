"""Text from outside bridge made safe to show, and numbers read from it.

Reports, scenario files and runtimes' output are data written by someone
else: a terminal escape (ESC [ ...), a C0/C1 control or a bidi override in a
report's `call` would reach the terminal raw, rewrite what was printed before
it or reorder what follows. `printable` spells each such character as a
Python escape (\\x1b, \\u202e), so it shows and does nothing. Every renderer's
output passes through it (`escaped`), and so does every error line.

`whole_number` reads ASCII digits only: str.isdigit() accepts '²' (which
int() refuses) and int() accepts Arabic-Indic and fullwidth digits; a count
given as text is 0-9 or not a count.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import ParamSpec

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


def escaped(render: Callable[P, str]) -> Callable[P, str]:
    """A renderer whose output is `printable`, its line breaks kept."""

    @functools.wraps(render)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> str:
        return printable(render(*args, **kwargs), keep_newlines=True)

    return wrapper


def whole_number(text: str) -> int | None:
    """`text` as a non-negative integer when it is ASCII digits only; None otherwise."""
    return int(text) if _DIGITS.fullmatch(text) else None
