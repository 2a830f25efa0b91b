"""Escaping, one small pure function per output context. A report is someone
else's data: a call label, a description, a runtime id or an error message
may hold Markdown, HTML, terminal escapes or text no font can draw, and a
view must print it as the text it is.

Markdown (CommonMark with GitHub's tables, as GitHub and Discourse render
it) has five contexts, each with its function:

- `md_text`: inline text (a list item, a heading). Metacharacters are
  backslash-escaped and `<`, `>`, `&` written as entities, so no tag, entity,
  emphasis, link, code span or block marker from a report survives; one line.
- `md_code`: a code span, its delimiter a backtick run longer than any in the
  text (CommonMark: a span closes only on a run of the same length).
- `md_cell` and `md_cell_code`: a table cell, text or code, `|` escaped
  (GitHub splits a row on every `|` not escaped, even inside a code span);
  `md_table` makes a whole table of such cells.
- `md_fence`: a fenced block, its fence longer than any backtick run inside.
- `md_html`: text inside the raw HTML a view writes (the `<summary>` of a
  `<details>` block), where Markdown is not read and entities are.

Every piece of a Markdown view is an `Md`: made here, by these functions or
by `md`, which formats a writer's own literal template with values that are
escaped as inline text unless they are `Md` already. A line that reaches
`document` without being `Md` is escaped whole: a value a writer forgot to
escape comes out as text, never as markup.

HTML (bridge.render.html) has one context for text, `html_text`, which
serves element content and quoted attribute values alike: printable first,
then `&`, `<`, `>`, `"` and `'` as entities, so no tag, attribute or entity
from a report survives. Every piece of an HTML page is an `Html`, made by
`html_text` or by `h`, which formats a writer's own literal template with
values escaped unless they are `Html` already.

`csv_text` is for a cell of a CSV file (term_text, and no formula).
`term_text` is for the terminal and the mail view (controls, bidi overrides
and lone surrogates spelt as escapes: bridge.plain.printable), `svg_text`
for text matplotlib draws (the same, plus the characters XML 1.0 cannot
hold and mathtext's `$`, cut to a length).

The functions are pure and import nothing of bridge's but bridge.plain, so
they move as they are into the one view module of the redesign.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from tabulate import tabulate

from bridge import plain


class Md(str):
    """Markdown that is safe as it is: made in this module only."""

    __slots__ = ()


# A newline: a value is one line wherever it is shown.
_BREAKS = re.compile(r"\n+")


def _one_line(value: object) -> str:
    """`value` printable (bridge.plain.printable: a control, CR included, or a
    bidi override spelt as an escape), its newlines spaces."""
    return _BREAKS.sub(" ", plain.printable(str(value), keep_newlines=True))


_BLANKS = re.compile(r" +")
# What makes Markdown of inline text: backslash, code, emphasis (*, and _ at
# a word's edge: inside a word it opens nothing), links and images, table
# pipes, strikethrough (~, but not the ~/ that starts a path: it cannot
# close one), GitHub's math ($), and the closing #s of a heading.
_PUNCT = re.compile(
    r"[\\`*\[\]|$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|~(?!/)|(?<=\S)~|(?<= )#+(?= *$)"
)
# What opens a block where a line starts: an ATX heading, a list item or a
# thematic break, a setext underline; escaped by a backslash before it.
_BLOCK_START = re.compile(r"^ ?(?=#|[-+*](?: |$)|-(?: *-)|=+ *$)")
# An ordered list item ("1." or "1)"): escaped by a backslash after the digits.
_ORDERED_START = re.compile(r"^( ?\d{1,9})(?=[.)](?: |$))")


def _inline(value: object) -> str:
    text = _BLANKS.sub(" ", _one_line(value))
    text = html.escape(text, quote=False)  # & < >: no tag, entity or autolink
    return _PUNCT.sub(lambda m: "\\" + m.group(0), text)


def md_text(value: object) -> Md:
    """`value` as Markdown text that renders as the text it is, wherever
    it stands in a line (at its start too: no list item or heading)."""
    if isinstance(value, Md):
        return value
    text = _BLOCK_START.sub(lambda m: m.group(0) + "\\", _inline(value), count=1)
    return Md(_ORDERED_START.sub(r"\1\\", text, count=1))


def _longest_run(text: str, char: str = "`") -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)


def md_code(value: object) -> Md:
    """`value` as a code span: a delimiter one backtick longer than the
    longest run inside, and a space inside each end where the text begins
    or ends with a backtick or a space (CommonMark strips one from each end
    of a span that has both)."""
    text = _one_line(value)
    if not text:
        return Md("")
    fence = "`" * (_longest_run(text) + 1)
    pad = text[0] in "` " or text[-1] in "` "
    if text.strip(" ") == "":
        pad = False  # all spaces: CommonMark keeps them as they are
    inner = f" {text} " if pad else text
    return Md(f"{fence}{inner}{fence}")


def _escape_pipes(markdown: str) -> str:
    """Every `|` not already escaped (after an odd run of backslashes) escaped."""
    return re.sub(r"(?<!\\)((?:\\\\)*)\|", r"\1\\|", markdown)


def md_cell(value: object) -> Md:
    """A table cell: inline text, or Markdown made here, with each `|`
    escaped and no line break (a cell holds no block: a leading "-" is text)."""
    text = value if isinstance(value, Md) else _inline(value)
    return Md(_escape_pipes(text.replace("\n", " ")))


def md_cell_code(value: object) -> Md:
    """A code span in a table cell. Text holding a `|` is shown as escaped
    text instead: GitHub reads `\\|` inside a span as `|`, so a backslash
    before a pipe in the code could not be written."""
    text = str(value)
    return md_cell(text if "|" in text else md_code(text))


def md_fence(lines: Iterable[str], info: str = "") -> list[Md]:
    """A fenced code block around `lines` (each printed as it is, a line of
    its own): the fence is a backtick run longer than any inside, so that
    no line can close it."""
    body = [_one_line(line) for line in lines]
    fence = "`" * max(3, max((_longest_run(line) for line in body), default=0) + 1)
    info = re.match(r"[A-Za-z0-9_+-]*", info).group(0)  # a word: no backtick, no space
    return [Md(fence + info), *(Md(line) for line in body), Md(fence)]


def md_html(value: object) -> Md:
    """Text inside raw HTML (a <summary>): entities, one line."""
    return Md(html.escape(_one_line(value), quote=True))


def md(template: str, *values: object) -> Md:
    """The writer's own Markdown `template` (a literal) with each `{}`
    filled: an `Md` value as it is, any other value as inline text."""
    return Md(template.format(*(md_text(v) for v in values)))


def md_lines(lines: Iterable[object]) -> list[Md]:
    """Lines of a Markdown view: each `Md` as it is, any other escaped whole."""
    return [line if isinstance(line, Md) else md_text(line) for line in lines]


def document(lines: Iterable[object]) -> str:
    """A Markdown view from its lines (`md_lines`), ending in one newline."""
    return "\n".join(md_lines(lines)).rstrip() + "\n"


def md_table(
    rows: Sequence[Sequence[object]],
    headers: Sequence[object],
    tablefmt: str = "github",
    colalign: Sequence[str] | None = None,
) -> list[Md]:
    """A pipe table (tabulate's "github" or "pipe" format), every header and
    cell escaped for a cell (`md_cell`): one row a line, as many cells as
    the header."""
    return [
        Md(line)
        for line in tabulate(
            [[md_cell(c) for c in row] for row in rows],
            headers=[md_cell(h) for h in headers],
            tablefmt=tablefmt,
            colalign=colalign,
            disable_numparse=True,
        ).splitlines()
    ]


def md_row_cells(line: str) -> list[str]:
    """The cells of a pipe-table row, split where GitHub splits it: at each
    `|` that no backslash escapes (a backslash escapes the character after
    it); the empty ends outside the outer pipes dropped."""
    out, start, i = [], 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == "|":
            out.append(line[start:i])
            start = i + 1
        i += 1
    out.append(line[start:])
    if out and not out[0].strip():
        out = out[1:]
    if out and not out[-1].strip():
        out = out[:-1]
    return out


# -- the terminal and the mail view -------------------------------------------


def term_text(value: object) -> str:
    """Text for a terminal or a mail: every control, bidi override, line
    separator and lone surrogate spelt as an escape, one line."""
    return plain.printable(str(value))


# -- a spreadsheet (CSV) -----------------------------------------------------

# What makes a spreadsheet read a cell as a formula (OWASP's CSV injection):
# such a text cell is written with a leading apostrophe, which shows it as text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value: object) -> str:
    """A text cell of a CSV file: printable (term_text: no control, CR or
    newline, no bidi override, so the file is one row per line wherever it
    is opened), and never a formula."""
    text = str(value)
    guarded = "'" if text.startswith(_FORMULA_START) else ""
    return guarded + plain.printable(text)


# -- pictures (matplotlib: PNG, and SVG whose text stays text) ---------------

# What XML 1.0 cannot hold beyond plain.printable's set: the noncharacters
# U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\ufffe\uffff]")
SVG_TEXT_LIMIT = 120  # characters: a label longer than this would not fit the picture


def svg_text(value: object, limit: int = SVG_TEXT_LIMIT) -> str:
    """Text matplotlib draws (PNG, or SVG text): printable (controls, bidi
    overrides and lone surrogates as escapes, which a font can draw and XML
    can hold), each `$` escaped (matplotlib reads text between two as TeX
    math, and raises on what it cannot parse; `\\$` draws a dollar), cut
    to `limit` characters drawn, the cut marked with an ellipsis."""
    text = plain.printable(str(value))
    text = _NOT_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("$", "\\$")


# -- HTML (bridge.render.html) ---------------------------------------------------


class Html(str):
    """HTML that is safe as it is: made in this module only."""

    __slots__ = ()


def html_text(value: object) -> Html:
    """`value` as HTML text, for element content or a quoted attribute value:
    printable (controls, bidi overrides, separators and lone surrogates as
    escapes; XML's noncharacters too, as an SVG inside the page is XML), one
    line, then every character HTML reads as markup written as an entity."""
    if isinstance(value, Html):
        return value
    text = _NOT_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", _one_line(value))
    return Html(html.escape(text, quote=True))


def h(template: str, *values: object) -> Html:
    """The writer's own HTML `template` (a literal) with each `{}` filled:
    an `Html` value as it is, any other value as text (`html_text`)."""
    return Html(template.format(*(html_text(v) for v in values)))


def html_join(parts: Iterable[Html], sep: str = "") -> Html:
    """Pieces of HTML joined; a piece that is not `Html` is escaped as text."""
    return Html(sep.join(html_text(p) for p in parts))
