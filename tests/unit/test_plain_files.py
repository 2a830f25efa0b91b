"""bridge.plain (bounded reading, nesting limits) and bridge.report.check
(the published JSON Schema and the checks beside it), on their own."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tracemalloc

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge import plain
from bridge.errors import UsageError
from bridge.measure import twins
from bridge.report import check, schema
from tests.conftest import FIXTURES, ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPORTS = sorted(FIXTURES.rglob("*.json"))


def test_a_regular_file_is_read_up_to_its_limit(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert plain.read_bytes(path, 100, "not a report") == b"x" * 100
    with pytest.raises(plain.TooLarge, match="f: larger than 99 bytes, not a report"):
        plain.read_bytes(path, 99, "not a report")


def test_a_file_that_grew_past_the_limit_after_its_stat_is_refused():
    """Read in one buffer at the size fstat gave: a file that size past the
    limit (grown since the first stat) was taken with one byte too many."""
    for size, limit in ((101, 100), (150, 100)):
        with pytest.raises(plain.TooLarge, match="f: larger than 100 bytes"):
            plain._bounded(io.BytesIO(b"x" * size), limit, "f", "not a report", expected=size)
    grown = io.BytesIO(b"x" * 60)  # fstat said 50; 60 came, within the limit
    assert plain._bounded(grown, 100, "f", "not a report", expected=50) == b"x" * 60


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null", "fifo", "dir"])
def test_anything_but_a_regular_file_is_refused(tmp_path, special):
    path = {"fifo": tmp_path / "p", "dir": tmp_path}.get(special, special)
    if special == "fifo":
        os.mkfifo(path)
    with pytest.raises(UsageError, match=r"is a (character device|FIFO|directory), not a report"):
        plain.read_bytes(path, 1 << 20, "not a report")


def test_a_stream_is_read_no_further_than_the_limit_plus_one():
    class Endless(io.RawIOBase):
        read_total = 0

        def read(self, n=-1):
            assert n is not None and 0 < n <= plain.CHUNK
            self.read_total += n
            return b"\0" * n

    stream = Endless()
    with pytest.raises(plain.TooLarge, match="<stdin>: larger than 1 MiB"):
        plain.read_stream(stream, 1 << 20, "<stdin>", "not openssl speed output")
    assert stream.read_total == (1 << 20) + 1


def test_decoding_is_strict():
    assert plain.decode("é".encode(), "f", "x") == "é"
    for raw in (b"\xff\xfe", b"a\0b"):
        with pytest.raises(UsageError, match="f: binary data"):
            plain.decode(raw, "f", "x")


@pytest.mark.parametrize(
    "text, depth",
    [
        ("[]", 1),
        ('{"a": [[1], {"b": []}]}', 4),
        ('["[[[[", "\\"[[[", {"k]]": "{{{"}]', 2),
        ("[" * 5000 + "]" * 5000, 5000),
        ("1", 0),
    ],
)
def test_json_depth_ignores_brackets_in_strings(text, depth):
    assert plain.json_depth(text) == depth


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(alphabet='[]{}"\\ab'),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=20,
    )
)
def test_json_depth_agrees_with_the_parsed_data(value):
    assert plain.json_depth(json.dumps(value)) == plain.data_depth(value)


JSON_VALUES = st.recursive(
    st.none()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(alphabet='[]{}"\\,:ab\u00e9\u0101\U0001f600'),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=30,
)


def _walked(value) -> int:
    """Values, containers and keys, as bridge.report.check walks them."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if isinstance(v, dict):
            stack.extend([*v.keys(), *v.values()])
        elif isinstance(v, list):
            stack.extend(v)
    return seen


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES, st.sampled_from([1, 2, 3, 7, 1 << 18]), st.booleans())
def test_segments_see_what_the_whole_text_shows(value, segment, ascii_only):
    """Strings cut by a segment's end are read whole: the text between
    strings, their count and their characters are those of one pass."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    whole = plain._JSON_STRING.subn("s", text)
    old, plain.SEGMENT = plain.SEGMENT, segment
    try:
        parts = list(plain._outside_strings(text))
        assert "".join(p[0] for p in parts) == whole[0]
        assert sum(p[1] for p in parts) == whole[1]
        assert sum(p[2] for p in parts) == len(text) - len(whole[0]) + whole[1]
        assert plain.json_depth(text) == plain.data_depth(value)
        assert plain.json_shape(text).values == _walked(value)
        # Counted undecoded (a report, before it is decoded): the same, in
        # bytes, so never less.
        raw = text.encode()
        assert plain.json_depth(raw) == plain.data_depth(value)
        by_bytes, by_text = plain.json_shape(raw), plain.json_shape(text)
        assert by_bytes.items == by_text.items and by_bytes.strings == by_text.strings
        assert by_bytes.parsed_bytes() >= by_text.parsed_bytes()
        assert by_bytes.text_bytes >= by_text.text_bytes
    finally:
        plain.SEGMENT = old


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_the_parse_cost_bounds_what_parsing_allocates(value):
    text = json.dumps(value, ensure_ascii=False)
    shape = plain.json_shape(text)
    tracemalloc.start()
    try:
        parsed = json.loads(text)
        used = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del parsed
    assert used <= shape.parsed_bytes() + 4096  # json.loads' own set-up: about 1.2 KiB


@pytest.mark.parametrize(
    "unit, per_unit",
    [("0", 8), ("0.5", 32), ("{}", 72), ("[]", 64), ('{"a":0}', 192), ('"abc"', 60), ("[[]]", 152)],
)
def test_the_parse_cost_holds_for_a_large_text_of_one_kind(unit, per_unit):
    """The kinds that amplify most (a 32 MiB report of tiny objects took
    993 MB): the bound is at least what tracemalloc measures."""
    n = 20_000
    text = "[" + ",".join([unit] * n) + "]"
    shape = plain.json_shape(text)
    tracemalloc.start()
    try:
        parsed = json.loads(text)
        used = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del parsed
    assert used <= shape.parsed_bytes()
    assert used >= n * per_unit * 0.9  # the measurement the costs were taken from


def test_a_text_held_wide_is_counted_wide():
    """One emoji stores the whole text (and its strings) at 4 bytes a character."""
    narrow = json.dumps(["a" * 1000])
    wide = json.dumps(["a" * 1000 + "\U0001f600"], ensure_ascii=False)
    escaped = json.dumps(["a" * 1000 + "\U0001f600"])  # \ud83d\ude00: the string only
    assert plain.json_shape(narrow).width == 1 and plain.json_shape(narrow).text_bytes == 1004
    assert plain.json_shape(wide).width == 4 and plain.json_shape(wide).text_bytes == 4 * len(wide)
    assert plain.json_shape(escaped).width == 4
    assert plain.json_shape(escaped).text_bytes == len(escaped)
    assert plain.utf8_width(b"abc") == 1 and plain.utf8_width("\u00e9".encode()) == 1
    assert plain.utf8_width("\u0101".encode()) == 2 and plain.utf8_width("\U0001f600".encode()) == 4


def test_a_costly_text_is_refused_before_parsing():
    text = "[" + ",".join(["{}"] * 10_000) + "]"
    with pytest.raises(plain.TooLarge, match="reading it would take about 2 MiB"):
        plain.check_json_cost(text, "f.json", 1 << 20, 1 << 22)
    with pytest.raises(plain.TooLarge, match="f.json: more than 9999 values"):
        plain.check_json_cost(text, "f.json", 1 << 30, 9_999)
    shape = plain.check_json_cost(text, "f.json", 1 << 30, 10_001)
    assert (shape.objects, shape.items) == (10_000, 10_001)  # the list's items and itself
    with pytest.raises(UsageError, match="nested deeper than 64 levels"):
        plain.check_json_cost("[" * 65 + "]" * 65, "f.json", 1 << 30, 1 << 22)


@pytest.mark.parametrize(
    "text, deeper",
    [
        ("x = " + "[" * 100 + "]" * 100, True),
        ("x = " + "{a = " * 100 + "1" + "}" * 100, True),
        ('x = "' + "[" * 100 + '"', False),
        ("x = '''" + "[" * 100 + "'''", False),
        ("# " + "[" * 100 + "\nx = 1", False),
        ("".join(f"[a{i}]\n" for i in range(100)), False),
    ],
)
def test_toml_depth(text, deeper):
    if deeper:
        with pytest.raises(UsageError, match="nested deeper than 64 levels"):
            plain.check_toml_depth(text, "s")
    else:
        plain.check_toml_depth(text, "s")
        tomllib.loads(text)


def test_every_builtin_scenario_is_far_from_the_limit():
    for path in (ROOT / "scenarios").glob("*.toml"):
        text = path.read_text()
        assert plain.toml_depth(text) < 8
        assert plain.data_depth(tomllib.loads(text)) < 8


def test_the_schemas_are_valid_draft_2020_12():
    for path in (ROOT / "bridge" / "report").glob("*.schema.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_report_validates(path):
    data = json.loads(path.read_text())
    jsonschema.Draft202012Validator(check.schema()).validate(data)
    check.check(data, str(path))
    assert plain.json_depth(path.read_text()) <= 8
    schema.load(path)


def test_written_reports_validate_too():
    """What bridge writes is what it reads: each fixture written again."""
    for path in REPORTS:
        data = json.loads(schema.dumps(schema.load(path)))
        check.check(data, str(path))


def test_reportcheck_names_the_place_in_one_line():
    data = json.loads((FIXTURES / "report-hmac-sha1-v1.json").read_text())
    data["results"][3]["hw"] = "sideways\n\x1b[31m"
    with pytest.raises(UsageError) as caught:
        check.check(data, "r.json")
    message = caught.value.one_line()
    assert message.startswith("r.json: not a valid bridge report ($.results[3].hw: ")
    assert "\x1b" not in message and "\n" not in caught.value.message


TWINS = json.loads((ROOT / "bridge" / "report" / "twins-1.schema.json").read_text())
entries = st.dictionaries(
    st.text(max_size=10),
    st.none()
    | st.integers()
    | st.dictionaries(
        st.sampled_from(["OPENSSL_ia32cap", "OPENSSL_armcap", "LD_PRELOAD"]),
        st.sampled_from([":~0x20000000", "0x3d", "", "$(x)", 5]),
        max_size=2,
    ),
    max_size=4,
)


@settings(max_examples=200, deadline=None)
@given(entries)
def test_the_twins_check_is_its_schema(data):
    """bridge.measure.twins checks the cache without jsonschema (run after run);
    the published schema says the same."""
    by_schema = jsonschema.Draft202012Validator(TWINS).is_valid(data)
    by_code = not any(twins.twins_problem(k, v) for k, v in data.items())
    assert by_schema == by_code, data


def test_a_run_does_not_import_jsonschema():
    """jsonschema takes a noticeable time to import: only reading a report pays it."""
    code = (
        "import sys, bridge.cli.main, bridge.measure.runner, bridge.cli.plans;"
        " import bridge.measure.startup, bridge.catalog.scenario;"
        "assert 'jsonschema' not in sys.modules, 'imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
