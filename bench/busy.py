"""Verdicts on a busy machine (issue 35, "A bench that proves it"): what
bridge's --quick answers say beside N CPU hogs, run after run.

Starts N hogs (N `stress-ng --cpu 1`, or N `python -c 'while 1: pass'`
with --hog loop; each in a session of its own, so that autogroup
scheduling weighs them as N programs; --pin puts hog i on CPU i), then
runs each command --repeat times, the commands interleaved (every command
once, then again), so that the load's drift spreads over them alike:

  hmac-sha1          run hmac-sha1 --quick
  sha256             run sha256 --quick
  sha512             run sha512 --quick (a control: masking SHA cannot change it)
  chacha20-poly1305  run chacha20-poly1305 --quick (a control: masking
                     AES-NI and PCLMULQDQ cannot change it)
  same-otp           run sha256 --quick --erl otp:25 --erl PATH, PATH the
                     same OTP's erl by its path (--same-otp, --same-otp-path):
                     two identical runtimes, whose comparison must never be sig

From each run's JSON report it keeps the hardware verdicts (per runtime and
call: used, not-used, inconclusive, other) and the comparisons between
runtimes of the same kind and version (a `faster` or `slower` there is a
`sig` between identical versions), with the load average before and after
and the report's own reading of the machine (other processes' CPU, steal:
the hypervisor's, which no hog in the guest causes).
It prints a Markdown table for docs/findings/, with the machine and the
load. It judges nothing and has no threshold: the lead reads the counts
against the issue's "done when".

Run: .venv/bin/python bench/busy.py [--hogs 2] [--repeat 5] [--command NAME[:N] ...]
[--hog stress-ng|loop] [--pin] [--bridge-arg=--seed=2 ...] [--json FILE]
[--markdown FILE] [--keep DIR]. --command NAME:N runs that command N times
instead of --repeat (issue 35 asks for 5 hmac-sha1 and 10 sha512); --keep
keeps each run's report. A --quick run takes 10-70 s beside two hogs on 2
CPUs (hmac-sha1 10-16 s, sha512 45-60 s), so the five commands five times
take about 15-25 minutes; issue 35's check, 5 hmac-sha1 and 10 sha512,
about 11:

  .venv/bin/python bench/busy.py --hog loop --command hmac-sha1:5 \
      --command sha512:10 --markdown /tmp/busy.md
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTLE_S = 2.0  # after the hogs start, before the first run
# The verdict words counted in their own columns; any other (cpu-lacks,
# masked, cannot-test, not-openssl) is counted as "other".
WORDS = ("used", "not-used", "inconclusive")
SIGNIFICANT = ("faster", "slower")  # a Difference's words that are `sig`


@dataclass(frozen=True)
class Command:
    name: str
    argv: tuple[str, ...]  # after `crypto-bridge`
    control: bool = False


def commands(same_otp: str, same_otp_path: str) -> tuple[Command, ...]:
    return (
        Command("hmac-sha1", ("run", "hmac-sha1", "--quick")),
        Command("sha256", ("run", "sha256", "--quick")),
        Command("sha512", ("run", "sha512", "--quick"), control=True),
        Command("chacha20-poly1305", ("run", "chacha20-poly1305", "--quick"), control=True),
        Command(
            "same-otp",
            ("run", "sha256", "--quick", "--erl", same_otp, "--erl", same_otp_path),
        ),
    )


@dataclass(frozen=True)
class Verdict:
    runtime: str  # the runtime's id, as the report names it (erlang@25.2.3#2)
    call: str  # call_id
    size: int
    verdict: str


@dataclass(frozen=True)
class Comparison:
    """A difference between two runtimes of the same kind and version."""

    runtime: str
    baseline: str
    call: str
    size: int
    hw: str
    ratio: float
    ci95: tuple[float, float] | None
    verdict: str

    @property
    def sig(self) -> bool:
        return self.verdict in SIGNIFICANT


@dataclass(frozen=True)
class Run:
    command: str
    index: int
    load_before: float
    load_after: float
    seconds: float
    others_cpus: float | None = None
    steal: float | None = None
    verdicts: tuple[Verdict, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    error: str = ""


# -- reading a report (pure) -------------------------------------------------------


def read_report(report: Mapping) -> tuple[tuple[Verdict, ...], tuple[Comparison, ...]]:
    """The hardware verdicts, and the comparisons between identical
    versions (same kind, same version string), from a report's JSON."""
    verdicts = tuple(
        Verdict(v["runtime"], v["call_id"], v["size"], v["verdict"])
        for v in report.get("verdicts", ())
    )
    version = {rt["id"]: (rt["kind"], rt.get("version")) for rt in report.get("runtimes", ())}
    same = []
    for d in report.get("differences", ()):
        a, b = version.get(d["runtime"]), version.get(d["baseline_runtime"])
        if a is None or a != b or a[1] is None or d["runtime"] == d["baseline_runtime"]:
            continue
        ci = tuple(d["ci95"]) if d.get("ci95") else None
        same.append(
            Comparison(
                d["runtime"],
                d["baseline_runtime"],
                d["call_id"],
                d["size"],
                d.get("hw", "on"),
                d["ratio"],
                ci,
                d["verdict"],
            )
        )
    return verdicts, tuple(same)


