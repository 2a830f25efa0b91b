"""The fast tier: the whole run pipeline (runner -> session -> interop ->
assembly) driven in-process by scripted fake runtimes. No process starts,
so each test takes milliseconds; the real runtimes are proven by the
integration and CLI tiers."""

from __future__ import annotations

import json

import pytest

from bridge.catalog import scenario
from bridge.errors import OperationError, WorkerError
from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.report import schema
from bridge.report.findings import Why, reason
from bridge.report.hw import Hw, HwMode
from bridge.settings import Settings
from tests.session.fake import Log, Script, seams, unavailable

SETTINGS = Settings(warmup_ms=7, rewarm_ms=3, sample_ms=1, samples=6, rounds=3, openssl_runs=3)


def mac_scenario(**over) -> scenario.Scenario:
    data = {
        "name": "hmac-sha1",
        "description": "test",
        "kind": "mac",
        "digest": "sha1",
        "key_bytes": 20,
        "mac_bytes": 10,
        "sizes": [64, 1000],
        "features": ["sha"],
        "calls": {"python": ["hmac.digest", "hmac.new+copy"], "erlang": ["macN"]},
        **over,
    }
    return scenario.parse(data, "test.toml")


def plan(*scenarios, hw="on", settings=SETTINGS) -> Plan:
    return Plan(scenarios=scenarios or (mac_scenario(),), settings=settings, seed=1, hw=HwMode(hw))


PY, ERL = Script(kind="python"), Script(kind="erlang", version="25.2.3")


def run(p, scripts, log=None, **kw) -> tuple[runner.Outcome, Log]:
    log = log or Log()
    return runner.execute(p, seams=seams(scripts, log, **kw)), log


def test_rounds_interleave_cells_and_reuse_the_calibrated_loops():
    outcome, log = run(plan(), [PY, ERL])
    benches = log.of("bench")
    # 3 cells per runtime pair... python has 2 calls x 2 sizes, erlang 1 x 2: 6 cells.
    assert len(benches) == 6 * SETTINGS.rounds
    first_round = [(e[1], e[3], e[4]) for e in benches[:6]]
    assert len(set(first_round)) == 6  # every cell once per round
    for r in range(SETTINGS.rounds):
        cells = [(e[1], e[3], e[4]) for e in benches[6 * r : 6 * r + 6]]
        assert set(cells) == set(first_round)
        # The cells of one size, compared with each other, side by side.
        assert [size for *_, size in cells] == [64] * 3 + [1000] * 3
    # Round 1 warms up and calibrates; later rounds reuse its loop count.
    assert all(e[5].warmup_ms == 7 and e[5].loops is None for e in benches[:6])
    assert all(e[5].warmup_ms == 3 and e[5].loops == 1000 for e in benches[6:])
    # The samples are spread over the rounds: 6 samples in 3 rounds.
    assert [e[5].samples for e in benches[::6]] == [2, 2, 2]
    report = outcome.report
    assert len(report.results) == 6 and all(len(r.samples) == 6 for r in report.results)
    assert not outcome.failed and not outcome.interrupted


def test_every_runtime_is_stopped_once_the_run_ends():
    _, log = run(plan(), [PY, ERL])
    started = [e for e in log.of("start")]
    assert len(started) == 2 and len(log.of("stop")) == 2
    assert log.events[-2:] == [e for e in log.events if e[0] == "stop"]  # nothing after stops


def test_ab_run_starts_a_masked_twin_and_gives_a_verdict():
    outcome, log = run(plan(hw="both"), [PY])
    twin_start = [e for e in log.of("start") if e[2] == "off"]
    assert twin_start and twin_start[0][3] == {"OPENSSL_ia32cap": ":~0x20000000"}
    report = outcome.report
    assert [rt.id for rt in report.runtimes] == ["python@3.11.0", "python@3.11.0"]
    assert [rt.hw for rt in report.runtimes] == ["on", "off"]
    used = [v for v in report.verdicts if v.verdict == "used"]
    assert len(used) == 4 and all(v.speedup == pytest.approx(2.0) for v in used)
    (experiment,) = report.hardware.experiments
    assert experiment.mask.features == ("sha",) and experiment.mask_check.ok is True


def test_twins_run_side_by_side_first_one_then_the_other():
    # The verdict pairs the twins round by round (stats.paired_ratio): each
    # masked twin runs right beside its partner, before it on odd rounds.
    _, log = run(plan(hw="both"), [PY])
    by_round: dict[int, list] = {}
    for e in log.of("bench"):
        by_round.setdefault(e[5].round, []).append((e[3], e[4], e[2]))
    assert len(by_round) == SETTINGS.rounds
    for r, order in by_round.items():
        pairs = [order[i : i + 2] for i in range(0, len(order), 2)]
        assert all(a[:2] == b[:2] for a, b in pairs), order
        first = {a[2] for a, _ in pairs}
        assert first == {Hw.OFF if r % 2 else Hw.ON}, (r, order)


