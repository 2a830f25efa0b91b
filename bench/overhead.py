"""bridge's own overhead: what it costs to ask, not what crypto costs.

Measures, on this machine:
  - worker start: spawn to {ready, ...} for the Erlang node and the Python worker;
  - round trip of one `ping` request, across CPUs as scheduled, and with the
    driver and worker pinned to one CPU (wake-ups across CPUs dominate on VMs);
  - wall time of `bridge run hmac-sha1 --quick` and of the default run, against
    their targets (5 s and 18 s), and of --quick as a first run (no twin's mask
    known from before), the 95% CI half-width of every headline
    median in those reports, and how many cells each marked unstable;
  - the load average around each timing: the machine may be shared.

Every figure is a median with its 95% CI (bridge.stats). Run: make bench, or
.venv/bin/python bench/overhead.py [--runs N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bridge import stats
from bridge.system import cache, otp
from bridge.wire.port import Worker

ROOT = Path(__file__).resolve().parent.parent


def erlang_argv() -> list[str]:
    inst = otp.locate(None)
    beams = otp.worker_beams(inst)
    return [str(inst.erl), "-noshell", "-noinput", "-pa", str(beams), "-s", "bridge_worker", "main"]


def python_argv() -> list[str]:
    return [sys.executable, "-m", "bridge.pyworker.worker"]


def start_times(argv: list[str], runs: int) -> stats.Summary:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        with Worker("w", argv, dict(os.environ)):
            times.append((time.perf_counter_ns() - t0) / 1e6)
    return stats.summarize(times)


def round_trip(argv: list[str], batches: int, per_batch: int = 200) -> stats.Summary:
    """Per-request µs, each sample the mean of a batch of pings."""
    with Worker("w", argv, dict(os.environ)) as w:
        for _ in range(200):
            w.call("ping", timeout=5)
        samples = []
        for _ in range(batches):
            t0 = time.perf_counter_ns()
            for _ in range(per_batch):
                w.call("ping", timeout=5)
            samples.append((time.perf_counter_ns() - t0) / per_batch / 1e3)
    return stats.summarize(samples)


def pinned(fn, *args):
    """Run fn with this process (and so its children) on CPU 0 only."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    try:
        return fn(*args)
    finally:
        os.sched_setaffinity(0, before)


def wall_of_run(
    extra: list[str], runs: int, forget_twins: bool = False
) -> tuple[stats.Summary, list[dict]]:
    """Wall times of `bridge run hmac-sha1 EXTRA`, start to exit. forget_twins:
    as a first run, with no twin's mask kept from before (bridge.measure.startup)."""
    times, reports = [], []
    for _ in range(runs):
        if forget_twins:
            (cache.root() / "twins.json").unlink(missing_ok=True)
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "r.json"
            t0 = time.perf_counter_ns()
            subprocess.run(
                [sys.executable, "-m", "bridge", "run", "hmac-sha1", *extra, "-o", str(out)],
                check=True,
                capture_output=True,
                cwd=ROOT,
            )
            times.append((time.perf_counter_ns() - t0) / 1e9)
            reports.append(json.loads(out.read_text()))
    return stats.summarize(times), reports


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def unstable_counts(reports: list[dict]) -> str:
    counts = [len(r.get("unstable", [])) for r in reports]
    cells = len([x for x in reports[0]["results"] if x["status"] == "ok"])
    return f"{'/'.join(map(str, counts))} of {cells} cells (per run)"


def ci_widths(reports: list[dict]) -> list[tuple[str, float]]:
    widths = []
    for report in reports:
        for r in report["results"]:
            if r["status"] != "ok":
                continue
            lo, hi = r["ns_per_op"]["ci95"]
            half = (hi - lo) / 2 / r["ns_per_op"]["median"]
            widths.append((f"{r['runtime']} {r['call_id']}", half))
    return widths


def fmt(s: stats.Summary, unit: str) -> str:
    return f"{s.median:,.2f} {unit} (95% CI {s.ci95[0]:,.2f}–{s.ci95[1]:,.2f}, n={s.n})"


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown CPU",
    )
    return f"{model}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each whole-command timing")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()

    figures: dict[str, str] = {"machine": machine()}
    erl, py = erlang_argv(), python_argv()
    figures["erlang node start"] = fmt(start_times(erl, 15), "ms")
    figures["python worker start"] = fmt(start_times(py, 15), "ms")
    figures["round trip, erlang"] = fmt(round_trip(erl, 30), "µs")
    figures["round trip, python"] = fmt(round_trip(py, 30), "µs")
    figures["round trip, erlang, one CPU"] = fmt(pinned(round_trip, erl, 30), "µs")
    figures["round trip, python, one CPU"] = fmt(pinned(round_trip, py, 30), "µs")
    before = load()
    quick, quick_reports = wall_of_run(["--quick"], args.runs)
    figures["bridge run hmac-sha1 --quick (target 5 s)"] = fmt(quick, "s")
    figures["--quick: cells marked unstable (over ±5%)"] = unstable_counts(quick_reports)
    first, _ = wall_of_run(["--quick"], args.runs, forget_twins=True)
    figures["--quick, twins' masks not known (a first run)"] = fmt(first, "s")
    default, default_reports = wall_of_run([], args.runs)
    figures["bridge run hmac-sha1 (target 18 s)"] = fmt(default, "s")
    figures["default: cells marked unstable (over ±2%)"] = unstable_counts(default_reports)
    figures["load average (1 min) before / after the timed runs"] = f"{before} / {load()}"
    widths = ci_widths(default_reports)
    worst = max(widths, key=lambda w: w[1])
    over = [w for w in widths if w[1] > 0.02]
    figures["default run: widest 95% CI of a headline median"] = (
        f"±{worst[1] * 100:.2f}% ({worst[0]}); {len(over)} of {len(widths)} cells over ±2%"
    )
    quick_worst = max(ci_widths(quick_reports), key=lambda w: w[1])
    figures["--quick run: widest 95% CI"] = f"±{quick_worst[1] * 100:.2f}% ({quick_worst[0]})"

    for key, value in figures.items():
        print(f"{key:50s} {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
