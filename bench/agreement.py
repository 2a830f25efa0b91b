"""bridge against independent harnesses: does bridge report what a plain
harness measures, to within 2%?

Cells: SHA256 of a short and a long message (64 B and 8 KiB by default) in
Erlang (crypto:hash), Python (hashlib.sha256) and openssl (speed -evp).

The harnesses share no code with bridge:
  erlang   bench/harness/sha_loop.erl, compiled by erlc into a temporary
           directory and run in a plain `erl -noshell`: a tail-recursive
           loop of crypto:hash timed as a whole by timer:tc, 200 timings of
           about 5 ms, their median;
  python   `python -m timeit -v -v -n N -r 200` on hashlib.sha256(d).digest(),
           N chosen (from timeit's own autorange) so that a repeat lasts
           about 5 ms: the median of timeit's raw times (its headline is
           their minimum, bridge's is a median);
  openssl  `openssl speed -elapsed -evp sha256 -bytes N` (its default 3 s):
           the figure of its table.
The Erlang and Python harnesses pause 4 ms before each timing (timer:sleep;
time.sleep in timeit's setup, which runs before each repeat, untimed). On a
busy machine a process that computes without a break gets its fair share of
a CPU and every long timing includes the time it waited, while one that
sleeps between short timings, as bridge's workers do between rounds, gets
the CPU when it wakes: at load average 10 on 2 CPUs, harnesses without the
pause and with 20-200 ms timings measured Erlang and Python 2.5-3x slower
than bridge did (openssl, timed by the second on both sides, agreed). With
the same pattern on both sides, a difference is bridge's own. On a quiet
machine the pattern makes no difference.
All three and bridge divide by wall-clock time. (openssl speed without
-elapsed divides by user CPU time, which leaves out the time the process
waited for a CPU: on a shared machine, a different quantity.)

Procedure (--design run, the default): H B H B ... H, where H runs every
harness once and B is one `bridge run` of the same cells (its default
settings, 3 openssl runs per cell), every runtime up and interleaved as
people run bridge. Each bridge run is paired with the geometric mean of the
harness runs just before and just after it, which cancels a drift of the
machine that is linear over one step. --design cell does H B H per cell,
bridge running that cell alone: the three are closer in time.
ratio = bridge median / harness median. Per runtime and size: the median
ratio over the pairs, with a distribution-free 95% CI (order
statistics of Binomial(n, 1/2)) and a percentile bootstrap 95% CI of the
median. A second table shows where a gap comes from: bridge's minimum over
the harness, bridge's CPU time per call over the harness (what the call
costs when no other process holds the CPU), and the share of bridge's
sample windows spent waiting for a CPU (the report's cpu_time block).
BRIDGE_PIN=off in the environment turns off bridge's per-round pinning,
to measure what it does. --cpu also times Python with `timeit -p` (CPU
time) and prints bridge's CPU ns per call over it: a comparison that the
machine's load does not swamp. Pairs are added until every CI lies within
±target of its median (default 2%), or --max-pairs is reached.

Run: make bench, or .venv/bin/python bench/agreement.py [--sizes 64,8192]
[--design run|cell] [--min-pairs 8] [--max-pairs 30] [--target 0.02] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIO = HERE / "agreement-sha256.toml"
ERL_HARNESS = HERE / "harness" / "sha_loop.erl"
KINDS = ("erlang", "python", "openssl")

Cell = tuple[str, int]  # (runtime kind, message size)


# -- the harnesses -----------------------------------------------------------


TIMINGS = 200
TIMING_MS = 5
PAUSE_MS = 4


def erlang_harness(beam_dir: str, size: int) -> float:
    args = [str(size), str(TIMINGS), str(TIMING_MS), str(PAUSE_MS)]
    out = _run(
        ["erl", "-noshell", "-pa", beam_dir, "-run", "sha_loop", "main", *args]
        + ["-s", "init", "stop"]
    )
    values = [float(m) for m in re.findall(r"^ns_per_call ([\d.]+)$", out, re.M)]
    if len(values) != TIMINGS:
        raise SystemExit(f"sha_loop printed {len(values)} timings, expected {TIMINGS}:\n{out}")
    return statistics.median(values)


RAW_TIMES = re.compile(r"^raw times: (.*)$", re.M)
LOOPS = re.compile(r"^(\d+) loops?, best of", re.M)
AUTORANGE = re.compile(r"^(\d+) loops? -> ([\d.e+-]+) secs?$", re.M)
UNITS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6, "sec": 1e9}
STMT = "hashlib.sha256(d).digest()"


def python_harness(size: int) -> float:
    setup = ["-s", "import hashlib, time", "-s", f"d = bytes({size})"]
    # timeit's autorange finds a loop count that lasts 0.2 s; scale it to 5 ms.
    probe = _run([sys.executable, "-m", "timeit", "-v", "-r", "1", *setup, STMT])
    number, seconds = AUTORANGE.findall(probe)[-1]
    n = max(1, round(int(number) * TIMING_MS / 1000 / float(seconds)))
    pause = ["-s", f"time.sleep({PAUSE_MS / 1000})"]  # setup runs before each repeat, untimed
    out = _run(
        [sys.executable, "-m", "timeit", "-v", "-v", "-n", str(n), "-r", str(TIMINGS)]
        + [*setup, *pause, STMT]
    )
    if CPU_TIMEIT is not None:
        # The same in CPU time (timeit -p: time.process_time), which leaves out
        # waiting for a CPU: set beside bridge's CPU time per call.
        cpu = _run(
            [sys.executable, "-m", "timeit", "-p", "-v", "-v", "-n", str(n), "-r", "40"]
            + [*setup, STMT]
        )
        CPU_TIMEIT[size].append(parse_timeit(cpu))
    return parse_timeit(out)


# --cpu: timeit -p figures, per size, one per harness set.
CPU_TIMEIT: dict[int, list[float]] | None = None


def parse_timeit(out: str) -> float:
    """ns per call: the median of timeit's raw times over its loop count."""
    raw, loops = RAW_TIMES.search(out), LOOPS.search(out)
    if raw is None or loops is None:
        raise SystemExit(f"cannot read timeit's output:\n{out}")
    times = []
    for item in raw.group(1).split(","):
        value, unit = item.split()
        times.append(float(value) * UNITS[unit])
    return statistics.median(times) / int(loops.group(1))


