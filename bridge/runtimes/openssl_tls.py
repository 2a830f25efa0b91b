"""The openssl runtime's TLS handshakes: `openssl s_time -new` against an
`openssl s_server` that listens on 127.0.0.1, on an ephemeral port, for the
cell only.

A sample is one s_time process: its connection count over the wall-clock
time it took (its own "real seconds" are whole seconds). The negotiated
protocol, suite and group are read from one `openssl s_client` handshake.
The client side offers the one group and protocol version through an
OpenSSL configuration file (s_time has no -groups, and 1.1.1's no -tls1_3):
in TLS 1.2 with P-256 after the group, which the ECDSA certificate's curve
needs there.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from bridge.catalog import calls, vocab
from bridge.catalog.scenario import TlsScenario
from bridge.errors import OperationError
from bridge.system import proc

CONNECTIONS = re.compile(r"^(\d+) connections in \d+ real seconds", re.M)
NEGOTIATED = re.compile(r"^New, (TLSv1\.\d), Cipher is (\S+)", re.M)
TEMP_KEY = re.compile(r"^Server Temp Key: (.*)$", re.M)
LISTEN = "0A"
START_TRIES = 5
START_WAIT_S = 5.0

Run = Callable[..., subprocess.CompletedProcess]  # OpensslRuntime._exec


def free_port() -> int:
    """An ephemeral port on 127.0.0.1 that was free a moment ago (a race the
    caller survives by trying again)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int, pid: int | None = None) -> bool:
    """Does a socket listen on 127.0.0.1:port (/proc/net/tcp), and, given a
    pid, is it that process's own (not someone else's on a port taken since)?"""
    want = f"0100007F:{port:04X}"
    inodes = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            parts = line.split()
            if len(parts) > 9 and parts[1] == want and parts[3] == LISTEN:
                inodes.add(parts[9])
    if pid is None or not inodes:
        return bool(inodes)
    return bool(inodes & _socket_inodes(pid))


def _socket_inodes(pid: int) -> set[str]:
    fd_dir = Path(f"/proc/{pid}/fd")
    found = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                link = os.readlink(fd_dir / fd)
                if link.startswith("socket:["):
                    found.add(link[8:-1])
    return found


def client_groups(sc: TlsScenario, version: vocab.TlsVersion) -> str:
    names = [sc.spec.openssl]
    if version.name == "1.2" and sc.group != "p256":
        names.append(vocab.TLS_GROUPS["p256"].openssl)
    return ":".join(names)


def client_conf(directory: str, groups: str, protocol: str) -> str:
    """An OpenSSL configuration that makes every client offer `groups` and
    one protocol version (s_time has neither -groups nor, in 1.1.1, -tls1_3)."""
    path = Path(directory) / f"tls-client-{protocol}-{groups.replace(':', '-')}.cnf"
    path.write_text(
        "openssl_conf = bridge_conf\n[bridge_conf]\nssl_conf = bridge_ssl\n"
        "[bridge_ssl]\nsystem_default = bridge_tls\n"
        f"[bridge_tls]\nGroups = {groups}\n"
        f"MinProtocol = {protocol}\nMaxProtocol = {protocol}\n"
    )
    return str(path)


@contextlib.contextmanager
def server(
    executable: str, env: Mapping[str, str], argv_tail: list[str]
) -> Iterator[tuple[int, subprocess.Popen]]:
    """s_server on 127.0.0.1 and a free port, killed and reaped on the way out.
    Its stderr goes to an unnamed file, not a pipe that a long cell could fill."""
    last = ""
    for _ in range(START_TRIES):
        port = free_port()
        argv = [executable, "s_server", "-accept", f"127.0.0.1:{port}", *argv_tail]
        with tempfile.TemporaryFile() as errors:
            child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env=dict(env),
                preexec_fn=proc.die_with_parent,
                start_new_session=True,
                close_fds=True,
            )
            try:
                deadline = time.monotonic() + START_WAIT_S
                while child.poll() is None and not listening(port, child.pid):
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)
                if child.poll() is None and listening(port, child.pid):
                    yield port, child
                    return
            finally:
                proc.kill_group(child)
            errors.seek(0)
            last = errors.read()[-300:].decode("utf-8", "replace").strip()
    raise OperationError("failed", f"openssl s_server did not start listening: {last}")


