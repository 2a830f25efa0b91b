"""The real openssl binary: speed -mr parsed live, the MAC cross-check, and the
live openssl as the judge of bridge's model of the mask parser."""

from __future__ import annotations

import hmac
import os
import shutil
import subprocess

import pytest

from bridge.catalog import calls, inputs, scenario
from bridge.hw import hardware
from bridge.runtimes.base import BatchPlan, Job
from bridge.runtimes.openssl import OpensslRuntime, parse_ia32_vector
from bridge.system import environment
from tests.conftest import FAST, needs_openssl
from tests.unit.hw.test_hardware import DISABLED


def _live_openssl_3():
    exe = shutil.which("openssl")
    if exe is None:
        return None
    out = subprocess.run([exe, "version"], capture_output=True, text=True).stdout
    lib = hardware.parse_library(out)
    return exe if lib and lib[1] >= (3, 0, 0) else None


@pytest.mark.skipif(
    _live_openssl_3() is None or environment.cpu().arch != "x86_64",
    reason="needs OpenSSL 3 on x86_64 (it prints its effective vector)",
)
@pytest.mark.parametrize("value, feature, gen, off", [d for d in DISABLED if d[2] != "3.4"])
def test_simulation_agrees_with_the_real_openssl(value, feature, gen, off):
    """The parser simulation must say what the installed libcrypto does."""
    exe = _live_openssl_3()
    version = subprocess.run([exe, "version"], capture_output=True, text=True).stdout
    live_gen = hardware.generation(hardware.parse_library(version)[1])
    env = {k: v for k, v in os.environ.items() if k != "OPENSSL_ia32cap"}

    def vector(environ):
        done = subprocess.run([exe, "version", "-c"], capture_output=True, text=True, env=environ)
        return parse_ia32_vector(done.stdout)

    detected = vector(env)
    got = vector({**env, "OPENSSL_ia32cap": value})
    word, bit = hardware.IA32_BITS[feature]
    if not detected[word] & bit:
        pytest.skip(f"this CPU has no {feature}")
    really_off = not got[word] & bit
    assert really_off == hardware.feature_disabled_by(
        {"OPENSSL_ia32cap": value}, feature, "x86_64", live_gen
    )


@needs_openssl
def test_real_openssl_speed_and_mac_cross_check():
    sc = scenario.load("hmac-sha1")
    data = inputs.make(1, sc.name, sc.key_bytes, 1000)
    rt = OpensslRuntime(FAST)
    with rt as info:
        assert info.kind == "openssl" and info.id.startswith("openssl@")
        assert info.details.cpuinfo is None or "OPENSSL_" in info.details.cpuinfo
        batch = rt.bench(Job(sc, calls.CALLS["openssl", "speed"], data), BatchPlan(2, 0))
    assert batch.output == hmac.digest(data.key, data.data, "sha1")[:10]
    assert len(batch.samples) == 2 and all(s > 0.5e9 for s in batch.samples)  # -seconds 1, ns
    assert all(n > 1000 for n in batch.loops)
    assert batch.api == "EVP_MAC (openssl speed -hmac)"