# -- the table (pure) ----------------------------------------------------------------


@dataclass
class _Tally:
    counts: collections.Counter = field(default_factory=collections.Counter)
    runs: set = field(default_factory=set)


def tally(runs: Iterable[Run]) -> dict[tuple[str, str, str], _Tally]:
    """Per (command, runtime, call): the verdicts counted by word, over
    the runs and the sizes."""
    out: dict[tuple[str, str, str], _Tally] = {}
    for run in runs:
        for v in run.verdicts:
            t = out.setdefault((run.command, v.runtime, v.call), _Tally())
            t.counts[v.verdict if v.verdict in WORDS else "other"] += 1
            t.runs.add(run.index)
    return out


def _range(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    if not values:
        return "-"
    lo, hi = (fmt.format(x) for x in (min(values), max(values)))
    return lo if lo == hi else f"{lo}-{hi}"


def verdict_table(runs: Sequence[Run], order: Sequence[str]) -> list[str]:
    lines = [
        "| command | runs | load | others' CPUs | steal | runtime and call | used | not-used"
        " | inconclusive | other |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    counted = tally(runs)
    for name in order:
        mine = [r for r in runs if r.command == name]
        if not mine:
            continue
        ok = [r for r in mine if not r.error]
        failed = len(mine) - len(ok)
        runs_text = f"{len(ok)}" + (f" ({failed} failed)" if failed else "")
        loads = _range([x for r in ok for x in (r.load_before, r.load_after)])
        others = [r.others_cpus for r in ok if r.others_cpus is not None]
        others_text = f"{statistics.median(others):.1f}" if others else "-"
        steals = [100 * r.steal for r in ok if r.steal is not None]
        steal_text = f"{_range(steals, '{:.0f}')}%" if steals else "-"
        keys = sorted(k for k in counted if k[0] == name)
        if not keys:
            lines.append(
                f"| {name} | {runs_text} | {loads} | {others_text} | {steal_text} | - | | | | |"
            )
        for i, key in enumerate(keys):
            c = counted[key].counts
            head = (
                f"{name} | {runs_text} | {loads} | {others_text} | {steal_text}"
                if i == 0
                else " |  |  |  | "
            )
            lines.append(
                f"| {head} | {key[1]} {key[2]} | {c['used']} | {c['not-used']}"
                f" | {c['inconclusive']} | {c['other']} |"
            )
    return lines


def comparison_table(runs: Sequence[Run]) -> list[str]:
    """Comparisons between identical versions, per command: how many, how
    many `sig`, and each `sig` with its ratio and CI."""
    by: dict[str, list[tuple[int, Comparison]]] = {}
    for run in runs:
        for c in run.comparisons:
            by.setdefault(run.command, []).append((run.index, c))
    if not by:
        return []
    lines = [
        "| command | comparisons | sig | the sig ones (run: runtime against baseline, call,"
        " size, hw: ratio, CI) |",
        "|---|---|---|---|",
    ]
    for name, found in by.items():
        sig = [(i, c) for i, c in found if c.sig]
        said = "; ".join(
            f"{i}: {c.runtime} against {c.baseline}, {c.call}, {c.size} B, hw {c.hw}:"
            f" {c.ratio:.2f}× {c.verdict}"
            + (f" (CI {c.ci95[0]:.2f}-{c.ci95[1]:.2f})" if c.ci95 else "")
            for i, c in sig
        )
        lines.append(f"| {name} | {len(found)} | {len(sig)} | {said or '-'} |")
    return lines


def markdown(runs: Sequence[Run], setup: Mapping[str, str], order: Sequence[str]) -> str:
    """The findings page's block: the machine and the load, then the tables."""
    lines = [f"- {k}: {v}" for k, v in setup.items()]
    errors = [r for r in runs if r.error]
    lines += ["", *verdict_table(runs, order), ""]
    comparisons = comparison_table(runs)
    if comparisons:
        lines += ["Comparisons between identical versions:", "", *comparisons, ""]
    for r in errors:
        lines.append(f"- {r.command} run {r.index} failed: {r.error}")
    return "\n".join(lines).rstrip() + "\n"


# -- the machine and the hogs --------------------------------------------------------


def machine() -> str:
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} CPUs, Linux {os.uname().release}"


@contextlib.contextmanager
def hogs(n: int, kind: str, pin: bool) -> Iterator[str]:
    """n CPU hogs for the block (each in its own process group, stopped by
    it); yields what they are, in words."""
    cpus = sorted(os.sched_getaffinity(0))
    procs: list[subprocess.Popen] = []
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    try:
        for i in range(n):
            cpu = cpus[i % len(cpus)]
            if kind == "stress-ng":
                argv = ["stress-ng", "--cpu", "1", "--quiet"]
                argv += ["--taskset", str(cpu)] if pin else []
            else:
                argv = [sys.executable, "-c", "while 1: pass"]
            # Each hog in a session of its own: with autogroup scheduling
            # (Linux's default for sessions) hogs in one session share one
            # group's CPU share, and two would weigh as one program.
            procs.append(subprocess.Popen(argv, start_new_session=True, **quiet))
            if pin and kind != "stress-ng":
                os.sched_setaffinity(procs[-1].pid, {cpu})
        what = (
            "none"
            if not n
            else f"{n} × {'stress-ng --cpu' if kind == 'stress-ng' else 'busy loop'}"
        )
        if n and pin:
            what += f", pinned to CPUs {', '.join(str(cpus[i % len(cpus)]) for i in range(n))}"
        time.sleep(SETTLE_S if n else 0)
        yield what
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def run_one(command: Command, index: int, extra: Sequence[str], tmp: Path) -> Run:
    out = tmp / f"{command.name}-{index}.json"
    argv = [sys.executable, "-m", "bridge", *command.argv, *extra, "-o", str(out)]
    before, started = os.getloadavg()[0], time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    seconds, after = time.monotonic() - started, os.getloadavg()[0]
    common = {"command": command.name, "index": index, "seconds": round(seconds, 1)}
    common |= {"load_before": round(before, 2), "load_after": round(after, 2)}
    if not out.exists():  # a run with results but a failure (exit 1) still wrote its report
        error = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Run(**common, error=error[:300])
    report = json.loads(out.read_text())
    verdicts, comparisons = read_report(report)
    noise = report.get("noise") or {}
    return Run(
        **common,
        others_cpus=noise.get("others_cpus"),
        steal=noise.get("steal"),
        verdicts=verdicts,
        comparisons=comparisons,
    )


def _same_otp_path() -> str:
    erl = shutil.which("erl")
    return str(Path(erl).resolve()) if erl else "erl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hogs", type=int, default=2, help="CPU hogs beside the runs (default 2)")
    ap.add_argument("--hog", choices=("stress-ng", "loop"), default="stress-ng")
    ap.add_argument("--pin", action="store_true", help="hog i on CPU i")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument(
        "--command",
        action="append",
        help="only these (repeatable); NAME:N runs that one N times, not --repeat",
    )
    ap.add_argument("--same-otp", default="otp:25", help="the OTP named twice (default otp:25)")
    ap.add_argument("--same-otp-path", default=_same_otp_path(), help="its erl, by its path")
    ap.add_argument("--bridge-arg", action="append", default=[], help="added to every run")
    ap.add_argument("--json", type=Path, help="every run's figures, as JSON")
    ap.add_argument("--markdown", type=Path, help="the table for docs/findings/")
    ap.add_argument("--keep", type=Path, help="keep each run's report in this directory")
    args = ap.parse_args()
    chosen = commands(args.same_otp, args.same_otp_path)
    known = {c.name for c in chosen}
    try:
        repeats = _repeats(args.command or [], args.repeat)
    except ValueError as exc:
        ap.error(f"--command: {exc}")
    if not set(repeats) <= known:
        ap.error(f"--command: one of {', '.join(sorted(known))}")
    chosen = tuple(c for c in chosen if not repeats or c.name in repeats)
    times = {c.name: repeats.get(c.name, args.repeat) for c in chosen}
    if args.hogs and args.hog == "stress-ng" and shutil.which("stress-ng") is None:
        ap.error("stress-ng is not installed: apt-get install stress-ng, or --hog loop")
    started_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    runs: list[Run] = []
    t0 = time.monotonic()
    with hogs(args.hogs, args.hog, args.pin) as what, tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        load_start = os.getloadavg()
        for index in range(1, max(times.values(), default=0) + 1):
            for command in chosen:
                if index > times[command.name]:
                    continue
                run = run_one(command, index, args.bridge_arg, where)
                runs.append(run)
                print(_progress(run), file=sys.stderr, flush=True)
        load_end = os.getloadavg()
    minutes = (time.monotonic() - t0) / 60
    setup = {
        "machine": machine(),
        "hogs": what,
        "date": started_at,
        "load average (1, 5, 15 min)": f"{_triple(load_start)} at the start,"
        f" {_triple(load_end)} at the end",
        "commands": "; ".join(f"`crypto-bridge {' '.join(c.argv)}`" for c in chosen)
        + (f" (and {' '.join(args.bridge_arg)})" if args.bridge_arg else ""),
        "runs": ", ".join(f"{times[c.name]} {c.name}" for c in chosen)
        + f", interleaved, {minutes:.1f} min in all",
    }
    text = markdown(runs, setup, [c.name for c in chosen])
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        rows = [asdict(r) for r in runs]
        args.json.write_text(json.dumps({"setup": setup, "runs": rows}, indent=1) + "\n")
    return 0


def _repeats(named: Sequence[str], default: int) -> dict[str, int]:
    """--command NAME or NAME:N, as {NAME: N} (N the --repeat default)."""
    out = {}
    for spec in named:
        name, _, n = spec.partition(":")
        if n and (not n.isdigit() or int(n) < 1):
            raise ValueError(f"{spec}: N must be a whole number of runs, 1 or more")
        out[name] = int(n) if n else default
    return out


def _triple(load: Sequence[float]) -> str:
    return ", ".join(f"{x:.1f}" for x in load)


def _progress(run: Run) -> str:
    head = f"{run.command} run {run.index}: {run.seconds:.0f} s, load {run.load_before:.1f}"
    if run.error:
        return f"{head}: failed: {run.error}"
    words = collections.Counter(v.verdict for v in run.verdicts)
    sig = sum(c.sig for c in run.comparisons)
    return f"{head}, others {run.others_cpus} CPUs: {dict(words)}; sig between identical: {sig}"


if __name__ == "__main__":
    sys.exit(main())
