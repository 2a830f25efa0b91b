"""Shared fixtures. Integration tests use the real erl, a real Python worker
and the real openssl binary; they are skipped only where the binary is absent
(`make test` installs all of them)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
# Short measurements: tests check structure and bytes, never timings.
FAST = Settings(warmup_ms=5, sample_ms=2, samples=3, openssl_seconds=1, openssl_runs=1)
FAST_ARGS = [
    "--samples",
    "3",
    "--sample-ms",
    "2",
    "--warmup-ms",
    "5",
    "--openssl-runs",
    "1",
    "--rounds",
    "1",
    "--hw",
    "on",
]

needs_erl = pytest.mark.skipif(shutil.which("erl") is None, reason="erl not installed")
needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")


def _crash_dumps() -> dict[Path, float]:
    """erl_crash.dump files in the working directory and the repository
    (its virtualenv and .git aside), with their modification times."""
    found = {}
    places = [Path.cwd() / "erl_crash.dump"]
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (".venv", ".git")]
        if "erl_crash.dump" in files:
            places.append(Path(top) / "erl_crash.dump")
    for path in places:
        with contextlib.suppress(OSError):
            found[path] = path.stat().st_mtime
    return found


@pytest.fixture(scope="session", autouse=True)
def _no_crash_dump_left():
    # Every erl bridge starts sends its crash dump to a private directory;
    # a dump here means one did not.
    before = _crash_dumps()
    yield
    new = [str(p) for p, t in _crash_dumps().items() if before.get(p) != t]
    assert not new, f"a test left an Erlang crash dump: {new}"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    # One beam cache per test session, not the user's ~/.cache.
    cache = tmp_path_factory.getbasetemp() / "bridge-cache"
    monkeypatch.setenv("BRIDGE_CACHE_DIR", str(cache))


def bridge_cmd(*args: str, env: dict | None = None, timeout: float = 300, **kw):
    """Run the real CLI in a subprocess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "bridge", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=kw.pop("cwd", ROOT),
        **kw,
    )


# Every process this test session starts inherits this mark through bridge's
# environment, so worker_pids() sees this session's workers only: the machine
# may run other sessions at the same time, as root or as another user, and a
# test must neither stop their workers nor count them as its own leftovers.
SESSION_MARK = ("BRIDGE_TEST_SESSION", f"{os.getpid()}-{time.time_ns()}")
os.environ[SESSION_MARK[0]] = SESSION_MARK[1]


def worker_pids() -> set[int]:
    """PIDs of this session's bridge worker processes (beam.smp running
    bridge_worker, or python -m bridge.worker), found through /proc."""
    pids = set()
    mark = "=".join(SESSION_MARK).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            # The worker command lines exactly: `erlc .../bridge_worker.erl` is not one.
            worker = b"bridge_worker\x00main" in cmdline or b"-m\x00bridge.worker" in cmdline
            if worker and mark in (entry / "environ").read_bytes().split(b"\x00"):
                pids.add(int(entry.name))
        except OSError:
            continue  # gone, or another user's
    return pids


def wait_gone(pids: set[int], timeout: float = 5.0) -> set[int]:
    deadline = time.monotonic() + timeout
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        alive = {p for p in alive if Path(f"/proc/{p}").exists() and not _zombie(p)}
        if alive:
            time.sleep(0.05)
    return alive


def _zombie(pid: int) -> bool:
    try:
        return " Z " in Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1][:4]
    except OSError:
        return False


@pytest.fixture
def no_leftovers():
    """Fails the test if it leaves a worker process behind."""
    before = worker_pids()
    yield
    left = wait_gone(worker_pids() - before)
    assert not left, f"worker processes outlived the test: {sorted(left)}"
