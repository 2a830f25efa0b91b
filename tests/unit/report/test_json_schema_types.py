"""The published JSON Schema against the records' types, field by field:
where test_json_schema.py holds the keys and what is required to the records,
this holds each key's JSON type and closed set. A field's type hint against
the JSON types the schema accepts at its place ($ref, oneOf and anyOf
followed):

- str: a string; an Enum (bridge.catalog.choice.Choice): an `enum` of
  exactly its values;
- int: an integer; float: a number (an integer is one); bool: a boolean;
- a tuple or list: an array whose items match; a dict: an object; a record:
  an object (walked for its own fields);
- X | None: null allowed wherever the codec may write null (no omit rule
  drops it); with an omit rule the schema may or may not allow null;
- a field with its own JSON form (`encode`/`decode`): not judged here.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import json
import operator
import types
import typing
from typing import Any

import pytest

from bridge.catalog.vocab import ScenarioKind
from bridge.report import codec, provenance, schema
from bridge.report.scenario import ScenarioRun, UserCallRun
from tests.conftest import ROOT

SCHEMA = json.loads((ROOT / "bridge" / "report" / "report-1.schema.json").read_text())
SCALAR = {str: "string", int: "integer", float: "number", bool: "boolean"}


def alternatives(node: dict[str, Any], doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The plain alternatives of a schema node: $ref followed, oneOf/anyOf spread."""
    while "$ref" in node:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = {**doc["$defs"][node["$ref"].removeprefix("#/$defs/")], **rest}
    for key in ("oneOf", "anyOf"):
        if key in node:
            rest = {k: v for k, v in node.items() if k != key}
            return [a for alt in node[key] for a in alternatives({**rest, **alt}, doc)]
    return [node]


def json_types(node: dict[str, Any], doc: dict[str, Any]) -> set[str]:
    """The JSON types a node accepts ("any": it says none)."""
    out: set[str] = set()
    for alt in alternatives(node, doc):
        if "enum" in alt or "const" in alt:
            values = alt.get("enum", [alt.get("const")])
            out |= {_type_of(v) for v in values}
        elif "type" in alt:
            t = alt["type"]
            out |= set(t) if isinstance(t, list) else {t}
        else:
            out.add("any")
    return out


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {str: "string", float: "number", list: "array", dict: "object"}[type(value)]


def enum_values(node: dict[str, Any], doc: dict[str, Any]) -> set[Any] | None:
    """The values an `enum` of the node allows (None: it has none)."""
    found = [alt["enum"] for alt in alternatives(node, doc) if "enum" in alt]
    return {v for values in found for v in values} if found else None


def check(
    hint: Any, node: dict[str, Any], where: str, doc: dict[str, Any], never: Any = None
) -> list[str]:
    """What does not match between a type hint and a schema node (`never`:
    a value the field's omit rule never writes)."""
    accepts = json_types(node, doc)
    if "any" in accepts:
        return []
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        problems = (
            []
            if type(None) not in args or "null" in accepts
            else [f"{where}: the record may write null, the schema does not allow it"]
        )
        for m in members:
            rest = {"anyOf": [a for a in alternatives(node, doc) if a.get("type") != "null"]}
            problems += check(m, rest, where, doc, never)
        return problems
    if hint is Any:
        return []
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = enum_values(node, doc)
        mine = {m.value for m in hint if m is not never}
        if values is None:
            return [f"{where}: {hint.__name__} is a closed set, the schema has no enum"]
        values.discard(None)
        if never is not None:  # never written: the schema may keep it for older reports
            values.discard(never.value)
        if values != mine:
            return [f"{where}: {hint.__name__} is {sorted(mine)}, the schema's {sorted(values)}"]
        return []
    if hint in SCALAR:
        want = SCALAR[hint]
        if want not in accepts:
            return [f"{where}: {hint.__name__} is {want}, the schema says {sorted(accepts)}"]
        return []
    if origin in (tuple, list) or hint in (tuple, list):
        if "array" not in accepts:
            return [f"{where}: a list, the schema says {sorted(accepts)}"]
        items = [a.get("items") for a in alternatives(node, doc) if "items" in a]
        if not items or not args:
            return []
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return []  # a pair: prefixItems or a $def of its own
        return check(args[0], items[0], f"{where}[]", doc)
    record = isinstance(hint, type) and issubclass(hint, codec.Record)
    if (origin is dict or hint is dict or record) and "object" not in accepts:
        return [f"{where}: an object, the schema says {sorted(accepts)}"]
    return []


