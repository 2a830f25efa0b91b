"""Running nodes over Erlang distribution, for real: target nodes started here
on loopback (`erl -sname ...`, OTP 25 and the unpacked OTP 23), probed with
`bridge env --node` and measured with `bridge run --node --measure`.

The targets register with an epmd of the test's own, on a free port
(ERL_EPMD_PORT), so no epmd outlives the tests and none of another test
session is touched; the targets' cookie is in a 0400 file in a private HOME.
Each target answers "check" on its stdin with the bridge modules it has
loaded, its hidden connections and whether crypto is loaded, so the tests can
see the node's side without starting a node of their own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT, bridge_cmd, needs_erl, read_until, wait_gone, worker_pids

pytestmark = needs_erl

COOKIE = "bridge-test-" + uuid.uuid4().hex
FAST = ["--samples", "3", "--sample-ms", "2", "--warmup-ms", "5", "--rounds", "1"]
# What a target prints for "check": the bridge modules it has loaded, the
# hidden nodes connected to it, whether crypto is loaded.
CHECK_LOOP = r"""
io:format("ready~n"),
Join = fun(L) -> string:join([atom_to_list(X) || X <- L], ",") end,
(fun Loop() ->
    case io:get_line("") of
        eof -> halt();
        _ ->
            Mods = [M || {M, _} <- code:all_loaded(), lists:prefix("bridge", atom_to_list(M))],
            io:format("mods=~s|hidden=~s|crypto=~w~n",
                      [Join(Mods), Join(nodes(hidden)), erlang:module_loaded(crypto)]),
            Loop()
    end
end)()
"""


@dataclass
class Target:
    name: str  # NAME@HOST
    proc: subprocess.Popen
    said: list[str] = field(default_factory=list)  # the node's other output

    def check(self) -> dict[str, object]:
        self.proc.stdin.write("check\n")
        self.proc.stdin.flush()
        # The node's logger writes to the same stdout (-noshell): skip its reports.
        line = self.proc.stdout.readline()
        while line and not line.startswith("mods="):
            self.said.append(line)
            line = self.proc.stdout.readline()
        fields = dict(part.split("=", 1) for part in line.strip().split("|"))
        return {
            "mods": [m for m in fields["mods"].split(",") if m],
            "hidden": [n for n in fields["hidden"].split(",") if n],
            "crypto": fields["crypto"] == "true",
        }

    def wait_for(self, what, timeout: float = 120.0) -> dict[str, object]:
        """The target's state once `what` holds of it. The timeout bounds a
        hang, not a speed: beside two CPU hogs (a load of 14-17) bridge took
        over 20 s to start, compile its agent with OTP 23's erlc and load it."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.check()
            if what(state) or time.monotonic() > deadline:
                return state
            time.sleep(0.1)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A HOME with the targets' cookie, as erl keeps it."""
    home = tmp_path_factory.mktemp("nodes-home")
    cookie = home / ".erlang.cookie"
    cookie.write_text(COOKIE)
    cookie.chmod(0o400)
    return home


