"""The Python worker's `conc` operation in-process: N threads over common
windows, a window missed, the races, the threads' CPU time, the reply's shape
and its output, bad arguments. What is asserted holds however busy the
machine is: counts that follow from the procedure, not from how fast it ran."""

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
    reply = dict(ops.handle("conc", args(races=2)))
    batch = reply["batch"]
    assert reply["level"] == 2 and batch >= 1
    assert len(reply["windows"]) == 2 and all(len(w) == 3 for w in reply["windows"])
    assert all(c % batch == 0 for w in reply["windows"] for c, _ in w)
    # One sampled latency per batch, in every window a thread did not miss
    # (a thread descheduled for a whole window records it as missed).
    for windows, latencies in zip(reply["windows"], reply["latency_ns"], strict=True):
        assert len(latencies) == sum(c // batch for c, _ in windows)
    assert reply["output"] == hashlib.sha256(b"x" * 4096).digest()
    # Two races of the median window's calls of one thread, each
    # finished by both threads.
    assert reply["race_calls"] == conc.race_calls(reply["windows"])
    assert len(reply["race_ns"]) == 2 and all(len(r) == 2 for r in reply["race_ns"])
    assert all(t > 0 for r in reply["race_ns"] for t in r)
    # The span of the windows (from the first thread's start to the last
    # one's end), and the threads' CPU time and run-queue wait in it.
    assert reply["span_ns"] > 0
    if "cpu_ns" in reply:  # where /proc has schedstat
        assert reply["cpu_ns"] > 0 and reply["wait_ns"] >= 0


def test_a_race_alone_starts_at_the_given_time():
    """A worker process's turn in a race: no windows, the start given."""
    start = conc.now() + 2_000_000
    reply = dict(
        ops.handle("conc", args(workers=1, windows=0, races=1, race_calls=10, start_at_ns=start))
    )
    assert reply["race_calls"] == 10 and len(reply["race_ns"]) == 1
    assert reply["windows"] == [[]] and "span_ns" not in reply
    assert conc.now() - start >= reply["race_ns"][0][0] > 0


def test_a_race_is_the_median_window_of_one_worker():
    assert conc.race_calls([[(0, 0)]]) == 1 and conc.race_calls([[(1, 5)]]) == 1
    assert conc.race_calls([[(20, 5), (0, 0), (30, 5)], [(10, 5)]]) == 20


def test_no_windows_without_races_is_refused():
    with pytest.raises(OperationError) as exc:
        ops.handle("conc", args(windows=0))
    assert exc.value.kind == "bad_request"


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

    # A warm-up of a second: the threads make their 51 calls (microseconds)
    # in it unless both are kept off a CPU for all of it, however busy the
    # machine; each then fails at its next call, so the level ends at once.
    with pytest.raises(OperationError, match="boom"):
        conc.conc(args(batch=1, warmup_ns=1_000_000_000), prepare, ops._int)


def test_a_thread_failing_in_a_race_fails_the_level():
    def prepare(name, a):
        def loop(n):
            if n == 7:  # the race's calls
                raise RuntimeError("race boom")

        return "api", lambda: b"", loop

    with pytest.raises(OperationError, match="race boom"):
        conc.conc(args(batch=1, races=1, race_calls=7), prepare, ops._int)
