"""Truth under load: does bridge's figure stay true when other processes
want the CPUs, or say that it cannot be trusted? (issue 25)

Cells: sha256 at 8 KiB, hmac-sha1 at 1000 B and pbkdf2-sha256 at 10,000
iterations, in Erlang, Python and openssl (every call the scenarios name),
hw as found. Conditions, in order: idle (nothing started by this bench),
one CPU hog, two CPU hogs (`stress-ng --cpu N`), then idle again (how far
the machine drifted on its own). For each loaded cell:

  ok       bridge's median is within ±5% of its idle readings (the band
           from the lower of the two idle medians less 5% to the higher
           plus 5%: a two-speed host moves an idle median by more than
           that on its own, which is not the load's doing);
  flagged  it is not, but the cell says it cannot be trusted: its wait
           share is over the report's threshold (cpu_time, flag "waited"),
           which the noise block names;
  host     it is below the band, unflagged: faster under load than every
           idle reading, which no load causes (the idle runs caught the
           host's slower speed);
  FAIL     it is above the band, and nothing in the cell says so: a
           confident wrong number.

A machine-wide load warning alone does not count as a flag: the issue is
that bridge warned about the load in general, not about the cell.

stress-ng: `apt-get install stress-ng` (Debian/Ubuntu), `dnf install
stress-ng` (Fedora). The hogs are started and stopped by this bench, by
their process group. BRIDGE_PIN=off in the environment turns off bridge's
per-round pinning, to measure what it does.

Run: .venv/bin/python bench/truth.py [--bridge-arg=--rounds=4 ...]
[--json FILE] [--doc docs/findings/truth-under-load.md]. On 2 CPUs it takes
about 3-6 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CELLS = (("sha256", 8192), ("hmac-sha1", 1000), ("pbkdf2-sha256", 10000))
TOLERANCE = 0.05
SETTLE_S = 2.0


def load() -> tuple[float, float, float]:
    a, b, c = Path("/proc/loadavg").read_text().split()[:3]
    return float(a), float(b), float(c)


def machine() -> str:
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return f"{model}, {os.cpu_count()} CPUs, kernel {os.uname().release}"


@contextlib.contextmanager
def hogs(n: int):
    """n CPU hogs (stress-ng --cpu n) for the block; none for n = 0."""
    if n == 0:
        yield
        return
    proc = subprocess.Popen(
        ["stress-ng", "--cpu", str(n), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        time.sleep(SETTLE_S)
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def bridge_cells(scenario: str, size: int, extra: list[str]) -> dict[str, dict]:
    """One bridge run of a scenario at one size: per cell (runtime kind and
    call), its median, minimum, CI, CPU ns, wait share and flag."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        argv = [sys.executable, "-m", "bridge", "run", scenario, "--hw", "on"]
        argv += ["--sizes", str(size), *extra, "-o", str(out), "--format", "json"]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=1200)
        if not out.exists():
            raise SystemExit(f"bridge run {scenario} failed:\n{done.stderr[-2000:]}")
        report = json.loads(out.read_text())
    kinds = {rt["id"]: rt["kind"] for rt in report["runtimes"]}
    costs = {
        (c["runtime"], c["call_id"]): c for c in (report.get("cpu_time") or {}).get("cells", [])
    }
    noise = report.get("noise") or {}
    busy = any(w.startswith("other processes used") for w in noise.get("warnings", []))
    cells = {}
    for r in report["results"]:
        if r["status"] != "ok":
            continue
        c = costs.get((r["runtime"], r["call_id"]), {})
        ns = r["ns_per_op"]
        lo, hi = ns["ci95"] or (ns["median"], ns["median"])
        cells[f"{kinds[r['runtime']]} {r['call_id']}"] = {
            "median": ns["median"],
            "min": ns["min"],
            "ci": max(hi / ns["median"] - 1, 1 - lo / ns["median"]),
            "cpu_ns": c.get("cpu_ns"),
            "wait": c.get("wait_share"),
            "flag": c.get("flag", ""),
            "busy": busy,
        }
    return cells


def condition(n_hogs: int, extra: list[str]) -> dict:
    with hogs(n_hogs):
        before = load()
        cells = {}
        for scenario, size in CELLS:
            for name, cell in bridge_cells(scenario, size, extra).items():
                cells[f"{scenario} {size}: {name}"] = cell
        after = load()
    return {"hogs": n_hogs, "load_before": before, "load_after": after, "cells": cells}


def verdict(idles: list[dict], loaded: dict) -> str:
    """A loaded cell against the band of its idle readings (before and after
    the hogs), widened by TOLERANCE: a host that switches speed for seconds
    at a time moves an idle median by more than 5% from one run to the next
    (the "idle again" column), and that drift is not the load's. Below the
    band is "host": no load makes a call faster, so the idle readings caught
    the host's slower speed."""
    medians = [c["median"] for c in idles]
    low, high = min(medians) * (1 - TOLERANCE), max(medians) * (1 + TOLERANCE)
    if low <= loaded["median"] <= high:
        return "ok"
    if loaded["flag"]:
        return "flagged"
    return "host" if loaded["median"] < low else "FAIL"


