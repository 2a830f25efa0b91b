"""The machine's noise during a run (bridge.analysis.noise), on canned /proc text and
fixed snapshots: the parsers, the accounting, the warnings and when they
come, the record in the report, and how the views show it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bridge.analysis import findings, noise
from bridge.cli.common import rendered
from bridge.render import terminal
from bridge.report import schema
from bridge.report.context import Environment
from bridge.report.findings import Why
from bridge.report.hw import Hw
from bridge.system import environment
from bridge.view import Detail, build, words

STAT = """\
cpu  1000 10 200 5000 30 4 6 50 0 0
cpu0 500 5 100 2500 15 2 3 25 0 0
cpu1 500 5 100 2500 15 2 3 25 0 0
intr 123456 0 0
ctxt 999
"""


def test_proc_stat_lines_parse_into_ticks():
    found = noise.parse_stat(STAT)
    assert set(found) == {"cpu", "cpu0", "cpu1"}
    cpu = found["cpu"]
    assert (cpu.user, cpu.nice, cpu.system, cpu.idle) == (1000, 10, 200, 5000)
    assert (cpu.iowait, cpu.irq, cpu.softirq, cpu.steal) == (30, 4, 6, 50)
    assert cpu.busy == 1220 and cpu.total == 1220 + 5000 + 30 + 50


def test_an_old_kernel_without_steal_reads_zero():
    assert noise.parse_stat("cpu 1 2 3 4 5 6 7\n")["cpu"].steal == 0


def test_loadavg_and_pid_stat_parse():
    assert noise.parse_loadavg("3.90 4.96 4.09 5/115 15012\n") == (3.90, 4.96, 4.09)
    # A name may hold spaces and parentheses: the last ')' ends it.
    line = "4242 (tmux: server (1)) S 1 4242 4242 0 -1 4194560 1 0 0 0 123 45 0 0 20 0 1 0"
    assert noise.parse_pid_stat(line) == ("tmux: server (1)", 168)


def cpu_times(busy: int, idle: int, steal: int = 0, iowait: int = 0) -> noise.CpuTimes:
    return noise.CpuTimes(busy, 0, 0, idle, iowait, 0, 0, steal)


def snapshots(**after_over) -> tuple[noise.Snapshot, noise.Snapshot]:
    """10 s on 2 CPUs at 100 ticks/s: 2000 ticks in all."""
    before = noise.Snapshot(
        wall=100.0,
        stat=cpu_times(0, 0),
        load=(0.5, 0.4, 0.3),
        processes={1: ("init", 0), 77: ("burner", 100), 78: ("idle", 5), 99: ("bridge", 0)},
        own_cpu_s=1.0,
        driver_cpu_s=0.5,
        own_pid=99,
    )
    after = noise.Snapshot(
        wall=110.0,
        stat=cpu_times(busy=1900, idle=40, steal=60),
        load=(2.5, 1.0, 0.5),
        processes={
            1: ("init", 1),
            77: ("burner", 1090),  # 9.9 s of CPU in 10 s
            78: ("idle", 6),
            99: ("bridge", 900),  # bridge itself is never listed
            120: ("worker", 800),  # started after the first snapshot: bridge's own
        },
        own_cpu_s=10.0,  # bridge and its reaped children: 9 s of CPU
        driver_cpu_s=0.8,  # of which the driver: 0.3 s
        own_pid=99,
    )
    return before, noise.Snapshot(**{**after.__dict__, **after_over})


def test_usage_splits_the_busy_time_between_bridge_and_the_others():
    use = noise.usage(*snapshots(), cpus=2, ticks_per_s=100)
    assert use.seconds == 10.0
    assert use.busy == pytest.approx(0.95)
    assert use.steal == pytest.approx(0.03)
    assert use.bridge_cpus == pytest.approx(0.9)
    assert use.driver_cpus == pytest.approx(0.03)
    assert use.others_cpus == pytest.approx(1.9 - 0.9)
    assert use.busy_processes == (noise.OtherProcess(77, "burner", 0.99),)
    assert use.busy_others == schema.BusyOthers(1, (0.99,))
    assert use.load_before == (0.5, 0.4, 0.3) and use.load_after == (2.5, 1.0, 0.5)


def test_a_report_keeps_how_many_were_busy_and_how_busy_not_who():
    """Other users' process names and pids travel in shared reports: only
    the count and the CPU shares are kept; the names stay in memory."""
    before, after = snapshots()
    procs = dict(after.processes)
    for pid in range(200, 207):  # seven more busy processes, 50%-80% of a CPU
        before.processes[pid] = (f"secret-{pid}", 0)
        procs[pid] = (f"secret-{pid}", 500 + (pid - 200) * 50)
    use = noise.usage(before, noise.Snapshot(**{**after.__dict__, "processes": procs}), 2, 100)
    assert use.busy_count == 8 and len(use.busy_processes) == noise.BUSY_PROCESSES_SHOWN
    rec = noise.measured(use)
    rec = dataclasses.replace(rec, findings=tuple(noise.machine_findings(rec, Environment())))
    assert rec.busy_others == schema.BusyOthers(8, (0.99, 0.8, 0.75, 0.7, 0.65))
    assert rec.busy_processes is None
    text = json.dumps(rec.to_json())
    assert "secret" not in text and "burner" not in text and '"pid"' not in text
    assert "busy_processes" not in text
    assert words.clause(rec.findings[0]).endswith(
        "; 8 of them over 10% of a CPU, the busiest at 99%, 80%, 75%, 70%, 65%:"
        " they share the CPUs and caches with the measurement"
    )


def test_a_reused_pid_is_not_counted_as_busy():
    before, after = snapshots()
    procs = dict(after.processes)
    procs[77] = ("other", 5000)
    use = noise.usage(before, noise.Snapshot(**{**after.__dict__, "processes": procs}), 2, 100)
    assert use.busy_processes == ()


def test_without_proc_nothing_is_claimed():
    use = noise.usage(noise.Snapshot(wall=0.0), noise.Snapshot(wall=5.0), cpus=2, ticks_per_s=100)
    assert use.busy is use.steal is use.others_cpus is None
    rec = record(use, [], {})
    assert rec.findings == () and rec.warnings is None and rec.advice is None


def quiet_use(**over) -> noise.Usage:
    base = dict(
        seconds=10.0,
        cpus=2,
        load_before=(0.1, 0.1, 0.1),
        load_after=(0.9, 0.3, 0.1),
        busy=0.5,
        steal=0.0,
        iowait=0.0,
        bridge_cpus=1.0,
        others_cpus=0.05,
        busy_processes=(),
    )
    return noise.Usage(**{**base, **over})


def record(use: noise.Usage, results, environment, units=None) -> schema.Noise:
    """The noise block a report gets: measured, then its findings (as
    bridge.analysis.findings computes them)."""
    base = schema.Report(
        bridge_version="t",
        created="c",
        command=[],
        reproduce="",
        settings={},
        environment=dict(environment),
        runtimes=(),
        results=tuple(results),
        noise=noise.measured(use),
    )
    return findings.compute(base).noise


def said(use: noise.Usage, cells=(), env=None) -> list[str]:
    """What the machine and the cells' findings say, in words (the advice apart)."""
    block = noise.measured(use)
    found = noise.machine_findings(block, Environment.from_json(env or {})) + noise.cell_findings(
        cells
    )
    return [words.clause(r) for r in found]


