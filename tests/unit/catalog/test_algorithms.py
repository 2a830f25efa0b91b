"""The algorithms of issue 14 in the fast tier: scenario kinds and their
validation, the calls they name, the seeded inputs, the driver's own
references (checked against cryptography), the per-call output checks (good
and bad outputs), `openssl speed -mr` public-key records, and the listing."""

from __future__ import annotations

import dataclasses

import pytest

from bridge.analysis import interop
from bridge.catalog import calls, inputs, scenario
from bridge.cli import listing
from bridge.crypto import curve25519, ec, rsa
from bridge.errors import UsageError
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.runtimes import openssl as openssl_runtime

NEW = (
    "strong-rand-bytes",
    "pbkdf2-sha256",
    "aes-128-gcm",
    "aes-128-gcm-vaes",
    "chacha20-poly1305",
    "ed25519",
    "rsa-2048",
    "x25519",
    "ecdh-p256",
    "sha3-256",
    "blake2b-512",
)


# -- scenarios -------------------------------------------------------------------


@pytest.mark.parametrize("name", NEW)
def test_new_scenarios_load_and_round_trip(name):
    sc = scenario.load(name)
    again = scenario.parse(sc.to_json(), "again")
    assert dataclasses.replace(again, path=sc.path) == sc


def base(kind: str, **over) -> dict:
    return {"name": "t", "description": "t", "kind": kind, "sizes": [32], **over}


@pytest.mark.parametrize(
    "data, key, expected",
    [
        (
            base("agreement", curve="x25519", sizes=[64], calls={"python": ["exchange"]}),
            "sizes",
            "[32]",
        ),
        (base("agreement", curve="p521", calls={"python": ["exchange"]}), "curve", "x25519, p256"),
        (
            base(
                "kdf",
                digest="sha256",
                key_bytes=32,
                sizes=[20_000_000],
                calls={"python": ["pbkdf2_hmac"]},
            ),
            "sizes",
            "iteration counts",
        ),
        (
            base("kdf", digest="md5", key_bytes=32, calls={"python": ["pbkdf2_hmac"]}),
            "digest",
            "sha",
        ),
        (base("rsa", bits=1024, digest="sha256", calls={"python": ["sign_pkcs1"]}), "bits", "2048"),
        (base("eddsa", curve="ed448", calls={"python": ["eddsa_sign"]}), "curve", "ed25519"),
        (
            base("random", digest="sha256", calls={"python": ["os.urandom"]}),
            "digest",
            "no 'digest'",
        ),
    ],
)
def test_new_kinds_refuse_bad_fields(data, key, expected):
    with pytest.raises(UsageError) as err:
        scenario.parse(data, "t.toml")
    assert f"key '{key}'" in err.value.one_line() and expected in err.value.one_line()


def test_aead_calls_need_an_aead_cipher():
    data = base("cipher", cipher="aes-128-cbc", sizes=[16], calls={"python": ["aead-reuse"]})
    with pytest.raises(UsageError, match="needs an AEAD cipher, and aes-128-cbc is not one"):
        scenario.parse(data, "t.toml")


def test_a_calls_kind_is_checked_against_the_scenario():
    data = base("random", calls={"erlang": ["pbkdf2_hmac"]})
    with pytest.raises(UsageError, match="unknown call 'pbkdf2_hmac' for kind 'random'"):
        scenario.parse(data, "t.toml")


def test_kdf_sizes_are_iterations_and_agreement_keeps_its_size():
    kdf = scenario.load("pbkdf2-sha256")
    assert kdf.size_unit == "iterations" and kdf.sizes == (1000, 100000)
    x = scenario.load("x25519")
    assert x.with_sizes((64,)).sizes == (32,)  # --sizes leaves a secret's length alone


# -- the call table --------------------------------------------------------------


def test_release_dependent_calls_say_which_release():
    assert calls.CALLS["erlang", "pbkdf2_hmac"].requires == "OTP 24.2"
    assert calls.CALLS["erlang", "aead_init"].requires == "OTP 28.0"
    assert calls.CALLS["openssl", "kdf"].requires == "OpenSSL 3.0"


