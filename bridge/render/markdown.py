"""Markdown that pastes into a GitHub issue or comment and a Discourse forum
(erlangforums, elixirforum): per scenario the answers (each withheld verdict
with its reason), a table of the few columns that fit a comment, the full
table folded in <details>, the notes; then the caveats, the environment and
the problems folded, and the command that measures it again.

Every line is Markdown made by bridge.render.escape: the writer's own syntax
is the literal template of `md`, and each text of the view is escaped for
where it stands (inline text, a table cell, the <summary> of a <details>, a
fenced block). Nothing depends on trailing spaces (a forum strips them):
notes are list items; inside <details> the Markdown is set off by blank
lines, or GitHub shows it raw. The user's home directory reads `~`."""

from __future__ import annotations

from bridge.render import layout
from bridge.render.escape import Md, document, md, md_cell, md_fence, md_html, md_table
from bridge.render.terminal import prefixed, said
from bridge.view import home
from bridge.view.model import Note, Section, Table, View

BLANK = Md("")
# A GitHub comment shows about this many characters of a table row before
# it scrolls: the columns kept in the open are the ones that fit.
COMMENT_WIDTH = 72


def render(view: View) -> str:
    names = ", ".join(s.key for s in view.sections) or "bridge"
    out = [md("### {}: {}", names, view.title)]
    for s in view.sections:
        out += _section(s)
    out += _notes_folded("Caveats", view.caveats)
    out += details("Environment", [md("- {}", home.tilde(p)) for p in view.provenance])
    out += _notes_folded(f"Problems ({len(view.problems)})", view.problems)
    out += _reproduce(view)
    return document(out)


def _section(s: Section) -> list[Md]:
    out = [BLANK, md("#### {}", s.title)]
    for a in s.answers:
        out += [BLANK, md("**{}:**", a.heading), BLANK]
        out += [md("- {}", said(line)) for line in a.lines]
    for t in s.tables:
        out += [BLANK, *_table(t)]
    if s.notes:
        out.append(BLANK)
    out += [line for n in s.notes for line in _note(n)]
    return out


def _note(n: Note) -> list[Md]:
    said = md("- {}", home.tilde(prefixed(n)))
    if not n.lines:
        return [said]
    # A process's own lines, as it wrote them: a block inside the item.
    block = md_fence([home.tilde(line) for line in n.lines], "text")
    return [said, *(Md("  " + line) for line in block)]


def _cell_width(text: str) -> str:
    return md_cell(text)


def _table(t: Table) -> list[Md]:
    """The columns that fit a comment in the open; the whole table in
    <details> when any had to go."""
    fitted = layout.fit(t, COMMENT_WIDTH, _cell_width)
    # A part of a folded table alone would hide the median: the columns that
    # stay at any width are all kept in the open, a comment scrolls them.
    open_cols = tuple(sorted(fitted.shown())) if len(fitted.parts) > 1 else fitted.parts[0]
    out = [md("**{}:**", t.title), BLANK] if t.title else []
    out += _pipe(t, open_cols, fitted.short)
    shown = set(open_cols)
    notes = dict.fromkeys(t.columns[i].note for i in sorted(shown) if t.columns[i].note)
    legend = [*t.legend, *notes]
    if legend:
        out.append(BLANK)
    out += [md("- {}", line) for line in legend]
    if len(open_cols) < len(t.columns) or fitted.short:
        everything = tuple(range(len(t.columns)))
        body = _pipe(t, everything, False)
        hidden = [t.columns[i] for i in everything if i not in shown]
        more = dict.fromkeys(c.note for c in hidden if c.note)
        body += [BLANK, *(md("- {}", n) for n in more)] if more else []
        out += details("Every column", body)
    return out


def _pipe(t: Table, cols: tuple[int, ...], short: bool) -> list[Md]:
    rows = [[layout.cell_text(t, r, i, short, str) for i in cols] for r in range(len(t.rows))]
    headers = [t.columns[i].header for i in cols]
    align = ["right" if t.columns[i].right else "left" for i in cols]
    return md_table(rows, headers, "pipe", align)


def details(summary: str, body: list[Md]) -> list[Md]:
    """A folded block: blank lines around the Markdown inside, so that GitHub
    and Discourse render it rather than show it raw. The summary stands in
    raw HTML, where Markdown is not read: escaped as HTML text."""
    if not body:
        return []
    head = Md(f"<details><summary>{md_html(summary)}</summary>")
    return [BLANK, head, BLANK, *body, BLANK, Md("</details>")]


def _notes_folded(summary: str, notes: tuple[Note, ...]) -> list[Md]:
    return details(summary, [line for n in notes for line in _note(n)])


def _reproduce(view: View) -> list[Md]:
    """The command that measures the same again, in a block that pastes into a shell."""
    if not view.reproduce and not view.reproduce_notes:
        return []
    out = [BLANK, md("Reproduce:"), BLANK]
    if view.reproduce:
        out += md_fence([" ".join(home.shell_word(w) for w in view.reproduce)], "sh")
    out += [BLANK] if view.reproduce and view.reproduce_notes else []
    return out + [md("- {}", n) for n in view.reproduce_notes]