def test_a_quiet_machine_gives_no_warning():
    assert said(quiet_use(), (), {"cpu_governor": "performance"}) == []
    assert not noise.noisy(noise.measured(quiet_use()), (), 2)


def test_others_busy_steal_governor_and_smt_warn():
    use = quiet_use(
        others_cpus=1.0,
        steal=0.05,
        load_after=(3.1, 2.0, 1.0),
        busy_processes=(noise.OtherProcess(77, "burner", 0.99),),
    )
    env = {"cpu_governor": "powersave", "smt_siblings": [[0, 1]]}
    found = noise.machine_findings(noise.measured(use), Environment.from_json(env))
    assert [r.why for r in found] == [Why.OTHERS_BUSY, Why.STEAL, Why.GOVERNOR, Why.SMT]
    assert found[0].params == {
        "others_cpus": 1.0,
        "cpus": 2,
        "load": 3.1,
        "busy_count": 1,
        "shares": (0.99,),
    }
    said = [words.clause(r) for r in found]
    assert said[0] == (
        "other processes used 1.0 of 2 CPUs during the run (load average 3.1);"
        " 1 of them over 10% of a CPU, the busiest at 99%: they share the CPUs and caches"
        " with the measurement"
    )
    assert "gave 5% of this machine's CPU time to other guests (steal)" in said[1]
    assert "governor 'powersave'" in said[2]
    assert said[3].startswith("SMT: CPUs 0,1 share a core")
    assert noise.noisy(noise.measured(use), (), 2)
    assert "taskset" in words.reason(noise.what_to_do())


