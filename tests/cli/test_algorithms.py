"""The algorithms of issue 14 through the real CLI, on the real runtimes: one
short run per scenario (every call it names gives a result, every output is
checked or unchecked with its reason), and one run on Debian bullseye's
OTP 23 / OpenSSL 1.1.1w, where the calls those releases lack are
`unsupported` cells that say why. Timings are never asserted."""

from __future__ import annotations

import json

import pytest

from bridge.catalog import scenario
from tests.conftest import bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]

SHORT = [
    *("--samples", "2", "--sample-ms", "1", "--rounds", "1"),
    *("--openssl-runs", "1", "--warmup-ms", "1", "--hw", "on"),
]
# Each scenario once, at one small size (iterations for pbkdf2), in groups
# that share a size: one bridge process, one node start per group. ecdsa-p256
# is here for its new rows (the key load) and its decomposition.
# The opt-in alternatives (`--with`) ride along in the groups of their kinds.
GROUPS = {
    "random-and-kdf": (
        ("strong-rand-bytes", "pbkdf2-sha256"),
        ["--sizes", "1000", "--with", "rand_bytes", "--with", "pbkdf2_mac"]
        + ["--with", "erlang:pbkdf2_mac_init"],
    ),
    "aead": (("aes-128-gcm", "chacha20-poly1305", "aes-128-gcm-vaes"), ["--sizes", "1200"]),
    "curves": (
        ("ed25519", "x25519", "ecdh-p256", "ecdsa-p256"),
        ["--with", "public_key:sign", "--with", "public_key:verify"],
    ),
    "rsa": (("rsa-2048",), []),
    "digests": (("sha3-256", "blake2b-512"), ["--sizes", "64", "--with", "hash_init"]),
}
# What each --with adds, per scenario of its kind.
ADDED = {
    "strong-rand-bytes": {("erlang", "rand_bytes")},
    "pbkdf2-sha256": {("erlang", "pbkdf2_mac"), ("erlang", "pbkdf2_mac_init")},
    "ecdsa-p256": {("erlang", "public_key:sign"), ("erlang", "public_key:verify")},
    "sha3-256": {("erlang", "hash_init")},
    "blake2b-512": {("erlang", "hash_init")},
}
# Calls a release may lack, and what the reason must name.
MAY_LACK = {("erlang", "aead_init"): "OTP 28", ("erlang", "aead_init_only"): "OTP 28"}


