"""Over generated reports, every writer says what the view says: the same
verdicts, ratios, significance and reasons, for every answer and every cell.

Reports are drawn from real ones (tests/fixtures: runs, an import, a version
matrix, a --concurrency run, TLS, bridge time) with their results thinned,
their hardware verdicts and their differences' verdicts, ratios and CIs
redrawn. Each is built into a view at a drawn detail level and written by
the terminal (at a drawn width), Markdown, text and summary writers; each
answer line (subject, verdict, figure, reason, rerun) and each cell of the
ratio columns must appear in each, as that writer escapes it."""

from __future__ import annotations

import dataclasses
import json
import re
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.analysis.findings import complete
from bridge.render import layout, markdown, summary, terminal, text
from bridge.render.escape import md_cell, md_text, term_text
from bridge.report import schema
from bridge.view import Detail, build
from tests.conftest import FIXTURES

BASES = (
    "roundtrip/run-mix1.json",
    "roundtrip/run-mix2.json",
    "roundtrip/versions-3otp-2openssl.json",
    "roundtrip/import-seed.json",
    "view/hmac.json",
    "view/conc.json",
    "view/tls.json",
    "view/time-labels.json",
)
VERDICTS = ("used", "not-used", "inconclusive", "cpu-lacks")
SIGNIFICANCE = ("faster", "slower", "within noise", "unresolved")


@cache
def base(name: str) -> schema.Report:
    return complete(schema.load(FIXTURES / name))


@st.composite
def reports(draw) -> schema.Report:
    report = base(draw(st.sampled_from(BASES)))
    keep = draw(st.lists(st.booleans(), min_size=len(report.results), max_size=len(report.results)))
    results = tuple(r for r, k in zip(report.results, keep, strict=True) if k) or report.results[:1]
    verdicts = tuple(
        dataclasses.replace(v, verdict=draw(st.sampled_from(VERDICTS))) for v in report.verdicts
    )
    diffs = []
    for d in report.differences or ():
        ratio = draw(st.floats(0.2, 5.0))
        lo = ratio * draw(st.floats(0.5, 1.0))
        hi = ratio * draw(st.floats(1.0, 2.0))
        diffs.append(
            dataclasses.replace(
                d, verdict=draw(st.sampled_from(SIGNIFICANCE)), ratio=ratio, ci95=(lo, hi)
            )
        )
    return dataclasses.replace(report, results=results, verdicts=verdicts, differences=tuple(diffs))


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(reports(), st.sampled_from(list(Detail)), st.integers(60, 200))
def test_every_writer_says_what_the_view_says(report, detail, width):
    view = build(report, detail)
    term = flat(terminal.render(view, width))
    wide = flat(terminal.render(view, 10_000))
    md = markdown.render(view)
    mail = flat(text.render(view))
    data = json.loads(summary.render(view))
    lines = [line for a in view.answers() for line in a.lines]
    said = [terminal.said(line) for line in lines]
    for s in said:
        assert flat(term_text(s)) in term
        assert flat(text.ascii_text(s)) in mail
        assert md_text(s) in md
    shown = [line for sec in data["sections"] for a in sec["answers"] for line in a["lines"]]
    assert [
        (x["subject"], x["verdict"]["text"], x["figure"], x["reason"], x["rerun"]) for x in shown
    ] == [(x.subject, x.verdict.text, x.figure, x.reason, x.rerun) for x in lines]
    for sec in view.sections:
        for t in sec.tables:
            fitted = layout.fit(t, max(width, layout.MIN_WIDTH), term_text)
            for key in ("fastest", "first"):
                i = t.column(key)
                if i is None:
                    continue
                for row in t.rows:
                    cell = row[i]
                    if not cell.text:
                        continue
                    assert flat(cell.text) in wide
                    assert md_cell(cell.text) in md
                    if i in fitted.shown():
                        short = cell.short if fitted.short and cell.short else cell.text
                        assert flat(short) in term
