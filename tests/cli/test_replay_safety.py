"""A report from someone else is data, never code (issue 22): `--replay` of
crafted reports, with real processes. Each crafted report starts from a
real one; what it asks for would leave a marker file, a listening socket or
an epmd behind if it ran."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bridge.report import schema
from tests.conftest import FIXTURES, ROOT, bridge_cmd, needs_erl, needs_openssl, worker_pids
from tests.integration.test_workers import _listening_inodes

pytestmark = [needs_erl, needs_openssl]

SHORT = [
    "--samples", "6", "--sample-ms", "2", "--rounds", "2", "--warmup-ms", "0",
    "--openssl-runs", "1", "--hw", "on",
]  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> dict:
    """A real report of erlang, python and openssl (hmac-sha1, hw on)."""
    out = tmp_path_factory.mktemp("base") / "r.json"
    done = bridge_cmd("run", "hmac-sha1", *SHORT, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _craft(base: dict, path: Path, **by_kind) -> Path:
    """The base report with each kind's runtimes changed: env added, or
    another executable."""
    data = json.loads(json.dumps(base))
    for rt in data["runtimes"]:
        change = by_kind.get(rt["kind"], {})
        rt["env"] = {**rt["env"], **change.get("env", {})}
        rt["executable"] = change.get("executable", rt["executable"])
    path.write_text(json.dumps(data))
    return path


def _erl_marker_expr(marker: Path) -> str:
    # erlexec strips quotes from ERL_*FLAGS: the path as a list of bytes.
    return f"file:write_file([{','.join(str(b) for b in bytes(marker))}],<<>>)"


def _tagged(canary: str) -> dict[int, str]:
    """The processes started with our canary in their environment: pid -> comm."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if canary.encode() in (entry / "environ").read_bytes():
                    found[int(entry.name)] = (entry / "comm").read_text().strip()
            except OSError:
                pass
    return found


