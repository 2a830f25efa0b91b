"""`--libcrypto DIR`: run a runtime again with another libcrypto of the same
soname, put in front of the dynamic loader's search path.

This answers "would upgrading OpenSSL help this node?" without rebuilding
OTP or Python: libcrypto 3.x keeps one ABI (soname libcrypto.so.3), so an
OTP crypto NIF, Python's _hashlib/_ssl or the openssl CLI built against 3.0
runs on 3.5 when the loader finds 3.5 first. LD_LIBRARY_PATH outranks a
DT_RUNPATH (as pyenv's Python has) but not a DT_RPATH, a wrapper script that
sets its own path, or a setuid binary, so a run proves the load instead of
trusting it: after start, the runtime's process must have DIR's file mapped
(/proc/PID/maps, matched by device and inode, so a symlink or a copy under
another name cannot fool it). If not, the run refuses; a runtime whose
libcrypto has another soname (OTP built against 1.1 with a 3.x DIR) is
skipped, with the reason.

The library's version is read from the library itself: OpenSSL and LibreSSL
keep their version text ("OpenSSL 3.5.4 30 Sep 2025") as a string constant.
"""

from __future__ import annotations

import os
import re
import select
import struct
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bridge.errors import BridgeError, UsageError
from bridge.system import proc

# -- the library in DIR --------------------------------------------------------


@dataclass(frozen=True)
class Library:
    """One libcrypto file in a --libcrypto directory."""

    given: str  # --libcrypto as the user wrote it
    dir: Path  # the directory that goes in front of LD_LIBRARY_PATH
    file: Path  # DIR/libcrypto.so.N
    soname: str  # its DT_SONAME, e.g. libcrypto.so.3
    version_text: str  # e.g. "OpenSSL 3.5.4 30 Sep 2025"

    @property
    def version(self) -> str:
        """ "3.5.4" from the version text (what runtime ids show)."""
        return self.version_text.split()[1]


@dataclass(frozen=True)
class Directory:
    """A --libcrypto directory: its libcrypto files by soname (one directory
    may hold libcrypto.so.1.1 and libcrypto.so.3 side by side)."""

    given: str
    dir: Path
    by_soname: dict[str, Library]

    @property
    def sonames(self) -> list[str]:
        return sorted(self.by_soname)


# OPENSSL_VERSION_TEXT as compiled into the library: a NUL-terminated string
# such as "OpenSSL 1.1.1w  11 Sep 2023" or "OpenSSL 3.5.0-beta1 ...".
VERSION = re.compile(
    rb"(?<![\w.])(OpenSSL|LibreSSL) (\d+\.\d+\.\d+[a-z]*(?:-[\w.]+)?)"
    rb"( +\d{1,2} [A-Z][a-z]{2} \d{4})?\x00"
)


def version_text(data: bytes) -> str | None:
    """The first version text constant in a library's bytes. OpenSSL's has a
    date; LibreSSL's has none."""
    for m in VERSION.finditer(data):
        if m.group(1) == b"OpenSSL" and not m.group(3):
            continue  # e.g. "OpenSSL 3.0.0" inside an error string, not the constant
        return m.group(0).rstrip(b"\x00").decode("ascii", "replace")
    return None


def resolve(given: str) -> Directory:
    """--libcrypto DIR: DIR itself, or an OpenSSL install prefix (DIR/lib64,
    DIR/lib, where `make install_sw` puts the libraries). Bad input is a
    UsageError naming what was looked for."""
    root = Path(given).expanduser()
    if not root.exists():
        raise UsageError(f"--libcrypto {given}: no such directory")
    if not root.is_dir():
        raise UsageError(
            f"--libcrypto {given}: not a directory (name the directory that holds libcrypto.so.N)"
        )
    for candidate in (root, root / "lib64", root / "lib"):
        found = _libraries(given, candidate)
        if found:
            return Directory(given, candidate.resolve(), found)
    raise UsageError(
        f"--libcrypto {given}: no libcrypto.so.N in it, nor in its lib64/ or lib/"
        " (an OpenSSL built with './Configure --prefix=DIR shared' installs them there)"
    )


def _libraries(given: str, directory: Path) -> dict[str, Library]:
    found: dict[str, Library] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("libcrypto.so.*")):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        soname = elf_soname(data)
        if soname is None or not soname.startswith("libcrypto.so"):
            continue  # not a shared object (a .debug file, a linker script)
        text = version_text(data)
        if text is None:
            raise UsageError(f"--libcrypto {given}: {path} does not say its version")
        # The loader looks the soname up by name: that file is what it will map.
        by_name = directory / soname
        file = by_name if by_name.exists() else path
        found.setdefault(soname, Library(given, directory.resolve(), file, soname, text))
    return found


# -- ELF: DT_SONAME --------------------------------------------------------------

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_STRTAB, _DT_SONAME = 0, 5, 14


