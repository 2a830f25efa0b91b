"""bridge's cache follows no link and blocks on nothing: on a real file
system, a directory in it that is a link (to /etc, or anywhere), a FIFO or
a device where a file belongs, and a write over a link or a FIFO."""

from __future__ import annotations

import errno
import importlib.util
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bridge.system import cache


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("BRIDGE_CACHE_DIR", str(tmp_path / "c"))
    return tmp_path / "c" / "bridge"


def test_directories_are_made_private_one_level_at_a_time(root):
    made = cache.directory("beam", "key")
    assert made == root / "beam" / "key"
    for d in (root, root / "beam", made):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    with pytest.raises(FileNotFoundError):
        cache.directory("agent", create=False)


@pytest.mark.parametrize("target", ["/etc", "outside"])
def test_a_directory_that_is_a_link_is_refused(root, tmp_path, target):
    """`beam` a link to /etc: bridge wrote its worker there."""
    elsewhere = tmp_path / "outside" if target == "outside" else target
    (tmp_path / "outside").mkdir()
    root.mkdir(parents=True)
    (root / "beam").symlink_to(elsewhere)
    with pytest.raises(cache.CacheError, match="a symbolic link") as caught:
        cache.directory("beam", "key")
    assert caught.value.errno == errno.ELOOP
    assert not (tmp_path / "outside" / "key").exists() and not os.path.exists("/etc/key")
    assert cache.directory_or_none("beam") is None


def test_a_link_deeper_down_is_refused_too(root, tmp_path):
    (root / "beam").mkdir(parents=True)
    (root / "beam" / "key").symlink_to(tmp_path)
    with pytest.raises(cache.CacheError, match="beam/key: a symbolic link"):
        cache.directory("beam", "key", create=False)


@pytest.mark.parametrize("part", ["..", ".", "", "a/b", "x\0"])
def test_a_part_that_is_not_a_name_is_refused(root, part):
    with pytest.raises(cache.CacheError, match="not a name in the cache"):
        cache.directory(part)


def test_a_file_where_a_directory_belongs_is_refused(root):
    root.mkdir(parents=True)
    (root / "beam").write_text("")
    with pytest.raises(cache.CacheError, match="not a directory"):
        cache.directory("beam")


def test_reads_refuse_fifos_links_and_directories_at_once(root, tmp_path):
    root.mkdir(parents=True)
    os.mkfifo(root / "fifo")
    (root / "link").symlink_to("/dev/zero")
    (root / "dir").mkdir()
    started = time.monotonic()
    for name, said in (("fifo", "a FIFO"), ("link", "a symbolic link"), ("dir", "a directory")):
        with pytest.raises(cache.CacheError, match=said):
            cache.read_bytes(root / name, 1 << 20)
    assert time.monotonic() - started < 5  # none of them blocked
    with pytest.raises(FileNotFoundError):
        cache.read_bytes(root / "missing", 10)
    (root / "big").write_bytes(b"x" * 11)
    with pytest.raises(cache.CacheError, match="larger than 10 bytes"):
        cache.read_bytes(root / "big", 10)
    assert cache.read_bytes(root / "big", 11) == b"x" * 11


def test_a_write_replaces_a_fifo_or_a_link_and_never_writes_through(root, tmp_path):
    root.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (root / "limits.json").symlink_to(victim)
    os.mkfifo(root / "twins.json")
    for name in ("limits.json", "twins.json"):
        cache.write_bytes(root / name, b"{}")
        assert (root / name).read_bytes() == b"{}"
        assert stat.S_ISREG(os.lstat(root / name).st_mode)
        assert stat.S_IMODE(os.lstat(root / name).st_mode) == 0o600
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in root.iterdir()) == ["limits.json", "twins.json"]  # no temp left


def test_discard_removes_a_link_not_what_it_points_to(root, tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "file").write_text("x")
    (root / "beam").mkdir(parents=True)
    (root / "beam" / "key").symlink_to(keep)
    cache.discard(root / "beam" / "key")
    assert (keep / "file").read_text() == "x"
    assert list((root / "beam").iterdir()) == []
    cache.discard(root / "beam" / "key")  # gone already: nothing


