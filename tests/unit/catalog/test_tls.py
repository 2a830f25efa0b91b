"""The tls kind in the fast tier: its scenario files and their validation,
its calls (a role per protocol version, full or resumed), the negotiated
parameters (their text, what each call must report, a wrong one named), the
Python handshakes themselves over memory BIOs with certificates made by
bridge.system.tlscert (no socket: a few milliseconds each), and the reader
of the handshake messages the Python client receives."""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat

import pytest

from bridge.analysis import interop
from bridge.catalog import calls, inputs, negotiated, scenario, vocab
from bridge.catalog.inputs import TlsFiles
from bridge.errors import OperationError, UsageError
from bridge.report import schema
from bridge.report.hw import Hw
from tests.unit.catalog.test_algorithms import bad, base

NAMES = ["tls-handshake", "tls-handshake-p256", "tls-rsa2048", "tls-mtls", "tls-resume"]
needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")


@pytest.mark.parametrize("name", NAMES)
def test_tls_scenarios_load_round_trip_and_keep_their_size(name):
    sc = scenario.load(name)
    assert isinstance(sc, scenario.TlsScenario) and sc.sizes == (1,)
    assert scenario.parse(sc.to_json(), "again") == dataclasses.replace(sc, path="again")
    assert sc.with_sizes((64, 1024)).sizes == (1,)
    assert set(sc.features) == {"adx", "bmi2"}


def test_each_scenario_says_what_it_is_and_the_old_ones_write_as_before():
    rsa, mtls, resume = (scenario.load(n) for n in ("tls-rsa2048", "tls-mtls", "tls-resume"))
    assert (rsa.cert, rsa.client_cert, rsa.resumption) == ("rsa2048", False, False)
    assert (mtls.cert, mtls.client_cert, mtls.resumption) == ("ecdsa-p256", True, False)
    assert (resume.cert, resume.client_cert, resume.resumption) == ("ecdsa-p256", False, True)
    # Keys at their defaults are not written: reports of the older scenarios
    # keep their scenario text.
    old = scenario.load("tls-handshake").to_json()
    assert "cert" not in old and "client_cert" not in old
    assert rsa.to_json()["cert"] == "rsa2048" and mtls.to_json()["client_cert"] is True
    # A resumed call anywhere in the scenario makes every server keep sessions.
    plain = scenario.load("tls-handshake")
    assert not plain.resumption and plain.with_call("openssl", "resume-1.2").resumption
    assert resume.params() == {
        "group": "x25519",
        "tls_cert": "ecdsa-p256",
        "client_auth": 0,
        "resumption": 1,
    }


@pytest.mark.parametrize(
    "over, key, expected",
    [
        ({"sizes": [2]}, "sizes", "[1], one handshake per call"),
        ({"group": "p384"}, "group", "x25519, p256"),
        ({"cert": "rsa4096"}, "cert", "ecdsa-p256, rsa2048"),
        ({"client_cert": "yes"}, "client_cert", "true or false"),
        ({"curve": "p256"}, "curve", "no 'curve' for kind 'tls'"),
    ],
)
def test_tls_fields_are_validated(over, key, expected):
    data = base("tls", group="x25519", calls={"python": ["handshake-1.3"]}) | {"sizes": [1]}
    with pytest.raises(UsageError) as err:
        scenario.parse(data | over, "t.toml")
    assert f"key '{key}'" in err.value.one_line() and expected in err.value.one_line()


def test_each_version_full_or_resumed_is_a_role_of_its_own_in_every_runtime():
    ids = ["handshake-1.2", "handshake-1.3", "resume-1.2", "resume-1.3"]
    for kind in vocab.RUNTIME_KINDS:
        assert calls.serving(kind, "tls") == ids
        for cid in ids:
            call = calls.CALLS[kind, cid]
            v = cid.split("-")[1]
            assert call.role == cid and f"TLS {v}" in call.label(None, "")
            assert calls.TLS_OPS[call.op] == v and call.check is calls.Check.NEGOTIATED
            assert (call.op in calls.TLS_RESUME_OPS) == cid.startswith("resume")


# -- the negotiated parameters -------------------------------------------------

FULL13 = {
    "protocol": "TLSv1.3",
    "suite": "TLS_AES_256_GCM_SHA384",
    "group": "x25519",
    "sigalg": "ecdsa_secp256r1_sha256",
    "cert": "00112233aabbccdd",
    "resumed": "no",
    "client_cert": "none",
}


def test_the_output_text_reads_back_and_refuses_anything_else():
    text = negotiated.encode(FULL13)
    assert text.startswith(b"protocol=TLSv1.3 suite=") and negotiated.decode(text) == FULL13
    # Order is FIELDS', whatever the mapping's; a field not given is left out.
    assert negotiated.encode({"suite": "S", "protocol": "P"}) == b"protocol=P suite=S"
    for junk in (
        b"TLSv1.3 TLS_AES_256_GCM_SHA384",
        b"protocol=a protocol=b",
        b"color=red",
        b"\xff",
    ):
        assert negotiated.decode(junk) is None


