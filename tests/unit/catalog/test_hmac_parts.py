"""The hmac-parts scenario: the parts of an HMAC call run in the Python worker's
handlers (in-process here), make what they should, and their outputs, which
are no MAC, are listed as unchecked rather than as mismatches."""

from __future__ import annotations

import hashlib
import hmac

from bridge.analysis import interop
from bridge.catalog import calls, scenario
from bridge.pyworker import ops
from bridge.report import schema

KEY, DATA = b"k" * 20, b"m" * 1000


def args(**more):
    return {"key": KEY, "data": DATA, "digest": b"sha1", "mac_bytes": 10, **more}


def test_python_parts_make_what_they_say():
    full = hmac.digest(KEY, DATA, "sha1")[:10]
    for call_id, expected in (
        ("hmac.copy", b""),
        ("hmac.copy+update", b""),
        ("hmac.digest()", full),
        ("hashlib_only", hashlib.sha1(DATA).digest()),
        ("hmac.new+copy", full),
    ):
        api, once, loop = ops.prepare(calls.CALLS["python", call_id].op, args())
        assert once() == expected, call_id
        loop(3)


def test_the_scenario_names_each_part_once_per_runtime():
    sc = scenario.load("hmac-parts")
    assert sc.sizes == (16, 1000) and not sc.features
    parts = {
        (kind, cid)
        for kind, ids in sc.calls.items()
        for cid in ids
        if calls.CALLS[kind, cid].check is calls.Check.PART
    }
    assert parts == {
        ("erlang", "mac_init_only"),
        ("erlang", "hash_only"),
        ("erlang", "nif_floor"),
        ("python", "hmac.copy"),
        ("python", "hmac.copy+update"),
        ("python", "hashlib_only"),
    }
    # Every label says what it times, on this scenario.
    assert (
        calls.CALLS["erlang", "nif_floor"].label(sc, "") == "crypto:exor(M, M), M = 10 zero bytes"
    )


def test_part_outputs_are_unchecked_not_mismatched():
    sc = scenario.load("hmac-parts")

    def result(rid, call_id, out: bytes):
        return schema.Result(
            "hmac-parts", rid, call_id, call_id, "", "", "hmac-sha1", 16, "on", (1,), 1, out.hex()
        )

    good = hmac.digest(KEY, DATA[:16], "sha1")[:10]
    cell = [
        result("erlang@25.2.3", "macN", good),
        result("erlang@25.2.3", "hash_only", hashlib.sha1(DATA[:16]).digest()),
        result("erlang@25.2.3", "nif_floor", bytes(10)),
    ]
    kinds = {"erlang@25.2.3": "erlang"}
    check = interop._equal_bytes(sc, 16, cell, good, interop.parts(cell, kinds))
    assert check.match and not check.mismatched
    assert {k.call_id for k in check.unchecked} == {"hash_only", "nif_floor"}


def test_parts_are_never_the_fastest():
    # A part (the NIF floor, a plain digest...) is not a competitor of whole calls.
    sc = scenario.load("hmac-parts")
    for kind, ids in sc.calls.items():
        for cid in ids:
            call = calls.CALLS[kind, cid]
            assert call.part == (call.semantics_for(sc).startswith(("part", "floor"))), cid
            assert calls.is_part(kind, cid) == call.part
    assert calls.CALLS["python", "hmac.digest()"].check is calls.Check.REFERENCE  # a real MAC