def _watched(*args: str, stdin=subprocess.DEVNULL) -> tuple[subprocess.CompletedProcess, set]:
    """Run bridge, watching every process it starts (each carries a canary
    variable): their names, and whether any of them listens on a socket."""
    canary = f"BRIDGE_REPLAY_CANARY={uuid.uuid4().hex}"
    env = dict(os.environ, **dict([canary.split("=")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bridge", *args],
        cwd=ROOT,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    names: set[str] = set()
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            for pid, comm in _tagged(canary).items():
                if pid == proc.pid:
                    continue
                names.add(comm)
                try:
                    links = {
                        os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")
                    }
                except OSError:
                    continue
                inodes = {x[len("socket:[") : -1] for x in links if x.startswith("socket:[")}
                assert not inodes & _listening_inodes(), f"{comm} ({pid}) listens on a socket"
            time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    left = _tagged(canary)
    assert not left, f"processes outlived bridge: {left}"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), names


def test_the_crafted_erl_flags_do_run_when_erl_is_given_them(tmp_path):
    """The control: the payload the next test replays is live."""
    marker = tmp_path / "ran"
    env = dict(os.environ, ERL_AFLAGS=f"-eval {_erl_marker_expr(marker)}")
    subprocess.run(
        ["erl", "-noshell", "-s", "init", "stop"], env=env, cwd=tmp_path, timeout=30, check=True
    )
    assert marker.exists()


@pytest.mark.parametrize("mode", [[], ["--as-recorded", "--yes"]], ids=["default", "as-recorded"])
def test_replayed_erl_flags_run_nothing_open_no_listener_and_start_no_epmd(base, tmp_path, mode):
    marker = tmp_path / "ran"
    libs = tmp_path / "libs"
    report = _craft(
        base,
        tmp_path / "evil.json",
        erlang={
            "env": {
                "ERL_AFLAGS": f"-eval {_erl_marker_expr(marker)}",
                "ERL_ZFLAGS": "-sname evilnode -setcookie x",
                "ERL_FLAGS": "-name evil@127.0.0.1",
                "ERL_LIBS": str(libs),
                "LD_PRELOAD": str(tmp_path / "evil.so"),
            }
        },
    )
    again = tmp_path / "again.json"
    done, started = _watched("run", "--replay", str(report), *mode, "-o", str(again))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists(), "ERL_AFLAGS from the report ran"
    assert "epmd" not in started and "beam.smp" in started
    lines = done.stderr.splitlines()
    for name in ("ERL_AFLAGS", "ERL_ZFLAGS", "ERL_FLAGS", "ERL_LIBS", "LD_PRELOAD"):
        warned = f": {name} from the report is not replayed: "
        assert any(line.startswith("bridge: warning: erlang@") and warned in line for line in lines)
    # The new report does not carry them on: the next replay is clean.
    for rt in schema.load(again).runtimes:
        assert not {k for k in rt.details.env if k.startswith(("ERL_", "LD_"))}
    (erl,) = [rt for rt in base["runtimes"] if rt["kind"] == "erlang"]
    if mode:  # the report's own erl, listed with the (no) variables it gets
        listing = done.stderr.split("replay --as-recorded runs, from the report:\n")[1]
        assert f"  {erl['id']}: {erl['executable']}, with no variables of its own" in listing
    else:  # this machine's erl of the same release, found by discovery
        (mapped,) = [line for line in lines if line.startswith(f"replay: {erl['id']} (report) -> ")]
        assert mapped.endswith(f"/bin/erl (OTP {erl['otp_version']})"), mapped


def test_report_executables_are_not_run_by_default(base, tmp_path):
    """A python and an openssl `executable` that would leave a marker: this
    machine's runtimes run instead, and the mapping says which."""
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    evil.chmod(0o755)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    report = _craft(
        base,
        tmp_path / "evil.json",
        python={
            "executable": str(evil),
            "env": {"PYTHONPATH": str(site), "LD_PRELOAD": str(tmp_path / "x.so")},
        },
        openssl={"executable": str(evil), "env": {"OPENSSL_CONF": str(tmp_path / "x.cnf")}},
    )
    done, _ = _watched("run", "--replay", str(report), "-o", str(tmp_path / "again.json"))
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    lines = done.stderr.splitlines()
    py_version = ".".join(map(str, sys.version_info[:3]))
    assert (
        f"replay: python@{py_version} (report) -> {sys.executable} (Python {py_version})" in lines
    )
    (ossl,) = [line for line in lines if line.startswith("replay: openssl@")]
    assert f"-> {shutil.which('openssl')} (OpenSSL " in ossl
    (erl,) = [line for line in lines if line.startswith("replay: erlang@")]
    assert "(OTP " in erl
    for name in ("PYTHONPATH", "LD_PRELOAD", "OPENSSL_CONF"):
        assert f": {name} from the report is not replayed" in done.stderr
    again = schema.load(tmp_path / "again.json")
    assert str(evil) not in {rt.executable for rt in again.runtimes}


def test_as_recorded_lists_what_runs_and_still_drops_what_loads_code(base, tmp_path):
    marker = tmp_path / "ran"
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    report = _craft(
        base,
        tmp_path / "r.json",
        python={
            "executable": sys.executable,
            "env": {"PYTHONPATH": str(site), "PYTHONHASHSEED": "0"},
        },
    )
    # Without a terminal and without --yes: refused before anything runs.
    done = bridge_cmd("run", "--replay", str(report), "--as-recorded", stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("bridge: error: --as-recorded") and "--yes" in line
    done = bridge_cmd("run", "--replay", str(report), "--as-recorded", "--yes")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    listing = done.stderr.split("replay --as-recorded runs, from the report:\n")[1].splitlines()
    py = f"python@{'.'.join(map(str, sys.version_info[:3]))}"
    assert f"  {py}: {sys.executable}, with PYTHONHASHSEED=0" in listing
    assert ": PYTHONPATH from the report is not replayed" in done.stderr


def test_yes_and_as_recorded_need_their_companions(tmp_path):
    for args, needs in ((["--as-recorded"], "--replay"), (["--yes"], "--as-recorded")):
        done = bridge_cmd("run", "hmac-sha1", *args)
        assert done.returncode == 2
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("bridge: error: ") and needs in line


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("timeout_slack_s", -1000, "settings.timeout_slack_s: -1000 is not a number in 1..3600"),
        ("samples", "abc", "settings.samples: 'abc' is not an integer in 1..10000"),
        ("samples", True, "settings.samples: True is not an integer in 1..10000"),
        ("samples", 24.0, "settings.samples: 24.0 is not an integer in 1..10000"),
        ("seed", "abc", "settings.seed: 'abc' is not an integer in 0..9223372036854775807"),
        ("seed", 2**64, "settings.seed: 18446744073709551616 is not an integer in 0.."),
        ("timeout_slack_s", 1e308, "settings.timeout_slack_s: 1e+308 is not a number in 1..3600"),
        ("until_stable", float("nan"), "settings.until_stable: nan is not a number"),
        ("rounds", 10**30, "settings.rounds: 1000000000000000000000000000000 is not an"),
        ("rounds", 10**40, "settings.rounds: a 133-bit integer is not an integer in 1..1000"),
        ("quick", "yes", "settings.quick: 'yes' is not true or false"),
        ("schedulers", 0, "settings.schedulers: 0 is not an integer in 1..1024 (or null)"),
    ],
)
def test_replayed_settings_are_bounded_as_the_command_line(base, tmp_path, field, value, message):
    data = json.loads(json.dumps(base))
    data["settings"][field] = value
    report = tmp_path / "r.json"
    report.write_text(json.dumps(data))
    done = bridge_cmd("run", "--replay", str(report))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    # The report's JSON Schema (bridge/report) refuses wrong types when the
    # report is read, and so do the typed settings where the schema lets a
    # value through (24.0 is an integer to JSON Schema, not to a record); the
    # replay's own check refuses values outside the command line's bounds.
    # Either way: one line, naming the field.
    checked = (
        f"bridge: error: {report}: not a valid bridge report ($.settings.{field}: ",
        f"bridge: error: {report}: malformed bridge report (settings: {field}: ",
        f"bridge: error: {report}: not a bridge report (NaN is not a JSON number)",
    )
    assert line.startswith((f"bridge: error: {report}: {message}", *checked)), line


def test_a_bad_hw_mode_is_one_line(base, tmp_path):
    data = json.loads(json.dumps(base))
    data["hardware"]["hw"] = "\x1b[2Jx"
    (tmp_path / "r.json").write_text(json.dumps(data))
    done = bridge_cmd("run", "--replay", str(tmp_path / "r.json"))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "hardware.hw: '\\x1b[2Jx' is not one of" in line and "\x1b" not in line


def test_node_report_refusal_prints_no_escape_and_no_report_command(tmp_path):
    data = json.loads((FIXTURES / "report-nodes.json").read_text())
    data["reproduce"] = "bridge run x \x1b]0;owned\x07\x1b[2J; rm -rf ~"
    report = tmp_path / "nodes.json"
    report.write_text(json.dumps(data))
    done = bridge_cmd("run", "--replay", str(report))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "rm -rf" not in line and "\x1b" not in line
    assert line.endswith(
        "rerun with: crypto-bridge run hmac-sha1 --node t25@vm --node t23@vm --measure"
    ), line
    # Names that are not node names are escaped and left out of the command.
    for rt in data["runtimes"]:
        rt["executable"] = "t\x1b[31m@vm;\u202eid"
    report.write_text(json.dumps(data))
    done = bridge_cmd("run", "--replay", str(report))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "\x1b" not in line and "\u202e" not in line and "rerun with" not in line
    assert "t\\x1b[31m@vm;\\u202eid (not a node name)" in line


def test_as_recorded_asks_on_a_terminal_and_runs_nothing_when_declined(base, tmp_path):
    import pty

    marker = tmp_path / "ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    evil.chmod(0o755)
    report = _craft(base, tmp_path / "r.json", python={"executable": str(evil)})
    leader, follower = pty.openpty()
    try:
        os.write(leader, b"n\n")
        done = bridge_cmd("run", "--replay", str(report), "--as-recorded", stdin=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 2, done.stderr
    assert f": {evil}, with no variables of its own" in done.stderr  # listed before asking
    assert "Run these? [y/N]" in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("bridge: error: --as-recorded: not confirmed; nothing was run")
    )
    assert not marker.exists()


# -- a replay costs what the user agreed to (issue 33) ---------------------------


def _with(base: dict, path: Path, settings: dict | None = None, levels=None, slow="") -> Path:
    """The base report with other settings, levels, or a call (`slow`) that
    took a second a call there."""
    data = json.loads(json.dumps(base))
    data["settings"].update(settings or {})
    if levels is not None:
        data["scenarios"][0]["concurrency"] = levels
    for r in data["results"]:
        if r["call_id"] == slow:
            r["samples"], r["loops"] = [10**9] * len(r["samples"]), 1
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "settings, levels, message",
    [
        # The report: 256 Python worker processes, 4.9 GB.
        ({}, [1, 256], "scenarios[0] (hmac-sha1): concurrency 1,256 is more than a replay takes"
         " from a report (at most 8 levels, up to 64); type --concurrency to run more"),
        ({}, list(range(1, 10)), "concurrency 1,2,3,4,5,6,7,8,9 is more than a replay takes"),
        # The days-long report.
        ({"samples": 10000, "rounds": 1000, "sample_ms": 10000, "warmup_ms": 60000},
         None, "settings.samples: 10000 is more than a replay takes from a report (at most"
         " 2000); type --samples 10000 to run that"),
        ({"sample_ms": 10000}, None, "settings.sample_ms: 10000 is more than a replay takes"
         " from a report (at most 1000); type --sample-ms 10000 to run that"),
        ({"warmup_ms": 60000}, None, "settings.warmup_ms: 60000 is more than"),
        ({"rewarm_ms": 60000}, None, "settings.rewarm_ms: 60000 is more than a replay takes"
         " from a report (at most 1000); bridge itself sets it to 10"),
        # The 6.6-GB Erlang worker.
        ({"tc_calls": 100000000}, None, "settings.tc_calls: 100000000 is more than a replay"
         " takes from a report (at most 1000000); type --tc-calls 100000000 to run that"),
        ({"max_seconds": 86400, "until_stable": 0.01}, None, "settings.max_seconds: 86400 is"
         " more than a replay takes from a report (at most 3600); type --max-time 86400"),
        ({"samples": 2000, "rounds": 200}, None, "settings.samples x settings.rounds: 2000 x"
         " 200 is more than a replay takes from a report (at most 100,000 samples x rounds)"),
        ({"schedulers": 1024}, None, "settings.schedulers: 1024 is more than"),
        ({"processes": 16}, None, "settings.processes: 16 is more than"),
        ({"user_timeout_s": 86400}, None, "settings.user_timeout_s: 86400 is more than a"
         " replay takes from a report (at most 600); type --timeout 86400 to run that"),
        ({"memory_limit_mib": 1 << 20}, None, "settings.memory_limit_mib: 1048576 is more"
         " than a replay takes from a report (at most 16384); type --memory-limit 1048576M"),
    ],
)  # fmt: skip
def test_settings_only_a_command_line_should_set_are_capped_in_a_report(
    base, tmp_path, settings, levels, message
):
    report = _with(base, tmp_path / "r.json", settings, levels)
    before = worker_pids()
    done = bridge_cmd("run", "--replay", str(report), "--yes", timeout=60)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"bridge: error: {report}: ") and message in line, line
    assert not worker_pids() - before  # refused before anything started


