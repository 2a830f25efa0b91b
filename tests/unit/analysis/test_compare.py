"""bridge compare's judgement (issue 25): the low statistic, no "sig" without
a CI, and reports taken on differently loaded machines."""

from __future__ import annotations

import dataclasses
import json

from bridge.analysis import compare, gate, quietness, upgrade
from bridge.render.compare import render
from bridge.report import schema
from bridge.report.findings import Basis, Change, Why, reason
from bridge.report.hw import Hw
from bridge.view import words
from tests.unit.analysis.test_upgrade import NEW, OLD, report, result, sweep

QUIET = schema.Noise(
    seconds=10.0,
    cpus=2,
    load_before=(0.2, 0.2, 0.2),
    load_after=(0.4, 0.3, 0.2),
    busy=0.5,
    steal=0.0,
    others_cpus=0.05,
)
LOADED = dataclasses.replace(
    QUIET, load_before=(4.0, 3.0, 2.0), load_after=(4.1, 3.2, 2.1), busy=1.0, others_cpus=1.6
)


def with_noise(r: schema.Report, noise: schema.Noise) -> schema.Report:
    return dataclasses.replace(r, noise=noise)


def openssl_report(ns: float, runs: int) -> schema.Report:
    rt = schema.Runtime("openssl@3.0.19", "openssl", "/usr/bin/openssl", "OpenSSL 3.0.19", {})
    cell = result(rt.id, 1024, ns, n=runs, call="openssl speed -evp sha256", call_id="speed-evp")
    return report([rt], [cell])


def test_one_sample_a_side_is_never_significant():
    # Two --quick reports, one openssl run each: "2.37x (2.37-2.37) slower" was
    # counted among the significant differences.
    (row,) = compare.pair(openssl_report(1000, 1), openssl_report(2370, 1))
    assert row.verdict == compare.FEW and not row.significant and row.ci95 is None
    assert row.ratio == 2.37 or abs(row.ratio - 2.37) < 1e-3
    assert row.reasons == (reason(Why.TOO_FEW_SAMPLES, what="openssl run", have=1, need=3),)
    c = compare.compare([openssl_report(1000, 1), openssl_report(2370, 1)], ["a", "b"])
    text = render(c, "table")
    assert "0 of 1 cell differs" in text
    said = "Too few samples: 1 openssl run a side: a CI needs 3; rerun with --openssl-runs 3."
    assert said in " ".join(text.split())
    # Three runs a side are enough for a CI.
    (row,) = compare.pair(openssl_report(1000, 3), openssl_report(2370, 3))
    assert row.verdict == "slower" and row.ci95 is not None


def test_identical_set_ups_one_under_load_are_not_a_significant_difference():
    # The same machine, twice: B with other processes on 1.6 of 2 CPUs read
    # 1.58x slower. Both reports recorded their load.
    a = with_noise(report([NEW], sweep(NEW.id, 1000, 1.0)), QUIET)
    b = with_noise(report([NEW], sweep(NEW.id, 1580, 1.58)), LOADED)
    rows = compare.pair(a, b)
    assert rows and all(r.verdict == compare.UNEQUAL and not r.significant for r in rows)
    assert rows[0].reasons == (reason(Why.UNEQUAL_LOAD, busier="B"),)
    assert words.clause(rows[0].reasons[0]).startswith("B ran on a busier machine")
    c = compare.compare([a, b], ["idle.json", "busy.json"])
    assert c.unequal == {1: reason(Why.UNEQUAL_LOAD, busier="B")}
    table = render(c, "table")
    assert "0 of 6 cells differ" in table
    assert "(A: load 0.4, other processes 0.1" in table and "other processes 1.6 CPUs" in table
    assert "marked unequal load where CPU time cannot settle it" in " ".join(table.split())
    assert all(len(line) <= 72 for line in render(c, "text").splitlines())
    data = json.loads(render(c, "json"))
    assert data["comparisons"][0]["unequal_load"] == {"why": "unequal-load", "busier": "B"}
    assert data["statistic"] == "p10"
    assert data["conditions"][1]["others_cpus"] == 1.6
    # The busier report the faster one: load does not do that, the difference stands.
    faster = with_noise(report([NEW], sweep(NEW.id, 600, 0.6)), LOADED)
    assert {r.verdict for r in compare.pair(a, faster)} == {"faster"}
    # Equal load on both sides: an ordinary significant difference.
    same = with_noise(report([NEW], sweep(NEW.id, 1580, 1.58)), QUIET)
    assert {r.verdict for r in compare.pair(a, same)} == {"slower"}
    # Reports without a noise block (older ones) are judged as before.
    assert {r.verdict for r in compare.pair(report([NEW], sweep(NEW.id, 1000, 1.0)), b)} == {
        "slower"
    }


