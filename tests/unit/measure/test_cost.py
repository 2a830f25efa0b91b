"""The cost of a plan, with known answers: the time, the worker processes
and the memory worked out by hand from the session's plan and the measured
figures in bridge.measure.cost."""

from __future__ import annotations

import dataclasses

import pytest

from bridge.catalog import scenario
from bridge.measure import cost
from bridge.measure.cost import Over, Part
from bridge.measure.plan import Plan
from bridge.report.hw import HwMode
from bridge.settings import DEFAULT, QUICK

MIB = 1 << 20


def plan(
    *names: str, settings=DEFAULT, hw=HwMode.BOTH, kinds=("erlang", "python", "openssl"), **sc
):
    loaded = tuple(dataclasses.replace(scenario.load(n), **sc) for n in names)
    return Plan(scenarios=loaded, settings=settings, seed=1, hw=hw, kinds=kinds)


def test_the_default_hmac_sha1_run():
    c = cost.estimate(plan("hmac-sha1"), cpus=2)
    # Worker cells: erlang 1 call, python 2, each as found and masked: 6.
    # Each: 100 ms warm-up, 2 fresh processes x 20 ms, 47 re-warm-ups x 10 ms;
    # 100 samples x 5 ms; 50 requests.
    warm, samples, requests = 6 * 0.610, 6 * 0.5, 6 * 50 * cost.BATCH_S
    # openssl: 2 cells x 5 runs of 1 s; two waves of start-up (twins).
    runs, startup = 2 * 5 * (1 + cost.OPENSSL_START_S), 2 * cost.WAVE_S
    assert c.seconds == pytest.approx(warm + samples + requests + runs + startup)
    assert c.seconds == pytest.approx(24.96)
    assert c.seconds_max == c.seconds
    assert c.time[0].part is Part.OPENSSL_RUNS and c.time[0].cells == 2
    # 3 nodes and 3 Python workers per runtime, each with a twin; one openssl at a time.
    assert c.workers == 13
    assert {x.part: x.amount for x in c.processes} == {
        Part.ERLANG_NODES: 6,
        Part.PYTHON_WORKERS: 6,
        Part.OPENSSL: 1,
    }
    beam = cost.BEAM_OWN + 2 * cost.BEAM_PER_SCHEDULER
    # Messages: 8 cells keep their 1000 bytes; copies in flight in the
    # driver and the 12 worker processes.
    messages = 8 * 1000 + 1000 * (2 + 2 * 12)
    # What the nodes, the Python workers and openssl share is counted once.
    assert c.memory == (
        cost.DRIVER
        + cost.BEAM_SHARED + 6 * beam
        + cost.PYTHON_SHARED + 6 * cost.PYTHON_OWN
        + cost.OPENSSL_SHARED + cost.OPENSSL_OWN
        + messages
    )  # fmt: skip
    assert 250 * MIB < c.memory < 350 * MIB  # the module's table: 266 MiB seen
    assert c.largest_message == 1000


def test_hw_off_starts_the_runtimes_as_found_once_and_their_twins_in_full():
    c = cost.estimate(plan("hmac-sha1", hw=HwMode.OFF), cpus=2)
    # erlang and python: 1 process as found (provenance), 3 for the twin.
    assert {x.part: x.amount for x in c.processes} == {
        Part.ERLANG_NODES: 4,
        Part.PYTHON_WORKERS: 4,
        Part.OPENSSL: 1,
    }
    # Only the twins have cells: 3 worker cells, 1 openssl cell.
    assert {x.part: x.cells for x in c.time}[Part.SAMPLES] == 3


def test_quick_without_the_ab():
    c = cost.estimate(plan("hmac-sha1", settings=QUICK, hw=HwMode.ON), cpus=2)
    # 3 worker cells: 30 ms warm-up and 23 x 5 ms; 24 x 5 ms; 24 requests.
    # One openssl run; one wave.
    expected = 3 * (0.145 + 0.120 + 24 * cost.BATCH_S) + (1 + cost.OPENSSL_START_S) + cost.WAVE_S
    assert c.seconds == pytest.approx(expected)
    assert c.workers == 3


def test_schedulers_and_cpus_set_a_nodes_memory():
    one = cost.estimate(plan("hmac-sha1", kinds=("erlang",), hw=HwMode.ON), cpus=2)
    many = cost.estimate(
        plan(
            "hmac-sha1",
            kinds=("erlang",),
            hw=HwMode.ON,
            settings=dataclasses.replace(DEFAULT, schedulers=1024),
        ),
        cpus=2,
    )
    assert many.memory - one.memory == 3 * 1022 * cost.BEAM_PER_SCHEDULER


def test_levels_of_256_start_256_python_processes():
    """The issue's report: concurrency [1, 256] started 256 Python workers (4.9 GB)."""
    c = cost.estimate(
        plan("hmac-sha1", settings=QUICK, hw=HwMode.ON, kinds=("python",), concurrency=(1, 256)),
        cpus=2,
    )
    assert c.workers == 1 + 255
    assert c.processes[0].part is Part.LEVEL_PROCESSES and c.processes[0].amount == 255
    assert c.memory > 256 * cost.PYTHON_OWN
    assert Over.WORKERS in cost.ALWAYS_ASK.over(c) and Over.MEMORY in cost.BUDGET.over(c)
    # Level cells: 2 calls x 2 levels x 2 modes (threads, processes), 24
    # windows of 50 ms each in 12 batches (not --quick's 24 rounds), and 255
    # processes started.
    (levels,) = [x for x in c.time if x.part is Part.LEVELS]
    assert levels.cells == 8
    per_cell = 24 * 0.050 + (30 + 11 * 5) / 1000 + 12 * cost.LEVEL_BATCH_S
    assert levels.amount == pytest.approx(8 * per_cell + 255 * cost.PROCESS_START_S)


