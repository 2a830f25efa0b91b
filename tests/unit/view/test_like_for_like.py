"""The "Not like for like" warning of a MAC table names the calls the table
holds (bridge.view.tables.semantics_warning, worded in bridge.view.words):
all four of a full hmac-sha1 run, the two of a run with only openssl speed
-hmac and crypto:macN, none where every call sets the key up alike."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bridge.analysis import findings
from bridge.render import terminal
from bridge.report import schema
from bridge.view.build import build
from bridge.view.model import NoteKind

HMAC = Path(__file__).resolve().parents[3] / "docs" / "findings" / "reports" / "hmac-sha1.json"


def _only(report: schema.Report, *call_ids: str) -> schema.Report:
    kept = [r for r in report.results if r.call_id in call_ids]
    verdicts = tuple(v for v in report.verdicts if v.call_id in call_ids)
    cut = dataclasses.replace(report, results=kept, verdicts=verdicts, differences=None)
    return findings.complete(cut)


def _warnings(report: schema.Report) -> list[str]:
    view = build(report)
    return [n.text for s in view.sections for n in s.notes if n.kind is NoteKind.WARNING]


def test_all_four_calls_named():
    report = findings.complete(schema.load(HMAC))
    (said,) = [w for w in _warnings(report) if w.startswith("Not like for like")]
    # In the table's order of rows: erlang, python, openssl.
    assert said == (
        "Not like for like: hmac.new(key).copy() and openssl speed -hmac set the key up once,"
        " crypto:macN and hmac.digest on every call."
    )


def test_only_the_calls_present_are_named():
    report = _only(schema.load(HMAC), "speed", "macN")
    (said,) = [w for w in _warnings(report) if w.startswith("Not like for like")]
    assert (
        said
        == "Not like for like: openssl speed -hmac sets the key up once, crypto:macN on every call."
    )
    # The terminal says it as the view does, within 80 columns.
    shown = terminal.render(build(report), 80)
    assert "openssl speed -hmac sets the key up once" in " ".join(shown.split())
    assert "hmac.new(key).copy() and" not in " ".join(shown.split())
    assert max(len(line) for line in shown.splitlines()) <= 80


def test_no_warning_where_every_call_sets_the_key_up_alike():
    report = _only(schema.load(HMAC), "macN", "hmac.digest")
    assert not [w for w in _warnings(report) if w.startswith("Not like for like")]
