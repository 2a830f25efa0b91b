"""The headline command as a user sees it on an 80-column terminal: the real
`bridge run hmac-sha1 --quick` (Erlang node, Python worker, openssl), its
stdout the view, its stderr a pseudo-terminal that shows the progress line."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Mapping

import pytest

from bridge.cli import live
from bridge.cli.live import ProgressMode
from bridge.report import schema
from bridge.settings import QUICK
from tests.conftest import ROOT, needs_erl, needs_openssl

WARNING = re.compile(r"^(?:bridge: )?(?:warning|advice|Warning|Advice): ", re.M)


def _read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other side closed
            return
        if not chunk:
            return
        into.append(chunk)


@pytest.mark.serial  # a real run's view, with the load's warnings in it
@needs_erl
@needs_openssl
def test_hmac_sha1_quick_at_80_columns(tmp_path, no_leftovers):
    master, slave = pty.openpty()
    out = tmp_path / "r.json"
    err: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, err), daemon=True)
    reader.start()
    env = terminal_env()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bridge", "run", "hmac-sha1", "--quick", "-o", str(out)],
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            cwd=ROOT,
            timeout=180,
        )
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    stdout = done.stdout.decode()
    stderr = b"".join(err).decode()
    assert done.returncode == 0, stderr
    lines = stdout.splitlines()

    # Fits: no line wider than 80; 40 lines at most without what this
    # machine's load adds (warnings on other processes, waits, two speeds;
    # the reason an inconclusive verdict gives, judged on CPU time), which
    # grows with the load: each warning at most 8 lines, each verdict at
    # most 4. (Beside two CPU hogs at a load of 10, four warnings and the
    # advice took 18 lines; at a load of 10 four inconclusive verdicts took
    # 11, their reasons 7.)
    assert max(map(len, lines)) <= 80, [x for x in lines if len(x) > 80]
    noise = _paragraphs(lines, ("Warning:", "Advice:"))
    verdicts = _paragraphs(lines[: lines.index("")], ("  Erlang ", "  Python ", "  openssl "))
    reasons = sum(n - 1 for n in verdicts)
    assert len(lines) - sum(noise) - reasons <= 40, stdout
    assert max(noise) <= 8, stdout
    assert max(verdicts) <= 4, stdout
    # The answer first: the Erlang verdict among the first 12 lines, with its CI.
    erlang = [n for n, x in enumerate(lines) if x.startswith("  Erlang crypto:macN")]
    assert erlang and erlang[0] < 12, stdout
    assert re.search(
        r"\(CI \d+\.\d\d–\d+\.\d\d\)|no CI", " ".join(lines[erlang[0] : erlang[0] + 2])
    )
    assert "p10 ns" in stdout and "median ns (95% CI)" in stdout
    assert "cryptography" not in stdout  # no row of hmac-sha1 uses the package

    # Each warning once: none of stdout's is repeated on stderr, and the
    # other way round.
    said = " ".join(stdout.split())
    for line in stderr.replace("\r", "\n").splitlines():
        if WARNING.match(line):
            text = WARNING.sub("", line).rstrip(".")
            assert " ".join(text.split())[:60] not in said, line
    for start in (m.end() for m in WARNING.finditer(stdout)):
        head = " ".join(stdout[start : start + 80].split())[:40]
        assert head not in " ".join(stderr.split()), head

    # The progress line: a bar, a percentage, the time spent and left (an
    # estimate from the first batch on), never wider than the terminal, and
    # nothing of it left once the run ends. At 80 columns a cell's call is
    # whole: the round and the runtime are shortened instead (r2/24 [erl25.2.3]).
    updates = stderr.split("\r\x1b[K")
    bars = [u for u in updates if re.match(r"\[[#-]{10}\] +\d+% \d+:\d\d ETA \d+:\d\d ", u)]
    assert bars, stderr[:500]
    cells = [u for u in bars if re.search(rf" r\d+/{QUICK.rounds} \[", u)]
    assert any(" macN " in u for u in cells), cells[:5]
    assert not [u for u in cells if u.endswith("...")], [u for u in cells if u.endswith("...")]
    assert all(len(u) <= 77 for u in updates[1:-1]), [u for u in updates if len(u) > 77]
    assert updates[-1].startswith("report written to"), repr(updates[-1][:100])
    assert schema.load(out).results


def terminal_env(env: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The environment of a user at an 80-column xterm: `--progress auto`
    draws the bar there, but lines under CI=true or TERM=dumb
    (bridge.cli.live.chosen), which a CI runner's environment may say.
    The rest of the environment is kept."""
    kept = {k: v for k, v in env.items() if k != "CI"}
    return kept | {"TERM": "xterm", "COLUMNS": "80", "LINES": "24"}


def test_the_run_s_environment_is_a_terminal_s_even_under_ci():
    # On a CI runner (CI=true, or TERM=dumb) auto would choose lines,
    # and the test above would find no bar (seen in CI).
    ci = {"CI": "true", "TERM": "dumb", "PATH": "/usr/bin"}
    assert live.chosen(ProgressMode.AUTO, False, True, ci) is ProgressMode.LINES
    env = terminal_env(ci)
    assert live.chosen(ProgressMode.AUTO, False, True, env) is ProgressMode.BAR
    assert env["PATH"] == "/usr/bin" and env["COLUMNS"] == "80"


def _paragraphs(lines: list[str], starts: tuple[str, ...]) -> list[int]:
    """The lines each paragraph beginning with `starts` takes, in order: it
    goes on over the lines indented deeper than its first."""
    sizes: list[int] = []
    inside, indent = False, ""
    for line in lines:
        if line.startswith(starts):
            inside = True
            sizes.append(0)
            indent = line[: len(line) - len(line.lstrip(" "))] + "  "
        elif not line.startswith(indent):
            inside = False
        if inside:
            sizes[-1] += 1
    return sizes or [0]