@pytest.mark.parametrize(
    "settings, levels, slow, why",
    [
        # 2000 samples of a second in each of 3 worker cells, 5 openssl runs.
        (
            {"samples": 2000, "rounds": 50, "sample_ms": 1000},
            None,
            "",
            "the time is over an hour, mostly samples x sample_ms (2000 x 1000 ms) in each"
            " of 3 cells",
        ),
        # Levels up to 64: 63 more Python processes, openssl speed -multi 64.
        (
            {},
            [1, 2, 4, 8, 16, 32, 64],
            "",
            "worker processes are over 64, mostly 65 openssl processes (speed -multi at the"
            " levels 1,2,4,8,16,32,64)",
        ),
        # Settings within the caps, but a call that took a second there.
        (
            {"samples": 1000},
            None,
            "hmac.digest",
            "the time is over 10 min (the budget for a replay), mostly calls slower than"
            " sample_ms (2 ms, as the report measured them): 1000 samples in each of 1 cell",
        ),
    ],
)
def test_a_costly_replay_is_refused_without_a_terminal_or_yes(
    base, tmp_path, settings, levels, slow, why
):
    report = _with(base, tmp_path / "r.json", settings, levels, slow)
    before = worker_pids()
    done = bridge_cmd("run", "--replay", str(report), stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"bridge: error: replaying {report} would take about "), line
    assert " worker processes at once and about " in line and " of memory: " in line
    assert why in line, line
    assert line.endswith("; confirm on a terminal, or add --yes to run it")
    assert not worker_pids() - before


