"""Find the Erlang/OTP installations on this machine (`bridge otp list`).

Places looked at, in order, where the version managers keep them (each one's
own variables honoured, as its documentation gives them):
- `erl` on PATH, the distribution's /usr/lib/erlang;
- kerl: `kerl list installations`, its record of them
  ($KERL_BASE_DIR/otp_installations, KERL_BASE_DIR default ~/.kerl), its
  default install directory (KERL_DEFAULT_INSTALL_DIR), ~/kerl and
  $KERL_BASE_DIR/installs;
- asdf: $ASDF_DATA_DIR/installs/erlang/* (default ~/.asdf);
- mise: $MISE_DATA_DIR/installs/erlang/* (default $XDG_DATA_HOME/mise,
  XDG_DATA_HOME default ~/.local/share);
- Homebrew: $HOMEBREW_PREFIX, /opt/homebrew, /usr/local, Linux's
  /home/linuxbrew/.linuxbrew and ~/.linuxbrew: opt/erlang* and every
  Cellar/erlang*/VERSION;
- the directories in BRIDGE_OTP_PATH (colon-separated).
Each is probed the way a run starts it: its bin/erl runs once, loads crypto and
says its versions, code:root_dir() and the libcrypto it mapped (otp.probe).
So a prefix whose bin/erl is a wrapper script or a shim is described by the
real tree behind it, and crypto that cannot load is reported with the
loader's reason. The files (releases/*/OTP_VERSION, erts-*, lib/crypto-*, ldd
on the crypto NIF) fill in what a broken erl cannot say. An installation that
is broken is listed with the reason, never dropped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bridge.errors import RuntimeUnavailable
from bridge.system import otp, proc


@dataclass
class Found:
    root: Path
    sources: list[str] = field(default_factory=list)
    otp_version: str = ""
    erts_version: str = ""
    crypto_version: str = ""
    crypto_lib: str = ""  # crypto:info_lib() text, when crypto loads
    libcrypto: str = ""
    otp_root: str = ""  # code:root_dir(): differs from root behind a wrapper
    problem: str = ""

    @property
    def erl(self) -> Path:
        return self.root / "bin" / "erl"

    @property
    def major(self) -> str:
        return self.otp_version.split(".")[0]

    def to_json(self) -> dict:
        return {
            "root": str(self.root),
            "erl": str(self.erl),
            "sources": self.sources,
            "otp_version": self.otp_version,
            "erts_version": self.erts_version,
            "crypto": self.crypto_version or None,
            "crypto_lib": self.crypto_lib or None,
            "libcrypto": self.libcrypto,
            "otp_root": self.otp_root or None,
            "problem": self.problem or None,
        }


HOMEBREW_PREFIXES = ("/opt/homebrew", "/usr/local", "/home/linuxbrew/.linuxbrew")


def candidates(
    home: Path | None = None,
    env: dict[str, str] | None = None,
    homebrew: tuple[str, ...] = HOMEBREW_PREFIXES,
) -> list[tuple[str, Path]]:
    """(source, root or erl path) pairs, before any checking."""
    env = dict(os.environ if env is None else env)
    home = home or Path(env.get("HOME", str(Path.home())))
    out: list[tuple[str, Path]] = []
    on_path = shutil.which("erl", path=env.get("PATH"))
    if on_path:
        out.append(("PATH", Path(on_path)))
    out.append(("distribution", Path("/usr/lib/erlang")))
    out += [("kerl", p) for p in _kerl(home, env)]
    asdf_data = Path(env.get("ASDF_DATA_DIR") or home / ".asdf")
    out += [("asdf", p) for p in _children(asdf_data / "installs" / "erlang")]
    xdg_data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    mise_data = Path(env.get("MISE_DATA_DIR") or xdg_data / "mise")
    out += [("mise", p) for p in _children(mise_data / "installs" / "erlang")]
    prefixes = [env.get("HOMEBREW_PREFIX", ""), *homebrew, str(home / ".linuxbrew")]
    for prefix in dict.fromkeys(p for p in prefixes if p):
        out += [("homebrew", p / "lib" / "erlang") for p in _homebrew(Path(prefix))]
    for entry in env.get("BRIDGE_OTP_PATH", "").split(":"):
        if entry:
            out.append(("BRIDGE_OTP_PATH", Path(entry)))
    return out


def _homebrew(prefix: Path) -> list[Path]:
    """A Homebrew prefix's erlang formulae: opt/erlang* (the linked version of
    each) and Cellar/erlang*/VERSION (every version installed)."""
    try:
        linked = sorted(prefix.joinpath("opt").glob("erlang*"))
        kept = sorted(prefix.joinpath("Cellar").glob("erlang*/*"))
    except OSError:
        return []
    return linked + [p for p in kept if p.is_dir()]


def _children(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_dir()) if directory.is_dir() else []


def _kerl(home: Path, env: dict[str, str]) -> list[Path]:
    found: list[Path] = []
    kerl = shutil.which("kerl", path=env.get("PATH"))
    if kerl:
        try:
            done = proc.run([kerl, "list", "installations"], env=env, timeout=15)
            for line in done.stdout.decode(errors="replace").splitlines():
                parts = line.split()
                if len(parts) >= 2 and parts[-1].startswith("/"):
                    found.append(Path(parts[-1]))
        except (OSError, subprocess.TimeoutExpired):
            pass
    # kerl's record and usual install directories, for when kerl itself is
    # not on PATH: otp_installations has one "VERSION PATH" line per install.
    base = Path(env.get("KERL_BASE_DIR") or home / ".kerl")
    try:
        record = (base / "otp_installations").read_text(errors="replace")
    except OSError:
        record = ""
    for line in record.splitlines():
        parts = line.split(maxsplit=1)
        if len(parts) == 2 and parts[1].strip().startswith("/"):
            found.append(Path(parts[1].strip()))
    default_dir = env.get("KERL_DEFAULT_INSTALL_DIR")
    for directory in ([Path(default_dir)] if default_dir else []) + [
        base / "installs",
        home / "kerl",
    ]:
        found += _children(directory)
    return list(dict.fromkeys(found))


def discover(
    home: Path | None = None,
    env: dict[str, str] | None = None,
    homebrew: tuple[str, ...] = HOMEBREW_PREFIXES,
) -> list[Found]:
    """Every installation found, each once (keyed by its resolved root)."""
    by_root: dict[Path, Found] = {}
    for source, path in candidates(home, env, homebrew):
        root = _root_of(path)
        if root is None:
            if source in ("BRIDGE_OTP_PATH", "kerl", "asdf", "mise"):
                item = by_root.setdefault(path, Found(root=path))
                item.sources.append(source)
                item.problem = (
                    item.problem or "no bin/erl and releases/ here: not an OTP installation"
                )
            continue
        item = by_root.setdefault(root, Found(root=root))
        if source not in item.sources:
            item.sources.append(source)
    todo = [item for item in by_root.values() if not item.problem]
    # Each probe starts a VM (about 0.3 s); a few at a time keep `otp list` quick.
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(describe, todo))
    return list(by_root.values())


def _root_of(path: Path) -> Path | None:
    """An OTP root from a root directory or an erl path, resolved."""
    if not path.exists():
        return None
    real = path.resolve()
    if real.is_file():  # .../bin/erl, maybe a symlink to the real root's
        real = real.parent.parent
    for candidate in (real, real / "lib" / "erlang"):
        if (candidate / "bin" / "erl").exists() and (candidate / "releases").is_dir():
            return candidate
    if (real / "bin" / "erl").exists() or (real / "releases").is_dir():
        return real  # half an installation: describe() says what is missing
    return None


def describe(item: Found) -> None:
    """Fill `item` from its erl's own answer, and from its files where the
    erl cannot answer."""
    if not os.access(item.erl, os.X_OK):
        item.problem = "bin/erl is missing or not executable"
        _from_files(item, item.root)
        return
    try:
        answer = otp.probe(item.erl)
    except RuntimeUnavailable as exc:
        item.problem = f"bin/erl does not run: {exc.message}"
        _from_files(item, item.root)
        return
    root = Path(answer.root_dir) if answer.root_dir else item.root
    if root != item.root:
        item.otp_root = str(root)
    _from_files(item, root)
    item.otp_version = answer.otp_version or item.otp_version or answer.otp_release
    item.erts_version = answer.erts_version or item.erts_version
    item.crypto_version = answer.crypto_version or item.crypto_version
    item.crypto_lib = answer.crypto_lib
    if answer.libcrypto:
        item.libcrypto = ", ".join(answer.libcrypto)
    if answer.crypto_error:
        item.problem = f"crypto cannot load: {answer.crypto_error}"


def _from_files(item: Found, root: Path) -> None:
    """What the layout says: versions, the crypto application and what its
    NIF links (ldd), without starting a VM."""
    item.otp_version = otp.otp_version_of(root) if (root / "releases").is_dir() else ""
    item.erts_version = otp.erts_version_of(root)
    crypto_dirs = sorted((root / "lib").glob("crypto-*"), key=lambda p: otp.version_key(p.name[7:]))
    if crypto_dirs:
        item.crypto_version = crypto_dirs[-1].name.removeprefix("crypto-")
        item.libcrypto = _linked_libcrypto(crypto_dirs[-1] / "priv" / "lib" / "crypto.so")


LDD_LINE = re.compile(r"^\s*(libcrypto\S*)\s*=>\s*(\S+)")


def _linked_libcrypto(nif: Path) -> str:
    """What the crypto NIF links against: ldd's answer, or why there is none."""
    if not nif.exists():
        return "unknown (no crypto NIF found)"
    ldd = shutil.which("ldd")
    if ldd is None:
        return "unknown (ldd not available)"
    try:
        done = proc.run([ldd, str(nif)], timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (ldd failed)"
    for line in done.stdout.decode(errors="replace").splitlines():
        m = LDD_LINE.match(line)
        if m:
            return m.group(2) if m.group(2) != "not" else f"{m.group(1)} (not found)"
    if done.returncode != 0:
        return "unknown (ldd could not read the NIF)"
    return "none: OpenSSL linked statically into the NIF"


def resolve_group(
    spec: str, home: Path | None = None, env: dict[str, str] | None = None
) -> list[str]:
    """`otp:27` -> the erl of every working OTP 27.x installation found."""
    major = spec.split(":", 1)[1]
    matches = [f for f in discover(home, env) if not f.problem and f.major == major]
    return [str(f.erl) for f in matches]


def broken_in_group(
    spec: str, home: Path | None = None, env: dict[str, str] | None = None
) -> list[Found]:
    """`otp:23` -> the OTP 23.x installations found that cannot run, each with
    its problem: what to say when otp:23 names no working one."""
    major = spec.split(":", 1)[1]
    return [f for f in discover(home, env) if f.problem and f.major == major]
