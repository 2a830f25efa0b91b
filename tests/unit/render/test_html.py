"""The HTML page (bridge.render.html) on fixture reports: one document that
fetches nothing (a Content-Security-Policy allowing only its own style, by
hash; no script, no URL anywhere), laid out in the view's order (the answer,
the tables, the pictures, then where it ran, the caveats folded, the command
to measure again), and pictures whose error bars span each point's CI. The
page in a real Chromium: tests/integration/test_html_page.py; hostile text:
tests/fuzz/test_fuzz_writers.py."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest

from bridge.analysis import compare, findings
from bridge.cli.common import rendered
from bridge.render import html
from bridge.render.compare import render as render_compare
from bridge.report import schema
from bridge.view import Detail, build, units, words
from bridge.view.model import Point, Series
from tests.conftest import FIXTURES

VERSIONS = FIXTURES / "roundtrip" / "versions-3otp-2openssl.json"
HMAC = FIXTURES / "terminal" / "hmac-sha1-quick.json"
VOID = {"meta", "br", "hr", "img", "input", "link"}
# SVG elements written self-closed (<line/>): not left open.
SELF_CLOSED = {"line", "path", "polyline"}


class Page(HTMLParser):
    """The elements in order, each with its attributes, checking that every
    element opened is closed in order; the text of each."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[tuple[str, str]] = []  # (innermost element, text)
        self.style = ""
        self.cells: list[str] = []  # each td's and th's text, empty ones too

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.open.append(tag)
        if tag in ("td", "th"):
            self.cells.append("")

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (self.open[-3:], tag)
        self.open.pop()

    def handle_data(self, data):
        where = self.open[-1] if self.open else ""
        if where == "style":
            self.style += data
        elif where in ("td", "th"):
            self.cells[-1] += data
        elif data.strip():
            self.text.append((where, data))


def parse(page: str) -> Page:
    p = Page()
    p.feed(page)
    p.close()
    assert p.open == [], p.open
    return p


def _hmac_page(detail: Detail = Detail.NORMAL) -> str:
    return rendered("html", schema.load(HMAC), detail)


