"""Why a path is not using the hardware, in words: one function over the
reason records of bridge.report.whynot (decided in bridge.hw.whynot), so
that every view says a reason, and what to do about it, the same way."""

from __future__ import annotations

from bridge.report.whynot import (
    BypassesEvp,
    Clue,
    CpuLacks,
    EnvMasks,
    NoAsm,
    NoCapvector,
    NoneFound,
    Sign,
    Source,
    TooSmall,
    WhyNot,
)
from bridge.view import home, units

_FROM = {
    Source.VERSION_A: "openssl version -a",
    Source.LIBRARY: "OpenSSL_version()",
    Source.FILE: "its file",
    Source.CPUINFO: "/proc/cpuinfo",
}
# Python's own paths, named by their route when no type was reported.
_ROUTES = {
    "hashlib": "hashlib's built-in code",
    "hmac": "Python's hmac over hashlib",
    "kernel": "the kernel's generator",
    "own": "the runtime's own code",
}


# The reasons in a few words, where a line already names the call and size.
_BRIEF = {
    CpuLacks: "the CPU lacks it",
    EnvMasks: "masked by the environment",
    NoAsm: "a library without assembler",
    NoCapvector: "a library without a capability vector",
    BypassesEvp: "a path around OpenSSL",
    TooSmall: "too small to show",
    NoneFound: "no reason found",
}


def why_not(why: WhyNot, unit: str = units.BYTES, x: str = "×", brief: bool = False) -> str:
    """The reason and what to do next, as a clause: "... does not use X: 1.00×;
    <this>". `x`: the times sign ("x" where the view is ASCII); `brief`: the
    reason in a few words, nothing to do."""
    if brief:
        return _BRIEF[type(why)]
    if isinstance(why, CpuLacks):
        if why.seen_by is Source.CPUINFO:
            return "the CPU does not offer it (/proc/cpuinfo lists no such flag)"
        return (
            "the library does not detect it on this CPU (its capability vector, read"
            f" with no mask set, lacks it: {_FROM[why.seen_by]})"
        )
    if isinstance(why, EnvMasks):
        return (
            f"{why.variable}={why.value} was set before bridge started and masks it;"
            " unset it to measure the hardware"
        )
    if isinstance(why, NoAsm):
        return (
            f"{_name(why.library)} ({_short(why.version)}) was built without assembler"
            f" ({_evidence(why.evidence)}): it runs C code whatever the CPU offers; a build"
            " with assembler, as distributions ship, would use it"
        )
    if isinstance(why, NoCapvector):
        return (
            f"{_name(why.library)} ({_short(why.version)}) has no capability vector"
            f" ({_evidence(why.evidence)}): it cannot detect CPU features"
        )
    if isinstance(why, BypassesEvp):
        api = _ROUTES.get(why.api, why.api)
        return f"the call runs {api}, which does not reach OpenSSL's assembler"
    if isinstance(why, TooSmall):
        return (
            f"at {units.size_text(why.size, unit)} the feature's share of a call is too"
            f" small to show; at {units.size_text(why.shows_at, unit)} masking it is"
            f" {why.speedup:.2f}{x} slower"
        )
    if isinstance(why, NoneFound):
        return (
            "no reason found: the library has assembler and detects the feature, and no"
            f" size up to {units.size_text(why.largest, unit)} showed it; try a larger"
            " --sizes, or a call that goes through EVP"
        )
    raise TypeError(f"not a reason: {why!r}")


def _name(library: str) -> str:
    # The home directory as ~, as bridge env shows it: a pasted line need not name the user.
    return home.tilde(library) if library else "the libcrypto"


def _short(version: str) -> str:
    """OpenSSL 3.5.7, without the date."""
    return " ".join(version.split()[:2])


def _evidence(clues: tuple[Clue, ...]) -> str:
    """What the clues say, each once, with the sources that said it:
    "CPUINFO: N/A from openssl version -a and OpenSSL_version()"."""
    said: dict[str, list[str]] = {}
    for c in clues:
        if c.sign is Sign.NO_ASM_CODE:
            what = "no assembler module in its file"
        elif c.sign is Sign.NO_ASM_DEFINE:
            what = "no assembler module on its compiler line"
        else:
            what = c.text
        sources = said.setdefault(what, [])
        if c.source is not Source.FILE:
            sources.append(_FROM[c.source])
    return "; ".join(
        f"{what} from {' and '.join(dict.fromkeys(sources))}" if sources else what
        for what, sources in said.items()
    )


def library(build, found: WhyNot | None) -> str:
    """What a runtime's libcrypto says about its build (bridge env): why no
    mask can change what it runs (`found`, bridge.hw.whynot.library), or
    what says it has assembler."""
    if found is not None:
        return why_not(found)
    said = []
    for sign, words in (
        (Sign.ASM_CODE, "{} assembler modules in its file"),
        (Sign.ASM_FLAG, "{} on its compiler line"),
        (Sign.CAPVECTOR, "capability vector {}"),
    ):
        said += [words.format(c.text) for c in build.has(sign)[:1]]
    return f"{build.file or 'libcrypto'}: {', '.join(said) or 'nothing could be read'}"
