"""openssl s_server for the tls kind, with the real openssl: it listens on
127.0.0.1 only while the block runs, a port taken in the meantime is retried
on another, and it is killed and reaped after."""

from __future__ import annotations

import os
import shutil
import socket

import pytest

from bridge.catalog import scenario, vocab
from bridge.runtimes import openssl_tls
from bridge.system import tlscert

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")


def test_s_server_listens_on_loopback_for_the_block_only_and_retries_a_taken_port(
    tmp_path, monkeypatch
):
    cert, key, _ = tlscert.make(str(tmp_path))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = [taken.getsockname()[1]]  # taken: s_server exits, and another is tried
    real = openssl_tls.free_port
    monkeypatch.setattr(openssl_tls, "free_port", lambda: ports.pop() if ports else real())
    tail = ["-cert", cert, "-key", key, "-tls1_3", "-groups", "X25519", "-quiet"]
    try:
        with openssl_tls.server(shutil.which("openssl"), dict(os.environ), tail) as (port, child):
            assert port != taken.getsockname()[1]
            assert openssl_tls.listening(port, child.pid) and child.poll() is None
        assert child.returncode is not None  # reaped
        assert not openssl_tls.listening(port)
    finally:
        taken.close()


def test_the_client_offers_the_group_and_for_tls_12_the_certificates_curve():
    x, p = scenario.load("tls-handshake"), scenario.load("tls-handshake-p256")
    v13, v12 = vocab.TLS_VERSIONS["1.3"], vocab.TLS_VERSIONS["1.2"]
    assert openssl_tls.client_groups(x, v13) == "X25519"
    assert openssl_tls.client_groups(x, v12) == "X25519:prime256v1"
    assert openssl_tls.client_groups(p, v12) == "prime256v1"
