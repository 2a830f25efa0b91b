"""A cell's loop count (bridge.pyworker.calibration, erl/bridge_measure.erl
alike): one run stretched by a wait for the CPU does not set it."""

from __future__ import annotations

from bridge.pyworker import calibration

SAMPLE_NS = 20_000_000
CALL_NS = 1_000_000  # a call of 1 ms: 20 a sample


def _timer(stretched: dict[int, list[int]]):
    """Times n calls of CALL_NS, except that the runs listed for n (their
    order) take as long as given: a wait for the CPU."""
    runs: list[int] = []

    def timer(_loop, n: int) -> int:
        runs.append(n)
        extra = stretched.get(n, [])
        return extra.pop(0) if extra else n * CALL_NS

    return timer, runs


def test_loops_from_the_calls_speed():
    timer, runs = _timer({})
    n, t, spent = calibration.calibrate(lambda n: None, 0, SAMPLE_NS, timer)
    assert (n, t) == (16, 16 * CALL_NS)  # 16 ms: the first count past half a sample
    assert runs == [1, 2, 4, 8, 16, 16]  # the long run once more
    assert spent == sum(runs) * CALL_NS
    assert round(n * SAMPLE_NS / t) == 20


def test_one_stretched_run_does_not_set_the_loops():
    # The first run waited 30 ms for a CPU: alone it made the loops 1 a sample.
    timer, runs = _timer({1: [30_000_000]})
    n, t, _ = calibration.calibrate(lambda n: None, 0, SAMPLE_NS, timer)
    assert round(n * SAMPLE_NS / t) == 20, runs
    assert runs == [1, 1, 2, 4, 8, 16, 16]


def test_the_shorter_of_two_long_runs_counts():
    timer, _ = _timer({16: [40_000_000]})  # the first run of 16 waited
    n, t, _ = calibration.calibrate(lambda n: None, 0, SAMPLE_NS, timer)
    assert (n, t) == (16, 16 * CALL_NS)


def test_the_warm_up_still_runs_its_time():
    timer, runs = _timer({})
    _, _, spent = calibration.calibrate(lambda n: None, 100_000_000, SAMPLE_NS, timer)
    assert spent >= 100_000_000
    assert runs[-1] == 16 and set(runs[5:]) == {16}
