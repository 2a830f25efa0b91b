"""Why a path is not using the hardware: the reason a `not-used`, `masked`,
`cpu-lacks` or `not-openssl` verdict carries, decided from the evidence.
Pure functions; the records are bridge.report.whynot's, the evidence comes
from bridge.system.libbuild (the library) and the run itself (the CPU, the
environment, the other sizes' verdicts).

For a measured `not-used`, the first of these that the evidence shows:

1. the library has no assembler (NoAsm), or no capability vector
   (NoCapvector): no mask can change what it runs;
2. the library's own capability vector, read with no mask set, lacks the
   feature (CpuLacks seen by the library): it does not detect it;
3. the same call in the same run is `used` at a larger size (TooSmall);
4. none of them (NoneFound, with the largest size measured).

An `inconclusive` whose CI reaches into the noise margin, below a larger
size of the same call that is `used` and below that size's gain, carries
TooSmall too (too_small): on a busy machine the CI of a small size is
often too wide for `not-used`, and what the user can act on is the same,
the size that shows the feature.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bridge.hw import hardware
from bridge.report.whynot import (
    BypassesEvp,
    CpuLacks,
    EnvMasks,
    LibraryBuild,
    NoAsm,
    NoCapvector,
    NoneFound,
    Sign,
    Source,
    TooSmall,
    WhyNot,
)

# The variable each architecture's libcrypto reads its mask from.
MASK_VAR = {"x86_64": "OPENSSL_ia32cap", "aarch64": "OPENSSL_armcap"}


def cpu_lacks(feature: str) -> CpuLacks:
    return CpuLacks(feature, Source.CPUINFO)


def env_masks(env: Mapping[str, str], arch: str) -> EnvMasks | None:
    """The variable, set before bridge started, that masks a feature."""
    variable = MASK_VAR.get(arch)
    if variable is None or variable not in env:
        return None
    return EnvMasks(variable, env[variable])


def bypasses(api: str) -> BypassesEvp:
    return BypassesEvp(api)


# What the library says of itself (its CPUINFO, compiler and options lines)
# against assembler: needed for a verdict, as a count of the perlasm marks in
# its file alone could miss a fork that drops them.
_OWN = (Sign.NO_CAPVECTOR, Sign.NO_ASM_FLAG, Sign.NO_ASM_DEFINE)


def library(build: LibraryBuild | None) -> NoAsm | NoCapvector | None:
    """NoAsm when the library says it has no assembler (or no vector, its
    file holding no assembler module either) and nothing says it has (a
    capability vector needs the assembler CPUID probe); NoCapvector when it
    has no vector and nothing says more. Either way no mask can change what
    it runs."""
    if build is None:
        return None
    has_asm = build.has(Sign.ASM_FLAG) + build.has(Sign.ASM_CODE) + build.has(Sign.CAPVECTOR)
    if has_asm or not any(build.has(sign) for sign in _OWN):
        return None
    missing = build.has(Sign.NO_CAPVECTOR)
    no_asm = build.has(Sign.NO_ASM_FLAG) + build.has(Sign.NO_ASM_DEFINE)
    no_asm += build.has(Sign.NO_ASM_CODE)
    if no_asm:
        return NoAsm(build.file, build.version, no_asm + missing)
    return NoCapvector(build.file, build.version, missing)


def vector_lacks(build: LibraryBuild | None, feature: str, arch: str) -> Source | None:
    """The source whose capability vector, read with no mask set, lacks a
    part of `feature` ("aes+pclmul": either), or None. A vector printed
    under a mask (its line ends " env:...") says nothing of the CPU."""
    if build is None:
        return None
    for clue in build.has(Sign.CAPVECTOR):
        if " env:" in clue.text:
            continue
        words = _vector(clue.text)
        if words is None:
            continue
        for part in feature.split("+"):
            if _lacks(words, part, arch):
                return clue.source
    return None


def _vector(text: str) -> list[int] | None:
    _, sep, value = text.partition("=")
    try:
        return [int(w, 16) for w in value.strip(":").split(":")] if sep else None
    except ValueError:
        return None


def _lacks(words: list[int], feature: str, arch: str) -> bool:
    if arch == "x86_64" and feature in hardware.IA32_BITS:
        word, bit = hardware.IA32_BITS[feature]
        return word < len(words) and not words[word] & bit
    if arch == "aarch64" and feature in hardware.ARM_BITS:
        return not words[0] & hardware.ARM_BITS[feature]
    return False


def not_used(
    build: LibraryBuild | None,
    feature: str,
    arch: str,
    size: int,
    used: Sequence[tuple[int, float]],
    largest: int,
) -> WhyNot:
    """Why a measured `not-used`: see the module. `used`: (size, speedup) of
    the same call's `used` verdicts in the run; `largest`: the largest size
    the call was measured at."""
    found = library(build)
    if found is not None:
        return found
    seen_by = vector_lacks(build, feature, arch)
    if seen_by is not None:
        return CpuLacks(feature, seen_by)
    return too_small(size, used) or NoneFound(largest)


def too_small(size: int, used: Sequence[tuple[int, float]]) -> TooSmall | None:
    """The smallest larger size at which the same call is `used`, with its
    gain; None without one."""
    larger = sorted((n, x) for n, x in used if n > size)
    return TooSmall(size, larger[0][0], larger[0][1]) if larger else None
