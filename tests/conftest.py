"""Shared fixtures. Integration tests use the real erl, a real Python worker
and the real openssl binary; they are skipped only where the binary is absent
(`make test` installs all of them)."""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from bridge.settings import Settings
from tests import busy

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
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


def pytest_configure(config):
    # Tests that need a quiet machine: checked, skipped saying so, counted
    # (tests/busy.py).
    config.pluginmanager.register(busy.Plugin(), "bridge-busy")
    # A non-interactive shell starts a background job (`make test &`, nohup)
    # with SIGINT ignored, and an ignored signal stays ignored across exec:
    # every bridge a test starts would then sleep through the Ctrl-C the test
    # sends. A signal with a handler is reset to its default on exec, so one
    # handler here gives every child the default a terminal's user has.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_ModulesTogether(), "bridge-modules-together")


class _ModulesTogether:
    """make test's --dist loadgroup, with each module of the real tier
    (tests/cli, tests/integration) one unit of work: its tests run on one
    xdist worker, one after the other, so that a module-scoped fixture (a
    shared real run, running nodes, an epmd) is made once, not once on each
    worker, and tests that build in the checkout never meet. Units with the
    most tests go out first; the in-process tests, one unit each, fill in
    at the end.

    xdist's own grouping (@pytest.mark.xdist_group) appends the group to
    each node id, which pytest 9 no longer lets it do: there every test was
    its own unit, and consecutive tests of a module went to both workers."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config, log):
        if config.getvalue("dist") != "loadgroup":
            return None  # another --dist: xdist's own
        from xdist.scheduler import LoadGroupScheduling

        class Scheduling(LoadGroupScheduling):
            def _split_scope(self, nodeid: str) -> str:
                path = nodeid.split("::", 1)[0]
                if path.startswith(REAL_TIER):
                    return path
                return super()._split_scope(nodeid)

        return Scheduling(config, log)


REAL_TIER = ("tests/cli/", "tests/integration/")


# `make test` runs the suite in two passes: `pytest -n 2 -m "not serial"`
# (pytest-xdist, two sessions side by side), then `pytest -m serial`, the
# tests that need the machine to themselves (the marker's description in
# pyproject.toml says which). A serial test that reaches an xdist worker
# anyway (`pytest -n 2` by hand, without -m) is skipped with the way to run
# it, never run beside another session.
def pytest_collection_modifyitems(config, items):
    if not hasattr(config, "workerinput"):  # not an xdist worker
        return
    skip = pytest.mark.skip(reason="serial: needs the machine alone; run it with pytest -m serial")
    for item in items:
        if item.get_closest_marker("serial") is not None:
            item.add_marker(skip)


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


# The environment bridge's tests started in, before any fixture changes it:
# scripts/fetch-runtimes keeps its runtimes in the user's cache (where
# `make test` put them), not in the private per-session cache below.
STARTING_ENV = dict(os.environ)


@dataclass(frozen=True)
class Bullseye:
    """Debian 11's OTP 23.2.6 and OpenSSL 1.1.1w, unpacked by scripts/fetch-runtimes."""

    bin: Path  # wrappers: erl, erlc, openssl (they set LD_LIBRARY_PATH)
    otp_root: Path  # the unpacked OTP tree (bin/erl, releases/, lib/crypto-*)
    libdir: Path  # where its libcrypto.so.1.1 is

    @property
    def erl(self) -> Path:
        return self.bin / "erl"

    @property
    def openssl(self) -> Path:
        return self.bin / "openssl"

    @property
    def prefix(self) -> Path:
        """The wrappers' prefix: PREFIX/bin/erl is a shell script, as kerl and asdf shims are."""
        return self.bin.parent


def set_up_by(script: str, tests: str, timeout: float) -> Path:
    """The directory a set-up script of scripts/ prints (it keeps what it
    makes in the user's cache, where `make test` put it). Where the script
    cannot make it here (no apt, no Debian mirror, no compiler) the test is
    skipped with its reason, except in CI (CI=true), where the skip is a
    failure; a script that fails fails the test."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script)],
        capture_output=True,
        text=True,
        env=STARTING_ENV,
        timeout=timeout,
    )
    said = done.stderr.strip()
    if done.returncode != 0:
        pytest.fail(f"scripts/{script} failed:\n{said}")
    if not done.stdout.strip():
        reason = said.splitlines()[-1] if said else f"scripts/{script} made nothing"
        if STARTING_ENV.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the {tests}, but: {reason}")
        pytest.skip(reason)
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def bullseye() -> Bullseye:
    """Runs scripts/fetch-runtimes (about a second once cached)."""
    bindir = set_up_by("fetch-runtimes", "cross-version tests", timeout=900)
    root = bindir.parent / "root"
    (libcrypto,) = root.glob("usr/lib/*/libcrypto.so.1.1")
    return Bullseye(bin=bindir, otp_root=root / "usr" / "lib" / "erlang", libdir=libcrypto.parent)


@dataclass(frozen=True)
class NoAsm:
    """OpenSSL built `no-asm` from Debian trixie's source by
    scripts/build-noasm-openssl: a libcrypto without assembler beside the
    system's."""

    prefix: Path

    @property
    def libdir(self) -> Path:  # for --libcrypto: libcrypto.so.3, libssl.so.3
        return self.prefix / "lib"

    @property
    def libcrypto(self) -> Path:
        return self.libdir / "libcrypto.so.3"

    @property
    def openssl(self) -> Path:  # for --openssl: runs on libdir by its RUNPATH
        return self.prefix / "bin" / "openssl"


