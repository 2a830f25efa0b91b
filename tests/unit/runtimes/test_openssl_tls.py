"""openssl s_server and s_time for the tls kind: s_server listens on
127.0.0.1 only while the block runs (the real openssl; a port taken in the
meantime is retried on another, and it is killed and reaped after); the
options each cell gives it; what s_client's output says was negotiated, and
s_time's count of resumed connections, on canned text."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

import pytest

from bridge.catalog import negotiated, scenario, vocab
from bridge.catalog.inputs import TlsFiles
from bridge.errors import OperationError
from bridge.runtimes import openssl_tls
from bridge.system import cpustat, tlscert

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
V13, V12 = vocab.TLS_VERSIONS["1.3"], vocab.TLS_VERSIONS["1.2"]
FILES = TlsFiles("s.pem", "s-key.pem", "ca.pem", "aa", "c.pem", "c-key.pem", "c-ca.pem", "bb")


@needs_openssl
def test_s_server_listens_on_loopback_for_the_block_only_and_retries_a_taken_port(
    tmp_path, monkeypatch
):
    files = tlscert.make(str(tmp_path), "ecdsa-p256", False)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = [taken.getsockname()[1]]  # taken: s_server exits, and another is tried
    real = openssl_tls.free_port
    monkeypatch.setattr(openssl_tls, "free_port", lambda: ports.pop() if ports else real())
    tail = ["-cert", files.cert, "-key", files.key, "-tls1_3", "-groups", "X25519", "-quiet"]
    try:
        with openssl_tls.server(shutil.which("openssl"), dict(os.environ), tail) as (port, child):
            assert port != taken.getsockname()[1]
            assert openssl_tls.listening(port, child.pid) and child.poll() is None
            # Its CPU time so far, read from its process CPU clock.
            assert cpustat.process_cpu_ns(child.pid) > 0
        assert child.returncode is not None  # reaped
        assert not openssl_tls.listening(port)
    finally:
        taken.close()


def test_the_client_offers_the_group_and_for_tls_12_the_certificates_curve():
    x, p = scenario.load("tls-handshake"), scenario.load("tls-handshake-p256")
    assert openssl_tls.client_groups(x, V13) == "X25519"
    assert openssl_tls.client_groups(x, V12) == "X25519:prime256v1"
    assert openssl_tls.client_groups(p, V12) == "prime256v1"


def test_the_servers_options_follow_the_scenario():
    plain, rsa = scenario.load("tls-handshake"), scenario.load("tls-rsa2048")
    mtls, resume = scenario.load("tls-mtls"), scenario.load("tls-resume")
    args = openssl_tls.server_args(plain, V13, FILES)
    assert args[args.index("-num_tickets") + 1] == "0" and "-Verify" not in args
    assert args[args.index("-ciphersuites") + 1] == "TLS_AES_256_GCM_SHA384"
    # TLS 1.2: no tickets (it resumes by session ID), the key's own suite,
    # P-256 after the group (a client certificate's curve, with mutual TLS).
    args = openssl_tls.server_args(rsa, V12, FILES)
    assert "-no_ticket" in args and "-num_tickets" not in args
    assert args[args.index("-cipher") + 1] == "ECDHE-RSA-AES256-GCM-SHA384"
    assert args[args.index("-groups") + 1] == "X25519:prime256v1"
    args = openssl_tls.server_args(mtls, V13, FILES)
    assert args[args.index("-Verify") :] == [
        "-Verify",
        "1",
        "-CAfile",
        "c-ca.pem",
        "-verify_return_error",
    ]
    assert openssl_tls.client_cert_args(mtls, FILES) == ["-cert", "c.pem", "-key", "c-key.pem"]
    assert openssl_tls.client_cert_args(plain, FILES) == []
    args = openssl_tls.server_args(resume, V13, FILES)
    assert args[args.index("-num_tickets") + 1] == "1"


PEM_SERVER = "-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----"
PEM_CLIENT = "-----BEGIN CERTIFICATE-----\nAwQF\n-----END CERTIFICATE-----"
S_CLIENT = f"""CONNECTED(00000003)
---
Server certificate
{PEM_SERVER}
subject=CN = localhost
---
Peer signing digest: SHA256
Peer signature type: RSA-PSS
Server Temp Key: X25519, 253 bits
---
New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384
---
HTTP/1.0 200 ok
Content-type: text/html

New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384
Peer signing digest: SHA256
Peer signature type: ECDSA
Client certificate
{PEM_CLIENT}
"""


def test_what_s_client_says_was_negotiated_its_own_lines_before_the_reply():
    fields = openssl_tls.read_s_client(S_CLIENT)
    assert fields == {
        "protocol": "TLSv1.3",
        "suite": "TLS_AES_256_GCM_SHA384",
        "group": "x25519",
        "sigalg": "rsa_pss_rsae_sha256",
        "cert": negotiated.fingerprint(bytes([0, 1, 2])),
        "resumed": "no",
        # the client certificate is the reply's: what s_server saw
        "client_cert": negotiated.fingerprint(bytes([3, 4, 5])),
    }
    # Resumed TLS 1.2 (1.1.1's P-256 spelling aside): no key exchange, no
    # signature; no client certificate in the reply.
    resumed = (
        S_CLIENT.replace("New, TLSv1.3", "Reused, TLSv1.2", 1)
        .replace("Peer signing digest: SHA256\nPeer signature type: RSA-PSS\n", "", 1)
        .replace("Server Temp Key: X25519, 253 bits\n", "", 1)
        .replace(f"Client certificate\n{PEM_CLIENT}", "no client certificate available")
    )
    fields = openssl_tls.read_s_client(resumed)
    assert (fields["resumed"], fields["group"], fields["sigalg"]) == ("yes", "none", "none")
    assert fields["client_cert"] == "none"
    p256 = S_CLIENT.replace("X25519, 253 bits", "ECDH, prime256v1, 256 bits")
    assert openssl_tls.read_s_client(p256)["group"] == "secp256r1"
    with pytest.raises(OperationError, match="no negotiated cipher"):
        openssl_tls.read_s_client("CONNECTED(00000003)\n")


def done(stdout: str) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess([], 0, stdout.encode(), b"")


def test_s_times_count_and_with_reuse_every_connection_resumed():
    new = (
        "Collecting connection statistics for 1 seconds\n****\n\n"
        "4 connections in 0.40s; 10.0 connections/user sec, bytes read 0\n"
        "4 connections in 2 real seconds, 0 bytes read per connection\n"
    )
    assert openssl_tls._connections(done(new), resumed=False) == 4
    reuse = new.replace(
        "Collecting connection statistics for 1 seconds\n****",
        "Now timing with session id reuse.\nstarting\nrrrr",
    )
    assert openssl_tls._connections(done(reuse), resumed=True) == 4
    with pytest.raises(OperationError, match="resumed 3 of 4"):
        openssl_tls._connections(done(reuse.replace("rrrr", "rr*r")), resumed=True)
    with pytest.raises(OperationError, match="no connection count"):
        openssl_tls._connections(done("nothing"), resumed=False)
