"""What each kind of runtime says about itself: the kind-specific keys of a
report's runtime object (its `details`), one record per kind.

- `ErlangDetails`: a node bridge started, or a running node reached over
  distribution (`node`);
- `PythonDetails`: a Python worker;
- `OpensslDetails`: the `openssl` CLI;
- `ImportedDetails`: a run pasted into `import-speed` (its own words only).

Each may also carry `libcrypto_dir` (the runtime run again on another
libcrypto, --libcrypto). Their keys sit in the runtime's object beside id,
kind, executable and version, and are written back as they were read (codec
`json_as_read`): which keys a runtime has depends on the bridge that wrote
it. A key this bridge does not know stays in `extra`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bridge.catalog.vocab import MASK_VARS, RuntimeKind
from bridge.report.codec import EMPTY, NONE, Record, jf


@dataclass(frozen=True)
class LibcryptoDir(Record):
    """--libcrypto: the library a runtime was run again on, and the proof
    that its process mapped it."""

    given: str = ""  # as typed on the command line
    dir: str = ""
    file: str = ""
    soname: str = ""
    version: str = ""  # the library's own version text
    maps: tuple[str, ...] = ()  # its lines of the process's /proc/PID/maps
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class Provenance(Record):
    """What every kind but an import has: the runtime's environment as bridge
    set it (the mask variables, --env), the libcrypto files its process
    mapped, and the --libcrypto library it was run on."""

    # Only the variables bridge sets or reads, and those given with --env:
    # never bridge's own environment. None: not set.
    env: dict[str, str | None] = jf(omit=EMPTY, default_factory=dict)
    libcrypto_loaded: tuple[str, ...] = jf(omit=EMPTY, default=())
    libcrypto_dir: LibcryptoDir | None = jf(omit=NONE, default=None)
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True

    @property
    def given_env(self) -> dict[str, str | None]:
        """The variables the user gave (--env): the env less the masks."""
        return {k: v for k, v in self.env.items() if k not in MASK_VARS}

    @property
    def library(self) -> str:
        """The libcrypto version the runtime reports ("" where it does not)."""
        return ""


@dataclass(frozen=True)
class LibInfo(Record):
    """One entry of crypto:info_lib(); the schema leaves its keys free, so
    each may be absent (a key not known is kept, as read)."""

    name: str = ""
    version_number: int | None = None
    version_text: str = ""
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True


@dataclass(frozen=True)
class CryptoInfo(Record):
    """crypto:info() as the node says it (its keys vary with the release)."""

    compile_type: str | None = jf(omit=NONE, default=None)
    cryptolib_version_compiled: str | None = jf(omit=NONE, default=None)
    cryptolib_version_linked: str | None = jf(omit=NONE, default=None)
    fips_provider_available: bool | None = jf(omit=NONE, default=None)
    link_type: str | None = jf(omit=NONE, default=None)
    otp_crypto_version: str | None = jf(omit=NONE, default=None)
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True

    @classmethod
    def of(cls, said: Mapping[str, Any]) -> CryptoInfo:
        """What a node said, in its order; kept whole as `extra` where a
        value is not of the type bridge knows for its key."""
        try:
            return cls.from_json(dict(said))
        except (TypeError, ValueError):
            return cls(extra=dict(said))


@dataclass(frozen=True)
class Startup(Record):
    """How bridge started a node apart from the user's set-up
    (bridge.system.otp.startup_record)."""

    boot: str = ""
    dot_erlang: str = ""
    dot_erlang_files: tuple[str, ...] = ()
    erl_libs: str = ""
    working_dir: str = ""
    crash_dump: str = ""
    worker_cache: str = ""
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True


@dataclass(frozen=True)
class NodeCpu(Record):
    """A running node's CPU, as its /proc/cpuinfo says."""

    model: str = ""
    arch: str = ""
    flags: tuple[str, ...] = ()  # the crypto flags
    virtualized: bool | None = None
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True


@dataclass(frozen=True)
class Agent(Record):
    """bridge's agent in a running node: its modules, who compiled them, and
    the share of one scheduler it may keep busy (--max-load)."""

    modules: tuple[str, ...] = ()
    compiled_by: str = ""
    max_load: float = 1.0
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True


@dataclass(frozen=True)
class NodeInfo(Record):
    """A running node reached over distribution (--node): its name and host,
    what the read-only probe found there, and how bridge reached it."""

    name: str = ""
    host: str = ""
    hostname: str = ""
    os_pid: str = ""
    os: str = ""
    code_mode: str = ""
    cpu: NodeCpu | None = None
    crypto_loaded_before: bool = False
    maps_error: str = jf(omit=EMPTY, default="")
    provenance: str = ""  # bridge.nodes.probe.verdict
    reached_by: str = ""
    agent: Agent | None = jf(omit=NONE, default=None)
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True


