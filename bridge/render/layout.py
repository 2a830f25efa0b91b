"""Layout for a width, shared by the terminal and the text writer: a table's
columns fitted (the shorter forms of its cells first, then its columns in
their drop order), folded into parts that repeat the columns naming a row
when even the columns that stay are too wide, and given row by row when a
part cannot fit; prose wrapped."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from bridge.view.model import Table, Tone

GAP = "  "
MIN_WIDTH = 40  # narrower than this, lines are laid out as at 40

# A figure stays with its unit ("16 B", "1.2 ms"): no line starts with "B".
_UNIT = re.compile(r"(\d) (B|KiB|MiB|GiB|bytes|ms|µs|us|ns|s|iterations|k|M|G)\b")
# An emulator flag stays with its value ("+S 1:1"), as typed on erl's command line.
_FLAG = re.compile(r"(\+S) (\d)")


def wrap(text: str, width: int, indent: str = "", first: str = "") -> list[str]:
    """A paragraph in lines of at most `width`; only a word longer than a
    line (a path) is broken."""
    kept = _UNIT.sub(lambda m: m[1] + "\xa0" + m[2], text)
    kept = _FLAG.sub(lambda m: m[1] + "\xa0" + m[2], kept)
    lines = textwrap.wrap(
        kept,
        max(width, MIN_WIDTH),
        initial_indent=first,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    ) or [""]
    return [line.replace("\xa0", " ") for line in lines]


def fold(text: str, width: int) -> str:
    """Each line of `text` longer than `width` wrapped, its further lines two
    spaces under its first (a description's lines, as `bridge env` prints)."""
    out: list[str] = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        if len(line) <= max(width, MIN_WIDTH) or not body:
            out.append(line)
            continue
        lead = line[: len(line) - len(body)]
        out += wrap(body, width, indent=lead + "  ", first=lead)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


@dataclass(frozen=True)
class Fitted:
    """The columns shown (indexes into the table's), in parts when folded;
    whether the cells' short forms are used; `stacked`: row by row."""

    parts: tuple[tuple[int, ...], ...]
    short: bool = False
    stacked: bool = False

    def shown(self) -> set[int]:
        return {i for part in self.parts for i in part}


def cell_text(table: Table, row: int, col: int, short: bool, esc: Callable[[str], str]) -> str:
    c = table.rows[row][col]
    text = c.short if short and c.short is not None else c.text
    return esc(text) + c.mark


def _widths(table: Table, short: bool, esc) -> list[int]:
    out = []
    for i, col in enumerate(table.columns):
        cells = [len(cell_text(table, r, i, short, esc)) for r in range(len(table.rows))]
        out.append(max([len(esc(col.header)), *cells]))
    return out


def fit(table: Table, width: int, esc: Callable[[str], str] = str, drop: bool = True) -> Fitted:
    """Every column whole; else the short forms; else (`drop`) the columns
    by their drop order; then, still too wide, folded into parts."""
    cols = list(range(len(table.columns)))

    def total(cs: list[int], w: list[int]) -> int:
        return sum(w[i] for i in cs) + len(GAP) * max(len(cs) - 1, 0)

    whole = _widths(table, False, esc)
    if total(cols, whole) <= width:
        return Fitted((tuple(cols),))
    w = _widths(table, True, esc)
    if drop:
        order = sorted(
            (i for i in cols if table.columns[i].drop is not None),
            key=lambda i: table.columns[i].drop,
        )
        for i in order:
            if total(cols, w) <= width:
                break
            cols.remove(i)
    if total(cols, w) <= width:
        return Fitted((tuple(cols),), short=True)
    for short, widths in ((False, whole), (True, w)):
        parts = _fold(table, cols, widths, width, total)
        if parts is not None:
            return Fitted(parts, short=short)
    return Fitted((tuple(cols),), short=True, stacked=True)  # row by row, every column


def _fold(table: Table, cols: list[int], w: list[int], width: int, total):
    """The columns in parts of at most `width`, each with the columns that
    name a row; None when a part cannot fit."""
    ident = [i for i in cols if table.columns[i].ident]
    rest = [i for i in cols if i not in ident]
    parts: list[tuple[int, ...]] = []
    part: list[int] = []
    for i in rest:
        if part and total(ident + part + [i], w) > width:
            parts.append(tuple(ident + part))
            part = []
        part.append(i)
    if part or not parts:
        parts.append(tuple(ident + part))
    if any(total(list(p), w) > width for p in parts):
        return None
    return tuple(parts)


def lay_out(
    table: Table,
    fitted: Fitted,
    width: int,
    esc: Callable[[str], str] = str,
    tint: Callable[[Tone, str], str] | None = None,
) -> list[str]:
    """The table as a header, a rule and rows (tabulate's "simple"), part by
    part; a part too wide row by row, each row a wrapped line. `tint` colours
    a cell's text by its tone once it is padded, so widths are the text's."""
    w = _widths(table, fitted.short, esc)
    out: list[str] = []
    for n, part in enumerate(fitted.parts):
        if n:
            out.append("")
        if fitted.stacked:
            out += _stacked(table, part, fitted.short, width, esc)
            continue

        def line(values: list[str], part=part, tones: list[Tone] | None = None) -> str:
            cells = []
            for k, (v, i) in enumerate(zip(values, part, strict=True)):
                pad = " " * (w[i] - len(v))
                tone = tones[k] if tones else Tone.PLAIN
                shown = tint(tone, v) if tint is not None and tone is not Tone.PLAIN else v
                cells.append(pad + shown if table.columns[i].right else shown + pad)
            return GAP.join(cells).rstrip()

        out.append(line([esc(table.columns[i].header) for i in part]))
        out.append(GAP.join("-" * w[i] for i in part))
        for r in range(len(table.rows)):
            texts = [cell_text(table, r, i, fitted.short, esc) for i in part]
            out.append(line(texts, tones=[table.rows[r][i].tone for i in part]))
    return out


def _stacked(table: Table, part, short: bool, width: int, esc) -> list[str]:
    ident = [i for i in part if table.columns[i].ident]
    out = []
    for r in range(len(table.rows)):
        head = " ".join(cell_text(table, r, i, short, esc) for i in ident)
        said = "; ".join(
            f"{esc(table.columns[i].header)} {cell_text(table, r, i, short, esc)}"
            for i in part
            if i not in ident and cell_text(table, r, i, short, esc)
        )
        out += wrap(f"{head}: {said}", width, indent="    ")
    return out
