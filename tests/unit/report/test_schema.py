"""The report schema: every record reads back what it wrote, reports made by
earlier versions re-serialise to the same text, and the renderings of varied
reports (an A/B sweep with --method tc and --until-stable, signatures,
ciphers, file digests, an imported paste) are pinned by golden files.
BRIDGE_UPDATE_GOLDEN=1 rewrites them; read the diff."""

from __future__ import annotations

import json
import os

import pytest

from bridge.cli.common import rendered
from bridge.report import schema
from tests.conftest import FIXTURES

ROUNDTRIP = FIXTURES / "roundtrip"
# Reports as earlier versions wrote them: each must come back byte for byte.
SAVED = sorted(p for p in ROUNDTRIP.glob("*.json") if not p.name.endswith(".expected.json"))


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.stem)
def test_saved_reports_re_serialise_identically(path):
    assert schema.dumps(schema.load(path)) == path.read_text()


def test_the_first_schema_1_report_re_serialises_as_before():
    """The oldest fixture lacks fields added later (fits, tc); writing it
    again adds them empty, exactly as the version before the records did."""
    again = schema.dumps(schema.load(FIXTURES / "report-hmac-sha1-v1.json"))
    assert again == (ROUNDTRIP / "report-hmac-sha1-v1.expected.json").read_text()


def test_records_are_typed_not_dicts():
    report = schema.load(ROUNDTRIP / "run-mix1.json")
    assert all(isinstance(v, schema.HwVerdict) for v in report.verdicts)
    assert all(isinstance(c, schema.InteropCheck) for c in report.interop)
    assert all(isinstance(f, schema.CostFit) for f in report.fits)
    assert all(isinstance(t, schema.TcFigure) for t in report.tc)
    assert all(isinstance(e, schema.RunError) for e in report.errors)
    assert isinstance(report.hardware, schema.Hardware)
    key = next(iter(report.interop[0].outputs))
    assert isinstance(key, schema.OutputKey) and schema.OutputKey.parse(key.text()) == key
    assert {rt.hw for rt in report.runtimes} == {"on", "off"}


def test_output_keys_parse_runtime_ids_with_suffixes():
    key = schema.OutputKey("erlang@25.2.3#2", "hmac.new+copy", "off")
    assert schema.OutputKey.parse(key.text()) == key


GOLDEN = [
    (name, fmt, suffix)
    for name in ("run-mix1", "run-mix2", "import-seed")
    for fmt, suffix in (("table", "table.txt"), ("markdown", "md"), ("text", "txt"))
]


@pytest.mark.parametrize("name, fmt, suffix", GOLDEN)
def test_golden_renderings_of_varied_reports(name, fmt, suffix):
    out = rendered(fmt, schema.load(ROUNDTRIP / f"{name}.json"))
    golden = FIXTURES / "golden" / f"{name}.{suffix}"
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert out == golden.read_text()
    if fmt == "text":
        assert max(map(len, out.splitlines())) <= 72 and out.isascii()


def test_json_rendering_is_the_report():
    report = schema.load(ROUNDTRIP / "run-mix2.json")
    assert json.loads(rendered("json", report)) == report.to_json()
