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
# -> bridge_args, bridge_api, bridge_loops, bridge_measure, bridge_info,
# bridge_concurrency (N processes at once, the scheduler probe).
WORKER_MODULES = (
    "bridge_worker",
    "bridge_ops",
    "bridge_args",
    "bridge_api",
    "bridge_loops",
    "bridge_measure",
    "bridge_info",
    "bridge_concurrency",
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
    """The installation that `erl` (a path, a name on PATH, ROOT or ROOT/bin;
    default: erl on PATH) belongs to."""
    if erl is None:
        found = shutil.which("erl")
        if found is None:
            raise RuntimeUnavailable("erl not found on PATH", hint=INSTALL_HINT)
        path = Path(found)
    else:
        path = _erl_path(erl)
    real = path.resolve()
    root = _otp_root(real)
    try:
        erlc = _find_erlc(path, real)
        # A layout that does not say (a wrapper script, a kerl or asdf shim):
        # ask the program itself before trusting it.
        answer = None if root else probe(path)
    except RuntimeUnavailable as exc:
        if erl is None:
            raise
        raise UsageError(f"--erl {erl}: not an Erlang installation ({exc.message})") from None
    if answer is not None:
        return Installation(
            erl=path,
            erlc=erlc,
            root=Path(answer.root_dir) if answer.root_dir else None,
            otp_version=answer.otp_version or answer.otp_release,
            erts_version=answer.erts_version,
        )
    assert root is not None
    return Installation(
        erl=path,
        erlc=erlc,
        root=root,
        otp_version=otp_version_of(root),
        erts_version=erts_version_of(root),
    )


def _erl_path(erl: str) -> Path:
    """--erl as given: a bare name is looked up in PATH (never in the current
    directory, where a checkout of bridge has an erl/ source folder); a
    directory means DIR/bin/erl or DIR/erl."""
    if "/" not in erl and not erl.startswith("~"):
        found = shutil.which(erl)
        if found is None:
            raise UsageError(f"--erl {erl}: not found on PATH")
        return Path(found)
    path = Path(erl).expanduser()
    if path.is_dir():
        for candidate in (path / "bin" / "erl", path / "erl"):
            if candidate.is_file():
                path = candidate
                break
        else:
            raise UsageError(f"--erl {erl}: is a directory without bin/erl")
    if not path.exists():
        raise UsageError(f"--erl {erl}: no such file")
    if not os.access(path, os.X_OK):
        raise UsageError(f"--erl {erl}: not executable")
    return path


@dataclass(frozen=True)
class Probe:
    """What an erl says about itself, started the way a run starts it."""

    otp_release: str  # "23"
    otp_version: str  # releases/<release>/OTP_VERSION under code:root_dir(); "" if absent
    erts_version: str
    root_dir: str  # code:root_dir(): the real tree behind a wrapper
    crypto_version: str  # the crypto application's version; "" without one
    crypto_lib: str  # crypto:info_lib() text, "" when crypto does not load
    libcrypto: tuple[str, ...]  # libcrypto files mapped into the node (Linux)
    crypto_error: str  # why crypto cannot load; "" when it loads


# Loads crypto as the worker does and reports on stdout, one `bridge-probe:`
# line per fact (~w and ~ts never wrap a line). When crypto's on_load fails,
# erl_ddll opens the same NIF library to get the dynamic loader's own message
# (e.g. "libcrypto.so.1.1: cannot open shared object file"): on_load reports
# only {error, on_load_failure}. Runs on OTP 21 and later.
PROBE_SCRIPT = r"""
try
    io:setopts([{encoding, unicode}]),
    P = fun(K, V) -> io:format("bridge-probe:~s:~ts~n", [K, V]) end,
    Root = code:root_dir(), Rel = erlang:system_info(otp_release),
    P(otp_release, Rel), P(erts_version, erlang:system_info(version)), P(root_dir, Root),
    case file:read_file(filename:join([Root, "releases", Rel, "OTP_VERSION"])) of
        {ok, V} -> P(otp_version, string:trim(V)); _ -> ok
    end,
    case code:lib_dir(crypto) of
        {error, _} ->
            P(crypto_error, "no crypto application (e.g. erlang-base without erlang-crypto)");
        Dir ->
            P(crypto_version, lists:last(string:split(filename:basename(Dir), "-", trailing))),
            case code:ensure_loaded(crypto) of
                {module, crypto} ->
                    case catch crypto:info_lib() of
                        [{_, _, Text} | _] -> P(crypto_lib, Text);
                        Other ->
                            P(crypto_error, io_lib:format("crypto:info_lib() gave ~w", [Other]))
                    end,
                    case file:read_file("/proc/self/maps") of
                        {ok, Maps} ->
                            [P(libcrypto, F) || L <- string:split(Maps, "
", all),
                                                F <- string:lexemes(L, " "),
                                                string:prefix(filename:basename(F), "libcrypto")
                                                    =/= nomatch];
                        _ -> ok
                    end;
                {error, Why} ->
                    case erl_ddll:load(filename:join([Dir, "priv", "lib"]), "crypto") of
                        {error, {open_error, _} = E} -> P(crypto_error, erl_ddll:format_error(E));
                        _ ->
                            P(crypto_error,
                              io_lib:format("the crypto module does not load (~w)", [Why]))
                    end
            end
    end
catch Class:Reason -> io:format("bridge-probe:probe_error:~w:~w~n", [Class, Reason])
end,
halt().
"""


def probe(erl: Path, timeout: float = 30) -> Probe:
    """Start `erl` once, without ERL_*FLAGS, and ask it. Raises
    RuntimeUnavailable with the reason when it does not answer."""
    try:
        done = proc.run(
            [str(erl), "-noshell", "-noinput", "-eval", PROBE_SCRIPT],
            # No erl_crash.dump in the current directory if the node dies.
            env=proc.erlang_env({"ERL_CRASH_DUMP_SECONDS": "0"}),
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeUnavailable(f"{erl} did not answer within {timeout:.0f} s") from None
    except OSError as exc:
        raise RuntimeUnavailable(f"cannot run {erl}: {exc.strerror}") from None
    facts: dict[str, list[str]] = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        key, sep, value = line.removeprefix("bridge-probe:").partition(":")
        if line.startswith("bridge-probe:") and sep:
            facts.setdefault(key, []).append(value.strip())
    release = facts.get("otp_release", [""])[0]
    if not release.isdigit():
        said = (done.stderr or done.stdout).decode("utf-8", "replace").strip()
        said = said.splitlines()[-1][:160] if said else f"exit status {done.returncode}"
        raise RuntimeUnavailable(f"{erl} did not answer like an Erlang runtime: {said}")

    def one(key: str) -> str:
        return facts.get(key, [""])[0]

    return Probe(
        otp_release=release,
        otp_version=one("otp_version"),
        erts_version=one("erts_version"),
        root_dir=one("root_dir"),
        crypto_version=one("crypto_version"),
        crypto_lib=one("crypto_lib"),
        libcrypto=tuple(dict.fromkeys(facts.get("libcrypto", []))),
        crypto_error=one("crypto_error")
        or (f"the probe stopped ({one('probe_error')})" if "probe_error" in facts else ""),
    )


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
