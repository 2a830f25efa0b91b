"""The terminal view: for each scenario its heading, the answers, the tables
(fitted to the width: bridge.render.layout) and their notes; then where it
ran, the caveats and the problems. Layout only: the words are the view's
(bridge.view), and every text is made printable here (escape.term_text)."""

from __future__ import annotations

from bridge.render import layout
from bridge.render.escape import term_text
from bridge.view.model import Answer, AnswerLine, Note, NoteKind, Section, Table, View

DEFAULT_WIDTH = 80  # when no width is known (not a terminal, no COLUMNS)
PREFIX = {NoteKind.WARNING: "Warning: ", NoteKind.ADVICE: "Advice: "}
PROPER = frozenset({"Linux", "Python", "Erlang", "Elixir", "OpenSSL"})


def render(view: View, width: int = DEFAULT_WIDTH, omit: frozenset[str] = frozenset()) -> str:
    """The whole view; without the sections in `omit` (printed already, as
    each scenario finished)."""
    w = max(width, layout.MIN_WIDTH)
    out: list[str] = []
    for s in view.sections:
        if s.key in omit:
            continue
        if out:
            out.append("")
        out += section_lines(s, w)
    return finish(out + tail_lines(view, w))


def finish(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n") + "\n"


def section(s: Section, width: int = DEFAULT_WIDTH) -> str:
    return finish(section_lines(s, max(width, layout.MIN_WIDTH)))


def section_lines(s: Section, width: int, esc=term_text) -> list[str]:
    out = layout.wrap(f"== {esc(s.title)}", width, indent="   ")
    for a in s.answers:
        out += answer_lines(a, width, esc)
    for t in s.tables:
        out.append("")
        out += table_lines(t, width, esc)
    if s.notes:
        out.append("")
    for n in s.notes:
        out += note_lines(n, width, esc)
    return out


def answer_lines(a: Answer, width: int, esc=term_text) -> list[str]:
    out = layout.wrap(f"{esc(a.heading)}:", width, indent="  ")
    for line in a.lines:
        out += layout.wrap(esc(said(line)), width, indent="    ", first="  ")
    return out


def said(line: AnswerLine) -> str:
    """'Erlang crypto:macN: inconclusive, 1.33× slower without (CI 1.28–1.33)
    — the machine was busy: rerun on a quieter machine'."""
    text = f"{line.subject}: {line.verdict.text}"
    if line.figure:
        text += f" {line.figure}" if line.figure.startswith("(") else f", {line.figure}"
    if line.reason:
        text += f" — {line.reason}" + (f"; {line.rerun}" if line.rerun else "")
    elif line.rerun:
        text += f" — {line.rerun}"
    return text


def table_lines(t: Table, width: int, esc=term_text, drop: bool = True) -> list[str]:
    out = layout.wrap(f"{esc(t.title)}:", width) if t.title else []
    fitted = layout.fit(t, width, esc, drop=drop)
    out += layout.lay_out(t, fitted, width, esc)
    notes = dict.fromkeys(t.columns[i].note for i in sorted(fitted.shown()) if t.columns[i].note)
    legend = list(t.legend) + list(notes)
    if legend:
        out.append("")
    for line in legend:
        out += layout.wrap(esc(line), width, indent="    ")
    return out


def note_lines(n: Note, width: int, esc=term_text) -> list[str]:
    text = prefixed(n)
    if n.count > 1:
        text += f" ({n.count}×)"
    out = layout.wrap(esc(text), width, indent="  ")
    for line in n.lines:
        out += layout.wrap(esc(line), width, indent="      ", first="    ")
    return out


def prefixed(n: Note) -> str:
    """'Warning: other processes ...': one capitalisation for every warning."""
    prefix = PREFIX.get(n.kind, "")
    text = n.text
    first = text.split(" ", 1)[0]
    # "A cost off its fit's line" too: a one-letter word is a capital alone.
    lower = first[1:].islower() or len(first) == 1
    if prefix and first[:1].isupper() and lower and first not in PROPER:
        text = text[:1].lower() + text[1:]
    return prefix + text


def tail_lines(view: View, width: int, esc=term_text) -> list[str]:
    out: list[str] = []
    if view.provenance:
        out.append("")
        for p in view.provenance:
            out += layout.wrap(esc(p), width, indent="  ")
    if view.caveats:
        out.append("")
        for n in view.caveats:
            out += note_lines(n, width, esc)
    if view.problems:
        out.append("")
        for n in view.problems:
            out += note_lines(n, width, esc)
    return out
