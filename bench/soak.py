"""Soak: a long sequence of runs with repeated node starts and stops, in one
driver process, checking that memory and process counts stay flat.

After every iteration it records the driver's resident memory and open file
descriptors, and counts worker processes still alive (there must be none).
It fails (exit 1) if any worker outlives its run, if descriptors leak, or if
memory keeps growing past the warm-up iterations.

Run: .venv/bin/python bench/soak.py [--iterations N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bridge.catalog import scenario
from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.settings import Settings

SETTINGS = Settings(warmup_ms=5, rewarm_ms=2, sample_ms=2, samples=4, rounds=2, openssl_runs=1)
SEQUENCE = [("hmac-sha1", "both"), ("sha256", "on"), ("hmac-sha256", "off"), ("sha1", "both")]


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def live_workers() -> int:
    n = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"bridge_worker\x00main" in cmd or b"-m\x00bridge.pyworker.worker" in cmd:
                n += 1
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    started = time.monotonic()
    for i in range(args.iterations):
        name, hw = SEQUENCE[i % len(SEQUENCE)]
        sc = scenario.load(name)
        sc = type(sc)(**{**sc.__dict__, "sizes": sc.sizes[:2]})  # keep each run short
        plan = Plan(scenarios=(sc,), settings=SETTINGS, seed=i, hw=hw)
        outcome = runner.execute(plan)
        workers = live_workers()
        rows.append(
            {
                "iteration": i + 1,
                "scenario": name,
                "hw": hw,
                "runtimes": len(outcome.report.runtimes),
                "results": len(outcome.report.results),
                "errors": len(outcome.report.errors),
                "workers_alive_after": workers,
                "rss_kib": rss_kib(),
                "open_fds": open_fds(),
            }
        )
        r = rows[-1]
        print(
            f"{r['iteration']:3d} {name:12s} hw={hw:4s} runtimes={r['runtimes']} "
            f"results={r['results']:2d} errors={r['errors']} workers_left={workers} "
            f"rss={r['rss_kib']} KiB fds={r['open_fds']}",
            flush=True,
        )
    elapsed = time.monotonic() - started
    warm = rows[min(3, len(rows) - 1)]
    last = rows[-1]
    starts = sum(r["runtimes"] for r in rows)
    summary = {
        "iterations": len(rows),
        "seconds": round(elapsed, 1),
        "runtime_starts": starts,
        "errors": sum(r["errors"] for r in rows),
        "workers_left_max": max(r["workers_alive_after"] for r in rows),
        "fds_first_last": [rows[0]["open_fds"], last["open_fds"]],
        "rss_kib_after_warmup_last_max": [
            warm["rss_kib"],
            last["rss_kib"],
            max(r["rss_kib"] for r in rows),
        ],
    }
    print(json.dumps(summary))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "iterations": rows}, indent=1))
    leaked_fds = last["open_fds"] > rows[0]["open_fds"]
    grew = last["rss_kib"] > warm["rss_kib"] * 1.10 + 2048
    ok = summary["workers_left_max"] == 0 and not leaked_fds and not grew
    print("flat" if ok else "NOT FLAT: workers left, descriptors leaked or memory grew")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
