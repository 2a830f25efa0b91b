"""bridge's cache directory (~/.cache/bridge): every read and write there
goes through here.

The root is where the user put it ($BRIDGE_CACHE_DIR/bridge, else
$XDG_CACHE_HOME/bridge, else ~/.cache/bridge), links on the way to it
included. Below it nothing follows a symbolic link: with `beam` a link to
/etc, bridge compiled its worker into /etc; with `limits.json` a FIFO, a run
blocked for ever writing it. So, below the root:

- each directory is made (0700) or opened one level at a time with
  O_NOFOLLOW | O_DIRECTORY, and its resolved path must lie inside the root;
  it, and the root, must be the user's own and not writable by every user
  (another user's directory could have anything put in it);
- a file is read opened with O_NOFOLLOW | O_NONBLOCK and must be a regular
  file (fstat), read within a bound;
- a file is written to a new private file beside it (O_EXCL | O_NOFOLLOW),
  synced, then renamed over the name: the rename replaces a link or a FIFO
  found there, never writes through it;
- each read or write gives up after IO_TIMEOUT_S (a hung network file
  system), leaving its thread blocked but bridge going.

Failures are `CacheError`, an OSError: every caller already treats a cache
it cannot use as no cache (a worker compiled into a temporary directory, a
limit measured again, no twins' guess).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

IO_TIMEOUT_S = 10.0
_CHUNK = 1 << 16
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

T = TypeVar("T")


class CacheError(OSError):
    """The cache, or a path in it, cannot be used safely; `strerror` says why."""

    def __init__(self, path: Path | str, why: str, code: int = errno.EPERM) -> None:
        super().__init__(code, f"{path}: {why}")


def root() -> Path:
    """Where the cache is, as the user set it (nothing is made)."""
    base = os.environ.get("BRIDGE_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "bridge" if base else Path.home() / ".cache" / "bridge"


def directory(*parts: str, create: bool = True, top: Path | None = None) -> Path:
    """`top` (the cache root by default) / parts, each part a directory of
    its own (made 0700 where missing, unless not `create`) and none a link;
    FileNotFoundError when one is missing and not `create`."""
    base = root() if top is None else top
    return _timed(lambda: _directory(base, parts, create), base.joinpath(*parts))


def directory_or_none(*parts: str) -> Path | None:
    """`directory(*parts)`, or None where the cache cannot be used."""
    try:
        return directory(*parts)
    except OSError:
        return None


def read_bytes(path: Path, limit: int) -> bytes:
    """The regular file `path` (its directory already checked, e.g. by
    `directory`), at most `limit` bytes. FileNotFoundError when it is not
    there; CacheError when it is a link, a FIFO, a device or larger."""
    return _timed(lambda: _read(path, limit), path)


def write_bytes(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace the file `path` (its directory already checked) whole: a new
    file beside it, synced, renamed over whatever the name held."""
    _timed(lambda: _write(path, data, mode), path)


def remove(path: Path) -> None:
    """Remove the entry `path` (a file, a link, a FIFO: not what a link
    points to); nothing when it is not there."""

    def unlink() -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            raise CacheError(path, "a directory, where bridge keeps a file") from None

    _timed(unlink, path)


def discard(path: Path) -> None:
    """Move a damaged entry aside (one rename, so a concurrent run sees it
    whole or not at all), then delete it: a link or a FIFO itself, never
    what a link points to. Nothing when it is gone already."""
    aside = path.with_name(f".damaged-{path.name}-{os.getpid()}-{secrets.token_hex(4)}")

    def move_and_delete() -> None:
        try:
            os.rename(path, aside)
        except FileNotFoundError:
            return  # another run moved it first
        if is_real_directory(aside):
            shutil.rmtree(aside, ignore_errors=True)  # rmtree follows no link inside
        else:
            os.unlink(aside)

    _timed(move_and_delete, path)


def is_real_directory(path: Path) -> bool:
    """A directory, and not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


# -- the work, each step without following a link ------------------------------


def _directory(base: Path, parts: tuple[str, ...], create: bool) -> Path:
    for part in parts:
        if not part or part in (".", "..") or "/" in part or "\0" in part:
            raise CacheError(base, f"{part!r} is not a name in the cache", errno.EINVAL)
    if create:
        try:
            base.mkdir(mode=0o700, parents=True, exist_ok=True)
        except FileExistsError:
            raise CacheError(base, "not a directory", errno.ENOTDIR) from None
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    where = base
    try:
        _own(fd, where)
        for part in parts:
            where = where / part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refusal(where, exc) from None
            os.close(fd)
            fd = inner
            _own(fd, where)
    finally:
        os.close(fd)
    real_base, real = os.path.realpath(base), os.path.realpath(where)
    if os.path.commonpath([real_base, real]) != real_base:
        raise CacheError(where, f"resolves to {real}, outside the cache {real_base}")
    return where


def _own(fd: int, path: Path) -> None:
    """The directory open on `fd` is this user's and no other user may write
    in it: bridge loads the worker's compiled code from here, and whoever
    can change a directory can change what is in it (a cache under /tmp
    made first by another user)."""
    st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        raise CacheError(path, f"owned by uid {st.st_uid}, not by this user ({os.geteuid()})")
    if st.st_mode & stat.S_IWOTH:
        raise CacheError(path, "writable by every user")


def _refusal(path: Path, exc: OSError) -> OSError:
    """An OSError from opening `path` without following links, said plainly
    (Linux answers O_NOFOLLOW | O_DIRECTORY on a link with ENOTDIR, not ELOOP)."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
        return CacheError(path, "a symbolic link; bridge follows none in its cache", errno.ELOOP)
    if exc.errno == errno.ENOTDIR:
        return CacheError(path, "not a directory", errno.ENOTDIR)
    if exc.errno == errno.ENOENT:
        return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    return exc


def _read(path: Path, limit: int) -> bytes:
    try:
        fd = os.open(path, _READ_FLAGS)
    except NotADirectoryError:
        # Its directory is a file: no such file (what would be the file's
        # own kind is checked on the descriptor).
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path)) from None
    except OSError as exc:
        raise _refusal(path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise CacheError(path, f"{_kind(mode)}, where bridge keeps a file")
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise CacheError(path, f"larger than {limit} bytes", errno.EFBIG)
    return data


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _write(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, _NEW_FLAGS, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _timed(work: Callable[[], T], path: Path) -> T:
    """`work()` in a thread of its own, given IO_TIMEOUT_S: a read or write
    on a hung file system cannot hold bridge up (the thread stays blocked,
    a daemon, and ends with the process)."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    thread = threading.Thread(target=run, name="bridge-cache-io", daemon=True)
    thread.start()
    thread.join(IO_TIMEOUT_S)
    if thread.is_alive():
        raise CacheError(path, f"no answer within {IO_TIMEOUT_S:g} s", errno.ETIMEDOUT)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
