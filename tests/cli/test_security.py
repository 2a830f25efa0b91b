"""Security properties: no network, private and cleaned-up temporary files,
a hostile environment that cannot switch distribution on."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.runtimes.openssl import OpensslRuntime
from tests.conftest import FAST, ROOT, needs_erl, needs_openssl, wait_gone, worker_pids
from tests.integration.test_workers import _listening_inodes, _process_named


@pytest.mark.serial  # no epmd on the whole machine
@needs_erl
def test_no_listening_socket_even_when_the_environment_asks_for_distribution(tmp_path):
    env = dict(os.environ, ERL_FLAGS="-sname evil", ERL_AFLAGS="-name evil@127.0.0.1")
    before = worker_pids()
    epmd_before = _process_named("epmd")  # another Erlang on this machine may run one
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bridge",
            "run",
            "hmac-sha1",
            "--runtimes",
            "erlang",
            "--hw",
            "on",
            "--samples",
            "40",
            "--sample-ms",
            "20",
            "--rounds",
            "2",
            "-o",
            str(tmp_path / "r.json"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        seen, deadline = set(), time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            for pid in worker_pids() - before:
                seen.add(pid)
                try:
                    fds = os.listdir(f"/proc/{pid}/fd")
                    links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in fds}
                except OSError:
                    continue
                inodes = {x[len("socket:[") : -1] for x in links if x.startswith("socket:[")}
                assert not inodes & _listening_inodes(), "a worker listens on a socket"
            assert epmd_before or not _process_named("epmd"), "epmd was started"
            time.sleep(0.1)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seen, "no worker was observed"
    assert proc.returncode == 0


@needs_openssl
def test_openssl_scratch_directory_is_private_and_removed():
    rt = OpensslRuntime(FAST)
    with rt:
        scratch = Path(rt._tmp.name)
        assert stat.S_IMODE(scratch.stat().st_mode) == 0o700
    assert not scratch.exists()


@needs_erl
@needs_openssl
def test_a_run_leaves_no_temporary_files(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bridge",
            "run",
            "hmac-sha1",
            "--samples",
            "3",
            "--sample-ms",
            "2",
            "--rounds",
            "1",
            "--openssl-runs",
            "1",
            "--hw",
            "on",
            "-o",
            str(tmp_path / "r.json"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert list(scratch.iterdir()) == []


@needs_erl
@needs_openssl
def test_tls_scenarios_listen_on_loopback_only_while_they_run_and_leave_nothing(tmp_path):
    """The TLS scenarios' listeners (Erlang's server node, openssl's probe and
    timed s_server) are on 127.0.0.1, even with an environment that asks
    Erlang for distribution (a node with -sname would listen on every
    address), are gone when bridge exits, and so are the server nodes, the
    certificates and the -WWW page's directory."""
    from tests.cli.test_tls import LOOPBACK, run_watched

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch), "ERL_FLAGS": "-sname evil", "ERL_AFLAGS": "-name evil@127.0.0.1"}
    before = worker_pids()
    args = ["run", "tls-rsa2048", "tls-mtls", "tls-resume", "--runtimes", "erlang,openssl"]
    args += [*("--samples", "3", "--sample-ms", "2", "--rounds", "1", "--warmup-ms", "0")]
    args += ["--openssl-runs", "1", "--hw", "on", "-o", str(tmp_path / "r.json")]
    done, ours, left = run_watched(args, env)
    assert done.returncode == 0, done.stderr
    assert ours and {addr.split(":")[0] for addr in ours.values()} <= LOOPBACK, ours
    assert not left
    assert not wait_gone(worker_pids() - before), "a worker or TLS server node outlived bridge"
    assert list(scratch.iterdir()) == []
