"""--libcrypto and --env through the real CLI, on real processes.

--libcrypto is tested with a copy of the system's own libcrypto in a
temporary directory: the same bytes under another path, so only the
process's /proc/PID/maps (by device and inode) can tell which one it loaded.
Only libcrypto is copied, not libssl: Python's _ssl links both, and the
system libssl must then find the copy too (one libcrypto mapped, not two).
Timings are never asserted."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.system import libcrypto
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

# One call per runtime at two sizes: enough for the upgrade view's a and b.
SCENARIO = """
name = "sha256-two"
description = "sha256 at two sizes"
kind = "hash"
digest = "sha256"
sizes = [16, 4096]
features = ["sha"]
[calls]
erlang = ["hash"]
python = ["hashlib"]
openssl = ["speed-evp"]
"""


@pytest.fixture(scope="module")
def system_libcrypto() -> Path:
    import _hashlib  # noqa: F401  - loads libcrypto into this process

    return Path(libcrypto.mapped(os.getpid())[0].path)


@pytest.fixture
def copy_dir(tmp_path, system_libcrypto) -> Path:
    d = tmp_path / "libcrypto copy"  # a space: the reproduce line must quote it
    d.mkdir()
    shutil.copy(system_libcrypto, d / libcrypto.soname_of(system_libcrypto))
    return d


@pytest.fixture
def scenario(tmp_path) -> Path:
    path = tmp_path / "sha256-two.toml"
    path.write_text(SCENARIO)
    return path


def run_json(tmp_path, *args, env=None):
    out = tmp_path / "r.json"
    done = bridge_cmd("run", *args, "-o", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(out.read_text()), done


def test_each_runtime_again_with_a_copy_of_the_system_libcrypto(
    tmp_path, copy_dir, scenario, system_libcrypto, no_leftovers
):
    report, done = run_json(
        tmp_path,
        str(scenario),
        *FAST_ARGS,
        "--python",
        sys.executable,
        "--libcrypto",
        str(copy_dir),
        "--format",
        "text",
    )
    copy = copy_dir / system_libcrypto.name
    runtimes = {rt["id"]: rt for rt in report["runtimes"]}
    bases = [rt for rt in report["runtimes"] if "libcrypto_dir" not in rt]
    variants = [rt for rt in report["runtimes"] if "libcrypto_dir" in rt]
    assert sorted(rt["kind"] for rt in bases) == ["erlang", "openssl", "python"]
    assert sorted(rt["kind"] for rt in variants) == ["erlang", "openssl", "python"]
    version = libcrypto.version_text(system_libcrypto.read_bytes()).split()[1]
    for rt in variants:
        base_id = rt["id"].removesuffix(f"+libcrypto-{version}")
        assert base_id in runtimes and base_id != rt["id"], rt["id"]
        proof = rt["libcrypto_dir"]
        assert proof["given"] == str(copy_dir) and proof["file"] == str(copy)
        # The process mapped the copy and only the copy: for Python, _ssl's
        # system libssl found it too.
        assert rt["libcrypto_loaded"] == [str(copy)], rt["id"]
        assert len(proof["maps"]) == 1 and f"maps: {copy} (device" in proof["maps"][0]
        # The environment record holds what was given, never the inherited path.
        assert set(rt["env"]) == {"OPENSSL_ia32cap", "OPENSSL_armcap"}
    for rt in bases:
        assert str(copy) not in rt.get("libcrypto_loaded", []), rt["id"]
    # Every runtime measured and computed the same bytes.
    measured = {r["runtime"] for r in report["results"] if r["status"] == "ok"}
    assert measured == set(runtimes)
    assert all(check["match"] for check in report["interop"])
    assert f"--libcrypto '{copy_dir}'" in report["reproduce"]
    # The upgrade view lines each copy up with its base, in the report and the view.
    assert {(u["old"], u["new"]) for u in report["upgrades"]} == {
        (rt["id"].removesuffix(f"+libcrypto-{version}"), rt["id"]) for rt in variants
    }
    said = " ".join(done.stdout.split())
    assert "Upgrade: new time over old, per size:" in said
    for rt in variants:
        base_id = rt["id"].removesuffix(f"+libcrypto-{version}")
        assert f"{rt['id']} against {base_id}: " in said, rt["id"]
    # Each copy's cost over its base's, per call and per byte, is said (its
    # path, longer than a line here, may be broken anywhere: left out).
    split = re.findall(r" costs [^:]*? per call[^:]*? and [^:]*? per byte", said)
    assert len(split) == len(variants), said
    assert all(len(line) <= 72 for line in done.stdout.splitlines())


def test_masked_twins_of_a_libcrypto_runtime_keep_the_library(tmp_path, copy_dir, scenario):
    args = [*FAST_ARGS[:-2], "--hw", "both", "--runtimes", "python", "--python", sys.executable]
    report, _ = run_json(tmp_path, str(scenario), *args, "--libcrypto", str(copy_dir))
    variants = [rt for rt in report["runtimes"] if "libcrypto_dir" in rt]
    assert sorted(rt["hw"] for rt in variants) == ["off", "on"]
    assert variants[0]["id"] == variants[1]["id"]
    off = next(rt for rt in variants if rt["hw"] == "off")
    assert off["env"]["OPENSSL_ia32cap"] and off["libcrypto_loaded"] == [
        variants[0]["libcrypto_dir"]["file"]
    ]
    assert any(v["runtime"] == off["id"] for v in report["verdicts"])


def test_another_soname_is_skipped_and_a_library_not_loaded_is_refused(
    tmp_path, copy_dir, bullseye, no_leftovers
):
    # OTP 23 loads libcrypto.so.1.1: a directory of libcrypto.so.3 cannot stand in.
    args = ["sha256", "--sizes", "16", *FAST_ARGS, "--runtimes", "erlang"]
    report, done = run_json(
        tmp_path, *args, "--erl", str(bullseye.erl), "--libcrypto", str(copy_dir)
    )
    (skipped,) = report["skipped"]
    assert skipped["runtime"] == f"erlang@23.2.6+libcrypto {copy_dir}"
    assert "it loads libcrypto.so.1.1" in skipped["reason"]
    assert "another soname" in skipped["reason"]
    # Said once, with its reason: in the view (stderr carries warnings only
    # beside --format json).
    said = " ".join(done.stdout.split())
    assert "Skipped erlang@23.2.6+libcrypto " in said and " it loads libcrypto.so.1.1 (" in said
    assert "a libcrypto of another soname has another ABI" in said
    assert "skipped erlang@23.2.6+libcrypto" not in done.stderr.lower()
    (rt,) = report["runtimes"]  # OTP 23 itself still ran
    assert rt["otp_version"] == "23.2.6" and report["results"][0]["status"] == "ok"

    # bullseye's erl is a wrapper that puts its own directory first: a copy
    # of its libcrypto.so.1.1 elsewhere is never loaded, and the run says so.
    old = tmp_path / "old"
    old.mkdir()
    shutil.copy(bullseye.libdir / "libcrypto.so.1.1", old)
    done = bridge_cmd("run", *args, "--erl", str(bullseye.erl), "--libcrypto", str(old))
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("bridge: error: erlang@23.2.6 with --libcrypto")
    assert f"did not load {old}/libcrypto.so.1.1" in line
    assert str(bullseye.libdir / "libcrypto.so.1.1") in line


def test_env_given_to_one_runtime_is_recorded_for_it_alone(tmp_path, bullseye, no_leftovers):
    """The unpacked OTP 23 tree without its wrapper: its crypto loads only
    with the library path given to it (the issue's case, in which the
    reproduce line used to lose it). The driver's own variables stay out."""
    erl = bullseye.otp_root / "bin" / "erl"
    given = {
        "LD_LIBRARY_PATH": str(bullseye.libdir),
        "OPENSSL_CONF": str(bullseye.prefix / "root" / "etc" / "ssl" / "openssl.cnf"),
    }
    env_args = [arg for k, v in given.items() for arg in ("--env", f"{k}={v}")]
    # Wide, so that the provenance's long paths stay on one line.
    canary = {"BRIDGE_TEST_CANARY": "must-not-be-recorded", "COLUMNS": "400"}
    report, done = run_json(
        tmp_path,
        "sha256",
        *FAST_ARGS,
        "--sizes",
        "16",
        "--runtimes",
        "erlang,python",
        "--erl",
        str(erl),
        *env_args,
        "--erl",
        shutil.which("erl"),
        "--python",
        sys.executable,
        "--env",
        "PYTHONHASHSEED=0",
        "--verbose",  # the full provenance, with each runtime's given variables
        env=canary,
    )
    old, new = [rt for rt in report["runtimes"] if rt["kind"] == "erlang"]
    (py,) = [rt for rt in report["runtimes"] if rt["kind"] == "python"]
    assert old["otp_version"] == "23.2.6" and old["executable"] == str(erl)
    assert old["libcrypto_loaded"] == [str(bullseye.libdir / "libcrypto.so.1.1")]
    masks = {"OPENSSL_ia32cap": None, "OPENSSL_armcap": None}
    assert old["env"] == {**masks, **given}
    assert new["env"] == masks and py["env"] == {**masks, "PYTHONHASHSEED": "0"}
    text = (tmp_path / "r.json").read_text()
    assert "must-not-be-recorded" not in text and "BRIDGE_TEST_CANARY" not in text
    assert f"--erl {erl} {' '.join(env_args)} --erl" in report["reproduce"]
    assert f"--python {sys.executable} --env PYTHONHASHSEED=0" in report["reproduce"]
    assert f"LD_LIBRARY_PATH={bullseye.libdir}" in " ".join(done.stdout.split())  # the provenance

    # --replay runs this machine's OTP 23, found by discovery (here the
    # fetched tree's wrapper, through BRIDGE_OTP_PATH), and none of the
    # report's variables: LD_LIBRARY_PATH and OPENSSL_CONF load code and
    # configuration, and are dropped with a warning naming them.
    replay = bridge_cmd(
        "run",
        "--replay",
        str(tmp_path / "r.json"),
        "--format",
        "json",
        env={"BRIDGE_OTP_PATH": str(bullseye.prefix)},
    )
    assert replay.returncode == 0, replay.stderr
    lines = replay.stderr.splitlines()
    wrapper = bullseye.prefix.resolve() / "bin" / "erl"
    assert f"replay: erlang@23.2.6 (report) -> {wrapper} (OTP 23.2.6)" in lines
    for name in given:
        assert any(f"erlang@23.2.6: {name} from the report is not replayed" in x for x in lines)
    # --format json prints the new report, then the comparison with the old one.
    again, _ = json.JSONDecoder().raw_decode(replay.stdout)
    (old_again,) = [rt for rt in again["runtimes"] if rt.get("otp_version") == "23.2.6"]
    assert old_again["env"] == masks and old_again["executable"] == str(wrapper)