def elf_soname(data: bytes) -> str | None:
    """The DT_SONAME of an ELF shared object (32/64-bit, either byte order),
    or None when `data` is not one or has no soname. The dynamic section
    gives the string table as a virtual address, mapped to a file offset
    through the PT_LOAD segments."""
    if data[:4] != b"\x7fELF" or len(data) < 64:
        return None
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    try:
        if wide:
            phoff, phentsize, phnum = (
                struct.unpack_from(order + "Q", data, 32)[0],
                *struct.unpack_from(order + "HH", data, 54),
            )
            ph_fmt, dyn_fmt = order + "IIQQQQQQ", order + "qQ"
        else:
            phoff, phentsize, phnum = (
                struct.unpack_from(order + "I", data, 28)[0],
                *struct.unpack_from(order + "HH", data, 42),
            )
            ph_fmt, dyn_fmt = order + "IIIIIIII", order + "iI"
        loads, dynamic = [], None
        for i in range(phnum):
            fields = struct.unpack_from(ph_fmt, data, phoff + i * phentsize)
            if wide:
                p_type, _, offset, vaddr, _, filesz = fields[:6]
            else:
                p_type, offset, vaddr, _, filesz = fields[:5]
            if p_type == _PT_LOAD:
                loads.append((vaddr, offset, filesz))
            elif p_type == _PT_DYNAMIC:
                dynamic = (offset, filesz)
        if dynamic is None:
            return None
        strtab = soname = None
        step = struct.calcsize(dyn_fmt)
        for pos in range(dynamic[0], dynamic[0] + dynamic[1], step):
            tag, value = struct.unpack_from(dyn_fmt, data, pos)
            if tag == _DT_NULL:
                break
            if tag == _DT_STRTAB:
                strtab = value
            elif tag == _DT_SONAME:
                soname = value
        if strtab is None or soname is None:
            return None
        for vaddr, offset, filesz in loads:
            if vaddr <= strtab < vaddr + filesz:
                start = strtab - vaddr + offset + soname
                return data[start : data.index(b"\x00", start)].decode("ascii", "replace")
    except (struct.error, ValueError):
        return None
    return None


def soname_of(path: str | Path) -> str | None:
    try:
        return elf_soname(Path(path).read_bytes())
    except OSError:
        return None


# -- what a process has mapped ------------------------------------------------------


@dataclass(frozen=True)
class Mapped:
    """A libcrypto file in a process's /proc/PID/maps, with the device and
    inode the kernel gives for it."""

    pid: int
    path: str
    dev: tuple[int, int]  # major, minor
    inode: int

    def same_file(self, path: Path) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) == (*self.dev, self.inode)

    def text(self) -> str:
        device = f"{self.dev[0]:02x}:{self.dev[1]:02x}"  # as maps writes it
        return f"/proc/{self.pid}/maps: {self.path} (device {device}, inode {self.inode})"


def parse_maps(pid: int, maps: str) -> list[Mapped]:
    """The libcrypto files in a maps text, once each."""
    out: list[Mapped] = []
    for line in maps.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) < 6 or not os.path.basename(parts[5]).startswith("libcrypto"):
            continue
        major, _, minor = parts[3].partition(":")
        item = Mapped(pid, parts[5], (int(major, 16), int(minor, 16)), int(parts[4]))
        if item not in out:
            out.append(item)
    return out


def mapped(pid: int) -> list[Mapped]:
    """The libcrypto files mapped by a process and its descendants (a wrapper
    that does not exec keeps the real program as its child)."""
    out: list[Mapped] = []
    for p in [pid, *_descendants(pid)]:
        try:
            text = Path(f"/proc/{p}/maps").read_text()
        except OSError:
            continue
        out += [m for m in parse_maps(p, text) if m not in out]
    return out


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


class CannotTell(BridgeError):
    """What a process loads could not be observed."""


def probe_cli(executable: str, env: Mapping[str, str], timeout: float = 15.0) -> list[Mapped]:
    """The libcrypto an `openssl` binary maps, run with `env`. The CLI is
    short-lived, so it is given work it cannot finish: `openssl rand` of a
    gigabyte into a pipe bridge does not drain. Once its first byte arrives,
    main() has run and libcrypto has made random bytes; the process then
    blocks on the full pipe, and its maps are read before it is killed. This
    observes the same binary, the same environment and the same loader as a
    measurement, wrapper scripts included, where `ldd` would only predict."""
    try:
        child = proc.popen(
            [executable, "rand", str(1 << 30)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
        )
    except OSError as exc:
        raise CannotTell(f"cannot run {executable}: {exc.strerror}") from None
    assert child.stdout is not None and child.stderr is not None
    try:
        ready, _, _ = select.select([child.stdout], [], [], timeout)
        first = os.read(child.stdout.fileno(), 1) if ready else b""
        if not first:
            proc.kill_group(child)
            said = child.stderr.read(400).decode("utf-8", "replace").strip()
            raise CannotTell(
                f"'{executable} rand' wrote nothing within {timeout:.0f} s"
                + (f": {said.splitlines()[-1]}" if said else "")
            )
        return mapped(child.pid)
    finally:
        proc.kill_group(child)
        child.stdout.close()
        child.stderr.close()