@pytest.fixture(scope="session")
def noasm() -> NoAsm:
    """Runs scripts/build-noasm-openssl (a fraction of a second once built;
    `make test` builds it before the tests start)."""
    return NoAsm(set_up_by("build-noasm-openssl", "no-asm OpenSSL tests", timeout=3600))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    # One beam cache per test session, not the user's ~/.cache.
    cache = tmp_path_factory.getbasetemp() / "bridge-cache"
    monkeypatch.setenv("BRIDGE_CACHE_DIR", str(cache))


# A plain progress line (bridge.measure.eta.plain_line), which a run writes
# on stderr when it is a pipe (--progress auto): "0:00 starting python",
# " 25% 0:02 ETA 0:05 round 1/4 of hmac-sha1 done (8 cells)".
PROGRESS_LINE = re.compile(
    r"^(?: *\d{1,3}% )?\d+:\d\d(?::\d\d)?(?: ETA (?:\d+:\d\d(?::\d\d)?|-:--))? "
)


def without_progress(stderr: str) -> str:
    return "".join(
        line for line in stderr.splitlines(keepends=True) if not PROGRESS_LINE.match(line)
    )


def bridge_cmd(*args: str, env: dict | None = None, timeout: float = 300, **kw):
    """Run the real CLI in a subprocess; its stderr without the progress
    lines a pipe gets (tests/cli/test_live_output.py tests those)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "bridge", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=kw.pop("cwd", ROOT),
        **kw,
    )
    if isinstance(done.stderr, str):
        done.stderr = without_progress(done.stderr)
    return done


def read_until(proc: subprocess.Popen, needle: str, timeout: float = 120) -> str:
    """What `proc` has written on stderr (a pipe), once it holds `needle`
    (a progress line's words): a run that has reached that point, however slowly a busy
    machine let it (a test that signals a run at a fixed delay after it
    started finds it elsewhere under load). The timeout bounds a hang.
    Read from the descriptor, unbuffered, so that a later communicate()
    returns the rest of stderr: the whole is the two joined."""
    fd, seen = proc.stderr.fileno(), b""
    deadline = time.monotonic() + timeout
    while needle.encode() not in seen:
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:
            raise AssertionError(f"{needle!r} never came: {seen[-2000:].decode(errors='replace')}")
        seen += chunk
    return seen.decode(errors="replace")


def worker_pids() -> set[int]:
    """PIDs of this test session's bridge worker processes (beam.smp running
    bridge_worker or, started by one, the TLS server node of bridge_tls_server,
    or python -m bridge.pyworker.worker), found through /proc. Workers
    of other test sessions on the same machine (another checkout, CI) are not
    this session's: a worker inherits BRIDGE_CACHE_DIR, which is per session."""
    marker = f"BRIDGE_CACHE_DIR={os.environ.get('BRIDGE_CACHE_DIR', '')}".encode()
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            # The worker command lines exactly: `erlc .../bridge_worker.erl` is not one.
            if (
                b"bridge_worker\x00main" not in cmdline
                and b"bridge_tls_server\x00main" not in cmdline
                and b"-m\x00bridge.pyworker.worker" not in cmdline
            ):
                continue
            if marker not in (entry / "environ").read_bytes().split(b"\x00"):
                continue
        except OSError:
            continue
        pids.add(int(entry.name))
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


# What a run says about the machine and the spread of its samples (bridge.analysis.noise,
# unstable cells): it depends on the load and on short test settings, so a test
# that checks its own warnings leaves these out.
NOISE_WARNINGS = (
    "did not reach the target",
    "during the run",
    "(steal)",
    "frequency governor",
    "SMT: CPUs",
    "bimodal samples",
    "drifting samples",
)


def own_stderr(stderr: str) -> list[str]:
    """stderr's lines without the machine-noise warnings and advice."""
    return [
        line
        for line in stderr.splitlines()
        if not line.startswith("bridge: advice:")
        and not (line.startswith("bridge: warning:") and any(n in line for n in NOISE_WARNINGS))
    ]
