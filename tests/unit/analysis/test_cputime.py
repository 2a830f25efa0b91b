"""CPU time beside wall time, per cell (bridge.analysis.cputime), and the
per-sample arrays kept parallel to the samples (schema.merge_probed)."""

from __future__ import annotations

from bridge.analysis import cputime
from bridge.report import schema
from bridge.report.findings import Why
from bridge.report.hw import Hw
from bridge.report.scenario import ScenarioRun
from bridge.view import words

SCENARIOS = [ScenarioRun.from_json({"name": "sha256", "kind": "hash", "digest": "sha256"})]


def _result(**kw) -> schema.Result:
    base = dict(
        scenario="sha256",
        runtime="python@3.11",
        call="hashlib.sha256(Data)",
        call_id="hashlib",
        api="hashlib.sha256",
        semantics="one-shot",
        algorithm="sha256",
        size=8192,
        samples=(1_000_000, 1_000_000, 2_000_000, 2_000_000),
        loops=100,
        output_hex="00",
        hw=Hw.ON,
    )
    return schema.Result(**{**base, **kw})


def test_a_cell_that_waited_is_flagged_with_its_cpu_time_cycles_and_cpus():
    r = _result(
        sample_cpus=(0, 0, 1, 1),
        sample_cpu_ns=(1_000_000, 1_000_000, 1_000_000, 1_000_000),
        sample_wait_ns=(0, 0, 1_000_000, 1_000_000),
    )
    limit = schema.Limit("sha256", 8192 * 1e9 / 10_000, "test")
    block = cputime.record([r], SCENARIOS, (2e9, "test clock"), [limit])
    assert block is not None and block.tsc_hz == 2e9
    (c,) = block.cells
    assert c.wall_ns == 15_000 and c.cpu_ns == 10_000
    assert c.wait_share == round(2 / 6, 4) and c.flag == "waited"
    assert c.cycles_per_byte == round(15_000 * 2 / 8192, 3)
    assert c.cpu_cycles_per_byte == round(10_000 * 2 / 8192, 3)
    assert c.of_best == round(10_000 / 15_000, 3)
    assert [(f.cpu, f.samples, f.median_ns) for f in c.by_cpu] == [(0, 2, 10_000), (1, 2, 20_000)]
    (waited,) = [w for w in cputime.findings(block) if w.why is Why.CELL_WAITED]
    assert waited.params == {
        "scenario": "sha256",
        "runtime": "python@3.11",
        "call_id": "hashlib",
        "size": 8192,
        "hw": "on",
        "unit": "bytes",
        "share": round(2 / 6, 4),
    }
    said = words.clause(waited)
    assert said.startswith("python@3.11 hashlib at 8 KiB (hw on) waited for a CPU 33%")
    assert "not the cost of the call" in said
    (line,) = words.cost_lines(block)
    assert "3.66 cycles/B" in line and "0.67× the best" in line and "TSC 2.000 GHz" in line


def test_a_cell_that_ran_alone_is_not_flagged_and_unknown_samples_are_left_out():
    r = _result(
        samples=(1_000_000,) * 6,
        sample_cpus=(0, 0, 0, 1, 1, -1),
        sample_cpu_ns=(990_000,) * 5 + (-1,),
        sample_wait_ns=(1_000,) * 5 + (-1,),
    )
    (c,) = cputime.record([r], SCENARIOS, None).cells
    assert c.flag == "" and c.wait_share == 0.001 and c.cpu_ns == 9_900
    assert c.cycles_per_byte is None and c.of_best is None
    assert [f.cpu for f in c.by_cpu] == [0, 1]
    assert cputime.findings(cputime.record([r], SCENARIOS, None)) == ()


def test_samples_that_differ_by_cpu_say_so():
    r = _result(samples=(1_000_000,) * 3 + (1_300_000,) * 3, sample_cpus=(0, 0, 0, 1, 1, 1))
    block = cputime.record([r], SCENARIOS, (2e9, "x"))
    (found,) = cputime.findings(block)
    assert found.why is Why.CELL_BY_CPU
    assert found["cpus"] == ((0, 10_000, 3), (1, 13_000, 3))
    w = words.clause(found)
    assert "differ by CPU" in w and "CPU 0 10,000 ns (3)" in w and "CPU 1 13,000 ns (3)" in w


def test_many_cells_that_waited_are_one_finding_a_runtime():
    waited = dict(sample_cpu_ns=(1_000_000,) * 4, sample_wait_ns=(500_000,) * 4)
    rs = [_result(size=n, **waited) for n in (16, 64, 256)]
    (found,) = cputime.findings(cputime.record(rs, SCENARIOS, None))
    assert found.why is Why.CELLS_WAITED and found["cells"] == 3
    assert words.clause(found).startswith("python@3.11 waited for a CPU 33% of its sample")


def test_an_openssl_window_is_its_whole_process():
    r = _result(
        runtime="openssl@3",
        call_id="speed-evp",
        samples=(1_000_000_000,),
        loops=(100_000,),
        sample_cpus=(-1,),
        sample_cpu_ns=(600_000_000,),
        sample_wait_ns=(400_000_000,),
        sample_user_ns=(590_000_000,),
    )
    (c,) = cputime.record([r], SCENARIOS, None).cells
    assert c.wait_share == 0.4 and c.flag == "waited"
    assert c.user_ns == 5_900 and c.by_cpu == ()


def test_no_block_without_cpu_time_or_a_tsc():
    assert cputime.record([_result()], SCENARIOS, None) is None
    kdf = ScenarioRun.from_json({"name": "p", "kind": "kdf"})
    assert cputime.limit_algorithms([*SCENARIOS, kdf]) == ["sha256"]


def test_the_arrays_stay_parallel_to_the_samples_or_go():
    acc = schema.merge_probed({}, {"sample_cpus": [0, 1]}, 0, 2)
    acc = schema.merge_probed(acc, {"sample_cpus": [1]}, 2, 1)
    assert schema.probed_fields(acc) == {"sample_cpus": (0, 1, 1)}
    assert schema.merge_probed(acc, {}, 3, 3) is None  # one batch without: none at all
    assert schema.merge_probed({}, {"sample_cpus": [0]}, 0, 2) is None  # not parallel
    assert (
        schema.merge_probed(schema.merge_probed({}, {}, 0, 4), {"sample_cpus": [0]}, 4, 1) is None
    )
    assert schema.probed_fields(schema.merge_probed({}, {}, 0, 4)) == {}
    r = _result(sample_cpus=(0, 1, 0, 1), hw=Hw.OFF)
    again = schema.Result.from_json(r.to_json())
    assert again.sample_cpus == (0, 1, 0, 1)
    assert "sample_cpus" not in _result().to_json()


def test_a_two_speed_cell_is_not_said_again_to_differ_by_cpu():
    r = _result(samples=(1_000_000,) * 3 + (1_300_000,) * 3, sample_cpus=(0, 0, 0, 1, 1, 1))
    block = cputime.record([r], SCENARIOS, (2e9, "x"))
    (c,) = block.cells
    key = (c.scenario, c.runtime, c.call_id, c.size, str(c.hw))
    assert cputime.findings(block, None, frozenset({key})) == ()
    assert cputime.findings(block)  # not called two-speed: said