def with_cpu(r: schema.Report, a: float, b: float) -> schema.Report:
    """The report with each sample's CPU time: `a` ns per call plus `b` per
    byte (as sweep's wall time), a little apart from sample to sample."""
    out = []
    for x in r.results:
        ns = (a + b * x.size) * x.loops
        cpu = tuple(round(ns * (1 + (i % 5) / 200)) for i in range(len(x.samples)))
        out.append(dataclasses.replace(x, sample_cpu_ns=cpu))
    return dataclasses.replace(r, results=tuple(out))


def test_under_unequal_load_a_difference_is_judged_on_cpu_time():
    # B under load read 1.58x slower by wall time, the same by CPU time:
    # the load's, withheld. B 3x slower by CPU time too: a real slowdown,
    # which stands, judged on CPU time, and trips the gate.
    a = with_cpu(with_noise(report([NEW], sweep(NEW.id, 1000, 1.0)), QUIET), 1000, 1.0)
    b = with_cpu(with_noise(report([NEW], sweep(NEW.id, 1580, 1.58)), LOADED), 1000, 1.0)
    rows = compare.pair(a, b)
    assert rows and {r.verdict for r in rows} == {compare.UNEQUAL}
    assert {r.basis for r in rows} == {Basis.WALL}
    slow = with_cpu(with_noise(report([NEW], sweep(NEW.id, 3000, 3.0)), LOADED), 3000, 3.0)
    rows = compare.pair(a, slow)
    assert {r.verdict for r in rows} == {"slower"} and {r.basis for r in rows} == {Basis.CPU}
    assert all(r.ci95 is not None and r.ci95[0] > 2.5 for r in rows)
    assert rows[0].reasons == (reason(Why.LOAD_CPU, busier="B"),)
    c = compare.compare([a, slow], ["idle.json", "busy.json"])
    table = " ".join(render(c, "table").split())
    assert "6 of 6 cells differ" in table
    assert "judged on CPU time: B ran on a busier machine" in table
    g = gate.judge(c, [a, slow], [gate.Threshold(gate.Direction.SLOWER, 50.0)])
    assert g.outcome is gate.Outcome.FAILED and len(g.tripped) == 6
    data = json.loads(render(c, "json"))
    assert {r["basis"] for r in data["comparisons"][0]["rows"]} == {"cpu"}
    # Without CPU time in B (an older report): unequal load, as before.
    bare = dataclasses.replace(
        slow, results=tuple(dataclasses.replace(x, sample_cpu_ns=()) for x in slow.results)
    )
    assert {r.verdict for r in compare.pair(a, bare)} == {compare.UNEQUAL}
    g = gate.judge(
        compare.compare([a, bare], ["a", "b"]),
        [a, bare],
        [gate.Threshold(gate.Direction.SLOWER, 50.0)],
    )
    assert g.outcome is gate.Outcome.PASSED and g.unsure


def waiting(r: schema.Report, share: float) -> schema.Report:
    """The report with a cpu_time block whose cells waited `share` of their time."""
    cells = tuple(
        schema.CellCost(x.scenario, x.runtime, x.call_id, x.size, x.hw, 1000.0, 900.0, share)
        for x in r.results
    )
    return dataclasses.replace(r, cpu_time=schema.CpuTime(cells=cells))


