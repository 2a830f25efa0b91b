"""Why a path is not using the hardware: the reason a verdict carries, and
what a runtime's libcrypto says about its own build. Codes and parameters
only; bridge.hw.whynot decides them and bridge.render words them.

A reason is one of a closed set of records (a sum type), each with the
parameters its wording needs, written with its code first:
{"reason": "no-asm", "library": ..., "version": ..., "evidence": [...]}.
`decode` reads one back by its code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from bridge.catalog.choice import Choice as _Choice
from bridge.report.codec import EMPTY, Json, Record, jf
from bridge.report.findings import Why


class Source(_Choice):
    """Where a fact about a library or the CPU was read."""

    CPUINFO = "cpuinfo"  # /proc/cpuinfo
    VERSION_A = "version-a"  # `openssl version -a` of the openssl runtime's own binary
    LIBRARY = "library"  # the mapped file loaded alone: OpenSSL_version() through ctypes
    FILE = "file"  # the mapped file's bytes


class Sign(_Choice):
    """What one clue about a library's build says."""

    CAPVECTOR = "capvector"  # it reports a capability vector (text: the vector)
    NO_CAPVECTOR = "no-capvector"  # it reports none (text: "CPUINFO: N/A")
    NO_ASM_FLAG = "no-asm-flag"  # its compiler or options line says no-asm (text: the flag)
    ASM_FLAG = "asm-flag"  # its compiler line defines an assembler module (text: the flag)
    # Its compiler line, of a 1.x library (which lists the assembler modules'
    # defines there), defines none (text: the line).
    NO_ASM_DEFINE = "no-asm-define"
    ASM_CODE = "asm-code"  # its file holds OpenSSL's assembler modules (text: how many)
    NO_ASM_CODE = "no-asm-code"  # its file holds none


@dataclass(frozen=True)
class Clue(Record):
    """One fact about a library's build, where it was read, and the text it
    was read from (the line, the flag, the count)."""

    source: Source
    sign: Sign
    text: str = jf(omit=EMPTY, default="")


@dataclass(frozen=True)
class LibraryBuild(Record):
    """What a runtime's libcrypto says about its build (bridge.system.libbuild):
    the file its process maps, its version as it says it, the clues, and the
    sources that could not be read."""

    file: str = jf(omit=EMPTY, default="")
    version: str = jf(omit=EMPTY, default="")
    clues: tuple[Clue, ...] = ()
    unread: tuple[Source, ...] = jf(omit=EMPTY, default=())

    def has(self, sign: Sign) -> tuple[Clue, ...]:
        return tuple(c for c in self.clues if c.sign is sign)


# -- reasons -------------------------------------------------------------------


# The codes are members of bridge.report.findings.Why (CPU_LACKS, ENV_MASKS,
# NO_ASM, NO_CAPVECTOR, BYPASSES_EVP, TOO_SMALL, NONE_FOUND), whose PARAMS are
# each record's fields: the one closed set of reasons, worded in
# bridge.view.words.


class _Why(Record):
    """A reason: its code is the record's type, written first as "reason"."""

    REASON: ClassVar[Why]
    json_derived_keys: ClassVar[tuple[str, ...]] = ("reason",)
    json_order: ClassVar[tuple[str, ...]] = ("reason",)

    @property
    def reason(self) -> Why:
        return self.REASON

    def json_derived(self) -> Json:
        return {"reason": self.REASON.value}

    def params(self) -> dict[str, Any]:
        """The record's fields, as a Reason's parameters (PARAMS[why])."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class CpuLacks(_Why):
    """The CPU does not offer `feature`, as /proc/cpuinfo says, or as the
    library's own capability vector says (read with no mask set)."""

    REASON: ClassVar[Why] = Why.CPU_LACKS
    feature: str
    seen_by: Source


@dataclass(frozen=True)
class EnvMasks(_Why):
    """`variable`=`value`, set before bridge started, switches it off."""

    REASON: ClassVar[Why] = Why.ENV_MASKS
    variable: str
    value: str


@dataclass(frozen=True)
class NoAsm(_Why):
    """The libcrypto `library` (`version`) was built without assembler."""

    REASON: ClassVar[Why] = Why.NO_ASM
    library: str
    version: str
    evidence: tuple[Clue, ...]


@dataclass(frozen=True)
class NoCapvector(_Why):
    """The libcrypto has no capability vector (CPUINFO: N/A), and nothing
    else says whether it has assembler."""

    REASON: ClassVar[Why] = Why.NO_CAPVECTOR
    library: str
    version: str
    evidence: tuple[Clue, ...]


@dataclass(frozen=True)
class BypassesEvp(_Why):
    """The call runs `api`, which does not reach the library's assembler
    for this feature (built-in code, a pre-EVP path, an engine or provider)."""

    REASON: ClassVar[Why] = Why.BYPASSES_EVP
    api: str


@dataclass(frozen=True)
class TooSmall(_Why):
    """At `size` the feature's share of a call is too small to show; the same
    call in the same run shows it at `shows_at`, `speedup` times slower masked."""

    REASON: ClassVar[Why] = Why.TOO_SMALL
    size: int
    shows_at: int
    speedup: float


@dataclass(frozen=True)
class NoneFound(_Why):
    """The library has assembler and a vector with the feature, and no larger
    size of the call showed it: `largest` is the largest size measured."""

    REASON: ClassVar[Why] = Why.NONE_FOUND
    largest: int


WhyNot = CpuLacks | EnvMasks | NoAsm | NoCapvector | BypassesEvp | TooSmall | NoneFound
KINDS: dict[Why, type[Any]] = {
    k.REASON: k for k in (CpuLacks, EnvMasks, NoAsm, NoCapvector, BypassesEvp, TooSmall, NoneFound)
}


def decode(data: Any) -> WhyNot | None:
    """A reason from its JSON, by its code; None from null."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError("expected an object")
    kind = KINDS[Why(data.get("reason"))]
    return kind.from_json(data)
