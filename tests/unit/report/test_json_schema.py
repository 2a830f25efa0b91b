"""The published JSON Schema (bridge/report/report-1.schema.json) against the
records that write reports: every key a record writes is a property at the
matching place, and every required property is a key the record writes, so
the schema cannot drift from the records. (That every fixture report
validates is tests/unit/test_plain_files.py's.)"""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest

from bridge.errors import OperationError, UsageError
from bridge.report import check, codec, levels, schema
from tests.conftest import ROOT

SCHEMA = json.loads((ROOT / "bridge" / "report" / "report-1.schema.json").read_text())


def resolve(node: dict[str, Any], want: str) -> dict[str, Any] | None:
    """The part of a schema node that is of JSON type `want` ($ref followed,
    the member of a oneOf/anyOf that is)."""
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        return resolve(SCHEMA["$defs"][name], want)
    for alternatives in ("oneOf", "anyOf"):
        for alt in node.get(alternatives, ()):
            found = resolve(alt, want)
            if found is not None:
                return found
    types = node.get("type")
    if types == want or (isinstance(types, list) and want in types):
        return node
    return None


def record_in(hint: Any) -> tuple[type | None, bool]:
    """The record a field holds, and whether as a list of them."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, __import__("types").UnionType):
        return record_in(args[0]) if len(args) == 1 else (None, False)
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        inner, _ = record_in(args[0])
        return inner, True
    if isinstance(hint, type) and issubclass(hint, codec.Record):
        return hint, False
    return None, False


def walk(cls: type, node: dict[str, Any], where: str, flat: bool = False) -> list[str]:
    """What does not match between a record and its place in the schema (a
    flat record's keys are its parent's: the parent answers for required)."""
    obj = resolve(node, "object")
    if obj is None:
        return [f"{where}: {cls.__name__} is written as an object, the schema says otherwise"]
    props = obj.get("properties")
    if props is None:
        return [f"{where}: the schema lists no properties for {cls.__name__}"]
    problems = []
    written = set(codec.keys(cls))  # a flat record's included
    for key in cls.json_derived_keys:
        if key not in props:
            problems.append(f"{where}.{key}: {cls.__name__} writes it, the schema has no property")
    for f in codec.fields(cls):
        if not f.spec.write:
            continue
        if f.spec.flat:
            inner, _ = record_in(f.hint)
            if inner is not None:
                problems += walk(inner, node, where, flat=True)
            continue
        if f.key not in props:
            problems.append(
                f"{where}.{f.key}: {cls.__name__} writes it, the schema has no property"
            )
            continue
        inner, many = record_in(f.hint)
        if inner is not None:
            place = props[f.key]
            if many:
                array = resolve(place, "array")
                if array is None or "items" not in array:
                    problems.append(
                        f"{where}.{f.key}: a list of {inner.__name__}, not in the schema"
                    )
                    continue
                place = array["items"]
            problems += walk(inner, place, f"{where}.{f.key}[]" if many else f"{where}.{f.key}")
    for key in () if flat else obj.get("required", ()):
        if key not in written:
            problems.append(
                f"{where}.{key}: required by the schema, {cls.__name__} never writes it"
            )
    return problems


def test_the_schema_describes_every_key_every_record_writes():
    assert walk(schema.Report, SCHEMA, "$") == []


def test_every_record_is_reached_from_the_report():
    """The walk covers every record of bridge.report (a new record is in a report)."""
    reached: set[type] = set()

    def visit(cls: type) -> None:
        reached.add(cls)
        for f in codec.fields(cls):
            inner, _ = record_in(f.hint)
            if inner is not None and inner not in reached:
                visit(inner)

    visit(schema.Report)
    records = {
        obj
        for module in (schema, levels)
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, codec.Record) and obj is not codec.Record
    }
    # Written inside derived figures, not as fields: Spread (latency, probe),
    # Slowest (slowest), CpuUse (cpu_use); their places are walked below.
    assert records - reached == {levels.Spread, levels.Slowest, levels.CpuUse}


@pytest.mark.parametrize(
    ("record", "key"), [(levels.Slowest, "slowest"), (levels.CpuUse, "cpu_use")]
)
def test_the_schema_describes_the_records_of_derived_figures(record, key):
    cells = SCHEMA["properties"]["concurrency"]["oneOf"][1]["properties"]["cells"]["items"]
    assert walk(record, cells["properties"][key], f"$.concurrency.cells[].{key}") == []


def test_the_walk_finds_drift():
    """A key the schema does not have, and a required one nobody writes, are found."""
    import copy

    global SCHEMA
    saved = SCHEMA
    try:
        SCHEMA = copy.deepcopy(saved)
        cells = SCHEMA["properties"]["concurrency"]["oneOf"][1]["properties"]["cells"]["items"]
        del cells["properties"]["probe_idle_ns"]  # a LevelRaw key, written flat
        SCHEMA["properties"]["hardware"]["required"] = ["nobody_writes_this"]
        problems = walk(schema.Report, SCHEMA, "$")
    finally:
        SCHEMA = saved
    assert sorted(problems) == [
        "$.concurrency.cells[].probe_idle_ns: LevelRaw writes it, the schema has no property",
        "$.hardware.nobody_writes_this: required by the schema, Hardware never writes it",
    ]


@pytest.mark.parametrize("cls", [schema.Result, levels.LevelResult])
def test_derived_keys_are_declared(cls):
    """The codec refuses a derived key the record does not declare."""
    assert set(cls.json_derived_keys) <= set(cls.json_order)


def test_a_report_with_an_rsa_key_validates():
    """bridge writes an RSA key's parts as a list (inputs.key_parts_hex): a
    report it wrote must read back."""
    data = json.loads((ROOT / "tests" / "fixtures" / "report-hmac-sha1-v1.json").read_text())
    data["results"][0]["inputs"] = {
        "key_hex": "00",
        "data_hex": "",
        "key_parts_hex": ["0101", "ab"],
    }
    check.check(data, "r.json")
    data["results"][0]["inputs"]["key_parts_hex"] = [1]
    with pytest.raises(UsageError, match=r"\$\.results\[0\]\.inputs\.key_parts_hex"):
        check.check(data, "r.json")


def test_a_report_with_level_cells_validates_and_reads_back():
    """The fast tier's --concurrency run (Erlang, Python, openssl; a failed and
    an unsupported level): what bridge writes validates and re-serialises."""
    from tests.session.fake import Script
    from tests.session.test_levels import ERL, level_plan, run

    py = Script(
        kind="python",
        version="3.11.0",
        level_failure={2: OperationError("failed", "python@3.11.0 process 2 exited")},
    )
    ossl = Script(kind="openssl", version="3.0.19", unsupported={"speed-evp": "no -multi"})
    outcome, _ = run(level_plan(), [ERL, py, ossl])
    text = schema.dumps(outcome.report)
    data = json.loads(text)
    statuses = {c["status"] for c in data["concurrency"]["cells"]}
    assert statuses == {"ok", "failed", "unsupported"}
    check.check(data, "r.json")
    assert schema.dumps(schema.Report.from_json(data)) == text


def test_a_report_with_samples_from_several_processes_validates_and_reads_back():
    """The fast tier's run with two processes per runtime: procs and the
    between-process figures validate and re-serialise; procs of another
    length than samples are refused in one line."""
    from tests.session.test_processes import ONE_SIZE, SETTINGS, script
    from tests.session.test_session import plan, run

    outcome, _ = run(plan(ONE_SIZE, settings=SETTINGS), [script("python", spreadable=True)])
    text = schema.dumps(outcome.report)
    data = json.loads(text)
    result = data["results"][0]
    assert set(result["procs"]) == {0, 1} and result["ns_per_op"]["processes"] == 2
    check.check(data, "r.json")
    assert schema.dumps(schema.Report.from_json(data)) == text
    result["procs"] = result["procs"][:-1]
    with pytest.raises(UsageError, match="23 processes for 24 samples"):
        check.check(data, "r.json")
