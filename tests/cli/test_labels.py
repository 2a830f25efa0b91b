"""The words of a real run (issue 24), through the real CLI with real
runtimes: `pbkdf2-sha256 --sizes 1024,10000` says "1,024 and 10,000
iterations" in every format and on stderr, with no size in bytes anywhere;
--baseline with a name the report does not have, and an option no scenario of
the run follows, are one-line errors. Short settings: words, not timings.
(The fake-runtime tests of the same words: tests/session/test_labels.py.)"""

from __future__ import annotations

import re

from bridge.cli.common import rendered
from bridge.report import schema
from tests.conftest import bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]

SHORT = [
    "--samples",
    "6",
    "--sample-ms",
    "2",
    "--rounds",
    "2",
    "--warmup-ms",
    "0",
    "--openssl-runs",
    "1",
    "--hw",
    "on",
]
# A size in bytes: "1024 B", "1 KiB", "10000 bytes" (a "32-byte key" is a parameter).
BYTE_WORDS = re.compile(r"\b\d[\d,]* ?(?:B|bytes|KiB|MiB)\b")


def test_pbkdf2_iterations_read_as_iterations_everywhere(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd("run", "pbkdf2-sha256", "--sizes", "1024,10000", *SHORT, "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = schema.load(out)
    assert {r.size for r in report.results} == {1024, 10000}
    shown = {"stdout": done.stdout, "stderr": done.stderr}
    shown |= {fmt: rendered(fmt, report) for fmt in ("table", "text", "markdown")}
    for name, text in shown.items():
        text = " ".join(text.split())  # the text view wraps the title
        if name != "stderr":
            assert "1,024 and 10,000 iterations" in text, name
        assert not BYTE_WORDS.findall(text), (name, BYTE_WORDS.findall(text))
    # The whole-process openssl kdf rows compete only with each other: with
    # one openssl, with nobody; the in-process calls with each other.
    fastest = [d for d in report.differences or () if d.against == "fastest"]
    assert fastest and all("kdf" not in (d.call_id, d.baseline_call_id) for d in fastest)

    wrong = bridge_cmd("report", str(out), "--baseline", "erlang@1")
    assert wrong.returncode == 2 and wrong.stdout == ""
    (line,) = wrong.stderr.splitlines()
    assert line.startswith("bridge: error: --baseline 'erlang@1' is not a runtime of this report")
    assert "erlang@" in line.split("choose one of")[1]


def test_an_option_no_scenario_follows_is_an_error():
    # (A warning when some scenario follows it: tests/unit/cli/test_plans.py.)
    done = bridge_cmd("run", "ecdh-p256", "--sizes", "16,16384", *SHORT)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "bridge: error: --sizes changes nothing in this run (ecdh-p256: its one size is the"
        " shared secret's length)"
    ]
