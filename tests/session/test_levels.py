"""The fast tier for --concurrency: level cells interleaved with the other
cells round by round, what each round asks of them (level 1's batch and race
for every level), the races and the CPUs each level's work wanted, the
serialised and level-1 findings, the per-level failure policy, Ctrl-C,
oversubscription, and that a run without levels is the run it always was."""

from __future__ import annotations

import json

from bridge.analysis.findings import complete
from bridge.catalog import scenario
from bridge.errors import OperationError, WorkerError
from bridge.report import levels, schema
from bridge.settings import Settings
from bridge.view import build, words
from tests.session.fake import Log, Script
from tests.session.test_session import ERL, PY, plan, run

SETTINGS = Settings(warmup_ms=7, rewarm_ms=3, sample_ms=1, samples=6, rounds=3, openssl_runs=3)
OPENSSL = Script(kind="openssl", version="3.0.19")


def hash_scenario(levels=(1, 2), **over) -> scenario.Scenario:
    data = {
        "name": "sha256",
        "description": "test",
        "kind": "hash",
        "digest": "sha256",
        "sizes": [16384],
        "calls": {"erlang": ["hash"], "python": ["hashlib"], "openssl": ["speed-evp"]},
        **over,
    }
    if levels:
        data["concurrency"] = list(levels)
    return scenario.parse(data, "test.toml")


def level_plan(levels=(1, 2), **over):
    return plan(hash_scenario(levels, **over), settings=SETTINGS)


def cells(report: schema.Report):
    assert report.concurrency is not None
    return {(c.runtime.split("@")[0], c.mode, c.level): c for c in report.concurrency.cells}


def test_level_cells_come_after_the_ordinary_cells_in_every_round():
    outcome, log = run(level_plan(), [ERL, PY, OPENSSL])
    kinds = [e[0] for e in log.events if e[0] in ("bench", "level")]
    # Per round: 3 ordinary cells, then erlang 2 levels, python 2 levels x 2 modes,
    # openssl 2 levels.
    assert kinds == (["bench"] * 3 + ["level"] * 8) * SETTINGS.rounds
    got = cells(outcome.report)
    assert set(got) == {
        ("erlang", "processes", 1),
        ("erlang", "processes", 2),
        ("python", "threads", 1),
        ("python", "threads", 2),
        ("python", "processes", 1),
        ("python", "processes", 2),
        ("openssl", "multi", 1),
        ("openssl", "multi", 2),
    }
    assert not outcome.failed


def test_what_each_round_asks_of_a_level_cell():
    _, log = run(level_plan(), [ERL, OPENSSL])
    one = [e[5] for e in log.of("level") if e[1].startswith("erlang") and e[4] == 1]
    erl = [e[5] for e in log.of("level") if e[1].startswith("erlang") and e[4] == 2]
    # Round 1 of level 1 warms up for warmup_ms, calibrates the batch, sets
    # the race (race_calls 0: half its median window's calls) and lets the
    # probe watch the idle node; every later plan of the call, level 2's
    # first included, takes level 1's batch and race.
    assert [p.warmup_ms for p in one] == [7, 3, 3] and [p.warmup_ms for p in erl] == [7, 3, 3]
    assert one[0].batch is None and one[0].race_calls == 0
    assert {p.batch for p in one[1:] + erl} == {10}
    assert {p.race_calls for p in one[1:] + erl} == {100}  # the calls of a window
    assert {p.races for p in one + erl} == {2}
    assert erl[0].idle_probe_ms > 0 and all(p.idle_probe_ms == 0 for p in erl[1:])
    # Windows are spread over the rounds like samples; at least 50 ms each.
    assert [p.windows for p in erl] == [2, 2, 2] and {p.window_ms for p in erl} == {50}
    ossl = [e[5] for e in log.of("level") if e[1].startswith("openssl")]
    assert [p.windows for p in ossl] == [1, 1, 1, 1, 1, 1]  # openssl_runs, one run a window
    assert {p.races for p in ossl} == {0}  # speed -multi counts for a time: no races
    assert all(p.same_output for p in erl)


