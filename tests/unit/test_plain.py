"""Text from outside bridge, made safe: control and bidi characters escaped in
every view of a report, and numbers read from ASCII digits only."""

from __future__ import annotations

import json
import re

import pytest

from bridge import plain
from bridge.analysis import compare
from bridge.cli.common import FORMATS, rendered
from bridge.errors import BridgeError, UsageError
from bridge.render.compare import render as render_compare
from bridge.report import schema
from tests.conftest import FIXTURES

# A terminal escape (clear the screen, set the title), BEL, a C1 CSI, a
# right-to-left override, an isolate, a line separator and a NUL.
EVIL = "\x1b[2J\x1b]0;pwned\x07\x9b31m\u202eevil\u2066\u2028\x00"
# Anything a renderer must never emit raw: every control but the newline.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def test_printable_escapes_controls_and_bidi():
    assert plain.printable("a\x1b[31mb") == "a\\x1b[31mb"
    assert plain.printable("\u202e\u2066\x9b\x00\x7f") == "\\u202e\\u2066\\x9b\\x00\\x7f"
    assert plain.printable("one\ntwo\tthree") == "one\\x0atwo\\x09three"
    assert plain.printable("one\ntwo", keep_newlines=True) == "one\ntwo"
    assert plain.printable("× ±2% µs é 日本") == "× ±2% µs é 日本"  # printable text stays


def test_error_lines_are_escaped():
    """An error is one line; bridge.cli escapes it where it prints it (the
    CLI tests check the printed line)."""
    exc = UsageError(f"r.json: runtime {EVIL!s}", hint="see\nthis")
    line = plain.printable(exc.one_line())
    assert "\n" not in exc.one_line()
    assert not RAW.search(line)
    assert "\\x1b[2J" in line and "\\u202e" in line
    assert BridgeError("plain words").one_line() == "plain words"


@pytest.mark.parametrize(
    "text, expected",
    [("0", 0), ("16", 16), ("007", 7), ("²", None), ("١٦", None), ("１６", None), ("1_0", None)]
    + [("", None), (" 1", None), ("1\n", None), ("-1", None), ("+1", None)],
)
def test_whole_numbers_are_ascii_digits(text, expected):
    assert plain.whole_number(text) == expected


def hostile_report(tmp_path) -> schema.Report:
    """A real report (tests/fixtures/roundtrip/run-mix1.json) with EVIL in a
    runtime id, its version, every call, the scenario descriptions, the
    command, the errors and the skip reasons."""
    text = (FIXTURES / "roundtrip" / "run-mix1.json").read_text()
    evil_id = json.dumps("erlang@25.2.3" + EVIL)[1:-1]
    data = json.loads(text.replace("erlang@25.2.3", evil_id))
    for rt in data["runtimes"]:
        rt["version"] += EVIL
    for r in data["results"]:
        r["call"] += EVIL
    for sc in data["scenarios"]:
        sc["description"] += EVIL
    for e in data["errors"]:
        e["message"] += EVIL
    for s in data["skipped"]:
        s["reason"] += EVIL
    data["command"].append(EVIL)
    data["reproduce"] += EVIL
    assert data["errors"] and data["skipped"]  # the fixture has both, so both are shown
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    return schema.load(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_view_of_a_report_emits_a_control_character(fmt, tmp_path):
    out = rendered(fmt, hostile_report(tmp_path))
    assert not RAW.search(out), RAW.findall(out)
    if fmt == "markdown":
        # Shown, escaped; Markdown escapes the backslash and the bracket too,
        # so that it reads as the same text.
        assert "erlang@25.2.3\\\\x1b\\[2J" in out
    elif fmt not in ("json", "summary"):  # JSON escapes it as \u001b
        assert "erlang@25.2.3\\x1b[2J" in out  # shown, escaped


@pytest.mark.parametrize("fmt", ["table", "markdown", "text", "json"])
def test_compare_emits_no_control_character(fmt, tmp_path):
    hostile = hostile_report(tmp_path)
    plain_one = schema.load(FIXTURES / "roundtrip" / "run-mix1.json")
    out = render_compare(compare.compare([plain_one, hostile], ["a\x1b[1m", "b\u202e"]), fmt)
    assert not RAW.search(out), RAW.findall(out)


def test_run_errors_make_one_error_line():
    from bridge.cli import run as commands

    def err(message: str) -> schema.RunError:
        return schema.RunError("erlang@25.2.3", "worker", message)

    one = err("erlang@25.2.3 died during hmac-sha1 (killed by signal 9)")
    assert commands._failures((one, one)) == one.message  # the same failure once
    three = (one, err("python@3.11 broke the protocol"), err(f"openssl@3.0 said {EVIL}"))
    line = commands._failures(three)
    assert line.startswith("3 failures: erlang@25.2.3 died during hmac-sha1")
    assert line.endswith("(and 1 more in the report)")
    assert not RAW.search(plain.printable(BridgeError(commands._failures(three[2:])).one_line()))
