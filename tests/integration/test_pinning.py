"""The CPU a real worker measures on: pinned to the round's CPU for its batch,
and free on every CPU again once the batch is done. Processes that stayed
pinned between their batches took the next batch's CPU in turns with it: in
a control run with two processes a side (tests/cli/test_hardware.py), masked
Erlang nodes waited for a CPU in up to 86% of their sample windows, and
ChaCha20 read up to 1.6x "slower" masked."""

from __future__ import annotations

import os

import pytest

from bridge.catalog import calls, inputs, scenario
from bridge.runtimes.base import BatchPlan, Job
from bridge.runtimes.erlang import ErlangRuntime
from bridge.runtimes.python import PythonRuntime
from bridge.system import otp
from tests.conftest import FAST, needs_erl

ALLOWED = set(os.sched_getaffinity(0))


def _affinities(pid: int) -> list[set[int]]:
    return [os.sched_getaffinity(int(tid)) for tid in os.listdir(f"/proc/{pid}/task")]


@pytest.mark.skipif(len(ALLOWED) < 2, reason="pinning needs two CPUs or more")
@pytest.mark.parametrize(
    "make, call_id",
    [
        pytest.param(lambda: ErlangRuntime(otp.locate(None), FAST), "macN", marks=needs_erl),
        pytest.param(lambda: PythonRuntime(FAST), "hmac.digest"),
    ],
    ids=["erlang", "python"],
)
def test_a_worker_is_pinned_for_its_batch_and_free_after_it(make, call_id, no_leftovers):
    sc = scenario.load("hmac-sha1")
    data = inputs.make(1, sc.name, sc.key_bytes, 1000)
    rt = make()
    with rt as info:
        job = Job(sc, calls.CALLS[info.kind, call_id], data)
        pid = rt.worker.pid
        for r in (0, 1):
            batch = rt.bench(job, BatchPlan(3, 0, round=r))
            cpu = rt.pinning.cpu_for(r)
            assert batch.cpus == [cpu] * 3  # every window on the round's CPU
            assert all(a == ALLOWED for a in _affinities(pid)), (r, _affinities(pid))
