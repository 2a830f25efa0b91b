"""Erlang/OTP installations: locate one from an `erl` path, and compile the
worker with that installation's own `erlc` into a cache.

A .beam from a newer OTP may not load on an older one, so the worker is built
per installation: the cache key is the full OTP version, the ERTS version and a
hash of the worker sources. Compilation happens once per key, into a private
temporary directory that is renamed into place, so concurrent runs are safe.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bridge import proc
from bridge.errors import RuntimeUnavailable, UsageError

ERL_SOURCES_DIR = Path(__file__).resolve().parent.parent / "erl"
# Every module of the Erlang worker: each is compiled into the cache and
# hashed into its key. bridge_worker (port loop) -> bridge_ops (operations)
# -> bridge_args, bridge_api, bridge_loops, bridge_measure, bridge_info.
WORKER_MODULES = (
    "bridge_worker",
    "bridge_ops",
    "bridge_args",
    "bridge_api",
    "bridge_loops",
    "bridge_measure",
    "bridge_info",
)
INSTALL_HINT = (
    "install Erlang with 'apt-get install erlang-base erlang-crypto' (Debian/Ubuntu),"
    " or name an installation with --erl PATH"
)


@dataclass(frozen=True)
class Installation:
    erl: Path  # as given or found on PATH
    erlc: Path
    root: Path | None  # OTP root (has releases/ and erts-*/), when recognisable
    otp_version: str  # full, e.g. "25.2.3"; "" when the layout does not say
    erts_version: str

    @property
    def crypto_present(self) -> bool | None:
        """Whether lib/crypto-* exists; None when the layout is unknown."""
        if self.root is None:
            return None
        return any((self.root / "lib").glob("crypto-*"))


def locate(erl: str | None = None) -> Installation:
    """The installation that `erl` (a path, or the one on PATH) belongs to."""
    if erl is None:
        found = shutil.which("erl")
        if found is None:
            raise RuntimeUnavailable("erl not found on PATH", hint=INSTALL_HINT)
        path = Path(found)
    else:
        path = Path(erl).expanduser()
        if path.is_dir():
            # Accept an installation directory: ROOT/bin/erl.
            if (path / "bin" / "erl").is_file():
                path = path / "bin" / "erl"
            else:
                raise UsageError(f"--erl {erl}: is a directory without bin/erl")
        if not path.exists():
            raise UsageError(f"--erl {erl}: no such file")
        if not os.access(path, os.X_OK):
            raise UsageError(f"--erl {erl}: not executable")
    real = path.resolve()
    root = _otp_root(real)
    try:
        erlc = _find_erlc(path, real)
        # An unrecognised layout: ask the program itself before trusting it.
        release = "" if root else _probe_release(path)
    except RuntimeUnavailable as exc:
        if erl is None:
            raise
        raise UsageError(f"--erl {erl}: not an Erlang installation ({exc.message})") from None
    return Installation(
        erl=path,
        erlc=erlc,
        root=root,
        otp_version=otp_version_of(root) if root else release,
        erts_version=erts_version_of(root) if root else "",
    )


def _probe_release(erl: Path) -> str:
    script = 'io:format("bridge-otp-release:~s~n", [erlang:system_info(otp_release)]), halt().'
    try:
        done = proc.run(
            [str(erl), "-noshell", "-noinput", "-eval", script], env=proc.erlang_env(), timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    text = done.stdout.decode("utf-8", "replace") if done else ""
    for line in text.splitlines():
        if line.startswith("bridge-otp-release:") and line.split(":", 1)[1].strip().isdigit():
            return line.split(":", 1)[1].strip()
    raise RuntimeUnavailable(f"{erl} did not answer like an Erlang runtime")


def _otp_root(real_erl: Path) -> Path | None:
    # ROOT/bin/erl (Debian: /usr/lib/erlang/bin/erl) or ROOT/erts-X/bin/erl.
    for candidate in (real_erl.parent.parent, real_erl.parent.parent.parent):
        if (candidate / "releases").is_dir():
            return candidate
    return None


def _find_erlc(given: Path, real: Path) -> Path:
    for directory in (real.parent, given.parent):
        erlc = directory / "erlc"
        if erlc.is_file() and os.access(erlc, os.X_OK):
            return erlc
    raise RuntimeUnavailable(
        f"no erlc next to {given}: bridge compiles its worker with the erlc of the same"
        " installation",
        hint="install the full Erlang/OTP (erlang-base on Debian ships erlc)",
    )


def otp_version_of(root: Path) -> str:
    # releases/<major>/OTP_VERSION holds the full version, e.g. "25.2.3".
    versions = []
    for f in (root / "releases").glob("*/OTP_VERSION"):
        try:
            versions.append(f.read_text().strip())
        except OSError:
            continue
    return max(versions, key=version_key, default="")


def erts_version_of(root: Path) -> str:
    dirs = sorted((p.name.removeprefix("erts-") for p in root.glob("erts-*")), key=version_key)
    return dirs[-1] if dirs else ""


def version_key(v: str) -> tuple[int, ...]:
    parts = []
    for piece in v.replace("-", ".").split("."):
        parts.append(int(piece) if piece.isdigit() else -1)
    return tuple(parts)


def sources_hash() -> str:
    h = hashlib.sha256()
    for module in WORKER_MODULES:
        path = ERL_SOURCES_DIR / f"{module}.erl"
        h.update(module.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_root() -> Path:
    base = os.environ.get("BRIDGE_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "bridge" if base else Path.home() / ".cache" / "bridge"


def worker_beams(inst: Installation) -> Path:
    """Directory holding the compiled worker for this installation."""
    version = inst.otp_version or "unknown"
    where = hashlib.sha256(str(inst.erl.resolve()).encode()).hexdigest()[:8]
    key = f"otp-{version}-erts-{inst.erts_version or 'unknown'}-{where}-{sources_hash()}"
    target = cache_root() / "beam" / key
    if all((target / f"{m}.beam").is_file() for m in WORKER_MODULES):
        return target
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        sources = [str(ERL_SOURCES_DIR / f"{m}.erl") for m in WORKER_MODULES]
        try:
            done = proc.run(
                [str(inst.erlc), "-o", str(staging), *sources], env=proc.erlang_env(), timeout=120
            )
        except subprocess.TimeoutExpired:
            raise RuntimeUnavailable(f"{inst.erlc} took over 120 s to compile the worker") from None
        except OSError as exc:
            raise RuntimeUnavailable(f"cannot run {inst.erlc}: {exc.strerror}") from None
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).decode("utf-8", "replace").strip()[-400:]
            raise RuntimeUnavailable(f"{inst.erlc} could not compile the worker: {tail}")
        try:
            staging.rename(target)
        except OSError:
            # Another bridge compiled the same key at the same time: use theirs.
            if not target.is_dir():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target
