"""Scenario files: load scenarios/*.toml into frozen records, and validate.

A scenario is data, never code: it names an operation kind, an algorithm,
its parameters, and calls from the closed table in bridge.catalog.calls. Every
validation error names the file, the key, and what was expected.

Scenarios differ by kind, so each kind is its own record (a tagged union):
a hash scenario has a digest, a MAC scenario a digest, a key length and a
MAC length, a cipher scenario a cipher, a signature scenario a curve and a
digest; random bytes, key derivation (PBKDF2), EdDSA, RSA and key agreement
each have their own. They share the fields of `Scenario`. The TOML format is
the same for all: a `kind` key says which record a file is.

`sizes` are message sizes in bytes for most kinds; a kind whose cells vary
by something else says so in `size_unit` (PBKDF2: iterations), and the
renderers label the column with it.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Protocol

from bridge import plain
from bridge.catalog import calls, usercode, vocab

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the tomli package
    import tomli as tomllib
from bridge.errors import UsageError

# The built-in scenarios, as package data: bridge/_scenarios links to the
# repository's scenarios/ in a checkout; a wheel holds copies.
BUILTIN_DIR = Path(resources.files("bridge").joinpath("_scenarios")).resolve()
MAX_FILE_BYTES = 64 * 1024
MAX_SIZE = 1 << 30  # 1 GiB: inputs are generated in memory
MAX_FILE_SIZE = 16 << 30  # file-digest sizes are file sizes, written to disk
MAX_ITERATIONS = 10_000_000  # kdf sizes are iteration counts: 10 M takes seconds per call
# A scenario's sizes and levels of concurrency, at most (--sizes and --concurrency too).
MAX_SIZES = 64
MAX_LEVELS = 16
# A scenario's name, as the built-in ones are spelt: it is a file name, a
# label in every table and a key in reports, so no controls, no bidi
# overrides, no separators and a length a file system takes.
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
DEFAULT_TLS_CERT = "ecdsa-p256"
NAME_RULE = (
    "at most 64 lower-case letters, digits, '.', '_' and '-', starting with a letter or digit"
)


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """What every kind of scenario has."""

    kind: ClassVar[vocab.ScenarioKind]
    # Cells whose one call takes about a second (a whole file): few samples.
    long_calls: ClassVar[bool] = False
    # What `sizes` count: bytes, except where a kind says otherwise
    # (hw.verdicts.size_text words each): "iterations" (PBKDF2), "per call"
    # (a fixed-size operation: its size is the message it signs, or the
    # shared secret's length, and no MB/s or per-byte split applies).
    size_unit: ClassVar[str] = "bytes"
    # Why --sizes cannot change this kind's sizes, where it cannot ("": it can).
    fixed_sizes: ClassVar[str] = ""

    name: str
    description: str
    sizes: tuple[int, ...]
    features: tuple[str, ...] = ()
    calls: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    path: str = ""
    source: str = ""  # where the benchmark comes from
    # Levels of concurrency to run it at (bridge.analysis.concurrency); () = one call
    # at a time only, as always.
    concurrency: tuple[int, ...] = ()
    # The user's own calls (bridge.catalog.usercode), timed beside the table's;
    # each runtime kind they need is in `calls`, with no call ids if no others.
    user_calls: tuple[usercode.UserCall, ...] = ()

    @property
    def algorithm(self) -> str:
        raise NotImplementedError

    def with_user_calls(self, user: tuple[usercode.UserCall, ...], only: bool = False) -> Scenario:
        """These user calls beside the scenario's own (or instead of them)."""
        table = {} if only else dict(self.calls)
        for uc in user:
            table.setdefault(uc.kind, ())
        return dataclasses.replace(self, calls=table, user_calls=tuple(user))

    def params(self) -> dict[str, Any]:
        """What a worker needs to know of the scenario to make a call
        (the inputs travel separately)."""
        return {}

    def with_sizes(self, sizes: tuple[int, ...]) -> Scenario:
        return dataclasses.replace(self, sizes=sizes)

    def with_concurrency(self, levels: tuple[int, ...]) -> Scenario:
        return dataclasses.replace(self, concurrency=levels)

    def with_call(self, runtime: str, call_id: str) -> Scenario:
        """The scenario with one more call (`bridge run --with`), after its own."""
        ids = self.calls.get(runtime, ())
        if call_id in ids:
            return self
        return dataclasses.replace(self, calls={**self.calls, runtime: (*ids, call_id)})

    def to_json(self) -> dict[str, Any]:
        """The scenario as data: `parse(to_json())` gives it back (replay).
        Keys in the order reports have always had them."""
        d: dict[str, Any] = {"name": self.name, "description": self.description}
        d["kind"] = self.kind.value
        d.update(self._head_json())
        d["sizes"] = list(self.sizes)
        d.update(self._mid_json())
        d["features"] = list(self.features)
        d["calls"] = {k: list(v) for k, v in self.calls.items() if v}
        if self.user_calls:
            # Verbatim: a replay shows each one and asks before running it.
            d["user_calls"] = [uc.to_json() for uc in self.user_calls]
        if self.source:
            d["source"] = self.source
        d.update(self._tail_json())
        if self.concurrency:
            d["concurrency"] = list(self.concurrency)
        return d

    def _head_json(self) -> dict[str, Any]:
        return {}

    def _mid_json(self) -> dict[str, Any]:
        return {}

    def _tail_json(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, kw_only=True)
