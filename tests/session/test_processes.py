"""Settings.processes in the fast tier: a worker runtime's spare processes
are started from its spec, take a cell's rounds in turn, warm up again on
their first batch, are stopped with the run, and are recorded per sample;
a process effect widens the cell's CI and is named in the noise block."""

from __future__ import annotations

import dataclasses

from bridge.analysis import noise
from bridge.errors import WorkerError
from bridge.report.findings import Why
from bridge.settings import Settings
from bridge.view import words
from tests.session.fake import Script
from tests.session.test_session import mac_scenario, plan, run

SETTINGS = Settings(
    warmup_ms=10, rewarm_ms=1, sample_ms=1, samples=24, rounds=6, openssl_runs=2, processes=2
)
ONE_SIZE = mac_scenario(
    sizes=[1000], calls={"python": ["hmac.digest"], "erlang": ["macN"], "openssl": ["speed"]}
)


def script(kind: str, **over) -> Script:
    return Script(kind=kind, version="25.2.3" if kind == "erlang" else "3.11.0", **over)


def test_two_processes_take_the_rounds_in_turn_and_are_recorded():
    scripts = [script("python", spreadable=True), script("erlang", spreadable=True)]
    scripts.append(Script(kind="openssl"))  # each sample is a process already: no spare
    outcome, log = run(plan(ONE_SIZE, settings=SETTINGS), scripts)
    benches = [e for e in log.of("bench") if e[1].startswith("python")]
    # Rounds 1..6 go to processes 0, 1, 0, 1, 0, 1.
    assert [e[6] for e in benches] == [0, 1] * 3
    # The first process calibrates after the full warm-up; the second warms
    # up again (fresh_warmup_ms) with the calibrated loops; then re-warm-ups.
    assert [(e[5].warmup_ms, e[5].loops) for e in benches] == [
        (10, None),
        (SETTINGS.fresh_warmup_ms, 1000),
        *[(1, 1000)] * 4,
    ]
    assert len(log.made[(id(scripts[2]), "on")]) == 1
    report = outcome.report
    by_kind = {r.runtime.split("@")[0]: r for r in report.results}
    assert by_kind["python"].procs == ((0,) * 4 + (1,) * 4) * 3
    assert by_kind["erlang"].procs and not by_kind["openssl"].procs
    # The spare carries its first process's id; every process is stopped.
    stopped = [e for e in log.of("stop") if e[1].startswith("python")]
    assert len(stopped) == 2 and {e[1] for e in stopped} == {"python@3.11.0"}
    assert not outcome.failed
    # The JSON carries the split and reads back to the same record.
    assert report.to_json()["results"][0]["ns_per_op"]["processes"] == 2


def test_a_process_effect_widens_the_ci_and_is_named():
    # The second process is 6% slower: the samples inside each agree exactly.
    jitter = lambda job, hw, n: 1000.0 + n  # noqa: E731 (rounds differ by a little)
    effect = script("python", spreadable=True, per_op_ns=jitter, process_factors=(1.0, 1.06))
    outcome, _ = run(plan(ONE_SIZE, settings=SETTINGS), [effect])
    (r,) = outcome.report.results
    lo, hi = r.summary().ci95
    assert lo <= 1001 and hi >= 1060  # both processes' levels inside the CI
    split = r.process_split()
    assert split is not None and split.share > 0.9 and abs(split.spread - 0.06) < 0.01
    shape = noise.process_shape(r)
    assert shape is not None and shape.shape == "process"
    named = "python@3.11.0 hmac.digest at 1000 B (hw on): this cell depends on the process: 6.0%"
    (found,) = [r for r in outcome.report.noise.findings if r.why is Why.CELL_BY_PROCESS]
    assert words.clause(found).startswith(named + " between two processes")
    assert "process" in [c.shape for c in outcome.report.noise.cells]
    # One process: today's CI, and nothing named.
    one = dataclasses.replace(SETTINGS, processes=1)
    outcome, _ = run(plan(ONE_SIZE, settings=one), [effect])
    (r1,) = outcome.report.results
    assert not r1.procs and r1.process_split() is None and noise.process_shape(r1) is None


def test_a_spare_that_cannot_start_is_an_error_and_the_cell_keeps_its_process():
    bad = script("python", spreadable=True, spare_error=WorkerError("no room", runtime=""))
    outcome, log = run(plan(ONE_SIZE, settings=SETTINGS), [bad])
    assert {e[6] for e in log.of("bench")} == {0}
    (r,) = outcome.report.results
    assert len(r.samples) == 24 and not r.procs
    assert any("another process of it did not start" in e.message for e in outcome.report.errors)
