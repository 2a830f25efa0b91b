"""Does a rerun confirm bridge's CI? Reruns the same `bridge run` several
times in a row and counts, per cell, how often one run's 95% CI contains the
next run's median and how often two consecutive runs' CIs overlap.

A CI is bridge's promise: "run it again and you will land inside this". A
CI computed from the samples of one worker process cannot see what moves a
whole process (memory layout, hash seed, the CPU it settles on), and on a
2-vCPU cloud guest four default hmac-sha1 runs in a row had only 2 of 9
consecutive pairs of CIs overlap (issue 28). bridge now spreads each cell
over several processes (--processes, default 4) and resamples processes,
then samples; this check is how that is judged on a given machine.

Cases (each run in turn, so that a case's consecutive runs lie a little
apart, as reruns do): the default `bridge run hmac-sha1` and
`bridge run sha256 --sizes 8192`, or those given with --case. --also ARGS
runs every case again with ARGS added (e.g. --also "--processes 1" for the
within-one-process CI of before), interleaved with the others.

Per cell (runtime, call, size, hw), and per hardware verdict (its speedup,
the answer line's figure): the consecutive pairs whose CIs overlap,
those where the first CI contains the second run's median, the widest CI
(± half-width over the median), and the medians' spread (largest over
smallest, less 1). Per run: its wall time and the load average before and
after (the machine may be shared: record it beside the table).

Run: .venv/bin/python bench/coverage.py [--runs 4] [--case "hmac-sha1 --hw on
--runtimes erlang,python"] [--also "--processes 1"] [--json FILE]
(make bench runs it with its defaults.)
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CASES = ("hmac-sha1", "sha256 --sizes 8192")


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def run_once(args: list[str], out: Path) -> dict:
    out.unlink(missing_ok=True)
    before = loadavg()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "bridge", "run", *args, "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    wall = time.monotonic() - started
    if not out.exists():
        sys.exit(
            f"bench/coverage.py: bridge run {shlex.join(args)} wrote no report:\n{done.stderr}"
        )
    report = json.loads(out.read_text())
    cells = {}
    for r in report.get("results", []):
        ns = r.get("ns_per_op") or {}
        if r.get("status", "ok") != "ok" or not ns.get("ci95"):
            continue
        key = f"{r['runtime']} {r['call_id']} {r['size']} B hw {r.get('hw', 'on')}"
        cells[key] = {
            "median": ns["median"],
            "ci95": ns["ci95"],
            "processes": ns.get("processes", 1),
            "between_process_share": ns.get("between_process_share"),
        }
    # The answer lines: each hardware verdict's speedup and its CI.
    for v in report.get("verdicts", []):
        if v.get("speedup") is None or not v.get("speedup_ci95"):
            continue
        key = f"verdict {v['runtime']} {v['call_id']} {v['size']} B ({v.get('statistic', '')})"
        cells[key] = {
            "median": v["speedup"],
            "ci95": v["speedup_ci95"],
            "processes": ns_processes(report, v["runtime"]),
            "between_process_share": None,
            "verdict": v["verdict"],
        }
    return {"wall_s": wall, "load_before": before, "load_after": loadavg(), "cells": cells}


def ns_processes(report: dict, runtime: str) -> int:
    """The processes a side of a runtime's cells came from."""
    for r in report.get("results", []):
        if r["runtime"] == runtime and r.get("ns_per_op"):
            return r["ns_per_op"].get("processes", 1)
    return 1


def judge(runs: list[dict]) -> list[dict]:
    """Per cell, over consecutive pairs of runs."""
    keys = [k for k in runs[0]["cells"] if all(k in r["cells"] for r in runs)]
    rows = []
    for key in keys:
        seq = [r["cells"][key] for r in runs]
        pairs = list(zip(seq, seq[1:], strict=False))
        contains = sum(a["ci95"][0] <= b["median"] <= a["ci95"][1] for a, b in pairs)
        overlap = sum(
            a["ci95"][0] <= b["ci95"][1] and b["ci95"][0] <= a["ci95"][1] for a, b in pairs
        )
        widest = max((c["ci95"][1] - c["ci95"][0]) / 2 / c["median"] for c in seq)
        medians = [c["median"] for c in seq]
        shares = [c["between_process_share"] for c in seq if c["between_process_share"] is not None]
        verdicts = [c["verdict"] for c in seq if "verdict" in c]
        rows.append(
            {
                "verdicts": ", ".join(verdicts),
                "cell": key,
                "pairs": len(pairs),
                "contains": contains,
                "overlap": overlap,
                "widest": widest,
                "spread": max(medians) / min(medians) - 1,
                "processes": seq[0]["processes"],
                "share": max(shares) if shares else None,
                "medians": medians,
            }
        )
    return rows


def table(case: str, runs: list[dict], rows: list[dict]) -> list[str]:
    walls = ", ".join(f"{r['wall_s']:.1f}" for r in runs)
    loads = ", ".join(f"{r['load_before']:.1f}→{r['load_after']:.1f}" for r in runs)
    out = [
        f"`bridge run {case}`, {len(runs)} runs: wall {walls} s; load average {loads}",
        "",
        "| cell | processes | CI holds the next median | CIs overlap | widest CI | medians' spread"
        " | most between-process share (verdicts: what each run said) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        share = "–" if r["share"] is None else f"{r['share']:.0%}"
        if r["verdicts"]:  # an answer line: its speedup, and the verdicts the runs gave
            share = r["verdicts"]
        out.append(
            f"| {r['cell']} | {r['processes']} | {r['contains']}/{r['pairs']} |"
            f" {r['overlap']}/{r['pairs']} | ±{r['widest']:.1%} | {r['spread']:.1%} | {share} |"
        )
    pairs = sum(r["pairs"] for r in rows)
    out += [
        "",
        f"all cells: the CI holds the next median in {sum(r['contains'] for r in rows)} of {pairs}"
        f" pairs, consecutive CIs overlap in {sum(r['overlap'] for r in rows)} of {pairs};"
        f" widest ±{max((r['widest'] for r in rows), default=0):.1%}",
        "",
    ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--case", action="append", help="bridge run arguments (repeatable)")
    ap.add_argument("--also", help="run each case again with these arguments added")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="keep every run's report in this directory")
    a = ap.parse_args()
    if a.runs < 2:
        ap.error("--runs: at least 2 (pairs of consecutive runs are counted)")
    cases = [shlex.split(c) for c in (a.case or DEFAULT_CASES)]
    if a.also:
        cases += [[*c, *shlex.split(a.also)] for c in cases]
    print(f"machine: {os.cpu_count()} CPUs, load average {loadavg():.2f} at the start", flush=True)
    results: dict[str, list[dict]] = {shlex.join(c): [] for c in cases}
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(a.runs):
            for c in cases:
                name = shlex.join(c)
                print(f"run {n + 1}/{a.runs}: bridge run {name}", file=sys.stderr, flush=True)
                out = (a.keep or Path(tmp)) / f"case{cases.index(c)}-run{n}.json"
                results[name].append(run_once(c, out))
    summary = {}
    for name, runs in results.items():
        rows = judge(runs)
        summary[name] = {"runs": runs, "cells": rows}
        print("\n".join(table(name, runs, rows)), flush=True)
    print(f"load average {loadavg():.2f} at the end")
    if a.json:
        a.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