def test_a_costly_replay_asks_on_a_terminal_and_runs_nothing_when_declined(base, tmp_path):
    import pty

    report = _with(base, tmp_path / "r.json", {"samples": 2000, "rounds": 50, "sample_ms": 1000})
    leader, follower = pty.openpty()
    before = worker_pids()
    try:
        os.write(leader, b"n\n")
        done = bridge_cmd("run", "--replay", str(report), stdin=follower, timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith(f"replaying {report} would take about 1 h 40 min, "), lines
    assert lines[1].startswith("  the time is over an hour, mostly samples x sample_ms")
    assert "Run it? [y/N]" in done.stderr
    assert lines[-1].endswith(
        "bridge: error: --replay: the cost was not confirmed; nothing was run"
    )
    assert not worker_pids() - before


def test_yes_runs_a_replay_past_the_budget_and_says_what_it_costs(base, tmp_path):
    """Levels 1 and 17: 16 more Python processes and openssl speed -multi 17
    beside the nodes, 36 workers (the budget is 32): said, then run."""
    report = _with(base, tmp_path / "r.json", levels=[1, 17])
    again = tmp_path / "again.json"
    done, started = _watched("run", "--replay", str(report), "--yes", "-o", str(again))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    (said,) = [i for i, line in enumerate(lines) if line.startswith(f"replaying {report}")]
    assert "up to 36 worker processes at once" in lines[said]
    assert lines[said + 1].startswith("  36 worker processes are over 32, mostly ")
    levels = json.loads(again.read_text())["concurrency"]["levels"]
    assert levels == [1, 17]
