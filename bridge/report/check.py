"""Is a parsed JSON document a report every renderer can take? Checked before
any renderer sees it: by the published JSON Schema
(bridge/report/report-1.schema.json: types, ranges, enumerations) and, beside
it, by what a schema cannot say (numbers finite, loops as long as samples,
results naming the report's runtimes, sizes within their scenario's bounds).

A report is data from someone else: `bridge report` used to crash in the
renderers on `size: 10**400`, `samples: []`, `loops: 0` or `hw: ["x"]`.
jsonschema is imported here only, so `bridge run` does not pay for it.
"""

from __future__ import annotations

import functools
import json
import math
from importlib import resources
from typing import Any

from bridge import plain
from bridge.errors import UsageError

SCHEMA_FILE = "report-1.schema.json"
MAX_STRING = 16 << 20  # characters: no string in a real report comes close
MAX_ITEMS = 1 << 22  # values in all: a 256 MiB report of small numbers has fewer


@functools.cache
def schema() -> dict[str, Any]:
    return json.loads(resources.files("bridge.report").joinpath(SCHEMA_FILE).read_text())


# Bounds of the published schema that a writer of reports checks first
# (bridge import-speed), kept equal to it by tests/unit/speed/test_holdable.py.
MAX_SIZE = 16 << 30  # $defs.size: the largest size a result has (file-digest: 16 GiB)
MAX_LEVEL = 4096  # concurrency.levels: the most workers or processes a cell ran


@functools.cache
def _validator() -> Any:
    import jsonschema  # slow to import: only when a report is read

    return jsonschema.Draft202012Validator(schema())


def check(data: Any, source: str) -> None:
    """Raise a one-line UsageError naming the first thing wrong with `data`
    (an object whose `schema` field model.check_schema accepted)."""
    _check_values(data, source)
    error = _first_error(data)
    if error is not None:
        raise UsageError(f"{source}: not a valid bridge report ({error})")
    problem = _semantic(data)
    if problem:
        raise UsageError(f"{source}: not a valid bridge report ({problem})")


def _first_error(data: Any) -> str | None:
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is None:
        return None
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return f"{_where(error.absolute_path)}: missing field {_short(missing[0], 60)!r}"
    if error.validator in ("minimum", "maximum") and isinstance(error.instance, int | float):
        bound = "below the minimum" if error.validator == "minimum" else "above the maximum"
        value = _short(str(error.instance), 24)
        return f"{_where(error.absolute_path)}: {value} is {bound} of {error.validator_value}"
    return f"{_where(error.absolute_path)}: {_short(error.message)}"


def _where(path: Any) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{_short(str(part), 40)}"
    return out


def _short(text: str, limit: int = 160) -> str:
    """One line of printable text: the message quotes the report's values."""
    text = plain.visible(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_values(data: Any, source: str) -> None:
    """Every number finite and every string bounded, anywhere (settings and
    provenance are free-form), without recursing."""
    stack, seen = [data], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > MAX_ITEMS:
            raise UsageError(f"{source}: more than {MAX_ITEMS} values, not a report")
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str):
            if len(v) > MAX_STRING:
                raise UsageError(f"{source}: a string of {len(v)} characters, not a report")
        elif isinstance(v, float) and not math.isfinite(v):
            raise UsageError(f"{source}: a number that is not finite ({v}), not a report")


def _semantic(d: dict[str, Any]) -> str | None:
    ids = {r["id"] for r in d["runtimes"]}
    bounds = _size_bounds(d.get("scenarios", ()))
    for i, r in enumerate(d["results"]):
        where = f"$.results[{i}]"
        if r["runtime"] not in ids:
            return f"{where}: runtime {_short(r['runtime'], 60)!r} is not among the runtimes"
        limit = bounds.get(r["scenario"])
        if limit is not None and r["size"] > limit:
            return f"{where}: size {r['size']} is above its scenario's bound of {limit}"
        problem = _result(r)
        if problem:
            return f"{where}: {problem}"
    for i, v in enumerate(_section(d, "verdicts")):
        # A verdict that says used or not-used stands on its measured speedup.
        if v.get("verdict") in _MEASURED_VERDICTS and v.get("speedup") is None:
            return f"$.verdicts[{i}]: a {v['verdict']!r} verdict without its speedup"
    for name, fields in _REFERENCES:
        for i, x in enumerate(_section(d, name)):
            for f in fields:
                if f in x and x[f] not in ids:
                    return f"$.{name}[{i}].{f}: {_short(str(x[f]), 60)!r} is not among the runtimes"
    return None


_MEASURED_VERDICTS = ("used", "not-used")

# Sections whose records name a runtime of the same report.
_REFERENCES = (
    ("verdicts", ("runtime",)),
    ("unstable", ("runtime",)),
    ("fits", ("runtime",)),
    ("tc", ("runtime",)),
    ("differences", ("runtime", "baseline_runtime")),
    ("decompositions", ("runtime",)),
)


def _section(d: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return d.get(name) or []


def _result(r: dict[str, Any]) -> str | None:
    if r.get("status", "ok") != "ok":
        return None
    samples, loops = r["samples"], r["loops"]
    if r.get("source") == "imported":
        # One number as posted: no samples, and ns_per_op holds it.
        median = (r.get("ns_per_op") or {}).get("median")
        return "an imported result that took no time" if not median else None
    if not samples:
        return "a measured result with no samples"
    per_sample = ("sample_cpus", "sample_cpu_ns", "sample_wait_ns", "sample_user_ns")
    for key in (*per_sample, "sample_server_cpu_ns"):
        # Per-sample figures are parallel to the samples (bridge.analysis.cputime).
        if key in r and len(r[key]) != len(samples):
            return f"{len(r[key])} {key} for {len(samples)} samples"
    procs = r.get("procs")
    if procs and len(procs) != len(samples):
        return f"{len(procs)} processes for {len(samples)} samples"
    if isinstance(loops, int):
        return "loops is 0: no call was timed" if loops < 1 else None
    if len(loops) != len(samples):
        return f"{len(loops)} loops for {len(samples)} samples"
    return None


def _size_bounds(scenarios: list[dict[str, Any]]) -> dict[str, int]:
    """Each scenario's bound on its sizes, as bridge.catalog.scenario checks
    them (the schema has checked its name and kind; an import's has none)."""
    from bridge.catalog import scenario

    return {sc["name"]: scenario.max_size(sc["kind"]) for sc in scenarios if "kind" in sc}