def test_unchecked_calls_say_why():
    for call in calls.CALLS.values():
        if call.role == "setup" and call.id != "import":
            assert call.unchecked, call.id
    assert "AEAD" in calls.CALLS["openssl", "speed-aead"].unchecked
    assert calls.CALLS["openssl", "speed-ecdh"].unchecked


def test_randomised_calls_declare_a_check_that_needs_no_equal_bytes():
    for call in calls.CALLS.values():
        if call.randomised:
            assert call.check in (
                calls.Check.SIGNATURE,
                calls.Check.DISTINCT,
                calls.Check.AGREEMENT,
            ), call.id


def test_os_urandom_is_not_openssl():
    assert calls.CALLS["python", "os.urandom"].route is calls.Route.KERNEL
    from bridge.hw import ab

    rt = schema.Runtime(id="python@3", kind="python", executable="", version="")
    assert not ab.via_openssl(rt, "os.urandom") and ab.via_openssl(rt, "ssl.RAND_bytes")


# -- inputs ------------------------------------------------------------------------


def test_rsa_key_is_derived_from_the_seed_reproducibly():
    sc = scenario.load("rsa-2048")
    a, b = inputs.for_scenario(1, sc, 64), inputs.for_scenario(1, sc, 64)
    assert a.parts == b.parts and len(a.parts) == 8
    e, n, d, p, q, dp, dq, qinv = (int.from_bytes(x, "big") for x in a.parts)
    assert p * q == n and n.bit_length() == 2048 and e == 65537
    assert pow(pow(12345, e, n), d, n) == 12345
    assert (dp, dq, qinv) == (d % (p - 1), d % (q - 1), pow(q, -1, p))
    assert inputs.for_scenario(2, sc, 64).parts != a.parts  # another seed, another key


def test_agreement_inputs_keep_the_peers_private_key_in_the_driver():
    sc = scenario.load("ecdh-p256")
    data = inputs.for_scenario(1, sc, 32)
    assert data.size == 32 and "peer_key" not in data.wire()
    assert data.pub == ec.public_key("p256", int.from_bytes(data.peer_key, "big"))
    assert data.to_json()["peer_key_hex"] == data.peer_key.hex()


def test_kdf_and_random_cells_are_sized_by_their_count():
    kdf = inputs.for_scenario(1, scenario.load("pbkdf2-sha256"), 100000)
    assert kdf.size == 100000 and kdf.wire()["count"] == 100000 and len(kdf.iv) == 16
    assert inputs.for_scenario(1, scenario.load("strong-rand-bytes"), 1000).size == 1000


# -- the driver's references -----------------------------------------------------------


def test_rsa_reference_against_cryptography():
    crypto_rsa = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.rsa")
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    key = inputs.rsa_key(1, scenario.load("rsa-2048"))
    public = crypto_rsa.RSAPublicNumbers(key.e, key.n)
    private = crypto_rsa.RSAPrivateNumbers(
        key.p, key.q, key.d, key.dp, key.dq, key.qinv, public
    ).private_key()
    pss = padding.PSS(padding.MGF1(hashes.SHA256()), 32)
    assert private.sign(b"m", padding.PKCS1v15(), hashes.SHA256()) == rsa.sign_pkcs1(
        key, "sha256", b"m"
    )
    public.public_key().verify(
        rsa.sign_pss(key, "sha256", b"m", b"s" * 32), b"m", pss, hashes.SHA256()
    )
    theirs = private.sign(b"m", pss, hashes.SHA256())
    assert rsa.verify_pss((key.e, key.n), "sha256", b"m", theirs, 32)
    assert not rsa.verify_pss((key.e, key.n), "sha256", b"n", theirs, 32)
    # PSS salts at random: flip a bit (a last byte set to 0 was already 0 once in 256 runs).
    assert not rsa.verify_pss(
        (key.e, key.n), "sha256", b"m", theirs[:-1] + bytes([theirs[-1] ^ 1]), 32
    )


