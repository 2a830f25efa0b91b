"""A three-OTP, two-openssl run, as every view renders it, pinned by golden
files. The report is a fixture saved once from a real run on this project's
machine (tests/fixtures/roundtrip/versions-3otp-2openssl.json):

    bridge run sha256 hmac-sha1 --sizes 16,1k,16k --samples 20 --sample-ms 2
      --warmup-ms 20 --rounds 5 --openssl-runs 3
      --erl <bullseye>/bin/erl --erl /usr/bin/erl --erl /usr/lib/erlang/bin/erl
      --openssl <bullseye>/bin/openssl --openssl /usr/bin/openssl

OTP 23.2.6 on OpenSSL 1.1.1w (Debian bullseye, scripts/fetch-runtimes), and
OTP 25.2.3 on OpenSSL 3.0.19 reached by two paths, which bridge treats as two
installations: erlang@25.2.3 and erlang@25.2.3#2 (only OTP 23 and 25 exist
here). BRIDGE_UPDATE_GOLDEN=1 rewrites the golden files; read the diff."""

from __future__ import annotations

import html
import os
import re

import pytest

from bridge.analysis import compare, versus
from bridge.cli.common import rendered
from bridge.render import plot, terminal
from bridge.report import schema
from bridge.view import Detail, build, comparison
from tests.conftest import FIXTURES

REPORT = FIXTURES / "roundtrip" / "versions-3otp-2openssl.json"
GOLDEN = FIXTURES / "golden"
VIEWS = [("table", "table.txt"), ("markdown", "md"), ("text", "txt")]


@pytest.fixture(scope="module")
def report() -> schema.Report:
    return schema.load(REPORT)


@pytest.mark.parametrize("fmt, suffix", VIEWS)
def test_golden(report, fmt, suffix):
    out = rendered(fmt, report)
    golden = GOLDEN / f"versions-3otp-2openssl.{suffix}"
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert out == golden.read_text()


def masked(report: schema.Report, text: str) -> list[str]:
    """Each line with its runtime ids and sizes made tokens and its other
    numbers made '#': two lines that still read alike say the same thing of
    the same runtime and size, or fail to say which runtime they are about."""
    ids = sorted({rt.id for rt in report.runtimes}, key=len, reverse=True)
    sizes: dict[str, str] = {}

    def size(m: re.Match) -> str:
        return sizes.setdefault(m[0], f"<size {chr(ord('a') + len(sizes))}>")

    out = []
    for line in text.splitlines():
        for n, rid in enumerate(ids):
            line = line.replace(rid, f"<runtime {chr(ord('a') + n)}>")
        line = re.sub(r"\b\d+ (?:bytes|B|KiB)\b", size, line)
        out.append(re.sub(r"\d[\d,.]*", "#", line))
    return out


def test_no_two_lines_differ_only_in_their_numbers(report):
    # The answer, one line per scenario, call and runtime.
    said = "\n".join(
        f"{s.key}: {terminal.said(line)}"
        for s in build(report).sections
        for a in s.answers
        for line in a.lines
    )
    lines = masked(report, said)
    assert len(lines) > 15
    repeated = {x for x in lines if lines.count(x) > 1}
    assert not repeated, repeated


def test_every_erlang_and_openssl_line_names_its_runtime(report):
    table = rendered("table", report, Detail.VERBOSE, width=200)
    # The default view's answer, one line per call and runtime, names them.
    lines = rendered("table", report, width=200).splitlines()
    answer = [x for x in lines if x.startswith(("  Erlang", "  openssl"))]
    # sha256: 3 OTPs, 2 openssl x 2 calls; hmac-sha1: 3 OTPs, openssl 3.0.19
    assert len(answer) >= 7 + 4
    assert all(re.search(r"(erlang|openssl)@", x) for x in answer)
    fits = [
        x
        for x in table.splitlines()
        if re.match(r"(erlang|openssl|python)@\S+ +(crypto|openssl|hashlib|hmac)", x)
    ]
    assert len(fits) > 30  # table rows and cost-model rows alike start with the runtime
    md = rendered("markdown", report)
    sentences = [x for x in md.splitlines() if x.startswith(("- Erlang", "- openssl"))]
    assert sentences and all(re.search(r"(erlang|openssl)@", x) for x in sentences)


def test_differences_carry_cis_and_verdicts(report):
    diffs = versus.of(report)
    assert report.differences is not None and diffs == report.differences
    first = [d for d in diffs if d.against == versus.FIRST]
    # Two OTPs against OTP 23 and openssl 3 against 1.1.1w: every call, size and hw.
    assert {d.runtime for d in first} == {"erlang@25.2.3", "erlang@25.2.3#2", "openssl@3.0.19"}
    assert {d.baseline_runtime for d in first} == {"erlang@23.2.6", "openssl@1.1.1w"}
    assert all(d.ci95 and d.ci95[0] <= d.ratio <= d.ci95[1] for d in first)
    verdicts = {d.verdict for d in diffs}
    assert {"within noise", "slower"} <= verdicts and versus.UNRESOLVED not in verdicts
    assert "× first named" in rendered("markdown", report)
    assert "× first named" in rendered("table", report, Detail.VERBOSE, width=200)
    text = " ".join(rendered("text", report).split())
    # At 72 columns the versions are in the answer, the table keeps the times.
    assert "against erlang@23.2.6" in text and "within noise" in text and "x slower" in text


def test_the_plot_names_and_colours_each_runtime(report, tmp_path):
    drawn = plot.series([("versions", report)])
    runtimes = {rt.id for rt in report.runtimes}
    assert {s.runtime for s in drawn} == runtimes
    # Each runtime by its version, the two installations of one OTP told
    # apart by their ids; hw on and off of a call share a label and a row.
    version = {
        "erlang@23.2.6": "erlang 23.2.6 / OpenSSL 1.1.1w: ",
        "erlang@25.2.3": "erlang 25.2.3 / OpenSSL 3.0.19 (erlang@25.2.3): ",
        "erlang@25.2.3#2": "erlang 25.2.3 / OpenSSL 3.0.19 (erlang@25.2.3#2): ",
        "python@3.11.7": "python 3.11.7: ",
        "openssl@1.1.1w": "openssl 1.1.1w: ",
        "openssl@3.0.19": "openssl 3.0.19: ",
    }
    assert all(s.label.startswith(version[s.runtime]) for s in drawn)
    assert len({(s.scenario, s.label, s.hw) for s in drawn}) == len(drawn)
    assert len({s.colour for s in drawn}) == len(runtimes)  # one colour per runtime
    pytest.importorskip("matplotlib")
    out = tmp_path / "p.svg"
    assert plot.plot([("versions", report)], out) == len(drawn)
    svg = html.unescape(out.read_text())
    assert all(s.label in svg for s in drawn)
    assert "dashed, hollow: SHA extensions masked" in svg


def test_compare_rows_name_their_runtimes(report):
    """Two OTPs 25 in one report: each comparison row of their kind names its pair."""
    view = comparison.build(compare.compare([report, report], ["a", "b"]))
    rows = [row for s in view.sections for t in s.tables for row in t.rows]
    assert len(rows) == len(compare.pair(report, report))
    for s in view.sections:
        for t in s.tables:
            i = t.column("runtime")
            assert i is not None
            assert all(row[i].text for row in t.rows if "@" in row[i].text or row[i].text)
