"""bridge.plain (bounded reading, nesting limits) and bridge.report.check
(the published JSON Schema and the checks beside it), on their own."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

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
