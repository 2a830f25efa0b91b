"""The report's scenarios as records (bridge.report.scenario): a scenario of
every kind the catalog has comes back from its report entry as it was, and
parses again into the same scenario (what a replay runs); every fixture
report's scenarios re-serialise byte for byte; a key this bridge does not
know stays where it stood."""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest

from bridge.catalog import scenario, usercode
from bridge.catalog.vocab import ScenarioKind
from bridge.errors import UsageError
from bridge.report import schema
from bridge.report.scenario import ScenarioRun, UserCallRun
from tests.conftest import FIXTURES, ROOT


def _one_of_each_kind() -> dict[ScenarioKind, scenario.Scenario]:
    found: dict[ScenarioKind, scenario.Scenario] = {}
    for name in scenario.available():
        sc = scenario.load(name)
        found.setdefault(sc.kind, sc)
    # `bridge time`'s own kind has no built-in: user calls only, one labelled.
    found[ScenarioKind.EXPR] = scenario.ExprScenario(
        name="time",
        description="expressions",
        sizes=(16, 1024),
        calls={"erlang": (), "python": ()},
        user_calls=(
            usercode.labelled("sha=crypto:hash(sha256, Data)"),
            usercode.make("python", "hashlib.sha256(data).digest()", checked=False),
        ),
    )
    # A TLS scenario whose certificate and mutual TLS are not the defaults.
    tls = found[ScenarioKind.TLS]
    found[ScenarioKind.TLS] = dataclasses.replace(tls, cert="rsa2048", client_cert=True)
    return found


SCENARIOS = _one_of_each_kind()


def test_every_kind_of_the_catalog_has_a_scenario_here():
    assert set(SCENARIOS) == set(scenario.KINDS) == set(ScenarioKind)


@pytest.mark.parametrize("kind", list(ScenarioKind), ids=str)
def test_a_scenario_of_each_kind_round_trips(kind):
    sc = SCENARIOS[kind]
    made = ScenarioRun.of(sc)
    assert made.kind is kind and made.name == sc.name
    assert made.sizes == sc.sizes and made.size_unit == sc.size_unit
    text = json.dumps(made.to_json())
    assert text == json.dumps(sc.to_json())  # the keys and order the catalog writes
    read = ScenarioRun.from_json(json.loads(text))
    assert read == made and json.dumps(read.to_json()) == text
    # What a replay does with it: the same scenario again.
    again = scenario.parse(read.to_json(), "report")
    assert dataclasses.replace(again, path="") == dataclasses.replace(sc, path="")


def test_the_kind_specific_fields_are_read_by_attribute():
    hmac = scenario.load("hmac-sha256")
    mac = ScenarioRun.of(hmac)
    assert (mac.digest, mac.key_bytes, mac.mac_bytes) == ("sha256", hmac.key_bytes, 0)
    assert mac.limit_algorithm == "sha256" and not mac.user_code
    tls = ScenarioRun.of(SCENARIOS[ScenarioKind.TLS])
    assert (tls.cert, tls.client_cert, tls.group) == ("rsa2048", True, "x25519")
    expr = ScenarioRun.of(SCENARIOS[ScenarioKind.EXPR])
    assert expr.user_code and [uc.runtime for uc in expr.user_calls] == ["erlang", "python"]
    assert all(isinstance(uc, UserCallRun) for uc in expr.user_calls)
    assert [(uc.label, uc.checked) for uc in expr.user_calls] == [("sha", True), ("", False)]


def _reports() -> list:
    out = []
    for path in sorted([*FIXTURES.rglob("*.json"), *(ROOT / "docs").rglob("*.json")]):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(data, dict) and str(data.get("schema", "")).startswith("bridge.report/"):
            out.append(path)
    return out


REPORTS = _reports()


def test_the_fixtures_hold_scenarios_of_many_kinds_and_an_import():
    kinds = {
        sc.get("kind") for p in REPORTS for sc in json.loads(p.read_text()).get("scenarios", ())
    }
    assert None in kinds and len(kinds) >= 10


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_reports_scenarios_re_serialise_byte_for_byte(path):
    data = json.loads(path.read_text())
    report = schema.load(path)
    assert all(isinstance(sc, ScenarioRun) for sc in report.scenarios)
    written = json.dumps([sc.to_json() for sc in report.scenarios], indent=1)
    assert written == json.dumps(data.get("scenarios", []), indent=1)