class HashScenario(Scenario):
    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.HASH
    digest: str

    @property
    def algorithm(self) -> str:
        return self.digest

    def params(self) -> dict[str, Any]:
        return {"digest": self.digest}

    def _head_json(self) -> dict[str, Any]:
        return {"digest": self.digest}


@dataclass(frozen=True, kw_only=True)
class FileDigestScenario(HashScenario):
    """A streaming digest of a generated file: `sizes` are file sizes."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.FILE_DIGEST
    long_calls: ClassVar[bool] = True
    CHUNK: ClassVar[int] = 65536  # bytes per read in the streaming calls

    def params(self) -> dict[str, Any]:
        return {"digest": self.digest, "chunk": self.CHUNK}


@dataclass(frozen=True, kw_only=True)
class MacScenario(Scenario):
    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.MAC
    digest: str
    key_bytes: int
    mac_bytes: int = 0  # 0: the full MAC; otherwise cut to this many bytes

    @property
    def algorithm(self) -> str:
        return f"hmac-{self.digest}"

    def params(self) -> dict[str, Any]:
        return {"digest": self.digest, "mac_bytes": self.mac_bytes}

    def _head_json(self) -> dict[str, Any]:
        return {"digest": self.digest}

    def _mid_json(self) -> dict[str, Any]:
        return {"key_bytes": self.key_bytes, "mac_bytes": self.mac_bytes}


@dataclass(frozen=True, kw_only=True)
class CipherScenario(Scenario):
    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.CIPHER
    cipher: str

    @property
    def algorithm(self) -> str:
        return self.cipher

    @property
    def spec(self) -> vocab.Cipher:
        return vocab.CIPHERS[self.cipher]

    def params(self) -> dict[str, Any]:
        return {"cipher": self.cipher}

    def _tail_json(self) -> dict[str, Any]:
        return {"cipher": self.cipher}


@dataclass(frozen=True, kw_only=True)
class SignatureScenario(Scenario):
    """ECDSA: sign and verify a message hashed with `digest`."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.SIGN
    size_unit: ClassVar[str] = "per call"
    curve: str
    digest: str

    @property
    def algorithm(self) -> str:
        return f"ecdsa-{self.curve}"

    def params(self) -> dict[str, Any]:
        return {"curve": self.curve, "digest": self.digest}

    def _head_json(self) -> dict[str, Any]:
        return {"digest": self.digest}

    def _tail_json(self) -> dict[str, Any]:
        return {"curve": self.curve}


