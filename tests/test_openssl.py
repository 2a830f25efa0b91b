"""The openssl runtime: -mr parsing on canned text, and the real binary."""

from __future__ import annotations

import hmac

from bridge import calls, inputs, scenario
from bridge.runtimes.base import BatchPlan
from bridge.runtimes.openssl import OpensslRuntime, parse_mr_runs, parse_version
from tests.conftest import FAST, needs_openssl

MR_STDERR = "+DT:hmac(sha1):1:1000\n+R:1155174:hmac(sha1):1.000000\n"


def test_parse_mr_runs():
    assert parse_mr_runs(MR_STDERR) == [(1155174, 1.0)]
    assert parse_mr_runs("nothing here") == []


def test_parse_version_lines():
    assert parse_version("OpenSSL 3.0.19 27 Jan 2026 (Library: ...)") == ("OpenSSL", (3, 0, 19))
    assert parse_version("OpenSSL 1.0.2g  1 Mar 2016") == ("OpenSSL", (1, 0, 2))
    assert parse_version("LibreSSL 3.8.2") == ("LibreSSL", (3, 8, 2))
    assert parse_version("bash: openssl: command not found") is None


@needs_openssl
def test_real_openssl_speed_and_mac_cross_check():
    sc = scenario.load("hmac-sha1")
    data = inputs.make(1, sc.name, sc.key_bytes, 1000)
    rt = OpensslRuntime(FAST)
    with rt as info:
        assert info.kind == "openssl" and info.id.startswith("openssl@")
        assert info.details["cpuinfo"] is None or "OPENSSL_" in info.details["cpuinfo"]
        batch = rt.bench(sc, calls.CALLS["openssl", "speed"], data, BatchPlan(2, 0))
    assert batch.output == hmac.digest(data.key, data.data, "sha1")[:10]
    assert len(batch.samples) == 2 and all(s > 0.5e9 for s in batch.samples)  # -seconds 1, ns
    assert all(n > 1000 for n in batch.loops)
    assert batch.api == "EVP_MAC (openssl speed -hmac)"