def test_io_that_does_not_answer_gives_up(monkeypatch, tmp_path):
    """A read or write on a hung file system: bridge goes on without it."""
    monkeypatch.setattr(cache, "IO_TIMEOUT_S", 0.2)
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(cache.CacheError, match="no answer within 0.2 s") as caught:
        cache._timed(lambda: release.wait(30), tmp_path)
    release.set()
    assert caught.value.errno == errno.ETIMEDOUT
    assert time.monotonic() - started < 5
    assert cache._timed(lambda: 42, tmp_path) == 42
    with pytest.raises(ZeroDivisionError):
        cache._timed(lambda: 1 / 0, tmp_path)


# -- the set-up scripts that write into the cache ----------------------------------

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"


@pytest.fixture(scope="module")
def archive():
    """scripts/debian_archive.py (standard library only), as the scripts load it."""
    spec = importlib.util.spec_from_file_location("debian_archive", SCRIPTS / "debian_archive.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_scripts_make_directories_without_following_links(archive, tmp_path):
    top = tmp_path / "cache"
    assert archive.below(top, "runtimes", "apt") == top / "runtimes" / "apt"
    outside = tmp_path / "outside"
    outside.mkdir()
    (top / "runtimes" / "bullseye").symlink_to(outside)
    with pytest.raises(archive.Failed, match="bullseye is a link"):
        archive.below(top, "runtimes", "bullseye", "bin")
    assert list(outside.iterdir()) == []
    (top / "runtimes" / "open").mkdir(mode=0o777)
    os.chmod(top / "runtimes" / "open", 0o777)
    with pytest.raises(archive.Failed, match="open is writable by every user"):
        archive.below(top, "runtimes", "open", "bin")
    assert not (top / "runtimes" / "open" / "bin").exists()


def test_the_scripts_write_no_file_through_a_link_or_into_a_fifo(archive, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (tmp_path / "stamp").symlink_to(victim)
    os.link(victim, tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    started = time.monotonic()
    for name in ("stamp", "fifo"):
        assert archive.read_file(tmp_path / name) == ""
        with pytest.raises(archive.Failed), archive.lock(tmp_path / name):
            pass
    for name in ("stamp", "hard", "fifo"):
        # Replaced by a file of its own, never written through.
        archive.write_file(tmp_path / name, "x")
        assert (tmp_path / name).is_file() and not (tmp_path / name).is_symlink()
        assert archive.read_file(tmp_path / name) == "x"
    assert time.monotonic() - started < 5  # nothing blocked on the FIFO
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "hard", "stamp", "victim"]
    archive.write_file(tmp_path / "wrapper", "#!/bin/sh\n", 0o755)
    assert archive.read_file(tmp_path / "wrapper") == "#!/bin/sh\n"
    assert stat.S_IMODE((tmp_path / "wrapper").stat().st_mode) == 0o755


@pytest.mark.parametrize("script", ["fetch-runtimes", "build-noasm-openssl"])
def test_a_script_refuses_a_runtimes_directory_that_is_a_link(tmp_path, script):
    cache = tmp_path / "cache"
    (cache / "bridge").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (cache / "bridge" / "runtimes").symlink_to(outside)
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / script)],
        env={**os.environ, "BRIDGE_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "runtimes is a link or not a directory" in done.stderr
    assert list(outside.iterdir()) == []


def test_a_directory_another_user_could_write_in_is_refused(root):
    """bridge loads its worker's code from the cache: a directory every user
    may write in (a cache under /tmp, made first by someone else) is not used."""
    (root / "beam").mkdir(parents=True)
    os.chmod(root / "beam", 0o777)
    with pytest.raises(cache.CacheError, match="beam: writable by every user"):
        cache.directory("beam", "key")
    assert not (root / "beam" / "key").exists()
    os.chmod(root / "beam", 0o700)
    os.chmod(root, 0o757)
    with pytest.raises(cache.CacheError, match="writable by every user"):
        cache.directory("beam")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory another user's takes root")
def test_a_directory_of_another_users_is_refused(root):
    (root / "agent").mkdir(parents=True)
    os.chown(root / "agent", 65534, 65534)  # nobody
    with pytest.raises(cache.CacheError, match="agent: owned by uid 65534, not by this user"):
        cache.directory("agent")
    assert cache.directory_or_none("agent") is None
