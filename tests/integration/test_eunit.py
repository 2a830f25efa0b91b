"""Runs the Erlang-side EUnit tests (tests/erl) against erl/ with the real erlc."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import ROOT, needs_erl


@pytest.mark.serial  # EUnit cases wait 20-50 ms for processes to exit
@needs_erl
def test_eunit(tmp_path):
    sources = sorted(str(p) for p in (ROOT / "erl").glob("*.erl"))
    sources += sorted(str(p) for p in (ROOT / "tests" / "erl").glob("*.erl"))
    subprocess.run(["erlc", "-o", str(tmp_path), *sources], check=True, capture_output=True)
    # One test module per worker module (bridge_api_tests, ...): run them all.
    modules = ",".join(p.stem for p in sorted((ROOT / "tests" / "erl").glob("*_tests.erl")))
    done = subprocess.run(
        [
            "erl",
            "-noshell",
            "-noinput",
            "-pa",
            str(tmp_path),
            "-eval",
            f"case eunit:test([{modules}], [verbose]) of ok -> halt(0); _ -> halt(1) end.",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout
