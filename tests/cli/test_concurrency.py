"""--concurrency end to end, on the real runtimes with short settings: every
runtime gives throughput by level with scaling, latency percentiles and (Erlang)
the probe, in every format and in the JSON; the slowest of N and the CPUs each
level's work wanted (Erlang and Python); a real lock convoy called serialised
and real crypto not; TLS handshakes per second at levels 1, 2 and 4 with level
1 beside the per-call median; --schedulers; a worker process that dies at a
level costs that level only; Ctrl-C stops all N; and the `speed -multi`
parser against the live 3.x and 1.1.1 binaries.

Timings are asserted only where the effect is large: two Python worker
processes hashing 16 KiB do more than 1.15x the work of one (on an idle 2-core
machine about 1.9x; on this shared one, 1.09x to 2.17x was measured, and bare
processes outside bridge did 1.35-1.40x at a load average of 2.8; with Linux
autogroup on a busy machine each process has a share of its own, see docs/guide/concurrency.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bridge.speed import parse
from tests import busy
from tests.conftest import (
    ROOT,
    bridge_cmd,
    needs_erl,
    needs_openssl,
    read_until,
    wait_gone,
    worker_pids,
)

pytestmark = [needs_erl, needs_openssl]

SHORT = ["--samples", "3", "--sample-ms", "2", "--warmup-ms", "5", "--rounds", "1"]
SHORT += ["--openssl-runs", "1", "--hw", "on"]


def cells_of(report: dict) -> dict[tuple, dict]:
    return {
        (c["runtime"].split("@")[0], c["call_id"], c["mode"], c["size"], c["level"]): c
        for c in report["concurrency"]["cells"]
    }


def test_sha256_at_16k_every_runtime_every_format(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "sha256",
        "--concurrency",
        "1,2",
        "--sizes",
        "16384",
        *SHORT,
        "-o",
        str(out),
        "--format",
        "text",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["schema"] == "bridge.report/1"
    cells = cells_of(report)
    wanted = {
        ("erlang", "hash", "processes"),
        ("python", "hashlib", "threads"),
        ("python", "hashlib", "processes"),
        ("openssl", "speed-evp", "multi"),
        ("openssl", "speed", "multi"),
    }
    assert {k[:3] for k in cells} == wanted
    for key, c in cells.items():
        assert c["status"] == "ok", (key, c.get("reason"))
        assert c["output_ok"] is True and c["ops_per_s"]["median"] > 0
        assert len(c["windows"]) >= 1 and all(len(w) == c["level"] for w in c["windows"])
        if key[0] == "openssl":
            assert c["latency"] is None and c["latency_note"]
        else:
            assert c["latency"]["n"] > 0 and c["latency"]["p50_ns"] <= c["latency"]["max_ns"]
        if key[0] == "erlang":
            assert c["probe"]["n"] > 0 and c["schedulers_online"] >= 1
            assert c["scheduler_utilisation"]["normal"] > 0
            assert len(c["probe_active"]) == len(c["probe_ns"])
        if key[0] == "openssl":  # speed -multi counts for a time: no race, no CPU figure
            assert "slowest" not in c and "cpu_use" not in c
        else:  # one race a round (SHORT: one round), finished by each of the N
            assert c["slowest"]["races"] == 2 and c["slowest"]["calls"] >= 1
            assert all(len(race) == c["level"] for race in c["race_ns"])
            assert c["cpu_use"]["cpus"] > 0 and c["span_ns"] > 0
    scaling = {
        (s["runtime"].split("@")[0], s["call_id"], s["mode"], s["level"])
        for s in report["concurrency"]["scaling"]
    }
    assert {(*k, 2) for k in wanted} <= scaling
    machine = report["concurrency"]["machine"]
    assert machine["logical_cpus"] >= 1 and machine["loadavg_start"] is not None
    assert max(map(len, done.stdout.splitlines())) <= 72
    shown = {"text": done.stdout}
    for fmt in ("table", "markdown"):
        again = bridge_cmd("report", str(out), "--format", fmt)
        assert again.returncode == 0, again.stderr
        shown[fmt] = again.stdout
    # Every format: the scaling answer with a line per call and mode, the
    # level table with its scaling column, and the slowest of N.
    for fmt, said in shown.items():
        assert "Scaling: throughput of N workers at once over one (1, 2):" in said, fmt
        for line in (
            "Erlang crypto:hash, 2 processes: ",
            "Python hashlib, 2 threads: ",
            "Python hashlib, 2 processes: ",
            "openssl speed-evp, 2 processes: ",
            "openssl speed, 2 processes: ",
        ):
            assert line in said, (fmt, line)
        assert "scaling (95% CI)" in said and "Slowest of N" in said, fmt
        assert "erlang procs: N Erlang processes in one node" in said, fmt


@pytest.mark.serial  # a scaling measured with the machine to itself
@pytest.mark.quiet(needs="a throughput of two processes against one")
def test_two_python_processes_hash_16k_faster_than_one(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    # 32 windows of 50 ms per level in 8 rounds: the other work on a shared
    # machine comes in bursts, and interleaving spreads them over both levels.
    args = ["--samples", "32", "--sample-ms", "2", "--warmup-ms", "20", "--rounds", "8"]
    done = bridge_cmd(
        "run",
        "sha256",
        "--concurrency",
        "2",
        "--sizes",
        "16384",
        "--runtimes",
        "python",
        "--hw",
        "on",
        *args,
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    (two,) = [
        s for s in report["concurrency"]["scaling"] if s["mode"] == "processes" and s["level"] == 2
    ]
    # The margin is this shared VM's: two bare `hashlib.sha256` loops in two
    # sessions did 1.35-1.40x the work of one at a load average of 2.8 (an idle
    # 2-core machine would give about 1.9x); these settings gave 1.34-1.45x in
    # four runs at a load average of 2.4 (fewer windows: 1.12-1.28x).
    assert two["scaling"] > 1.15, report["concurrency"]["machine"]


@pytest.mark.serial  # judges a measured effect
def test_a_real_lock_convoy_is_serialised_and_real_crypto_is_not(tmp_path, no_leftovers):
    # convoy:mac computes the HMAC in one registered process for every caller
    # (tests/fixtures/convoy/convoy.erl): four callers queue. crypto:mac itself
    # runs in each caller. Judged on what load does not fake: a queue keeps
    # one process running or ready to run (the probe's count) at every level,
    # four workers keep four, however few CPUs the machine gives them. The
    # per-call time's CI is what load widens: --quick's 24 windows a level at
    # a load of 17 gave the convoy 4.41x (CI 1.38-9.30) against CPUs 1.26x,
    # too wide for a word; these 48 windows and 12 races per level cell.
    # At a load of 10 (--quick): the convoy's per-call time grew 4.6x (CI
    # 2.9-8.0) with its CPUs 1.07x; crypto:mac's 2.7x with its CPUs 4.0x.
    beams = tmp_path / "ebin"
    beams.mkdir()
    compiled = subprocess.run(
        ["erlc", "-o", str(beams), str(ROOT / "tests" / "fixtures" / "convoy" / "convoy.erl")],
        capture_output=True,
        text=True,
    )
    assert compiled.returncode == 0, compiled.stderr
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "time",
        "--pa",
        str(beams),
        "convoy:mac(Key, Data)",
        "crypto:mac(hmac, sha256, Key, Data)",
        "py:hmac.digest(key, data, 'sha256')",
        "--sizes",
        "64k",
        "--concurrency",
        "1,4",
        *("--samples", "48", "--rounds", "6", "--sample-ms", "5", "--warmup-ms", "20"),
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    exprs = {c["call_id"]: c["call"].split(" ×")[0] for c in report["concurrency"]["cells"]}
    shapes = {(exprs[f["call_id"]], f["mode"]): f for f in report["concurrency"]["serialisation"]}
    convoy = shapes[("convoy:mac(Key, Data)", "processes")]
    mac = shapes[("crypto:mac(hmac, sha256, Key, Data)", "processes")]
    assert convoy["cpu_ratio"] < 1.5 and mac["cpu_ratio"] > 3, (convoy, mac)
    # Real crypto is never called serialised (its CI may withhold the word).
    assert mac["shape"] != "serialised", mac
    assert shapes[("py:hmac.digest(key, data, 'sha256')", "processes")]["shape"] != "serialised"
    # The word needs the per-call time's CI clear of the margin, which load
    # widens (at a load of 10 beside two hogs: unknown, wide-ci).
    with busy.unless_busy(out, needs="the convoy's word, from a per-call CI"):
        assert convoy["shape"] == "serialised", convoy
        assert "waited for each other" in done.stdout


# Two rounds of two windows a level cell: races in each round, and level 1's
# per-call median beside it. --quick's 12 rounds asserted nothing more here and
# cost six times the windows (61 s of CPU at a load of 11, against 20 s).
LEVELS = ["--samples", "4", "--rounds", "2", "--sample-ms", "5", "--warmup-ms", "30"]
LEVELS += ["--openssl-runs", "1"]


def test_tls_handshakes_per_second_at_levels_with_the_slowest_of_n(tmp_path, no_leftovers):
    """N clients against one server (Erlang: one listener in the node, a
    process per connection; openssl: N s_time processes against one
    s_server; Python: N client and server pairs over memory BIOs):
    handshakes per second at 1, 2 and 4, the slowest of N where the workers
    race (not openssl's, which count for a fixed time), and level 1 beside the
    per-call median, agreeing or saying why not."""
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run", "tls-handshake", "--concurrency", "1,2,4", *LEVELS, "--hw", "on", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    cells = cells_of(report)
    modes = (
        ("erlang", "processes"),
        ("python", "threads"),
        ("python", "processes"),
        ("openssl", "clients"),
    )
    for kind, mode in modes:
        for version in ("handshake-1.3", "handshake-1.2"):
            for n in (1, 2, 4):
                c = cells[(kind, version, mode, 1, n)]
                assert c["status"] == "ok" and c["output_ok"] is True, c.get("reason")
                assert c["ops_per_s"]["median"] > 0
                assert all(len(w) == n for w in c["windows"])  # N clients, one server
                if kind == "openssl":
                    assert "slowest" not in c
                    continue
                assert c["slowest"]["median_ns"] > 0 and c["slowest"]["races"] >= 2
                # every level races the same handshakes, level 1's
                assert c["race_calls"] == cells[(kind, version, mode, 1, 1)]["race_calls"]
    ones = report["concurrency"]["level_one"]
    assert {(lo["runtime"].split("@")[0], lo["call_id"], lo["mode"]) for lo in ones} == {
        (k, v, m) for k, m in modes for v in ("handshake-1.3", "handshake-1.2")
    }
    said = bridge_cmd("report", str(out), "--format", "markdown").stdout  # sentences unwrapped
    for lo in ones:
        assert lo["gap"] in ("agree", "waited", "tail", "pinned", "few", "unexplained")
        if lo["gap"] != "agree":  # the report says why they differ
            assert f"{lo['runtime']} {lo['call_id']} at level 1 ({lo['mode']})" in said
    assert "Slowest of N" in done.stdout
    shown = bridge_cmd("report", str(out), "--format", "text")
    assert shown.returncode == 0, shown.stderr  # the 72-column view of one-size levels


def test_hmac_sha1_with_one_scheduler(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run", "hmac-sha1", "--concurrency", "1,2", "--schedulers", "1", *SHORT, "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    (erl,) = [rt for rt in report["runtimes"] if rt["kind"] == "erlang"]
    assert erl["schedulers_online"] == 1
    assert report["concurrency"]["schedulers"] == 1
    assert "--schedulers 1" in report["reproduce"] and "--concurrency 1,2" in report["reproduce"]
    cells = cells_of(report)
    assert cells[("erlang", "macN", "processes", 1000, 2)]["schedulers_online"] == 1
    for mode in ("threads", "processes"):
        for call in ("hmac.digest", "hmac.new+copy"):
            assert cells[("python", call, mode, 1000, 2)]["status"] == "ok"
    assert cells[("openssl", "speed", "multi", 1000, 2)]["status"] == "ok"
    assert "+S 1:1" in done.stdout  # the machine line says how the node ran


FAKE_PYTHON = """#!{python}
# A Python worker that serves, except as an extra process of a level: that
# one (it was never asked for 'info', as only the first worker is) exits.
import os
from bridge.pyworker import ops as pyops, worker
seen = []
real = pyops.handle
def handle(op, args):
    seen.append(op)
    if op == "conc" and "info" not in seen:
        os._exit(7)
    return real(op, args)
pyops.handle = handle
worker.main()
"""


def test_a_worker_process_that_dies_at_level_2_costs_that_level_only(tmp_path, no_leftovers):
    fake = tmp_path / "python-dies"
    fake.write_text(FAKE_PYTHON.format(python=sys.executable))
    fake.chmod(0o755)
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "sha256",
        "--concurrency",
        "1,2",
        "--sizes",
        "1024",
        "--runtimes",
        "python",
        "--python",
        str(fake),
        *SHORT,
        "-o",
        str(out),
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(out.read_text())
    cells = cells_of(report)
    dead = cells[("python", "hashlib", "processes", 1024, 2)]
    assert dead["status"] == "failed" and "exit status 7" in dead["reason"]
    for key in (("threads", 1), ("threads", 2), ("processes", 1)):
        assert cells[("python", "hashlib", key[0], 1024, key[1])]["status"] == "ok"
    assert report["results"] and all(r["status"] == "ok" for r in report["results"])
    assert [e["kind"] for e in report["errors"]] == ["level"]


@pytest.mark.serial  # Ctrl-C timed against the levels
def test_ctrl_c_during_a_level_stops_all_n(tmp_path):
    # Level cells of 20 windows of 50 ms (1 s each): threads and processes at
    # level 1, threads at level 2, then processes at level 2 start the second
    # worker process, about 3 s in, and level 3 keeps them busy for 2 s more.
    # Ctrl-C then must stop them all.
    out = tmp_path / "r.json"
    before = worker_pids()
    argv = [sys.executable, "-m", "bridge", "run", "sha256", "--concurrency", "2,3", "--sizes"]
    argv += ["16384", "--runtimes", "python", "--samples", "20", "--rounds", "1"]
    argv += ["--sample-ms", "2", "--warmup-ms", "5", "--hw", "on", "-o", str(out)]
    # The bar says each level cell as it starts: the test waits for the
    # fourth (processes at level 2), not for a time, which a busy machine
    # stretches.
    argv += ["--progress", "bar"]
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        head = read_until(proc, "processes (level cell 4/6)")
        # bridge moves on in steps of 50 ms and is stopped while the test
        # looks for the level's processes: reading /proc for them took
        # seconds beside two CPU hogs, and the run had ended by then.
        deadline = time.monotonic() + 60
        proc.send_signal(signal.SIGSTOP)
        while len(worker_pids() - before) < 2 and time.monotonic() < deadline:
            proc.send_signal(signal.SIGCONT)
            time.sleep(0.05)
            proc.send_signal(signal.SIGSTOP)
        assert len(worker_pids() - before) >= 2, "the level-2 processes never started"
        proc.send_signal(signal.SIGINT)  # delivered as it continues
        proc.send_signal(signal.SIGCONT)
        _, rest = proc.communicate(timeout=60)
        stderr = head + rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    report = json.loads(out.read_text())
    assert any(e["kind"] == "interrupted" for e in report["errors"])
    kept = {(c["mode"], c["level"]) for c in report["concurrency"]["cells"]}
    assert ("threads", 2) in kept  # the levels finished before Ctrl-C are kept
    assert not wait_gone(worker_pids() - before)


@pytest.mark.parametrize("mr", [False, True], ids=["human", "mr"])
def test_multi_output_of_the_live_binaries_parses(bullseye, mr):
    for openssl in ("openssl", str(bullseye.openssl)):
        argv = [openssl, "speed", "-multi", "2", "-seconds", "1", "-bytes", "1024"]
        argv += ["-mr", "sha256"] if mr else ["sha256"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        (run,) = parse.parse(done.stdout + done.stderr).runs
        assert run.multi == 2 and sorted(run.children) == [0, 1], openssl
        (entry,) = run.entries
        assert entry.size == 1024 and entry.algorithm == "sha256"
        kids = sum(run.children[k][0].bytes_per_s for k in (0, 1))
        assert entry.bytes_per_s == pytest.approx(kids, rel=0.01)  # the human row rounds


def test_openssl_1_1_1_runs_levels_from_a_scenario_file(tmp_path, bullseye):
    # The levels come from the scenario's own `concurrency` key this time.
    path = tmp_path / "multi.toml"
    path.write_text(
        'name = "multi"\ndescription = "speed -multi"\nkind = "hash"\ndigest = "sha256"\n'
        'sizes = [1024]\nconcurrency = [2]\n[calls]\nopenssl = ["speed-evp"]\n'
    )
    out = tmp_path / "r.json"
    done = bridge_cmd("run", str(path), "--openssl", str(bullseye.openssl), *SHORT, "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["scenarios"][0]["concurrency"] == [1, 2]
    two = cells_of(report)[("openssl", "speed-evp", "multi", 1024, 2)]
    assert two["status"] == "ok" and two["output_ok"] is True
    assert two["api"].endswith("-multi 2") and len(two["windows"][0]) == 2
    assert report["runtimes"][0]["version"].startswith("OpenSSL 1.1.1")
