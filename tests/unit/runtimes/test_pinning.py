"""The per-round CPU of a runtime's process (bridge.runtimes.pinning), on a real child process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bridge.runtimes.pinning import Pinning
from bridge.system import cpustat

CPUS = cpustat.allowed_cpus()
pytestmark = pytest.mark.skipif(len(CPUS) < 2, reason="pinning rotates over two CPUs or more")


@pytest.fixture
def child():
    # Two threads, as a worker has more than one: every thread is moved.
    code = (
        "import threading, time; threading.Thread(target=time.sleep, args=(30,)).start();"
        " time.sleep(30)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    yield proc.pid
    proc.kill()
    proc.wait()


def affinities(pid: int) -> set[frozenset[int]]:
    return {frozenset(os.sched_getaffinity(int(t))) for t in os.listdir(f"/proc/{pid}/task")}


def test_the_measuring_process_is_on_the_rounds_cpu_and_parked_off_it_after(child):
    p = Pinning(CPUS[:2])
    a, b = CPUS[:2]
    for r, here, away in ((0, a, b), (1, b, a), (2, a, b)):
        assert p.pin(child, r) == here
        assert affinities(child) == {frozenset({here})}
        p.park(child, r)
        assert affinities(child) == {frozenset({away})}


def test_unpinned_and_one_cpu_park_nothing(child):
    before = affinities(child)
    Pinning(()).park(child, 0)
    Pinning((CPUS[0],)).park(child, 0)
    assert affinities(child) == before
