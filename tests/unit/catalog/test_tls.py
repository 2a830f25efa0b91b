"""The tls kind in the fast tier: its scenario files and their validation,
its calls (a role per protocol version), the output check (the negotiated
protocol and suite; a wrong one is named), and the Python handshake itself
over memory BIOs with a certificate made by bridge.system.tlscert (no socket:
a few milliseconds)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat

import pytest

from bridge.catalog import calls, scenario, vocab
from bridge.errors import UsageError
from tests.unit.catalog.test_algorithms import bad, base, check


@pytest.mark.parametrize("name", ["tls-handshake", "tls-handshake-p256"])
def test_tls_scenarios_load_round_trip_and_keep_their_size(name):
    sc = scenario.load(name)
    assert isinstance(sc, scenario.TlsScenario) and sc.sizes == (1,)
    assert scenario.parse(sc.to_json(), "again") == dataclasses.replace(sc, path="again")
    assert sc.with_sizes((64, 1024)).sizes == (1,)
    assert set(sc.features) == {"adx", "bmi2"}


@pytest.mark.parametrize(
    "over, key, expected",
    [
        ({"sizes": [2]}, "sizes", "[1], one handshake per call"),
        ({"group": "p384"}, "group", "x25519, p256"),
        ({"curve": "p256"}, "curve", "no 'curve' for kind 'tls'"),
    ],
)
def test_tls_fields_are_validated(over, key, expected):
    data = base("tls", group="x25519", calls={"python": ["handshake-1.3"]}) | {"sizes": [1]}
    with pytest.raises(UsageError) as err:
        scenario.parse(data | over, "t.toml")
    assert f"key '{key}'" in err.value.one_line() and expected in err.value.one_line()


def test_each_version_is_a_role_of_its_own_in_every_runtime():
    for kind in vocab.RUNTIME_KINDS:
        assert calls.serving(kind, "tls") == ["handshake-1.2", "handshake-1.3"]
        for v in ("1.2", "1.3"):
            call = calls.CALLS[kind, f"handshake-{v}"]
            assert call.role == f"handshake-{v}" and f"TLS {v}" in call.label(None, "")
            assert calls.TLS_OPS[call.op] == v


def test_the_negotiated_parameters_are_checked_and_a_wrong_one_named():
    sc = scenario.load("tls-handshake")
    good13 = b"TLSv1.3 TLS_AES_256_GCM_SHA384"
    good12 = b"TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384"
    c, _ = check(
        sc,
        1,
        {
            ("erlang", "handshake-1.3"): good13,
            ("python", "handshake-1.3"): b"TLSv1.3 TLS_CHACHA20_POLY1305_SHA256",
            ("openssl", "handshake-1.2"): good12,
            ("python", "handshake-1.2"): good13,  # 1.3 where 1.2 was asked for
        },
    )
    assert not c.match and bad(c) == {"handshake-1.3", "handshake-1.2"}
    assert {(k.runtime, k.call_id) for k in c.mismatched} == {
        ("python@1", "handshake-1.3"),
        ("python@1", "handshake-1.2"),
    }


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_python_handshakes_over_memory_bios_with_a_run_time_certificate(tmp_path):
    from bridge.pyworker import tls
    from bridge.system import tlscert

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    cert, key, ca = tlscert.make(str(private))
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert sorted(os.listdir(private)) == [
        "tls-ca.pem",
        "tls-cert.pem",
        "tls-ext.cnf",
        "tls-key.pem",
        "tls.csr",
    ]  # the CA's key is gone once it has signed
    for group in vocab.TLS_GROUPS:
        args = {"group": group.encode(), "cert": cert, "cert_key": key, "ca": ca.encode()}
        for v, spec in vocab.TLS_VERSIONS.items():
            _, once, loop = tls.prepare(args, v)
            assert once() == f"{spec.protocol} {spec.suite}".encode()
            loop(2)
    # A client that does not trust the CA refuses the server.
    args = {"group": b"x25519", "cert": cert, "cert_key": key, "ca": cert}
    _, once, _ = tls.prepare(args, "1.3")
    with pytest.raises(Exception, match="certificate verify failed"):
        once()