def test_what_each_call_must_report():
    v13, v12 = vocab.TLS_VERSIONS["1.3"], vocab.TLS_VERSIONS["1.2"]
    x, ecdsa, rsa = (
        vocab.TLS_GROUPS["x25519"],
        vocab.TLS_CERTS["ecdsa-p256"],
        vocab.TLS_CERTS["rsa2048"],
    )
    prints = ("00112233aabbccdd", "none")
    assert negotiated.expected(v13, x, ecdsa, False, prints) == FULL13
    # TLS 1.3 resumes with a fresh key exchange and no signature; TLS 1.2 with neither.
    r13 = negotiated.expected(v13, x, ecdsa, True, prints)
    assert (r13["group"], r13["sigalg"], r13["resumed"]) == ("x25519", "none", "yes")
    r12 = negotiated.expected(v12, x, ecdsa, True, prints)
    assert (r12["group"], r12["sigalg"], r12["suite"]) == ("none", "none", ecdsa.suite12)
    full_rsa = negotiated.expected(v12, x, rsa, False, ("aa", "bb"))
    assert full_rsa["suite"] == "ECDHE-RSA-AES256-GCM-SHA384"
    assert full_rsa["sigalg"] == "rsa_pss_rsae_sha256" and full_rsa["client_cert"] == "bb"


def test_a_runtime_may_leave_out_group_and_signature_but_nothing_it_gives_may_differ():
    good = negotiated.encode(FULL13)
    quiet = negotiated.encode({k: v for k, v in FULL13.items() if k not in ("group", "sigalg")})
    assert negotiated.agrees(good, FULL13) and negotiated.agrees(quiet, FULL13)
    for key, wrong in [
        ("group", "secp256r1"),
        ("sigalg", "rsa_pss_rsae_sha256"),
        ("cert", "ffffffffffffffff"),
        ("resumed", "yes"),
        ("client_cert", "0123456789abcdef"),
    ]:
        assert not negotiated.agrees(negotiated.encode(FULL13 | {key: wrong}), FULL13), key
    without_cert = {k: v for k, v in FULL13.items() if k != "cert"}
    assert not negotiated.agrees(negotiated.encode(without_cert), FULL13)


def tls_check(sc, outputs, files):
    """An interop check of TLS results: {(kind, call_id): output}."""
    data = inputs.Inputs(key=b"", data=b"", count=1, tls=files)
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
                size=1,
                hw=Hw.ON,
                samples=(1,),
                loops=1,
                output_hex=out.hex(),
            )
        )
    (c,) = interop.checks([sc], results, list(runtimes.values()), lambda s, n: data)
    return c


def test_a_handshake_that_negotiated_anything_else_is_named():
    sc = scenario.load("tls-resume")
    files = TlsFiles("c.pem", "k.pem", "ca.pem", "00112233aabbccdd")
    want = {
        cid: interop.tls_expected(
            sc, calls.CALLS["python", cid], inputs.Inputs(b"", b"", tls=files)
        )
        for cid in calls.serving("python", "tls")
    }
    erl = {k: v for k, v in want["handshake-1.3"].items() if k not in ("group", "sigalg")}
    c = tls_check(
        sc,
        {
            ("erlang", "handshake-1.3"): negotiated.encode(erl),
            ("python", "resume-1.3"): negotiated.encode(want["resume-1.3"]),
            ("openssl", "resume-1.2"): negotiated.encode(want["resume-1.2"]),
            # a full handshake where a resumed one was asked for
            ("python", "resume-1.2"): negotiated.encode(want["handshake-1.2"]),
            # the old output, protocol and suite alone
            ("openssl", "handshake-1.3"): b"TLSv1.3 TLS_AES_256_GCM_SHA384",
        },
        files,
    )
    assert not c.match and bad(c) == {"resume-1.2", "handshake-1.3"}
    assert {(k.runtime, k.call_id) for k in c.mismatched} == {
        ("python@1", "resume-1.2"),
        ("openssl@1", "handshake-1.3"),
    }
    assert "client's certificate" in c.reference


# -- the reader of the handshake's messages ------------------------------------


def test_the_client_reads_the_group_and_the_signature_off_the_wire():
    from bridge.pyworker import tls

    def message(kind, body):
        return bytes([kind]) + len(body).to_bytes(3, "big") + body

    # A TLS 1.3 ServerHello: version, random, an empty session id, the
    # suite, no compression, then supported_versions and key_share(x25519).
    exts = bytes.fromhex("002b00020304") + bytes.fromhex("00330024001d0020") + b"\x01" * 32
    hello = (
        b"\x03\x03" + b"\x00" * 32 + b"\x00" + b"\x13\x02\x00" + len(exts).to_bytes(2, "big") + exts
    )
    seen = tls.Seen()
    seen.read(tls.SERVER_HELLO, message(2, hello))
    seen.read(tls.CERTIFICATE_VERIFY, message(15, bytes.fromhex("08040002") + b"\x00\x00"))
    assert (seen.group, seen.sigalg) == ("x25519", "rsa_pss_rsae_sha256")
    # A TLS 1.2 ServerKeyExchange: named curve secp256r1, a 65-byte point,
    # then ecdsa_secp256r1_sha256; a ServerHello without extensions changes nothing.
    ske = b"\x03\x00\x17\x41" + b"\x04" * 65 + bytes.fromhex("0403") + b"\x00\x02\x00\x00"
    seen = tls.Seen()
    seen.read(tls.SERVER_HELLO, message(2, b"\x03\x03" + b"\x00" * 32 + b"\x00\xc0\x2c\x00"))
    seen.read(tls.SERVER_KEY_EXCHANGE, message(12, ske))
    assert (seen.group, seen.sigalg) == ("secp256r1", "ecdsa_secp256r1_sha256")
    # An unknown code point is kept as a number, not dropped.
    seen.read(tls.CERTIFICATE_VERIFY, message(15, bytes.fromhex("fe010000")))
    assert seen.sigalg == "0xfe01"


