"""Room for the run, checked before anything runs: generated files against
free disk, generated messages against available memory. And a full disk while
the report is written: an error, with the earlier report intact."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bridge.cli import plans
from bridge.errors import UsageError
from tests.conftest import FAST_ARGS, bridge_cmd, needs_erl
from tests.fsutil import fill, small_fs

GiB = 1 << 30


def plan(*scenarios: str, **options):
    o = plans.RunOptions(scenarios=scenarios, **options)
    real = plans.check_room
    plans.check_room = lambda p: None  # the numbers are given per test
    try:
        return plans.from_options(o, ())
    finally:
        plans.check_room = real


def test_a_file_beyond_free_disk_is_refused():
    p = plan("file-sha256", file_size="16G")
    with pytest.raises(UsageError) as refused:
        plans.check_disk(p, "/some/tmp", 10 * GiB)
    assert refused.value.one_line() == (
        "file-sha256 writes a 16.0 GiB file into /some/tmp, which has 10.0 GiB free"
        " (64.0 MiB of it is kept spare); use a smaller --file-size, or set TMPDIR to a"
        " file system with more room"
    )
    plans.check_disk(p, "/some/tmp", 17 * GiB)  # fits
    plans.check_disk(p, "/some/tmp", None)  # unknown: not refused


def test_files_count_only_for_file_digest_scenarios_that_run():
    plans.check_disk(plan("hmac-sha1"), "/t", 0)
    plans.check_disk(plan("file-sha256", file_size="1G", runtimes="python"), "/t", 2 * GiB)
    with pytest.raises(UsageError, match=r"writes a 1\.0 GiB file into /t, which has 512\.0 MiB"):
        plans.check_disk(plan("file-sha256", file_size="1G"), "/t", GiB // 2)


def test_messages_beyond_available_memory_are_refused():
    # hmac-sha1 with the A/B: erlang 1 call, python 2, openssl 1, each on a
    # runtime as found and a masked twin: 8 cells keep a copy of each
    # message; 3 nodes and 3 Python workers per runtime, twins included, hold
    # copies in flight (bridge.measure.cost).
    from bridge.measure import cost

    p = plan("hmac-sha1", sizes=f"{GiB},{GiB // 2}")
    c = cost.estimate(p, cpus=2)
    (messages,) = [x for x in c.memory_parts if x.part is cost.Part.MESSAGES]
    assert messages.amount == 8 * (GiB + GiB // 2) + GiB * (2 + 2 * 12)
    assert c.largest_message == GiB
    with pytest.raises(UsageError) as refused:
        plans.check_memory(p, 8 * GiB, cpus=2)
    assert refused.value.one_line() == (
        f"this run needs about {plans.size_text(c.memory)} of memory, 38.0 GiB of it for the"
        " generated messages (largest 1.0 GiB); 8.0 GiB is available (MemAvailable); use"
        " smaller --sizes or fewer runtimes"
    )
    plans.check_memory(p, 64 * GiB, cpus=2)
    plans.check_memory(p, None, cpus=2)
    # --hw on: no masked twins, half the cells and processes.
    on = cost.estimate(plan("hmac-sha1", sizes=str(GiB), hw="on"), cpus=2)
    (messages,) = [x for x in on.memory_parts if x.part is cost.Part.MESSAGES]
    assert messages.amount == 4 * GiB + GiB * (2 + 2 * 6)


def test_worker_processes_beyond_available_memory_are_refused():
    """--concurrency 1,1024 typed: 1023 more Python processes (the issue's
    256 took 4.9 GB) are refused where the machine has not the memory."""
    p = plan("hmac-sha1", concurrency="1,1024", runtimes="python", hw="on", quick=True)
    with pytest.raises(UsageError) as refused:
        plans.check_memory(p, 4 * GiB, cpus=2)
    line = refused.value.one_line()
    assert line.startswith("this run needs about 12.") and "of it for 1023 Python processes" in line
    assert line.endswith("4.0 GiB is available (MemAvailable); use lower --concurrency levels")


def test_mem_available_is_read_from_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  32000000 kB\nMemFree: 100 kB\nMemAvailable:   24124300 kB\n")
    assert plans.mem_available(str(meminfo)) == 24124300 * 1024
    meminfo.write_text("MemTotal:  32000000 kB\n")  # kernels before 3.14
    assert plans.mem_available(str(meminfo)) is None
    assert plans.mem_available(str(tmp_path / "none")) is None


def test_file_size_beyond_free_space_is_refused_up_front(tmp_path):
    # A 2 MiB tmpfs as TMPDIR, where file-sha256 would write its file.
    with small_fs(tmp_path / "small") as small:
        done = bridge_cmd(
            "run", "file-sha256", "--file-size", "1G", *FAST_ARGS, env={"TMPDIR": str(small)}
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [
            f"bridge: error: file-sha256 writes a 1.0 GiB file into {small}, which has 2.0 MiB"
            " free (64.0 MiB of it is kept spare); use a smaller --file-size, or set TMPDIR"
            " to a file system with more room"
        ]
        assert os.listdir(small) == []  # nothing was started, nothing written


@needs_erl
def test_a_full_disk_while_writing_the_report_keeps_the_earlier_one(tmp_path, no_leftovers):
    with small_fs(tmp_path / "small", "1m") as small:
        out = small / "r.json"
        earlier = '{"schema": "bridge.report/1", "earlier": true}\n'
        out.write_text(earlier)
        fill(small)
        done = bridge_cmd("run", "hmac-sha1", *FAST_ARGS, "--runtimes", "python", "-o", str(out))
        assert done.returncode == 1, done.stderr
        (line,) = [x for x in done.stderr.splitlines() if x.startswith("bridge: error:")]
        head = (
            f"bridge: error: {out}: cannot write (No space left on device); the report is kept in "
        )
        assert line.startswith(head)
        assert out.read_text() == earlier
        assert sorted(os.listdir(small)) == ["filler", "r.json"]  # no temporary file left
        json.loads(out.read_text())
        json.loads(Path(line[len(head) :]).read_text())  # the new one, kept elsewhere
