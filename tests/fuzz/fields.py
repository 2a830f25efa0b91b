"""Every string a report holds, found from the records themselves, so that a
string field added to bridge/report/schema.py (or levels.py) is fuzzed
without anyone listing it here.

- `record_fields` walks the report's record types (schema.Report and every
  record its fields hold, by their type hints) and names each field whose
  type holds text: `str`, `str | None`, a tuple of them, or a free-form dict.
- `present` walks a loaded report's records and names the fields that hold a
  non-empty string there: the pool of base reports must cover every field
  `record_fields` names (tests/fuzz/test_fuzz_writers.py checks it).
- `slots` walks a report's JSON beside its published JSON Schema
  (bridge/report/report-1.schema.json) and finds every string that is free
  text (no enum, const or pattern: a closed set is refused when it holds
  anything else, and the hostile-input tests cover that), and every key of a
  free-form object (`env`, `untestable`, `features`, `inputs`, ...).
- `replaced` rewrites those strings with one function, the same value
  everywhere it occurs (a runtime id in the runtimes, the results, the
  verdicts and the interop keys), so that the report still holds together
  and reaches the writers instead of being refused.
"""

from __future__ import annotations

import copy
import dataclasses
import typing
from collections.abc import Callable, Iterator
from typing import Any

from bridge.report import check, schema

Path = tuple[Any, ...]


# -- the records' own fields ---------------------------------------------------


def _holds_text(hint: Any) -> bool:
    """Does a field of this type hold text (at any depth but another record's)?"""
    if hint is str or hint is Any:
        return True
    if dataclasses.is_dataclass(hint):
        return False
    return any(_holds_text(a) for a in typing.get_args(hint) if a is not Ellipsis)


def _records_in(hint: Any) -> Iterator[type]:
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        yield hint
    for a in typing.get_args(hint):
        yield from _records_in(a)


def record_fields(root: type = schema.Report) -> set[tuple[str, str]]:
    """(record, field) for every field of every record reachable from `root`
    whose type holds text."""
    out: set[tuple[str, str]] = set()
    seen: set[type] = set()
    queue = [root]
    while queue:
        cls = queue.pop()
        if cls in seen:
            continue
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            hint = hints[f.name]
            if _holds_text(hint):
                out.add((cls.__name__, f.name))
            queue.extend(_records_in(hint))
    return out


def _has_text(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value)
    if dataclasses.is_dataclass(value):
        return False  # walked as a record of its own
    if isinstance(value, dict):
        return any(_has_text(k) or _has_text(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_text(v) for v in value)
    return False


def present(report: schema.Report) -> set[tuple[str, str]]:
    """(record, field) for every field that holds a non-empty string in this report."""
    out: set[tuple[str, str]] = set()
    stack: list[Any] = [report]
    while stack:
        value = stack.pop()
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                v = getattr(value, f.name)
                if _has_text(v):
                    out.add((type(value).__name__, f.name))
                stack.append(v)
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
    return out


# -- the JSON's strings, by its schema -------------------------------------------


def _resolve(node: Any) -> dict:
    defs = check.schema()["$defs"]
    while isinstance(node, dict) and "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[1]]
    return node if isinstance(node, dict) else {}


_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
    "integer": int,
    "number": (int, float),
}


def _fits(node: dict, value: Any) -> bool:
    if "enum" in node:
        return value in node["enum"]
    if "const" in node:
        return value == node["const"]
    if isinstance(value, dict) and "properties" in node:
        # A tagged branch (a why_not's "reason"): its constants must match,
        # and a closed object holds none of the value's other keys.
        props = node["properties"]
        tags = {k: _resolve(v) for k, v in props.items() if "const" in _resolve(v)}
        if any(value.get(k) != v["const"] for k, v in tags.items()):
            return False
        if node.get("additionalProperties") is False and set(value) - set(props):
            return False
    kinds = node.get("type")
    if kinds is None:
        return True
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return any(isinstance(value, _TYPES[k]) for k in kinds)


def _branch(node: Any, value: Any) -> dict:
    """The schema a value is checked by: the oneOf/anyOf branch its type takes."""
    node = _resolve(node)
    for key in ("oneOf", "anyOf"):
        for b in node.get(key, ()):
            b = _resolve(b)
            if _fits(b, value):
                return _branch(b, value)
    return node


def _free(node: dict) -> bool:
    """Text a hostile string can stand in for: not a closed or patterned
    value, nor one bounded short (a certificate's 64-hex fingerprint)."""
    if node.get("maxLength", 4096) < 4096:
        return False
    return not any(k in node for k in ("enum", "const", "pattern", "format"))


def _is_output_key(node: Any) -> bool:
    return _resolve(node) == _resolve({"$ref": "#/$defs/output_key"})


def slots(doc: Any) -> tuple[list[Path], list[Path], list[Path]]:
    """(the paths of free-text strings, of free-form keys, of output keys:
    "runtime call_id hw=on", values and keys) in a report's JSON."""
    texts: list[Path] = []
    keys: list[Path] = []
    output_keys: list[Path] = []
    stack: list[tuple[Path, Any, Any]] = [((), doc, check.schema())]
    while stack:
        path, value, node = stack.pop()
        node = _branch(node, value)
        if isinstance(value, str):
            if _is_output_key(node):
                output_keys.append(path)
            elif _free(node):
                texts.append(path)
        elif isinstance(value, dict):
            props = node.get("properties", {})
            extra = node.get("additionalProperties", {})
            names = node.get("propertyNames")
            for k, v in value.items():
                child = props.get(k, extra if isinstance(extra, dict) else {})
                stack.append(((*path, k), v, child))
                if k not in props and names is None:
                    keys.append((*path, k))
                elif k not in props and _is_output_key(names):
                    output_keys.append((*path, k, "<key>"))
        elif isinstance(value, list):
            items = node.get("items", {})
            stack.extend(((*path, i), v, items) for i, v in enumerate(value))
    return texts, keys, output_keys


def replaced(doc: Any, change: Callable[[str], str]) -> Any:
    """A copy of a report's JSON with every free-text string and free-form
    key changed by `change`, each distinct value changed once (the same
    result wherever it occurs), output keys rewritten to match."""
    doc = copy.deepcopy(doc)
    texts, keys, output_keys = slots(doc)
    memo: dict[str, str] = {}

    def new(value: str) -> str:
        if value not in memo:
            memo[value] = change(value)
        return memo[value]

    for path in texts:
        parent = _at(doc, path[:-1])
        parent[path[-1]] = new(parent[path[-1]])
    for path in output_keys:
        if path[-1] == "<key>":
            parent = _at(doc, path[:-2])
            parent[_output_key(path[-2], new)] = parent.pop(path[-2])
        else:
            parent = _at(doc, path[:-1])
            parent[path[-1]] = _output_key(parent[path[-1]], new)
    for path in sorted(keys, key=len, reverse=True):  # inner keys first
        parent = _at(doc, path[:-1])
        parent[new(path[-1])] = parent.pop(path[-1])
    return doc


def _output_key(text: str, new: Callable[[str], str]) -> str:
    key = schema.OutputKey.parse(text)
    return schema.OutputKey(new(key.runtime), new(key.call_id), key.hw).text()


def _at(doc: Any, path: Path) -> Any:
    for part in path:
        doc = doc[part]
    return doc
