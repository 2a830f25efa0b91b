"""What must keep working for an ordinary user: the CLI end to end with a
fresh home directory, and the permission cases (an output directory or a
worker cache that cannot be written). `.ci/run` runs this file, with
tests/cli/test_faults.py and tests/cli/test_user_env.py, as an unprivileged
user; the whole suite runs it as root, where tests/fsutil.py makes
directories read-only with bind mounts."""

from __future__ import annotations

import contextlib
import json
import os
import stat

from bridge.system import otp
from tests.conftest import FAST_ARGS, bridge_cmd, needs_erl, needs_openssl, own_stderr
from tests.fsutil import read_only, small_fs

pytestmark = [needs_erl, needs_openssl]


def fresh_user(tmp_path) -> dict[str, str]:
    """A home with nothing in it, and a temporary directory of its own, so
    that what bridge leaves behind there shows."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(tmp), "BRIDGE_CACHE_DIR": "", "XDG_CACHE_HOME": ""}
    return env


def test_cli_end_to_end_with_a_fresh_home(tmp_path, no_leftovers):
    env = fresh_user(tmp_path)
    out = tmp_path / "r.json"
    done = bridge_cmd("run", "hmac-sha1", *FAST_ARGS, "-o", str(out), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not [line for line in own_stderr(done.stderr) if "warning" in line], done.stderr
    report = json.loads(out.read_text())
    assert {rt["kind"] for rt in report["runtimes"]} == {"erlang", "python", "openssl"}
    assert report["interop"][0]["match"] is True and not report["errors"]
    # The worker was compiled into ~/.cache/bridge, private to the user.
    beam = tmp_path / "home" / ".cache" / "bridge" / "beam"
    (entry,) = beam.iterdir()
    assert otp.verify(entry) is None
    assert stat.S_IMODE(beam.stat().st_mode) == 0o700
    assert os.listdir(tmp_path / "tmp") == []  # no temporary file or directory left


def test_unwritable_output_directory(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    with read_only(locked):
        done = bridge_cmd("run", "hmac-sha1", *FAST_ARGS, "-o", str(locked / "r.json"))
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith(f"bridge: error: --output {locked}/r.json: directory {locked}")
    assert "is not writable" in lines[0]


def test_unwritable_cache_falls_back_to_a_temporary_directory(tmp_path, no_leftovers):
    env = fresh_user(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    out = tmp_path / "r.json"
    env["BRIDGE_CACHE_DIR"] = str(cache)
    argv = ["run", "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "--hw", "both"]
    with read_only(cache):
        done = bridge_cmd(*argv, "-o", str(out), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in own_stderr(done.stderr) if line.startswith("bridge: warning")]
    # Said once, though two nodes (hw on and off) were started.
    assert len(warnings) == 1, done.stderr
    assert warnings[0].startswith(f"bridge: warning: cannot write the worker cache {cache}/bridge")
    assert warnings[0].endswith("into a temporary directory, removed at exit")
    for runtime in json.loads(out.read_text())["runtimes"]:
        assert runtime["startup"]["worker_cache"] == (
            f"compiled into a temporary directory: {cache}/bridge/beam cannot be written"
        )
    assert os.listdir(cache) == []
    assert os.listdir(tmp_path / "tmp") == []  # the temporary cache went at exit


def test_a_full_cache_disk_falls_back_as_a_read_only_cache_does(tmp_path, no_leftovers):
    # erlc's .beam writes fail with ENOSPC: the worker is compiled into a
    # temporary directory, with one warning, and Erlang still runs.
    env = fresh_user(tmp_path)
    out = tmp_path / "r.json"
    argv = ["run", "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "--hw", "both"]
    with small_fs(tmp_path / "cache", "256k") as cache:
        (cache / "bridge" / "beam").mkdir(parents=True)
        with open(cache / "fill", "wb", buffering=0) as fill, contextlib.suppress(OSError):
            while True:  # until the disk is full
                fill.write(b"\0" * 4096)
        env["BRIDGE_CACHE_DIR"] = str(cache)
        done = bridge_cmd(*argv, "-o", str(out), env=env, cwd=tmp_path)
        left = sorted(p.name for p in (cache / "bridge" / "beam").iterdir())
    assert done.returncode == 0, done.stderr
    warnings = [line for line in own_stderr(done.stderr) if line.startswith("bridge: warning")]
    assert len(warnings) == 1, done.stderr
    assert warnings[0].startswith(f"bridge: warning: cannot write the worker cache {cache}/bridge")
    assert "no space left on device" in warnings[0].lower()
    report = json.loads(out.read_text())
    assert {r["runtime"].split("@")[0] for r in report["results"]} == {"erlang"}
    for runtime in report["runtimes"]:
        assert runtime["startup"]["worker_cache"].startswith("compiled into a temporary directory")
    assert left == []  # no half-written staging directory
    assert os.listdir(tmp_path / "tmp") == []


def test_a_read_only_cache_with_a_good_entry_is_used(tmp_path, no_leftovers):
    env = fresh_user(tmp_path)
    cache = tmp_path / "cache"
    env["BRIDGE_CACHE_DIR"] = str(cache)
    first = bridge_cmd("run", "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", env=env)
    assert first.returncode == 0, first.stderr
    out = tmp_path / "r.json"
    with read_only(cache):
        done = bridge_cmd(
            "run", "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "-o", str(out), env=env
        )
    assert done.returncode == 0, done.stderr
    assert not [line for line in own_stderr(done.stderr) if "warning" in line], done.stderr
    runtime = json.loads(out.read_text())["runtimes"][0]
    assert runtime["startup"]["worker_cache"] == "cached, verified"