def run(tmp_path, *args, env=None):
    out = tmp_path / "r.json"
    done = bridge_cmd("run", *args, *SHORT, "-o", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(out.read_text()), done


def kind(report, runtime_id):
    return next(rt["kind"] for rt in report["runtimes"] if rt["id"] == runtime_id)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_scenario_runs_and_checks_its_outputs(tmp_path, group):
    pytest.importorskip("cryptography")
    names, extra = GROUPS[group]
    report, done = run(tmp_path, *names, *extra)
    for name in names:
        check_scenario(report, name)
        EXTRA.get(name, lambda report, done, name: None)(report, done, name)


def check_scenario(report, name):
    sc = scenario.load(name)
    results = [r for r in report["results"] if r["scenario"] == name]
    cells = {(kind(report, r["runtime"]), r["call_id"]): r for r in results}
    named = {(k, cid) for k, ids in sc.calls.items() for cid in ids} | ADDED.get(name, set())
    assert set(cells) == named, (name, named ^ set(cells))
    # The report records the added calls with its scenario, so a replay runs them too.
    (recorded,) = [d for d in report["scenarios"] if d["name"] == name]
    assert {(k, cid) for k, ids in recorded["calls"].items() for cid in ids} == named
    for key, r in cells.items():
        if r["status"] != "ok":
            assert key in MAY_LACK and MAY_LACK[key] in r["reason"], (key, r)
    (check,) = [c for c in report["interop"] if c["scenario"] == name]
    assert check["match"], check
    # Checked, or unchecked with the reason its call declares.
    assert set(check["unchecked"]) == set(check.get("unchecked_reasons", {})), check
    assert all(check.get("unchecked_reasons", {}).values())


def mine(report, key, name):
    return [x for x in report[key] if x["scenario"] == name]


def random_bytes(report, done, name):
    for r in mine(report, "results", name):  # two outputs of 1000 bytes each, checked as different
        assert len(bytes.fromhex(r["output_hex"])) == 2000
    (alt,) = [r for r in mine(report, "results", name) if r["call_id"] == "rand_bytes"]
    assert alt["api"] == "rand:bytes/1"


def pbkdf2(report, done, name):
    table = done.stdout.split(f"== {name}:")[1]
    assert "iterations" in table.splitlines()[1]  # the column says what the sizes count
    assert {r["size"] for r in mine(report, "results", name)} == {1000}
    (check,) = mine(report, "interop", name)
    assert check["reference_from"].startswith("the driver")
    # PBKDF2 written over crypto:mac computes the bytes crypto:pbkdf2_hmac does.
    apis = {r["call_id"]: r["api"] for r in mine(report, "results", name)}
    assert "crypto:mac/4" in apis["pbkdf2_mac"] and "mac_init/3" in apis["pbkdf2_mac_init"]


def aead(report, done, name):
    by = {
        (d["runtime"].split("@")[0], d["call_id"]): d for d in mine(report, "decompositions", name)
    }
    py = by[("python", "cryptography")]
    assert py["method"] == "by difference" and py["prepared_ns"] > 0
    erl = by[("erlang", "crypto_one_time")]
    lacks = any(r["status"] == "unsupported" for r in mine(report, "results", name))
    # Before OTP 28 the prepared call is openssl speed -aead on the same libcrypto.
    assert erl["method"] == "by difference"
    assert erl["prepared"].endswith("on the same libcrypto") == lacks
    # The view says each set-up cost under its scenario: one paragraph a call.
    section = done.stdout.split(f"== {name}:")[1].split("\n== ")[0]
    said = [x for x in section.splitlines() if x.startswith("Set-up: ")]
    assert len(said) == len(by), said
    assert any(x.startswith("Set-up: Python ") for x in said), said
    assert any(x.startswith("Set-up: Erlang crypto:crypto_one_time_aead(") for x in said), said


def rsa(report, done, name):
    kinds = {
        (d["runtime"].split("@")[0], d["call_id"]): d for d in mine(report, "decompositions", name)
    }
    by = {kind: d for (kind, call_id), d in kinds.items() if call_id.startswith("sign")}
    assert by["python"]["call_id"] == "sign_pkcs1+load" and by["python"]["alone_ns"] > 0
    assert by["erlang"]["alone"] == "crypto:privkey_to_pubkey(rsa, Priv)"
    assert by["erlang"]["prepared"].endswith("on the same libcrypto")
    assert by["erlang"]["method"] == "by difference"
    # The verify side: crypto:verify imports the public key on every call.
    check = kinds[("erlang", "verify_pkcs1")]
    assert check["method"] == "by difference" and check["prepared"].endswith("same libcrypto")
    verify = [r for r in mine(report, "results", name) if r["call_id"].startswith("verify")]
    assert verify and all(r["output_hex"] == "01" for r in verify)


def ecdsa(report, done, name):
    kinds = {
        (d["runtime"].split("@")[0], d["call_id"]): d for d in mine(report, "decompositions", name)
    }
    by = {kind: d for (kind, call_id), d in kinds.items() if call_id.startswith("sign")}
    assert by["erlang"]["method"] == "by difference" and by["erlang"]["prepared_ns"] > 0
    assert by["erlang"]["alone_ns"] is None  # crypto cannot import an EC key alone
    assert by["python"]["method"] == "by difference" and by["python"]["alone_ns"] > 0
    check = kinds[("erlang", "verify")]  # the verify side, against openssl speed's verify
    assert check["method"] == "by difference" and check["prepared_ns"] > 0
    apis = {r["call_id"]: r["api"] for r in mine(report, "results", name)}
    assert apis["public_key:sign"] == "public_key:sign/3"
    assert apis["public_key:verify"] == "public_key:verify/4"


def blake2b(report, done, name):
    (py,) = [r for r in mine(report, "results", name) if r["runtime"].startswith("python")]
    assert "not OpenSSL" in py["api"]


EXTRA = {
    "strong-rand-bytes": random_bytes,
    "pbkdf2-sha256": pbkdf2,
    "aes-128-gcm": aead,
    "chacha20-poly1305": aead,
    "rsa-2048": rsa,
    "ecdsa-p256": ecdsa,
    "blake2b-512": blake2b,
}


def test_otp23_and_openssl_111_say_what_they_lack(tmp_path, bullseye):
    report, done = run(
        tmp_path,
        "pbkdf2-sha256",
        "aes-128-gcm",
        "x25519",
        "--sizes",
        "1000",
        "--with",
        "pbkdf2_mac",
        "--runtimes",
        "erlang,openssl",
        "--erl",
        str(bullseye.erl),
        "--openssl",
        str(bullseye.openssl),
    )
    cells = {(r["scenario"], r["call_id"]): r for r in report["results"]}
    lacking = {k: r["reason"] for k, r in cells.items() if r["status"] != "ok"}
    assert set(lacking) == {
        ("pbkdf2-sha256", "pbkdf2_hmac"),
        ("pbkdf2-sha256", "kdf"),
        ("aes-128-gcm", "aead_init"),
        ("aes-128-gcm", "aead_init_only"),
    }
    assert "OTP 24.2" in lacking[("pbkdf2-sha256", "pbkdf2_hmac")]
    assert "this node is OTP 23" in lacking[("pbkdf2-sha256", "pbkdf2_hmac")]
    assert "OpenSSL 3.0" in lacking[("pbkdf2-sha256", "kdf")]
    assert "OTP 28" in lacking[("aes-128-gcm", "aead_init")]
    # What they have runs, and computes the right bytes.
    assert cells[("aes-128-gcm", "crypto_one_time")]["status"] == "ok"
    assert cells[("x25519", "generate+compute")]["status"] == "ok"
    # Where OTP 23 lacks pbkdf2_hmac/5, the PBKDF2 written over crypto:mac runs.
    assert cells[("pbkdf2-sha256", "pbkdf2_mac")]["status"] == "ok"
    assert all(c["match"] for c in report["interop"])
    assert "unsupported" in done.stdout and "crypto:pbkdf2_hmac/5 came in OTP 24.2" in done.stdout