def test_openssl_multi_and_tls_peers():
    c = cost.estimate(
        plan("hmac-sha1", settings=QUICK, hw=HwMode.ON, kinds=("openssl",), concurrency=(1, 8)),
        cpus=2,
    )
    assert c.workers == 9  # speed -multi 8: the parent and 8 children (9 seen)
    tls = cost.estimate(plan("tls-handshake", settings=QUICK, hw=HwMode.ON), cpus=2)
    assert {x.part: x.amount for x in tls.processes}[Part.OPENSSL] == 2


def test_the_issues_days_long_report_is_driven_by_its_samples():
    long = dataclasses.replace(
        DEFAULT, samples=10_000, rounds=1000, sample_ms=10_000, warmup_ms=60_000
    )
    c = cost.estimate(plan("hmac-sha1", settings=long), cpus=2)
    assert c.time[0].part is Part.SAMPLES and c.time[0].cells == 6
    assert c.time[0].amount == pytest.approx(6 * 10_000 * 10.0)
    assert c.seconds > 3 * 86_400
    assert Over.TIME in cost.ALWAYS_ASK.over(c)


def test_tc_calls_cost_time_on_the_erlang_cells_that_take_them():
    tc = dataclasses.replace(DEFAULT, tc_calls=100_000_000)
    c = cost.estimate(plan("hmac-sha1", settings=tc), cpus=2)
    (share,) = [x for x in c.time if x.part is Part.TC]
    assert share.cells == 2 and share.amount == pytest.approx(2 * 1e8 * cost.TC_CALL_S)
    assert c.time[0].part is Part.TC
    # sha256's Erlang hash takes the harness too; a signature does not.
    assert not [
        x for x in cost.estimate(plan("rsa-2048", settings=tc), cpus=2).time if x.part is Part.TC
    ]


def test_until_stable_is_bounded_by_max_seconds():
    s = dataclasses.replace(DEFAULT, until_stable=0.01, max_seconds=3600)
    c = cost.estimate(plan("hmac-sha1", settings=s), cpus=2)
    assert c.seconds == pytest.approx(24.96)
    assert c.seconds_max == pytest.approx(3600)
    assert Over.TIME not in cost.ALWAYS_ASK.over(c)  # an hour exactly is not over it
    short = cost.estimate(plan("hmac-sha1", settings=dataclasses.replace(s, max_seconds=5)), cpus=2)
    assert short.seconds_max == short.seconds


def test_slow_calls_stretch_their_samples():
    # PBKDF2 at 10 M iterations: at least 3 s a call, so 100 samples take 300 s.
    c = cost.estimate(
        plan("pbkdf2-sha256", hw=HwMode.ON, kinds=("python",), sizes=(10_000_000,)), cpus=2
    )
    parts = {x.part: x for x in c.time}
    assert parts[Part.SAMPLES].amount == pytest.approx(100 * 0.005)
    assert parts[Part.SLOW_CALLS].amount == pytest.approx(100 * (3.0 - 0.005))
    assert c.time[0].part is Part.SLOW_CALLS and c.time[0].cells == 1
    # Iteration counts are not message sizes: nothing of that size is generated.
    assert c.largest_message == 0


def test_measured_call_times_only_lengthen_the_estimate():
    """A report says how long its calls took: Python's RSA key load took
    0.14 s a call here, so its 100 samples take 14 s, not 0.5. A time below
    a sample changes nothing (a report cannot make a replay look cheaper)."""
    p = plan("rsa-2048", hw=HwMode.ON, kinds=("python",))
    base = cost.estimate(p, cpus=2)
    slow = cost.estimate(p, cpus=2, known={("rsa-2048", "python", "load", 64): 0.14})
    assert slow.seconds - base.seconds == pytest.approx(100 * (0.14 - 0.005))
    (share,) = [x for x in slow.time if x.part is Part.SLOW_CALLS]
    assert share.cells == 1
    fast = cost.estimate(p, cpus=2, known={("rsa-2048", "python", "load", 64): 1e-9})
    assert fast.seconds == base.seconds
    # --method tc: timer:tc's microsecond and the call's own time, each call.
    tc = dataclasses.replace(DEFAULT, tc_calls=1_000_000)
    known = {("hmac-sha1", "erlang", "macN", 1000): 10e-6}
    c = cost.estimate(plan("hmac-sha1", settings=tc, hw=HwMode.ON), cpus=2, known=known)
    (share,) = [x for x in c.time if x.part is Part.TC]
    assert share.amount == pytest.approx(1_000_000 * (cost.TIMER_TC_S + 10e-6))


def test_default_runs_are_within_the_budget_and_the_budget_below_the_line():
    assert cost.BUDGET.seconds <= cost.ALWAYS_ASK.seconds
    assert cost.BUDGET.workers <= cost.ALWAYS_ASK.workers
    for p in (
        plan("hmac-sha1"),
        plan("hmac-sha1", settings=QUICK),
        plan("hmac-sha1", "sha256"),
        plan("hmac-sha1", concurrency=(1, 2, 4)),
    ):
        assert cost.BUDGET.over(cost.estimate(p, cpus=2)) == ()
    # Levels up to 16 of hmac-sha1 start more than 32 workers.
    wide = cost.estimate(plan("hmac-sha1", concurrency=(1, 2, 4, 8, 16)), cpus=2)
    assert cost.BUDGET.over(wide) == (Over.WORKERS,)
