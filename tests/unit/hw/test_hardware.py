"""CPU features and capability masks: canned text for both architectures,
every OpenSSL generation, and the live openssl as the judge of mask strings."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bridge.hw import hardware
from bridge.report.findings import Why, reason

X86 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
flags\t\t: fpu vme sse sse2 ssse3 pclmulqdq aes avx avx2 bmi1 bmi2 adx sha_ni hypervisor vaes
processor\t: 1
model name\t: AMD EPYC 7B13
flags\t\t: fpu vme sse sse2 ssse3 pclmulqdq aes avx avx2 bmi1 bmi2 adx sha_ni hypervisor vaes
"""


X86_OLD = """model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz
flags\t\t: fpu sse sse2 ssse3 pclmulqdq aes avx avx2 avx512f avx512bw hypervisor
"""


ARM = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid sha3 sha512
CPU implementer\t: 0x41
CPU part\t: 0xd0c
"""


ARM_NO_CRYPTO = "Features\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\n"


# (value, feature, generation) -> already off? The traps of docs/reference/masks.md §2.2.
DISABLED = [
    (":~0x20000000", "sha", "3.0", True),
    (":~0x20000000::::", "sha", "3.4", True),
    ("~0x200000000000000", "sha", "1.1", True),  # no second field zeroes word 1
    ("~0x200000000000000:~0", "sha", "3.0", False),
    ("~0x200000000000000:~0", "aes", "3.0", True),
    ("", "sha", "3.0", True),  # set but empty: everything off
    ("", "aes", "3.0", True),
    ("::", "sha", "3.0", True),  # an empty word-1 field parses as 0 before 3.4
    ("::", "sha", "3.4", False),  # 3.4 keeps it
    (":0", "aes", "3.0", False),
    ("0xffff:0xffffffff", "sha", "3.0", False),
    ("0xffff:0xffffffff", "aes", "3.0", True),
    (":~536870912", "sha", "3.0", True),  # decimal
]


def _live_openssl_3():
    exe = shutil.which("openssl")
    if exe is None:
        return None
    out = subprocess.run([exe, "version"], capture_output=True, text=True).stdout
    lib = hardware.parse_library(out)
    return exe if lib and lib[1] >= (3, 0, 0) else None


def test_x86_cpuinfo():
    cpu = hardware.parse_cpuinfo(X86, "x86_64")
    assert cpu.model == "AMD EPYC 7B13" and cpu.virtualized
    assert cpu.has("sha") and cpu.has("aes") and cpu.has("pclmul") and cpu.has("avx2")
    assert "sha_ni" in cpu.crypto_flags and "fpu" not in cpu.crypto_flags


def test_x86_without_sha_ni():
    cpu = hardware.parse_cpuinfo(X86_OLD, "x86_64")
    assert cpu.has("sha") is False and cpu.has("aes") is True
    assert {"avx512f", "avx512bw"} <= set(cpu.crypto_flags)


def test_aarch64_cpuinfo():
    cpu = hardware.parse_cpuinfo(ARM, "aarch64")
    assert cpu.has("sha") and cpu.has("aes") and cpu.has("pclmul")
    assert cpu.has("avx2") is None  # not a thing on ARM
    assert not cpu.virtualized and "0xd0c" in cpu.model
    assert hardware.parse_cpuinfo(ARM_NO_CRYPTO, "arm64").has("sha") is False


@pytest.mark.parametrize(
    "features, gen, expected",
    [
        (("sha",), "1.1", ":~0x20000000"),
        (("sha",), "3.0", ":~0x20000000"),
        (("sha",), "3.4", ":~0x20000000::::"),
        (("aes",), "3.0", "~0x200000000000000:~0x0"),
        (("aes", "pclmul"), "1.1", "~0x200000200000000:~0x0"),
        (("aes",), "3.4", "~0x200000000000000:~0x0::::"),
        (("avx2",), "3.0", ":~0x20"),
        (("sha", "aes"), "3.0", "~0x200000000000000:~0x20000000"),
    ],
)
def test_ia32cap_masks_per_generation(features, gen, expected):
    assert hardware.ia32cap_mask(features, gen) == expected


def test_openssl_102_cannot_mask_one_feature():
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.ia32cap_mask(("sha",), "1.0.2")
    assert caught.value.reason == reason(Why.ZEROES_LEAF7)
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("sha",), "x86_64", ("OpenSSL", (1, 0, 2)))
    assert caught.value.reason.why is Why.ZEROES_LEAF7


def test_non_openssl_libraries_cannot_be_masked():
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("sha",), "x86_64", ("LibreSSL", (3, 8, 2)))
    assert caught.value.reason == reason(Why.FOREIGN_LIBRARY, library="LibreSSL")
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("sha",), "x86_64", None)
    assert caught.value.reason == reason(Why.LIBRARY_UNKNOWN)
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("sha",), "riscv64", ("OpenSSL", (3, 0, 2)))
    assert caught.value.reason == reason(Why.NO_MASK_FOR_ARCH, arch="riscv64")
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("sha", "nosuch"), "x86_64", ("OpenSSL", (3, 0, 2)))
    assert caught.value.reason == reason(
        Why.NO_MASK_BIT, variable="OPENSSL_ia32cap", features=("nosuch",)
    )


def test_armcap_replaces_so_mask_is_detected_minus_bits():
    detected = hardware.armcap_from_flags(hardware.parse_cpuinfo(ARM, "aarch64").flags)
    assert detected == 0x1 | 0x4 | 0x8 | 0x10 | 0x20 | 0x40 | 0x80 | 0x800
    mask = hardware.mask_for(("sha",), "aarch64", ("OpenSSL", (3, 0, 2)), detected)
    assert mask.variable == "OPENSSL_armcap"
    assert int(mask.value, 16) == detected & ~0x58
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("sha",), "aarch64", ("OpenSSL", (3, 0, 2)), None)
    assert caught.value.reason == reason(Why.ARMCAP_UNKNOWN)
    with pytest.raises(hardware.CannotMask) as caught:
        hardware.mask_for(("nosuch",), "aarch64", ("OpenSSL", (3, 0, 2)), 0xFF)
    assert caught.value.reason == reason(
        Why.NO_MASK_BIT, variable="OPENSSL_armcap", features=("nosuch",)
    )


@pytest.mark.parametrize(
    "version, gen",
    [
        ((1, 0, 2), "1.0.2"),
        ((1, 1, 1), "1.1"),
        ((3, 0, 19), "3.0"),
        ((3, 3, 2), "3.0"),
        ((3, 4, 0), "3.4"),
        ((3, 6, 0), "3.4"),
    ],
)
def test_generation(version, gen):
    assert hardware.generation(version) == gen


def test_parse_library():
    assert hardware.parse_library("OpenSSL 3.0.19 27 Jan 2026") == ("OpenSSL", (3, 0, 19))
    assert hardware.parse_library("OpenSSL 1.1.1w  11 Sep 2023") == ("OpenSSL", (1, 1, 1))
    assert hardware.parse_library("garbage") is None


@pytest.mark.parametrize("value, feature, gen, off", DISABLED)
def test_feature_disabled_by(value, feature, gen, off):
    env = {"OPENSSL_ia32cap": value}
    assert hardware.feature_disabled_by(env, feature, "x86_64", gen) is off


def test_unset_variable_disables_nothing():
    assert not hardware.feature_disabled_by({}, "sha", "x86_64", "3.0")
    assert hardware.feature_disabled_by({"OPENSSL_armcap": "0x25"}, "sha", "aarch64", "3.0")
    assert not hardware.feature_disabled_by({"OPENSSL_armcap": "0x7d"}, "sha", "aarch64", "3.0")
