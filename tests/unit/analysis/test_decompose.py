"""The cost decomposition on fixed records: set-up timed alone, found by
difference with a prepared call on the same libcrypto, refused against
another library, and a release without the calls; and its sentences."""

from __future__ import annotations

import pytest

from bridge.analysis import decompose
from bridge.catalog import scenario
from bridge.cli.common import rendered
from bridge.report import schema
from bridge.report.findings import Reason, Why
from bridge.report.hw import Hw
from bridge.view import Detail, notes
from bridge.view.context import Context

LIB = "OpenSSL 3.0.19 27 Jan 2026"


def runtime(kind: str, library: str = LIB) -> schema.Runtime:
    details = {
        "erlang": {"crypto_lib": library},
        "python": {"ssl_openssl_version": library},
        "openssl": {},
    }[kind]
    version = library if kind == "openssl" else "1"
    return schema.Runtime(
        id=f"{kind}@1", kind=kind, executable="", version=version, details=details
    )


def result(sc, kind, call_id, ns, size=64, status="ok", reason=""):
    samples = (
        tuple(round(ns * f) for f in (0.98, 0.99, 1.0, 1.0, 1.01, 1.02)) if status == "ok" else ()
    )
    return schema.Result(
        scenario=sc.name,
        runtime=f"{kind}@1",
        call=f"{call_id}()",
        call_id=call_id,
        api="",
        semantics="",
        algorithm=sc.algorithm,
        size=size,
        hw=Hw.ON,
        samples=samples,
        loops=1,
        output_hex="",
        status=status,
        reason=reason,
    )


ECDSA = scenario.load("ecdsa-p256")
GCM = scenario.load("aes-128-gcm")


def test_python_key_load_against_a_prepared_key_and_alone():
    results = [
        result(ECDSA, "python", "sign+load", 154_000),
        result(ECDSA, "python", "load", 47_000),
        result(ECDSA, "python", "sign", 57_000),
    ]
    (d,) = decompose.decompose([ECDSA], results, [runtime("python")])
    assert (d.method, d.call_id, d.prepared_ns) == (decompose.BY_DIFFERENCE, "sign+load", 57_000)
    assert d.setup_ns == pytest.approx(97_000) and d.share == pytest.approx(97 / 154)
    assert d.setup_ci95[0] <= 97_000 <= d.setup_ci95[1]
    assert (d.alone, d.alone_ns) == ("load()", 47_000)
    sentence = setup_sentence(d)
    assert "spends ~97.0 µs of 154 µs (63%) loading the key" in sentence
    assert "done once, python@1 sign() takes 57.0 µs; load() alone takes 47.0 µs." in sentence
    assert "same libcrypto" not in sentence


def test_a_set_up_alone_without_a_prepared_call_is_timed_alone():
    results = [
        result(ECDSA, "python", "sign+load", 154_000),
        result(ECDSA, "python", "load", 47_000),
    ]
    (d,) = decompose.decompose([ECDSA], results, [runtime("python")])
    assert (d.method, d.setup_ns, d.prepared_ns) == (decompose.TIMED_ALONE, 47_000, None)
    assert setup_sentence(d).endswith("(timed alone).")


def test_erlang_import_is_the_difference_with_openssl_on_the_same_libcrypto():
    results = [
        result(ECDSA, "erlang", "sign", 72_000),
        result(ECDSA, "openssl", "speed-sign", 22_000),
    ]
    (d,) = decompose.decompose([ECDSA], results, [runtime("erlang"), runtime("openssl")])
    assert d.method == decompose.BY_DIFFERENCE and d.setup_ns == pytest.approx(50_000)
    assert d.prepared == "speed-sign() on the same libcrypto" and d.prepared_ns == 22_000
    sentence = setup_sentence(d)
    assert "spends ~50.0 µs of 72.0 µs (69%) importing the raw key" in sentence
    assert "speed-sign() on the same libcrypto takes 22.0 µs (so the difference" in sentence