def openssl_harness(size: int) -> float:
    out = _run(["openssl", "speed", "-elapsed", "-evp", "sha256", "-bytes", str(size)])
    return parse_speed_table(out, "sha256", size)


def parse_speed_table(out: str, name: str, size: int) -> float:
    """ns per call from the table row `sha256  638888.62k` (1000s of bytes/s)."""
    m = re.search(rf"^{name}\s+([\d.]+)k\s*$", out, re.M)
    if m is None:
        raise SystemExit(f"cannot read openssl speed's table:\n{out}")
    bytes_per_s = float(m.group(1)) * 1000
    return size / bytes_per_s * 1e9


def harness(beam_dir: str, cell: Cell) -> float:
    kind, size = cell
    if kind == "erlang":
        return erlang_harness(beam_dir, size)
    return python_harness(size) if kind == "python" else openssl_harness(size)


def harness_set(beam_dir: str, sizes: list[int]) -> dict[Cell, float]:
    return {(k, n): harness(beam_dir, (k, n)) for k in KINDS for n in sizes}


# -- bridge ------------------------------------------------------------------


def bridge_run(sizes: list[int], extra: list[str]) -> dict[Cell, float]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        argv = [sys.executable, "-m", "bridge", "run", str(SCENARIO), "--hw", "on"]
        argv += ["--sizes", ",".join(map(str, sizes)), "--openssl-runs", "3", *extra]
        _run([*argv, "-o", str(out), "--format", "json"], cwd=ROOT)
        report = json.loads(out.read_text())
    kinds = {rt["id"]: rt["kind"] for rt in report["runtimes"]}
    out = {
        (kinds[r["runtime"]], r["size"]): r["ns_per_op"]["median"]
        for r in report["results"]
        if r["status"] == "ok"
    }
    # What bridge recorded beside its medians (issue 25): the minimum, the
    # CPU time per call and the share of the windows spent waiting for a CPU.
    for r in report["results"]:
        if r["status"] == "ok":
            DETAIL[(kinds[r["runtime"]], r["size"])].append({"min": r["ns_per_op"]["min"]})
    for c in (report.get("cpu_time") or {}).get("cells", []):
        cell = (kinds[c["runtime"]], c["size"])
        if DETAIL[cell]:
            DETAIL[cell][-1].update(cpu=c.get("cpu_ns"), wait=c.get("wait_share"))
    return out


