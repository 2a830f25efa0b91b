"""The tls-handshake scenarios through the real CLI, on the real runtimes:
every call gives a checked handshake rate, every listening socket bridge's
processes open is on 127.0.0.1 and gone when bridge exits, and the private
certificate directory is removed. Then Debian bullseye's OTP 23 (which has
no ssl application: the Erlang rows are `unsupported` and say so) beside
its OpenSSL 1.1.1w. Timings are never asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bridge.catalog import vocab
from tests.conftest import ROOT, bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]

SHORT = [
    *("--samples", "6", "--sample-ms", "2", "--rounds", "2", "--warmup-ms", "0"),
    *("--openssl-runs", "1", "--hw", "on"),
]
LISTEN = "0A"
LOOPBACK = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1


def listeners() -> dict[str, str]:
    """{socket inode: local address} of every listening TCP socket."""
    out = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == LISTEN:
                out[f[9]] = f[1]
    return out


def tree(root: int) -> set[int]:
    """root and its descendants."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, grew = {root}, True
    while grew:
        more = {p for p, pp in parent.items() if pp in found} - found
        found |= more
        grew = bool(more)
    return found


def socket_inodes(pids: set[int]) -> set[str]:
    out = set()
    for pid in pids:
        fd_dir = Path(f"/proc/{pid}/fd")
        try:
            links = [os.readlink(fd_dir / fd) for fd in os.listdir(fd_dir)]
        except OSError:
            continue
        out |= {link[8:-1] for link in links if link.startswith("socket:[")}
    return out


def run_watched(args: list[str], env: dict) -> tuple[subprocess.CompletedProcess, dict, set]:
    """Run bridge, watching the listening sockets its processes own; returns
    (the run, {inode: address} of theirs, the inodes still listening after)."""
    before = set(listeners())
    child = subprocess.Popen(
        [sys.executable, "-m", "bridge", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
        cwd=ROOT,
    )
    ours: dict[str, str] = {}
    seen_other: set[str] = set()
    deadline = time.monotonic() + 240
    while child.poll() is None and time.monotonic() < deadline:
        new = {i: a for i, a in listeners().items() if i not in before and i not in ours}
        new = {i: a for i, a in new.items() if i not in seen_other}
        if new:
            owned = socket_inodes(tree(child.pid))
            ours |= {i: a for i, a in new.items() if i in owned}
            seen_other |= set(new) - owned
        time.sleep(0.002)
    out, err = child.communicate(timeout=30)
    left = set(ours) & set(listeners())
    return subprocess.CompletedProcess(child.args, child.returncode, out, err), ours, left


def negotiated(r: dict, version: str) -> bool:
    """The negotiated protocol and suite, the same in every runtime."""
    spec = vocab.TLS_VERSIONS[version]
    return bytes.fromhex(r["output_hex"]) == f"{spec.protocol} {spec.suite}".encode()


def test_handshakes_in_three_runtimes_on_loopback_only(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "r.json"
    args = ["run", "tls-handshake", *SHORT, "-o", str(out)]
    done, ours, left = run_watched(args, {"TMPDIR": str(tmp)})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(out.read_text())
    kinds = {rt["id"]: rt["kind"] for rt in report["runtimes"]}
    cells = {(r["scenario"], kinds[r["runtime"]], r["call_id"]): r for r in report["results"]}
    for kind in ("erlang", "python", "openssl"):
        for v in ("1.3", "1.2"):
            r = cells[("tls-handshake", kind, f"handshake-{v}")]
            assert r["status"] == "ok", r
            assert r["size"] == 1
            assert negotiated(r, v)
    (check,) = [c for c in report["interop"] if c["scenario"] == "tls-handshake"]
    assert check["match"] and not check["unchecked"], check
    # Erlang's listener and openssl s_server's were seen; each on 127.0.0.1
    # only, and none is left.
    assert ours, "no listener of bridge's processes was seen"
    assert {addr.split(":")[0] for addr in ours.values()} <= LOOPBACK, ours
    assert not left
    # The certificates' private directory went with the run.
    assert not list(tmp.glob("bridge-files-*"))
    # 1.3 and 1.2 rows are compared apart (their own role each).
    table = done.stdout.split("== tls-handshake:")[1]
    assert "TLS 1.3" in table and "TLS 1.2" in table


def test_an_otp_without_ssl_says_so_beside_openssl_111(tmp_path, bullseye):
    # The P-256 group here, on OpenSSL 1.1.1w (s_client's report of the group
    # is checked by the openssl rows).
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run", "tls-handshake-p256", "--erl", str(bullseye.erl),
        "--openssl", str(bullseye.openssl), "--runtimes", "erlang,openssl", *SHORT, "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    ids = {rt["id"] for rt in report["runtimes"]}
    assert "openssl@1.1.1w" in ids, ids
    assert any(i.startswith("erlang@23") for i in ids), ids
    for r in report["results"]:
        v = r["call_id"].removeprefix("handshake-")
        if r["runtime"].startswith("erlang@23"):
            assert r["status"] == "unsupported" and "ssl application" in r["reason"], r
        else:
            assert r["status"] == "ok" and negotiated(r, v), r
    (check,) = report["interop"]
    assert check["match"], check
