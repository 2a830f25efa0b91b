"""What a read-only probe of a running node says (erl/bridge_remote.erl,
node_probe), and what bridge concludes from it. Pure: tested on canned facts.

The probe reports the node's releases, its crypto (only when the node has
loaded it already), the libcrypto files it has mapped (read by the node from
its own /proc/self/maps), the capability variables in its environment, and
its host's /proc/cpuinfo. From those:

- the provenance verdict: which library the node uses, whether its host's CPU
  offers SHA and AES instructions, and whether anything in the node's
  environment masks them. OpenSSL (1.0.2 and later for SHA, 1.0.1 for AES)
  takes those paths whenever the CPU offers them and no mask says otherwise
  (docs/reference/masks.md §2.3), so that settles which paths run;
- the A/B: a live node cannot be re-run with a mask (libcrypto reads the
  variables once, when it loads), so bridge points to a runtime on this
  machine that uses the same libcrypto, where the experiment can run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bridge.catalog.vocab import COMMAND
from bridge.hw import hardware
from bridge.hw.hardware import MASK_VARS
from bridge.wire.codec import text

# The features whose paths the verdict names, the code that uses each, and
# the first OpenSSL with that code for x86_64 and ARMv8.
FEATURES = ("sha", "aes")
PATHS = {"sha": "SHA-1/SHA-256", "aes": "AES"}
FIRST_OPENSSL = {"sha": (1, 0, 2), "aes": (1, 0, 1)}
SHORT_NAMES = {
    "x86_64": {"sha": "SHA-NI", "aes": "AES-NI"},
    "aarch64": {"sha": "the ARMv8 SHA instructions", "aes": "the ARMv8 AES instructions"},
}
# The scenario that measures each feature's A/B.
AB_SCENARIO = {"sha": "sha256", "aes": "aes-128-cbc"}

NOT_LOADED = (
    "crypto is not loaded on the node (nothing there has used it yet), and a read-only"
    " probe does not load it: there is no libcrypto to judge"
)


@dataclass(frozen=True)
class NodeFacts:
    node: str
    otp_release: str
    otp_version: str
    erts_version: str
    emu_flavor: str
    os_pid: str
    schedulers_online: int | None
    arch: str  # x86_64 | aarch64 | ...
    os_type: str
    hostname: str
    code_mode: str
    crypto_app_version: str
    crypto_loaded: bool
    info_lib: tuple[tuple[str, int, str], ...] = ()
    crypto_info: dict[str, Any] = field(default_factory=dict)
    info_fips: str = ""
    libcrypto_mapped: tuple[str, ...] = ()
    maps_error: str = ""
    env: dict[str, str | None] = field(default_factory=dict)
    cpu: hardware.Cpu | None = None
    cpuinfo_error: str = ""

    @property
    def crypto_lib(self) -> str:
        return self.info_lib[0][2] if self.info_lib else ""

    def library(self) -> tuple[str, tuple[int, int, int]] | None:
        return hardware.parse_library(self.crypto_lib)


def arch_of(system_architecture: str) -> str:
    """'x86_64-pc-linux-gnu' -> 'x86_64'; 'aarch64-unknown-linux-gnu' -> 'aarch64'."""
    head = system_architecture.split("-")[0]
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(head, head)


def from_props(node: str, p: dict[str, Any]) -> NodeFacts:
    """The node_probe reply (a decoded proplist) as NodeFacts."""
    arch = arch_of(text(p.get("system_architecture", b"")))
    cpuinfo = p.get("cpuinfo")
    return NodeFacts(
        node=node,
        otp_release=text(p.get("otp_release", b"")),
        otp_version=text(p.get("otp_version", b"")),
        erts_version=text(p.get("erts_version", b"")),
        emu_flavor=text(p.get("emu_flavor", "emu")),
        os_pid=text(p.get("os_pid", b"")),
        schedulers_online=p.get("schedulers_online"),
        arch=arch,
        os_type=text(p.get("os_type", b"")),
        hostname=text(p.get("hostname", b"")),
        code_mode=text(p.get("code_mode", "")),
        crypto_app_version=text(p.get("crypto_app_version", b"")),
        crypto_loaded=bool(p.get("crypto_loaded")),
        info_lib=tuple((text(n), int(v), text(t)) for n, v, t in p.get("info_lib", [])),
        crypto_info={
            k: text(v) if isinstance(v, bytes) else v for k, v in p.get("crypto_info", [])
        },
        info_fips=text(p.get("info_fips", "")),
        libcrypto_mapped=tuple(text(f) for f in p.get("libcrypto_mapped", [])),
        maps_error=text(p.get("maps_error", b"")),
        env={
            "OPENSSL_ia32cap": _env(p.get("ia32cap")),
            "OPENSSL_armcap": _env(p.get("armcap")),
        },
        cpu=hardware.parse_cpuinfo(text(cpuinfo), arch) if isinstance(cpuinfo, bytes) else None,
        cpuinfo_error=text(p.get("cpuinfo_error", b"")),
    )


def _env(value: Any) -> str | None:
    return None if value is None else text(value)


# -- the verdict ---------------------------------------------------------------


def verdict(f: NodeFacts) -> str:
    """One sentence: the library, the CPU, the node's masks, and the paths
    that follow from them."""
    if not f.crypto_loaded:
        return NOT_LOADED
    library = f.library()
    lib_text = _library_words(f)
    if library is None:
        return (
            f"{lib_text}: bridge does not recognise its version, so it cannot say which paths run"
        )
    name, version = library
    if name != "OpenSSL":
        return (
            f"{lib_text}: {name} does not choose its paths by OpenSSL's capability vector,"
            " so bridge cannot say from here which paths run"
        )
    if f.cpu is None:
        why = f" ({f.cpuinfo_error})" if f.cpuinfo_error else ""
        return f"{lib_text}; the node could not read its CPU's flags{why}, so bridge cannot say"
    short = SHORT_NAMES.get(f.cpu.arch)
    if short is None:
        return f"{lib_text} on {f.cpu.arch}: bridge knows no SHA or AES paths there"
    gen = hardware.generation(version)
    offered = [feat for feat in FEATURES if f.cpu.has(feat)]
    cpu = (
        "a CPU with " + " and ".join(short[x] for x in offered)
        if offered
        else ("a CPU without " + " or ".join(short[x] for x in FEATURES))
    )
    masks = {k: v for k, v in f.env.items() if k in MASK_VARS and v is not None}
    env = (
        "no mask in the node's environment"
        if not masks
        else ", ".join(f"{k}={v}" for k, v in masks.items()) + " in the node's environment"
    )
    clauses = []
    for feat in FEATURES:
        paths, name_f = PATHS[feat], short[feat]
        if feat not in offered:
            clauses.append(f"the {paths} paths run without {name_f}, which the CPU lacks")
        elif hardware.feature_disabled_by(masks, feat, f.cpu.arch, gen):
            clauses.append(f"the mask switches {name_f} off, so the {paths} paths run without it")
        elif version < FIRST_OPENSSL[feat]:
            first = ".".join(map(str, FIRST_OPENSSL[feat]))
            clauses.append(
                f"the {paths} paths run without {name_f}: OpenSSL has used it only since {first}"
            )
        else:
            clauses.append(f"the {paths} paths use {name_f}")
    return f"{lib_text} on {cpu}, {env}: " + "; ".join(clauses)


def _library_words(f: NodeFacts) -> str:
    lib = f.crypto_lib or "an unknown libcrypto"
    mapped = ", ".join(f.libcrypto_mapped)
    return f"libcrypto {lib} ({mapped})" if mapped else f"libcrypto {lib}"


# -- the A/B it cannot run, and where it can -------------------------------------


@dataclass(frozen=True)
class LocalLibrary:
    """A runtime on this machine and the libcrypto it uses."""

    runtime: str  # e.g. "Erlang OTP 25.2.3 (/usr/bin/erl)"
    library: str  # e.g. "OpenSSL 3.0.19 27 Jan 2026"
    run: str  # the A/B command for it, its scenario a {} ("crypto-bridge run {} ...")


NO_AB = (
    "A masked A/B cannot run on a live node: libcrypto reads OPENSSL_ia32cap/OPENSSL_armcap"
    " once, when the node starts, and bridge does not restart it."
)


def local_ab(f: NodeFacts, local: list[LocalLibrary], local_cpu: hardware.Cpu | None) -> str:
    """NO_AB, then where the same library can be measured here, if anywhere."""
    library = f.library()
    if library is None:
        return NO_AB
    name, version = library
    feats = [x for x in FEATURES if f.cpu is not None and f.cpu.has(x)] or ["sha"]
    scenario = AB_SCENARIO[feats[0]]
    # The same release, letter included: 1.1.1w is not 1.1.1k.
    label = _release(f.crypto_lib)
    same = [lo for lo in local if _release(lo.library) == label]
    series = [
        lo
        for lo in local
        if (lib := hardware.parse_library(lo.library))
        and lib[0] == name
        and lib[1][:2] == version[:2]
    ]
    if same:
        lo = same[0]
        head = f"The same libcrypto ({label}) runs here in {lo.runtime}:"
    elif series:
        lo = series[0]
        head = (
            f"No runtime here has {label}; the nearest is {_release(lo.library)} in"
            f" {lo.runtime}, the same series:"
        )
    else:
        return (
            f"{NO_AB} No runtime here uses {name} {version[0]}.{version[1]}: run"
            f" `{COMMAND} run {scenario} --hw both` where that library is installed."
        )
    feature = SHORT_NAMES.get(f.cpu.arch if f.cpu else "", {}).get(feats[0], "the feature")
    where = f"`{lo.run.format(scenario)}` measures it with and without {feature} on this machine"
    lacks = ""
    if local_cpu is not None and not all(local_cpu.has(x) for x in feats):
        lacks = " (this machine's CPU lacks it, so only the path without it can be seen here)"
    return f"{NO_AB} {head} {where}{lacks}."


def _release(library: str) -> str:
    """'OpenSSL 1.1.1w  11 Sep 2023' -> 'OpenSSL 1.1.1w'."""
    return " ".join(library.split()[:2])
