"""Tests moved from test_model.py."""

from __future__ import annotations

import json
import os

import pytest

from bridge.errors import UsageError
from bridge.report import schema as model
from bridge.report.hw import Hw
from bridge.system import output


def make_report(**over) -> model.Report:
    result = model.Result(
        scenario="hmac-sha1",
        runtime="erlang@25.2.3",
        call="crypto:macN(hmac, sha, Key, Data, 10)",
        call_id="macN",
        api="crypto:macN/5",
        semantics="one-shot",
        algorithm="hmac-sha1",
        size=1000,
        hw=Hw.ON,
        samples=(20_000_000, 21_000_000, 19_000_000),
        loops=8000,
        output_hex="00" * 10,
        inputs={"key_hex": "01", "data_hex": "02"},
    )
    fields = dict(
        bridge_version="0.1.0",
        created="2026-11-30T00:00:00+00:00",
        command=["bridge", "run"],
        reproduce="bridge run hmac-sha1 --seed 1",
        settings={"seed": 1},
        environment={"arch": "x86_64"},
        runtimes=(
            model.Runtime(
                "erlang@25.2.3",
                "erlang",
                "/usr/bin/erl",
                "OTP 25.2.3",
                {"otp_release": "25", "crypto_lib": "OpenSSL 3.0.19"},
            ),
        ),
        results=(result,),
    )
    fields.update(over)
    return model.Report(**fields)


def test_result_json_has_the_documented_fields():
    d = make_report().to_json()["results"][0]
    assert d["ns_per_op"]["median"] == 2500.0
    assert d["ns_per_op"]["ci95"] == [2375.0, 2625.0]
    assert d["ops_per_s"] == pytest.approx(400_000)
    assert d["bytes_per_s"] == pytest.approx(400_000_000)
    assert d["samples"] == [20_000_000, 21_000_000, 19_000_000] and d["loops"] == 8000
    assert {"mean", "stdev", "min"} <= set(d["ns_per_op"])


def test_round_trip():
    report = make_report()
    again = model.Report.from_json(json.loads(model.dumps(report)))
    assert again.to_json() == report.to_json()


def test_per_run_loops_for_openssl_style_samples():
    r = model.Result.from_json(
        {
            **make_report().to_json()["results"][0],
            "samples": [1_000_000_000, 2_000_000_000],
            "loops": [1000, 1000],
        }
    )
    assert r.per_op_ns() == [1_000_000.0, 2_000_000.0]


@pytest.mark.parametrize(
    "schema, message",
    [
        (None, "no 'schema'"),
        ("bridge.report/2", "newer bridge"),
        ("other/1", "unknown schema"),
        ("bridge.report/x", "unknown schema"),
    ],
)
def test_schema_checks(schema, message):
    d = make_report().to_json()
    d["schema"] = schema
    with pytest.raises(UsageError, match=message):
        model.Report.from_json(d)


def test_missing_field_is_named():
    d = make_report().to_json()
    del d["results"][0]["scenario"]
    with pytest.raises(UsageError, match="missing field 'scenario'"):
        model.Report.from_json(d)


def test_load_errors(tmp_path):
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "text").write_text("not json")
    for name, message in [("bin", "binary"), ("text", "not JSON"), ("none", "no such file")]:
        with pytest.raises(UsageError, match=message):
            model.load(tmp_path / name)
    with pytest.raises(UsageError, match="directory"):
        model.load(tmp_path)


def test_write_atomic_replaces_and_leaves_no_temporaries(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    output.write_atomic(target, "new")
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["r.json"]


def test_write_atomic_into_missing_directory_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError):
        output.write_atomic(tmp_path / "no" / "r.json", "x")
