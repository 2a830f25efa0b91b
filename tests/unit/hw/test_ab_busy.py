"""Hardware verdicts from twins on a busy machine (bridge.hw.ab): a `used`
from twins that waited for a CPU must show in the CPU time per call of the
same rounds too, and a small size whose CI is too wide for `not-used`
still names the size that shows the feature."""

from __future__ import annotations

import pytest

from bridge.catalog import scenario as scenarios
from bridge.hw import ab, hardware, verdicts
from bridge.report import schema
from bridge.report.findings import Basis, Verdict, Why, reason
from bridge.report.hw import Hw
from bridge.report.whynot import TooSmall
from tests.unit.hw.test_whynot import RUNTIME, SYSTEM

ROUNDS = 6  # two samples a round
LOOPS = 100
BUSY = (reason(Why.BUSY_MACHINE, others_cpus=1.7, cpus=2, needs=2.0),)


def _cell(size: int, hw: Hw, wall: list[float], cpu: list[float], wait: float) -> schema.Result:
    """A cell whose round i took wall[i] ns per call (cpu[i] of it on a
    CPU), each window `wait` of it waiting for one."""
    samples = tuple(w * LOOPS * (1 + k / 1000) for w in wall for k in range(2))
    cpu_ns = tuple(round(c * LOOPS * (1 + k / 1000)) for c in cpu for k in range(2))
    return schema.Result(
        scenario="sha256",
        runtime=RUNTIME.id,
        call="crypto:hash(sha256, Data)",
        call_id="hash",
        api="crypto:hash/2",
        semantics="one-shot",
        algorithm="sha256",
        size=size,
        samples=samples,
        loops=LOOPS,
        output_hex="00",
        hw=hw,
        sample_cpus=(0,) * len(samples),
        sample_cpu_ns=cpu_ns,
        sample_wait_ns=tuple(round(wait * s) for s in samples),
    )


