"""The per-thread CPU readers on this test process's real /proc, affinity on
a real child, and the TSC's rate (bridge.system.cpustat)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time

import pytest

from bridge.system import cpustat

linux = pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="no schedstat")


def test_parse_schedstat_and_a_stat_line_whose_name_has_spaces_and_parens():
    assert cpustat.parse_schedstat("123 456 7\n") == (123, 456)
    with pytest.raises(ValueError):
        cpustat.parse_schedstat("")
    fields = ["S"] + [str(i) for i in range(4, 53)]  # fields 3..52; field 39 holds "39"
    line = f"42 (a (b) c) {' '.join(fields)}\n"
    assert cpustat.parse_stat_cpu(line) == 39


def _spin(seconds: float) -> None:
    """Spin until this thread has had `seconds` of CPU (however loaded the machine)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@linux
def test_the_calling_threads_figures_grow_with_its_work_and_name_an_allowed_cpu():
    stat = cpustat.open_self()
    assert stat is not None
    try:
        run0, wait0 = stat.read()
        _spin(0.03)
        time.sleep(0.001)  # a switch brings the thread's schedstat up to date
        run1, wait1 = stat.read()
        assert 25_000_000 <= run1 - run0 < 10_000_000_000  # the 30 ms of CPU it spun
        assert wait1 >= wait0
        assert stat.cpu() in os.sched_getaffinity(0)
        assert stat.stat_cpu() in os.sched_getaffinity(0)
    finally:
        stat.close()


@linux
def test_another_threads_reader_and_affinity_on_a_real_child():
    allowed = cpustat.allowed_cpus()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        reader = cpustat.ThreadStat(child.pid)
        assert reader.read()[0] > 0 and reader.cpu() in allowed
        reader.close()
        assert cpustat.set_process_affinity(child.pid, {allowed[-1]})
        for tid in os.listdir(f"/proc/{child.pid}/task"):
            assert os.sched_getaffinity(int(tid)) == {allowed[-1]}
    finally:
        child.kill()
        child.wait()


@linux
def test_the_calling_thread_is_put_back_where_it_was():
    before = os.sched_getaffinity(0)
    with cpustat.calling_thread_on({min(before)}):
        assert os.sched_getaffinity(0) == {min(before)}
    assert os.sched_getaffinity(0) == before


@pytest.mark.skipif(platform.machine() != "x86_64", reason="rdtsc is x86-64's")
def test_the_tsc_rate_is_measured_and_says_where_it_came_from():
    rate = cpustat.tsc_rate()
    assert rate is not None and 1e8 < rate.hz < 1e10
    assert "rdtsc" in rate.source
    kernel = cpustat.kernel_tsc_mhz()
    if kernel is not None:  # the kernel's own figure, where its log is readable
        assert abs(rate.hz / (kernel * 1e6) - 1) < 0.02
