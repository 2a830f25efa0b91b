"""bridge.report.codec on its own: what a field's metadata does, and how a
malformed report is refused (one line naming the key)."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import ClassVar

import pytest

from bridge.errors import UsageError
from bridge.report import codec, schema
from bridge.report.codec import EMPTY, NONE, Record, jf
from tests.conftest import FIXTURES


@dataclass(frozen=True)
class Inner(Record):
    a: int
    pair: tuple[float, float] | None = None


@dataclass(frozen=True)
class Outer(Record):
    name: str = jf(key="title")
    note: str = jf(missing="older")
    inner: Inner | None = jf(omit=NONE, default=None)
    items: tuple[Inner, ...] = jf(omit=EMPTY, default=())
    hidden: int = jf(write=False, default=3)

    json_order: ClassVar[tuple[str, ...]] = ("items", "title")
    json_derived_keys: ClassVar[tuple[str, ...]] = ("twice",)

    def json_derived(self):
        return {"twice": self.name * 2}


def test_fields_are_written_as_their_metadata_says():
    x = Outer("ab", "n", Inner(1, (0.5, 2)), (Inner(2),))
    d = codec.to_json(x)
    assert list(d) == ["items", "title", "note", "inner", "twice"]
    assert d["inner"] == {"a": 1, "pair": [0.5, 2]} and d["items"] == [{"a": 2, "pair": None}]
    assert codec.from_json(Outer, d) == x
    assert codec.to_json(Outer("ab", "n")) == {"title": "ab", "note": "n", "twice": "abab"}


def test_a_key_missing_from_an_older_report_takes_its_default():
    assert Outer.from_json({"title": "t"}) == Outer("t", "older")
    with pytest.raises(KeyError, match="title"):
        Outer.from_json({"note": "n"})


def test_an_integer_in_a_float_field_is_written_back_as_it_was():
    assert (
        json.dumps(Inner.from_json({"a": 1, "pair": [1, 2]}).to_json())
        == '{"a": 1, "pair": [1, 2]}'
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"a": "1"}, "a: expected an integer, got a string"),
        ({"a": True}, "a: expected an integer, got a boolean"),
        ({"a": None}, "a: null where a value is required"),
        ({"a": 1, "pair": [1]}, "pair: expected 2 values, got 1"),
        ({"a": 1, "pair": "x"}, "pair: expected a list, got a string"),
    ],
)
def test_a_value_of_the_wrong_kind_is_refused(data, message):
    with pytest.raises((TypeError, ValueError), match=message):
        Inner.from_json(data)


def test_an_undeclared_derived_key_is_refused():
    @dataclass(frozen=True)
    class Sloppy(Record):
        a: int

        def json_derived(self):
            return {"b": 1}

    with pytest.raises(TypeError, match="undeclared keys"):
        codec.to_json(Sloppy(1))


def test_a_malformed_report_is_one_usage_error_naming_the_key():
    data = json.loads((FIXTURES / "report-hmac-sha1-v1.json").read_text())
    data["results"][2]["size"] = "big"
    with pytest.raises(UsageError) as caught:
        schema.Report.from_json(data, "r.json")
    assert caught.value.message == (
        "r.json: malformed bridge report (results: size: expected an integer, got a string)"
    )
    del data["results"][2]["size"]
    with pytest.raises(UsageError, match=r"malformed bridge report \(missing field 'size'\)"):
        schema.Report.from_json(data, "r.json")


class Mode(enum.Enum):
    ON = "on"
    OFF = "off"


@dataclass(frozen=True)
class Cell(Record):
    hw: Mode


def test_an_enum_field_is_written_as_its_value_and_read_back():
    assert Cell(Mode.OFF).to_json() == {"hw": "off"}
    assert Cell.from_json({"hw": "on"}) == Cell(Mode.ON)
    with pytest.raises(ValueError, match="hw: 'sideways' is not a valid Mode"):
        Cell.from_json({"hw": "sideways"})
