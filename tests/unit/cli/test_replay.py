"""bridge.cli.replay: matching a report's runtimes to this machine's, the
variables a report may hand on, the settings' bounds and the escaping of
what a report says (the processes: tests/cli/test_replay_safety.py)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import click
import pytest

from bridge.cli import replay
from bridge.cli.replay import Candidate, Local, _printable
from bridge.cli.run import run
from bridge.errors import UsageError
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.settings import BOUNDS
from bridge.system import proc, runenv


def rt(rid: str, kind: str, version: str, exe: str = "/bin/sh", env=None, hw=Hw.ON, **details):
    env = {"OPENSSL_ia32cap": None, "OPENSSL_armcap": None, **(env or {})}
    return schema.Runtime(rid, kind, exe, version, {"env": env, **details}, hw)


ERLS = [
    Candidate("/usr/lib/erlang/bin/erl", "25.2.3", default=True),
    Candidate("/opt/otp23a/bin/erl", "23.1"),
    Candidate("/opt/otp23b/bin/erl", "23.2.6"),
]


def test_printable_escapes_controls_bidi_and_c1():
    assert _printable("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07"
    assert _printable("x\u202ey\u2066z\x9b") == "x\\u202ey\\u2066z\\x9b"
    assert _printable("\x7f\n\r\t") == "\\x7f\\x0a\\x0d\\x09"
    assert _printable("ok é 你好") == "ok é 你好"
    assert _printable("y" * 300, 10) == "y" * 10 + "..."


def test_erlang_matches_the_exact_release_then_the_major_then_the_default():
    local = Local(erlang=ERLS)
    wanted = [
        rt("erlang@23.2.6", "erlang", "OTP 23.2.6", otp_version="23.2.6"),
        rt("erlang@23.3", "erlang", "OTP 23.3", otp_version="23.3"),
        rt("erlang@27.1", "erlang", "OTP 27.1", otp_version="27.1"),
    ]
    got = replay.match("erlang", wanted, local)
    assert [m.path for m in got] == [
        "/opt/otp23b/bin/erl",  # exact
        "/opt/otp23a/bin/erl",  # same major, not yet used
        "/usr/lib/erlang/bin/erl",  # none: the default, said so
    ]
    assert got[0].line == "replay: erlang@23.2.6 (report) -> /opt/otp23b/bin/erl (OTP 23.2.6)"
    assert got[2].line == (
        "replay: erlang@27.1 (report) -> no OTP 27 here; using erl on PATH,"
        " /usr/lib/erlang/bin/erl (OTP 25.2.3)"
    )
    assert all(m.runs for m in got)


def test_two_report_runtimes_on_one_local_runtime_run_it_once():
    local = Local(erlang=ERLS[:1])
    wanted = [
        rt("erlang@25.2.3", "erlang", "OTP 25.2.3", otp_version="25.2.3"),
        rt("erlang@23.2.6", "erlang", "OTP 23.2.6", otp_version="23.2.6"),
    ]
    first, second = replay.match("erlang", wanted, local)
    assert first.runs and not second.runs
    assert second.line.endswith("(OTP 25.2.3), which already runs for erlang@25.2.3")
    assert "no OTP 23 here" in second.line


def test_no_runtime_at_all_is_said():
    (m,) = replay.match(
        "openssl", [rt("openssl@1.1.1w", "openssl", "OpenSSL 1.1.1w")], Local(openssl=[])
    )
    assert not m.runs and m.line.endswith("no OpenSSL 1.1 here, and no openssl on PATH")


def test_python_asks_the_others_only_when_this_one_is_not_the_version(monkeypatch):
    asked = []

    def fake_run(argv, timeout):
        asked.append(argv[0])
        return __import__("subprocess").CompletedProcess(argv, 0, b"3.12.1\n", b"")

    monkeypatch.setattr(replay, "_on_path", lambda pattern: ["/usr/bin/python3.12"])
    monkeypatch.setattr(replay.platform, "python_version", lambda: "3.11.7")
    local = Local(run=fake_run)
    (m,) = replay.match("python", [rt("python@3.11.7", "python", "Python 3.11.7")], local)
    assert m.path is None and asked == []  # this Python: nothing started
    (m,) = replay.match("python", [rt("python@3.12.1", "python", "Python 3.12.1")], local)
    assert m.path == "/usr/bin/python3.12" and asked == ["/usr/bin/python3.12"]
    assert m.line == "replay: python@3.12.1 (report) -> /usr/bin/python3.12 (Python 3.12.1)"


def test_a_python_that_cannot_import_bridge_is_no_candidate(monkeypatch):
    def fake_run(argv, timeout):
        assert "import bridge.pyworker.worker" in argv[-1]
        return __import__("subprocess").CompletedProcess(argv, 1, b"3.12.1\n", b"no bridge")

    monkeypatch.setattr(replay, "_on_path", lambda pattern: ["/usr/bin/python3.12"])
    assert [c.path for c in Local(run=fake_run).candidates("python")] == [None]


def test_openssl_matches_flavour_and_series():
    local = Local(
        openssl=[
            Candidate("/usr/bin/openssl", "OpenSSL 3.0.19", default=True),
            Candidate("/opt/ssl11/bin/openssl", "OpenSSL 1.1.1t"),
        ]
    )
    wanted = [
        rt("openssl@1.1.1w", "openssl", "OpenSSL 1.1.1w  11 Sep 2023"),
        rt("openssl@3.5.0", "openssl", "OpenSSL 3.5.0 8 Apr 2025 (Library: x)"),
        rt("openssl@x", "openssl", "LibreSSL 3.0.2"),
    ]
    a, b, c = replay.match("openssl", wanted, local)
    assert a.line == "replay: openssl@1.1.1w (report) -> /opt/ssl11/bin/openssl (OpenSSL 1.1.1t)"
    assert b.line.startswith("replay: openssl@3.5.0 (report) -> no OpenSSL 3.5 here; using openssl")
    assert "no LibreSSL 3.0 here" in c.line and not c.runs  # the default already runs for b


def test_report_env_allows_only_known_harmless_variables():
    kept, dropped = runenv.from_report(
        {
            "PYTHONHASHSEED": "0",
            "OPENSSL_ia32cap": None,
            "ERL_AFLAGS": "-eval x",
            "ERL_LIBS": "/x",
            "ERLANG_X": "1",
            "LD_PRELOAD": "/x.so",
            "LD_LIBRARY_PATH": "/x",
            "PYTHONPATH": "/x",
            "OPENSSL_CONF": "/x",
            "OPENSSL_MODULES": "/x",
            "SSL_CERT_FILE": "/x",
            "GCONV_PATH": "/x",
            "BASH_ENV": "/x",
            "PATH": "/x",
            "NODE_OPTIONS": "--require x",
            "SOMETHING_NEW": "1",
        }
    )
    assert kept == {"PYTHONHASHSEED": "0"}
    why = dict(dropped)
    assert set(why) == {
        "ERL_AFLAGS", "ERL_LIBS", "ERLANG_X", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH",
        "OPENSSL_CONF", "OPENSSL_MODULES", "SSL_CERT_FILE", "GCONV_PATH", "BASH_ENV", "PATH",
        "NODE_OPTIONS", "SOMETHING_NEW",
    }  # fmt: skip
    assert "Erlang VM" in why["ERL_LIBS"] and "loader" in why["LD_PRELOAD"]
    assert "Python" in why["PYTHONPATH"] and "OpenSSL" in why["OPENSSL_MODULES"]
    assert "harmless" in why["SOMETHING_NEW"]
    # An allowed name with a value it does not take, or not a string.
    for bad in ("0; rm -rf ~", 0, "1" * 11):
        kept, dropped = runenv.from_report({"PYTHONHASHSEED": bad})
        assert kept == {} and dropped[0][0] == "PYTHONHASHSEED"


def test_erlang_env_drops_flag_variables_whoever_gives_them(monkeypatch):
    monkeypatch.setenv("ERL_FLAGS", "-sname a")
    env = proc.erlang_env({"ERL_AFLAGS": "-sname b", "ERL_ZFLAGS": "-eval x", "KEEP": "1"})
    assert not {"ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS"} & set(env) and env["KEEP"] == "1"
    assert env["PATH"] == os.environ["PATH"]


def _report(**settings) -> schema.Report:
    return schema.Report(
        bridge_version="x",
        created="",
        command=[],
        reproduce="bridge run x; rm -rf ~",
        settings={"seed": 3, **settings},
        environment={},
        scenarios=(
            {
                "name": "sha256",
                "kind": "hash",
                "digest": "sha256",
                "sizes": [16],
                "description": "sha256",
                "calls": {"python": ["hashlib"]},
            },
        ),
        runtimes=(
            rt("python@3.11.7", "python", "Python 3.11.7", "/evil.sh", {"PYTHONPATH": "/x"}),
        ),
        results=(),
    )


HERE = Local(python=[Candidate(None, "3.11.7", True, "/here/python")])


def test_default_replay_runs_this_machines_runtime_without_the_reports_variables():
    got = replay.from_report(_report(samples=6), Path("r.json"), (), local=HERE)
    assert got.plan.python == (None,) and got.plan.env["python"] == ({},)
    assert got.plan.settings.samples == 6 and got.plan.seed == 3
    assert got.mapping == ["replay: python@3.11.7 (report) -> /here/python (Python 3.11.7)"]
    assert got.warnings == [
        "python@3.11.7: PYTHONPATH from the report is not replayed: it changes what Python"
        " loads or runs at start-up"
    ]
    assert got.recorded == []
    # The new report's reproduce line is this run, not the report's own text.
    assert got.plan.reproduce == "crypto-bridge run --replay r.json"


def test_as_recorded_lists_the_reports_executable():
    report = _report()
    report = dataclasses.replace(
        report, runtimes=(dataclasses.replace(report.runtimes[0], executable="/bin/sh"),)
    )
    got = replay.from_report(report, Path("r.json"), (), as_recorded=True, local=HERE)
    assert got.plan.python == ("/bin/sh",) and got.plan.env["python"] == ({},)
    assert got.recorded == ["python@3.11.7: /bin/sh, with no variables of its own"]
    assert got.mapping == ["replay: python@3.11.7 (report) -> /bin/sh (as recorded)"]
    assert got.plan.reproduce == "crypto-bridge run --replay r.json --as-recorded"


def test_every_bound_is_the_click_options_range():
    """One table for the command line and for --replay (bridge.settings.BOUNDS)."""
    by_flag = {o: p for p in run.params for o in p.opts}
    for name, bound in BOUNDS.items():
        if not bound.option:
            continue
        if name == "until_stable":  # a flag; --until-stable=CI is read by until_stable_target
            from bridge.cli.run import until_stable_target

            assert until_stable_target(f"{bound.low * 100}%") == pytest.approx(bound.low)
            assert until_stable_target(f"{bound.high * 100}%") == pytest.approx(bound.high)
            for outside in (f"{bound.low * 50}%", f"{bound.high * 101}%"):
                with pytest.raises(UsageError, match="the target must be from"):
                    until_stable_target(outside)
            continue
        if name == "memory_limit_mib":  # a size with K/M/G, read by parse_memory_limit
            from bridge.cli.plans import parse_memory_limit

            assert parse_memory_limit(f"{int(bound.low)}M") == bound.low
            assert parse_memory_limit(f"{int(bound.high) >> 10}G") == bound.high
            for outside in (f"{int(bound.low) - 1}M", f"{(int(bound.high) >> 10) + 1}G", "4X"):
                with pytest.raises(UsageError, match="--memory-limit: .* is not a size from"):
                    parse_memory_limit(outside)
            continue
        t = by_flag[bound.option].type
        assert isinstance(t, click.IntRange if bound.integer else click.FloatRange), name
        assert (t.min, t.max) == (bound.low, bound.high), name


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"timeout_slack_s": -1000}, "settings.timeout_slack_s: -1000 is not a number in 1..3600"),
        ({"timeout_slack_s": float("inf")}, "settings.timeout_slack_s: inf is not a number"),
        ({"seed": -1}, "settings.seed: -1 is not an integer in 0.."),
        (
            {"until_stable": 0.9},
            "settings.until_stable: 0.9 is not a number in 0.001..0.5 (or null)",
        ),
        ({"tc_calls": 2}, "settings.tc_calls: 2 is not an integer in 3..100000000 (or null)"),
    ],
)
def test_bad_settings_are_one_line(settings, message):
    with pytest.raises(UsageError) as caught:
        replay.from_report(_report(**settings), Path("r.json"), (), local=HERE)
    text = caught.value.one_line()
    assert message in text and "\x1b" not in text


@pytest.mark.parametrize(
    "settings, message",
    [
        (
            {"samples": "abc"},
            "r.json: malformed bridge report (settings: samples: expected an integer",
        ),
        ({"samples": False}, "settings: samples: expected an integer, got a boolean"),
        ({"seed": "abc"}, "settings: seed: expected an integer, got a string"),
        ({"samples": "\x1b[2J"}, "settings: samples: expected an integer, got a string"),
    ],
)
def test_settings_of_another_type_are_one_line_when_read(settings, message):
    """The typed settings refuse a value of another type as the report is
    read, before a replay sees it, in one line that never echoes it."""
    data = _report().to_json()
    data["settings"].update(settings)
    with pytest.raises(UsageError) as caught:
        schema.Report.from_json(data, "r.json")
    text = caught.value.one_line()
    assert message in text and "\x1b" not in text


def test_good_settings_keep_their_types():
    got = replay.from_report(
        _report(timeout_slack_s=30, until_stable=None, tc_calls=None, quick=True),
        Path("r.json"),
        (),
        local=HERE,
    )
    s = got.plan.settings
    assert s.timeout_slack_s == 30.0 and isinstance(s.timeout_slack_s, float) and s.quick


def test_node_refusal_rebuilds_the_command_from_checked_names():
    nodes = [schema.Runtime("a", "erlang", n, "OTP 25", {"node": {}}) for n in ("t25@vm", "b@h")]
    scenarios = [replay.scenario.load("hmac-sha1")]
    assert replay.node_refusal(nodes, scenarios) == (
        "running nodes (t25@vm, b@h), which --replay does not measure again;"
        " rerun with: crypto-bridge run hmac-sha1 --node t25@vm --node b@h --measure"
    )
    bad = [schema.Runtime("a", "erlang", "x@h; rm -rf ~\x1b[2J", "OTP 25", {"node": {}})]
    text = replay.node_refusal(bad, scenarios)
    assert "\x1b" not in text and "rerun with" not in text
    assert "x@h; rm -rf ~\\x1b[2J (not a node name)" in text
