"""The pasted Markdown of a real run: ECDSA on OTP 23 (OpenSSL 1.1.1w) beside
this machine's OTP, part of the question that once took 251 lines (with the
two openssl builds: tests/unit/render/test_paste.py, on a saved real run;
openssl speed runs a second per call, too slow for this tier). Timings are
never asserted."""

from __future__ import annotations

import re
import shutil

from tests.conftest import FAST_ARGS, bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]


def test_ecdsa_on_two_otps_pastes(tmp_path, bullseye):
    home = bullseye.bin.parent.parent  # so that the older runtimes live under ~
    done = bridge_cmd(
        "run",
        "ecdsa-p256",
        *FAST_ARGS,
        "--runtimes",
        "erlang",
        "--erl",
        str(bullseye.erl),
        "--erl",
        shutil.which("erl"),
        "--format",
        "markdown",
        "-o",
        str(tmp_path / "r.json"),
        env={"HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr
    md = done.stdout[done.stdout.index("### ecdsa-p256") :]
    lines = md.splitlines()
    assert len(lines) < 120
    # The answer first: OTP 25 against OTP 23, a line per call, each with its
    # CI or what a CI needs; the table below has a row per call and runtime.
    heading = lines.index("**Versions: each against the first named of its kind:**")
    first_table = next(n for n, x in enumerate(lines) if x.startswith("| runtime"))
    assert heading < first_table
    answers = lines[heading + 2 : lines.index("", heading + 2)]
    assert all(a.startswith("- ") for a in answers)
    assert len(answers) == 2  # sign and verify, OTP 25 against OTP 23
    for call in ("sign", "verify"):
        pattern = rf"- erlang@\S+ against erlang@23\.2\.6: Erlang crypto:{call}: "
        assert any(re.match(pattern, a) for a in answers), (call, answers)
    assert all("(CI " in a or "--rounds" in a for a in answers)
    head, rule = lines[first_table], lines[first_table + 1]
    rows = lines[first_table + 2 : lines.index("", first_table)]
    assert len(rows) == 4 and all(r.startswith("| erlang@") for r in rows)
    assert "p10" in head and "median" in head and "MB/s" not in head and "---:" in rule
    # The columns that do not fit a comment (ops/s) are in the table folded under it.
    every = lines[lines.index("<details><summary>Every column</summary>") + 2]
    assert "ops/s" in every and "p10" in every and "MB/s" not in every
    assert "<details><summary>Environment</summary>" in md
    rel = bullseye.erl.relative_to(home)
    assert f"--erl ~/{rel} --erl " in md and str(home) + "/" not in md
    assert not [x for x in lines if x != x.rstrip()]