@pytest.fixture(scope="module")
def epmd_port():
    port = _free_port()
    proc = subprocess.Popen(
        ["epmd", "-port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("the test's epmd did not start")
            time.sleep(0.05)
    yield port
    proc.kill()
    proc.wait()


@pytest.fixture(scope="module")
def nodes(home, epmd_port):
    """start(prefix, erl="erl", crypto=True) -> a running Target; all of them
    are killed at the end of the module."""
    started: list[Target] = []
    host = socket.gethostname().split(".")[0]

    def start(prefix: str, erl: str = "erl", crypto: bool = True) -> Target:
        name = f"{prefix}_{uuid.uuid4().hex[:6]}"
        preload = "code:ensure_loaded(crypto), crypto:info_lib()," if crypto else ""
        proc = subprocess.Popen(
            [
                erl,
                "-sname",
                name,
                "-noshell",
                "-start_epmd",
                "false",
                "-eval",
                preload + CHECK_LOOP,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "HOME": str(home), "ERL_EPMD_PORT": str(epmd_port)},
            start_new_session=True,
        )
        target = Target(f"{name}@{host}", proc)
        started.append(target)
        assert proc.stdout.readline().strip() == "ready", f"{name} did not start"
        return target

    yield start
    for t in started:
        t.kill()


@pytest.fixture(scope="module")
def otp25(nodes):
    return nodes("t25")


@pytest.fixture(scope="module")
def otp23(nodes, bullseye):
    return nodes("t23", erl=str(bullseye.erl), crypto=False)


@pytest.fixture
def env_for(home, epmd_port, bullseye, tmp_path):
    """bridge's environment: the targets' epmd, the unpacked OTP 23 where
    discovery finds it (bridge compiles its agent for an OTP 23 node with
    OTP 23's erlc), and an empty HOME of its own, where erl would create a
    cookie file if bridge's node ever read one."""
    bridge_home = tmp_path / "bridge-home"
    bridge_home.mkdir()
    return {
        "ERL_EPMD_PORT": str(epmd_port),
        "BRIDGE_OTP_PATH": str(bullseye.prefix),
        "HOME": str(bridge_home),
    }


def cookie_args(home: Path) -> list[str]:
    return ["--cookie-file", str(home / ".erlang.cookie")]


def _tree(root: int) -> set[int]:
    """root and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        out.add(pid)
        todo += children.get(pid, [])
    return out


def _socket_inodes(pid: int) -> set[str]:
    found = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                found.add(link[len("socket:[") : -1])
    except OSError:
        pass
    return found


def _listening_inodes() -> set[str]:
    found = set()
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/net/{table}")
        if path.exists():
            for line in path.read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A":  # LISTEN
                    found.add(fields[9])
    return found


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


# -- the probe ---------------------------------------------------------------------


def test_probe_reads_without_loading_anything(otp25, otp23, home, env_for, no_leftovers):
    done = bridge_cmd(
        "env",
        "--node",
        otp25.name,
        "--node",
        otp23.name,
        *cookie_args(home),
        "--format",
        "json",
        env=env_for,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    nodes = {n["executable"]: n for n in json.loads(done.stdout)["nodes"]}
    n25, n23 = nodes[otp25.name], nodes[otp23.name]

    assert n25["id"] == f"erlang@25.2.3@{otp25.name}"
    assert n25["crypto_lib"].startswith("OpenSSL 3.")
    assert any(p.endswith("libcrypto.so.3") for p in n25["libcrypto_loaded"])
    assert n25["env"] == {"OPENSSL_ia32cap": None, "OPENSSL_armcap": None}
    assert n25["node"]["os_pid"] == str(otp25.proc.pid)
    assert "sha_ni" in n25["node"]["cpu"]["flags"]
    assert "no mask in the node's environment" in n25["node"]["provenance"]
    assert "the SHA-1/SHA-256 paths use SHA-NI" in n25["node"]["provenance"]
    assert "cannot run on a live node" in n25["ab"]
    assert "The same libcrypto" in n25["ab"] and "--hw both" in n25["ab"]

    # OTP 23 had not loaded crypto: the probe says so, and leaves it unloaded.
    assert n23["otp_version"] == "23.2.6"
    assert n23["node"]["provenance"].startswith("crypto is not loaded on the node")
    assert n23["libcrypto_loaded"] == []
    for target in (otp25, otp23):
        state = target.wait_for(lambda s: not s["hidden"])
        assert state["mods"] == [] and state["hidden"] == []
    assert otp23.check()["crypto"] is False


def _register_old_node(port: int, name: str) -> socket.socket:
    """Register NAME with the test's epmd as an OTP 22 node would: highest
    distribution version 5 (ALIVE2_REQ, erts/doc/src/erl_dist_protocol.xml).
    The name stays registered while the returned socket is open."""
    body = struct.pack(">BHBBHHH", 120, 9, 77, 0, 5, 5, len(name)) + name.encode()
    body += struct.pack(">H", 0)
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.sendall(struct.pack(">H", len(body)) + body)
    reply = conn.recv(16)
    assert reply[:2] in (b"y\x00", b"v\x00"), reply  # ALIVE2_RESP / ALIVE2_X_RESP, result 0
    return conn


def test_probe_refusals_are_one_line(otp25, home, env_for, epmd_port, tmp_path):
    wrong = tmp_path / "cookie"
    wrong.write_text("not-the-cookie")
    wrong.chmod(0o600)
    host = otp25.name.split("@")[1]
    done = bridge_cmd("env", "--node", otp25.name, "--cookie-file", str(wrong), env=env_for)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "refused bridge's handshake" in done.stderr and str(wrong) in done.stderr
    # One line per node that cannot be probed, and no traceback.
    old = _register_old_node(epmd_port, "ancient")
    try:
        nodes = [f"nobody@{host}", f"ancient@{host}", "x@no-such-host.invalid"]
        args = [a for n in nodes for a in ("--node", n)]
        done = bridge_cmd("env", *args, *cookie_args(home), env=env_for, timeout=90)
    finally:
        old.close()
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 3, done.stderr
    assert "knows no node named nobody" in lines[0]
    assert "distribution version 5: OTP 22 or older" in lines[1]
    assert "does not resolve" in lines[2]
    # No epmd at all on that port: the host's epmd does not answer.
    done = bridge_cmd("env", "--node", f"x@{host}", *cookie_args(home), env={"ERL_EPMD_PORT": "1"})
    assert done.returncode == 1 and "no epmd answers" in done.stderr
    for said in (done.stderr, *lines):
        assert COOKIE not in said


def test_bad_node_options_exit_2_in_one_line(tmp_path):
    # The cases are in tests/unit/nodes/test_distribution.py; here, the exit status
    # and the single line on stderr, through the real CLI.
    # ~/.erlang.cookie readable by others: refused, as erl refuses it (a file
    # named with --cookie-file is only a warning: see the test below).
    loose = tmp_path / ".erlang.cookie"
    loose.write_text("c")
    loose.chmod(0o644)
    for args, said in (
        (["run", "hmac-sha1", "--node", "a@b"], "add --measure"),
        (["env", "--node", "a@b"], "chmod 400"),
        (["env", "--cookie", "c"], "goes with --node"),
        (["env", "--node", "a", "--cookie", "c", "--cookie-file", str(loose)], "give one"),
    ):
        done = bridge_cmd(*args, timeout=60, env={"HOME": str(tmp_path)})
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr


def test_bare_names_release_cookie_and_a_release_s_cookie_file(otp25, home, env_for, tmp_path):
    """`erl -sname NAME`'s node as --node NAME; its cookie from RELEASE_COOKIE
    (bridge's HOME has none), then from a 0644 file named with --cookie-file,
    as `mix release` leaves releases/COOKIE: a warning, and it connects."""
    bare = otp25.name.split("@")[0]
    done = bridge_cmd(
        "env", "--node", bare, "--format", "json", env={**env_for, "RELEASE_COOKIE": COOKIE}
    )
    assert done.returncode == 0, done.stderr
    (node,) = json.loads(done.stdout)["nodes"]
    assert node["executable"] == otp25.name  # NAME@<short host>, as erl -sname registers it
    assert COOKIE not in done.stdout + done.stderr

    released = tmp_path / "releases" / "COOKIE"
    released.parent.mkdir()
    released.write_text(COOKIE)
    released.chmod(0o644)
    done = bridge_cmd("env", "--node", bare, "--cookie-file", str(released), env=env_for)
    assert done.returncode == 0, done.stderr
    (warning,) = done.stderr.splitlines()
    assert warning.startswith(f"bridge: warning: cookie file {released}: readable by others")
    assert "chmod 400" in warning and COOKIE not in done.stdout + done.stderr
    assert otp25.wait_for(lambda s: not s["hidden"])["hidden"] == []


# -- measuring ---------------------------------------------------------------------


def test_measure_two_releases_side_by_side(otp25, otp23, home, env_for, tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bridge",
            "run",
            "hmac-sha1",
            *FAST,
            "--rounds",
            "3",
            "--node",
            otp25.name,
            "--node",
            otp23.name,
            "--measure",
            *cookie_args(home),
            "-o",
            str(out),
            "--format",
            "text",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env_for},
    )
    try:
        # While it runs: bridge's side has connections out and nothing that
        # listens, starts no epmd, and shows the cookie to no one.
        state = otp23.wait_for(lambda s: s["mods"] or proc.poll() is not None)
        if not state["mods"] and proc.poll() is not None:
            _, stderr = proc.communicate(timeout=60)  # what bridge said of it
            pytest.fail(f"bridge ended before its agent was seen on OTP 23: {stderr[-2000:]}")
        assert state["mods"], "bridge's agent never arrived on the OTP 23 node"
        tree = _tree(proc.pid)
        relay = [p for p in tree if b"-dist_listen\x00false" in _read(f"/proc/{p}/cmdline")]
        assert relay, "bridge's own node is not running"
        inodes = set().union(*(_socket_inodes(p) for p in tree))
        assert inodes, "bridge's node has no connection to the nodes"
        assert not inodes & _listening_inodes(), "something on bridge's side listens"
        for pid in tree:
            comm = _read(f"/proc/{pid}/comm").strip()
            assert comm != b"epmd", "bridge started an epmd"
            for what in ("cmdline", "environ"):
                assert COOKIE.encode() not in _read(f"/proc/{pid}/{what}"), f"cookie in {what}"
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    report = json.loads(out.read_text())
    ids = [rt["id"] for rt in report["runtimes"]]
    assert ids == [f"erlang@25.2.3@{otp25.name}", f"erlang@23.2.6@{otp23.name}"]
    assert all(c["match"] for c in report["interop"])
    assert {r["runtime"] for r in report["results"] if r["status"] == "ok"} == set(ids)
    agents = [rt["node"]["agent"] for rt in report["runtimes"]]
    assert [a["compiled_by"] for a in agents] == ["OTP 25.2.3", "OTP 23.2.6"]
    assert all(a["max_load"] == 0.25 for a in agents)
    assert all(m.startswith("bridge_node_") for a in agents for m in a["modules"])
    # OTP 23 had not loaded crypto; bridge's agent did, to measure, and says so.
    assert "OpenSSL 1.1.1w" in report["runtimes"][1]["crypto_lib"]
    assert [rt["node"]["crypto_loaded_before"] for rt in report["runtimes"]] == [True, False]
    assert COOKIE not in out.read_text() + stdout + stderr
    assert not list(Path(env_for["HOME"]).iterdir()), "bridge's node wrote into HOME"
    assert "--node" in report["reproduce"] and "--measure" in report["reproduce"]
    # Afterwards: bridge's modules are gone from both nodes, and so is bridge.
    for target in (otp25, otp23):
        state = target.wait_for(lambda s: not s["mods"] and not s["hidden"])
        assert state["mods"] == [] and state["hidden"] == []
    # The two nodes line up in compare by host, whatever their release.
    done = bridge_cmd("compare", str(out), str(out), "--format", "json")
    rows = json.loads(done.stdout)["comparisons"][0]["rows"]
    assert {(r["runtime_a"], r["runtime_b"]) for r in rows} == {(i, i) for i in ids}


def _measuring(args, env, out):
    return subprocess.Popen(
        [sys.executable, "-m", "bridge", "run", "hmac-sha1", *args, "-o", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


# Long enough to act on mid-run: 16 samples of 5 ms at 5% load take about
# 1.6 s per node, in 6 rounds.
SLOW = [
    "--samples",
    "16",
    "--sample-ms",
    "5",
    "--warmup-ms",
    "5",
    "--rounds",
    "6",
    "--max-load",
    "0.05",
]


@pytest.mark.serial  # the kill is timed against the batches
def test_a_node_that_dies_loses_only_its_cells(nodes, otp25, home, env_for, tmp_path, no_leftovers):
    doomed = nodes("doomed")
    out = tmp_path / "r.json"
    proc = _measuring(
        [*SLOW, "--node", otp25.name, "--node", doomed.name, "--measure", *cookie_args(home)],
        env_for,
        out,
    )
    try:
        assert doomed.wait_for(lambda s: s["mods"])["mods"]
        time.sleep(0.7)  # let a batch finish
        doomed.kill()
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    report = json.loads(out.read_text())
    errors = [e for e in report["errors"] if doomed.name in e["runtime"]]
    assert errors and all(otp25.name not in e["runtime"] for e in report["errors"])
    survivor = [r for r in report["results"] if otp25.name in r["runtime"]]
    assert survivor and len(survivor[0]["samples"]) == 16, "the other node lost samples"
    assert otp25.wait_for(lambda s: not s["mods"])["mods"] == []


# Not serial: the signal follows the run's own progress line, not a delay.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_the_agent_is_purged_on_interrupt_and_on_sigkill(sig, otp25, home, env_for, tmp_path):
    out = tmp_path / "r.json"
    before = worker_pids()
    proc = _measuring([*SLOW, "--node", otp25.name, "--measure", *cookie_args(home)], env_for, out)
    try:
        # Mid-run: its first round measured on the node (by the agent), five
        # to come, however slowly a busy machine let it get there.
        head = read_until(proc, "round 1/6 of hmac-sha1 done")
        # bridge is stopped while the test asks the node: beside two CPU
        # hogs the asking outlasted the rest of the run.
        proc.send_signal(signal.SIGSTOP)
        try:
            loaded = otp25.check()["mods"]
        finally:
            proc.send_signal(sig)  # SIGINT: delivered as it continues
            proc.send_signal(signal.SIGCONT)
        _, rest = proc.communicate(timeout=60)
        stderr = head + rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert loaded, "bridge's agent was not on the node mid-run"
    if sig == signal.SIGINT:
        # bridge purges the agent itself, and keeps what it measured.
        assert proc.returncode == 130, stderr
        assert any(e["kind"] == "interrupted" for e in json.loads(out.read_text())["errors"])
    # SIGKILL: bridge's node dies with it; the agent's guard on the node sees
    # it go down and purges the agent.
    state = otp25.wait_for(lambda s: not s["mods"] and not s["hidden"])
    assert state["mods"] == [] and state["hidden"] == []
    assert not wait_gone(worker_pids() - before)
