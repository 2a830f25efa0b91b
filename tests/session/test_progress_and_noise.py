"""The pipeline's progress line (with its ETA), the cells marked unstable in
every run, and the noise block of the report, driven by fake runtimes with a
scripted clock and scripted machine snapshots."""

from __future__ import annotations

import dataclasses

from bridge.analysis import noise
from bridge.measure import runner
from bridge.measure.eta import Step
from bridge.report import schema
from bridge.report.findings import Why
from bridge.settings import Settings
from bridge.view import words
from tests.session.fake import Log, Script, seams
from tests.session.test_session import ERL, PY, mac_scenario, plan


class Ticking:
    """A clock that moves 1 s every time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_the_progress_line_has_an_eta_from_the_first_batch_on():
    settings = Settings(warmup_ms=100, rewarm_ms=10, sample_ms=5, samples=40, rounds=10)
    said: list[str] = []
    log = Log()
    runner.execute(
        plan(settings=settings), progress=said.append, seams=seams([PY, ERL], log, clock=Ticking())
    )
    cells = [m for m in said if getattr(m, "step", None) is Step.CELL]
    assert len(cells) == 6 * settings.rounds  # 6 cells, 10 rounds
    # The share done and the time left ride on each message (eta.Status);
    # before anything finished, the plan is the estimate.
    assert cells[0].fraction == 0.0 and cells[0].left_s is not None and cells[0].left_s > 0
    assert cells[-1].left_s is not None and cells[-1].left_s > 0
    fractions = [m.fraction for m in cells]
    assert fractions == sorted(fractions) and 0.9 < fractions[-1] < 1.0
    assert "round 10/10 [" in cells[-1]
    assert cells[-1].cell.size == "1000 B"  # the scenario's last size: its cells run together
    # One message when each round ends: a plain progress line prints those.
    ends = [m for m in said if getattr(m, "step", None) is Step.ROUND]
    assert [str(m) for m in ends] == [
        f"round {r}/10 of hmac-sha1 done (6 cells)" for r in range(1, 11)
    ]
    assert ends[-1].fraction == 1.0


def test_the_eta_costs_no_clock_reads_without_a_progress_line():
    reads = Ticking()
    runner.execute(plan(), seams=seams([PY], Log(), clock=reads))
    assert reads.now <= 2  # the session's own start and end reads


def test_cells_past_the_runs_own_ci_target_are_marked_unstable():
    noisy = Script(
        kind="python",
        per_op_ns=lambda job, hw, n: (
            1000.0 * (1 + (n % 3)) if job.call.id == "hmac.digest" else 1e3
        ),
    )
    settings = Settings(warmup_ms=1, sample_ms=1, samples=6, rounds=3)  # no --until-stable
    outcome = runner.execute(plan(settings=settings), seams=seams([noisy], Log()))
    unstable = outcome.report.unstable
    assert {(u.call_id, u.size) for u in unstable} == {("hmac.digest", 64), ("hmac.digest", 1000)}
    assert all(u.ci_halfwidth > settings.ci_target for u in unstable)
    lenient = dataclasses.replace(settings, ci_target=None)
    assert not runner.execute(plan(settings=lenient), seams=seams([noisy], Log())).report.unstable


def test_the_report_carries_what_the_machine_did_during_the_run():
    shots = iter(
        [
            noise.Snapshot(
                wall=0.0,
                stat=noise.CpuTimes(0, 0, 0, 0, 0, 0, 0, 0),
                load=(1.0, 1.0, 1.0),
                processes={50: ("burner", 0)},
            ),
            # When the scenario is done, for its verdicts (the runner's windows).
            noise.Snapshot(
                wall=9.0,
                stat=noise.CpuTimes(1700, 0, 0, 100, 0, 0, 0, 0),
                load=(2.0, 1.0, 1.0),
                processes={50: ("burner", 900)},
                own_cpu_s=8.0,
            ),
            noise.Snapshot(
                wall=10.0,
                stat=noise.CpuTimes(1900, 0, 0, 100, 0, 0, 0, 0),
                load=(2.0, 1.0, 1.0),
                processes={50: ("burner", 1000)},
                own_cpu_s=9.0,
            ),
        ]
    )
    drifting = Script(kind="python", per_op_ns=lambda job, hw, n: 1000.0 * (1 + 0.05 * n))
    settings = Settings(warmup_ms=1, sample_ms=1, samples=30, rounds=10)
    fake = dataclasses.replace(
        seams([drifting], Log()),
        snapshot=lambda: next(shots),
        environment=lambda: {"cpu_count": 2, "cpu_model": "Fake CPU"},
    )
    sc = mac_scenario(calls={"python": ["hmac.digest"]}, sizes=[64])
    outcome = runner.execute(plan(sc, settings=settings), seams=fake)
    report = outcome.report
    n = report.noise
    assert n is not None and n.seconds == 10.0 and n.cpus == 2
    assert n.others_cpus == 1.0 and n.bridge_cpus == 0.9
    # Counted in the report; named only in memory, for bridge run -v.
    assert n.busy_others == schema.BusyOthers(1, (1.0,)) and n.busy_processes is None
    assert "burner" not in schema.dumps(report)
    assert outcome.busiest == (noise.OtherProcess(50, "burner", 1.0),)
    assert [c.shape for c in n.cells] == ["drift"]
    said = words.noise_lines(n)
    assert said[0].startswith("other processes used 1.0 of 2 CPUs")
    assert "drifting samples" in said[1]
    assert [r.why for r in n.findings] == [Why.OTHERS_BUSY, Why.CELL_DRIFT, Why.NOISY_RUN]
    assert words.noise_advice(n) and n.warnings is None and n.advice is None
    assert schema.Report.from_json(report.to_json()) == report


def test_a_mask_string_is_checked_once_per_run():
    checked = []

    def check(plan, ctx):
        checked.append(ctx.runtime_id)
        return schema.MaskCheck(ok=True, by="fake check")

    fake = dataclasses.replace(seams([PY, ERL], Log()), check_mask=check)
    report = runner.execute(plan(hw="both"), seams=fake).report
    assert len(checked) == 1  # both runtimes use OpenSSL 3.0 and the same mask
    assert [e.mask_check for e in report.hardware.experiments] == [
        schema.MaskCheck(ok=True, by="fake check")
    ] * 2
