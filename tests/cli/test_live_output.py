"""What a run shows while it runs, read as a CI log or a pipe reads it: the
real CLI (Erlang node, Python worker, openssl) with stdout and stderr on
pipes, each read as it arrives and stamped with the time it came."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from bridge.settings import QUICK
from tests.conftest import ROOT, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]


class Timed:
    """A child whose stdout and stderr are read in chunks as they come, each
    chunk with the monotonic time it arrived.

    Both go into one pipe, as `cmd 2>&1 | tee log` gives them: the order in
    which bridge wrote them is then the order they are read in. Two pipes
    read by two threads would stamp each chunk when its thread ran, which on
    a busy machine can put a later write first. `out` and `err` are the same
    stream; what is looked for in each is written to only one of them."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.out: list[tuple[float, str]] = []
        self.err = self.out
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bridge", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
        )
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(pipe, into: list[tuple[float, str]]) -> None:
        while chunk := os.read(pipe.fileno(), 65536):
            into.append((time.monotonic(), chunk.decode()))

    def wait(self, timeout: float = 240) -> float:
        """Once the child has exited and its pipe is drained: the time it ended."""
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        ended = time.monotonic()
        for reader in self.readers:
            reader.join(timeout=10)
        return ended

    def text(self, which: list[tuple[float, str]]) -> str:
        return "".join(chunk for _, chunk in which)

    @staticmethod
    def first(which: list[tuple[float, str]], needle: str) -> float:
        """When `needle` had arrived, whole (it may span two chunks)."""
        seen = ""
        for at, chunk in which:
            seen += chunk
            if needle in seen:
                return at
        raise AssertionError(f"{needle!r} never came: {seen[-2000:]!r}")

    def where(self, needle: str) -> int:
        """Where `needle` starts in the one stream: the order bridge wrote in.
        Two writes can come in one chunk, stamped with one time, so order is
        judged by offset and the times only say when."""
        at = self.text(self.out).find(needle)
        assert at >= 0, f"{needle!r} never came"
        return at


def _env(**over: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TERM")}
    return {**env, "COLUMNS": "80", **over}


@pytest.mark.parametrize("ci", ["true", None], ids=["CI=true", "a pipe"])
def test_a_run_in_a_pipe_or_under_ci_writes_progress_lines_as_it_goes(ci, no_leftovers):
    run = Timed(["run", "hmac-sha1", "--quick"], _env(**({"CI": ci} if ci else {})))
    ended = run.wait()
    assert run.proc.returncode == 0, run.text(run.err)
    err = run.text(run.err)
    # Plain lines a log keeps: no carriage return, no escape sequence.
    assert "\r" not in err and "\x1b" not in err, repr(err[:300])
    lines = err.splitlines()
    assert any(line.endswith("starting python") for line in lines), lines
    rounds = [line for line in lines if " of hmac-sha1 done (" in line]
    n_rounds = QUICK.rounds  # --quick's rounds, each said as it ends
    assert [r.split(" ETA ")[1].split()[1:3] for r in rounds] == [
        ["round", f"{n}/{n_rounds}"] for n in range(1, n_rounds + 1)
    ], rounds
    # Each with the share done, the time spent and an estimate of the time left.
    assert all(r.split()[0].endswith("%") and " ETA " in r for r in rounds), rounds
    assert "-:--" not in err
    # They came while it ran: the first round's line before the answer (the
    # scenario's heading, then what the run measured: the hardware verdicts),
    # and the answer before the end.
    answer = "Hardware: hw off = "
    assert run.where(f"round 1/{QUICK.rounds} of hmac-sha1 done") < run.where("== hmac-sha1")
    assert run.where("== hmac-sha1") < run.where(answer)
    assert run.first(run.out, answer) < ended


def test_a_two_scenario_run_prints_the_first_answer_before_the_second_starts(no_leftovers):
    # --progress bar in a pipe: every batch is said, as the bar's updates.
    args = ["run", "sha256", "sha512", "--quick", "--sizes", "64,1k"]
    run = Timed([*args, "--runtimes", "python,erlang", "--progress", "bar"], _env())
    ended = run.wait()
    assert run.proc.returncode == 0, run.text(run.err)
    out = run.text(run.out)
    order = [
        run.where("== sha256"),
        run.where("Both runtimes computed the same bytes"),
        run.where("] sha512 "),  # the first batch of sha512
        run.where("== sha512"),
    ]
    assert order == sorted(order) and len(set(order)) == 4, order
    assert run.first(run.out, "== sha512") < ended
    # The first scenario's part was whole before the second began: its
    # heading, answer (the hardware verdicts) and table; the machine and the
    # caveats come at the end.
    before = out[: order[2]]
    assert "Hardware: hw off = " in before and "crypto:hash" in before and "hashlib" in before
    assert "sha512" not in before and "Warning:" not in before
    assert out.count("== sha256") == 1 and out.count("== sha512") == 1