def test_ed25519_rfc8032_test_vector_1():
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    public = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    sig = bytes.fromhex(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    )
    assert curve25519.ed25519_public(seed) == public
    assert curve25519.ed25519_sign(seed, b"") == sig
    assert curve25519.ed25519_verify(public, b"", sig)
    assert not curve25519.ed25519_verify(public, b"x", sig)


def test_x25519_rfc7748_test_vector():
    k = bytes.fromhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4")
    u = bytes.fromhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c")
    expected = "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"
    assert curve25519.x25519(k, u).hex() == expected


def test_ecdh_against_cryptography():
    crypto_ec = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")
    a, b = ec.private_scalar("p256", b"\x01" * 40), ec.private_scalar("p256", b"\x02" * 40)
    ours = ec.shared_secret("p256", a.to_bytes(32, "big"), ec.public_key("p256", b))
    key_a = crypto_ec.derive_private_key(a, crypto_ec.SECP256R1())
    key_b = crypto_ec.derive_private_key(b, crypto_ec.SECP256R1())
    assert ours == key_a.exchange(crypto_ec.ECDH(), key_b.public_key())
    assert ec.shared_secret("p256", b"\x01" * 32, b"\x04" + b"\x00" * 64) is None  # off the curve


# -- per-call checks ------------------------------------------------------------------


def check(sc, size, outputs):
    """An interop check of results with the given {(kind, call_id): output}."""
    data = inputs.for_scenario(1, sc, size)
    runtimes, results = {}, []
    for (kind, cid), out in outputs.items():
        rid = f"{kind}@1"
        runtimes[rid] = schema.Runtime(id=rid, kind=kind, executable="", version="")
        results.append(
            schema.Result(
                scenario=sc.name,
                runtime=rid,
                call=cid,
                call_id=cid,
                api="",
                semantics="",
                algorithm="",
                size=size,
                hw=Hw.ON,
                samples=(1,),
                loops=1,
                output_hex=out.hex(),
            )
        )
    (c,) = interop.checks(
        [sc.with_sizes((size,))], results, list(runtimes.values()), lambda s, n: data
    )
    return c, data


def bad(c) -> set[str]:
    return {k.call_id for k in c.mismatched}


def test_random_outputs_must_differ_and_have_the_length_asked_for():
    sc = scenario.load("strong-rand-bytes")
    c, _ = check(
        sc,
        16,
        {
            ("erlang", "strong_rand_bytes"): b"a" * 16 + b"b" * 16,
            ("python", "os.urandom"): b"a" * 32,  # twice the same bytes
            ("python", "ssl.RAND_bytes"): b"a" * 16 + b"b" * 15,  # one byte short
        },
    )
    assert bad(c) == {"os.urandom", "ssl.RAND_bytes"} and c.reference_from == interop.FROM_OWN


def test_rsa_outputs_are_checked_per_call():
    sc = scenario.load("rsa-2048")
    data = inputs.for_scenario(1, sc, 64)
    key = inputs.rsa_key(1, sc)
    pss = rsa.sign_pss(key, "sha256", data.data, b"\x07" * 32)
    good = {
        ("erlang", "sign_pkcs1"): data.sig,
        ("erlang", "sign_pss"): pss,
        ("erlang", "verify_pss"): b"\x01",
        ("erlang", "import"): data.parts[1],
        ("python", "load"): b"",
    }
    c, _ = check(sc, 64, good)
    assert c.match and [k.call_id for k in c.unchecked] == ["load"]
    assert "no output" in next(iter(c.unchecked_reasons.values()))
    wrong = {
        ("erlang", "sign_pkcs1"): pss,
        ("erlang", "sign_pss"): pss[:-1] + bytes([pss[-1] ^ 1]),
        ("erlang", "verify_pss"): b"\x00",
        ("erlang", "import"): data.parts[0],
    }
    assert bad(check(sc, 64, wrong)[0]) == {"sign_pkcs1", "sign_pss", "verify_pss", "import"}


