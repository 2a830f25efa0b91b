"""Colour on a terminal (bridge.render.terminal, --color, NO_COLOR): the
view's tones as ANSI SGR colours, added after layout, so a coloured view is
the plain one with escapes around some characters: every width, the
80-column fitting included, is measured on the text alone. Only the table
on stdout is ever coloured."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from bridge.cli.common import ColourWhen, colour_decided, rendered
from bridge.cli.main import cli
from bridge.render import terminal
from bridge.render.compare import render as render_compare
from bridge.report import schema
from bridge.view import Detail
from tests.conftest import FIXTURES

SGR = re.compile(r"\x1b\[[0-9;]*m")
MIX = FIXTURES / "roundtrip/run-mix1.json"
REPORTS = [
    MIX,
    FIXTURES / "roundtrip/ecdsa-2otp-2openssl.json",
    FIXTURES / "roundtrip/versions-3otp-2openssl.json",
    FIXTURES / "terminal/hmac-sha1-quick.json",
    FIXTURES / "terminal/ecdsa-p256-quick.json",
]


def visible(text: str) -> str:
    return SGR.sub("", text)


@pytest.mark.parametrize("detail", list(Detail))
@pytest.mark.parametrize("width", [40, 80, 120])
@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_colour_adds_escapes_and_nothing_else(path, width, detail):
    report = schema.load(path)
    plain = rendered("table", report, detail, width)
    coloured = rendered("table", report, detail, width, colour=True)
    assert SGR.search(coloured) and not SGR.search(plain)
    assert visible(coloured) == plain
    assert max(len(line) for line in visible(coloured).splitlines()) <= width
    # Each line closes what it opens: a pager or `head` never leaks a colour.
    for line in coloured.splitlines():
        assert line.count("\x1b[0m") == len(SGR.findall(line)) / 2, repr(line)


def test_the_tones_have_their_colours():
    text = rendered("table", schema.load(MIX), width=80, colour=True)
    assert "\x1b[32muses SHA extensions\x1b[0m" in text  # used: green
    assert "\x1b[33minconclusive\x1b[0m" in text  # withheld: yellow
    assert "\x1b[1;33mWarning:\x1b[0m" in text  # the prefix alone
    assert re.search(r"\x1b\[31mError: [^\x1b]+\x1b\[0m", text)  # problems: red
    assert re.search(r"^\x1b\[1m== hmac-sha1", text, re.M)  # headings bold
    table = rendered("table", schema.load(REPORTS[1]), width=120, colour=True)
    # A significant ratio: red slower, green faster; within noise cyan.
    assert re.search(r"\x1b\[32m0\.\d\d× (\([\d.–]+\) )?sig\x1b\[0m", table), table
    assert re.search(r"\x1b\[36m\d+\.\d\d× (\([\d.–]+\) )?noise\x1b\[0m", table), table
    assert re.search(r"\x1b\[31m\d+\.\d\d× (\([\d.–]+\) )?sig\x1b\[0m", table), table


def test_a_verdict_wrapped_over_two_lines_is_coloured_on_each():
    lines = ["  subject: does not", "    use it, 1.0×"]
    # "subject:" is 8 characters that are not spaces; the verdict the next 12.
    out = terminal.tinted(lines, 8, 8 + 12, "36", terminal.sgr)
    assert out == ["  subject: \x1b[36mdoes not\x1b[0m", "    \x1b[36muse it\x1b[0m, 1.0×"]
    assert terminal.tinted(lines, 8, 20, "36", terminal.plain) == lines


def test_a_comparison_is_coloured_only_as_a_table():
    reports = [schema.load(p) for p in (MIX, FIXTURES / "roundtrip/run-mix2.json")]
    from bridge.analysis import compare as comparison

    pairs = comparison.compare(reports, ["a", "b"])
    coloured = render_compare(pairs, "table", 80, colour=True)
    assert visible(coloured) == render_compare(pairs, "table", 80)
    for fmt in ("markdown", "text", "summary", "json"):
        assert not SGR.search(render_compare(pairs, fmt, 80, colour=True))


@pytest.mark.parametrize("fmt", ["markdown", "text", "summary", "json", "csv"])
def test_no_other_format_is_ever_coloured(fmt):
    assert not SGR.search(rendered(fmt, schema.load(MIX), colour=True))


@pytest.mark.parametrize(
    ("when", "environ", "tty", "coloured"),
    [
        (ColourWhen.AUTO, {"TERM": "xterm"}, True, True),
        (ColourWhen.AUTO, {"TERM": "xterm"}, False, False),  # a pipe, a file
        (ColourWhen.AUTO, {"TERM": "dumb"}, True, False),
        (ColourWhen.AUTO, {}, True, False),  # no TERM: nothing says it can
        (ColourWhen.AUTO, {"TERM": "xterm", "NO_COLOR": "1"}, True, False),
        (ColourWhen.AUTO, {"TERM": "xterm", "NO_COLOR": ""}, True, True),  # empty: not set
        (ColourWhen.ALWAYS, {"NO_COLOR": "1", "TERM": "dumb"}, False, True),
        (ColourWhen.NEVER, {"TERM": "xterm"}, True, False),
    ],
)
def test_when_colour_is_used(when, environ, tty, coloured):
    assert colour_decided(when, environ, tty) is coloured


def _report(*args: str, env: dict[str, str] | None = None) -> str:
    done = CliRunner().invoke(cli, ["report", str(MIX), *args], env=env)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_the_command_line_colours_the_table_on_stdout_only_as_asked(tmp_path):
    # COLUMNS=80 and --color always: no visible line over 80.
    coloured = _report("--color", "always", env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert SGR.search(coloured)
    assert max(len(line) for line in visible(coloured).splitlines()) <= 80
    # Not a terminal (CliRunner's stdout), never, or NO_COLOR: none.
    assert not SGR.search(_report(env={"COLUMNS": "80", "TERM": "xterm"}))
    assert not SGR.search(_report("--color", "never"))
    # Files and the other formats: never, whatever --color says.
    text = tmp_path / "r.txt"
    shown = _report("--format", "markdown", "--color", "always", "--export-text", str(text))
    assert not SGR.search(shown) and not SGR.search(text.read_text())
    exported = tmp_path / "r.md"
    _report("--color", "always", "--export-markdown", str(exported))
    assert not SGR.search(exported.read_text())
