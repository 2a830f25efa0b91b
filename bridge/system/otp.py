"""Erlang/OTP installations: locate one from an `erl` path, start its `erl`
and `erlc` apart from the user's own Erlang set-up, and compile the worker with
that installation's own `erlc` into a cache.

A .beam from a newer OTP may not load on an older one, so the worker is built
per installation: the cache key is the full OTP version, the ERTS version and a
hash of the worker sources. Compilation happens once per key, into a private
temporary directory that is renamed into place, so concurrent runs are safe.
Each entry carries the sha256 of its .beam files, written last; an entry that
fails that check (a disk that filled up, a machine killed before the data
reached the disk) is compiled again, once, with a warning. A cache that cannot
be written is replaced by a private temporary directory, removed at exit.

The user's set-up, and what bridge does about it (docs/guide/setup.md):
- ~/.erlang: ignored, by booting with the installation's no_dot_erlang.boot
  (OTP 21+), named by absolute path: a relative `-boot` name is looked up in
  the current directory first (erlang/otp#9820);
- ERL_LIBS (its directories come ahead of the installation's lib/, so a
  crypto-* there replaces crypto) and ERL_COMPILER_OPTIONS: removed, like the
  ERL_*FLAGS that bridge.system.proc removes;
- the current directory ("." is on the code path, so a crypto.beam there
  replaces crypto): the node runs in a private directory instead, unless erl
  is a wrapper (a shim may choose its version by the current directory);
- erl_crash.dump: ERL_CRASH_DUMP points into that private directory, which is
  kept, and named in the error, when a node leaves a dump there.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from bridge import plain
from bridge.errors import BridgeWarning, RuntimeUnavailable, UsageError
from bridge.system import cache, proc

# The worker's sources, as package data: bridge/_erl links to the repository's
# erl/ in a checkout (and an editable install); a wheel holds copies.
ERL_SOURCES_DIR = Path(resources.files("bridge").joinpath("_erl")).resolve()
# Every module of the Erlang worker: each is compiled into the cache and
# hashed into its key. bridge_worker (port loop) -> bridge_ops (operations)
# -> bridge_args, bridge_api, bridge_loops, bridge_measure, bridge_info,
# bridge_concurrency (N processes at once, the scheduler probe), bridge_alt
# (the opt-in alternatives: rand:bytes, PBKDF2 over crypto:mac, public_key);
# bridge_remote relays to running nodes (--node), and bridge_agent is what
# bridge loads into them, renamed (bridge/nodes/agent.py).
WORKER_MODULES = (
    "bridge_worker",
    "bridge_ops",
    "bridge_args",
    "bridge_api",
    "bridge_loops",
    "bridge_measure",
    "bridge_info",
    "bridge_remote",
    "bridge_agent",
    "bridge_concurrency",
    "bridge_alt",
    "bridge_tls",  # the tls kind's handshakes (the ssl application)
    "bridge_tls_server",  # their server, a node of its own
    "bridge_user",  # the user's expressions, in a node started with them (bridge time)
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
    # ROOT/bin/no_dot_erlang as -boot takes it (absolute, no .boot); None when
    # the installation has none (OTP 20 and older, some stripped packages).
    boot: Path | None = None

    @property
    def wrapped(self) -> bool:
        """erl is a wrapper script or a shim: the installation behind it is
        known only from what it said (probe), and it may choose by the
        current directory."""
        return _otp_root(self.erl.resolve()) is None

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
        probed_root = Path(answer.root_dir) if answer.root_dir else None
        return Installation(
            erl=path,
            erlc=erlc,
            root=probed_root,
            otp_version=answer.otp_version or answer.otp_release,
            erts_version=answer.erts_version,
            boot=no_dot_erlang_boot(probed_root),
        )
    assert root is not None
    return Installation(
        erl=path,
        erlc=erlc,
        root=root,
        otp_version=otp_version_of(root),
        erts_version=erts_version_of(root),
        boot=no_dot_erlang_boot(root),
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
    """Start `erl` once, as a run starts a node (node_env; no ~/.erlang and a
    private working directory where the layout shows the installation; a
    wrapper from the current directory, which may choose its version by it),
    and ask it. Raises RuntimeUnavailable with the reason when it does not
    answer."""
    root = _otp_root(erl.resolve())
    boot = no_dot_erlang_boot(root)
    with NodeDir("bridge-probe-") as scratch:
        try:
            done = proc.run(
                [str(erl), "-noshell", "-noinput", *(["-boot", str(boot)] if boot else [])]
                + ["-eval", PROBE_SCRIPT],
                # No crash dump at all from a probe: what it says is enough.
                env=node_env(scratch.crash_dump, {"ERL_CRASH_DUMP_SECONDS": "0"}),
                cwd=str(scratch.path) if root else None,
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
    if plain.whole_number(release) is None:
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


def no_dot_erlang_boot(root: Path | None) -> Path | None:
    """The boot script that is start_clean without its last step, the
    c:erlangrc() call that reads .erlang (OTP 21+, erlang/otp#1585)."""
    if root is None:
        return None
    releases = sorted((root / "releases").glob("*/no_dot_erlang.boot"), reverse=True)
    for boot in (root / "bin" / "no_dot_erlang.boot", *releases):
        if boot.is_file():
            return boot.with_suffix("")
    return None


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
        n = plain.whole_number(piece)
        parts.append(-1 if n is None else n)
    return tuple(parts)


def sources_hash() -> str:
    h = hashlib.sha256()
    for module in WORKER_MODULES:
        path = ERL_SOURCES_DIR / f"{module}.erl"
        h.update(module.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


# -- starting erl and erlc apart from the user's set-up ----------------------

CRASH_DUMP = "erl_crash.dump"
# ERL_LIBS puts its directories ahead of the installation's lib/ (a crypto-*
# there replaced crypto on OTP 25); ERL_COMPILER_OPTIONS changes what erlc
# makes of the worker. Neither is for bridge's nodes.
SHADOWING_VARS = ("ERL_LIBS", "ERL_COMPILER_OPTIONS")


def node_env(crash_dump: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of an erl or erlc bridge starts: bridge's own, less
    ERL_*FLAGS (bridge.system.proc) and the variables that could shadow OTP's code,
    with the crash dump sent to `crash_dump` instead of the current directory."""
    env = proc.erlang_env(extra)
    for name in SHADOWING_VARS:
        env.pop(name, None)
    env["ERL_CRASH_DUMP"] = str(crash_dump)
    return env


class NodeDir:
    """A private directory (0700) for one erl or erlc: its working directory
    when bridge can choose it, and the place of its crash dump. Closing removes
    it, unless the node left a crash dump there: then it stays, and
    `postmortem()` names it for the error message."""

    def __init__(self, prefix: str = "bridge-erl-") -> None:
        try:
            self.path = Path(tempfile.mkdtemp(prefix=prefix))
        except OSError as exc:
            raise RuntimeUnavailable(
                f"cannot make a private directory for erl in {tempfile.gettempdir()}:"
                f" {exc.strerror or exc}",
                hint="set TMPDIR to a writable directory",
            ) from None

    @property
    def crash_dump(self) -> Path:
        return self.path / CRASH_DUMP

    def postmortem(self) -> str:
        """'crash dump: PATH (its slogan)' when the node wrote one, else ''."""
        try:
            with open(self.crash_dump, "rb") as f:
                head = f.read(4096).decode("utf-8", "replace")
        except OSError:
            return ""
        slogan = next(
            (
                line[len("Slogan: ") :].strip()
                for line in head.splitlines()
                if line.startswith("Slogan: ")
            ),
            "",
        )
        if len(slogan) > 160:
            slogan = slogan[:157] + "..."
        return f"crash dump: {self.crash_dump}" + (f" ({slogan})" if slogan else "")

    def close(self) -> None:
        if not self.crash_dump.exists():
            shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> NodeDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dot_erlang_files() -> list[str]:
    """The .erlang files an OTP would read at start-up (home, then the XDG
    config directory), as ~-paths for the report."""
    home = Path(os.environ.get("HOME") or Path.home())
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    found = []
    for path in (home / ".erlang", config / "erlang" / ".erlang"):
        if path.is_file():
            shown = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
            found.append(shown)
    return found


def startup_record(inst: Installation, worker_cache: str) -> dict[str, Any]:
    """How the node was started apart from the user's set-up (the report's
    runtime details, key "startup")."""
    return {
        "boot": str(inst.boot) if inst.boot else "start (the default)",
        "dot_erlang": (
            "ignored (-boot no_dot_erlang)"
            if inst.boot
            else "read: this installation has no no_dot_erlang.boot"
        ),
        "dot_erlang_files": dot_erlang_files(),
        "erl_libs": (
            "removed from the node's environment" if "ERL_LIBS" in os.environ else "not set"
        ),
        "working_dir": (
            "the current directory: erl is a wrapper, which may choose by it"
            if inst.wrapped
            else "a private temporary directory"
        ),
        "crash_dump": "ERL_CRASH_DUMP in a private temporary directory",
        "worker_cache": worker_cache,
    }


# -- the worker cache ----------------------------------------------------------

# 2: each entry holds DIGESTS, the sha256 of its .beam files, written last.
CACHE_FORMAT = 2
DIGESTS = "bridge.sha256"  # `sha256sum -c bridge.sha256` reads it too
_MISSING = "missing"


@dataclass(frozen=True)
class WorkerBuild:
    path: Path  # the directory to put on the node's code path
    note: str  # how the cache served it, for the report


class _CacheUnwritable(Exception):
    pass


def cache_key(inst: Installation) -> str:
    version = inst.otp_version or "unknown"
    where = hashlib.sha256(str(inst.erl.resolve()).encode()).hexdigest()[:8]
    erts = inst.erts_version or "unknown"
    return f"v{CACHE_FORMAT}-otp-{version}-erts-{erts}-{where}-{sources_hash()}"


def worker_beams(inst: Installation) -> Path:
    """Directory holding the compiled worker for this installation."""
    return build_worker(inst).path


def build_worker(inst: Installation) -> WorkerBuild:
    """The verified worker for this installation: from the cache, compiled
    into it, or compiled again when the cached copy fails its check. The
    cache is reached through bridge.system.cache: no link in it is followed."""
    key = cache_key(inst)
    try:
        base = cache.directory("beam")
    except OSError as exc:
        base, unusable = cache.root() / "beam", exc.strerror or str(exc)
    else:
        unusable = ""
    target = base / key
    problem = _MISSING if unusable else verify(target)
    if problem is None:
        return WorkerBuild(target, "cached, verified")
    private = _private_cache(create=False)
    if private is not None and verify(private / key) is None:
        # This process found the cache unusable before, said so, and compiled here.
        return WorkerBuild(private / key, _private_note(base))
    if unusable:
        return _compile_privately(inst, key, base, unusable)
    try:
        if problem != _MISSING:
            warnings.warn(
                f"the cached Erlang worker in {target} failed its check: {problem};"
                " compiling it again",
                BridgeWarning,
                stacklevel=2,
            )
            try:
                cache.discard(target)
            except OSError as exc:
                raise _CacheUnwritable(exc.strerror or str(exc)) from None
        _compile_into(inst, target)
    except _CacheUnwritable as exc:
        return _compile_privately(inst, key, base, str(exc))
    failed = verify(target)
    if failed is not None:
        # Compiled once already: a second failure is not the cache's doing.
        raise RuntimeUnavailable(
            f"the Erlang worker compiled into {target} fails its check ({failed})"
        )
    if problem == _MISSING:
        note = "compiled"
    else:
        note = f"compiled again: the cached copy failed its check: {problem}"
    return WorkerBuild(target, note)


def _compile_privately(inst: Installation, key: str, base: Path, why: str) -> WorkerBuild:
    """The worker compiled into this process's temporary directory, with one
    warning saying why the cache could not take it."""
    warnings.warn(
        f"cannot write the worker cache {base} ({why}); compiling the Erlang worker into"
        " a temporary directory, removed at exit",
        BridgeWarning,
        stacklevel=3,
    )
    try:
        target = _private_cache(create=True) / key
        if verify(target) is not None:
            _compile_into(inst, target)
    except _CacheUnwritable as again:
        raise RuntimeUnavailable(
            f"cannot compile the Erlang worker: neither {base} nor a temporary"
            f" directory can be written ({again})"
        ) from None
    failed = verify(target)
    if failed is not None:
        raise RuntimeUnavailable(
            f"the Erlang worker compiled into {target} fails its check ({failed})"
        )
    return WorkerBuild(target, _private_note(base))


def verify(entry: Path) -> str | None:
    """None when `entry` holds every worker .beam with the digest recorded
    at compile time; otherwise what is wrong ("missing" when there is no entry).
    Nothing in it is followed through a link (bridge.system.cache)."""
    if not os.path.lexists(entry):
        return _MISSING
    if not cache.is_real_directory(entry):
        return "not a directory of its own (a link, or a file)"
    try:
        recorded = _read_digests(entry / DIGESTS)
    except FileNotFoundError:
        return f"{DIGESTS} is missing"
    except (OSError, ValueError):
        return f"{DIGESTS} is unreadable"
    wanted = {f"{m}.beam" for m in WORKER_MODULES}
    if set(recorded) != wanted:
        return f"{DIGESTS} lists {', '.join(sorted(recorded)) or 'nothing'}"
    for name in sorted(wanted):
        try:
            data = cache.read_bytes(entry / name, MAX_BEAM_BYTES)
        except FileNotFoundError:
            return f"{name} is missing"
        except OSError as exc:
            return exc.strerror or str(exc)
        if hashlib.sha256(data).hexdigest() != recorded[name]:
            return f"{name}, {len(data)} bytes, does not match its recorded sha256"
    return None


# Bounds on the cache's files (bridge.plain): the worker's modules are a
# few tens of KiB each.
MAX_DIGESTS_BYTES = 1 << 16
MAX_BEAM_BYTES = 1 << 24


def _read_digests(path: Path) -> dict[str, str]:
    """FileNotFoundError, OSError (a link, a FIFO) or ValueError (garbled)."""
    text = cache.read_bytes(path, MAX_DIGESTS_BYTES).decode("ascii")
    recorded = {}
    for line in text.splitlines():
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name:
            raise ValueError(line)
        recorded[name] = digest
    return recorded


def _compile_into(inst: Installation, target: Path) -> None:
    """Compile into a private staging directory beside `target`, record the
    digests, flush it all to disk, then rename it into place: an entry is
    there whole or not at all."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        staging = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    except OSError as exc:
        raise _CacheUnwritable(exc.strerror or str(exc)) from None
    try:
        _compile(inst, staging)
        try:
            _seal(staging)
            staging.rename(target)
        except OSError as exc:
            # Another bridge compiled the same key at the same time: use theirs.
            if not cache.is_real_directory(target):
                raise _CacheUnwritable(exc.strerror or str(exc)) from None
        _fsync_dir(target.parent)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _compile(inst: Installation, staging: Path) -> None:
    sources = [str(ERL_SOURCES_DIR / f"{m}.erl") for m in WORKER_MODULES]
    with NodeDir("bridge-erlc-") as scratch:
        try:
            done = proc.run(
                [str(inst.erlc), "-o", str(staging), *sources],
                env=node_env(scratch.crash_dump),
                cwd=str(scratch.path),
                timeout=120,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeUnavailable(f"{inst.erlc} took over 120 s to compile the worker") from None
        except OSError as exc:
            raise RuntimeUnavailable(f"cannot run {inst.erlc}: {exc.strerror}") from None
        if done.returncode != 0:
            said = (done.stdout + done.stderr).decode("utf-8", "replace").strip()
            written = _write_failure(said)
            if written is not None:
                # A full disk or quota: the cache cannot be written, as a
                # read-only one cannot; the code compiles elsewhere.
                raise _CacheUnwritable(written)
            tail = said[-400:]
            dump = scratch.postmortem()
            raise RuntimeUnavailable(
                f"{inst.erlc} could not compile the worker: {tail}" + (f"; {dump}" if dump else "")
            )


# compile:format_error's words for a .beam it could not write or rename into
# place (ENOSPC, EDQUOT, EROFS, EACCES...), in every release bridge supports.
_WRITE_ERRORS = ("error writing file", "failed to rename")


def _write_failure(said: str) -> str | None:
    """What erlc said about writing its output ("no space left on device"),
    or None when it failed for another reason."""
    for line in said.splitlines():
        for words in _WRITE_ERRORS:
            if words in line:
                return line.partition(words)[2].lstrip(": ") or words
    return None


def _seal(staging: Path) -> None:
    """Digests of the .beam files, written after the files are on disk."""
    lines = []
    for module in WORKER_MODULES:
        beam = staging / f"{module}.beam"
        lines.append(f"{hashlib.sha256(beam.read_bytes()).hexdigest()}  {beam.name}\n")
        _fsync_file(beam)
    digests = staging / DIGESTS
    digests.write_text("".join(lines), encoding="ascii")
    _fsync_file(digests)
    _fsync_dir(staging)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    # Some file systems cannot sync a directory; the rename holds regardless.
    with contextlib.suppress(OSError):
        _fsync_file(path)


# This process's stand-in for an unwritable cache, shared by its runtimes.
_private: Path | None = None


def _private_cache(create: bool) -> Path | None:
    global _private
    if (_private is None or not _private.is_dir()) and create:
        try:
            _private = Path(tempfile.mkdtemp(prefix="bridge-beam-"))
        except OSError as exc:
            raise _CacheUnwritable(exc.strerror or str(exc)) from None
        atexit.register(shutil.rmtree, _private, True)
    return _private


def _private_note(base: Path) -> str:
    return f"compiled into a temporary directory: {base} cannot be written"