def walk(cls: type, node: dict[str, Any], where: str, doc: dict[str, Any]) -> list[str]:
    """Each field of `cls` against its property, records within walked."""
    objs = [a for a in alternatives(node, doc) if a.get("type") == "object" or "properties" in a]
    if not objs:
        return []
    props = objs[0].get("properties", {})
    problems: list[str] = []
    for f in codec.fields(cls):
        if not f.spec.write or f.spec.encode is not None or f.spec.decode is not None:
            continue
        if f.spec.flat:
            if isinstance(f.hint, type) and issubclass(f.hint, codec.Record):
                problems += walk(f.hint, node, where, doc)
            continue
        if f.key not in props:
            continue  # test_json_schema.py names it
        place, at = props[f.key], f"{where}.{f.key}"
        hint, never = f.hint, None
        if f.spec.omit is not None:  # what it omits is never written: the schema need not allow it
            hint = _without_none(hint)
            never = _omitted_default(f)
        problems += check(hint, place, at, doc, never)
        for inner, many in _records(f.hint):
            sub = place
            if many:
                arrays = [a for a in alternatives(place, doc) if "items" in a]
                if not arrays:
                    continue
                sub, at = arrays[0]["items"], f"{at}[]"
            problems += walk(inner, sub, at, doc)
    return problems


def _omitted_default(f: codec.Field) -> Any:
    """The field's default, when its omit rule drops it whatever the record."""
    if f.factory or f.default is dataclasses.MISSING:
        return None
    try:
        return f.default if f.spec.omit(None, f.default) else None
    except AttributeError:  # a rule that reads the record
        return None


def _without_none(hint: Any) -> Any:
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return functools.reduce(operator.or_, rest)
    return hint


def _records(hint: Any) -> list[tuple[type, bool]]:
    """The records a field holds, each with whether as a list of them."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return [r for a in args if a is not type(None) for r in _records(a)]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return [(r, True) for r, _ in _records(args[0])]
    if isinstance(hint, type) and issubclass(hint, codec.Record):
        return [(hint, False)]
    return []


def test_every_field_has_the_schemas_type():
    assert walk(schema.Report, SCHEMA, "$", SCHEMA) == []


def test_the_walk_finds_drift():
    """A key of another type, a closed set with another member and a null
    the schema refuses are each found, named by where they are."""
    doc = copy.deepcopy(SCHEMA)
    runtime = doc["properties"]["runtimes"]["items"]["properties"]
    runtime["kind"]["enum"] = ["erlang", "python"]
    doc["properties"]["settings"]["properties"]["quick"] = {"type": "string"}
    doc["properties"]["noise"]["oneOf"][1]["properties"]["cpus"] = {"$ref": "#/$defs/count"}
    assert sorted(walk(schema.Report, doc, "$", doc)) == [
        "$.noise.cpus: the record may write null, the schema does not allow it",
        "$.runtimes[].kind: RuntimeKind is ['erlang', 'openssl', 'python'],"
        " the schema's ['erlang', 'python']",
        "$.settings.quick: bool is boolean, the schema says ['string']",
    ]


@pytest.mark.parametrize("details", provenance.Details.__args__)
def test_every_runtime_detail_is_in_the_schema_with_its_type(details):
    """A runtime's details (one record per kind, spliced into its object)
    against the schema's runtime: each key a property, of its type."""
    node = SCHEMA["properties"]["runtimes"]["items"]
    unknown = [k for k in codec.keys(details) if k not in node["properties"]]
    assert unknown == []
    assert walk(details, node, "$.runtimes[]", SCHEMA) == []


def test_every_scenario_key_is_in_the_schema_with_its_type():
    """The report's scenarios (bridge.report.scenario): each key a property of
    the schema's scenario, of its type; its kind and a user call's runtime
    the catalog's closed sets. A drift in either is found."""
    node = SCHEMA["properties"]["scenarios"]["items"]
    for record in (ScenarioRun, UserCallRun):
        place = node if record is ScenarioRun else node["properties"]["user_calls"]["items"]
        assert [k for k in codec.keys(record) if k not in place["properties"]] == []
    assert walk(ScenarioRun, node, "$.scenarios[]", SCHEMA) == []
    doc = copy.deepcopy(SCHEMA)
    props = doc["properties"]["scenarios"]["items"]["properties"]
    props["kind"]["enum"] = props["kind"]["enum"][:-1]
    props["bits"] = {"type": "string"}
    props["user_calls"]["items"]["properties"]["runtime"]["enum"] = ["erlang"]
    found = sorted(walk(schema.Report, doc, "$", doc))
    assert found == [
        "$.scenarios[].bits: int is integer, the schema says ['string']",
        f"$.scenarios[].kind: ScenarioKind is {sorted(k.value for k in ScenarioKind)},"
        f" the schema's {sorted(props['kind']['enum'])}",
        "$.scenarios[].user_calls[].runtime: UserRuntime is"
        " ['elixir', 'erlang', 'python', 'shell'], the schema's ['erlang']",
    ]
