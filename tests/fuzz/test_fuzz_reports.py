"""Fuzzing whole reports through the commands that read them: a real
report, mutated at random paths (a field deleted, replaced by any JSON value,
retyped, or given another value of its own type), read by `report` in every
format, `compare` (as baseline and as candidate, and gated) and `plot`. The only
outcomes allowed are output or one clean error line: the report is checked
(bridge.report.check) before any renderer sees it, and what passes the checks
must render."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path

import click
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.cli import main as commands
from bridge.errors import BridgeError
from tests.conftest import FIXTURES

# 40 reports rendered and 10 plotted keep `make test` near its ten minutes;
# BRIDGE_FUZZ_SCALE=10 runs ten times as many (bench, or before a release).
SCALE = int(os.environ.get("BRIDGE_FUZZ_SCALE", "1"))
BOUNDED = settings(max_examples=25 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))
SOURCES = {
    name: json.loads((FIXTURES / name).read_text())
    for name in ("report-hmac-sha1-v1.json", "roundtrip/run-mix1.json")
}
BASELINE = str(FIXTURES / "report-hmac-sha1-v1.json")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def paths(doc) -> list[tuple]:
    """Every path to a value in the document."""
    out, stack = [], [((), doc)]
    while stack:
        path, v = stack.pop()
        out.append(path)
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        stack.extend((path + (k,), x) for k, x in items)
    return sorted(out, key=repr)


PATHS = {name: paths(doc)[1:] for name, doc in SOURCES.items()}


def same_type(value):
    """Another value of the same JSON type: what a schema lets through."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.sampled_from([0, 1, -1, 2**31, 2**64, 10**400]) | st.integers()
    if isinstance(value, float):
        return st.sampled_from([0.0, -0.0, 1e-300, 1e300, -1.0]) | st.floats(allow_nan=False)
    if isinstance(value, str):
        return st.sampled_from(["", "on", "off", "\x1b[31m", "x" * 5000]) | st.text(max_size=30)
    if isinstance(value, list):
        return st.sampled_from([[], value[:1], value * 2])
    return st.just({})


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(sorted(SOURCES)))
    doc = copy.deepcopy(SOURCES[name])
    log = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS[name]))
        parent = doc
        try:
            for part in path[:-1]:
                parent = parent[part]
            current = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or changed it
        action = draw(st.sampled_from(["delete", "replace", "same-type", "same-type"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
            log.append(f"delete {path}")
            continue
        new = draw(json_values if action == "replace" else same_type(current))
        parent[path[-1]] = new
        log.append(f"{path} = {repr(new)[:200]}")
    return Mutated(doc, f"{name}: " + "; ".join(log))


class Mutated:
    """A mutated report that shows as its mutations, not 40 kB of JSON."""

    def __init__(self, doc, log: str) -> None:
        self.doc, self.log = doc, log

    def __repr__(self) -> str:
        return self.log


def _run(args: list[str]) -> None:
    """The command in-process, as bridge.cli.main runs it, minus the exit."""
    try:
        commands.cli.main(args, standalone_mode=False, prog_name="bridge")
    except BridgeError as exc:
        line = exc.one_line()
        assert line and "\n" not in line and "Traceback" not in line, line
    except click.UsageError as exc:
        assert "\n" not in exc.format_message()
    except SystemExit as exc:  # a command's own status (compare: a regression)
        assert exc.code in (0, 1), exc.code


@BOUNDED
@given(mutated())
def test_mutated_reports_render_or_fail_cleanly(m):
    doc = m.doc
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.json"
        path.write_text(json.dumps(doc))
        for fmt in ("table", "text", "markdown", "json"):
            _run(["report", str(path), "--format", fmt])
        _run(["compare", BASELINE, str(path)])
        _run(["compare", str(path), BASELINE, "--format", "json"])
        # compare's gate over the same cells, both ways (its status is returned, not raised)
        gate = ["--fail-if-slower", "5", "--fail-if-faster", "5", "--format", "json"]
        _run(["compare", BASELINE, str(path), *gate])


@settings(max_examples=6 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_reports_plot_or_fail_cleanly(m):
    doc = m.doc
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.json"
        path.write_text(json.dumps(doc))
        _run(["plot", str(path), "--svg", str(Path(tmp) / "p.svg")])