def test_the_page_fetches_nothing_and_runs_nothing():
    page = _hmac_page()
    p = parse(page)
    assert page.startswith("<!DOCTYPE html>")
    names = [t for t, _ in p.tags]
    assert "script" not in names and "iframe" not in names and "img" not in names
    # The policy comes before the style it allows, and allows it by its hash alone.
    first_meta = [a for t, a in p.tags if t == "meta" and a.get("http-equiv")]
    assert first_meta[0]["http-equiv"] == "Content-Security-Policy"
    assert names.index("meta") < names.index("style")
    policy = first_meta[0]["content"]
    digest = base64.b64encode(hashlib.sha256(p.style.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in policy
    assert policy.startswith("default-src 'none';")
    assert "unsafe" not in policy
    # No URL of any kind: no href, src or xlink:href, nothing the style loads.
    for _, attrs in p.tags:
        assert not {"href", "src", "srcset", "xlink:href", "action"} & attrs.keys(), attrs
        assert not any(k.startswith("on") for k in attrs), attrs
    assert "url(" not in p.style and "@import" not in p.style
    # The only namespace URI (an identifier, never fetched) is SVG's.
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}


def test_the_answer_comes_first_then_tables_pictures_and_the_rest():
    page = _hmac_page()
    view = build(schema.load(HMAC))
    answer = view.sections[0].answers[0]
    marks = [
        f"<h3>{answer.heading}",
        '<ul class="answer">',
        "<table>",
        "<figure>",
        f"<h2>{words.PAGE_WHERE}</h2>",
        f"<summary>{words.PAGE_CAVEATS} ({len(view.caveats)})</summary>",
        f"<h2>{words.PAGE_REPRODUCE}</h2>",
    ]
    at = [page.index(m) for m in marks]
    assert at == sorted(at)
    # The caveats are folded (closed), the command is the view's, quoted.
    assert re.search(r"<details>\s*<summary>" + words.PAGE_CAVEATS, page)
    command = " ".join(view.reproduce)
    assert f'<code class="reproduce">{command}</code>' in page
    assert "crypto-bridge run --replay FILE" in page
    # Every verdict word of the answer, in its tone.
    for line in answer.lines:
        assert f">{line.verdict.text}</span>" in page


def test_every_table_cell_of_the_view_is_on_the_page():
    view = build(schema.load(VERSIONS), Detail.VERBOSE)
    p = parse(rendered("html", schema.load(VERSIONS), Detail.VERBOSE))
    cells = p.cells
    for section in view.sections:
        for table in section.tables:
            assert [c.header for c in table.columns] == cells[: len(table.columns)]
            cells = cells[len(table.columns) :]
            for row in table.rows:
                texts = [c.text + c.mark for c in row]
                assert texts == cells[: len(row)]
                cells = cells[len(row) :]
    assert cells == []


def test_one_picture_per_metric_with_an_error_bar_per_point_with_a_ci():
    view = build(schema.load(VERSIONS))
    page = rendered("html", schema.load(VERSIONS))
    p = parse(page)
    metrics = [m for s in view.sections for m in dict.fromkeys(x.metric for x in s.series)]
    captions = [t for where, t in p.text if where == "figcaption"]
    assert captions == metrics
    assert metrics.count(words.CHART_TIME) == 2 and words.CHART_OFF_ON in metrics
    with_ci = sum(p.hi > p.lo for s in view.sections for x in s.series for p in x.points)
    bars = [a for t, a in p.tags if t == "path" and "err" in (a.get("class") or "")]
    assert len(bars) == with_ci > 0
    circles = [a for t, a in p.tags if t == "circle" and "cx" in a and a.get("r") == "4"]
    assert len(circles) == sum(len(x.points) for s in view.sections for x in s.series)
    # Several sizes: a line per series; each ratio picture has its line at 1.
    assert any(t == "polyline" for t, _ in p.tags)
    ones = [a for t, a in p.tags if t == "line" and a.get("class") == "one"]
    assert len(ones) == sum(1 for m in metrics if m != words.CHART_TIME)


def _bar_and_point(page: str) -> list[tuple[list[float], float]]:
    """Each vertical error bar's first segment (y at lo, y at hi) and its point's cy."""
    out = []
    for d, cy in re.findall(r'd="M[\d.]+,([\d.]+V[\d.]+)[^"]*"/><circle[^>]* cy="([\d.]+)"', page):
        lo, hi = map(float, d.split("V"))
        out.append(([lo, hi], float(cy)))
    return out


def test_an_error_bar_spans_its_point():
    page = rendered("html", schema.load(VERSIONS))
    pairs = _bar_and_point(page)
    assert len(pairs) > 20
    for (lo, hi), cy in pairs:
        assert hi - 0.05 <= cy <= lo + 0.05  # SVG's y grows downwards


@pytest.mark.parametrize(
    "values, ratio, log",
    [([0.8, 1.3], True, False), ([0.5, 20.0], True, True), ([400.0, 90_000.0], False, True)],
)
def test_scales_put_each_value_in_its_place(values, ratio, log):
    scale = html._scale(values, 200.0, 10.0, ratio)
    assert scale.log is log
    ys = [scale(v) for v in sorted(values)]
    assert all(10.0 <= y <= 200.0 for y in ys) and ys == sorted(ys, reverse=True)
    if ratio:
        assert 10.0 < scale(1.0) < 200.0  # the line at 1 is drawn inside
    ticks = scale.ticks()
    assert len(ticks) >= 2 and all(scale.lo <= t <= scale.hi for t in ticks)


def test_one_size_draws_a_row_per_series():
    one = Series(
        "s",
        "erlang@27 crypto:hash",
        "erlang@27",
        "crypto:hash",
        "on",
        "m",
        (Point(16, 5.0, 4.0, 7.0, "16 B"),),
    )
    other = Series(
        "s",
        "python@3.11 hashlib",
        "python@3.11",
        "hashlib",
        "on",
        "m",
        (Point(16, 9.0, 9.0, 9.0, "16 B"),),
    )
    p = parse(html._charts((one, other))[0])
    labels = [t for where, t in p.text if where == "text" and "@" in t]
    assert labels == ["erlang@27 crypto:hash", "python@3.11 hashlib"]
    # The one with a CI has a bar; the one run without has none.
    assert sum(1 for t, a in p.tags if t == "path" and "err" in a["class"]) == 1


def test_points_that_are_not_numbers_are_left_out():
    bad = Series(
        "s",
        "x",
        "x",
        "c",
        "on",
        "m",
        (Point(16, float("nan"), 1, 2, "16 B"), Point(32, 2, 1, 3, "32 B")),
    )
    page = html._charts((bad,))[0]
    assert not re.search(r"\bnan\b", page, re.I) and page.count("<circle") == 1


def test_compare_draws_b_over_a_around_1():
    a, b = schema.load(VERSIONS), schema.load(VERSIONS)
    page = render_compare(compare.compare([a, b], ["a.json", "b.json"]), "html")
    p = parse(page)
    captions = [t for where, t in p.text if where == "figcaption"]
    assert captions == [words.CHART_COMPARED.format("b.json", "a.json")]
    assert any(t == "line" and a.get("class") == "one" for t, a in p.tags)


def test_quiet_and_verbose_pages_are_pages():
    for detail in Detail:
        parse(_hmac_page(detail))


def test_the_views_series_are_the_reports_figures():
    """The time per call is each cell's median and CI; hw off/on is each
    verdict's figure and CI (bridge.view.chart), the sizes worded."""
    report = findings.complete(schema.load(VERSIONS))
    series = [x for s in build(report).sections for x in s.series]
    cells: dict[tuple, list[tuple]] = {}
    for r in report.results:
        if r.ok:
            s = r.summary()
            cells.setdefault((r.scenario, r.runtime, str(r.hw), r.size), []).append(
                (s.median, *s.ci95)
            )
    times = [x for x in series if x.metric == words.CHART_TIME]
    assert sum(len(x.points) for x in times) == sum(map(len, cells.values()))
    for x in times:
        for p in x.points:
            assert (p.y, p.lo, p.hi) in cells[(x.scenario, x.runtime, x.hw, p.x)]
            assert p.text == units.short(int(p.x))
    speedups: dict[tuple, list[tuple]] = {}
    for v in report.verdicts:
        speedups.setdefault((v.scenario, v.runtime, v.size), []).append(
            (v.speedup, *v.speedup_ci95)
        )
    off_on = [x for x in series if x.metric == words.CHART_OFF_ON]
    assert off_on and all(x.ratio for x in off_on)
    for x in off_on:
        for p in x.points:
            assert (p.y, p.lo, p.hi) in speedups[(x.scenario, x.runtime, p.x)]
