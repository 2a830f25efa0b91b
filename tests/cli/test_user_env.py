"""The user's own Erlang set-up does not reach bridge's nodes: a ~/.erlang
that prints, raises or halts, ERL_LIBS or a crypto.beam in the current
directory that would replace crypto, an erl that is a wrapper script. Real
runs through the CLI, with HOME pointing at a temporary directory."""

from __future__ import annotations

import json
import subprocess

import pytest

from bridge.system import otp
from tests.conftest import FAST_ARGS, bridge_cmd, needs_erl

pytestmark = needs_erl

DOT_ERLANG = {
    "prints": 'io:format("hello from .erlang~n").\n',
    "raises": "erlang:error(from_dot_erlang).\n",
    "halts": "halt(7).\n",
    "not erlang": "this is not { erlang\n",
}


def run_erlang(tmp_path, *args: str, env: dict | None = None, cwd=None):
    out = tmp_path / "r.json"
    argv = ["run", "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "-o", str(out), *args]
    done = bridge_cmd(*argv, env=env, cwd=cwd or tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert report["results"] and all(r["status"] == "ok" for r in report["results"])
    assert report["interop"][0]["match"] is True
    return done, report


@pytest.mark.parametrize("kind", sorted(DOT_ERLANG))
def test_a_dot_erlang_is_ignored_and_the_report_says_so(tmp_path, kind, no_leftovers):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".erlang").write_text(DOT_ERLANG[kind])
    done, report = run_erlang(tmp_path, env={"HOME": str(home)})
    assert "hello from .erlang" not in done.stdout + done.stderr
    startup = report["runtimes"][0]["startup"]
    assert startup["dot_erlang"] == "ignored (-boot no_dot_erlang)"
    assert startup["dot_erlang_files"] == ["~/.erlang"]
    assert startup["boot"].endswith("/no_dot_erlang")
    assert startup["working_dir"] == "a private temporary directory"


def fake_crypto(directory) -> None:
    """A module named crypto that would answer every call wrongly."""
    src = directory / "crypto.erl"
    src.write_text("-module(crypto).\n-export([info_lib/0]).\ninfo_lib() -> fake.\n")
    subprocess.run(["erlc", "-o", str(directory), str(src)], check=True, capture_output=True)
    src.unlink()


def test_erl_libs_and_the_current_directory_cannot_replace_crypto(tmp_path, no_leftovers):
    here = tmp_path / "here"  # the user's current directory, with a crypto.beam
    here.mkdir()
    fake_crypto(here)
    libs = tmp_path / "libs"
    (libs / "crypto-99.0" / "ebin").mkdir(parents=True)
    fake_crypto(libs / "crypto-99.0" / "ebin")
    _, report = run_erlang(tmp_path, env={"ERL_LIBS": str(libs)}, cwd=here)
    erlang = report["runtimes"][0]
    assert erlang["crypto_app_version"] != "99.0"
    assert erlang["crypto_lib"].startswith("OpenSSL")
    assert erlang["startup"]["erl_libs"] == "removed from the node's environment"
    assert sorted(p.name for p in here.iterdir()) == ["crypto.beam"]  # nothing written there


def test_an_erl_wrapper_is_probed_for_its_boot_file(tmp_path, no_leftovers):
    # A wrapper script (as shims are): bridge cannot see the installation
    # from the path, so it asks the node, and still boots with no_dot_erlang.
    real = otp.locate(None)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "erl").write_text(f'#!/bin/sh\nexec {real.erl} "$@"\n')
    (bin_dir / "erl").chmod(0o755)
    (bin_dir / "erlc").symlink_to(real.erlc)
    wrapped = otp.locate(str(bin_dir / "erl"))
    assert wrapped.wrapped and wrapped.root == real.root and wrapped.boot == real.boot
    home = tmp_path / "home"
    home.mkdir()
    (home / ".erlang").write_text(DOT_ERLANG["prints"])
    _, report = run_erlang(tmp_path, "--erl", str(bin_dir / "erl"), env={"HOME": str(home)})
    startup = report["runtimes"][0]["startup"]
    assert startup["dot_erlang"] == "ignored (-boot no_dot_erlang)"
    assert startup["working_dir"].startswith("the current directory")


def test_no_dot_erlang_boot_is_found_by_absolute_path(tmp_path):
    root = tmp_path / "otp"
    (root / "releases" / "24").mkdir(parents=True)
    (root / "bin").mkdir()
    assert otp.no_dot_erlang_boot(root) is None  # OTP 20 and older: none
    assert otp.no_dot_erlang_boot(None) is None
    (root / "releases" / "24" / "no_dot_erlang.boot").write_bytes(b"")
    assert otp.no_dot_erlang_boot(root) == root / "releases" / "24" / "no_dot_erlang"
    (root / "bin" / "no_dot_erlang.boot").write_bytes(b"")
    assert otp.no_dot_erlang_boot(root) == root / "bin" / "no_dot_erlang"


def test_this_installation_has_no_dot_erlang_boot():
    # OTP 21+ ships it; every erl bridge starts here boots with it.
    boot = otp.locate(None).boot
    assert boot is not None and boot.is_absolute() and boot.with_suffix(".boot").is_file()


def test_dot_erlang_files_are_listed_as_home_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert otp.dot_erlang_files() == []
    (tmp_path / ".erlang").write_text("ok.\n")
    (tmp_path / ".config" / "erlang").mkdir(parents=True)
    (tmp_path / ".config" / "erlang" / ".erlang").write_text("ok.\n")
    assert otp.dot_erlang_files() == ["~/.erlang", "~/.config/erlang/.erlang"]


def test_node_env_removes_what_could_shadow_crypto(tmp_path, monkeypatch):
    for name in ("ERL_LIBS", "ERL_COMPILER_OPTIONS", "ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS"):
        monkeypatch.setenv(name, "x")
    env = otp.node_env(tmp_path / "erl_crash.dump", {"OPENSSL_ia32cap": ":~0x20000000"})
    assert not {"ERL_LIBS", "ERL_COMPILER_OPTIONS", "ERL_FLAGS", "ERL_AFLAGS"} & set(env)
    assert env["ERL_CRASH_DUMP"] == str(tmp_path / "erl_crash.dump")
    assert env["OPENSSL_ia32cap"] == ":~0x20000000"
