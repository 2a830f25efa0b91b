"""The Python worker's `conc` operation in-process: N threads over common
windows, a window missed, the reply's shape and its output, bad arguments."""

from __future__ import annotations

import hashlib

import pytest

from bridge.errors import OperationError
from bridge.pyworker import conc, ops


def args(**over):
    return {
        "call": b"hashlib",
        "digest": b"sha256",
        "data": b"x" * 4096,
        "workers": 2,
        "warmup_ns": 1_000_000,
        "window_ns": 5_000_000,
        "windows": 3,
        **over,
    }


def test_threads_over_common_windows():
    reply = dict(ops.handle("conc", args()))
    assert reply["level"] == 2 and reply["batch"] >= 1
    assert len(reply["windows"]) == 2 and all(len(w) == 3 for w in reply["windows"])
    assert all(c % reply["batch"] == 0 for w in reply["windows"] for c, _ in w)
    assert len(reply["latency_ns"]) == 2 and sum(map(len, reply["latency_ns"])) >= 1
    assert reply["output"] == hashlib.sha256(b"x" * 4096).digest()


def test_a_given_batch_is_kept_and_a_late_start_is_reported():
    start = conc.now() - 2_000_000
    reply = dict(ops.handle("conc", args(workers=1, batch=5, start_at_ns=start)))
    assert reply["batch"] == 5 and reply["start_late_ns"] >= 2_000_000


def test_a_window_already_over_is_missed():
    t0 = conc.now() - 20_000_000
    windows, _ = conc.run_windows(lambda n: None, 1, t0, 5_000_000, 5)
    assert windows[:4] == [(0, 0)] * 4 and windows[4][0] > 0


@pytest.mark.parametrize("bad", [{"workers": 0}, {"window_ns": 10}, {"windows": 0}])
def test_bad_arguments_are_refused(bad):
    with pytest.raises(OperationError) as exc:
        ops.handle("conc", args(**bad))
    assert exc.value.kind == "bad_request"


def test_a_failing_thread_fails_the_level():
    def prepare(name, a):
        calls = []

        def loop(n):
            calls.append(n)
            if len(calls) > 50:
                raise RuntimeError("boom")

        return "api", lambda: b"", loop

    with pytest.raises(OperationError, match="boom"):
        conc.conc(args(batch=1), prepare, ops._int)
