"""Scenario files: load scenarios/*.toml into frozen dataclasses, and validate.

A scenario is data, never code: it names an operation kind, an algorithm,
its parameters, and calls from the closed table in bridge.calls. Every
validation error names the file, the key, and what was expected.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bridge import calls
from bridge.errors import UsageError

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "scenarios"
MAX_FILE_BYTES = 64 * 1024
MAX_SIZE = 1 << 30  # 1 GiB: inputs are generated in memory
KINDS = ("mac", "hash", "cipher", "file-digest", "sign")
CURVES = ("p256", "p384", "p521")
MAX_FILE_SIZE = 16 << 30  # file-digest sizes are file sizes, written to disk
# OpenSSL cipher name -> (key bytes, IV/nonce bytes, block bytes or 1 for AEAD/stream)
CIPHERS = {
    "aes-128-cbc": (16, 16, 16),
    "aes-256-cbc": (32, 16, 16),
    "aes-128-gcm": (16, 12, 1),
    "aes-256-gcm": (32, 12, 1),
}
DIGEST_BYTES = {
    "sha1": 20,
    "sha224": 28,
    "sha256": 32,
    "sha384": 48,
    "sha512": 64,
    "md5": 16,
    "sha3-256": 32,
    "sha3-512": 64,
}
# Hardware features a scenario may name; bridge.hardware knows their masks.
FEATURES = ("sha", "aes", "pclmul", "avx2")


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    kind: str
    digest: str  # "" for ciphers
    sizes: tuple[int, ...]
    key_bytes: int
    mac_bytes: int
    features: tuple[str, ...]
    calls: dict[str, tuple[str, ...]]  # runtime kind -> call ids
    path: str
    source: str = ""  # where the benchmark comes from
    cipher: str = ""  # for kind "cipher"
    curve: str = ""  # for kind "sign"

    @property
    def algorithm(self) -> str:
        if self.kind == "cipher":
            return self.cipher
        if self.kind == "sign":
            return f"ecdsa-{self.curve}"
        return f"hmac-{self.digest}" if self.kind == "mac" else self.digest

    @property
    def iv_bytes(self) -> int:
        return CIPHERS[self.cipher][1] if self.kind == "cipher" else 0

    def to_json(self) -> dict[str, Any]:
        """The scenario as data: `parse(to_json())` gives it back (replay)."""
        d = {k: v for k, v in asdict(self).items() if k != "path"}
        d["sizes"] = list(self.sizes)
        d["features"] = list(self.features)
        d["calls"] = {k: list(v) for k, v in self.calls.items()}
        if self.kind != "mac":
            del d["key_bytes"], d["mac_bytes"]
        if self.kind == "cipher":
            del d["digest"]
        else:
            del d["cipher"]
        if self.kind != "sign":
            del d["curve"]
        if not self.source:
            del d["source"]
        return d


def find(name_or_path: str, extra_dirs: tuple[Path, ...] = ()) -> Path:
    """A scenario by name (searched in extra_dirs, then built-ins) or by path."""
    candidate = Path(name_or_path)
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        if not candidate.is_file():
            raise UsageError(f"scenario file {name_or_path}: no such file")
        return candidate
    for directory in (*extra_dirs, BUILTIN_DIR):
        path = directory / f"{name_or_path}.toml"
        if path.is_file():
            return path
    names = ", ".join(available(extra_dirs)) or "none"
    raise UsageError(f"unknown scenario {name_or_path!r}; known scenarios: {names}")


def available(extra_dirs: tuple[Path, ...] = ()) -> list[str]:
    names = set()
    for directory in (*extra_dirs, BUILTIN_DIR):
        if directory.is_dir():
            names.update(p.stem for p in directory.glob("*.toml"))
    return sorted(names)


def load(name_or_path: str, extra_dirs: tuple[Path, ...] = ()) -> Scenario:
    path = find(name_or_path, extra_dirs)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"scenario file {path}: cannot read ({exc.strerror})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise UsageError(f"scenario file {path}: {len(raw)} bytes, the limit is {MAX_FILE_BYTES}")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"scenario file {path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"scenario file {path}: not valid TOML ({exc})") from None
    return parse(data, str(path))


def parse(data: dict[str, Any], where: str) -> Scenario:
    v = _Validator(data, where)
    name = v.string("name")
    kind = v.choice("kind", KINDS)
    if kind == "cipher":
        cipher = v.choice("cipher", tuple(CIPHERS))
        digest = v.absent("digest", "")
    else:
        cipher = v.absent("cipher", "")
        digest = v.choice("digest", tuple(DIGEST_BYTES))
    curve = v.choice("curve", CURVES) if kind == "sign" else v.absent("curve", "")
    sizes = v.sizes("sizes", MAX_FILE_SIZE if kind == "file-digest" else MAX_SIZE)
    block = CIPHERS[cipher][2] if cipher else 1
    if any(n % block for n in sizes):
        raise v.fail("sizes", f"multiples of {block} bytes ({cipher} is used without padding)")
    key_bytes = v.integer("key_bytes", 1, 1024) if kind == "mac" else v.absent("key_bytes", 0)
    mac_bytes = (
        v.integer("mac_bytes", 0, DIGEST_BYTES[digest], default=0)
        if kind == "mac"
        else v.absent("mac_bytes", 0)
    )
    features = v.features("features")
    table = v.calls("calls", kind)
    v.no_unknown_keys()
    return Scenario(
        name=name,
        description=v.string("description"),
        kind=kind,
        digest=digest,
        sizes=sizes,
        key_bytes=key_bytes,
        mac_bytes=mac_bytes,
        features=features,
        calls=table,
        path=where,
        source=v.string("source", default=""),
        cipher=cipher,
        curve=curve,
    )


class _Validator:
    KEYS = {
        "name",
        "description",
        "kind",
        "digest",
        "cipher",
        "curve",
        "sizes",
        "key_bytes",
        "mac_bytes",
        "features",
        "calls",
        "source",
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

    def choice(self, key: str, options: tuple[str, ...]) -> str:
        value = self.data.get(key)
        if value not in options:
            raise self.fail(key, "one of " + ", ".join(options))
        return value

    def integer(self, key: str, lo: int, hi: int, default: int | None = None) -> int:
        value = self.data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise self.fail(key, f"an integer from {lo} to {hi}")
        return value

    def absent(self, key: str, value):
        if key in self.data:
            raise self.fail(key, f"no '{key}' for kind '{self.data.get('kind')}'")
        return value

    def sizes(self, key: str, limit: int = MAX_SIZE) -> tuple[int, ...]:
        value = self.data.get(key)
        if (
            not isinstance(value, list)
            or not value
            or len(value) > 64
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in value)
            or not all(1 <= s <= limit for s in value)
        ):
            raise self.fail(key, f"a list of 1 to 64 message sizes in bytes, 1 to {limit}")
        if len(set(value)) != len(value):
            raise self.fail(key, "distinct sizes")
        return tuple(value)

    def features(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(f in FEATURES for f in value):
            raise self.fail(key, "a list drawn from " + ", ".join(FEATURES))
        return tuple(value)

    def calls(self, key: str, kind: str) -> dict[str, tuple[str, ...]]:
        value = self.data.get(key)
        if not isinstance(value, dict) or not value:
            raise self.fail(key, "a table mapping runtimes (erlang, python, openssl) to call lists")
        table: dict[str, tuple[str, ...]] = {}
        for runtime, ids in value.items():
            if runtime not in calls.RUNTIME_KINDS:
                raise UsageError(
                    f"scenario file {self.where}: key 'calls.{runtime}': expected one of"
                    f" {', '.join(calls.RUNTIME_KINDS)}"
                )
            if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
                raise UsageError(
                    f"scenario file {self.where}: key 'calls.{runtime}': expected a list of"
                    f" call names"
                )
            for call_id in ids:
                call = calls.lookup(runtime, call_id)
                if call is None or kind not in call.kinds:
                    fits = [
                        c for c in calls.known(runtime) if kind in calls.CALLS[runtime, c].kinds
                    ]
                    raise UsageError(
                        f"scenario file {self.where}: key 'calls.{runtime}': unknown call"
                        f" {call_id!r} for kind '{kind}'; expected one of {', '.join(fits)}"
                    )
            table[runtime] = tuple(ids)
        return table

    def no_unknown_keys(self) -> None:
        unknown = sorted(set(self.data) - self.KEYS)
        if unknown:
            raise UsageError(
                f"scenario file {self.where}: unknown key '{unknown[0]}'; expected only"
                f" {', '.join(sorted(self.KEYS))}"
            )
