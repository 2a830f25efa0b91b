"""The HTML page (--export-html) as a reader opens it: from file://, in a
real headless Chromium (Debian's `chromium`, as tests/docs_site drives it).
A real quick run of hmac-sha1 (the real erl, Python workers and openssl)
writes the page beside its JSON report; Chromium loads it with nothing
logged on its console (a script, a request or a style the page's
Content-Security-Policy refused would each log one), and the DOM it built
holds the view's answer and a picture with error bars. A page of `compare`
is opened the same way. Without Chromium the tests are skipped, saying so."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bridge.analysis import compare, findings
from bridge.cli.common import rendered
from bridge.render.compare import render as render_compare
from bridge.report import schema
from bridge.view import build, words
from tests.conftest import FIXTURES, bridge_cmd, needs_erl, needs_openssl
from tests.docs_site.test_site import CHROMIUM_FLAGS

VERSIONS = FIXTURES / "roundtrip" / "versions-3otp-2openssl.json"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: chromium is expected (scripts/ensure-chromium installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def open_page(chromium: str, page: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM Chromium built of `page` (file://) and what it logged on the
    page's console (errors, CSP refusals), one line each."""
    done = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def _has_a_chart(dom: str) -> None:
    """An inline <svg> picture with at least one error bar and one point."""
    svg = re.search(r'<svg class="chart".*?</svg>', dom, re.S)
    assert svg is not None
    assert re.search(r'<path class="err c\d"', dom)
    assert "<circle" in svg.group(0)


def test_the_console_check_sees_what_the_policy_refuses(chromium, tmp_path):
    """The check below can fail: the page with a script and an image from the
    network added logs one refusal each."""
    page = rendered("html", schema.load(VERSIONS))
    added = '<main><script>console.log(1)</script><img src="https://example.invalid/x.png">'
    bad = tmp_path / "bad.html"
    bad.write_text(page.replace("<main>", added, 1), encoding="utf-8")
    _, console = open_page(chromium, bad, tmp_path / "profile")
    assert len(console) == 2, console
    assert all("Content Security Policy" in line for line in console)


@needs_erl
@needs_openssl
def test_a_real_runs_page_loads_from_disk_with_its_answer_and_a_chart(chromium, tmp_path):
    page, report = tmp_path / "r.html", tmp_path / "r.json"
    done = bridge_cmd("run", "hmac-sha1", "--quick", "--export-html", str(page), "-o", str(report))
    assert done.returncode == 0, done.stderr
    assert f"html written to {page}" in done.stderr
    dom, console = open_page(chromium, page, tmp_path / "profile")
    assert console == []
    # The answer the view gives the saved report, each line's verdict word.
    view = build(findings.complete(schema.load(report)))
    answer = view.sections[0].answers[0]
    assert html.escape(answer.heading, quote=False) in dom
    for line in answer.lines:
        assert f">{html.escape(line.verdict.text, quote=False)}</span>" in dom
    assert words.CHART_TIME in dom and words.CHART_OFF_ON in dom
    _has_a_chart(dom)
    # The same page as `report` writes it from the saved report.
    again = tmp_path / "again.html"
    assert bridge_cmd("report", str(report), "--export-html", str(again)).returncode == 0
    assert again.read_text(encoding="utf-8") == page.read_text(encoding="utf-8")


def test_a_comparisons_page_loads_with_its_b_over_a_chart(chromium, tmp_path):
    base = schema.load(VERSIONS)
    page = tmp_path / "cmp.html"
    page.write_text(
        render_compare(compare.compare([base, base], ["a.json", "b.json"]), "html"),
        encoding="utf-8",
    )
    dom, console = open_page(chromium, page, tmp_path / "profile")
    assert console == []
    assert html.escape(words.CHART_COMPARED.format("b.json", "a.json"), quote=False) in dom
    _has_a_chart(dom)


def test_compare_writes_the_page_it_prints(tmp_path):
    """--export-html is --format html's page, written atomically beside the table."""
    page = tmp_path / "cmp.html"
    shown = bridge_cmd("compare", str(VERSIONS), str(VERSIONS), "--format", "html")
    written = bridge_cmd("compare", str(VERSIONS), str(VERSIONS), "--export-html", str(page))
    assert shown.returncode == written.returncode == 0, written.stderr
    assert f"html written to {page}" in written.stderr
    assert page.read_text(encoding="utf-8") == shown.stdout
    assert shown.stdout.startswith("<!DOCTYPE html>") and "against" in written.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["cmp.html"]  # no temporary left