@dataclass(frozen=True, kw_only=True)
class RandomScenario(Scenario):
    """Random bytes from each runtime's generator: sizes are the bytes asked for."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.RANDOM

    @property
    def algorithm(self) -> str:
        return "random"


@dataclass(frozen=True, kw_only=True)
class KdfScenario(Scenario):
    """PBKDF2-HMAC with `digest`: sizes are iteration counts, not bytes."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.KDF
    size_unit: ClassVar[str] = "iterations"
    digest: str
    key_bytes: int  # the derived key's length
    salt_bytes: int = 16

    @property
    def algorithm(self) -> str:
        return f"pbkdf2-{self.digest}"

    def params(self) -> dict[str, Any]:
        return {"digest": self.digest, "key_bytes": self.key_bytes}

    def _head_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "key_bytes": self.key_bytes, "salt_bytes": self.salt_bytes}


@dataclass(frozen=True, kw_only=True)
class EddsaScenario(Scenario):
    """EdDSA sign and verify of a message (Ed25519 hashes it itself)."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.EDDSA
    size_unit: ClassVar[str] = "per call"
    curve: str

    @property
    def algorithm(self) -> str:
        return self.curve

    def params(self) -> dict[str, Any]:
        return {"curve": self.curve}

    def _head_json(self) -> dict[str, Any]:
        return {"curve": self.curve}


@dataclass(frozen=True, kw_only=True)
class RsaScenario(Scenario):
    """RSA sign and verify of a message hashed with `digest`, PKCS#1 v1.5 and
    PSS (the padding is the call's: both fit one key)."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.RSA
    size_unit: ClassVar[str] = "per call"
    bits: int
    digest: str

    @property
    def algorithm(self) -> str:
        return f"rsa-{self.bits}"

    @property
    def salt_bytes(self) -> int:
        """PSS salt: as long as the digest (vocab, PSS)."""
        return vocab.DIGESTS[self.digest].size

    def params(self) -> dict[str, Any]:
        return {"bits": self.bits, "digest": self.digest, "salt_bytes": self.salt_bytes}

    def _head_json(self) -> dict[str, Any]:
        return {"bits": self.bits, "digest": self.digest}


@dataclass(frozen=True, kw_only=True)
class AgreementScenario(Scenario):
    """Key agreement (X25519, ECDH): sizes hold the shared secret's length,
    the one size such a cell has; --sizes leaves it alone."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.AGREEMENT
    size_unit: ClassVar[str] = "per call"
    fixed_sizes: ClassVar[str] = "its one size is the shared secret's length"
    curve: str

    @property
    def algorithm(self) -> str:
        return "x25519" if self.curve == "x25519" else f"ecdh-{self.curve}"

    @property
    def spec(self) -> vocab.Agreement:
        return vocab.AGREEMENTS[self.curve]

    def params(self) -> dict[str, Any]:
        return {"curve": self.curve}

    def with_sizes(self, sizes: tuple[int, ...]) -> Scenario:
        return self

    def _head_json(self) -> dict[str, Any]:
        return {"curve": self.curve}


@dataclass(frozen=True, kw_only=True)
class TlsScenario(Scenario):
    """TLS handshakes (bridge's own certificates, made at run time): one
    handshake per call, so sizes hold [1]; --sizes leaves it alone. The
    protocol version is the call's (handshake-1.3, resume-1.2, ...); the
    certificate's key type is `cert`, and `client_cert` makes it mutual TLS
    (the server asks for the client's certificate and verifies it)."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.TLS
    size_unit: ClassVar[str] = "handshake per call"
    group: str
    cert: str = DEFAULT_TLS_CERT
    client_cert: bool = False

    @property
    def algorithm(self) -> str:
        return f"tls-{self.group}"

    @property
    def spec(self) -> vocab.TlsGroup:
        return vocab.TLS_GROUPS[self.group]

    @property
    def cert_spec(self) -> vocab.TlsCert:
        return vocab.TLS_CERTS[self.cert]

    @property
    def resumption(self) -> bool:
        """Does a call of the scenario resume a session? Then every server of
        the scenario issues TLS 1.3 tickets and keeps TLS 1.2 sessions, for
        its full handshakes too: they are the handshakes resumption saves."""
        return any(
            calls.CALLS[rt, c].op in calls.TLS_RESUME_OPS
            for rt, ids in self.calls.items()
            for c in ids
            if (rt, c) in calls.CALLS
        )

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"group": self.group, "tls_cert": self.cert}
        return out | {"client_auth": int(self.client_cert), "resumption": int(self.resumption)}

    def with_sizes(self, sizes: tuple[int, ...]) -> Scenario:
        return self

    def _head_json(self) -> dict[str, Any]:
        # Written only where they differ from the defaults, so reports of the
        # scenarios from before them read and write back as they were.
        out: dict[str, Any] = {"group": self.group}
        if self.cert != DEFAULT_TLS_CERT:
            out["cert"] = self.cert
        if self.client_cert:
            out["client_cert"] = True
        return out


@dataclass(frozen=True, kw_only=True)
class ExprScenario(Scenario):
    """`bridge time`'s own scenario: user calls only, on a message of each
    size (Data), with a 32-byte key and a 16-byte IV from the seed. No
    reference: with --same-output the first expression's bytes are the ones
    the others must equal."""

    kind: ClassVar[vocab.ScenarioKind] = vocab.ScenarioKind.EXPR
    # The expressions need not read Data: no MB/s, and the size says what it is.
    size_unit: ClassVar[str] = "bytes of Data"

    @property
    def algorithm(self) -> str:
        return "user code"


KINDS: dict[vocab.ScenarioKind, type[Scenario]] = {
    cls.kind: cls
    for cls in (
        MacScenario,
        HashScenario,
        CipherScenario,
        FileDigestScenario,
        SignatureScenario,
        RandomScenario,
        KdfScenario,
        EddsaScenario,
        RsaScenario,
        AgreementScenario,
        TlsScenario,
        ExprScenario,
    )
}


def size_unit(kind: vocab.ScenarioKind | None) -> str:
    """What a kind's sizes count; bytes for a report without scenario data
    (an import's scenarios have no kind)."""
    known = KINDS.get(kind) if kind is not None else None
    return known.size_unit if known else "bytes"


def max_size(kind: vocab.ScenarioKind | str) -> int:
    """The largest size a scenario of this kind takes, in its unit."""
    bounds = {vocab.ScenarioKind.KDF: MAX_ITERATIONS, vocab.ScenarioKind.FILE_DIGEST: MAX_FILE_SIZE}
    return bounds.get(vocab.ScenarioKind(kind), MAX_SIZE)


class Facts(Protocol):
    """What analysis reads of a scenario (bridge.analysis.findings,
    bridge.hw.ab): its name, kind, the features its A/B masks, its calls per
    runtime kind and what its sizes count. A Scenario has them, and so has
    the record of one a report ran (bridge.report.scenario.ScenarioRun)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> vocab.ScenarioKind | None: ...
    @property
    def features(self) -> tuple[str, ...]: ...
    @property
    def calls(self) -> dict[str, tuple[str, ...]]: ...
    @property
    def size_unit(self) -> str: ...


def find(name_or_path: str, extra_dirs: tuple[Path, ...] = ()) -> Path:
    """A scenario by name (searched in extra_dirs and the built-ins) or by path.

    A name found in two places is refused, not resolved by order: a file in
    a --scenario-dir named like a built-in used to replace it silently, its
    own calls (user code among them) running under the built-in's name. The
    file can be renamed, or run by its path, which says which one is meant."""
    candidate = Path(name_or_path)
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        try:
            found = candidate.is_file()
        except (OSError, ValueError) as exc:  # a name too long, a NUL
            reason = getattr(exc, "strerror", None) or "not a file name"
            raise UsageError(f"scenario file {name_or_path[:200]!r}: {reason}") from None
        if not found:
            raise UsageError(f"scenario file {name_or_path}: no such file")
        return candidate
    check_name(name_or_path)
    check_dirs(extra_dirs)
    files = [d / f"{name_or_path}.toml" for d in (*extra_dirs, BUILTIN_DIR)]
    # The same file twice (a --scenario-dir that is the built-ins) is one file.
    seen: dict[Path, Path] = {}
    for path in files:
        if path.is_file():
            seen.setdefault(path.resolve(), path)
    found_in = list(seen.values())
    if len(found_in) > 1:
        raise _shadowed(name_or_path, found_in)
    if found_in:
        return found_in[0]
    raise UsageError(unknown(name_or_path, available(extra_dirs)))


def unknown(name: str, known: list[str]) -> str:
    """One line for a name no scenario has: the closest names, if any, and
    where to see them all."""
    close = closest(name, known)
    listed = f"{', '.join(close[:-1])} or {close[-1]}" if len(close) > 1 else "".join(close)
    guess = f"; did you mean {listed}?" if close else ""
    where = f"`crypto-bridge list` names all {len(known)}" if known else "there is none"
    return f"unknown scenario {name!r}{guess} ({where})"


def closest(name: str, known: list[str], most: int = 3) -> list[str]:
    """The names most like `name` (difflib's ratio, 0.6 or more), then those
    that contain it (aes: aes-128-gcm...), `most` at most."""
    found = difflib.get_close_matches(name, known, n=most, cutoff=0.6)
    if len(name) >= 3:
        found += [n for n in known if name in n and n not in found]
    return found[:most]


def _shadowed(name: str, files: list[Path]) -> UsageError:
    first, second = files[0], files[1]
    builtin = second.parent == BUILTIN_DIR
    what = f"the built-in {second}" if builtin else str(second)
    return UsageError(
        f"scenario {name!r} is both {first} and {what}: a --scenario-dir file does not"
        f" replace {'a built-in' if builtin else 'another'} of the same name; rename it"
        f' ({name}-mine.toml, with name = "{name}-mine")'
        f" or give its path (crypto-bridge run {first})"
    )


def check_dirs(extra_dirs: tuple[Path, ...]) -> None:
    """Each --scenario-dir is a directory (not a device, a FIFO or a file)."""
    for d in extra_dirs:
        if not d.is_dir():
            raise UsageError(f"--scenario-dir {d}: not a directory")


def check_name(name: str) -> None:
    """Refuse a scenario name that no scenario can have, before it is used as a file name."""
    if not NAME.fullmatch(name):
        shown = repr(name) if len(name) <= 80 else repr(name[:77]) + "..."
        raise UsageError(
            f"{shown} is not a scenario name ({NAME_RULE}; or give a path ending in .toml)"
        )


def available(extra_dirs: tuple[Path, ...] = ()) -> list[str]:
    check_dirs(extra_dirs)
    names = set()
    for directory in (*extra_dirs, BUILTIN_DIR):
        if directory.is_dir():
            names.update(p.stem for p in directory.glob("*.toml"))
    return sorted(names)


def load(name_or_path: str, extra_dirs: tuple[Path, ...] = ()) -> Scenario:
    path = find(name_or_path, extra_dirs)
    where = f"scenario file {path}"
    try:
        raw = plain.read_bytes(path, MAX_FILE_BYTES, "not a scenario")
    except plain.TooLarge as exc:
        raise UsageError(
            f"scenario file {exc.message} (the limit is {MAX_FILE_BYTES} bytes)"
        ) from None
    except UsageError as exc:
        raise UsageError(f"scenario file {exc.message}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text") from None
    # tomllib recurses into arrays and inline tables: bound them first; dotted
    # keys and table headers nest without brackets, so the result is bounded too.
    plain.check_toml_depth(text, where)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: not valid TOML ({exc})") from None
    except RecursionError:  # nesting the scan above missed
        raise UsageError(f"{where}: nested deeper than {plain.MAX_DEPTH} levels") from None
    plain.check_data_depth(data, where)
    return parse(data, str(path))


def parse(data: dict[str, Any], where: str) -> Scenario:
    """Validate one scenario (a TOML table, or a report's `scenarios` entry)."""
    v = _Validator(data, where)
    name = v.string("name")
    if not NAME.fullmatch(name):
        raise v.fail("name", NAME_RULE)
    kind = v.choice("kind", tuple(KINDS))
    fields = _PARSERS[kind](v)
    if kind == "kdf":
        sizes = v.sizes("sizes", max_size(kind), what="iteration counts")
    else:
        sizes = v.sizes("sizes", max_size(kind))
    block = vocab.CIPHERS[fields["cipher"]].block if kind == "cipher" else 1
    if any(n % block for n in sizes):
        raise v.fail(
            "sizes", f"multiples of {block} bytes ({fields['cipher']} is used without padding)"
        )
    if kind == "mac":
        fields["key_bytes"] = v.integer("key_bytes", 1, 1024)
        fields["mac_bytes"] = v.integer(
            "mac_bytes", 0, vocab.DIGESTS[fields["digest"]].size, default=0
        )
    if kind == "agreement":
        secret = vocab.AGREEMENTS[fields["curve"]].secret_bytes
        if sizes != (secret,):
            raise v.fail("sizes", f"[{secret}], the shared secret's length")
    if kind == "tls" and sizes != (1,):
        raise v.fail("sizes", "[1], one handshake per call")
    features = v.features("features")
    table, user = v.calls("calls", kind)
    user += v.user_calls("user_calls")
    try:
        usercode.check_distinct(user)
    except usercode.BadCall as exc:
        raise UsageError(f"scenario file {where}: {exc}") from None
    for uc in user:
        table.setdefault(uc.kind, ())
    if kind == "expr" and not user:
        raise v.fail("calls", "user calls (a scenario of kind 'expr' has no calls of its own)")
    if kind == "cipher" and not vocab.CIPHERS[fields["cipher"]].aead:
        v.no_aead_calls(table, fields["cipher"])
    levels = v.levels("concurrency", kind)
    v.no_unknown_keys(KINDS[kind])
    return KINDS[kind](
        name=name,
        description=v.string("description"),
        sizes=sizes,
        features=features,
        calls=table,
        path=where,
        source=v.string("source", default=""),
        concurrency=levels,
        user_calls=tuple(user),
        **fields,
    )


def _digest_fields(v: _Validator) -> dict[str, Any]:
    return {"digest": v.choice("digest", tuple(vocab.DIGESTS))}


def _cipher_fields(v: _Validator) -> dict[str, Any]:
    return {"cipher": v.choice("cipher", tuple(vocab.CIPHERS))}


def _signature_fields(v: _Validator) -> dict[str, Any]:
    digest = v.choice("digest", tuple(vocab.DIGESTS))
    return {"curve": v.choice("curve", tuple(vocab.CURVES)), "digest": digest}


def _no_fields(v: _Validator) -> dict[str, Any]:
    return {}


def _kdf_fields(v: _Validator) -> dict[str, Any]:
    return {
        "digest": v.choice("digest", tuple(d for d in vocab.DIGESTS if d.startswith("sha"))),
        "key_bytes": v.integer("key_bytes", 1, 1024),
        "salt_bytes": v.integer("salt_bytes", 8, 1024, default=16),
    }


def _eddsa_fields(v: _Validator) -> dict[str, Any]:
    return {"curve": v.choice("curve", tuple(vocab.ED_CURVES))}


def _rsa_fields(v: _Validator) -> dict[str, Any]:
    bits = v.data.get("bits")
    if not isinstance(bits, int) or isinstance(bits, bool) or bits not in vocab.RSA_SPEED:
        raise v.fail("bits", "one of " + ", ".join(map(str, vocab.RSA_SPEED)))
    return {"bits": bits, "digest": v.choice("digest", ("sha256", "sha384", "sha512"))}


def _agreement_fields(v: _Validator) -> dict[str, Any]:
    return {"curve": v.choice("curve", tuple(vocab.AGREEMENTS))}


def _tls_fields(v: _Validator) -> dict[str, Any]:
    return {
        "group": v.choice("group", tuple(vocab.TLS_GROUPS)),
        "cert": v.choice("cert", tuple(vocab.TLS_CERTS), default=DEFAULT_TLS_CERT),
        "client_cert": v.boolean("client_cert", default=False),
    }


_PARSERS = {
    "mac": _digest_fields,
    "hash": _digest_fields,
    "file-digest": _digest_fields,
    "cipher": _cipher_fields,
    "sign": _signature_fields,
    "random": _no_fields,
    "kdf": _kdf_fields,
    "eddsa": _eddsa_fields,
    "rsa": _rsa_fields,
    "agreement": _agreement_fields,
    "tls": _tls_fields,
    "expr": _no_fields,
}


class _Validator:
    COMMON = {
        *("name", "description", "kind", "sizes", "features", "calls", "source", "concurrency"),
        "user_calls",
    }
    # Every key any kind may have, for the "unknown key" message.
    ALL = COMMON | {
        "digest",
        "cipher",
        "curve",
        "key_bytes",
        "mac_bytes",
        "salt_bytes",
        "bits",
        "group",
        "cert",
        "client_cert",
    }

    def __init__(self, data: dict[str, Any], where: str) -> None:
        self.data = data
        self.where = where

    def fail(self, key: str, expected: str) -> UsageError:
        got = self.data.get(key, "nothing")
        shown = repr(got) if len(repr(got)) <= 40 else repr(got)[:37] + "..."
        return UsageError(
            f"scenario file {self.where}: key '{key}': expected {expected}, got {shown}"
        )

    def string(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str) or not value.strip() or len(value) > 500:
            if value == "" and default == "":
                return ""
            raise self.fail(key, "a non-empty string of at most 500 characters")
        return value

    def choice(self, key: str, options: tuple[str, ...], default: str | None = None) -> str:
        value = self.data.get(key, default)
        if value not in options:
            raise self.fail(key, "one of " + ", ".join(options))
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false")
        return value

    def integer(self, key: str, lo: int, hi: int, default: int | None = None) -> int:
        value = self.data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise self.fail(key, f"an integer from {lo} to {hi}")
        return value

    def sizes(
        self, key: str, limit: int = MAX_SIZE, what: str = "message sizes in bytes"
    ) -> tuple[int, ...]:
        value = self.data.get(key)
        if (
            not isinstance(value, list)
            or not value
            or len(value) > MAX_SIZES
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in value)
            or not all(1 <= s <= limit for s in value)
        ):
            raise self.fail(key, f"a list of 1 to {MAX_SIZES} {what}, 1 to {limit}")
        if len(set(value)) != len(value):
            raise self.fail(key, "distinct sizes")
        return tuple(value)

    def levels(self, key: str, kind: str) -> tuple[int, ...]:
        """Levels of concurrency: distinct whole numbers, 1 to 1024; level 1
        is added, since scaling is relative to it."""
        if key not in self.data:
            return ()
        value = self.data[key]
        if kind == "file-digest":
            raise self.fail(key, "no levels for kind 'file-digest' (one whole file per call)")
        if (
            not isinstance(value, list)
            or not value
            or len(value) > MAX_LEVELS
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in value)
            or not all(1 <= n <= 1024 for n in value)
            or len(set(value)) != len(value)
        ):
            raise self.fail(
                key, f"a list of 1 to {MAX_LEVELS} distinct levels, whole numbers from 1 to 1024"
            )
        return tuple(sorted({1, *value}))

    def features(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(f in vocab.FEATURES for f in value):
            raise self.fail(key, "a list drawn from " + ", ".join(vocab.FEATURES))
        return tuple(value)

    def calls(
        self, key: str, kind: str
    ) -> tuple[dict[str, tuple[str, ...]], list[usercode.UserCall]]:
        """`[calls]` (runtime = [ids]) or `[[calls]]` (one entry per call: a
        table's call, `runtime` and `call`, or the user's, `runtime` and
        `expr`, see bridge.catalog.usercode); a report writes user calls apart
        (`user_calls`) and may then have no other calls."""
        value = self.data.get(key)
        if isinstance(value, list) and value:
            return self._call_entries(key, kind, value)
        if isinstance(value, dict) and not value and self.data.get("user_calls"):
            return {}, []
        if not isinstance(value, dict) or not value:
            raise self.fail(
                key,
                "a table mapping runtimes (erlang, python, openssl) to call lists,"
                " or [[calls]] entries",
            )
        return self._call_table(key, kind, value), []

    def _call_entries(
        self, key: str, kind: str, entries: list[Any]
    ) -> tuple[dict[str, tuple[str, ...]], list[usercode.UserCall]]:
        table: dict[str, list[str]] = {}
        user: list[usercode.UserCall] = []
        for n, entry in enumerate(entries, 1):
            where = f"scenario file {self.where}: [[calls]] entry {n}"
            if isinstance(entry, dict) and "call" in entry:
                extra = sorted(set(entry) - {"runtime", "call"})
                if extra:
                    raise UsageError(
                        f"{where}: unknown key {extra[0]!r} beside 'call' (a call of the"
                        " table takes only runtime and call)"
                    )
                runtime, cid = entry.get("runtime"), entry.get("call")
                if not isinstance(runtime, str) or not isinstance(cid, str):
                    raise UsageError(f"{where}: 'runtime' and 'call' must be strings")
                table.setdefault(runtime, []).append(cid)
                continue
            try:
                user.append(usercode.from_json(entry))
            except usercode.BadCall as exc:
                raise UsageError(f"{where}: {exc}") from None
        checked = self._call_table(key, kind, {k: v for k, v in table.items()}) if table else {}
        return checked, user

    def user_calls(self, key: str) -> list[usercode.UserCall]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or len(value) > 64:
            raise self.fail(key, "a list of at most 64 user calls")
        out = []
        for n, entry in enumerate(value, 1):
            try:
                out.append(usercode.from_json(entry))
            except usercode.BadCall as exc:
                raise UsageError(f"scenario file {self.where}: {key} entry {n}: {exc}") from None
        return out

    def _call_table(self, key: str, kind: str, value: dict[str, Any]) -> dict[str, tuple[str, ...]]:
        table: dict[str, tuple[str, ...]] = {}
        for runtime, ids in value.items():
            if runtime not in vocab.RUNTIME_KINDS:
                raise UsageError(
                    f"scenario file {self.where}: key 'calls.{runtime}': expected one of"
                    f" {', '.join(vocab.RUNTIME_KINDS)}"
                )
            if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
                raise UsageError(
                    f"scenario file {self.where}: key 'calls.{runtime}': expected a list of"
                    f" call names"
                )
            for call_id in ids:
                call = calls.lookup(runtime, call_id)
                if call is None or kind not in call.kinds:
                    fits = calls.serving(runtime, kind)
                    raise UsageError(
                        f"scenario file {self.where}: key 'calls.{runtime}': unknown call"
                        f" {call_id!r} for kind '{kind}'; expected one of {', '.join(fits)}"
                    )
            table[runtime] = tuple(ids)
        return table

    def no_aead_calls(self, table: dict[str, tuple[str, ...]], cipher: str) -> None:
        for runtime, ids in table.items():
            for call_id in ids:
                if calls.CALLS[runtime, call_id].op in calls.AEAD_OPS:
                    raise UsageError(
                        f"scenario file {self.where}: key 'calls.{runtime}': call {call_id!r}"
                        f" needs an AEAD cipher, and {cipher} is not one"
                    )

    def no_unknown_keys(self, cls: type[Scenario]) -> None:
        """A key of another kind ('cipher' in a hash scenario) is refused by
        name; a key no kind has is listed against every key a file may have."""
        own = self.COMMON | {f.name for f in dataclasses.fields(cls)} - {"path"}
        for key in self.data:
            if key in self.ALL and key not in own:
                raise self.fail(key, f"no '{key}' for kind '{cls.kind}'")
        unknown = sorted(set(self.data) - self.ALL)
        if unknown:
            raise UsageError(
                f"scenario file {self.where}: unknown key '{unknown[0]}'; expected only"
                f" {', '.join(sorted(self.ALL))}"
            )