# Per cell, one entry per bridge run: its minimum, CPU ns per call, wait share.
DETAIL: dict[Cell, list[dict]] = collections.defaultdict(list)


# -- statistics (own, not bridge's: the check shares nothing with bridge) ------


def median_ci(values: list[float]) -> tuple[float, float, float]:
    """Median and a distribution-free 95% CI: [x(j), x(n+1-j)] with the
    largest j whose coverage 1 - 2 P(B < j), B ~ Binomial(n, 1/2), is at
    least 95% (the whole range when n < 6)."""
    xs = sorted(values)
    n = len(xs)
    j = 1
    for k in range(1, n // 2 + 1):
        below = sum(math.comb(n, i) for i in range(k)) / 2**n
        if 1 - 2 * below >= 0.95:
            j = k
        else:
            break
    return statistics.median(xs), xs[j - 1], xs[n - j]


def bootstrap_ci(values: list[float], resamples: int = 4000) -> tuple[float, float]:
    """The percentile bootstrap 95% CI of the median (seeded: the same
    ratios print the same interval)."""
    rng = random.Random(25)
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def within(ci: tuple[float, float, float], target: float) -> bool:
    med, lo, hi = ci
    return hi / med - 1 <= target and 1 - lo / med <= target


# -- the run -----------------------------------------------------------------


def machine() -> str:
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    erl = _run(["erl", "-noshell", "-eval", _OTP_VERSION, "-s", "init", "stop"]).strip()
    ssl = _run(["openssl", "version"]).strip()
    return f"{model}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, OTP {erl}, {ssl}"


_OTP_VERSION = (
    'io:format("~s", [string:trim(element(2, file:read_file(filename:join([code:root_dir(),'
    ' "releases", erlang:system_info(otp_release), "OTP_VERSION"]))))]).'
)


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _run(argv: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:6])} ... failed:\n{done.stderr[-2000:]}")
    return done.stdout + done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,8192")
    parser.add_argument("--min-pairs", type=int, default=8)
    parser.add_argument("--max-pairs", type=int, default=30)
    parser.add_argument("--target", type=float, default=0.02)
    parser.add_argument("--json", type=Path, help="also write every pair as JSON")
    parser.add_argument(
        "--bridge-arg", action="append", default=[], help="an extra option for bridge run"
    )
    parser.add_argument(
        "--design",
        choices=["run", "cell"],
        default="run",
        help="run: whole bridge runs (every cell, interleaved, as people run bridge) between"
        " whole harness sets; cell: per cell, harness, bridge on that cell alone, harness"
        " (closer in time, so a drifting machine spreads the ratios less)",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="also time Python in CPU time (timeit -p) against bridge's CPU ns per call"
        " (--design run): what the call costs, whatever the machine's load",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.cpu:
        global CPU_TIMEIT
        CPU_TIMEIT = collections.defaultdict(list)
    if shutil.which("erl") is None or shutil.which("openssl") is None:
        raise SystemExit("bench/agreement.py needs erl and openssl on PATH")

    print(f"machine: {machine()}", flush=True)
    loads = [load()]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sha-loop-") as beams:
        _run(["erlc", "-o", beams, str(ERL_HARNESS)])
        step = by_run if args.design == "run" else by_cell
        pairs: list[dict] = []
        state: dict = {}
        while True:
            pairs.append(step(beams, sizes, args.bridge_arg, state))
            loads.append(load())
            table = summarise(pairs)
            done = len(pairs) >= args.min_pairs and all(
                within(row["ci"], args.target) for row in table.values()
            )
            ratios = " ".join(
                f"{k} {n} {v['bridge'] / v['harness']:.3f}" for (k, n), v in pairs[-1].items()
            )
            print(f"pair {len(pairs)}: load {loads[-1]:.2f}: {ratios}", flush=True)
            if done or len(pairs) >= args.max_pairs:
                break
    minutes = (time.monotonic() - started) / 60
    print_table(table, args.target, pairs)
    print(
        f"{len(pairs)} pairs in {minutes:.1f} min; load average (1 min) from"
        f" {min(loads):.2f} to {max(loads):.2f}, median {statistics.median(loads):.2f}"
    )
    if args.json:
        rows = [
            {f"{k} {s}": v for (k, s), v in pair.items()}
            for pair in pairs  # one dict per pair: cell -> bridge, harness
        ]
        args.json.write_text(json.dumps({"pairs": rows, "loads": loads}, indent=1) + "\n")
    return 0


def by_run(beams: str, sizes: list[int], extra: list[str], state: dict) -> dict:
    """One pair per cell from H B H, H being every harness and B one bridge
    run of every cell; the H after is the next pair's H before."""
    before = state.get("before") or harness_set(beams, sizes)
    b = bridge_run(sizes, extra)
    after = state["before"] = harness_set(beams, sizes)
    return {c: {"bridge": b[c], "harness": math.sqrt(before[c] * after[c])} for c in b}


def by_cell(beams: str, sizes: list[int], extra: list[str], state: dict) -> dict:
    """One pair per cell from H B H of that cell alone."""
    pair = {}
    for cell in [(k, n) for k in KINDS for n in sizes]:
        before = harness(beams, cell)
        b = bridge_run([cell[1]], [*extra, "--runtimes", cell[0]])[cell]
        after = harness(beams, cell)
        pair[cell] = {"bridge": b, "harness": math.sqrt(before * after)}
    return pair


def summarise(pairs: list[dict]) -> dict[Cell, dict]:
    cells = sorted({c for p in pairs for c in p}, key=lambda c: (KINDS.index(c[0]), c[1]))
    out = {}
    for cell in cells:
        ratios = [p[cell]["bridge"] / p[cell]["harness"] for p in pairs if cell in p]
        out[cell] = {"ratios": ratios, "ci": median_ci(ratios)}
    return out


def print_table(table: dict[Cell, dict], target: float, pairs: list[dict] | None = None) -> None:
    print(
        f"{'runtime':8s} {'bytes':>6s} {'pairs':>5s}  bridge / harness (95% CI)   CI within"
        "   bootstrap 95% CI"
    )
    for (kind, size), row in table.items():
        med, lo, hi = row["ci"]
        half = max(hi / med - 1, 1 - lo / med)
        mark = f"±{half * 100:.1f}%" + ("" if half <= target else f" (over ±{target:.0%})")
        verdict = "1.0 inside" if lo <= 1.0 <= hi else "EXCLUDES 1.0"
        blo, bhi = bootstrap_ci(row["ratios"])
        print(
            f"{kind:8s} {size:6d} {len(row['ratios']):5d}  {med:.3f} ({lo:.3f}-{hi:.3f})"
            f"  {verdict:12s} {mark:10s}  {blo:.3f}-{bhi:.3f}"
        )
    if not pairs:
        return
    # Where a gap comes from: bridge's minimum, its CPU time and its wait, per pair.
    print(
        f"{'runtime':8s} {'bytes':>6s}  bridge min / harness   bridge CPU / harness"
        "   bridge wait share (median)"
    )
    for cell in table:
        detail = DETAIL.get(cell, [])
        harness_of = [p[cell]["harness"] for p in pairs if cell in p][: len(detail)]
        mins = [d["min"] / h for d, h in zip(detail, harness_of, strict=False) if d.get("min")]
        cpus = [d["cpu"] / h for d, h in zip(detail, harness_of, strict=False) if d.get("cpu")]
        waits = [d["wait"] for d in detail if d.get("wait") is not None]

        def med(xs: list[float], fmt: str = "{:.3f}") -> str:
            return fmt.format(statistics.median(xs)) if xs else "-"

        print(
            f"{cell[0]:8s} {cell[1]:6d}  {med(mins):>20s}   {med(cpus):>20s}"
            f"   {med(waits, '{:.1%}'):>26s}"
        )
    if CPU_TIMEIT:
        # by_run: bridge run j lies between harness sets j and j+1.
        for size, figures in CPU_TIMEIT.items():
            detail = DETAIL.get(("python", size), [])
            ratios = [
                d["cpu"] / math.sqrt(figures[j] * figures[j + 1])
                for j, d in enumerate(detail)
                if d.get("cpu") and j + 1 < len(figures)
            ]
            if ratios:
                lo, hi = bootstrap_ci(ratios)
                print(
                    f"python {size} B, CPU time: bridge cpu_ns / timeit -p = "
                    f"{statistics.median(ratios):.3f} (bootstrap 95% CI {lo:.3f}-{hi:.3f},"
                    f" {len(ratios)} pairs)"
                )


if __name__ == "__main__":
    sys.exit(main())
