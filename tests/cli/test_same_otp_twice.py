"""One OTP named twice, once by its group (otp:N) and once by its erl's
path: two identical runtimes, run side by side in paired rounds. Whatever the
machine is doing, their comparison must never be called significant: the
rounds are judged as pairs (on CPU time where a cell waited for a CPU), and
a difference they do not agree on, or that one process a side cannot tell
from a gap between two processes, is within noise (bridge.analysis.versus).
A real Erlang node per runtime, the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import bridge_cmd, needs_erl


def _otp_major(erl: str) -> str:
    done = subprocess.run(
        [erl, "-noshell", "-eval", 'io:format("~s", [erlang:system_info(otp_release)]), halt().'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout.strip()


@needs_erl
@pytest.mark.serial
def test_the_same_otp_named_twice_is_never_significantly_different(tmp_path, no_leftovers):
    erl = str(Path(shutil.which("erl")).resolve())
    out = tmp_path / "same.json"
    done = bridge_cmd(
        "run",
        "sha256",
        "--quick",
        "--runtimes",
        "erlang",
        "--hw",
        "on",
        "--erl",
        f"otp:{_otp_major(erl)}",
        "--erl",
        erl,
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    ids = [rt["id"] for rt in report["runtimes"]]
    assert len(ids) == 2 and ids[1] == ids[0] + "#2"
    cells = {(r["runtime"], r["size"]) for r in report["results"] if r["status"] == "ok"}
    sizes = {size for _, size in cells}
    assert cells == {(rid, size) for rid in ids for size in sizes} and len(sizes) >= 3
    same = [d for d in report["differences"] if d["against"] == "first-named"]
    # Every size compared, on paired rounds, each with what it was judged on.
    assert {d["size"] for d in same} == sizes
    assert all(d["rounds"] >= 3 and d["basis"] in ("wall", "cpu") for d in same), same
    called = [d for d in same if d["verdict"] in ("faster", "slower")]
    assert called == [], called
