"""--export-csv (bridge.view.cells, bridge.render.csv) on saved real runs:
read back as a spreadsheet or pandas would (csv.DictReader, float()), every
row is one cell of the report, and its figures are the report's own: the
median, CI and p10 in ns per call, the samples, the version, the hardware
verdict with its reasons, the ratio to the row it is compared with."""

from __future__ import annotations

import csv
import io
import re

import pytest

from bridge import stats
from bridge.analysis import findings
from bridge.cli.common import rendered
from bridge.cli.reports import csv_rows
from bridge.render import csv as csv_writer
from bridge.render.escape import csv_text
from bridge.report import schema
from bridge.view import cells
from tests.conftest import FIXTURES

REPORTS = [
    "roundtrip/run-mix1.json",  # hw verdicts, unsupported and imported-free, errors
    "roundtrip/ecdsa-2otp-2openssl.json",  # two OTPs: against the first named
    "roundtrip/versions-3otp-2openssl.json",
    "roundtrip/import-seed.json",  # pasted `openssl speed`: as posted, no samples
    "terminal/hmac-sha1-quick.json",
]
NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]\d+)?|inf|nan")
NUMERIC = ("size", "median", "ci_low", "ci_high", "p10", "samples", "ratio")


def _read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _num(text: str) -> float | None:
    return None if text == "" else float(text)


@pytest.mark.parametrize("name", REPORTS)
def test_each_row_is_a_cell_with_the_report_s_figures(name):
    report = findings.complete(schema.load(FIXTURES / name))
    rows = _read(rendered("csv", report))
    assert len(rows) == len(report.results) > 0
    assert list(rows[0]) == [c for c in cells.COLUMNS if c != "report"]
    by_key = {
        (r.scenario, r.runtime, r.call_id, str(r.size), r.hw.value): r for r in report.results
    }
    verdicts = {(v.scenario, v.runtime, v.call_id, v.size): v for v in report.verdicts}
    diffs = {
        (d.against, d.scenario, d.runtime, d.call_id, d.size, d.hw): d
        for d in report.differences or ()
    }
    for row in rows:
        r = by_key.pop((row["scenario"], row["runtime"], row["call_id"], row["size"], row["hw"]))
        for column in NUMERIC:  # plain numbers: no thousands separator, no unit
            assert row[column] == "" or NUMBER.fullmatch(row[column]), (column, row[column])
        assert row["unit"] == "ns" and row["status"] == r.status and row["call"] == r.call
        rt = report.runtime(r.runtime)
        assert row["version"] == (rt.version if rt else "")
        assert int(row["samples"]) == len(r.samples)
        if not r.ok:
            assert row["median"] == row["p10"] == "" and row["unsupported"] == r.reason
            continue
        s = r.summary()
        assert _num(row["median"]) == s.median  # exactly: repr reads back as the float
        if len(r.samples) > 1:
            assert (_num(row["ci_low"]), _num(row["ci_high"])) == s.ci95
            assert _num(row["p10"]) == stats.low(r.per_op_ns())
            assert _num(row["ci_low"]) <= _num(row["median"]) <= _num(row["ci_high"])
        else:
            assert row["ci_low"] == row["ci_high"] == ""
        v = verdicts.get((r.scenario, r.runtime, r.call_id, r.size))
        assert row["verdict"] == (v.verdict.value if v else "")
        if v is not None and v.reasons:
            assert row["reason"].split("+")[-1] == v.reasons[-1].why.value
        if row["against"]:
            d = diffs[(row["against"], r.scenario, r.runtime, r.call_id, r.size, r.hw)]
            assert _num(row["ratio"]) == d.ratio and row["significance"] == d.verdict.value
            assert row["baseline"] == d.baseline_runtime
    assert by_key == {}  # every cell has its row


def test_a_comparison_labels_each_report_s_rows():
    paths = [FIXTURES / "roundtrip/run-mix1.json", FIXTURES / "roundtrip/run-mix2.json"]
    reports = [schema.load(p) for p in paths]
    rows = _read(csv_rows(reports, ["old.json", "new.json"]))
    assert list(rows[0])[0] == "report"
    assert [r["report"] for r in rows] == ["old.json"] * len(reports[0].results) + [
        "new.json"
    ] * len(reports[1].results)


@pytest.mark.parametrize("text", ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx"])
def test_a_text_cell_is_never_a_formula(text):
    assert csv_text(text).startswith("'")
    row = cells.CellRow(
        **{
            **{c: "" for c in cells.COLUMNS},
            **{"size": 16, "samples": 0},
            **{c: None for c in ("median", "ci_low", "ci_high", "p10", "ratio")},
            **{"ratio_low": None, "ratio_high": None, "runtime": text, "call": text},
        }
    )
    [back] = _read(csv_writer.render([row]))
    assert back["runtime"].startswith("'") and back["call"].startswith("'")
    assert "\t" not in back["runtime"] and "\r" not in back["runtime"]
    assert back["median"] == "" and back["size"] == "16"


def test_text_that_is_no_formula_is_kept_as_it_is():
    for text in ("erlang@25.2.3", "crypto:macN(hmac, sha, Key, Data, 10)", 'a "quoted", b'):
        assert csv_text(text) == text