def test_smt_alone_on_a_quiet_machine_is_not_worth_a_warning():
    assert said(quiet_use(), (), {"smt_siblings": [[0, 1]]}) == []


def test_the_threshold_for_others_grows_with_the_machine():
    # A quarter of a CPU on 2 CPUs; a tenth of the machine on 64.
    assert said(quiet_use(others_cpus=0.3))
    assert not said(quiet_use(others_cpus=3.0, cpus=64))
    assert said(quiet_use(others_cpus=7.0, cpus=64))


def result(samples: list[int], runtime="erlang@25.2.3", call_id="hash") -> schema.Result:
    return schema.Result(
        scenario="sha256",
        runtime=runtime,
        call="crypto:hash(sha256, Data)",
        call_id=call_id,
        api="crypto:hash/2",
        semantics="one-shot",
        algorithm="sha256",
        size=64,
        hw=Hw.ON,
        samples=tuple(samples),
        loops=1000,
        output_hex="00",
    )


def test_bimodal_and_drifting_cells_are_named_in_the_record():
    # 40% of the samples in a slow state, spread over the run (no trend).
    two_modes = [1_300_000 if i % 5 in (1, 3) else 1_000_000 + (i % 7) * 100 for i in range(100)]
    drifting = [1_000_000 + i * 1000 for i in range(100)]  # +10% over the run
    flat = [1_000_000 + (i % 5) * 100 for i in range(100)]
    rec = record(
        quiet_use(),
        [result(two_modes), result(drifting, call_id="drift"), result(flat, call_id="flat")],
        {},
    )
    shapes = [(c.call_id, c.shape) for c in rec.cells]
    assert shapes == [("hash", "bimodal"), ("drift", "drift")]
    bimodal, drift = rec.cells
    assert bimodal.detail is None  # figures, not words
    low, high = bimodal.clusters
    assert (low.share, low.n, high.share, high.n) == (0.6, 60, 0.4, 40)
    assert low.ns == pytest.approx(1000, rel=0.01) and high.ns == pytest.approx(1300)
    assert drift.shift == pytest.approx(0.066, abs=0.001) and drift.statistic > 3
    two, moved, todo = rec.findings
    assert (two.why, moved.why, todo.why) == (Why.CELL_TWO_SPEEDS, Why.CELL_DRIFT, Why.NOISY_RUN)
    assert words.clause(two).startswith(
        "erlang@25.2.3 hash at 64 B (hw on): two speeds: 60% of the samples near 1,000 ns,"
    )
    assert "Ashman" not in words.clause(two) and "Ashman's D" in words.clause(two, verbose=True)
    assert "drifting samples: the level moved +" in words.clause(moved)
    assert "Spearman" not in words.clause(moved) and "Spearman z" in words.clause(moved, True)


def test_the_record_round_trips_through_json_and_old_reports_stay_without_it():
    use = quiet_use(others_cpus=1.0, busy_processes=(noise.OtherProcess(7, "x", 0.5),))
    rec = record(use, [result([1_000_000 + i * 1000 for i in range(100)])], {})
    assert rec.findings and "warnings" not in rec.to_json() and "advice" not in rec.to_json()
    # How many and how busy, never who: no name or pid in the block.
    assert "busy_processes" not in rec.to_json() and rec.busy_others.cpu == (0.5,)
    assert '"x"' not in json.dumps(rec.to_json())
    again = schema.Noise.from_json(json.loads(json.dumps(rec.to_json())))
    assert again == rec
    report = schema.Report(
        bridge_version="t",
        created="c",
        command=[],
        reproduce="",
        settings={"ci_target": 0.02},
        environment={},
        runtimes=(),
        results=(),
        noise=rec,
    )
    assert schema.Report.from_json(json.loads(schema.dumps(report))) == report
    assert "noise" not in schema.Report.from_json({**report.to_json(), "noise": None}).to_json()


