"""The reasons a verdict carries and a library's build record
(bridge.report.whynot): each written with its code first, read back by that
code, and matching its branch of the published JSON Schema; a report that
holds them is checked like any other, and a bad one refused in one line."""

from __future__ import annotations

import json

import jsonschema
import pytest

from bridge.errors import UsageError
from bridge.report import check, codec, schema
from bridge.report.findings import PARAMS, Why
from bridge.report.whynot import (
    KINDS,
    BypassesEvp,
    Clue,
    CpuLacks,
    EnvMasks,
    LibraryBuild,
    NoAsm,
    NoCapvector,
    NoneFound,
    Sign,
    Source,
    TooSmall,
    decode,
)
from tests.conftest import FIXTURES, ROOT

SCHEMA = json.loads((ROOT / "bridge" / "report" / "report-1.schema.json").read_text())


def part(name: str) -> dict:
    """The schema of one of the published definitions."""
    return {"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"}


EVIDENCE = (
    Clue(Source.LIBRARY, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),
    Clue(Source.FILE, Sign.NO_ASM_CODE, "0"),
)
EXAMPLES = [
    CpuLacks("sha", Source.CPUINFO),
    EnvMasks("OPENSSL_ia32cap", ":~0x20000000"),
    NoAsm("/cache/lib/libcrypto.so.3", "OpenSSL 3.5.7 9 Jun 2026", EVIDENCE),
    NoCapvector("/cache/lib/libcrypto.so.3", "OpenSSL 3.5.7 9 Jun 2026", EVIDENCE[:1]),
    BypassesEvp("_sha2.SHA256Type"),
    TooSmall(16, 16384, 3.12),
    NoneFound(16384),
]


def test_every_reason_has_an_example():
    assert {type(e) for e in EXAMPLES} == set(KINDS.values())
    assert set(KINDS) == {
        Why.CPU_LACKS,
        Why.ENV_MASKS,
        Why.NO_ASM,
        Why.NO_CAPVECTOR,
        Why.BYPASSES_EVP,
        Why.TOO_SMALL,
        Why.NONE_FOUND,
    }
    # Each record's fields are its code's parameters.
    for example in EXAMPLES:
        assert set(example.params()) == PARAMS[example.reason]


@pytest.mark.parametrize("why", EXAMPLES, ids=lambda w: w.reason.value)
def test_a_reason_is_written_code_first_and_read_back_by_it(why):
    data = why.to_json()
    assert next(iter(data)) == "reason" and data["reason"] == why.reason.value
    assert decode(json.loads(json.dumps(data))) == why
    jsonschema.validate(data, part("why_not"))


@pytest.mark.parametrize("why", EXAMPLES, ids=lambda w: w.reason.value)
def test_the_schema_branch_of_a_reason_lists_exactly_its_keys(why):
    (branch,) = [
        b
        for b in SCHEMA["$defs"]["why_not"]["oneOf"]
        if b["properties"]["reason"]["const"] == why.reason.value
    ]
    assert set(branch["properties"]) == set(codec.keys(type(why)))
    assert set(branch["required"]) == set(codec.keys(type(why)))


def test_a_reason_that_is_not_one_is_refused():
    assert decode(None) is None
    with pytest.raises(ValueError, match="is not one of"):
        decode({"reason": "gremlins"})
    with pytest.raises(TypeError):
        decode(["no-asm"])
    with pytest.raises(KeyError):
        decode({"reason": "too-small", "size": 16})


def test_a_library_build_record_round_trips_and_validates():
    build = LibraryBuild("/cache/lib/libcrypto.so.3", "OpenSSL 3.5.7", EVIDENCE, (Source.FILE,))
    data = build.to_json()
    assert LibraryBuild.from_json(data) == build
    jsonschema.validate(data, part("library_build"))
    assert LibraryBuild().to_json() == {"clues": []}


def _report_with(why_json, library_json=None) -> dict:
    data = json.loads((FIXTURES / "report-hmac-sha1-v1.json").read_text())
    data["verdicts"][0]["why"] = why_json
    if library_json is not None:
        exp = data["hardware"]["experiments"][0]
        exp["library"] = library_json
    return data


def test_a_report_carries_them_through_the_check_and_the_records():
    data = _report_with(EXAMPLES[2].to_json(), LibraryBuild("/x", "v", EVIDENCE).to_json())
    check.check(data, "r.json")
    report = schema.Report.from_json(data)
    assert report.verdicts[0].why == EXAMPLES[2]
    assert report.hardware.experiments[0].library.clues == EVIDENCE
    assert report.to_json()["verdicts"][0]["why"] == EXAMPLES[2].to_json()


@pytest.mark.parametrize(
    "why",
    [
        {"reason": "gremlins"},
        {"reason": "too-small", "size": 16},
        {"reason": "env-masks", "variable": "X", "value": "1", "extra": 1},
        {"reason": "no-asm", "library": "x", "version": "v", "evidence": [{"sign": "asm"}]},
    ],
)
def test_a_report_with_a_bad_reason_is_refused_in_one_line(why):
    with pytest.raises(UsageError, match="not a valid bridge report") as caught:
        check.check(_report_with(why), "r.json")
    assert "\n" not in str(caught.value)