def test_conditions_read_the_wait_share_of_the_cpu_time_block():
    a = waiting(with_noise(report([NEW], sweep(NEW.id, 1000, 1.0)), QUIET), 0.01)
    b = waiting(with_noise(report([NEW], sweep(NEW.id, 1300, 1.3)), QUIET), 0.3)
    cond = quietness.conditions(b)
    assert cond is not None and cond.wait == 0.3
    assert quietness.unequal(quietness.conditions(a), cond) == reason(Why.UNEQUAL_LOAD, busier="B")
    assert "waiting for a CPU 30%" in words.conditions(cond)
    assert {r.verdict for r in compare.pair(a, b)} == {compare.UNEQUAL}
    # Only one report knows its wait share: nothing to weigh.
    plain = with_noise(report([NEW], sweep(NEW.id, 1000, 1.0)), QUIET)
    assert quietness.unequal(quietness.conditions(plain), cond) is None


def test_the_low_statistic_ignores_which_speed_a_cell_caught():
    # A: every sample at the fast speed; B: a third fast, the rest 1.6x
    # slower (a two-speed machine). Medians differ 1.6x; the low ends do not.
    rt = NEW
    fast = tuple(round(1000 * (1 + 0.002 * (i % 5)) * 1000) for i in range(30))
    mixed = tuple(x if i % 3 == 0 else round(x * 1.6) for i, x in enumerate(fast))
    ra = result(rt.id, 64, 1000, samples=fast)
    rb = result(rt.id, 64, 1000, samples=mixed)
    (row,) = compare.pair(report([rt], [ra]), report([rt], [rb]))
    assert row.median_b / row.median_a > 1.5
    assert row.verdict == "within noise" and abs(row.ratio - 1) < 0.01
    assert row.low_a is not None and row.statistic == "p10"


def test_an_upgrade_between_differently_loaded_machines_says_so():
    a = with_noise(report([OLD], sweep(OLD.id, 1000, 1.0)), QUIET)
    b = with_noise(report([NEW], sweep(NEW.id, 1600, 1.6)), LOADED)
    rows = compare.pair(a, b)
    (u,) = upgrade.between(a, b, ("old.json", "new.json"), rows)
    assert u.per_call == Change.UNEQUAL_LOAD and u.per_byte == Change.UNEQUAL_LOAD
    assert u.reasons == (reason(Why.UNEQUAL_LOAD, busier="B"),)
    said = words.upgrade_split(u, "crypto:hash")
    assert "600 ns more per call (which the unequal load can explain)" in said
    assert said.endswith("B ran on a busier machine: the load alone can make this difference.")
    # Each size is the comparison's row of the same cells: unequal load too.
    assert {s.significance for s in u.sizes} == {compare.UNEQUAL}
    assert u.sizes[0].ratio == rows[0].ratio and u.sizes[0].statistic == "p10"
    # Recorded in the report's upgrade records, and read back.
    again = schema.Upgrade.from_json(json.loads(json.dumps(u.to_json())))
    assert again == u
    # On equal machines the same numbers are an upgrade's difference.
    (u,) = upgrade.between(a, with_noise(b, QUIET), ("old.json", "new.json"))
    assert (u.per_call, u.per_byte, u.reasons) == ("more", "more", ())
    assert u.hw == Hw.ON


def test_both_machines_busy_unequally_is_no_difference_either_way():
    # A at load 7.9 with other processes on 1.3 CPUs, B at 17 on 1.8: B's
    # cells read faster here and there, which load on A can make too.
    busy = dataclasses.replace(LOADED, others_cpus=1.3, load_after=(7.9, 6, 5))
    busier = dataclasses.replace(LOADED, others_cpus=1.8, load_after=(17.1, 15, 12))
    a = with_noise(report([NEW], sweep(NEW.id, 1000, 1.0)), busy)
    b = with_noise(report([NEW], sweep(NEW.id, 600, 0.6)), busier)
    rows = compare.pair(a, b)
    assert {r.verdict for r in rows} == {compare.UNEQUAL}
    assert rows[0].reasons == (reason(Why.UNEQUAL_LOAD, busier=""),)
    assert words.clause(rows[0].reasons[0]).startswith("the machines were busy, unequally")
