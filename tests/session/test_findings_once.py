"""Findings are computed once, from what was measured: the report a run
assembles is the one bridge.analysis.findings.compute makes of its measured
part, constructed once; nothing is patched in afterwards. A saved report
read back completes (bridge.analysis.findings.complete) only what it lacks."""

from __future__ import annotations

import dataclasses
import itertools

from bridge.analysis import findings, noise
from bridge.measure import runner
from bridge.report import schema
from bridge.report.findings import Why
from tests.session.fake import Log, Script, seams
from tests.session.test_levels import hash_scenario
from tests.session.test_session import SETTINGS, mac_scenario, plan


def measured(report: schema.Report) -> schema.Report:
    """The report with its findings taken away: what a run measured."""
    conc = report.concurrency
    block = report.noise
    return dataclasses.replace(
        report,
        verdicts=(),
        differences=None,
        upgrades=(),
        fits=(),
        decompositions=(),
        tls=None,
        noise=None if block is None else dataclasses.replace(block, cells=(), findings=()),
        concurrency=None
        if conc is None
        else dataclasses.replace(conc, scaling=(), findings=(), serialisation=(), level_one=()),
    )


def busy_machine() -> noise.Snapshot:
    """Snapshots of a machine that other processes kept busy: 1.0 of 2 CPUs."""
    shots = itertools.chain(
        [noise.Snapshot(wall=0.0, stat=noise.CpuTimes(0, 0, 0, 0, 0, 0, 0, 0), load=(1, 1, 1))],
        itertools.repeat(
            noise.Snapshot(
                wall=10.0,
                stat=noise.CpuTimes(1900, 0, 0, 100, 0, 0, 0, 0),
                load=(2.0, 1.0, 1.0),
                own_cpu_s=9.0,
            )
        ),
    )
    return lambda: next(shots)


def test_the_report_is_its_measurements_and_their_findings_constructed_once():
    scripts = [
        Script(kind="erlang", version="23.2.6", per_op_ns=lambda j, h, n: 1500.0 + 0.5 * n),
        Script(kind="erlang", version="25.2.3", per_op_ns=lambda j, h, n: 2600.0 + 0.5 * n),
        Script(kind="python"),
    ]
    fake = dataclasses.replace(
        seams(scripts, Log()),
        snapshot=busy_machine(),
        environment=lambda: {"arch": "x86_64", "cpu_count": 2, "cpu_model": "Fake CPU"},
    )
    sizes = mac_scenario(
        sizes=[16, 1000, 16384], calls={"erlang": ["macN"], "python": ["hmac.digest"]}
    )
    levels = hash_scenario((1, 2), calls={"erlang": ["hash"]})
    report = runner.execute(plan(sizes, levels, hw="both", settings=SETTINGS), seams=fake).report
    # Every kind of finding is there to be recomputed.
    assert report.verdicts and report.differences and report.upgrades and report.fits
    assert report.noise is not None and report.noise.findings and report.noise.windows
    assert report.concurrency is not None and report.concurrency.scaling
    assert Why.OTHERS_BUSY in {r.why for r in report.noise.findings}
    base = measured(report)
    again = findings.report(base, findings.compute(base))
    assert again == report
    assert schema.dumps(again) == schema.dumps(report)
    # Read back, it is complete: nothing is computed again.
    loaded = schema.Report.from_json(report.to_json())
    assert findings.complete(loaded) is loaded


def test_a_report_from_before_the_differences_is_completed_and_keeps_the_rest():
    outcome = runner.execute(
        plan(mac_scenario(), hw="both", settings=SETTINGS),
        seams=seams([Script(kind="erlang", version="23.2.6"), Script(kind="erlang")], Log()),
    )
    older = dataclasses.replace(outcome.report, differences=None)
    done = findings.complete(older)
    assert done.differences == outcome.report.differences
    assert done.verdicts is older.verdicts and done.upgrades is older.upgrades