def _idles(runs: list[dict], name: str) -> list[dict]:
    return [r["cells"][name] for r in runs if not r["hogs"] and name in r["cells"]]


def table(runs: list[dict]) -> list[str]:
    idle = runs[0]["cells"]
    head = f"| cell | idle ns | {' | '.join(_label(r) for r in runs[1:])} |"
    rule = "|" + "---|" * (2 + len(runs) - 1)
    lines = [head, rule]
    for name, base in idle.items():
        row = [name, f"{base['median']:,.0f} (wait {_pct(base['wait'])})"]
        for run in runs[1:]:
            cell = run["cells"].get(name)
            if cell is None:
                row.append("-")
                continue
            ratio = cell["median"] / base["median"]
            mark = (
                verdict(_idles(runs, name), cell)
                if run["hogs"]
                else ("ok" if abs(ratio - 1) <= TOLERANCE else "drift")
            )
            cpu = cell["cpu_ns"] / base["cpu_ns"] if cell["cpu_ns"] and base["cpu_ns"] else None
            row.append(
                f"{ratio:.2f}x, CPU {cpu:.2f}x, wait {_pct(cell['wait'])}: {mark}"
                if cpu
                else f"{ratio:.2f}x, wait {_pct(cell['wait'])}: {mark}"
            )
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _label(run: dict) -> str:
    what = {0: "idle again", 1: "1 hog", 2: "2 hogs"}.get(run["hogs"], f"{run['hogs']} hogs")
    return f"{what} (load {run['load_before'][0]:.1f}-{run['load_after'][0]:.1f})"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def summary(runs: list[dict]) -> str:
    idle = runs[0]["cells"]
    counts = {"ok": 0, "flagged": 0, "host": 0, "FAIL": 0}
    for run in runs[1:]:
        if not run["hogs"]:
            continue
        for name, cell in run["cells"].items():
            if name in idle:
                counts[verdict(_idles(runs, name), cell)] += 1
    total = sum(counts.values())
    return (
        f"{total} loaded cells: {counts['ok']} within ±{TOLERANCE:.0%} of the idle readings,"
        f" {counts['flagged']} flagged (wait share), {counts['host']} faster than every idle"
        f" reading (host), {counts['FAIL']} wrong and not flagged"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bridge-arg", action="append", default=[])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--doc", type=Path, help="write the findings page (Markdown) here")
    parser.add_argument("--hogs", default="1,2", help="the loaded conditions (default 1,2)")
    args = parser.parse_args()
    if shutil.which("stress-ng") is None:
        raise SystemExit(
            "bench/truth.py needs stress-ng: apt-get install stress-ng (Debian/Ubuntu)"
        )
    print(f"machine: {machine()}; pinning {os.environ.get('BRIDGE_PIN', 'on')}", flush=True)
    started = time.monotonic()
    runs = []
    for n in [0, *(int(x) for x in args.hogs.split(",")), 0]:
        run = condition(n, args.bridge_arg)
        runs.append(run)
        print(f"{_label(run) if runs[1:] else 'idle'}: {len(run['cells'])} cells", flush=True)
    lines = table(runs)
    print("\n".join(lines))
    text = summary(runs)
    minutes = (time.monotonic() - started) / 60
    print(f"{text}; {minutes:.1f} min")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "runs": runs}, indent=1) + "\n")
    if args.doc:
        args.doc.write_text(doc(runs, lines, text, args.bridge_arg))
    return 0 if "0 wrong" in text else 1


def doc(runs: list[dict], lines: list[str], text: str, extra: list[str]) -> str:
    idle_load = runs[0]["load_before"][0]
    waits = [c["wait"] for c in runs[0]["cells"].values() if c["wait"] is not None]
    idle_wait = _pct(statistics.median(waits) if waits else None)
    return "\n".join(
        [
            "# Truth under load",
            "",
            "`bench/truth.py` (issue 25): sha256 at 8 KiB, hmac-sha1 at 1000 B and",
            "pbkdf2-sha256 at 10,000 iterations in Erlang, Python and openssl, measured",
            "idle, with one and two CPU hogs (`stress-ng --cpu N`), then idle again. A",
            f"loaded cell passes when its median is within ±{TOLERANCE:.0%} of its idle readings",
            "(before and after the hogs: the band from the lower less 5% to the higher plus",
            "5%), when it is below them (host: faster under load than idle, which no load",
            "causes), or when it is flagged: its share of sample windows spent waiting for a",
            "CPU is over the report's threshold, so the noise block says its wall figure is not",
            "the cost of the call. Ratios are loaded median over idle median; CPU is the",
            "same ratio of CPU time per call.",
            "",
            f"Machine: {machine()}. Pinning: {os.environ.get('BRIDGE_PIN', 'on')}."
            f" bridge options: {' '.join(extra) or '(defaults)'}.",
            f"The 'idle' run had a load average of {idle_load:.1f} (bridge's own runs count"
            f" in it); its cells waited a median {idle_wait} of their windows.",
            "",
            *lines,
            "",
            text + ".",
            "",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