def test_no_difference_is_taken_against_another_library():
    results = [
        result(ECDSA, "erlang", "sign", 72_000),
        result(ECDSA, "openssl", "speed-sign", 22_000),
    ]
    rts = [runtime("erlang", "OpenSSL 1.1.1w  11 Sep 2023"), runtime("openssl")]
    (d,) = decompose.decompose([ECDSA], results, rts)
    assert d.setup_ns is None and d.note is None
    other = {"runtime": "openssl@1", "theirs": "OpenSSL 3.0.19", "ours": "OpenSSL 1.1.1"}
    assert d.reasons == (Reason(Why.OTHER_LIBRARY, other),)
    assert "no prepared call on the same library" in setup_sentence(d)


def test_a_release_without_the_calls_says_why_per_size():
    why = "no reusable AEAD context before OTP 28; this node is OTP 25"
    results = [
        result(GCM, "erlang", "crypto_one_time", 2_000, size=1200),
        result(GCM, "erlang", "aead_init", 0, size=1200, status="unsupported", reason=why),
        result(GCM, "erlang", "aead_init_only", 0, size=1200, status="unsupported", reason=why),
    ]
    (d,) = decompose.decompose([GCM], results, [runtime("erlang")])
    assert d.setup_ns is None and d.reasons == (Reason(Why.UNSUPPORTED, {"reason": why}),)  # once
    assert why in setup_sentence(d)


def test_before_otp_28_an_aead_is_set_against_openssl_speed_aead():
    why = "no reusable AEAD context before OTP 28; this node is OTP 25"
    results = [
        result(GCM, "erlang", "crypto_one_time", 2_500, size=64),
        result(GCM, "erlang", "aead_init", 0, size=64, status="unsupported", reason=why),
        result(GCM, "erlang", "aead_init_only", 0, size=64, status="unsupported", reason=why),
        result(GCM, "openssl", "speed-aead", 1_300, size=64),
    ]
    (d,) = decompose.decompose([GCM], results, [runtime("erlang"), runtime("openssl")])
    assert d.method == decompose.BY_DIFFERENCE and d.setup_ns == pytest.approx(1_200)
    assert d.prepared == "speed-aead() on the same libcrypto" and d.alone_ns is None


def test_a_scenario_without_set_up_rows_gets_no_decomposition():
    plain = scenario.load("aes-256-gcm")
    results = [result(plain, "python", "cryptography", 3_000)]
    assert decompose.decompose([plain], results, [runtime("python")]) == []


def test_sizes_of_one_call_share_a_sentence():
    results = []
    for size, (whole, reused) in {64: (3800, 800), 1200: (4400, 1200)}.items():
        results += [
            result(GCM, "python", "cryptography", whole, size),
            result(GCM, "python", "aead-reuse", reused, size),
        ]
    ds = decompose.decompose([GCM], results, [runtime("python")])
    report = _report(ds, results)
    (note,) = notes.setup_costs(Context(report, Detail.NORMAL), GCM.name)
    sentence = note.text
    assert "~3.00 µs of 3.80 µs (79%) at 64 B; ~3.20 µs of 4.40 µs (73%) at 1200 B" in sentence
    assert "takes 0.80 µs, 1.20 µs at 64 B, 1200 B." in sentence
    # Every view says it; the JSON keeps the records.
    for fmt in ("table", "markdown", "text"):
        assert "3.20" in rendered(fmt, report)
    again = schema.Report.from_json(report.to_json())
    assert again.decompositions == report.decompositions


def setup_sentence(d) -> str:
    (note,) = notes.setup_costs(Context(_report([d]), Detail.NORMAL), d.scenario)
    return note.text


def _report(ds, results=()) -> schema.Report:
    return schema.Report(
        bridge_version="0",
        created="",
        command=[],
        reproduce="",
        settings={},
        environment={},
        runtimes=(runtime("python"), runtime("erlang"), runtime("openssl")),
        results=tuple(results),
        scenarios=(ECDSA.to_json(), GCM.to_json()),
        decompositions=tuple(ds),
    )