def test_the_slowest_of_n_and_the_cpus_per_level():
    # Two workers at 1000/2^0.2 calls/s each, one at 1000: a race of 100
    # calls takes 100 ms alone and 114.9 ms at level 2 (the slowest, a ns behind).
    erl = Script(kind="erlang", version="25.2.3", level_ops=lambda job, n, mode: 1000.0 / n**0.2)
    outcome, _ = run(level_plan(), [erl])
    got = cells(outcome.report)
    one, two = got[("erlang", "processes", 1)], got[("erlang", "processes", 2)]
    s1, s2 = one.slowest(), two.slowest()
    assert s1 is not None and s2 is not None
    assert (s1.calls, s1.races, s2.calls, s2.races) == (100, 6, 100, 6)
    assert s1.median_ns == 100_000_000
    assert s2.median_ns == round(100 * 1e9 / (1000 / 2**0.2)) + 1
    assert s1.ci95 is not None  # six races: a CI of the median
    assert one.cpu_use().cpus == 1 and two.cpu_use().cpus == 2
    assert abs(two.cpu_use().wait_share - 0.1) < 1e-9
    data = two.to_json()
    assert data["slowest"]["calls"] == 100 and data["cpu_use"]["cpus"] == 2
    assert len(data["race_ns"]) == 6 and all(len(r) == 2 for r in data["race_ns"])


def test_a_level_whose_per_call_time_grows_without_cpu_is_serialised():
    # A queue: N workers do together what one does alone, and the work wants
    # one CPU at every level. Real work: each does as much as one alone, and
    # wants a CPU each.
    queued = Script(
        kind="erlang",
        version="25.2.3",
        level_ops=lambda job, n, mode: 1000.0 / n,
        level_cpus=lambda n, mode: 1.0,
    )
    outcome, _ = run(level_plan(levels=(1, 2, 4)), [queued, PY])
    by = {
        (f.runtime.split("@")[0], f.mode, f.level): f
        for f in outcome.report.concurrency.serialisation
    }
    four = by[("erlang", "processes", 4)]
    assert four.shape is levels.Shape.SERIALISED
    assert abs(four.per_call_ratio - 4) < 0.01 and four.cpu_ratio == 1.0
    assert four.per_call_ci95 is not None and four.per_call_ci95[0] > 1.25
    assert abs(four.slowest_ratio - 4) < 0.01
    assert by[("python", "threads", 2)].shape is levels.Shape.WORK
    assert by[("python", "processes", 4)].shape is levels.Shape.WORK
    text = "\n".join(findings(outcome.report))
    assert "per-call time grew 4.00×" in text and "waited for each other" in text
    assert text.count("waited for each other") == 2  # erlang at 2 and at 4, not python


def findings(report) -> list[str]:
    """What the view says under each scenario's tables."""
    return [n.text for s in build(complete(report)).sections for n in s.notes]


def test_level_one_against_the_per_call_median():
    # The fake's per-call cell: 1000 ns a call; level 1: 1000 calls/s a worker.
    agree = Script(kind="python", version="3.11.0", level_ops=lambda job, n, mode: 1e6)
    outcome, _ = run(level_plan(levels=(1, 2)), [agree])
    ones = outcome.report.concurrency.level_one
    assert {(lo.mode, lo.gap) for lo in ones} == {
        ("threads", levels.Gap.AGREE),
        ("processes", levels.Gap.AGREE),
    }
    slow = Script(kind="python", version="3.11.0", level_ops=lambda job, n, mode: 3e5)
    outcome, _ = run(level_plan(levels=(1, 2)), [slow])
    (lo, _) = outcome.report.concurrency.level_one
    # 0.3x the median, and the fake's windows waited 10% of their time: not
    # enough waiting to explain it.
    assert lo.gap is levels.Gap.UNEXPLAINED and abs(lo.ratio - 0.3) < 0.01
    assert "neither the waits" in "\n".join(findings(outcome.report))


def test_scaling_efficiency_and_figures_per_level():
    erl = Script(kind="erlang", version="25.2.3", level_ops=lambda job, n, mode: 1000.0 / n**0.2)
    outcome, _ = run(level_plan(), [erl])
    report = outcome.report
    (two,) = [s for s in report.concurrency.scaling if s.level == 2]
    # Two workers at 1000/2^0.2 each against one at 1000: 2^0.8 = 1.74.
    assert abs(two.scaling - 2**0.8) < 0.01 and abs(two.efficiency - 2**0.8 / 2) < 0.01
    assert two.ci95 is not None and two.ci95[0] <= two.scaling <= two.ci95[1]
    c = cells(report)[("erlang", "processes", 2)]
    assert c.latency().n == 9 and c.probe().n == 6 and c.probe_idle().n == 1
    assert c.raw.schedulers_online == 2 and c.utilisation()["normal"] == 0.9
    assert c.output_ok is True and c.call == "crypto:hash(sha256, Data) ×2 processes"


