"""CPU features, and the environment that switches each one off for OpenSSL.

Pure functions, tested on canned text. Sources: ../shared/reference/
docs/reference/masks.md §2 (OpenSSL's OPENSSL_ia32cap / OPENSSL_armcap parsing, traced
in crypto/cpuid.c and cryptlib.c of each generation) and §3 (/proc/cpuinfo
names). Every mask string bridge relies on is also checked against the real
openssl (`openssl version -c`) and by measurement in the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bridge.catalog import vocab
from bridge.catalog.vocab import FEATURE_NAMES, FEATURES  # noqa: F401 (the names live in vocab)
from bridge.report.findings import Reason, Why, reason

# The capability masks bridge sets for hw "off" runs: the only environment
# variables a report records beside the user's own --env.
MASK_VARS = vocab.MASK_VARS

# /proc/cpuinfo flags that mean the CPU offers a feature (all must be present).
CPU_FLAGS = {
    "x86_64": {
        "sha": ("sha_ni",),
        "aes": ("aes",),
        "pclmul": ("pclmulqdq",),
        "avx2": ("avx2",),
        "vaes": ("vaes",),
        "vpclmul": ("vpclmulqdq",),
        "adx": ("adx",),
        "bmi2": ("bmi2",),
    },
    "aarch64": {"sha": ("sha1", "sha2"), "aes": ("aes",), "pclmul": ("pmull",)},
}
X86_INTERESTING = (
    "sha_ni",
    "aes",
    "pclmulqdq",
    "ssse3",
    "avx",
    "avx2",
    "bmi1",
    "bmi2",
    "adx",
    "vaes",
    "vpclmulqdq",
    "sha512",
    "hypervisor",
)
ARM_INTERESTING = ("aes", "pmull", "sha1", "sha2", "sha512", "sha3", "asimd")

# OPENSSL_ia32cap: (word, bit mask). Word 0 = CPUID.1 EDX:ECX; word 1 = CPUID.7.0 EBX:ECX.
# SHA = word 1 bit 29 (CPUID.7.0:EBX[29]); AES-NI = word 0 bit 57 (ECX[25]);
# PCLMULQDQ = word 0 bit 33 (ECX[1]); AVX2 = word 1 bit 5.
# BMI2 = word 1 bit 8 (EBX[8]), ADX = word 1 bit 19 (EBX[19]); VAES = word 1
# bit 41 and VPCLMULQDQ = word 1 bit 42 (CPUID.7.0:ECX[9], [10]: ECX is the
# high half of word 1 since 1.1.1). docs/reference/masks.md §2.1; each is checked
# against the live `openssl version -c` in tests/unit/test_hardware.py.
IA32_BITS = {
    "sha": (1, 1 << 29),
    "aes": (0, 1 << 57),
    "pclmul": (0, 1 << 33),
    "avx2": (1, 1 << 5),
    "bmi2": (1, 1 << 8),
    "adx": (1, 1 << 19),
    "vaes": (1, 1 << 41),
    "vpclmul": (1, 1 << 42),
}
# OPENSSL_armcap bits (arm_arch.h): SHA1 1<<3, SHA256 1<<4, SHA512 1<<6; AES 1<<2; PMULL 1<<5.
ARM_BITS = {"sha": (1 << 3) | (1 << 4) | (1 << 6), "aes": 1 << 2, "pclmul": 1 << 5}
# From /proc/cpuinfo Features to OPENSSL_armcap, for OpenSSL without `version -c`.
ARM_FLAG_BITS = {
    "asimd": 0x1,
    "neon": 0x1,
    "aes": 0x4,
    "sha1": 0x8,
    "sha2": 0x10,
    "pmull": 0x20,
    "sha512": 0x40,
    "cpuid": 0x80,
    "sha3": 0x800,
}


@dataclass(frozen=True)
class Cpu:
    arch: str  # x86_64 | aarch64 | other
    model: str
    flags: frozenset[str]
    virtualized: bool

    def has(self, feature: str) -> bool | None:
        """True/False; None when bridge does not know the feature on this arch."""
        needed = CPU_FLAGS.get(self.arch, {}).get(feature)
        if needed is None:
            return None
        return all(f in self.flags for f in needed)

    @property
    def crypto_flags(self) -> list[str]:
        wanted = X86_INTERESTING if self.arch == "x86_64" else ARM_INTERESTING
        return sorted(f for f in self.flags if f in wanted or f.startswith("avx512"))


def parse_cpuinfo(text: str, arch: str) -> Cpu:
    """x86 lists `flags : ...` and `model name`; aarch64 `Features : ...` and
    often no model name (then `CPU implementer`/`CPU part` identify it)."""
    model, flags, implementer, part = "", frozenset(), "", ""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key in ("model name", "cpu model", "hardware") and not model:
            model = value
        elif key in ("flags", "features") and not flags:
            flags = frozenset(value.split())
        elif key == "cpu implementer" and not implementer:
            implementer = value
        elif key == "cpu part" and not part:
            part = value
    if not model and implementer:
        model = f"ARM implementer {implementer} part {part}"
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    return Cpu(arch=arch, model=model or "unknown", flags=flags, virtualized="hypervisor" in flags)


# -- OpenSSL generations ---------------------------------------------------


def generation(version: tuple[int, int, int]) -> str:
    """The OPENSSL_ia32cap parser a libcrypto version has (docs/reference/masks.md §2.2)."""
    if version < (1, 1, 0):
        return "1.0.2"
    if version < (3, 0, 0):
        return "1.1"
    if version < (3, 4, 0):
        return "3.0"
    return "3.4"


VERSION_TEXT = re.compile(r"\b(OpenSSL|LibreSSL|BoringSSL|AWS-LC)\s+([0-9]+)\.([0-9]+)\.([0-9]+)")


def parse_library(text: str) -> tuple[str, tuple[int, int, int]] | None:
    """'OpenSSL 3.0.19 27 Jan 2026' -> ('OpenSSL', (3, 0, 19))."""
    m = VERSION_TEXT.search(text or "")
    if not m:
        return None
    return m.group(1), (int(m.group(2)), int(m.group(3)), int(m.group(4)))


class CannotMask(Exception):
    """The feature cannot be switched off alone for this library: `reason`
    says why, as a code with its parameters (bridge.view.words words it)."""

    def __init__(self, why: Reason) -> None:
        super().__init__(why.why.value)
        self.reason = why


@dataclass(frozen=True)
class Mask:
    variable: str  # OPENSSL_ia32cap | OPENSSL_armcap
    value: str
    features: tuple[str, ...]

    def env(self) -> dict[str, str]:
        return {self.variable: self.value}


def mask_for(
    features: tuple[str, ...],
    arch: str,
    library: tuple[str, tuple[int, int, int]] | None,
    armcap_detected: int | None = None,
) -> Mask:
    """The environment that switches `features` off and leaves the rest as
    detected, for the given libcrypto. Raises CannotMask with the reason."""
    if library is None:
        raise CannotMask(reason(Why.LIBRARY_UNKNOWN))
    name, version = library
    if name != "OpenSSL":
        raise CannotMask(reason(Why.FOREIGN_LIBRARY, library=name))
    if arch == "x86_64":
        high = [f for f in features if f in IA32_BITS and IA32_BITS[f][1] >> 32]
        if high and version < (1, 1, 1):
            # Word 1 holds CPUID.7.0:ECX in its high half from 1.1.1 on.
            shown = ".".join(map(str, version))
            raise CannotMask(reason(Why.OLD_LEAF7, version=shown, features=tuple(high)))
        return Mask("OPENSSL_ia32cap", ia32cap_mask(features, generation(version)), features)
    if arch == "aarch64":
        if armcap_detected is None:
            raise CannotMask(reason(Why.ARMCAP_UNKNOWN))
        return Mask("OPENSSL_armcap", armcap_mask(features, armcap_detected), features)
    raise CannotMask(reason(Why.NO_MASK_FOR_ARCH, arch=arch))


def ia32cap_mask(features: tuple[str, ...], gen: str) -> str:
    unknown = [f for f in features if f not in IA32_BITS]
    if unknown:
        raise CannotMask(
            reason(Why.NO_MASK_BIT, variable="OPENSSL_ia32cap", features=tuple(unknown))
        )
    if gen == "1.0.2":
        # cryptlib.c zeroes the whole leaf-7 word whenever the variable is set.
        raise CannotMask(reason(Why.ZEROES_LEAF7))
    words = [0, 0]
    for f in features:
        word, bit = IA32_BITS[f]
        words[word] |= bit
    # An empty first field keeps word 0 as detected; `~0` on word 1 keeps it
    # too (a missing second field would zero it: the 1.1.1 trap).
    first = f"~0x{words[0]:x}" if words[0] else ""
    value = f"{first}:~0x{words[1]:x}"
    if gen == "3.4":
        # 3.4+ reads five words and zeroes missing trailing ones: keep LV2-LV4.
        value += "::::"
    return value


def armcap_mask(features: tuple[str, ...], detected: int) -> str:
    bits = 0
    for f in features:
        if f not in ARM_BITS:
            raise CannotMask(reason(Why.NO_MASK_BIT, variable="OPENSSL_armcap", features=(f,)))
        bits |= ARM_BITS[f]
    return f"0x{detected & ~bits:x}"


def armcap_from_flags(flags: frozenset[str]) -> int:
    value = 0
    for flag, bit in ARM_FLAG_BITS.items():
        if flag in flags:
            value |= bit
    return value


# -- what a pre-set variable already does ------------------------------------


def _strtoull(text: str) -> int:
    """C strtoull(text, NULL, 0): 0x hex, leading-0 octal, decimal; stops at
    the first character that does not fit; 0 when nothing does."""
    text = text.strip()
    if text[:2].lower() == "0x":
        m = re.match(r"[0-9a-fA-F]*", text[2:])
        return int(m.group(0), 16) if m.group(0) else 0
    if text.startswith("0"):
        m = re.match(r"[0-7]*", text)
        return int(m.group(0), 8) if m.group(0) else 0
    m = re.match(r"[0-9]*", text)
    return int(m.group(0)) if m.group(0) else 0


def feature_disabled_by(env: dict[str, str], feature: str, arch: str, gen: str) -> bool:
    """Does a capability variable already present in `env` switch `feature`
    off? Simulates each generation's parser (docs/reference/masks.md §2.2)."""
    if arch == "aarch64":
        value = env.get("OPENSSL_armcap")
        # The value replaces detection: the feature is off unless its bits are set.
        return value is not None and not (_strtoull(value) & ARM_BITS.get(feature, 0))
    value = env.get("OPENSSL_ia32cap")
    if value is None or feature not in IA32_BITS:
        return False
    word, bit = IA32_BITS[feature]
    fields = value.split(":")
    if word == 0:
        field = fields[0]
        if field.startswith("~"):
            return bool(_strtoull(field[1:]) & bit)
        if field == "" and len(fields) > 1:
            return False  # ":..." keeps word 0 as detected
        return not (_strtoull(field) & bit)  # replaced ("" alone gives 0)
    if len(fields) < 2:
        return True  # no second field: word 1 is zeroed (1.0.2 and later)
    field = fields[1]
    if field.startswith("~"):
        return bool(_strtoull(field[1:]) & bit)
    if field == "":
        return gen != "3.4"  # 3.4+ keeps an empty field; older parse it as 0
    return not (_strtoull(field) & bit)
