"""A run of several scenarios measures them one after the other, each in its
own interleaved rounds, and hands each finished scenario's report to the
caller (bridge.measure.runner.Finished): its answer is the whole report's, and
the terminal view printed piece by piece is the view printed whole."""

from __future__ import annotations

import dataclasses

from bridge.cli import live
from bridge.cli.common import rendered
from bridge.cli.run import Shape
from bridge.measure import runner
from bridge.render import terminal
from bridge.report.hw import Hw
from bridge.settings import Settings
from bridge.view import Detail, section_of
from tests.session.fake import Log, Script, seams
from tests.session.test_session import ERL, PY, SETTINGS, mac_scenario, plan

A = mac_scenario(name="mac-a", sizes=[64])
B = mac_scenario(name="mac-b", sizes=[1000])


def test_each_scenario_is_measured_whole_before_the_next_in_its_own_rounds():
    log, done = Log(), []
    outcome = runner.execute(
        plan(A, B, hw="both"), seams=seams([PY, ERL], log), on_scenario=done.append
    )
    benches = log.of("bench")
    sizes = [e[4] for e in benches]
    first_b = sizes.index(1000)
    assert set(sizes[:first_b]) == {64} and set(sizes[first_b:]) == {1000}
    # Within a scenario, the rounds interleave its cells and pair its twins
    # as before: every cell once a round, the masked twin beside its partner,
    # first on odd rounds.
    for part in (benches[:first_b], benches[first_b:]):
        by_round: dict[int, list] = {}
        for e in part:
            by_round.setdefault(e[5].round, []).append((e[1], e[3], e[2]))
        assert len(by_round) == SETTINGS.rounds
        cells = {(r, c) for r, c, _ in by_round[0]}
        for r, order in by_round.items():
            assert {(x, c) for x, c, _ in order} == cells and len(order) == 2 * len(cells)
            pairs = [order[i : i + 2] for i in range(0, len(order), 2)]
            assert all(a[:2] == b[:2] for a, b in pairs), order
            assert {a[2] for a, _ in pairs} == {Hw.OFF if r % 2 else Hw.ON}
    assert [f.scenario for f in done] == ["mac-a", "mac-b"]
    assert not outcome.interrupted and len(outcome.report.results) == 12


def test_a_finished_scenarios_answer_is_the_whole_reports():
    done = []
    whole = runner.execute(
        plan(A, B, hw="both"), seams=seams([PY, ERL], Log()), on_scenario=done.append
    ).report
    assert whole.verdicts and {v.verdict for v in whole.verdicts} == {"used"}
    for finished in done:
        part = finished.report
        name = finished.scenario
        assert {r.scenario for r in part.results} == {name}
        assert part.results == tuple(r for r in whole.results if r.scenario == name)
        # The same analysis on the same cells: the same verdicts and comparisons.
        assert part.verdicts == tuple(v for v in whole.verdicts if v.scenario == name)
        assert part.differences == tuple(d for d in whole.differences if d.scenario == name)
        for detail in Detail:
            assert terminal.section(section_of(part, name, detail)) == terminal.section(
                section_of(whole, name, detail)
            )


def test_the_view_printed_scenario_by_scenario_is_the_view_printed_whole(capsys):
    shape = Shape("table")
    sections = live.Sections(shape, lambda r: r, lambda: None)
    report = runner.execute(
        plan(A, B, hw="both"), seams=seams([PY, ERL], Log()), on_scenario=sections
    ).report
    assert sections.printed == ["mac-a", "mac-b"]
    rest = shape.render(report, omit=frozenset(sections.printed))
    printed = capsys.readouterr().out + sections.rest(rest)
    assert printed == rendered("table", report, width=80)
    assert printed.index("== mac-a") < printed.index("== mac-b")


def test_json_and_markdown_are_printed_whole_at_the_end(capsys):
    for fmt in ("json", "markdown"):
        sections = live.Sections(Shape(fmt), lambda r: r, lambda: None)
        runner.execute(plan(A, B), seams=seams([PY], Log()), on_scenario=sections)
        assert sections.printed == [] and capsys.readouterr().out == ""


def test_ctrl_c_in_the_second_scenario_keeps_the_first_whole_and_the_rounds_done():
    log, done = Log(), []
    log.interrupt_at = 3 * SETTINGS.rounds + 4  # in mac-b's second round (3 cells a round)
    outcome = runner.execute(plan(A, B), seams=seams([PY, ERL], log), on_scenario=done.append)
    assert outcome.interrupted and [f.scenario for f in done] == ["mac-a"]
    results = outcome.report.results
    assert {r.scenario for r in results} == {"mac-a", "mac-b"}
    assert all(len(r.samples) == 6 for r in results if r.scenario == "mac-a")
    assert all(0 < len(r.samples) < 6 for r in results if r.scenario == "mac-b")
    assert len(log.of("stop")) == 2


def test_until_stable_gives_each_scenario_its_share_of_max_time():
    class Clock:
        now = 0.0

        def __call__(self) -> float:
            Clock.now += 1.0  # every read moves the clock a second
            return Clock.now

    noisy = Script(kind="python", per_op_ns=lambda job, hw, n: 1000.0 * (1 + (n % 5)))
    settings = dataclasses.replace(
        Settings(warmup_ms=1, sample_ms=1, samples=2, rounds=2),
        until_stable=0.02,
        max_seconds=60,
    )
    log, done = Log(), []

    def finished(f: runner.Finished) -> None:
        done.append((f.scenario, Clock.now))

    fake = seams([noisy], log, clock=Clock())
    runner.execute(plan(A, B, settings=settings), seams=fake, on_scenario=finished)
    # The first scenario stops its extra rounds at half of --max-time; the
    # second has the rest.
    (a, a_at), (b, b_at) = done
    assert (a, b) == ("mac-a", "mac-b")
    assert 30 <= a_at <= 36 and 60 <= b_at <= 66
    sizes = [e[4] for e in log.of("bench")]
    assert sizes.count(64) > 2 * settings.rounds and sizes.count(1000) > 2 * settings.rounds