def test_a_mask_that_does_not_take_effect_starts_no_twin():
    outcome, log = run(plan(hw="both"), [PY], mask_ok=False)
    assert all(e[2] == "on" for e in log.of("start"))
    verdicts = {v.verdict for v in outcome.report.verdicts}
    assert verdicts == {"cannot-test"}
    assert outcome.report.verdicts[0].reasons == (reason(Why.MASK_NO_EFFECT),)
    assert outcome.report.verdicts[0].explanation is None


def test_a_runtime_that_cannot_start_is_skipped_and_the_others_run():
    broken = Script(kind="erlang", start_error=unavailable("erl not found on PATH"))
    outcome, _ = run(plan(), [broken, PY])
    report = outcome.report
    assert [s.reason for s in report.skipped] == ["erl not found on PATH"]
    assert {r.runtime for r in report.results} == {"python@3.11.0"}
    assert not outcome.failed


def test_a_runtime_that_dies_mid_run_loses_only_its_later_rounds():
    dying = Script(
        kind="erlang",
        version="25.2.3",
        fail_after=3,  # round 1 (2 cells) and one cell of round 2
        failure=WorkerError("erlang@25.2.3 exited before it sent an answer", stderr_tail="boom"),
    )
    outcome, log = run(plan(), [PY, dying])
    report = outcome.report
    (error,) = report.errors
    assert error.kind == "worker" and error.stderr_tail == "boom"
    assert "exited before" in error.message
    erl = [r for r in report.results if r.runtime == "erlang@25.2.3"]
    py = [r for r in report.results if r.runtime == "python@3.11.0"]
    assert [len(r.samples) for r in erl] == [4, 2]  # what it measured is kept
    assert all(len(r.samples) == 6 for r in py)  # the others finish every round
    # No call reached it after it died; it was stopped at once, and again at the end.
    erl_benches = [e for e in log.of("bench") if e[1] == "erlang@25.2.3"]
    assert len(erl_benches) == 4
    assert len([e for e in log.of("stop") if e[1] == "erlang@25.2.3"]) == 2
    assert outcome.failed


def test_a_hung_worker_is_an_error_with_the_timeout_in_its_message():
    hung = Script(
        kind="python",
        fail_after=0,
        failure=WorkerError("python@3.11.0 sent no answer to 'bench' within 31 s and was killed"),
    )
    outcome, _ = run(plan(), [hung, ERL])
    assert "within 31 s and was killed" in outcome.report.errors[0].message
    assert {r.runtime for r in outcome.report.results} == {"erlang@25.2.3"}


def test_ctrl_c_keeps_what_was_measured_and_stops_every_runtime():
    log = Log()
    log.interrupt_at = 8  # in round 2
    outcome, _ = run(plan(), [PY, ERL], log=log)
    assert outcome.interrupted
    assert outcome.report.errors[-1].kind == "interrupted"
    assert len(outcome.report.results) == 6  # round 1 of every cell is kept
    assert len(log.of("stop")) == 2


def test_unsupported_calls_and_failed_calls_stop_only_their_cell():
    odd = Script(kind="python", unsupported={"hmac.new+copy": "not in this build"})
    outcome, log = run(plan(), [odd])
    by_call = {(r.call_id, r.size): r for r in outcome.report.results}
    assert by_call["hmac.new+copy", 64].status == "unsupported"
    assert by_call["hmac.new+copy", 64].reason == "not in this build"
    assert by_call["hmac.digest", 64].ok
    copies = [e for e in log.of("bench") if e[3] == "hmac.new+copy"]
    assert len(copies) == 2  # asked once per size, never again
    assert not outcome.failed

    failing = Script(kind="python", fail_after=0, failure=OperationError("failed", "badarg"))
    outcome, _ = run(plan(), [failing])
    assert {e.kind for e in outcome.report.errors} == {"call"}
    assert len(outcome.report.errors) == 4 and not outcome.report.results


def test_outputs_that_change_between_rounds_stop_the_runtime():
    flaky = Script(kind="python", output=lambda job, n: bytes([n]))
    outcome, _ = run(plan(), [flaky])
    assert "gave different outputs in different rounds" in outcome.report.errors[0].message