def test_without_levels_the_report_is_the_one_it_always_was():
    outcome, log = run(level_plan(levels=()), [ERL, PY])
    assert not log.of("level")
    data = outcome.report.to_json()
    assert "concurrency" not in data
    assert "concurrency" not in data["scenarios"][0] and "schedulers" not in data["settings"]


def test_a_failed_level_costs_that_level_only():
    broken = Script(
        kind="python",
        version="3.11.0",
        level_failure={2: OperationError("failed", "python@3.11.0 process 2 exited")},
    )
    outcome, log = run(level_plan(levels=(1, 2, 4)), [ERL, broken])
    got = cells(outcome.report)
    assert got[("python", "threads", 2)].status == "failed"
    assert got[("python", "processes", 2)].status == "failed"
    assert "process 2 exited" in got[("python", "processes", 2)].reason
    assert got[("python", "threads", 1)].ok and got[("python", "processes", 4)].ok
    assert all(c.ok for k, c in got.items() if k[0] == "erlang")
    # Tried once, then left alone; the ordinary cells went on every round.
    tried = [e for e in log.of("level") if e[1].startswith("python") and e[4] == 2]
    assert len(tried) == 2  # threads and processes, round 1
    assert len([e for e in log.of("bench") if e[1].startswith("python")]) == SETTINGS.rounds
    assert [e.kind for e in outcome.report.errors] == ["level", "level"]
    assert outcome.failed  # exit status 1, with every other cell kept
    assert all(r.ok for r in outcome.report.results)


def test_a_runtime_that_dies_at_a_level_is_stopped_and_the_others_go_on():
    dying = Script(
        kind="erlang",
        version="25.2.3",
        level_failure={2: WorkerError("erlang@25.2.3 exited", runtime="erlang@25.2.3")},
    )
    outcome, log = run(level_plan(), [dying, PY])
    got = cells(outcome.report)
    assert ("erlang", "processes", 2) not in got and got[("erlang", "processes", 1)].ok
    assert all(c.ok for k, c in got.items() if k[0] == "python")
    assert [e.kind for e in outcome.report.errors] == ["worker"]
    assert ("stop", "erlang@25.2.3", "on") in log.events


def test_a_call_a_runtime_cannot_run_at_levels_is_unsupported():
    ossl = Script(kind="openssl", version="3.0.19", unsupported={"speed-evp": "no -multi here"})
    outcome, _ = run(level_plan(), [ossl])
    got = cells(outcome.report)
    assert got[("openssl", "multi", 2)].status == "unsupported"
    assert not [e for e in outcome.report.errors if e.kind == "level"]


def test_interrupt_in_a_level_keeps_what_was_measured():
    log = Log()
    log.interrupt_at = 3 + 8 + 3 + 2  # round 2, the second level cell
    outcome, _ = run(level_plan(), [ERL, PY, OPENSSL], log=log)
    assert outcome.interrupted
    got = cells(outcome.report)
    assert (
        got[("erlang", "processes", 1)].ok and len(got[("erlang", "processes", 1)].raw.windows) == 4
    )
    assert len(got[("python", "threads", 2)].raw.windows) == 2  # round 1 only
    assert all(e[0] == "stop" for e in log.events[-3:])


def test_levels_above_the_cpus_are_oversubscribed_and_said_so():
    outcome, _ = run(level_plan(levels=(2, 4)), [ERL])
    c = outcome.report.concurrency
    assert c.levels == (1, 2, 4)
    assert [x.oversubscribed for x in sorted(c.cells, key=lambda x: x.level)] == [
        False,
        False,
        True,
    ]
    assert any("level 4 exceeds the 2 CPUs" in w for w in words.concurrency_lines(c))
    assert c.warnings is None  # findings, not sentences
    (four,) = [s for s in c.scaling if s.level == 4]
    assert four.oversubscribed


def test_the_concurrency_block_reads_back_unchanged():
    outcome, _ = run(level_plan(), [ERL, PY, OPENSSL])
    text = schema.dumps(outcome.report)
    again = schema.dumps(schema.Report.from_json(json.loads(text)))
    assert again == text


def test_file_digests_get_no_levels():
    files = scenario.parse(
        {
            "name": "file-sha256",
            "description": "test",
            "kind": "file-digest",
            "digest": "sha256",
            "sizes": [1024],
            "calls": {"erlang": ["hash_file"]},
        },
        "test.toml",
    ).with_concurrency((1, 2))
    outcome, log = run(plan(files, hash_scenario(), settings=SETTINGS), [ERL])
    assert {e[3] for e in log.of("level")} == {"hash"}
    assert {c.scenario for c in outcome.report.concurrency.cells} == {"sha256"}
