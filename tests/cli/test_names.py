"""The command's name beside iproute2's: a fake iproute2 `bridge` earlier on
PATH, and what --version, make setup and the second command, crypto-bridge,
do about it. The commands are this venv's own console scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BIN = Path(sys.executable).parent
# iproute2's answers: -V names it; anything else is an unknown object.
IPROUTE2 = """#!/bin/sh
case "$1" in
  -V) echo "bridge utility, iproute2-6.1.0" ;;
  *) echo "Object \\"$1\\" is unknown, try \\"bridge help\\"." >&2; exit 255 ;;
esac
"""


@pytest.fixture
def fake_iproute2(tmp_path) -> Path:
    directory = tmp_path / "sbin"
    directory.mkdir()
    program = directory / "bridge"
    program.write_text(IPROUTE2)
    program.chmod(0o755)
    return directory


def _run(argv, path: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path}
    env.pop("PYTHONPATH", None)
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, **kw)


def test_version_names_the_clash_and_the_other_command(fake_iproute2, tmp_path):
    if not (BIN / "crypto-bridge").exists():
        pytest.skip(f"no crypto-bridge beside {sys.executable}: run make setup")
    shadowed = f"{fake_iproute2}:{BIN}:/usr/bin:/bin"
    # What the user sees first: iproute2 answering bridge's words.
    wrong = _run(["bridge", "run", "hmac-sha1"], shadowed)
    assert 'Object "run" is unknown' in wrong.stderr
    for argv in (
        [BIN / "crypto-bridge", "--version"],
        [sys.executable, "-m", "bridge", "--version"],
    ):
        done = _run(argv, shadowed)
        assert done.returncode == 0 and done.stdout.startswith("bridge, version "), done.stderr
        (note,) = done.stderr.splitlines()
        assert note.startswith(f"bridge: note: `bridge` on PATH is {fake_iproute2}/bridge")
        assert "iproute2's bridge utility" in note and "run crypto-bridge" in note
        assert f"put {BIN} first on PATH" in note
    # The venv first: bridge is this bridge, and nothing is said.
    done = _run([BIN / "bridge", "--version"], f"{BIN}:{fake_iproute2}:/usr/bin:/bin")
    assert done.returncode == 0 and done.stderr == ""
    # crypto-bridge runs where bridge cannot (a short run, Python only), with
    # the table on stdout and the other views in files from the same run.
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    ran = _run(
        ["crypto-bridge", "run", "--until-stable", "hmac-sha1", "--quick", "--max-time", "1"]
        + ["--runtimes", "python", "--hw", "on", "--samples", "6", "--sample-ms", "2"]
        + ["--rounds", "2", "--export-markdown", md, "--export-json", js],
        shadowed,
    )
    assert ran.returncode == 0, ran.stderr
    assert "hmac-sha1" in ran.stdout and not ran.stdout.startswith("{")
    report = json.loads(js.read_text())
    # --until-stable took no value: the scenario is hmac-sha1, the target ±2%.
    assert report["settings"]["until_stable"] == 0.02
    assert {r["scenario"] for r in report["results"]} == {"hmac-sha1"}
    assert md.read_text().startswith("### hmac-sha1: bridge ")


def test_make_setup_says_it_in_one_line(fake_iproute2):
    """make setup with the venv current: only the check runs (no pip)."""
    current = subprocess.run(["make", "-q", ".venv/.installed"], cwd=ROOT, capture_output=True)
    if current.returncode != 0 or Path(sys.executable).parent != ROOT / ".venv" / "bin":
        pytest.skip("the checkout's .venv is not current: make setup would reinstall it")
    done = _run(["make", "-s", "setup"], f"{fake_iproute2}:/usr/bin:/bin", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("bridge: note:")]
    assert len(lines) == 1 and "iproute2" in lines[0], done.stderr
    assert f"run {ROOT}/.venv/bin/crypto-bridge" in lines[0]
