"""The openssl runtime's TLS handshakes: `openssl s_time` against an
`openssl s_server` that listens on 127.0.0.1, on an ephemeral port, for the
cell only.

A sample is one s_time process: its connection count over the wall-clock
time it took (its own "real seconds" are whole seconds), and s_server's CPU
time over the same span (bridge.system.cpustat.process_cpu_ns). At a level
of --concurrency, N s_time processes run at once against the one s_server,
each for the same seconds: a run is a window, each process a worker. A full
handshake is `s_time -new`; a resumed one `s_time -reuse`, which offers the
session of its first connection on every other (it counts those only, and
each must say it resumed). s_time verifies the server's certificate
(-verify), as the other runtimes' clients do.

What was negotiated is read from `openssl s_client` handshakes against a
probe s_server of the same options that answers `GET /` with its status page
(-www), which names the client certificate it saw: one handshake, or for a
resumed call a full one that saves its session (-sess_out) and one that
offers it (-sess_in). The GET makes s_client read what the server sends
after the handshake, a TLS 1.3 ticket included.

The client side offers the one group and protocol version through an OpenSSL
configuration file (s_time has no -groups, and 1.1.1's no -tls1_3): in TLS
1.2 with P-256 after the group, which an ECDSA certificate's curve needs
there. In a scenario that resumes, s_time reads TLS 1.3 tickets only when it
reads a reply, so every connection of its cells fetches a 2-byte file
(-www /bridge) that the server serves from a private directory (-WWW).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import re
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from bridge.catalog import calls, negotiated, vocab
from bridge.catalog.inputs import TlsFiles
from bridge.catalog.scenario import TlsScenario
from bridge.errors import OperationError
from bridge.system import cpustat, proc

CONNECTIONS = re.compile(r"^(\d+) connections in \d+ real seconds", re.M)
SUMMARY = re.compile(r"^(New|Reused), (TLSv1\.\d), Cipher is (\S+)", re.M)
TEMP_KEY = re.compile(r"^Server Temp Key: (.*)$", re.M)
SIG_TYPE = re.compile(r"^Peer signature type: (\S+)", re.M)
SIG_DIGEST = re.compile(r"^Peer signing digest: (\S+)", re.M)
PEM = re.compile(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", re.S)
REPLY = "HTTP/1.0 200 ok"  # where the status page starts in s_client's output
LISTEN = "0A"
START_TRIES = 5
START_WAIT_S = 5.0
# What each connection fetches in a scenario that resumes (-www), and its body.
PAGE, PAGE_BODY = "bridge", b"ok"

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


def server_args(sc: TlsScenario, version: vocab.TlsVersion, files: TlsFiles) -> list[str]:
    """s_server's options for a cell, listening and output aside: the
    certificate, the one version, group and suite, the tickets (TLS 1.3: one
    per handshake in a scenario that resumes, else none; TLS 1.2: none, it
    resumes by session ID), and with mutual TLS a client certificate it
    requires and verifies."""
    suite = version.suite_for(sc.cert_spec)
    # In TLS 1.2 P-256 follows the group, as on the client: mutual TLS's
    # client certificate is on that curve, and the server verifies it.
    groups = client_groups(sc, version)
    out = ["-cert", files.cert, "-key", files.key, version.flag, "-groups", groups]
    out += ["-ciphersuites", suite] if version.name == "1.3" else ["-cipher", suite]
    if version.name == "1.3":
        out += ["-num_tickets", "1" if sc.resumption else "0"]
    else:
        out.append("-no_ticket")
    if sc.client_cert:
        out += ["-Verify", "1", "-CAfile", files.client_ca, "-verify_return_error"]
    return out


def client_cert_args(sc: TlsScenario, files: TlsFiles) -> list[str]:
    return ["-cert", files.client_cert, "-key", files.client_key] if sc.client_cert else []


@contextlib.contextmanager
def server(
    executable: str, env: Mapping[str, str], argv_tail: list[str], cwd: str | None = None
) -> Iterator[tuple[int, subprocess.Popen]]:
    """s_server on 127.0.0.1 and a free port, killed and reaped on the way out.
    Its stderr goes to an unnamed file, not a pipe that a long cell could fill."""
    last = ""
    for _ in range(START_TRIES):
        port = free_port()
        argv = [executable, "s_server", "-accept", f"127.0.0.1:{port}", *argv_tail]
        with tempfile.TemporaryFile() as errors:
            child = proc.popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env=dict(env),
                cwd=cwd,
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


@contextlib.contextmanager
def page_dir(sc: TlsScenario) -> Iterator[str | None]:
    """s_server -WWW's directory in a scenario that resumes: private, with the
    one file it serves (-WWW serves any file of its directory)."""
    if not sc.resumption:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="bridge-www-") as d:
        (Path(d) / PAGE).write_bytes(PAGE_BODY)
        yield d


def bench(rt, job, plan):  # (OpensslRuntime, Job, BatchPlan) -> Batch
    from bridge.runtimes.base import Batch

    sc, files = job.scenario, job.inputs.tls
    assert isinstance(sc, TlsScenario) and files is not None
    version, resumed, env = _client_side(rt, job)
    tail = server_args(sc, version, files)
    output = _negotiated(rt, env, (sc, version, files), resumed)
    seconds = rt.settings.openssl_seconds
    samples, loops, server_ns = [], [], []
    with (
        page_dir(sc) as www,
        server(
            rt.executable, rt.child_env(), [*tail, "-quiet", *(["-WWW"] if www else [])], www
        ) as (port, child),
    ):
        argv = _s_time(rt, job, port, www)
        for _ in range(plan.samples):
            c0, t0 = cpustat.process_cpu_ns(child.pid), time.perf_counter_ns()
            # 1.1.1's s_time exits with status 1 after a good run: its count says.
            done = _exec(argv, env, 3 * seconds + rt.settings.timeout_slack_s, "s_time", True)
            elapsed, c1 = time.perf_counter_ns() - t0, cpustat.process_cpu_ns(child.pid)
            samples.append(elapsed)
            loops.append(_connections(done, resumed))
            server_ns.append(c1 - c0 if min(c0, c1) >= 0 else cpustat.UNKNOWN)
    flag = "-reuse" if resumed else "-new"
    api = f"openssl s_time {flag} {version.flag} / s_server (two processes, loopback)"
    return Batch(api=api, samples=samples, loops=loops, output=output, server_cpu_ns=server_ns)


def bench_level(rt, job, plan):  # (OpensslRuntime, Job, LevelPlan) -> LevelRaw
    """N s_time processes at once against one s_server, each for the same
    seconds: one window per run, each process's (connections, ns) in it."""
    from bridge.report.levels import LevelRaw

    sc, files = job.scenario, job.inputs.tls
    assert isinstance(sc, TlsScenario) and files is not None
    version, resumed, env = _client_side(rt, job)
    tail = server_args(sc, version, files)
    output = _negotiated(rt, env, (sc, version, files), resumed)
    timeout = 3 * rt.settings.openssl_seconds + rt.settings.timeout_slack_s
    n, windows = plan.level, []

    def client(argv: list[str]) -> tuple[int, int]:
        t0 = time.perf_counter_ns()
        # 1.1.1's s_time exits with status 1 after a good run: its count says.
        done = _exec(argv, env, timeout, "s_time", True)
        elapsed = time.perf_counter_ns() - t0
        return _connections(done, resumed), elapsed

    with (
        page_dir(sc) as www,
        server(
            rt.executable, rt.child_env(), [*tail, "-quiet", *(["-WWW"] if www else [])], www
        ) as (port, _child),
        concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool,
    ):
        argv = _s_time(rt, job, port, www)
        for _ in range(plan.windows):
            runs = [pool.submit(client, argv) for _ in range(n)]
            windows.append(tuple(run.result() for run in runs))
    flag = "-reuse" if resumed else "-new"
    return LevelRaw(
        api=f"openssl s_time {flag} {version.flag} x{n} / one s_server (loopback)",
        batch=0,
        windows=tuple(windows),
        output=output,
        latency_note="openssl s_time counts connections for a fixed time; it times no single one",
    )


