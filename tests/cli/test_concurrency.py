"""--concurrency end to end, on the real runtimes with short settings: every
runtime gives throughput by level with scaling, latency percentiles and (Erlang)
the probe, in every format and in the JSON; --schedulers; a worker process
that dies at a level costs that level only; Ctrl-C stops all N; and the
`speed -multi` parser against the live 3.x and 1.1.1 binaries.

Timings are asserted only where the effect is large: two Python worker
processes hashing 16 KiB do more than 1.15x the work of one (on an idle 2-core
machine about 1.9x; on this shared one, 1.09x to 2.17x was measured, and bare
processes outside bridge did 1.35-1.40x at a load average of 2.8; with Linux
autogroup on a busy machine each process has a share of its own, see docs/guide/concurrency.md)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from bridge.speed import parse
from tests.conftest import ROOT, bridge_cmd, needs_erl, needs_openssl, wait_gone, worker_pids

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
    scaling = {
        (s["runtime"].split("@")[0], s["call_id"], s["mode"], s["level"])
        for s in report["concurrency"]["scaling"]
    }
    assert {(*k, 2) for k in wanted} <= scaling
    machine = report["concurrency"]["machine"]
    assert machine["logical_cpus"] >= 1 and machine["loadavg_start"] is not None
    assert "== Concurrency: 1, 2 workers at once" in done.stdout
    assert max(map(len, done.stdout.splitlines())) <= 72
    for fmt, marker in (("table", "scaling (95% CI)"), ("markdown", "#### Concurrency")):
        shown = bridge_cmd("report", str(out), "--format", fmt)
        assert shown.returncode == 0 and marker in shown.stdout
        assert "workers at once against one" in shown.stdout


@pytest.mark.serial  # a scaling measured with the machine to itself
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
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while len(worker_pids() - before) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(worker_pids() - before) >= 2, "the level-2 processes never started"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
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
