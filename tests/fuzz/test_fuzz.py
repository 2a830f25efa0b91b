"""Fuzzing the three parsers of untrusted input with Hypothesis, for a bounded
time: the report loader, the scenario loader and the openssl speed parser.
The only outcomes allowed are a result or a clean BridgeError."""

from __future__ import annotations

import contextlib
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.catalog import scenario
from bridge.errors import BridgeError
from bridge.report import schema
from bridge.speed import importer, parse
from tests.conftest import FIXTURES

BOUNDED = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=6)
    ),
    max_leaves=30,
)


REPORT = json.loads((FIXTURES / "report-hmac-sha1-v1.json").read_text())


scenario_keys = st.sampled_from(
    [
        "name",
        "description",
        "kind",
        "digest",
        "sizes",
        "key_bytes",
        "mac_bytes",
        "features",
        "calls",
        "source",
        "other",
    ]
)


speedish = st.lists(
    st.sampled_from(
        [
            "Doing sha1 for 3s on 16 size blocks: 100 sha1's in 1.00s",
            "type 16 bytes 64 bytes",
            "sha1 1.00k 2.00k",
            "+DT:sha1:1:16",
            "+R:10:sha1:1.0",
            "+H:16:64",
            "+F:1:sha1:1:2",
            "+F4:1:256:0.1:0.2",
            "sign verify sign/s verify/s",
            " 256 bit ecdsa (nistp256) 0.1s 0.2s 1 2",
            "OpenSSL 1.1.1 11 Sep 2018",
            "version: 3.0.2",
            "built on: x",
            "> ",
            "openssl speed sha1",
            "Doing 256 bit sign ecdsa's for 10s: 5 256 bit ECDSA signs in 0.00s",
        ]
    )
    | st.text(max_size=40),
    max_size=25,
)


@BOUNDED
@given(json_values)
def test_report_loader_on_any_json(data):
    with contextlib.suppress(BridgeError):
        schema.Report.from_json(data)


@BOUNDED
@given(st.sampled_from(sorted(REPORT)), json_values)
def test_report_loader_on_a_real_report_with_one_field_broken(field, value):
    data = dict(REPORT, **{field: value})
    try:
        report = schema.Report.from_json(data)
    except BridgeError:
        return
    schema.dumps(report)  # what loads also renders to JSON


@BOUNDED
@given(st.binary(max_size=400))
def test_report_file_loader_on_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("r") / "r.json"
    path.write_bytes(data)
    with contextlib.suppress(BridgeError):
        schema.load(path)


@BOUNDED
@given(st.dictionaries(scenario_keys, json_values, max_size=10))
def test_scenario_parser_on_any_table(data):
    with contextlib.suppress(BridgeError):
        scenario.parse(data, "fuzz.toml")


@BOUNDED
@given(st.text(max_size=300))
def test_scenario_loader_on_any_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("s") / "s.toml"
    path.write_text(text)
    with contextlib.suppress(BridgeError):
        scenario.load(str(path))


@BOUNDED
@given(speedish)
def test_speed_parser_on_speed_shaped_noise(lines):
    text = "\n".join(lines)
    try:
        report, _ = importer.to_report(text, "fuzz", ["bridge"])
    except BridgeError:
        return
    schema.Report.from_json(json.loads(schema.dumps(report)))  # a valid report


@BOUNDED
@given(st.text(max_size=2000))
def test_speed_parser_on_any_text(text):
    parse.parse(text)
