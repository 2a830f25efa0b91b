"""Hw (a cell's state) and HwMode (a run's choice): parsing, what callers ask
of them, and that reports written with them are the same JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.errors import UsageError
from bridge.report import levels, schema
from bridge.report.hw import Hw, HwMode

ROUNDTRIP = Path(__file__).parents[2] / "fixtures" / "roundtrip"


def test_a_member_is_the_text_it_names():
    assert Hw.ON == "on" and Hw.OFF == "off" and HwMode.BOTH == "both"
    assert f"{Hw.OFF} {HwMode.BOTH}" == "off both"
    assert {"on": 1}[Hw.ON] == 1  # hashes as its text: dicts keyed either way agree
    assert json.dumps({"hw": Hw.OFF, "mode": HwMode.BOTH}) == '{"hw": "off", "mode": "both"}'
    assert json.dumps([Hw.ON], indent=1) == json.dumps(["on"], indent=1)


def test_parsing_takes_exactly_the_members():
    assert Hw.parse("off", "x") is Hw.OFF
    assert HwMode.parse("both", "--hw") is HwMode.BOTH
    assert HwMode.parse(HwMode.ON, "--hw") is HwMode.ON
    assert Hw("on") is Hw.ON


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("both", "'both'"),  # a mode is not a cell state
        ("ON", "'ON'"),
        ("", "''"),
        (["on"], "['on']"),
        (None, "None"),
        ("\x1b[2Jx", "'\\x1b[2Jx'"),
        ("a" * 100, "'" + "a" * 36 + "..."),
    ],
)
def test_a_bad_state_is_one_escaped_line_naming_where(value, shown):
    with pytest.raises(UsageError) as caught:
        Hw.parse(value, "r.json: results[0].hw")
    message = str(caught.value)
    assert message == f"r.json: results[0].hw: {shown} is not one of on, off"
    assert message.isprintable()


def test_a_bad_mode_names_the_three_modes():
    with pytest.raises(UsageError, match=r"^--hw: 'maybe' is not one of on, off, both$"):
        HwMode.parse("maybe", "--hw")
    with pytest.raises(ValueError, match="is not one of on, off, both"):
        HwMode("sideways")


def test_what_a_mode_runs():
    assert [m.states for m in HwMode] == [(Hw.ON,), (Hw.OFF,), (Hw.ON, Hw.OFF)]
    assert [m.masks for m in HwMode] == [False, True, True]
    assert [m.as_found for m in HwMode] == [True, False, True]
    # Levels run once: as found, or masked when only the masked twin runs.
    assert [m.levels_state for m in HwMode] == [Hw.ON, Hw.OFF, Hw.ON]
    assert HwMode.default(True) is HwMode.BOTH and HwMode.default(False) is HwMode.ON


def test_a_state_says_whether_it_is_masked():
    assert not Hw.ON.masked and Hw.OFF.masked
    assert schema.Runtime("a", "python", "/x", "v", hw=Hw.OFF).masked
    assert not schema.Runtime("a", "python", "/x", "v").masked


@pytest.mark.parametrize("name", ["run-mix1", "versions-3otp-2openssl", "import-3.0"])
def test_reports_read_back_with_the_types_and_write_the_same_text(name):
    path = ROUNDTRIP / f"{name}.json"
    report = schema.load(path)
    assert report.hardware.hw is None or type(report.hardware.hw) is HwMode
    cells = [*report.results, *report.runtimes, *report.unstable, *report.fits]
    cells += [*(report.differences or ()), *report.upgrades, *report.tc]
    assert cells and all(type(c.hw) is Hw for c in cells)
    assert schema.dumps(report) == path.read_text()


def test_a_record_without_hw_is_as_found():
    d = json.loads((ROUNDTRIP / "run-mix1.json").read_text())["results"][0]
    del d["hw"]
    assert schema.Result.from_json(d).hw is Hw.ON
    assert schema.OutputKey.parse("erlang@25 macN hw=off").hw is Hw.OFF


def test_level_cells_read_back_with_the_state():
    cell = levels.LevelResult(
        scenario="s",
        runtime="r",
        call="c",
        call_id="c",
        mode="threads",
        semantics="",
        algorithm="",
        size=16,
        hw=Hw.OFF,
        level=2,
        raw=levels.LevelRaw(windows=(((10, 100), (10, 120)),)),
    )
    scaling = levels.Scaling("s", "r", "c", "threads", 16, Hw.OFF, 2, 1.9, None, 0.95)
    for record in (cell, scaling):
        d = json.loads(json.dumps(record.to_json()))
        again = type(record).from_json(d)
        assert d["hw"] == "off" and again.hw is Hw.OFF
        assert again.to_json() == d
