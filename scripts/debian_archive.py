"""Debian's archive as bridge's test set-up scripts reach it: the machine's
own apt sources read for their mirrors, and apt-get/apt-cache run with a
private source list and state, so that another suite's packages or sources
can be fetched without reading or writing the system's apt configuration.

Used by scripts/fetch-runtimes (bullseye's binaries) and
scripts/build-noasm-openssl (trixie's OpenSSL source). Standard library
only: the scripts run before bridge's virtualenv has anything in it.

Both write into bridge's cache, and there, as bridge/system/cache.py does
for bridge, nothing is followed through a link: `below` makes each directory
one level at a time and refuses one that is a link or resolves outside the
cache; `read_file` and `lock` open a file with O_NOFOLLOW and O_NONBLOCK and
refuse one that is not a regular file (a FIFO blocked), and `write_file`
writes a new file and renames it over the name, never through what is there.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


class Unsupported(Exception):
    """This machine cannot fetch from Debian's archive: not an error, a reason to skip."""


class Failed(Exception):
    """Fetching, unpacking or building went wrong."""


def cache_root() -> Path:
    """As bridge/system/cache.py root(): $BRIDGE_CACHE_DIR/bridge, else
    $XDG_CACHE_HOME/bridge, else ~/.cache/bridge."""
    base = os.environ.get("BRIDGE_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "bridge" if base else Path.home() / ".cache" / "bridge"


# -- in the cache: no link followed, no FIFO waited on -------------------------


def below(top: Path, *parts: str) -> Path:
    """top/parts, each part a directory of its own (made 0700 where missing),
    none a link, each the user's own and not writable by every user, resolving
    inside `top`: nothing written lands elsewhere."""
    top.mkdir(parents=True, exist_ok=True, mode=0o700)
    _own(top)
    where = top
    for part in parts:
        where = where / part
        with contextlib.suppress(FileExistsError):
            where.mkdir(mode=0o700)
        if where.is_symlink() or not where.is_dir():
            raise Failed(f"{where} is a link or not a directory; nothing is written through it")
        _own(where)
    real_top = os.path.realpath(top)
    if os.path.commonpath([real_top, os.path.realpath(where)]) != real_top:
        raise Failed(f"{where} resolves outside {top}")
    return where


def _own(directory: Path) -> None:
    """The user's own, and not writable by every user: what is unpacked
    here is run (erl, openssl), so nobody else may put anything in it."""
    st = directory.stat()
    if st.st_uid != os.geteuid():
        raise Failed(f"{directory} is owned by uid {st.st_uid}, not by this user")
    if st.st_mode & stat.S_IWOTH:
        raise Failed(f"{directory} is writable by every user; nothing is written in it")


def _open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """A descriptor on the regular file `path`, not through a link at its
    name and not blocking on a FIFO; Failed otherwise."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        raise Failed(f"{path}: {exc.strerror} (a link or a FIFO is not used)") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Failed(f"{path}: not a regular file")
    return fd


def write_file(path: Path, text: str, mode: int = 0o644) -> None:
    """Replace `path` whole: a new file beside it (O_EXCL | O_NOFOLLOW),
    synced, renamed over the name. The rename replaces a link, a hard link
    or a FIFO found there, never writes through it, and a stamp cut short
    by a crash is never read as a whole one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # this pid's own leftover
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fchmod(f.fileno(), mode)  # the umask took bits off
            os.fsync(f.fileno())
        os.rename(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_file(path: Path) -> str:
    """The file's text, or '' when it is missing, a link or not a regular file."""
    try:
        fd = _open_regular(path, os.O_RDONLY)
    except Failed:
        return ""
    with os.fdopen(fd) as f:
        return f.read(1 << 20)


@contextlib.contextmanager
def lock(path: Path) -> Iterator[TextIO]:
    """An exclusive lock on the file `path` (one caller at a time)."""
    with os.fdopen(_open_regular(path, os.O_WRONLY | os.O_CREAT), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield f


def remove_tree(path: Path) -> None:
    """Remove a directory tree, or the link or file at `path` (not what a link points to)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def run(argv: list[str], *, cwd: Path | None = None, env: dict | None = None, timeout=600):
    try:
        return subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise Failed(f"{argv[0]} took over {timeout} s") from None
    except OSError as exc:
        raise Failed(f"cannot run {argv[0]}: {exc.strerror}") from None


def tail(done: subprocess.CompletedProcess, lines: int = 4) -> str:
    text = (done.stdout + done.stderr).strip().splitlines()
    errors = [line for line in text if line.startswith(("E:", "W:", "Err:"))] or text
    return " | ".join(errors[-lines:])


# -- the machine's apt sources ----------------------------------------------


def os_release() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                out[key.strip()] = value.strip().strip('"')
        break
    return out


def source_entries() -> list[dict]:
    """Every enabled `deb` entry of the machine's apt sources, one-line and
    deb822 formats: {uris, suites, signed_by}."""
    etc = Path("/etc/apt")
    entries: list[dict] = []
    files = [etc / "sources.list"] + sorted((etc / "sources.list.d").glob("*.list"))
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            entry = parse_one_line(line)
            if entry:
                entries.append(entry)
    for path in sorted((etc / "sources.list.d").glob("*.sources")):
        try:
            entries += parse_deb822(path.read_text())
        except OSError:
            continue
    return entries


ONE_LINE = re.compile(r"^\s*deb\s+(?:\[(?P<opts>[^\]]*)\]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)")


def parse_one_line(line: str) -> dict | None:
    m = ONE_LINE.match(line.split("#", 1)[0])
    if not m:
        return None
    opts = dict(o.split("=", 1) for o in (m["opts"] or "").split() if "=" in o)
    return {"uris": [m["uri"]], "suites": [m["suite"]], "signed_by": opts.get("signed-by", "")}


def parse_deb822(text: str) -> list[dict]:
    entries = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:  # continuation (a multi-line Signed-By key)
                fields[key] += "\n" + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        keyring = fields.get("signed-by", "")
        entries.append(
            {
                "uris": fields.get("uris", "").split(),
                "suites": fields.get("suites", "").split(),
                # A path; an inline key block cannot be passed on as signed-by.
                "signed_by": "" if "\n" in keyring else keyring,
            }
        )
    return entries


def debian_mirrors(suite: str, override_var: str, *, kind: str = "deb") -> tuple[list[str], str]:
    """The apt lines (`kind`: deb or deb-src) for `suite` and its -security,
    on the hosts this machine already uses for its own Debian release;
    $`override_var` (a Debian archive URI that serves dists/SUITE) replaces
    them, for a suite that has left the machine's mirror."""
    override = os.environ.get(override_var)
    if override:
        return [f"{kind} {override} {suite} main"], f"{override_var}={override}"
    release = os_release()
    if release.get("ID") != "debian":
        raise Unsupported(
            f"this is {release.get('PRETTY_NAME') or 'not Debian'}: its apt sources have no"
            f" Debian mirror to fetch {suite} from (set {override_var} to one)"
        )
    codename = release.get("VERSION_CODENAME", "")
    archive: dict[str, str] = {}
    security: dict[str, str] = {}
    for entry in source_entries():
        for entry_suite in entry["suites"]:
            base = entry_suite.split("/")[0].split("-")[0]
            if codename and base != codename:
                continue
            is_security = "-security" in entry_suite or "/updates" in entry_suite
            target = security if is_security else archive
            for uri in entry["uris"]:
                target.setdefault(uri.rstrip("/"), entry["signed_by"])
    if not archive:
        raise Unsupported(
            f"no Debian mirror for {codename or 'this release'} in /etc/apt sources"
            f" (set {override_var} to a Debian archive URI)"
        )
    lines = []
    for uris, name in ((archive, suite), (security, f"{suite}-security")):
        for uri, keyring in uris.items():
            opts = f"[signed-by={keyring}] " if keyring else ""
            lines.append(f"{kind} {opts}{uri} {name} main")
    return lines, ", ".join([*archive, *security])


# -- apt with private state --------------------------------------------------


class Apt:
    """apt-get/apt-cache with their own source list, lists, cache and an empty
    dpkg status, so neither the system's configuration nor its state is read
    for packages or written. `suite` and `override_var` name what an error
    says to try."""

    def __init__(self, base: Path, sources: list[str], suite: str, override_var: str) -> None:
        self.base, self.suite, self.override_var = base, suite, override_var
        self.warnings = ""
        for sub in ("lists/partial", "cache/archives/partial", "parts", "preferences.d", "debs"):
            below(base, *sub.split("/"))
        write_file(base / "sources.list", "\n".join(sources) + "\n")
        write_file(base / "status", "")
        self.options = [
            f"-oDir::Etc::SourceList={base / 'sources.list'}",
            f"-oDir::Etc::SourceParts={base / 'parts'}",
            f"-oDir::Etc::Preferences={base / 'preferences'}",
            f"-oDir::Etc::PreferencesParts={base / 'preferences.d'}",
            f"-oDir::State::Lists={base / 'lists'}",
            f"-oDir::State::Status={base / 'status'}",
            f"-oDir::Cache={base / 'cache'}",
            # apt's _apt sandbox user cannot enter a private home directory.
            f"-oAPT::Sandbox::User={pwd.getpwuid(os.getuid()).pw_name}",
        ]

    @property
    def debs(self) -> Path:
        return self.base / "debs"

    def update(self) -> None:
        done = run(["apt-get", "-q", *self.options, "update"])
        # A mirror that did not answer is only a warning to apt: kept, to say
        # why a package is then missing.
        said = done.stdout + done.stderr
        self.warnings = tail(done) if ("Err:" in said or "W:" in said) else ""
        if done.returncode != 0 or "E:" in said:
            raise Failed(
                f"apt-get update for {self.suite} failed: {tail(done)}. If the mirror no"
                f" longer serves {self.suite}, set {self.override_var} to a Debian archive"
                " URI that does"
            )

    def newest(self, package: str, prefix: str) -> str:
        done = run(["apt-cache", *self.options, "madison", package])
        versions = [
            parts[1].strip()
            for parts in (line.split("|") for line in done.stdout.splitlines())
            if len(parts) >= 3 and parts[1].strip().startswith(prefix)
        ]
        if not versions:
            raise Failed(
                f"no {package} {prefix}* in {self.suite} (apt-cache madison: {tail(done)})"
            )
        versions.sort(key=DebVersion)
        return versions[-1]

    def download(self, package: str, version: str) -> Path:
        existing = self.deb_path(package, version)
        if existing:
            return existing
        argv = ["apt-get", "-q", *self.options, "download", f"{package}={version}"]
        done = run(argv, cwd=self.debs)
        found = self.deb_path(package, version)
        if done.returncode != 0 or not found:
            raise Failed(f"apt-get download {package}={version} failed: {tail(done)}")
        return found

    def deb_path(self, package: str, version: str) -> Path | None:
        # apt-get download names the file PACKAGE_VERSION_ARCH.deb, ':' as %3a.
        quoted = version.replace(":", "%3a")
        found = sorted(self.debs.glob(f"{package}_{quoted}_*.deb"))
        return found[0] if found else None

    def source_versions(self, package: str) -> list[str]:
        """The versions of a source package the lists hold, newest first."""
        done = run(["apt-cache", *self.options, "showsrc", package])
        found = re.findall(r"^Version: (\S+)$", done.stdout, re.MULTILINE)
        if not found:
            why = f"apt-get update said: {self.warnings}" if self.warnings else tail(done)
            raise Failed(f"no source package {package} in {self.suite} ({why})")
        return sorted(set(found), key=DebVersion, reverse=True)

    def source_tarball(self, package: str, version: str, into: Path) -> Path:
        """The upstream tarball of a source package version, downloaded into
        `into` (its hash checked by apt against the signed Sources index)."""
        below(self.base, *into.relative_to(self.base).parts)
        upstream = version.split(":")[-1].rsplit("-", 1)[0]
        pattern = f"{package}_{upstream}.orig.tar.*"
        found = [p for p in into.glob(pattern) if not p.name.endswith(".asc")]
        if found:
            return found[0]
        argv = ["apt-get", "-q", *self.options, "source", "--download-only", "--tar-only"]
        done = run([*argv, f"{package}={version}"], cwd=into)
        found = [p for p in into.glob(pattern) if not p.name.endswith(".asc")]
        if done.returncode != 0 or not found:
            raise Failed(f"apt-get source {package}={version} failed: {tail(done)}")
        return found[0]


class DebVersion:
    """Sort key: asks dpkg, the only authority on Debian version order."""

    def __init__(self, version: str) -> None:
        self.version = version

    def __lt__(self, other: DebVersion) -> bool:
        done = run(["dpkg", "--compare-versions", self.version, "lt", other.version])
        return done.returncode == 0