def _rounds(r: schema.Result) -> dict[int, list[float]]:
    per_op = r.per_op_ns()
    return {i: per_op[2 * i : 2 * i + 2] for i in range(len(per_op) // 2)}


def _verdicts(cells: list[schema.Result], busy=BUSY, rounds=_rounds) -> list[schema.HwVerdict]:
    masked = schema.Runtime(**{**RUNTIME.__dict__, "hw": Hw.OFF})
    cpu = hardware.Cpu("x86_64", "test", frozenset({"sha_ni"}), False)
    ctx = ab.plan(RUNTIME, ("sha",), cpu, {}, None)
    ctx.build = SYSTEM
    sc = scenarios.load("sha256")
    seen = ab.Seen(rounds=rounds, busy=busy)
    return ab.verdict_list([sc], cells, [RUNTIME, masked], {RUNTIME.id: ctx}, seen)


def _why(v: schema.HwVerdict, why: Why) -> dict:
    found = [r for r in v.reasons if r.why is why]
    assert found, v.reasons
    return found[0].params


ROUND = [1.0, 1.02, 0.99, 1.01, 1.0, 0.98]  # each round's speed, alike for both twins


def test_a_gain_only_in_wall_time_is_judged_on_cpu_time_on_a_busy_machine():
    # The masked twin waited 60% of its windows: 4x the wall time per call,
    # the same CPU time (the controls beside two CPU hogs read so).
    on = _cell(16384, Hw.ON, [9_000 * x for x in ROUND], [9_000 * x for x in ROUND], 0.0)
    off = _cell(16384, Hw.OFF, [36_000 * x for x in ROUND], [9_100 * x for x in ROUND], 0.6)
    (v,) = _verdicts([on, off])
    assert v.basis is Basis.CPU
    assert v.speedup == pytest.approx(1.01, abs=0.01)
    assert v.verdict is Verdict.NOT_USED, v.reasons
    basis = _why(v, Why.CPU_BASIS)
    # One process a side: the floor, and the one pair's 5% on top.
    assert basis == {"aa": None, "floor": 1.1, "needs": 1.15}
    assert v.margin == 1.15 and v.reasons[0].why is Why.CPU_BASIS


def test_a_gain_in_cpu_time_too_is_used_on_a_busy_machine():
    # SHA-NI at 16 KiB: 3x the CPU time per call masked, 4x the wall time.
    on = _cell(16384, Hw.ON, [9_000 * x for x in ROUND], [9_000 * x for x in ROUND], 0.0)
    off = _cell(16384, Hw.OFF, [36_000 * x for x in ROUND], [27_000 * x for x in ROUND], 0.3)
    (v,) = _verdicts([on, off])
    assert v.verdict is Verdict.USED, v.reasons
    assert v.basis is Basis.CPU and v.speedup == pytest.approx(3.0, rel=0.02)


def test_a_small_gain_in_cpu_time_is_used_where_the_flat_2x_withheld_it():
    # HMAC-SHA1 at 1000 B: 1.3x by CPU time, every round; by wall time the
    # waits make it 1.6x, which the busy machine's 2x rule called inconclusive.
    on = _cell(1000, Hw.ON, [3_000 * x for x in ROUND], [3_000 * x for x in ROUND], 0.1)
    off = _cell(1000, Hw.OFF, [4_800 * x for x in ROUND], [3_900 * x for x in ROUND], 0.3)
    (v,) = _verdicts([on, off])
    assert v.verdict is Verdict.USED, v.reasons
    assert v.basis is Basis.CPU and v.speedup == pytest.approx(1.3, rel=0.01)
    assert v.margin == 1.15


def test_a_control_just_past_the_noise_margin_is_not_used_on_cpu_time():
    # SHA-512 beside two hogs: 1.09x by CPU time, CI clear of 1.05, short of
    # the 1.15x the run can resolve with one process a side.
    on = _cell(16384, Hw.ON, [9_000 * x for x in ROUND], [9_000 * x for x in ROUND], 0.1)
    off = _cell(16384, Hw.OFF, [20_000 * x for x in ROUND], [9_800 * x for x in ROUND], 0.5)
    (v,) = _verdicts([on, off])
    assert v.verdict is Verdict.INCONCLUSIVE and v.basis is Basis.CPU
    assert v.speedup_ci95 is not None and 1.05 < v.speedup_ci95[0] < 1.15
    assert _why(v, Why.FEW_PROCESS_PAIRS)["needs"] == 1.15


def test_the_margin_is_the_gap_between_the_unmasked_processes_by_cpu_time():
    # Three processes a side, two rounds each; the unmasked call's processes
    # read 9,000, 9,000 and 11,700 ns by CPU time: 1.3x apart, which a 1.25x
    # "gain" does not clear. The same gain is used where they agree.
    gap = [1.0, 1.0, 1.3, 1.0, 1.0, 1.3]  # round i ran in process i mod 3
    procs = tuple(i % 3 for i in range(ROUNDS) for _ in range(2))
    on = _cell(16384, Hw.ON, [9_000 * x for x in gap], [9_000 * x for x in gap], 0.1)
    off = _cell(16384, Hw.OFF, [11_250 * x for x in gap], [11_250 * x for x in gap], 0.3)
    on, off = (schema.Result(**{**c.__dict__, "procs": procs}) for c in (on, off))
    (v,) = _verdicts([on, off])
    assert v.basis is Basis.CPU and v.speedup == pytest.approx(1.25, rel=0.01)
    assert _why(v, Why.CPU_BASIS)["aa"] == pytest.approx(1.3)
    assert v.margin == pytest.approx(1.3) and v.verdict is Verdict.INCONCLUSIVE
    flat = [
        schema.Result(
            **{
                **c.__dict__,
                "sample_cpu_ns": tuple(
                    round(9_000 * LOOPS * (1.25 if c.hw.masked else 1.0)) for _ in c.samples
                ),
            }
        )
        for c in (on, off)
    ]
    (v,) = _verdicts(flat)
    assert _why(v, Why.CPU_BASIS)["aa"] == 1.0 and v.verdict is Verdict.USED, v.reasons


# --quick's 12 rounds of two samples beside two hogs: in a few rounds one
# twin or the other waited most of its windows (0.8 against a usual 0.02),
# rounds the wall-time verdict leaves out (ab._rounds_that_ran).
ON_WAITS = [0.02, 0.8, 0.02, 0.02, 0.8, 0.02, 0.02, 0.8, 0.02, 0.02, 0.02, 0.8]
OFF_WAITS = [0.8, 0.02, 0.02, 0.8, 0.02, 0.02, 0.8, 0.02, 0.02, 0.02, 0.02, 0.02]


def _quick_twins(cpu_ratio: list[float]) -> list[schema.Result]:
    """HMAC-SHA1 at 1000 B: the masked twin's CPU time per call cpu_ratio[i]
    times the unmasked one's in round i; each waited as ON_WAITS / OFF_WAITS."""
    cells = []
    for hw, ratio, waits in ((Hw.ON, [1.0] * 12, ON_WAITS), (Hw.OFF, cpu_ratio, OFF_WAITS)):
        cpu = [3_000 * x for x in ratio]
        wall = [c / (1 - w) for c, w in zip(cpu, waits, strict=True)]
        r = _cell(1000, hw, wall, cpu, 0.0)
        waited = tuple(round(w * s) for w in waits for s in r.samples[:2])
        cells.append(schema.Result(**{**r.__dict__, "sample_wait_ns": waited}))
    return cells


def test_a_cpu_time_verdict_counts_the_rounds_a_twin_waited_in():
    # 1.29x by CPU time (Erlang's crypto:macN beside two hogs). Of the five
    # rounds in which neither twin waited much, one read 1.02x: their CI
    # alone is near their range. A wait is not in CPU time: all 12 count,
    # CI 3rd to 10th of them, clear of the 1.15x one process a side needs.
    ratio = [1.3, 1.25, 1.02, 1.35, 1.28, 1.3, 1.22, 1.31, 1.29, 1.26, 1.33, 1.27]
    (v,) = _verdicts(_quick_twins(ratio))
    assert v.basis is Basis.CPU and v.speedup == pytest.approx(1.29, abs=0.01)
    assert v.speedup_ci95 is not None and v.speedup_ci95[0] > 1.2, v.speedup_ci95
    assert v.verdict is Verdict.USED and v.margin == 1.15, v.reasons
    assert not any(r.why is Why.ROUNDS_LEFT_OUT for r in v.reasons)


def test_a_control_over_every_round_stays_short_of_the_margin():
    # SHA-512 beside two hogs: 1.05-1.11x by CPU time in every round, CI
    # low end clear of 1.05 with all 12 rounds, short of 1.15: not used.
    ratio = [1.08, 1.05, 1.1, 1.07, 1.11, 1.06, 1.09, 1.08, 1.05, 1.1, 1.07, 1.09]
    (v,) = _verdicts(_quick_twins(ratio))
    assert v.basis is Basis.CPU and v.verdict is Verdict.INCONCLUSIVE, v.reasons
    assert v.speedup_ci95 is not None and 1.05 <= v.speedup_ci95[0] < 1.15
    assert v.speedup_ci95[1] <= 1.11


def test_a_cpu_time_ci_left_open_names_the_rounds_that_would_settle_it():
    # --quick's 12 rounds of two samples: 1.28x by CPU time, CI 0.99-1.39
    # (beside two hogs, Python's hmac.digest); more rounds narrow the CI.
    reruns = verdicts.Reruns(per_round=2)
    assert verdicts.rounds_to_settle(1.28, 0.99, 1.15, 12, reruns) == "--rounds 87 --samples 174"
    assert verdicts.rounds_to_settle(1.28, 1.12, 1.15, 12, reruns) == "--rounds 24 --samples 48"
    # A ratio at or under the margin: more rounds would not lift it above.
    assert verdicts.rounds_to_settle(1.1, 0.9, 1.15, 12, reruns) is None
    # One that would need more than MAX_ROUNDS rounds: none either.
    assert verdicts.rounds_to_settle(1.16, 0.8, 1.15, 12, reruns) is None
    # In a verdict: the wobbling rounds of a 1.25x gain, six of them.
    wobble = [1.0, 1.45, 1.0, 1.5, 1.02, 1.4]
    on = _cell(1000, Hw.ON, [3_000.0] * 6, [3_000.0] * 6, 0.1)
    off = _cell(1000, Hw.OFF, [4_000 * x for x in wobble], [3_000 * x for x in wobble], 0.3)
    (v,) = _verdicts([on, off])
    assert v.verdict is Verdict.INCONCLUSIVE and v.basis is Basis.CPU
    assert v.rerun is not None and v.rerun.why is Why.WITHIN_NOISE
    assert v.rerun.option.startswith("--rounds "), v.rerun


# --quick's 24 rounds of one sample (settings.QUICK). Beside two busy loops a
# twin that waited in a window ran its calls after the other processes'
# slices, on cold caches: in those samples its CPU time per call read about
# a fifth higher (Python's hmac.digest, docs/findings/busy-machine.md).
COLD = 1.2


def _one_a_round(r: schema.Result) -> dict[int, list[float]]:
    return {i: [x] for i, x in enumerate(r.per_op_ns())}


def _single_twins(ratio: list[float], on_waited: set[int], off_waited: set[int]):
    """HMAC-SHA1 at 1000 B in rounds of one sample: the masked twin's CPU
    time per call ratio[i] times the unmasked one's in round i, each twin's
    waited rounds (80% of the window) at COLD times its CPU time."""
    cells = []
    for hw, scale, waited in ((Hw.ON, [1.0] * len(ratio), on_waited), (Hw.OFF, ratio, off_waited)):
        cpu = [3_000 * x * (COLD if i in waited else 1.0) for i, x in enumerate(scale)]
        wall = [c / (0.2 if i in waited else 1.0) for i, c in enumerate(cpu)]
        samples = tuple(w * LOOPS for w in wall)
        r = schema.Result(
            **{
                **_cell(1000, hw, [1.0], [1.0], 0.0).__dict__,
                "samples": samples,
                "sample_cpus": (0,) * len(samples),
                "sample_cpu_ns": tuple(round(c * LOOPS) for c in cpu),
                "sample_wait_ns": tuple(
                    round(0.8 * s) if i in waited else 0 for i, s in enumerate(samples)
                ),
            }
        )
        cells.append(r)
    return cells


# Which of the 24 rounds each twin waited in: unlike, as beside two hogs
# (hmac.digest's unmasked twin waited most of its windows in a third of the
# rounds of a 12-round run, the masked one in a few).
ON_WAITED = {1, 5, 9, 13, 18}
OFF_WAITED = {3, 11, 20}


def test_quick_rounds_of_one_sample_find_a_small_gain_on_cpu_time():
    # 1.25x by CPU time; in the rounds the unmasked twin waited in, its cold
    # calls bring the round to 1.04x, in the masked twin's to 1.5x. The
    # median of 24 such rounds stands at the gain, its CI clear of 1.15x.
    ratio = [1.25 * (1 + 0.02 * ((i * 7) % 5 - 2)) for i in range(24)]
    (v,) = _verdicts(_single_twins(ratio, ON_WAITED, OFF_WAITED), rounds=_one_a_round)
    assert v.basis is Basis.CPU and v.speedup == pytest.approx(1.25, abs=0.02)
    assert v.verdict is Verdict.USED and v.margin == 1.15, (v.speedup_ci95, v.reasons)


def test_quick_rounds_of_one_sample_keep_a_control_with_waited_samples_clear():
    # SHA-512: no gain. The masked twin waited in 11 of the 24 rounds, each
    # 1.2x "slower" by CPU time; the unmasked one in 6. Never used.
    ratio = [1 + 0.02 * ((i * 7) % 5 - 2) for i in range(24)]
    off_waited = {0, 2, 3, 7, 8, 11, 12, 16, 17, 20, 23}
    (v,) = _verdicts(_single_twins(ratio, {1, 5, 9, 13, 18, 22}, off_waited), rounds=_one_a_round)
    assert v.basis is Basis.CPU and v.verdict is not Verdict.USED, v.reasons
    assert v.speedup_ci95 is not None and v.speedup_ci95[0] < 1.15


def test_cpu_time_is_not_asked_on_a_quiet_machine_or_without_it():
    # Quiet and no wait: the wall-time verdict, as before.
    on = _cell(16384, Hw.ON, [9_000 * x for x in ROUND], [9_000 * x for x in ROUND], 0.0)
    off = _cell(16384, Hw.OFF, [27_000 * x for x in ROUND], [9_000 * x for x in ROUND], 0.0)
    (v,) = _verdicts([on, off], busy=())
    assert v.verdict == "used" and v.basis is Basis.WALL
    assert not any(r.why is Why.CPU_BASIS for r in v.reasons)
    # A cell that recorded no CPU time: wall time, and the busy machine's 2x.
    bare = [schema.Result(**{**c.__dict__, "sample_cpu_ns": ()}) for c in (on, off)]
    (v,) = _verdicts(bare)
    assert v.verdict == "used" and v.basis is Basis.WALL and v.margin == 2.0


def test_an_inconclusive_small_size_names_the_size_that_shows_it():
    # At 16 B the rounds straddle the margin (too wide for not-used); at
    # 16 KiB the call is 3x slower masked.
    wobble = [1.0, 1.12, 0.9, 1.1, 0.93, 1.06]
    cells = [
        _cell(16, Hw.ON, [300.0] * 6, [300.0] * 6, 0.0),
        _cell(16, Hw.OFF, [300.0 * x for x in wobble], [300.0 * x for x in wobble], 0.0),
        _cell(16384, Hw.ON, [9_000 * x for x in ROUND], [9_000 * x for x in ROUND], 0.0),
        _cell(16384, Hw.OFF, [27_000 * x for x in ROUND], [27_000 * x for x in ROUND], 0.0),
    ]
    small, large = sorted(_verdicts(cells, busy=()), key=lambda v: v.size)
    assert large.verdict == "used"
    assert small.verdict is Verdict.INCONCLUSIVE and _why(small, Why.WITHIN_NOISE)
    assert small.why == TooSmall(16, 16384, pytest.approx(large.speedup))
    # One whose CI clears the margin showed a gain at its size: no reason.
    slower = [1.08, 1.12, 1.1, 1.14, 1.09, 1.13]
    cells[1] = _cell(16, Hw.OFF, [300.0 * x for x in slower], [300.0 * x for x in slower], 0.0)
    small, _ = sorted(_verdicts(cells, busy=BUSY), key=lambda v: v.size)
    assert small.verdict == "inconclusive" and small.why is None