def _with_keys(tmp_path, **keys):
    data = json.loads((FIXTURES / "roundtrip" / "run-mix1.json").read_text())
    first: dict = {}
    for key, value in data["scenarios"][0].items():
        first[key] = value
        if key == "sizes":  # the new keys after it: each keeps its place
            first.update(keys)
    data["scenarios"][0] = first
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def test_a_key_this_bridge_does_not_know_survives_where_it_stood(tmp_path):
    path = _with_keys(tmp_path, padding={"scheme": "future", "bits": [1, 2]})
    report = schema.load(path)
    (sc, *_) = report.scenarios
    assert sc.extra == {"padding": {"scheme": "future", "bits": [1, 2]}}
    assert schema.dumps(report) == path.read_text()
    keys = list(sc.to_json())
    assert keys[keys.index("sizes") + 1] == "padding"


def test_a_kind_this_bridge_does_not_know_is_one_error_line(tmp_path):
    data = json.loads((FIXTURES / "roundtrip" / "run-mix1.json").read_text())
    data["scenarios"][0]["kind"] = "quantum"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match=r"scenarios\[0\]\.kind: 'quantum' is not one of"):
        schema.load(path)


def test_a_scenario_made_in_memory_from_its_object_writes_it_as_given():
    """Tests and import-speed make reports with scenario objects: read as a
    report's are."""
    given = {"name": "sha256", "kind": "hash", "description": "SHA256", "custom": 1}
    report = schema.Report(
        *("1", "2026-01-01", [], "", {}, {}),
        runtimes=(),
        results=(),
        scenarios=(given,),
    )
    (sc,) = report.scenarios
    assert isinstance(sc, ScenarioRun) and sc.kind is ScenarioKind.HASH
    assert sc.to_json() == given and list(sc.to_json()) == list(given)
    assert report.scenario("sha256") is sc and report.scenario("other") is None
    assert report.scenario_kind("sha256") is ScenarioKind.HASH
    assert report.description("sha256") == "SHA256" and report.description("x") == ""
    imported = ScenarioRun(name="sha256", description="imported from paste.txt")
    assert imported.to_json() == {"name": "sha256", "description": "imported from paste.txt"}
    assert imported.size_unit == "bytes" and imported.kind is None


def test_the_schema_page_names_each_blocks_record_where_it_is():
    """docs/reference/report-schema.md's table of records: each type it names
    is in a module of its row, and every record block of a report is there."""
    import importlib
    import re
    import typing

    from bridge.report import codec

    page = (ROOT / "docs" / "reference" / "report-schema.md").read_text()
    lines = page.split("## The Python records", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| block"))
    rows = list(itertools.takewhile(lambda line: line.startswith("|"), lines[start + 2 :]))
    named: set[str] = set()
    for row in rows:
        modules = [
            importlib.import_module(m.replace("/", ".").removesuffix(".py"))
            for m in re.findall(r"`(bridge/[a-z/_]+\.py)`", row)
        ]
        for name in re.findall(r"`([A-Z][A-Za-z]+)`", row.split("|")[2]):
            assert any(hasattr(m, name) for m in modules), (name, row)
            named.add(name)
    hints = typing.get_type_hints(schema.Report)
    for f in codec.fields(schema.Report):
        for inner in [hints[f.name], *typing.get_args(hints[f.name])]:
            if isinstance(inner, type) and issubclass(inner, codec.Record):
                assert inner.__name__ in named, f.name


def test_a_user_call_with_a_lone_surrogate_renders(tmp_path):
    """JSON can say "\\ud800"; the expression's call id is hashed all the same
    (it raised UnicodeEncodeError in every view: the fuzz pool had no user call)."""
    from bridge.cli.common import rendered

    call = {"runtime": "python", "expr": "hashlib.sha1(data)\ud800", "checked": True}
    path = _with_keys(tmp_path, user_calls=[call])
    report = schema.load(path)
    assert report.scenarios[0].user_calls[0].expr.endswith("\ud800")
    assert "hmac-sha1" in rendered("text", report)
    assert usercode.expr_key("python", "a") == usercode.expr_key(usercode.UserRuntime.PYTHON, "a")
