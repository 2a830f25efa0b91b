"""`bridge run` end to end: a real Erlang node, a real Python worker and the
real openssl, through the CLI in a subprocess."""

from __future__ import annotations

import hmac
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bridge.catalog import inputs
from tests.conftest import (
    FAST_ARGS,
    ROOT,
    bridge_cmd,
    needs_erl,
    needs_openssl,
    read_until,
    wait_gone,
    worker_pids,
)

pytestmark = [needs_erl, needs_openssl]


def load(path):
    return json.loads(path.read_text())


def _path_without(tmp_path, *programs):
    """A PATH with the usual tools but not `programs`."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("erl", "erlc", "openssl"):
        found = shutil.which(name)
        if found and name not in programs:
            (bindir / name).symlink_to(found)
    return str(bindir)


def _default_signals() -> None:
    """In the child: the signals a test sends at their default dispositions.
    A background job of a non-interactive shell starts with SIGINT ignored,
    and one under nohup with SIGHUP ignored; bridge keeps a signal it started
    with ignored, so the test would test nothing."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@pytest.fixture
def start_bridge():
    """Start `bridge run hmac-sha1 ARGS -o OUT` in the background; a test that
    fails half-way still does not leave it running."""
    started = []

    def start(*args, out):
        proc = subprocess.Popen(
            [sys.executable, "-m", "bridge", "run", "hmac-sha1", *args, "-o", str(out)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_signals,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        pid = _parent(pid)
        if pid == ancestor:
            return True
    return False


def _wait_for_worker(kind: bytes, proc: subprocess.Popen, timeout=30.0) -> int:
    """The PID of a worker that `proc` started: not a node of an earlier test
    still shutting down (same cache directory, so worker_pids lists it), nor a
    copy of a worker's command line gone within milliseconds: a fork the node
    makes before it execs erl_child_setup, or a subshell the erl script forks
    for $(dirname "$0") (CI read a vanished /proc entry, and killed none)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = {}
        for pid in worker_pids():
            try:
                found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
        for pid, cmdline in found.items():
            if kind in cmdline and _parent(pid) not in found and _descends_from(pid, proc.pid):
                return pid
        if proc.poll() is not None:
            raise AssertionError(f"bridge exited {proc.returncode} before its worker started")
        time.sleep(0.05)
    raise AssertionError("worker did not start")


def _wait_for_cpu(pid: int, seconds: float, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Until process `pid` has used `seconds` of CPU time (user + system)."""
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            _, stderr = proc.communicate(timeout=60)
            raise AssertionError(
                f"worker {pid} exited before using {seconds} s of CPU; bridge exited "
                f"{proc.returncode}: {stderr[-2000:]}"
            ) from None
        if (int(fields[11]) + int(fields[12])) / tick >= seconds:
            return
        time.sleep(0.02)
    raise AssertionError(f"worker {pid} did not use {seconds} s of CPU in {timeout} s")


def test_run_hmac_sha1_end_to_end(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd("run", "hmac-sha1", *FAST_ARGS, "--seed", "7", "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = load(out)
    assert report["schema"] == "bridge.report/1"
    assert {rt["kind"] for rt in report["runtimes"]} == {"erlang", "python", "openssl"}
    erl = next(rt for rt in report["runtimes"] if rt["kind"] == "erlang")
    assert erl["otp_release"] and erl["crypto_lib"].startswith("OpenSSL")
    # Every runtime computed the MAC Python's hmac computes here, on the
    # inputs the seed regenerates.
    data = inputs.make(7, "hmac-sha1", 20, 1000)
    expected = hmac.digest(data.key, data.data, "sha1")[:10].hex()
    results = report["results"]
    assert {r["runtime"].split("@")[0] for r in results} == {"erlang", "python", "openssl"}
    for r in results:
        assert r["status"] == "ok"
        assert r["output_hex"] == expected, r["call"]
        assert r["inputs"] == {"key_hex": data.key.hex(), "data_hex": data.data.hex()}
        assert r["ns_per_op"]["ci95"][0] <= r["ns_per_op"]["median"] <= r["ns_per_op"]["ci95"][1]
        assert r["ops_per_s"] > 0 and r["bytes_per_s"] == pytest.approx(r["ops_per_s"] * 1000)
        assert len(r["samples"]) >= 1
    assert report["interop"][0]["match"] is True
    assert report["errors"] == [] and report["skipped"] == []
    assert report["reproduce"].startswith("crypto-bridge run hmac-sha1 --seed 7")
    calls = {r["call"] for r in results}
    assert "crypto:macN(hmac, sha, Key, Data, 10)" in calls
    assert "hmac.digest(key, data, 'sha1')[:10]" in calls
    # The table's legend says, beside the numbers, that openssl speed reuses its key.
    flat = " ".join(done.stdout.split())  # prose wrapped to the width
    assert "openssl speed sets the key once" in flat
    assert "Warning: not like for like" in flat  # reused key beside one-shot
    assert re.search(r"erlang@2\d\.\S* \(OpenSSL \d", flat)  # the OTP and its libcrypto


def test_report_env_holds_only_bridge_variables(tmp_path):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST_ARGS,
        "--runtimes",
        "python",
        "-o",
        str(out),
        env={"MY_SECRET_TOKEN": "hunter2"},
    )
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in out.read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no-such-scenario"], "unknown scenario"),
        (["run", "hmac-sha1", "--erl", "/no/such/erl"], "no such file"),
        (["run", "hmac-sha1", "--erl", "/tmp"], "directory"),
        (["run", "hmac-sha1", "--erl", "/bin/true"], "not an Erlang installation"),
        (["run", "hmac-sha1", "--samples", "0"], "--samples"),
        (["run", "hmac-sha1", "--samples", "many"], "--samples"),
        (["run", "hmac-sha1", "--runtimes", "perl"], "unknown runtime"),
        (["run", "hmac-sha1", "-o", "/no/such/dir/r.json"], "does not exist"),
        (["run", "hmac-sha1", "--bogus"], "--bogus"),
        (["run"], "name a scenario"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    done = bridge_cmd(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_missing_openssl_is_skipped_and_others_run(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST_ARGS,
        "-o",
        str(out),
        env={"PATH": _path_without(tmp_path, "openssl")},
    )
    assert done.returncode == 0, done.stderr
    report = load(out)
    assert [s["kind"] for s in report["skipped"]] == ["openssl"]
    assert "apt-get install openssl" in report["skipped"][0]["reason"]
    assert {r["runtime"].split("@")[0] for r in report["results"]} == {"erlang", "python"}
    assert "Skipped openssl: openssl not found on PATH" in " ".join(done.stdout.split())


def test_missing_erl_names_install_command_and_option(tmp_path):
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST_ARGS,
        "--runtimes",
        "erlang",
        env={"PATH": _path_without(tmp_path, "erl", "erlc")},
    )
    assert done.returncode == 1
    assert "apt-get install erlang" in done.stderr and "--erl" in done.stderr
    assert "Traceback" not in done.stderr


def test_erlang_without_crypto_says_so(tmp_path):
    # erlang-base without erlang-crypto, emulated without touching the system:
    # a wrapper erl that drops crypto's ebin from the code path before the
    # worker starts.
    real = shutil.which("erl")
    wrapper_dir = tmp_path / "otp" / "bin"
    wrapper_dir.mkdir(parents=True)
    wrapper = wrapper_dir / "erl"
    hide_crypto = "code:del_path(filename:dirname(code:which(crypto)))"
    wrapper.write_text(f"#!/bin/sh\nexec {real} -eval '{hide_crypto}' \"$@\"\n")
    wrapper.chmod(0o755)
    (wrapper_dir / "erlc").symlink_to(shutil.which("erlc"))
    done = bridge_cmd("run", "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "--erl", str(wrapper))
    assert done.returncode == 1
    assert "crypto" in done.stderr and "erlang-crypto" in done.stderr
    assert "Traceback" not in done.stderr


# Not serial: the kill waits for the node's own CPU time (0.8 s: booted and
# measuring), which load delays but does not move within the run.
def test_worker_killed_mid_run_keeps_other_results(tmp_path, start_bridge, no_leftovers):
    out = tmp_path / "r.json"
    before = worker_pids()
    proc = start_bridge(
        # One node: the test kills the one that measures (a spare is another case).
        "--processes",
        "1",
        "--samples",
        "100",
        "--sample-ms",
        "20",
        "--warmup-ms",
        "5",
        "--openssl-runs",
        "1",
        "--hw",
        "on",
        out=out,
    )
    beam = _wait_for_worker(b"bridge_worker\x00main", proc)
    # Mid-run, not mid-start: on a cold machine a node 0.5 s old could still be
    # booting (then it is a runtime that did not start, another case). A node
    # that has used 0.8 s of CPU has booted (0.2-0.4 s) and measured, and its
    # cell's 2 s of samples are spread over the whole run.
    _wait_for_cpu(beam, 0.8, proc)
    os.kill(beam, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    report = load(out)
    assert any(
        e["runtime"].startswith("erlang") and "killed by signal 9" in e["message"]
        for e in report["errors"]
    )
    by_kind = {r["runtime"].split("@")[0]: r for r in report["results"]}
    # The others finished; erlang keeps only the batches it finished before the kill.
    assert len(by_kind["python"]["samples"]) == 100
    assert len(by_kind["openssl"]["samples"]) == 1
    assert len(by_kind.get("erlang", {}).get("samples", [])) < 100
    assert "killed by signal 9" in " ".join(stdout.split())  # wrapped to the width
    (line,) = [line for line in stderr.splitlines() if line.startswith("bridge: error:")]
    assert line.startswith("bridge: error: erlang") and "killed by signal 9" in line
    assert not wait_gone(worker_pids() - before)


STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def _drain(fd: int, stop: threading.Event) -> None:
    while not stop.is_set():
        if select.select([fd], [], [], 0.1)[0]:
            try:
                os.read(fd, 1 << 16)
            except OSError:
                return


# Not serial: the signal follows the run's own progress line, not a delay.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_interrupt_saves_report_and_leaves_no_process(tmp_path, start_bridge, sig):
    # 200 samples of 20 ms, in rounds: once round 1 is done (its progress
    # line, however long a busy machine made it take), every runtime has a
    # finished batch to keep, and the other rounds are still to come.
    out = tmp_path / "r.json"
    before = worker_pids()
    proc = start_bridge(
        "--processes", "1", "--samples", "200", "--sample-ms", "20", "--hw", "on", out=out
    )
    head = read_until(proc, " of hmac-sha1 done")
    assert "round 1/" in head, head
    proc.send_signal(sig)
    _, rest = proc.communicate(timeout=60)
    stderr = head + rest
    assert proc.returncode == STATUS[sig], stderr
    assert "Traceback" not in stderr
    report = load(out)
    assert any(e["kind"] == "interrupted" for e in report["errors"])
    erlang = [r for r in report["results"] if r["runtime"].startswith("erlang")]
    assert erlang, "the finished erlang batch was lost"
    assert 0 < len(erlang[0]["samples"]) < 200
    assert not wait_gone(worker_pids() - before)
    errors = [line for line in stderr.splitlines() if line.startswith("bridge: error:")]
    if sig == signal.SIGHUP:  # nobody may be watching: one line says why it stopped
        assert errors == [
            "bridge: error: hangup (SIGHUP: the terminal or session closed): the run was"
            f" stopped; the report is in {out}"
        ], stderr
    else:
        assert errors == [], stderr


@pytest.mark.serial  # the hangup is timed against the rounds
@pytest.mark.parametrize("with_output", [True, False], ids=["-o", "no -o"])
def test_a_closed_terminal_keeps_the_results(tmp_path, with_output):
    """bridge on a terminal of its own (a pty, its controlling terminal)
    that closes mid-run: the kernel sends SIGHUP, and every later write to
    the terminal fails. The report is written to -o, or, with no -o, kept
    in a file of its own (its results had only that terminal to go to); the
    status is 129 and nothing is left running."""
    import fcntl
    import pty
    import termios

    from bridge.system import cache

    out = tmp_path / "r.json"
    unsaved = cache.root() / "unsaved"  # this session's (BRIDGE_CACHE_DIR)
    kept_before = set(unsaved.glob("report-*.json"))
    leader, follower = pty.openpty()

    def own_terminal() -> None:
        _default_signals()
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    args = ["--processes", "1", "--samples", "200", "--sample-ms", "20", "--hw", "on"]
    before = worker_pids()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bridge", "run", "hmac-sha1", *args]
        + (["-o", str(out)] if with_output else []),
        cwd=ROOT,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        preexec_fn=own_terminal,
    )
    os.close(follower)
    # What bridge writes to its terminal is read, as a terminal would.
    stop = threading.Event()
    reader = threading.Thread(target=_drain, args=(leader, stop))
    reader.start()
    try:
        _wait_for_worker(b"-m\x00bridge.pyworker.worker", proc)  # every runtime is up
        time.sleep(2.5)
    finally:
        stop.set()
        reader.join()
        os.close(leader)  # the terminal closes: SIGHUP
        try:
            assert proc.wait(timeout=60) == 129
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if with_output:
        text = out.read_text()
    else:
        (kept,) = set(unsaved.glob("report-*.json")) - kept_before
        text = kept.read_text()
        kept.unlink()
    report = json.loads(text)
    assert any(e["kind"] == "interrupted" for e in report["errors"])
    erlang = [r for r in report["results"] if r["runtime"].startswith("erlang")]
    assert erlang and 0 < len(erlang[0]["samples"]) < 200
    assert not wait_gone(worker_pids() - before)


def test_two_erl_installations_side_by_side(tmp_path, no_leftovers):
    # The same OTP reached by two paths: two runtimes, rows grouped, ratio to
    # the first named, each provenance recorded.
    real = str(Path(shutil.which("erl")).resolve())
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST_ARGS,
        "--runtimes",
        "erlang",
        "--erl",
        shutil.which("erl"),
        "--erl",
        real,
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = load(out)
    ids = [rt["id"] for rt in report["runtimes"]]
    assert len(ids) == 2 and ids[1] == ids[0] + "#2"
    assert [rt["executable"] for rt in report["runtimes"]] == [shutil.which("erl"), real]
    assert all(rt["otp_version"] for rt in report["runtimes"])
    assert "× first named" in done.stdout
    assert "1.00×" in done.stdout


def test_otp_list_command():
    done = bridge_cmd("otp", "list")
    assert done.returncode == 0 and "OTP" in done.stdout
    data = json.loads(bridge_cmd("otp", "list", "--format", "json").stdout)
    assert any(item["crypto"] for item in data)


def test_unknown_otp_group_is_a_usage_error():
    done = bridge_cmd("run", "hmac-sha1", "--erl", "otp:3")
    assert done.returncode == 2 and "no working OTP 3 installation" in done.stderr


def test_every_run_option_has_a_plan_field():
    # `bridge run` hands its options to plans.RunOptions by name.
    import dataclasses

    from bridge.cli.plans import RunOptions
    from bridge.cli.run import run

    printing = {"replay", "as_recorded", "yes", "output", "fmt", "verbose", "quiet", "baseline"}
    printing |= {"progress"}  # how the run shows while it runs (bridge.cli.live)
    printing |= {"export_json", "export_markdown", "export_text", "export_html", "export_csv"}
    printing |= {"color"}  # --color: how stdout shows the view
    # --until-stable=CI and --cookie reach RunOptions as until_stable and cookie.
    options = {p.name for p in run.params} - printing - {"until_stable_target", "cookie_value"}
    assert options | {"cookie", "cookie_given"} == {f.name for f in dataclasses.fields(RunOptions)}


def test_every_command_has_help():
    for args in (
        ["--help"],
        ["run", "--help"],
        ["report", "--help"],
        ["compare", "--help"],
        ["plot", "--help"],
        ["import-speed", "--help"],
        ["env", "--help"],
        ["otp", "list", "--help"],
        ["list", "--help"],
        ["show", "--help"],
    ):
        done = bridge_cmd(*args)
        assert done.returncode == 0 and "Usage:" in done.stdout, args
        # Grouped options and examples, in every command's --help.
        assert "\nExamples:\n  bridge " in done.stdout, args
        if args != ["--help"]:
            assert "\nOutput:\n" in done.stdout or "\nPictures:\n" in done.stdout, args


def test_one_format_vocabulary():
    """The same --format choices, in the same order, wherever a report is
    rendered; table and json where a command lists or describes."""
    from bridge.cli.main import cli

    def choices(*path):
        cmd = cli
        for name in path:
            cmd = cmd.commands[name]
        (fmt,) = [p for p in cmd.params if p.name == "fmt"]
        return tuple(fmt.type.choices)

    for path in (("run",), ("time",), ("report",), ("compare",), ("import-speed",)):
        assert choices(*path) == ("table", "markdown", "text", "json", "summary", "html"), path
    for path in (("list",), ("show",), ("env",), ("otp", "list")):
        assert choices(*path) == ("table", "json"), path
    # -o is the JSON everywhere it is offered; plot draws with --png/--svg.
    for name in ("run", "time", "report", "compare", "import-speed"):
        (o,) = [p for p in cli.commands[name].params if p.name == "output"]
        assert "-o" in o.opts and "JSON" in o.help, name
    plot_opts = {p.name: p for p in cli.commands["plot"].params}
    assert plot_opts["output"].hidden and {"png", "svg"} <= set(plot_opts)


def test_the_report_never_records_a_cookie():
    from bridge.cli.common import redact

    line = [
        "run",
        "x",
        "--node",
        "a",
        "--cookie",
        "s3cret",
        "--cookie=s3cret",
        "--cookie-file",
        "f",
    ]
    shown = redact(line)
    assert "s3cret" not in " ".join(shown)
    assert shown == [
        "run",
        "x",
        "--node",
        "a",
        "--cookie",
        "HIDDEN",
        "--cookie=HIDDEN",
        "--cookie-file",
        "f",
    ]


def test_the_recorded_command_names_the_program_people_type(monkeypatch):
    """However bridge was started (python -m bridge, a venv's path), a
    report's command starts with crypto-bridge, the name the README types
    (plain `bridge` is iproute2's on Debian), and never holds a cookie."""
    from bridge.cli.common import recorded_command

    monkeypatch.setattr("sys.argv", ["/x/.venv/bin/bridge", "run", "hmac-sha1", "--cookie", "k"])
    assert recorded_command() == ("crypto-bridge", "run", "hmac-sha1", "--cookie", "HIDDEN")
