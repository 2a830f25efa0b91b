"""Report views, compare, plot, replay and until-stable.

Golden files pin the markdown and text renderings of a fixed report (written
by the current schema version, kept as a fixture so old reports stay
readable). Regenerate them with BRIDGE_UPDATE_GOLDEN=1 after a deliberate
change, and read the diff."""

from __future__ import annotations

import json
import os

import pytest

from bridge.analysis import compare
from bridge.cli.common import rendered
from bridge.report import schema
from bridge.report.findings import Why, reason
from tests.conftest import FIXTURES

FIX = FIXTURES


REPORT = FIX / "report-hmac-sha1-v1.json"


GOLDEN = FIX / "golden"


@pytest.mark.parametrize("fmt, suffix", [("markdown", "md"), ("text", "txt")])
def test_golden_renderings(fmt, suffix):
    out = rendered(fmt, schema.load(REPORT))
    golden = GOLDEN / f"report-hmac-sha1.{suffix}"
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert out == golden.read_text()


def test_text_view_is_mail_safe():
    text = rendered("text", schema.load(REPORT))
    assert max(len(line) for line in text.splitlines()) <= 72
    assert text.isascii()
    # The scenario, its answer, its table, then provenance and reproduce.
    order = [
        text.index(s)
        for s in ("== hmac-sha1", "Hardware:", "runtime ", "bridge 0.1.0", "Reproduce:")
    ]
    assert order == sorted(order)


def test_markdown_opens_with_the_answer_and_ends_with_reproduce():
    md = rendered("markdown", schema.load(REPORT))
    lines = md.splitlines()
    first_items = [line for line in lines if line.startswith("- ")][:2]
    assert lines[4].startswith("**Hardware:") and lines[6] == first_items[0]  # right under it
    assert first_items[0] == (
        "- Erlang crypto:macN: uses SHA extensions, 1.20× slower without (CI 1.13–1.24)"
    )
    # The command, rebuilt from the report's settings (its quick settings of
    # the time, which --quick no longer means), and why it is not the report's own.
    tail = md.split("Reproduce:", 1)[1].splitlines()
    assert tail[2:5] == [
        "```sh",
        "crypto-bridge run hmac-sha1 --seed 1 --hw both --quick --warmup-ms 50 --rounds 4"
        " --openssl-runs 2",
        "```",
    ]
    assert "own command line differs" in tail[-1]


def test_fixture_report_reads_back_unchanged():
    data = json.loads(REPORT.read_text())
    again = schema.Report.from_json(data).to_json()
    assert again["results"] == data["results"] and again["verdicts"] == data["verdicts"]


def test_compare_a_report_with_itself_is_all_noise():
    r = schema.load(REPORT)
    rows = compare.pair(r, r)
    # A cell with fewer samples than a CI needs (an openssl cell of 2 runs)
    # says so instead of a verdict.
    few = [row for row in rows if row.verdict == compare.FEW]
    assert few and all(row.ci95 is None for row in few)
    assert {row.reasons for row in few} == {
        (reason(Why.TOO_FEW_SAMPLES, what="openssl run", have=2, need=3),)
    }
    assert rows and all(row.verdict == "within noise" for row in rows if row not in few)
    assert all(row.ratio == 1.0 for row in rows)


def test_compare_matches_runtimes_by_kind_not_id():
    data = json.loads(REPORT.read_text())
    renamed = json.loads(json.dumps(data).replace("erlang@25.2.3", "erlang@27.1"))
    for rt in renamed["runtimes"]:
        if rt["kind"] == "erlang":
            rt["version"] = "OTP 27.1"
    a, b = schema.Report.from_json(data), schema.Report.from_json(renamed)
    rows = compare.pair(a, b)
    erl = [row for row in rows if row.kind == "erlang"]
    assert erl and erl[0].runtime_a == "erlang@25.2.3" and erl[0].runtime_b == "erlang@27.1"
    diff = dict(compare.environment_diff([a, b]))
    assert diff["OTP"] == ["OTP 25.2.3", "OTP 27.1"]


def test_the_text_view_keeps_72_columns_whatever_the_figures():
    """Samples near 2**63 made the table wider than 72 columns even without
    its optional columns: `AssertionError: text view over 72 columns`. Now
    such a table is given row by row."""
    data = json.loads((FIX / "roundtrip" / "run-mix2.json").read_text())
    for r in data["results"]:
        if r.get("samples"):
            r["samples"] = [2**63 - 1 - i for i in range(len(r["samples"]))]
            r["loops"] = 1
            for key in ("sample_cpus", "sample_cpu_ns", "sample_wait_ns", "sample_user_ns"):
                r.pop(key, None)
    text = rendered("text", schema.Report.from_json(data))
    assert max(map(len, text.splitlines())) <= 72 and text.isascii()
    assert "9,223,372,037 (1 sample)" in text