def _client_side(rt, job) -> tuple[vocab.TlsVersion, bool, dict[str, str]]:
    """The protocol version, whether the call resumes, and the clients'
    environment (their one group and version in a configuration file)."""
    sc, files = job.scenario, job.inputs.tls
    if rt.version < (1, 1, 1):
        raise OperationError("unsupported", "TLS 1.3 and s_server -groups need OpenSSL 1.1.1+")
    version = vocab.TLS_VERSIONS[calls.TLS_OPS[job.call.op]]
    resumed = job.call.op in calls.TLS_RESUME_OPS
    conf = client_conf(os.path.dirname(files.cert), client_groups(sc, version), version.protocol)
    return version, resumed, {**rt.child_env(), "OPENSSL_CONF": conf}


def _s_time(rt, job, port: int, www: str | None) -> list[str]:
    """One s_time client of the cell's call against the server on `port`."""
    sc, files = job.scenario, job.inputs.tls
    resumed = job.call.op in calls.TLS_RESUME_OPS
    argv = [rt.executable, "s_time", "-connect", f"127.0.0.1:{port}"]
    argv += ["-reuse" if resumed else "-new", "-time", str(rt.settings.openssl_seconds)]
    argv += ["-CAfile", files.ca, "-verify", "1", *client_cert_args(sc, files)]
    return argv + (["-www", f"/{PAGE}"] if www else [])


