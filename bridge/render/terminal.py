"""The terminal view: for each scenario its heading, the answers, the tables
(fitted to the width: bridge.render.layout) and their notes; then where it
ran, the caveats and the problems. Layout only: the words are the view's
(bridge.view), and every text is made printable here (escape.term_text).

In colour (`colour`: the command decides, bridge.cli.common.colour_wanted),
the tones of the view (Phrase.tone, Cell.tone) and the kinds of its notes
become ANSI SGR colours, added after the text is laid out: a coloured view
is the plain one with escapes around some of its characters, so every width
is measured on the text alone."""

from __future__ import annotations

from collections.abc import Callable

from bridge.render import layout
from bridge.render.escape import term_text
from bridge.view.model import Answer, AnswerLine, Note, NoteKind, Section, Table, Tone, View

DEFAULT_WIDTH = 80  # when no width is known (not a terminal, no COLUMNS)
PREFIX = {NoteKind.WARNING: "Warning: ", NoteKind.ADVICE: "Advice: "}
PROPER = frozenset({"Linux", "Python", "Erlang", "Elixir", "OpenSSL"})

# -- colour --------------------------------------------------------------------

# ANSI SGR parameters (ECMA-48): a verdict that a path uses the feature or a
# significant gain green, a slowdown and an error red, a withheld verdict
# ("inconclusive", "?") and a warning yellow, a verdict that a path does not
# use it or a difference within noise cyan; headings bold.
SGR = {Tone.GOOD: "32", Tone.BAD: "31", Tone.WARN: "33", Tone.MUTED: "36"}
BOLD = "1"
RESET = "\x1b[0m"
# What a note's kind colours: its prefix ("Warning: ") or, for a problem, all of it.
NOTE_SGR = {NoteKind.WARNING: "1;33", NoteKind.ADVICE: "1;36", NoteKind.PROBLEM: "31"}
_SPACE = " \xa0"  # what wrapping may turn into a line break or a space

Paint = Callable[[str, str], str]  # (SGR parameters, text) -> text


def sgr(code: str, text: str) -> str:
    return f"\x1b[{code}m{text}{RESET}" if code and text else text


def plain(_code: str, text: str) -> str:
    return text


def tinted(lines: list[str], start: int, end: int, code: str, paint: Paint) -> list[str]:
    """Wrapped `lines` with the characters [start, end) of the text they
    were wrapped from painted, counting only what is not a space (wrapping
    keeps every other character, in order); each line closes its own colour."""
    if paint is plain or not code or start >= end:
        return lines
    out, n = [], 0
    for line in lines:
        pieces, run = [], ""
        for ch in line:
            inside = ch not in _SPACE and start <= n < end
            if ch not in _SPACE:
                n += 1
            if inside or (run and ch in _SPACE and n < end):
                run += ch
                continue
            if run:
                pieces.append(_painted_run(run, code, paint))
                run = ""
            pieces.append(ch)
        if run:
            pieces.append(_painted_run(run, code, paint))
        out.append("".join(pieces))
    return out


def _painted_run(run: str, code: str, paint: Paint) -> str:
    body = run.rstrip(_SPACE)  # spaces after the span stay outside its colour
    return paint(code, body) + run[len(body) :]


def _count(text: str) -> int:
    return sum(ch not in _SPACE for ch in text)


# -- the view --------------------------------------------------------------------


def render(
    view: View,
    width: int = DEFAULT_WIDTH,
    omit: frozenset[str] = frozenset(),
    colour: bool = False,
) -> str:
    """The whole view; without the sections in `omit` (printed already, as
    each scenario finished); in colour when `colour`."""
    w = max(width, layout.MIN_WIDTH)
    paint = sgr if colour else plain
    out: list[str] = []
    for s in view.sections:
        if s.key in omit:
            continue
        if out:
            out.append("")
        out += section_lines(s, w, paint=paint)
    return finish(out + tail_lines(view, w, paint=paint))


def finish(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n") + "\n"


def section(s: Section, width: int = DEFAULT_WIDTH, colour: bool = False) -> str:
    paint = sgr if colour else plain
    return finish(section_lines(s, max(width, layout.MIN_WIDTH), paint=paint))


def section_lines(s: Section, width: int, esc=term_text, paint: Paint = plain) -> list[str]:
    heading = layout.wrap(f"== {esc(s.title)}", width, indent="   ")
    out = tinted(heading, 0, _count(" ".join(heading)), BOLD, paint)
    for a in s.answers:
        out += answer_lines(a, width, esc, paint)
    for t in s.tables:
        out.append("")
        out += table_lines(t, width, esc, paint=paint)
    if s.notes:
        out.append("")
    for n in s.notes:
        out += note_lines(n, width, esc, paint)
    return out


def answer_lines(a: Answer, width: int, esc=term_text, paint: Paint = plain) -> list[str]:
    out = layout.wrap(f"{esc(a.heading)}:", width, indent="  ")
    for line in a.lines:
        wrapped = layout.wrap(esc(said(line)), width, indent="    ", first="  ")
        # The verdict word, where said() puts it: after "subject: ".
        start = _count(esc(f"{line.subject}: "))
        end = start + _count(esc(line.verdict.text))
        out += tinted(wrapped, start, end, SGR.get(line.verdict.tone, ""), paint)
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


def table_lines(
    t: Table, width: int, esc=term_text, drop: bool = True, paint: Paint = plain
) -> list[str]:
    out = layout.wrap(f"{esc(t.title)}:", width) if t.title else []
    fitted = layout.fit(t, width, esc, drop=drop)
    tint = None if paint is plain else lambda tone, text: paint(SGR.get(tone, ""), text)
    out += layout.lay_out(t, fitted, width, esc, tint)
    notes = dict.fromkeys(t.columns[i].note for i in sorted(fitted.shown()) if t.columns[i].note)
    legend = list(t.legend) + list(notes)
    if legend:
        out.append("")
    for line in legend:
        out += layout.wrap(esc(line), width, indent="    ")
    return out


def note_lines(n: Note, width: int, esc=term_text, paint: Paint = plain) -> list[str]:
    text = prefixed(n)
    if n.count > 1:
        text += f" ({n.count}×)"
    lines = layout.wrap(esc(text), width, indent="  ")
    code = NOTE_SGR.get(n.kind, "")
    if n.kind in PREFIX:  # "Warning:" stands out; the sentence stays readable
        lines = tinted(lines, 0, _count(PREFIX[n.kind]), code, paint)
    else:
        lines = tinted(lines, 0, _count(esc(text)), code, paint)
    # A failed process's own last lines, as it wrote them: not coloured.
    for line in n.lines:
        lines += layout.wrap(esc(line), width, indent="      ", first="    ")
    return lines


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


def tail_lines(view: View, width: int, esc=term_text, paint: Paint = plain) -> list[str]:
    out: list[str] = []
    if view.provenance:
        out.append("")
        for p in view.provenance:
            out += layout.wrap(esc(p), width, indent="  ")
    if view.caveats:
        out.append("")
        for n in view.caveats:
            out += note_lines(n, width, esc, paint)
    if view.problems:
        out.append("")
        for n in view.problems:
            out += note_lines(n, width, esc, paint)
    return out
