"""The A/B features of issue 14 (VAES, VPCLMULQDQ, ADX, BMI2): their bit
positions in OPENSSL_ia32cap under each generation's parser model, and every
bit checked against the live `openssl version -c` of this machine."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from bridge.hw import ab, hardware
from bridge.report import schema
from bridge.report.findings import Why, reason
from bridge.runtimes.openssl import check_mask, parse_ia32_vector
from bridge.system import environment

NEW = ("vaes", "vpclmul", "adx", "bmi2")


@pytest.mark.parametrize(
    "features, gen, expected",
    [
        (("vaes", "vpclmul"), "1.1", ":~0x60000000000"),
        (("vaes", "vpclmul"), "3.0", ":~0x60000000000"),
        (("vaes", "vpclmul"), "3.4", ":~0x60000000000::::"),
        (("adx", "bmi2"), "3.0", ":~0x80100"),
        (("adx", "bmi2"), "3.4", ":~0x80100::::"),
        (("aes", "pclmul", "vaes", "vpclmul"), "3.0", "~0x200000200000000:~0x60000000000"),
    ],
)
def test_masks_of_the_new_features_per_generation(features, gen, expected):
    assert hardware.ia32cap_mask(features, gen) == expected


@pytest.mark.parametrize(
    "value, feature, gen, off",
    [
        (":~0x60000000000", "vaes", "3.0", True),
        (":~0x60000000000", "vpclmul", "3.0", True),
        (":~0x60000000000", "adx", "3.0", False),
        (":~0x80100", "bmi2", "1.1", True),
        (":~0x80100", "adx", "3.4", True),
        (":~0x80100", "vaes", "3.0", False),
        ("~0x200000200000000", "vaes", "1.1", True),  # no word 1: all of it zeroed
        ("~0x200000200000000", "adx", "3.0", True),
        ("~0x200000200000000:~0", "adx", "3.0", False),
        ("::", "bmi2", "3.4", False),  # 3.4 keeps an empty field
        ("::", "bmi2", "3.0", True),
    ],
)
def test_the_parser_model_knows_the_new_bits(value, feature, gen, off):
    env = {"OPENSSL_ia32cap": value}
    assert hardware.feature_disabled_by(env, feature, "x86_64", gen) is off


def test_openssl_110_reads_no_ecx_of_leaf_7():
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("vaes",), "x86_64", ("OpenSSL", (1, 1, 0)))
    assert caught.value.reason == reason(Why.OLD_LEAF7, version="1.1.0", features=("vaes",))
    assert hardware.mask_for(("adx",), "x86_64", ("OpenSSL", (1, 1, 0))).value == ":~0x80000"
    assert hardware.mask_for(("vaes",), "x86_64", ("OpenSSL", (1, 1, 1))).value == (
        ":~0x20000000000"
    )


def test_cpu_flags_of_the_new_features():
    cpu = hardware.parse_cpuinfo("flags\t: aes pclmulqdq adx bmi2 vaes\n", "x86_64")
    assert cpu.has("vaes") and cpu.has("adx") and cpu.has("bmi2")
    assert cpu.has("vpclmul") is False
    assert hardware.parse_cpuinfo("Features\t: aes pmull\n", "aarch64").has("adx") is None


def python_runtime(ssl: str, own: str) -> schema.Runtime:
    details = {"ssl_openssl_version": ssl, "cryptography_openssl_version": own}
    return schema.Runtime(id="python@3", kind="python", executable="", version="", details=details)


def test_a_python_mask_is_written_for_the_newest_openssl_it_loads():
    both = python_runtime("OpenSSL 3.0.19 27 Jan 2026", "OpenSSL 4.0.3 29 Sep 2026")
    assert ab.mask_library(both) == ("OpenSSL", (4, 0, 3))
    cpu = hardware.parse_cpuinfo("flags\t: aes pclmulqdq\n", "x86_64")
    ctx = ab.plan(both, ("aes", "pclmul"), cpu, {}, None)
    assert ctx.mask.value == "~0x200000200000000:~0x0::::"  # also right for 3.0's parser
    assert ctx.library == ("OpenSSL", (3, 0, 19))  # checked with an openssl of this one
    alone = python_runtime("OpenSSL 3.0.19 27 Jan 2026", "")
    assert ab.mask_library(alone) == ("OpenSSL", (3, 0, 19))
    old = python_runtime("OpenSSL 1.0.2u  20 Dec 2019", "OpenSSL 3.5.0 8 Apr 2025")
    assert ab.mask_library(old) == ("OpenSSL", (1, 0, 2))  # 1.0.2 cannot mask one anyway


# -- the live openssl ------------------------------------------------------------


def live_openssl_3() -> str | None:
    exe = shutil.which("openssl")
    if exe is None or environment.cpu().arch != "x86_64":
        return None
    out = subprocess.run([exe, "version"], capture_output=True, text=True).stdout
    lib = hardware.parse_library(out)
    return exe if lib and lib[1] >= (3, 0, 0) else None


live = pytest.mark.skipif(live_openssl_3() is None, reason="needs openssl 3.x on x86_64")


@live
@pytest.mark.parametrize("feature", sorted(hardware.IA32_BITS))
def test_every_bit_is_where_the_live_openssl_has_it(feature):
    """The CPU's flag and libcrypto's detected vector agree on the bit, and
    the mask for the feature alone clears that bit and nothing else."""
    exe = live_openssl_3()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENSSL_ia32cap", "OPENSSL_armcap")}
    text = subprocess.run([exe, "version", "-c"], capture_output=True, text=True, env=env).stdout
    vector = parse_ia32_vector(text)
    word, bit = hardware.IA32_BITS[feature]
    assert bool(vector[word] & bit) == bool(environment.cpu().has(feature)), (feature, vector)
    if not environment.cpu().has(feature):
        pytest.skip(f"the CPU has no {feature}: nothing to mask")
    version = hardware.parse_library(
        subprocess.run([exe, "version"], capture_output=True, text=True).stdout
    )
    mask = hardware.mask_for((feature,), "x86_64", version)
    evidence = check_mask(exe, mask, env)
    assert evidence.ok is True, (feature, mask.value, evidence)