def _remote(record: Any, value: Any) -> bool:
    # What a running node's read-only probe does not say.
    return record.node is not None


@dataclass(frozen=True, kw_only=True)
class ErlangDetails(Provenance):
    """An Erlang node: its release, its crypto application and the library
    under it, the API each call used, its schedulers and clock."""

    otp_release: str = ""
    otp_version: str = ""
    erts_version: str = ""
    emu_flavor: str = ""  # jit | emu
    emu_type: str = jf(omit=_remote, default="")
    crypto_app_version: str = ""
    crypto_lib: str = ""  # crypto:info_lib()'s first entry, as text
    crypto_info_lib: tuple[LibInfo, ...] = ()
    crypto_info: CryptoInfo = jf(default_factory=CryptoInfo, decode=CryptoInfo.of)
    crypto_fips: str = jf(omit=EMPTY, default="")  # crypto:info_fips() (a running node)
    apis: dict[str, str] = jf(omit=_remote, default_factory=dict)  # operation -> function
    schedulers_online: int | None = None
    clock: str = ""
    clock_resolution_hz: int | None = jf(omit=_remote, default=None)
    startup: Startup | None = jf(omit=NONE, default=None)
    node: NodeInfo | None = jf(omit=NONE, default=None)

    json_order: ClassVar[tuple[str, ...]] = (
        *("otp_release", "otp_version", "erts_version", "emu_flavor", "emu_type"),
        *("crypto_app_version", "crypto_lib", "crypto_info_lib", "crypto_info", "crypto_fips"),
        *("apis", "libcrypto_loaded", "schedulers_online", "clock", "clock_resolution_hz"),
        *("env", "startup", "node", "libcrypto_dir"),
    )

    @property
    def library(self) -> str:
        return self.crypto_lib


@dataclass(frozen=True, kw_only=True)
class PythonDetails(Provenance):
    """A Python worker: the OpenSSL of its ssl module and of the
    cryptography package, and whether hashlib and hmac use OpenSSL."""

    implementation: str = ""
    ssl_openssl_version: str = ""
    cryptography_openssl_version: str | None = jf(omit=NONE, default=None)  # None: absent
    hashlib_sha256_type: str = ""
    hashlib_uses_openssl: bool = True
    hmac_impl: str = ""
    fips_mode: bool = False
    clock: str = ""

    json_order: ClassVar[tuple[str, ...]] = (
        *("implementation", "ssl_openssl_version", "cryptography_openssl_version"),
        *("hashlib_sha256_type", "hashlib_uses_openssl", "hmac_impl", "fips_mode"),
        *("libcrypto_loaded", "clock", "env", "libcrypto_dir"),
    )

    @property
    def library(self) -> str:
        return self.ssl_openssl_version


@dataclass(frozen=True, kw_only=True)
class OpensslDetails(Provenance):
    """The openssl CLI: `openssl version -a` as it printed it."""

    flavour: str = ""  # OpenSSL | LibreSSL | BoringSSL ...
    version_a: tuple[str, ...] = ()
    cpuinfo: str | None = None  # its capability vector ("OPENSSL_ia32cap=...")

    json_order: ClassVar[tuple[str, ...]] = (
        *("flavour", "version_a", "cpuinfo", "env", "libcrypto_loaded", "libcrypto_dir"),
    )


@dataclass(frozen=True, kw_only=True)
class ImportedDetails(Provenance):
    """A run pasted into `import-speed`: what the paste said of it."""

    imported: bool = True
    label: str = ""  # "run 1 (line 3): OpenSSL 3.0.2 ..."
    line: int = 0  # where the run starts in the pasted file
    command: str = ""
    heading: str = ""  # the free text just before the run
    built_on: str = ""
    options: str = ""
    compiler: str = ""
    cpuinfo: str | None = None
    multi: int | None = jf(omit=NONE, default=None)  # speed -multi N

    json_order: ClassVar[tuple[str, ...]] = (
        *("imported", "label", "line", "command", "heading", "built_on", "options"),
        *("compiler", "cpuinfo", "multi"),
    )


Details = ErlangDetails | PythonDetails | OpensslDetails | ImportedDetails

KINDS: dict[RuntimeKind, type[Provenance]] = {
    RuntimeKind.ERLANG: ErlangDetails,
    RuntimeKind.PYTHON: PythonDetails,
    RuntimeKind.OPENSSL: OpensslDetails,
}


def read(kind: Any, data: Mapping[str, Any]) -> Details:
    """The details of a runtime of `kind` from its object's other keys."""
    if data.get("imported") is True:
        return ImportedDetails.from_json(dict(data))
    return KINDS[RuntimeKind(kind)].from_json(dict(data))  # type: ignore[return-value]
