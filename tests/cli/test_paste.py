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
    # The answer first: a line per call and runtime, OTP 25 against OTP 23.
    answers = lines[2 : lines.index("", 2)]
    assert all(a.startswith("- ") for a in answers)
    calls = [a for a in answers if re.match(r"- (erlang|openssl)@\S+ `", a)]
    assert len(calls) == 4  # sign and verify on 2 OTPs
    assert any(
        re.match(r"- erlang@\S+ `crypto:verify\(.*time against erlang@23\.2\.6: ", a)
        for a in answers
    )
    assert "(CI " in answers[1] or "too few rounds" in answers[1]
    head = next(x for x in lines if x.startswith("| runtime"))
    rule = lines[lines.index(head) + 1]
    assert "ops/s" in head and "p10" in head and "MB/s" not in head and "---:" in rule
    assert "<details><summary>Environment</summary>" in md
    rel = bullseye.erl.relative_to(home)
    assert f"--erl ~/{rel} --erl " in md and str(home) + "/" not in md
    assert not [x for x in lines if x != x.rstrip()]
