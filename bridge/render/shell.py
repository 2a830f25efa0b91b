"""A command line laid out for a narrow view, so that it still pastes into a
shell: lines end in ` \\` (a line continuation), and only between words.

Each word is quoted for the shell (bridge.view.home.shell_word: shlex.quote,
and an unquoted ~/ for a path in the home directory). A word longer than a
line is cut into pieces joined by a backslash-newline with nothing before
the next piece: the shell removes a backslash-newline outside quotes and
joins what is around it, and adjacent quoted pieces ('ab''cd') make one word.
So a long path wraps and still means the same path.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from bridge.view import home


def lines(argv: Sequence[str], width: int, indent: str = "", more: str = "  ") -> list[str]:
    """The command `argv` (its words as the program receives them) in lines
    of at most `width` columns: the first indented by `indent`, the next by
    `indent + more`."""
    out: list[str] = []
    line = indent
    for raw in argv:
        word = home.shell_word(raw)
        start = indent if not out and line == indent else indent + more
        if line.strip() and len(line) + 1 + len(word) + 2 <= width:
            line += " " + word
            continue
        if line.strip():
            out.append(line + " \\")
            line = start
        if len(line) + len(word) + 2 <= width:
            line += word
            continue
        # Too long for any line: cut it, each continuation piece at column 0.
        pieces = _cut(raw, width - len(line) - 2, width - 2)
        out += [line + pieces[0] + "\\"] + [p + "\\" for p in pieces[1:-1]]
        line = pieces[-1]
    out.append(line)
    return out


def _cut(raw: str, first: int, rest: int) -> list[str]:
    """`raw` in quoted pieces: the first at most `first` columns, the others
    at most `rest`. Each piece is quoted on its own; the shell joins them. A
    path in the home directory keeps its ~/ unquoted, before the first piece."""
    under = home.under_home(raw)
    prefix = "" if under is None else "~/"
    raw = raw if under is None else under
    pieces: list[str] = []
    budget = max(first - len(prefix), 8)
    while raw:
        n = budget
        while n > 1 and len(shlex.quote(raw[:n])) > budget:
            n -= 1
        pieces.append(shlex.quote(raw[:n]))
        raw = raw[n:]
        budget = rest
    pieces = pieces or [""]
    pieces[0] = prefix + pieces[0]
    return pieces
