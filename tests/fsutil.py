"""File-system situations for tests that must hold for root (CI) and for an
unprivileged user (the tier .ci/run runs as one) alike: root ignores file
modes, so for root a read-only directory is a read-only bind mount, and a
full disk is a small tmpfs. Where root cannot mount (a container without
CAP_SYS_ADMIN), the test is skipped with the reason."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

IS_ROOT = os.geteuid() == 0


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"root cannot mount here: {done.stderr.strip()}")


def _umount(path: Path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True, check=True)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """`path` (an existing directory) and everything in it, unwritable for
    this user while the context lasts."""
    if IS_ROOT:
        _mount("--bind", str(path), str(path))
        try:
            _mount("-o", "remount,ro,bind", str(path))
            yield path
        finally:
            _umount(path)
        return
    dirs = [path, *(p for p in path.rglob("*") if p.is_dir())]
    for d in dirs:
        d.chmod(0o555)
    try:
        yield path
    finally:
        for d in dirs:
            d.chmod(0o755)


@contextlib.contextmanager
def small_fs(path: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of `size` mounted on `path` (root only)."""
    if not IS_ROOT:
        pytest.skip("mounting a small file system needs root (CI runs the suite as root)")
    path.mkdir(exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path))
    try:
        yield path
    finally:
        _umount(path)


def fill(directory: Path) -> None:
    """Write a file into `directory` until its file system is full."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for block in (1 << 16, 1 << 10, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * block)
    finally:
        os.close(fd)
