"""Writing what bridge makes (reports, plots, caches) without destroying
anything: a regular file is replaced atomically (a temporary file in its own
directory, fsync, rename), a symlink is written through and kept, a FIFO, a
device, `-` or /dev/stdout is written in place, and a report that cannot be
written where asked is kept in a fallback file (`keep`)."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from bridge.errors import BridgeError, UsageError
from bridge.system import signals


class OutputError(BridgeError):
    """A file (or stdout) that could not be written: `reason` is the
    system's word for it (No space left on device, Permission denied...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: cannot write ({reason})")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """Where -o PATH really goes. `path` is the file a regular write
    replaces: a symlink's final target (the link stays), or PATH itself.
    `direct`: a FIFO, a device, `-` or a process's file descriptor
    (/dev/stdout is /proc/self/fd/1), written in place, never replaced;
    `stdout` when that is bridge's own stdout."""

    given: str
    path: Path
    direct: bool = False
    stdout: bool = False
    exists: bool = False
    mode: int | None = None  # an existing regular file's permission bits
    owner: tuple[int, int] | None = None

    @property
    def directory(self) -> Path:
        return self.path.parent


MAX_LINKS = 40  # as the kernel's ELOOP


def output_target(path: str | Path) -> Target:
    """Resolve PATH link by link, without touching anything. Raises
    UsageError for a directory, a socket or a loop of links."""
    given = str(path)
    if given == "-":
        return Target(given, Path("-"), direct=True, stdout=True)
    current = os.path.abspath(given)
    for _ in range(MAX_LINKS):
        # Links among the directories first (/dev/fd is /proc/self/fd).
        parent = os.path.realpath(os.path.dirname(current))
        current = os.path.join(parent, os.path.basename(current))
        in_proc = parent == "/proc" or parent.startswith("/proc/")
        if in_proc and os.path.lexists(current):
            return _direct(given, Path(current))  # a process's descriptor: never renamed over
        if not os.path.islink(current):
            break
        current = os.path.join(parent, os.readlink(current))
    else:
        raise UsageError(f"--output {given}: too many levels of symbolic links")
    real = Path(current)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return Target(given, real)
    except OSError as exc:
        raise UsageError(f"--output {given}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"--output {given}: is a directory")
    if stat.S_ISREG(st.st_mode):
        owner = (st.st_uid, st.st_gid)
        return Target(given, real, exists=True, mode=stat.S_IMODE(st.st_mode), owner=owner)
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return _direct(given, real)
    raise UsageError(f"--output {given}: is not a file, a FIFO or a device (a socket?)")


def _direct(given: str, path: Path) -> Target:
    try:
        st = os.stat(path)
    except OSError:
        return Target(given, path, direct=True)
    try:
        out = os.fstat(1)
    except OSError:
        out = None
    same = out is not None and (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino)
    return Target(given, path, direct=True, stdout=same, exists=True)


def write_atomic(path: str | Path, text: str) -> None:
    """Write text so that `path` is never seen half-written: a private
    temporary file in the directory of the file it names (through any
    symlink, which stays), fsync, then rename over. A FIFO, a device or `-`
    is written in place (see Target)."""
    data = text.encode("utf-8")
    write_output(path, lambda f: f.write(data))


def write_output(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """`write` the contents into a binary file object, as write_atomic
    says. Raises OutputError when the system refuses (full disk, read-only
    file system, permission), with nothing half-written left behind."""
    target = output_target(path)
    if target.direct:
        _write_direct(target, write)
        return
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{target.path.name}.", suffix=".tmp", dir=target.directory
        )
    except FileNotFoundError:
        raise UsageError(f"{path}: cannot write there (no directory {target.directory})") from None
    except OSError as exc:
        raise OutputError(str(path), exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp made it 0600: a report is for sharing; a file that was
        # there keeps its mode (and, where bridge may, its owner).
        os.chmod(tmp, target.mode if target.mode is not None else 0o666 & ~_umask())
        if target.owner is not None and target.owner != (os.geteuid(), os.getegid()):
            with contextlib.suppress(OSError):
                os.chown(tmp, *target.owner)
        os.replace(tmp, target.path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise OutputError(str(path), exc.strerror or str(exc)) from None
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _sync_directory(target.directory)


def _write_direct(target: Target, write: Callable[[BinaryIO], object]) -> None:
    if target.stdout:
        out = sys.stdout
        try:
            out.flush()
            buffer = getattr(out, "buffer", None)
            if buffer is None:  # a text-only stream (click's test runner)
                data = io.BytesIO()
                write(data)
                out.write(data.getvalue().decode("utf-8"))
                out.flush()
            else:
                write(buffer)
                buffer.flush()
        except OSError as exc:
            raise OutputError(target.given, exc.strerror or str(exc)) from None
        return
    try:
        fd = _open_waiting(target.path)
    except OSError as exc:
        raise OutputError(target.given, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
    except OSError as exc:
        raise OutputError(target.given, exc.strerror or str(exc)) from None


FIFO_POLL_S = 0.05


def _open_waiting(path: Path) -> int:
    """Open for writing without truncating (a regular file behind
    /proc/self/fd is appended to, as its descriptor would). A FIFO is waited
    for until it has a reader; a signal while waiting gives up (ENXIO)."""
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    try:
        is_fifo = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        is_fifo = False
    if not is_fifo:
        return os.open(path, flags)
    signals_before = signals.count()
    while True:
        try:
            fd = os.open(path, flags | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO or signals.count() != signals_before:
                raise OSError(
                    exc.errno, "no reader on the FIFO" if exc.errno == errno.ENXIO else exc.strerror
                ) from None
            time.sleep(FIFO_POLL_S)
            continue
        os.set_blocking(fd, True)
        return fd


def keep(text: str, name: str, places: list[Path]) -> Path:
    """Keep a report that could not be written where it was asked: a new
    file in the first of `places` that takes it. Raises OutputError naming
    every place tried."""
    stem, suffix = os.path.splitext(os.path.basename(name) or "report")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    data = text.encode("utf-8")
    tried = []
    for place in places:
        try:
            place.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, kept = tempfile.mkstemp(
                prefix=f"{stem or 'report'}-{stamp}-", suffix=suffix or ".json", dir=place
            )
        except OSError as exc:
            tried.append(f"{place}: {exc.strerror or exc}")
            continue
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            _unlink_quietly(kept)
            tried.append(f"{place}: {exc.strerror or exc}")
            continue
        return Path(kept)
    raise OutputError("fallback", "; ".join(tried) or "no place to try")


def _sync_directory(directory: Path) -> None:
    # The rename itself survives a crash once the directory is synced.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
