"""What `bridge import-speed` writes, `bridge report` reads: every document
below is either refused with one line naming its line, or imported into a
report that the report's own check (the published JSON Schema included)
accepts and that loads back. And the import stays linear in a row's width
and in the number of records (checked by counting work, not by timing)."""

from __future__ import annotations

import json
import random
import re

import pytest

from bridge.errors import UsageError
from bridge.report import check, schema
from bridge.speed import importer, parse
from tests.conftest import FIXTURES

HUGE = "x" * 70_000

HOSTILE = {
    "size 1e20": "+H:100000000000000000000\n+F:6:sha256:1e20\n",
    "size past 16 GiB": "+H:17179869185\n+F:6:sha256:1000.0\n",
    "a rate of 1e-300": "+H:16\n+F:6:sha256:1e-300\n",
    "a rate of 1e308": "+H:16:64\n+F:6:sha256:1e308:1e308\n",
    "sign rate 1e-300": "+F4:0:256:1e-300:1e-300\n",
    "a 5,000-character name": f"+H:16\n+F:6:{'a' * 5000}:1000.0\n",
    "a 5,000-character table row": f"type 16 bytes\n{'a' * 5000} 1000.00k\n",
    "-multi 5000": (
        "Forked child 4999\nGot: +H:16 from 4999\nGot: +F:6:sha256:1000.00 from 4999\n"
        "+F:6:sha256:1000.00\n"
    ),
    "a 70,000-character version": f"version: 3.0.{HUGE}\n+H:16\n+F:6:sha256:1000.0\n",
    "a 70,000-character heading": f"1) {HUGE}\n+H:16\n+F:6:sha256:1000.0\n",
    "a 70,000-character build line": f"built on: {HUGE}\n+H:16\n+F:6:sha256:1000.0\n",
    "a 70,000-character command": (
        f"openssl speed -evp sha256{' -x' * 8}{HUGE}\n+H:16\n+F:6:sha256:1000.0\n"
    ),
    "a malformed 70,000-character record": f"+H:16\n+F:6:sha256:{HUGE}\n+F:6:sha1:1.0\n",
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_an_import_is_refused_or_reads_back(tmp_path, case):
    try:
        report, warnings = importer.to_report(HOSTILE[case], "doc.txt", ["bridge"])
    except UsageError as exc:
        line = exc.one_line()
        assert "\n" not in line and line.startswith("doc.txt: line "), line
        assert len(line) < 400, line
        return
    data = report.to_json()
    check.check(data, "doc.txt")  # the JSON Schema too, as bridge report runs it
    path = tmp_path / "r.json"
    path.write_text(schema.dumps(report))
    assert schema.dumps(schema.load(path)) == path.read_text()
    assert all(len(w) < 400 for w in warnings)


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("size 1e20", "a size of 100000000000000000000 bytes, larger than a report holds"),
        ("a rate of 1e-300", "a rate that a report cannot hold"),
        ("-multi 5000", "more processes than a report holds (at most 4096)"),
        ("a 5,000-character name", "an algorithm name of 5000 characters"),
    ],
)
def test_what_a_report_cannot_hold_is_named(case, words):
    with pytest.raises(UsageError, match=re.escape(words)):
        importer.to_report(HOSTILE[case], "doc.txt", ["bridge"])


def test_the_seed_documents_still_read_back(tmp_path):
    for doc in sorted((FIXTURES / "seeds").glob("*.txt")):
        report, _ = importer.to_report(doc.read_text(), doc.name, ["bridge"])
        check.check(report.to_json(), doc.name)


def test_the_bounds_are_the_published_schemas():
    published = check.schema()
    assert published["$defs"]["size"]["maximum"] == check.MAX_SIZE
    levels = published["properties"]["concurrency"]["oneOf"][1]["properties"]["levels"]
    assert levels["items"]["maximum"] == check.MAX_LEVEL


def _wide_row(n: int) -> str:
    sizes = ":".join(str(16 * (i + 1)) for i in range(n))
    return f"+H:{sizes}\n+F:6:sha256:" + ":".join(f"{1000.0 * (i + 1):.2f}" for i in range(n))


def test_a_wide_row_reads_each_records_path_once(monkeypatch):
    """Each number's call asks which code path the run took; that is read
    once per run, not once per number (47 s for a 240 KB row)."""
    calls = []
    real = parse.path_of
    monkeypatch.setattr(parse, "path_of", lambda e: calls.append(e) or real(e))
    report, _ = importer.to_report(_wide_row(2000), "doc.txt", ["bridge"])
    assert len(report.results) == 2000
    assert len(calls) <= 2000


def test_spans_answer_as_a_scan_would():
    rng = random.Random(7)
    spans, starts = parse._Spans(), sorted(rng.randrange(1000) for _ in range(200))
    pairs = [(s, s + rng.randrange(0, 40)) for s in starts]
    for s, e in pairs:
        spans.add(s, e)
    for offset in range(1100):
        assert spans.covers(offset) == any(s <= offset < e for s, e in pairs), offset
    with pytest.raises(ValueError):
        spans.add(0, 1)


def test_many_records_read_as_before():
    """Thousands of -mr records (each an event), read with every number."""
    doc = "".join(f"+DT:sha256:1:{16 + i}\n+R:{1000 + i}:sha256:1.0\n" for i in range(3000))
    parsed = parse.parse(doc)
    assert sum(len(r.entries) for r in parsed.runs) == 3000
    assert json.dumps(parsed.warnings) == "[]"
