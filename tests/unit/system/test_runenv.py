"""--env NAME=VALUE: bound to the runtime option before it, given to that
runtime's processes only, recorded for it alone, and kept by the reproduce
line and by --replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.cli import plans, replay
from bridge.errors import UsageError
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.runtimes.erlang import ErlangRuntime
from bridge.runtimes.openssl import OpensslRuntime
from bridge.runtimes.python import PythonRuntime
from bridge.system import libcrypto, otp, runenv
from bridge.system.libcrypto import Directory
from tests.conftest import FAST


def test_each_env_binds_to_the_runtime_option_before_it():
    order = ["scenarios", "erl", "env", "env", "erl", "python", "env", "samples", "erl", "env"]
    given = runenv.bind(order, ["A=1", "B=x=y", "C=", "D=4"])
    assert given == (
        runenv.Given("erl", 0, "A", "1"),
        runenv.Given("erl", 0, "B", "x=y"),
        runenv.Given("python", 0, "C", ""),
        runenv.Given("erl", 2, "D", "4"),
    )
    assert runenv.for_option(given, "erl", 3) == ({"A": "1", "B": "x=y"}, {}, {"D": "4"})
    assert runenv.for_option(given, "openssl", 1) == ({},)
    assert runenv.argv(given, "erl", 0) == ["--env", "A=1", "--env", "B=x=y"]


@pytest.mark.parametrize(
    "order, value, message",
    [
        (["env", "erl"], "A=1", "name the runtime it is for first"),
        (["erl", "env"], "A", "expected NAME=VALUE"),
        (["erl", "env"], "1A=2", "expected NAME=VALUE"),
        (["erl", "env"], "OPENSSL_ia32cap=~0x200000000", "bridge sets it for the hw off runs"),
        (["python", "env"], "ERL_FLAGS=-sname x", "distribution"),
    ],
)
def test_bad_env_is_a_usage_error(order, value, message):
    with pytest.raises(UsageError, match=message):
        runenv.bind(order, [value])


def options(**kw) -> plans.RunOptions:
    base = dict(scenarios=("sha256",), samples=3, rounds=1, hw="on")
    return plans.RunOptions(**{**base, **kw})


def test_the_plan_and_the_reproduce_line_keep_each_runtimes_variables():
    erl = "/usr/bin/erl"  # the plan does not start it
    given = (
        runenv.Given("erl", 1, "LD_LIBRARY_PATH", "/opt/ssl 1.1/lib"),
        runenv.Given("python", 0, "PYTHONHASHSEED", "0"),
    )
    o = options(erl=(erl, erl), python=("/usr/bin/python3",), env=given)
    plan = plans.from_options(o, ("bridge",))
    assert plan.erl == (erl, erl)
    assert plan.env["erlang"] == ({}, {"LD_LIBRARY_PATH": "/opt/ssl 1.1/lib"})
    assert plan.env["python"] == ({"PYTHONHASHSEED": "0"},)
    assert f"--erl {erl} --erl {erl} --env 'LD_LIBRARY_PATH=/opt/ssl 1.1/lib'" in plan.reproduce
    assert "--python /usr/bin/python3 --env PYTHONHASHSEED=0" in plan.reproduce


def test_otp_groups_keep_their_variables(monkeypatch):
    monkeypatch.setattr(plans.discover, "resolve_group", lambda spec: ["/a/erl", "/b/erl"])
    erl, env = plans.expand_erl_given(("otp:23", "/c/erl"), ({"X": "1"}, {}))
    assert erl == ("/a/erl", "/b/erl", "/c/erl")
    assert env == ({"X": "1"}, {"X": "1"}, {})


INSTALL = otp.Installation(
    erl=Path("/usr/bin/erl"), erlc=Path("/usr/bin/erlc"), root=None, otp_version="", erts_version=""
)


@pytest.mark.parametrize(
    "make",
    [
        lambda hw, mask: ErlangRuntime(INSTALL, FAST, hw, mask),
        lambda hw, mask: PythonRuntime(FAST, hw, mask),
        lambda hw, mask: OpensslRuntime(FAST, hw, mask),
    ],
    ids=["erlang", "python", "openssl"],
)
def test_every_kind_gives_its_processes_what_it_was_given(make, monkeypatch):
    """The environment each kind hands its children: bridge's own, the
    variables given to this runtime, the --libcrypto directory in front of
    the library path, and the mask; the record names only what was given."""
    monkeypatch.setenv("LD_LIBRARY_PATH", "/inherited")
    monkeypatch.setenv("BRIDGE_TEST_SECRET", "never recorded")
    rt = make(Hw.OFF, {"OPENSSL_ia32cap": "~0x20000000"}).with_env({"OPENSSL_CONF": "/x.cnf"})
    env = rt.child_env()
    assert env["OPENSSL_CONF"] == "/x.cnf" and env["OPENSSL_ia32cap"] == "~0x20000000"
    assert env["LD_LIBRARY_PATH"] == "/inherited" and env["BRIDGE_TEST_SECRET"]
    rt.libcrypto_dir = "/opt/ssl35/lib64"
    assert rt.child_env()["LD_LIBRARY_PATH"] == "/opt/ssl35/lib64:/inherited"
    rt.with_env({"LD_LIBRARY_PATH": "/given"})
    assert rt.child_env()["LD_LIBRARY_PATH"] == "/opt/ssl35/lib64:/given"
    assert rt.env_record() == {
        "OPENSSL_ia32cap": "~0x20000000",
        "OPENSSL_armcap": None,
        "LD_LIBRARY_PATH": "/given",
    }


def test_replay_gives_each_runtime_its_variables_and_the_libcrypto_dirs_again(
    tmp_path, monkeypatch
):
    lib = tmp_path / "lib"
    lib.mkdir()
    exe = "/bin/sh"  # any file that exists: replay only checks the path

    def rt(rid, kind, env, hw=Hw.ON, **details):
        env = {"OPENSSL_ia32cap": None, "OPENSSL_armcap": None, **env}
        return schema.Runtime(rid, kind, exe, "v", {"env": env, **details}, Hw(hw))

    report = schema.Report(
        bridge_version="x",
        created="",
        command=[],
        reproduce="bridge run sha256",
        settings={"seed": 3},
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
            rt("python@1", "python", {"PYTHONHASHSEED": "0"}),
            rt(
                "python@1",
                "python",
                {"OPENSSL_ia32cap": "~0x20000000", "PYTHONHASHSEED": "0"},
                "off",
            ),
            rt(
                "python@1+libcrypto-3",
                "python",
                {"PYTHONHASHSEED": "0"},
                libcrypto_dir={"given": str(lib), "dir": str(lib)},
            ),
            rt(  # its masked twin
                "python@1+libcrypto-3",
                "python",
                {"OPENSSL_ia32cap": "~0x20000000", "PYTHONHASHSEED": "0"},
                "off",
                libcrypto_dir={"given": str(lib), "dir": str(lib)},
            ),
            rt("python@1#2", "python", {}),
        ),
        results=(),
    )
    # --as-recorded: the report's executables, its harmless variables and
    # its --libcrypto directories (bridge.cli.run lists them and asks first).
    with pytest.raises(UsageError, match="no libcrypto"):
        replay.from_report(report, Path("r.json"), (), as_recorded=True)  # the directory is empty
    found = Directory(str(lib), lib, {})
    monkeypatch.setattr(libcrypto, "resolve", lambda given: found)
    replayed = replay.from_report(report, Path("r.json"), (), as_recorded=True)
    plan = replayed.plan
    assert replayed.warnings == []
    assert plan.python == (exe, exe)  # the --libcrypto runtime is not replayed as a runtime
    assert plan.env["python"] == ({"PYTHONHASHSEED": "0"}, {})
    assert plan.libcrypto == (found,)
    assert replayed.recorded == [
        f"python@1: {exe}, with PYTHONHASHSEED=0",
        f"python@1#2: {exe}, with no variables of its own",
        f"--libcrypto {lib}: every runtime again, with it in front of LD_LIBRARY_PATH",
    ]
    # By default: this machine's Python, none of the report's variables or directories.
    here = replay.Local(python=[replay.Candidate(None, "3.11.7", True, "/here/python")])
    replayed = replay.from_report(report, Path("r.json"), (), local=here)
    assert replayed.plan.python == (None,) and replayed.plan.env["python"] == ({},)
    assert replayed.plan.libcrypto == ()
    assert any("--libcrypto" in w and "not replayed" in w for w in replayed.warnings)
    # A directory gone since: a warning, and the run goes on without it.
    lib.rmdir()
    replayed = replay.from_report(report, Path("r.json"), (), as_recorded=True)
    assert replayed.plan.libcrypto == () and replayed.warnings == [
        f"--libcrypto {lib} does not exist here; running without it"
    ]