def _connections(done: subprocess.CompletedProcess, resumed: bool) -> int:
    """s_time's count; with -reuse, each counted connection must have resumed
    (it prints 'r' for one that did)."""
    text = done.stdout.decode("utf-8", "replace")
    m = CONNECTIONS.search(text)
    if not m or int(m[1]) <= 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        raise OperationError(
            "failed",
            f"openssl s_time (status {done.returncode}) printed no connection count"
            + (f": {tail}" if tail else ""),
        )
    count = int(m[1])
    if resumed:
        # One mark per connection after "starting": 'r' resumed, another
        # letter or '*' a full handshake.
        marks = "".join(text.partition("starting")[2].partition("\n\n")[0].split())
        if marks.count("r") < count or marks.strip("r"):
            reused = marks.count("r")
            raise OperationError(
                "failed", f"openssl s_time -reuse resumed {reused} of {len(marks)} connections"
            )
    return count


def _negotiated(rt, env, cell, resumed: bool) -> bytes:
    """What one handshake negotiated, from s_client against a probe s_server
    (-www: its reply names the client certificate it saw)."""
    sc, version, files = cell
    probe = [*server_args(sc, version, files), "-www", "-naccept", "2" if resumed else "1"]
    with (
        server(rt.executable, rt.child_env(), probe) as (port, _),
        tempfile.TemporaryDirectory(prefix="bridge-sess-") as d,
    ):
        argv = [rt.executable, "s_client", "-connect", f"127.0.0.1:{port}", "-CAfile", files.ca]
        argv += ["-servername", "localhost", "-verify_return_error", "-ign_eof", version.flag]
        argv += client_cert_args(sc, files)
        session = os.path.join(d, "session.pem")
        get = b"GET / HTTP/1.0\r\n\r\n"
        timeout = 30 + rt.settings.timeout_slack_s
        if resumed:
            _exec([*argv, "-sess_out", session], env, timeout, "s_client", input=get)
            argv += ["-sess_in", session]
        done = _exec(argv, env, timeout, "s_client", input=get)
    return negotiated.encode(read_s_client(done.stdout.decode("utf-8", "replace")))


def read_s_client(text: str) -> dict[str, str]:
    """The negotiated fields in s_client's output: its own summary before
    the reply, the client certificate from the reply (s_server -www)."""
    own, _, reply = text.partition(REPLY)
    m = SUMMARY.search(own)
    if not m:
        raise OperationError("failed", "openssl s_client printed no negotiated cipher")
    fields = {"protocol": m[2], "suite": m[3]}
    key, kind, digest = TEMP_KEY.search(own), SIG_TYPE.search(own), SIG_DIGEST.search(own)
    fields["group"] = _temp_key(key[1]) if key else negotiated.NONE
    if kind and digest:
        printed = (kind[1], digest[1].upper())
        fields["sigalg"] = vocab.TLS_SIGALG_PRINTED.get(printed, "-".join(printed))
    else:
        fields["sigalg"] = negotiated.NONE
    cert = PEM.search(own.partition("Server certificate")[2])
    fields["cert"] = negotiated.pem_fingerprint(cert[0]) if cert else negotiated.NONE
    fields["resumed"] = negotiated.YES if m[1] == "Reused" else negotiated.NO
    theirs = PEM.search(reply.partition("Client certificate")[2]) if reply else None
    fields["client_cert"] = negotiated.pem_fingerprint(theirs[0]) if theirs else negotiated.NONE
    return fields


def _temp_key(line: str) -> str:
    """A "Server Temp Key" line's group, IANA's name: "X25519, 253 bits",
    "ECDH, P-256, 256 bits" (3.x) or "ECDH, prime256v1, 256 bits" (1.1.1)."""
    for group in vocab.TLS_GROUPS.values():
        if any(name in line for name in group.temp_key):
            return group.erlang
    return line.split(",")[0].strip().lower() or negotiated.NONE


def _exec(
    argv: list[str], env, timeout: float, what: str, any_status: bool = False, input: bytes = b""
) -> subprocess.CompletedProcess:
    try:
        done = proc.run(argv, env=env, timeout=timeout, input=input)
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