def test_every_view_shows_the_noise():
    use = quiet_use(others_cpus=1.2)
    report = schema.Report(
        bridge_version="t",
        created="c",
        command=[],
        reproduce="",
        settings={"ci_target": 0.02},
        environment={},
        runtimes=(),
        results=(),
        unstable=(schema.UnstableCell("sha256", "openssl@3.0.19", "speed-evp", 64, "on", 0.031),),
        noise=record(use, [], {}),
    )
    paragraphs = [terminal.prefixed(n) for n in build(report).caveats]
    assert paragraphs[0] == (
        "Unstable (95% CI wider than the target): openssl@3.0.19 speed-evp at 64 B hw on: ±3.1%."
    )
    assert paragraphs[1].startswith("Warning: other processes used 1.2 of 2 CPUs")
    assert paragraphs[2].startswith("Advice: run again on a quieter machine")
    verbose = [n.text for n in build(report, Detail.VERBOSE).caveats]
    assert any(p.startswith("During the run: 10.0 s, load average 0.10 before") for p in verbose)
    for fmt in ("table", "markdown", "text"):
        shown = rendered(fmt, report)
        assert "other processes used 1.2 of 2 CPUs" in shown
        assert "speed-evp at 64 B hw on" in " ".join(shown.split())
    assert "+/-3.1%" in rendered("text", report)  # ASCII for email


def test_smt_siblings_come_from_sysfs(tmp_path):
    assert environment.parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    for cpu, siblings in ((0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")):
        topo = tmp_path / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "thread_siblings_list").write_text(siblings + "\n")
    assert environment.collect_smt(tmp_path) == {"smt_siblings": [[0, 2], [1, 3]]}
    (tmp_path / "cpu4" / "topology").mkdir(parents=True)
    (tmp_path / "cpu4" / "topology" / "thread_siblings_list").write_text("4\n")
    assert environment.collect_smt(tmp_path) == {"smt_siblings": [[0, 2], [1, 3]]}
    assert environment.collect_smt(tmp_path / "absent") == {}


def _shape(runtime, call_id, hw, shape, low=2800.0, high=4600.0):
    clusters = (
        (schema.SampleCluster(0.5, low, 12), schema.SampleCluster(0.5, high, 12))
        if shape == "bimodal"
        else ()
    )
    return schema.CellShape(
        "hmac-sha1", runtime, call_id, 1000, Hw(hw), shape, 10.0, clusters=clusters, shift=0.05
    )


def test_many_cells_of_one_shape_are_one_sentence():
    # A two-speed host makes every cell bimodal: one sentence names them all,
    # with the range of what was seen, instead of a sentence per cell.
    cells = [
        _shape("erlang@25", "macN", "on", "bimodal"),
        _shape("erlang@25", "macN", "off", "bimodal", 3300, 5600),
        _shape("python@3.11", "hmac.digest", "on", "bimodal"),
        _shape("python@3.11", "hmac.digest", "on", "drift"),
    ]
    found = said(quiet_use(), cells)
    (speeds,) = [w for w in found if "two speeds" in w]
    assert speeds.startswith("two speeds in 3 cells (erlang@25 macN (hw on, off); python@3.11")
    assert "1.64-1.70× apart" in speeds and "50%-50% of the samples" in speeds
    # Two or fewer of a shape keep their own sentence.
    (drift,) = [w for w in found if "drifting" in w]
    assert drift.startswith("python@3.11 hmac.digest at 1000 B (hw on): drifting samples")
    assert len(found) == 2


def test_a_two_speed_host_that_also_drifts_is_one_sentence():
    cells = [
        _shape("erlang@25", "macN", hw, shape)
        for hw in ("on", "off")
        for shape in ("bimodal", "drift")
    ]
    cells += [_shape("python@3.11", "hmac.digest", "on", s) for s in ("bimodal", "drift")]
    (found,) = said(quiet_use(), cells)
    assert (
        found.startswith("two speeds in 3 cells") and "in 3 cells the level also drifted" in found
    )


@pytest.mark.parametrize("kept", [[], [{"pid": 4064, "name": "python", "cpu": 0.53}]])
def test_an_old_reports_busy_processes_are_read_and_written_back_as_they_were(kept):
    old = {"seconds": 1.0, "busy_processes": kept, "cells": []}
    noise_block = schema.Noise.from_json(old)
    assert noise_block.busy_others is None
    assert noise_block.to_json()["busy_processes"] == kept
    assert "busy_others" not in noise_block.to_json()