def test_wrong_bytes_are_a_mismatch_error_naming_the_cell():
    wrong = Script(kind="python", output=lambda job, n: b"\x00" * 10)
    outcome, _ = run(plan(), [wrong, ERL])
    report = outcome.report
    assert not all(c.match for c in report.interop)
    mismatch = [e for e in report.errors if e.kind == "mismatch"]
    assert len(mismatch) == 2
    assert "python@3.11.0 hmac.digest hw=on" in mismatch[0].message
    check = report.interop[0]
    assert schema.OutputKey("python@3.11.0", "hmac.digest", "on") in check.mismatched
    assert schema.OutputKey("erlang@25.2.3", "macN", "on") not in check.mismatched


def test_two_runtimes_with_one_id_are_told_apart():
    outcome, _ = run(plan(), [PY, Script(kind="python")])
    assert [rt.id for rt in outcome.report.runtimes] == ["python@3.11.0", "python@3.11.0#2"]


def test_until_stable_adds_rounds_to_noisy_cells_until_the_clock_runs_out():
    # Every round of the noisy cell gives a new value: its CI never closes.
    noisy = Script(
        kind="python",
        per_op_ns=lambda job, hw, n: (
            1000.0 * (1 + (n % 5)) if job.call.id == "hmac.digest" else 1e3
        ),
    )
    ticks = iter(range(0, 1000, 10))
    settings = Settings(
        warmup_ms=1, sample_ms=1, samples=2, rounds=2, until_stable=0.02, max_seconds=55
    )
    outcome, log = run(plan(settings=settings), [noisy], clock=lambda: next(ticks))
    report = outcome.report
    assert {(u.call_id, u.size) for u in report.unstable} == {
        ("hmac.digest", 64),
        ("hmac.digest", 1000),
    }
    extra = log.of("bench")[4 * settings.rounds :]
    assert extra and all(e[3] == "hmac.digest" for e in extra)  # only the noisy cells
    assert len(log.of("bench")) < 200  # the clock ended it


def test_timer_tc_runs_on_erlang_cells_only():
    tc = {
        "api": "crypto:macN/5",
        "min_us": 2,
        "max_us": 9,
        "median_us": 3,
        "avg_us": 3,
        "zero_us_calls": 0,
    }
    erl = Script(kind="erlang", version="25.2.3", tc_reply=tc)
    settings = Settings(warmup_ms=1, sample_ms=1, samples=2, rounds=1, tc_calls=100)
    outcome, _ = run(plan(settings=settings), [PY, erl])
    figures = outcome.report.tc
    assert {t.runtime for t in figures} == {"erlang@25.2.3"}
    assert figures[0].n == 100 and figures[0].median_us == 3
    assert figures[0].bridge_median_ns == pytest.approx(1000.0)


def test_the_assembled_report_survives_json_unchanged():
    outcome, _ = run(plan(hw="both"), [PY, ERL])
    text = schema.dumps(outcome.report)
    assert schema.dumps(schema.Report.from_json(json.loads(text))) == text


def test_a_run_keeps_its_differences_with_the_report():
    # x fastest for every row but the fastest, judged once, at assembly.
    outcome, _ = run(plan(), [PY, ERL])
    report = outcome.report
    diffs = report.differences
    assert diffs is not None and {d.against for d in diffs} == {"fastest"}
    assert len(diffs) == len(report.results) - 2  # one fastest per size
    assert json.loads(schema.dumps(report))["differences"] == [d.to_json() for d in diffs]


def test_until_stable_adds_openssl_runs_and_single_samples_where_a_round_has_fewer():
    # 5 openssl runs and 20 samples over 50 rounds: round 1 (whose size an
    # extra round takes) has no run and no sample, yet an extra round must
    # add one of each to a cell that misses the target.
    noisy = [
        Script(kind=kind, per_op_ns=lambda job, hw, n: 1000.0 * (1 + n % 5))
        for kind in ("python", "openssl")
    ]
    ticks = iter(range(0, 100_000, 10))
    settings = Settings(
        warmup_ms=1,
        sample_ms=1,
        samples=20,
        rounds=50,
        openssl_runs=5,
        until_stable=0.02,
        max_seconds=400,
    )
    scenario = mac_scenario(sizes=[64], calls={"python": ["hmac.digest"], "openssl": ["speed"]})
    outcome, log = run(plan(scenario, hw="on", settings=settings), noisy, clock=lambda: next(ticks))
    by_kind = {
        kind: [r for r in outcome.report.results if r.runtime.startswith(kind)][0]
        for kind in ("python", "openssl")
    }
    assert len(by_kind["openssl"].samples) > 5, "no openssl run was added"
    assert len(by_kind["python"].samples) > 20, "no sample was added"
