"""Plain text for email (the erlang-questions list): the terminal view laid
out in 72 columns, in ASCII by transliteration (× x, – -, µ u, ± +/-), every
control and bidi override spelt as an escape first; and the command that
measures it again, in lines that paste into a shell. Each verdict is said
once, in the answer."""

from __future__ import annotations

from bridge.render import layout, shell, terminal
from bridge.render.escape import term_text
from bridge.view.model import View

WIDTH = 72

ASCII = str.maketrans(
    {
        "×": "x",
        "–": "-",
        "—": "-",
        "·": "-",
        "µ": "u",
        "’": "'",
        "²": "^2",
        "±": "+/-",
        "→": "->",
        "…": "...",
    }
)


def ascii_text(value: object) -> str:
    """ASCII for a mail: escapes first, then the transliteration."""
    text = term_text(value).translate(ASCII)
    return text.encode("ascii", "replace").decode("ascii")


def render(view: View) -> str:
    out: list[str] = []
    for s in view.sections:
        if out:
            out.append("")
        out += terminal.section_lines(s, WIDTH, ascii_text)
    out += terminal.tail_lines(view, WIDTH, ascii_text)
    out += _reproduce(view)
    return "\n".join(f for line in out for f in _fold(line)).strip("\n") + "\n"


def _reproduce(view: View) -> list[str]:
    r"""The command rebuilt from the report's checked fields, wrapped with `\`
    continuations, so the lines paste into a shell; what it leaves out under it."""
    if not view.reproduce and not view.reproduce_notes:
        return []
    out = ["", "Reproduce:"]
    notes = list(view.reproduce_notes)
    if view.reproduce and all(w.isascii() for w in view.reproduce):
        out += shell.lines(view.reproduce, WIDTH, indent="    ")
    elif view.reproduce:
        # ASCII only: a path outside it would be printed as another path.
        notes.insert(0, "The command names a path outside ASCII; the Markdown view shows it.")
    for note in notes:
        out += layout.wrap(ascii_text(f"- {note}"), WIDTH, indent="  ")
    return out


def _fold(line: str) -> list[str]:
    """Any line still over WIDTH (none the layout makes) folded: the promise holds."""
    if len(line) <= WIDTH:
        return [line]
    return layout.wrap(line, WIDTH, indent="    ")