# -- the Python handshakes, for real -------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    from bridge.system import tlscert

    private = tmp_path_factory.mktemp("private")
    os.chmod(private, 0o700)
    out = {(c, m): tlscert.make(str(private), c, m) for c in vocab.TLS_CERTS for m in (False, True)}
    return private, out


@needs_openssl
def test_the_certificates_are_private_and_each_ca_key_is_gone(made):
    private, out = made
    names = sorted(os.listdir(private))
    assert not [n for n in names if n.endswith("-ca-key.pem") or n.endswith(".csr")]
    for files in out.values():
        assert stat.S_IMODE(os.stat(files.key).st_mode) == 0o600
        with open(files.cert) as f:
            assert negotiated.pem_fingerprint(f.read()) == files.cert_print
    mutual = out["rsa2048", True]
    assert mutual.client_cert and mutual.client_print != mutual.cert_print
    assert out["ecdsa-p256", False].client_cert == ""


def wire(files: TlsFiles, cert: str, resumption: bool, group: str = "x25519") -> dict:
    args = {"group": group.encode(), "tls_cert": cert, "resumption": int(resumption)}
    args |= inputs.Inputs(b"", b"", tls=files).wire()
    args["client_auth"] = int(bool(files.client_cert))
    return args


@needs_openssl
@pytest.mark.parametrize("cert", list(vocab.TLS_CERTS))
@pytest.mark.parametrize("mutual", [False, True])
def test_python_handshakes_negotiate_what_every_runtime_must(made, cert, mutual):
    from bridge.pyworker import tls

    files = made[1][cert, mutual]
    sc = scenario.TlsScenario(
        name="t", description="t", sizes=(1,), group="x25519", cert=cert, client_cert=mutual
    )
    data = inputs.Inputs(b"", b"", tls=files)
    for cid in calls.serving("python", "tls"):
        call = calls.CALLS["python", cid]
        version, resumed = calls.TLS_OPS[call.op], call.op in calls.TLS_RESUME_OPS
        _, once, loop = tls.prepare(wire(files, cert, resumed), version, resumed)
        out = once()
        assert negotiated.agrees(out, interop.tls_expected(sc, call, data)), (cid, out)
        before = loop.server_cpu_ns()
        loop(2)
        assert loop.server_cpu_ns() > before  # the server's own calls took CPU


@needs_openssl
def test_a_client_that_does_not_trust_the_ca_or_has_no_certificate_is_refused(made):
    from bridge.pyworker import tls

    files = made[1]["ecdsa-p256", True]
    untrusted = dataclasses.replace(files, ca=files.cert)
    _, once, _ = tls.prepare(wire(untrusted, "ecdsa-p256", False), "1.3", False)
    with pytest.raises(OperationError, match="certificate verify failed"):
        once()
    # Mutual TLS: a client without its certificate does not get through.
    args = wire(files, "ecdsa-p256", False)
    server, client = tls.contexts(args, "1.2")
    bare = dataclasses.replace(files, client_cert="", client_key="")
    _, plain_client = tls.contexts(wire(bare, "ecdsa-p256", False) | {"client_auth": 0}, "1.2")
    hs = tls.Handshakes(server, plain_client)
    with pytest.raises(OperationError, match="certificate"):
        hs.one()
    del client


@needs_openssl
def test_the_probe_reads_its_own_handshake_while_other_threads_shake_hands(made):
    """--concurrency's threads share a cell's contexts: each thread's probe
    (once) reads only its own handshake's messages, whatever the others do."""
    import threading

    from bridge.pyworker import tls

    files = made[1]["ecdsa-p256", False]
    _, once, loop = tls.prepare(wire(files, "ecdsa-p256", False), "1.3", False)
    outs: list[bytes] = []
    stop = threading.Event()

    def shake() -> None:
        while not stop.is_set():
            loop(1)

    def probe() -> None:
        outs.extend(once() for _ in range(5))

    busy = [threading.Thread(target=shake) for _ in range(2)]
    probes = [threading.Thread(target=probe) for _ in range(2)]
    for t in busy + probes:
        t.start()
    for t in probes:
        t.join()
    stop.set()
    for t in busy:
        t.join()
    assert len(outs) == 10 and len(set(outs)) == 1
    assert b"group=x25519" in outs[0] and b"sigalg=ecdsa_secp256r1_sha256" in outs[0]