def bench(rt, job, plan):  # (OpensslRuntime, Job, BatchPlan) -> Batch
    from bridge.runtimes.base import Batch

    sc = job.scenario
    assert isinstance(sc, TlsScenario)
    if rt.version < (1, 1, 1):
        raise OperationError("unsupported", "TLS 1.3 and s_server -groups need OpenSSL 1.1.1+")
    version = vocab.TLS_VERSIONS[calls.TLS_OPS[job.call.op]]
    cert, key, ca = job.inputs.cert, job.inputs.cert_key, job.inputs.ca
    suite = (
        ["-ciphersuites", version.suite] if version.name == "1.3" else ["-cipher", version.suite]
    )
    tail = [
        *("-cert", cert, "-key", key, version.flag, "-groups", sc.spec.openssl),
        *suite,
        *("-num_tickets", "0", "-quiet"),
    ]
    conf = client_conf(os.path.dirname(cert), client_groups(sc, version), version.protocol)
    env = {**rt.child_env(), "OPENSSL_CONF": conf}
    seconds = rt.settings.openssl_seconds
    with server(rt.executable, rt.child_env(), tail) as (port, _child):
        where = f"127.0.0.1:{port}"
        output = _negotiated(rt, env, where, ca, version, sc)
        samples, loops = [], []
        argv = [rt.executable, "s_time", "-connect", where, "-new", "-time", str(seconds)]
        argv += ["-CAfile", ca]
        for _ in range(plan.samples):
            t0 = time.perf_counter_ns()
            # 1.1.1's s_time exits with status 1 after a good run: its count says.
            done = _exec(argv, env, 3 * seconds + rt.settings.timeout_slack_s, "s_time", True)
            elapsed = time.perf_counter_ns() - t0
            m = CONNECTIONS.search(done.stdout.decode("utf-8", "replace"))
            if not m or int(m[1]) <= 0:
                tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
                raise OperationError(
                    "failed",
                    f"openssl s_time (status {done.returncode}) printed no connection count"
                    + (f": {tail}" if tail else ""),
                )
            samples.append(elapsed)
            loops.append(int(m[1]))
    api = f"openssl s_time -new {version.flag} / s_server (two processes, loopback)"
    return Batch(api=api, samples=samples, loops=loops, output=output)


def _negotiated(rt, env, where: str, ca: str, version, sc: TlsScenario) -> bytes:
    argv = [rt.executable, "s_client", "-connect", where, "-CAfile", ca]
    argv += ["-servername", "localhost", "-verify_return_error", version.flag]
    done = _exec(argv, env, 30 + rt.settings.timeout_slack_s, "s_client")
    text = done.stdout.decode("utf-8", "replace")
    m, key = NEGOTIATED.search(text), TEMP_KEY.search(text)
    if not m:
        raise OperationError("failed", "openssl s_client printed no negotiated cipher")
    if key is None or not any(name in key[1] for name in sc.spec.temp_key):
        found = key[1].strip() if key else "none"
        raise OperationError("failed", f"s_client negotiated group {found!r}, not {sc.group}")
    return f"{m[1]} {m[2]}".encode()


def _exec(
    argv: list[str], env, timeout: float, what: str, any_status: bool = False
) -> subprocess.CompletedProcess:
    try:
        done = proc.run(argv, env=env, timeout=timeout, input=b"")
    except subprocess.TimeoutExpired:
        raise OperationError(
            "failed", f"openssl {what} did not finish within {timeout:.0f} s"
        ) from None
    if done.returncode != 0 and not any_status:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        raise OperationError(
            "failed", f"openssl {what} exited with status {done.returncode}: {tail}"
        )
    return done