def test_eddsa_signatures_must_equal_the_drivers():
    sc = scenario.load("ed25519")
    data = inputs.for_scenario(1, sc, 64)
    c, _ = check(sc, 64, {("erlang", "eddsa_sign"): data.sig, ("python", "eddsa_verify"): b"\x01"})
    assert c.match
    flipped = data.sig[:-1] + bytes([data.sig[-1] ^ 1])
    assert bad(check(sc, 64, {("erlang", "eddsa_sign"): flipped})[0]) == {"eddsa_sign"}


@pytest.mark.parametrize("name", ["x25519", "ecdh-p256"])
def test_fresh_key_agreements_are_derived_again_by_the_driver(name):
    sc = scenario.load(name)
    data = inputs.for_scenario(1, sc, 32)
    fresh = inputs.agreement_private(9, sc, "fresh")
    fresh_pub = inputs.agreement_public(sc.curve, fresh)
    secret = interop.shared_secret(sc.curve, fresh, data.pub)
    static = interop.shared_secret(sc.curve, data.key, data.pub)
    c, _ = check(
        sc,
        32,
        {("erlang", "generate+compute"): fresh_pub + secret, ("erlang", "compute_key"): static},
    )
    assert c.match
    wrong = {
        ("erlang", "generate+compute"): fresh_pub + static,
        ("python", "exchange"): secret,
    }
    assert bad(check(sc, 32, wrong)[0]) == {"generate+compute", "exchange"}


def test_pbkdf2_reference_is_hashlibs():
    sc = scenario.load("pbkdf2-sha256")
    data = inputs.for_scenario(1, sc, 1000)
    import hashlib

    expected = hashlib.pbkdf2_hmac("sha256", data.key, data.iv, 1000, 32)
    assert interop.reference(sc, data) == expected


# -- openssl speed -mr public-key records --------------------------------------------

SPEED_30 = """+DTP:253:sign:Ed25519:1
+R8:12997:253:Ed25519:1.00
+DTP:253:verify:Ed25519:1
+R9:5530:253:Ed25519:1.00
+F6:0:253:Ed25519:12997.000000:5530.000000
+DTP:2048:private:rsa:1
+R1:1061:2048:1.00
+DTP:2048:public:rsa:1
+R2:29379:2048:1.00
+DTP:256::ecdh:1
+R7:13454:256:1.00
+DTP:256:sign:ecdsa:1
+R5:15945:256:1.00
"""


def test_pkey_records_of_every_family():
    found = openssl_runtime.parse_mr_pkey_ops(SPEED_30)
    assert found[("ed25519", "sign")] == (12997, 1_000_000_000)
    assert found[("ed25519", "verify")][0] == 5530
    assert found[("rsa", "private")][0] == 1061 and found[("rsa", "public")][0] == 29379
    assert found[("ecdh", "")] == (13454, 1_000_000_000)
    assert found[("ecdsa", "sign")][0] == 15945
    assert openssl_runtime.parse_mr_pkey(SPEED_30) == {"sign": (15945, 1_000_000_000)}


# -- listing ------------------------------------------------------------------------


def test_list_groups_scenarios_by_kind():
    text = listing.list_text()
    headings = [line.split(":")[0] for line in text.splitlines() if line and not line[0].isspace()]
    assert headings == [
        k for k in scenario.KINDS if any(line.startswith(f"{k}:") for line in text.splitlines())
    ]
    for kind, name in [
        ("kdf", "pbkdf2-sha256"),
        ("agreement", "x25519"),
        ("random", "strong-rand-bytes"),
    ]:
        section = text.split(f"\n{kind}:")[1].split("\n\n")[0]
        assert name in section


def test_show_lists_each_call_per_runtime_with_its_needs():
    text = listing.show_text("pbkdf2-sha256")
    assert "sizes 1000, 100000 iterations" in text
    assert "# erlang:\n#   pbkdf2_hmac: crypto:pbkdf2_hmac(sha256" in text
    assert "needs: OTP 24.2" in text and "needs: OpenSSL 3.0" in text
    assert text.splitlines()[0].startswith("# ") and 'name = "pbkdf2-sha256"' in text
    shown = listing.show_text("rsa-2048")
    assert "load: load_der_private_key(der, None)" in shown
    assert "output: not checked (openssl speed works on its own key and buffer)" in shown