@pytest.mark.parametrize(
    "args, message",
    [
        # Only the command line knows the order (the rest is unit-tested).
        (["--env", "A=1", "--erl", "erl"], "--env A=1: name the runtime it is for first"),
        (["--libcrypto", "{tmp}"], "--libcrypto {tmp}: no libcrypto.so.N in it"),
    ],
)
def test_bad_env_and_libcrypto_are_one_line_usage_errors(tmp_path, args, message):
    args = [a.format(tmp=tmp_path) for a in args]
    done = bridge_cmd("run", "sha256", *args)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("bridge: error: ") and message.format(tmp=tmp_path) in line


# Not serial: the kill follows the run's own progress line, not a delay.
def test_a_libcrypto_runtime_that_dies_fails_the_run_in_one_error_line(tmp_path, copy_dir):
    # The --libcrypto variant's worker (the process that maps the copy) dies
    # mid-run: exit status 1, and one `bridge: error:` line naming it.
    out = tmp_path / "r.json"
    before = worker_pids()
    argv = ["run", "sha256", "--sizes", "16", "--samples", "200", "--sample-ms", "20"]
    argv += ["--warmup-ms", "0", "--rounds", "2", "--hw", "on", "--runtimes", "python"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bridge", *argv, "--libcrypto", str(copy_dir), "-o", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Mid-run: once round 1 is done (bridge has checked what each worker
        # maps, and measured), however slowly a busy machine let it get there.
        head = read_until(proc, "round 1/2 of sha256 done")
        victim = None
        for pid in worker_pids() - before:
            try:
                maps = Path(f"/proc/{pid}/maps").read_text()
            except OSError:
                continue
            if str(copy_dir) in maps:
                victim = pid
        assert victim, "the --libcrypto worker is not running"
        os.kill(victim, signal.SIGKILL)
        stdout, rest = proc.communicate(timeout=120)
        stderr = head + rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith("bridge: error:")]
    assert len(lines) == 1, stderr
    assert "libcrypto" in lines[0] and "killed by signal 9" in lines[0], lines[0]
    report = json.loads(out.read_text())
    assert any("killed by signal 9" in e["message"] for e in report["errors"])
    assert not wait_gone(worker_pids() - before)
