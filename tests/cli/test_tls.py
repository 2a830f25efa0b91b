"""The tls scenarios through the real CLI, on the real runtimes (Erlang ssl
with its server node, Python ssl, openssl s_server/s_time): every call gives
a handshake rate and the server's CPU per handshake, what it negotiated is
checked against what every side was given (certificates included), the
resumed calls give a saving with a CI from paired rounds, every listening
socket bridge's processes open is on 127.0.0.1 and gone when bridge exits,
no server node outlives it, and the private certificate directory is
removed. Then Debian bullseye's OTP 23 (which has no ssl application: the
Erlang rows are `unsupported` and say so) beside its OpenSSL 1.1.1w.
Timings are never asserted; the one test that judges an effect (resuming a
TLS 1.2 session saves the server CPU time) is serial."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.catalog import calls, negotiated, scenario, vocab
from tests import busy
from tests.conftest import ROOT, bridge_cmd, needs_erl, needs_openssl, wait_gone, worker_pids

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


def expected(report: dict, r: dict) -> dict[str, str]:
    """What a cell must report: its scenario's offer, and the fingerprints
    of the certificates the run made (in the cell's inputs)."""
    sc = scenario.parse(next(s for s in report["scenarios"] if s["name"] == r["scenario"]), "r")
    kinds = {rt["id"]: rt["kind"] for rt in report["runtimes"]}
    call = calls.CALLS[kinds[r["runtime"]], r["call_id"]]
    prints = (r["inputs"]["cert_sha256"], r["inputs"].get("client_cert_sha256", "none"))
    version = vocab.TLS_VERSIONS[calls.TLS_OPS[call.op]]
    return negotiated.expected(
        version, sc.spec, sc.cert_spec, call.op in calls.TLS_RESUME_OPS, prints
    )


def agrees(report: dict, r: dict) -> bool:
    return negotiated.agrees(bytes.fromhex(r["output_hex"]), expected(report, r))


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
            assert agrees(report, r), r["output_hex"]
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
        if r["runtime"].startswith("erlang@23"):
            assert r["status"] == "unsupported" and "ssl application" in r["reason"], r
        else:
            assert r["status"] == "ok" and agrees(report, r), r
    (check,) = report["interop"]
    assert check["match"], check


# Three rounds, and as many openssl runs: the savings get a CI.
ROUNDS3 = [
    *("--samples", "6", "--sample-ms", "2", "--rounds", "3", "--warmup-ms", "0"),
    *("--openssl-runs", "3", "--hw", "on"),
]
NEW = ("tls-rsa2048", "tls-mtls", "tls-resume")


@pytest.fixture(scope="module")
def new_run(tmp_path_factory):
    """One run of the new scenarios, watched: (the run, its report, the
    listeners bridge's processes opened, those left after, the scratch dir)."""
    tmp = tmp_path_factory.mktemp("tls")
    scratch = tmp / "tmp"
    scratch.mkdir()
    out = tmp / "r.json"
    before = worker_pids()
    done, ours, left = run_watched(
        ["run", *NEW, *ROUNDS3, "-o", str(out)], {"TMPDIR": str(scratch)}
    )
    assert done.returncode == 0, done.stderr
    assert not wait_gone(worker_pids() - before), "a worker or server node outlived bridge"
    return done, json.loads(out.read_text()), ours, left, scratch


def test_every_new_cell_is_checked_and_gives_the_servers_cpu(new_run):
    done, report, _, _, _ = new_run
    assert "Traceback" not in done.stderr
    kinds = {rt["id"]: rt["kind"] for rt in report["runtimes"]}
    results = [r for r in report["results"] if r["scenario"] in NEW]
    assert {(r["scenario"], kinds[r["runtime"]]) for r in results} == {
        (name, kind) for name in NEW for kind in ("erlang", "python", "openssl")
    }
    for r in results:
        assert r["status"] == "ok", r
        assert agrees(report, r), (r["runtime"], r["call_id"], bytes.fromhex(r["output_hex"]))
        # The server's CPU over every sample, beside its wall time.
        server = r["sample_server_cpu_ns"]
        assert len(server) == len(r["samples"]) and min(server) > 0, r["call_id"]
    for name in NEW:
        (check,) = [c for c in report["interop"] if c["scenario"] == name]
        assert check["match"] and not check["unchecked"], check
    # The runtimes agree with each other, not just with bridge: one server
    # certificate per scenario, and with mutual TLS one client certificate,
    # whatever the runtime.
    for name in NEW:
        outs = [
            negotiated.decode(bytes.fromhex(r["output_hex"]))
            for r in results
            if r["scenario"] == name
        ]
        assert len({o["cert"] for o in outs}) == 1 and len({o["client_cert"] for o in outs}) == 1
        mutual = name == "tls-mtls"
        assert (outs[0]["client_cert"] != "none") == mutual
    # Python and openssl read the group and the signature off the handshake;
    # the RSA scenario's server signed with RSA-PSS.
    rsa = [r for r in results if r["scenario"] == "tls-rsa2048" and kinds[r["runtime"]] != "erlang"]
    assert {negotiated.decode(bytes.fromhex(r["output_hex"]))["sigalg"] for r in rsa} == {
        "rsa_pss_rsae_sha256"
    }


def test_the_tls_block_gives_rates_server_cpu_and_savings_with_a_ci(new_run):
    done, report, _, _, _ = new_run
    block = report["tls"]
    cells = {(c["scenario"], c["runtime"], c["call_id"]): c for c in block["cells"]}
    for r in report["results"]:
        c = cells[(r["scenario"], r["runtime"], r["call_id"])]
        assert c["handshakes_per_s"] > 0 and c["server_cpu_ns"] > 0
        assert c["server_cpu_ci95"][0] <= c["server_cpu_ns"] <= c["server_cpu_ci95"][1]
        assert c["negotiated"]["cert"] == r["inputs"]["cert_sha256"]
        assert c["resumed"] == r["call_id"].startswith("resume-")
        assert c["key"] == ("rsa2048" if r["scenario"] == "tls-rsa2048" else "ecdsa-p256")
    # A saving per runtime and version of tls-resume, from its 3 paired rounds.
    savings = {(s["runtime"].split("@")[0], s["version"]): s for s in block["savings"]}
    assert set(savings) == {(k, v) for k in ("erlang", "python", "openssl") for v in ("1.3", "1.2")}
    for s in savings.values():
        assert s["scenario"] == "tls-resume" and s["rounds"] == 3, s
        assert s["ci95"] is not None and s["ci95"][0] <= s["ratio"] <= s["ci95"][1], s
        assert s["server_ci95"] is not None, s
    # The table view says each figure, among the scenario's findings.
    said = " ".join(done.stdout.split())
    assert "(handshake-1.2 over resume-1.2)" in said
    assert "one server core takes at most" in said


def test_new_scenarios_listen_on_loopback_only_while_they_run(new_run):
    _, _, ours, left, scratch = new_run
    # Erlang's server nodes and openssl s_server (the probe's and the timed
    # one's) were seen; each on 127.0.0.1 only, and none is left.
    assert ours, "no listener of bridge's processes was seen"
    assert {addr.split(":")[0] for addr in ours.values()} <= LOOPBACK, ours
    assert not left
    # The certificates' and the -WWW page's private directories went with the run.
    assert not list(scratch.iterdir())


# Windows that hold a few handshakes each, after a warm-up: with --sample-ms 2
# and no warm-up, each window held one Erlang handshake (10-20 ms of wall
# time beside two CPU hogs), so each round's server CPU carried whatever of
# the handshake before it spilled into its window, and the first round the
# server's first resumptions; its rounds then read 1.2-1.9x (CI low ends
# 1.21, 1.45, 1.92 in three runs at a load of 7-10). With these, 1.54-1.92
# in six runs at a load of 7-15.
RESUME_ROUNDS = [
    *("--samples", "6", "--sample-ms", "20", "--rounds", "3", "--warmup-ms", "20"),
    *("--openssl-runs", "3", "--hw", "on"),
]


@pytest.mark.serial  # judges a measured effect: the server's CPU time
def test_resuming_a_tls_12_session_saves_the_server_its_key_exchange_and_signature(tmp_path):
    """A resumed TLS 1.2 handshake has no key exchange and no signature: every
    server's CPU per handshake falls by more than a third. CPU time, paired
    by round: a busy machine stretches both sides' wall time, not this. The
    CI of three rounds is about their range, so its low end is held to a
    saving the rounds agree on (clear of SAVING_CI_LOW), not to the median's
    1.5x: on the quiet machine one Erlang round read 1.31x beside a median
    of 1.88x (CI 1.31-2.12; openssl 2.58-2.84, Python 2.07-4.67). A busy
    machine widens it further, so the CI is asserted where the run was
    quiet."""
    out = tmp_path / "r.json"
    done = bridge_cmd("run", "tls-resume", *RESUME_ROUNDS, "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    twelve = [s for s in report["tls"]["savings"] if s["version"] == "1.2"]
    assert len(twelve) == 3 and all(s["server_ratio"] > 1.5 for s in twelve), twelve
    with busy.unless_busy(out, needs=f"a CI of the server's saving clear of {SAVING_CI_LOW}x"):
        assert all(s["server_ci95"][0] > SAVING_CI_LOW for s in twelve), twelve


# The low end of a TLS 1.2 resumption's CI of the server's CPU saving, over
# three rounds: every round saved a fifth or more (a full handshake's key
# exchange and signature are most of the server's work; a resumed one has
# neither).
SAVING_CI_LOW = 1.2


RESUME_MTLS = """
name = "tls-resume-mtls"
description = "Resumed mutual TLS"
kind = "tls"
group = "x25519"
client_cert = true
sizes = [1]

[calls]
erlang = ["resume-1.3", "resume-1.2"]
python = ["resume-1.3", "resume-1.2"]
"""


def test_a_runtime_that_negotiated_otherwise_is_named_like_an_output_mismatch(tmp_path):
    """OTP 25's ssl server has no client certificate after it resumed a TLS
    1.3 session from a stateless ticket, where OpenSSL keeps the session's:
    the check names Erlang's row, as it names a MAC that differs, and the
    run fails; TLS 1.2 and Python pass."""
    path = tmp_path / "tls-resume-mtls.toml"
    path.write_text(RESUME_MTLS)
    out = tmp_path / "r.json"
    done = bridge_cmd("run", str(path), "--runtimes", "erlang,python", *SHORT, "-o", str(out))
    report = json.loads(out.read_text())
    (check,) = report["interop"]
    if not report["runtimes"][0]["id"].startswith("erlang@25."):
        pytest.skip("the finding is OTP 25's; this OTP may keep the certificate")
    assert not check["match"]
    assert [k.split(" ")[1] for k in check["mismatched"]] == ["resume-1.3"]
    assert check["mismatched"][0].startswith("erlang@")
    assert done.returncode != 0 and "output differs" in done.stderr
    erl = next(
        r for r in report["results"] if r["call_id"] == "resume-1.3" and "erlang" in r["runtime"]
    )
    assert negotiated.decode(bytes.fromhex(erl["output_hex"]))["client_cert"] == "none"
