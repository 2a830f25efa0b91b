"""Verdict logic on synthetic samples (ns per call)."""

from __future__ import annotations

import random

import pytest

from bridge.hw import verdicts
from bridge.report.context import Environment
from bridge.report.findings import Rerun, Statistic, Verdict, Why, reason
from bridge.report.whynot import BypassesEvp, CpuLacks, EnvMasks, Source


def decide(on, off, **kw) -> verdicts.Judgement:
    return verdicts.decide(verdicts.Evidence(on, off, **kw))


def whys(v: verdicts.Judgement) -> list[Why]:
    return [r.why for r in v.reasons]


def noisy(center: float, spread: float, n: int = 60, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [center * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def test_no_difference_is_not_used():
    v = decide(noisy(1000, 0.01, seed=1), noisy(1000, 0.01, seed=2))
    assert v.verdict == "not-used"
    assert 0.98 < v.speedup < 1.02


def test_clear_difference_is_used():
    v = decide(noisy(1000, 0.02), noisy(3200, 0.02, seed=3))
    assert v.verdict == "used"
    assert 3.0 < v.ci95[0] <= v.speedup <= v.ci95[1] < 3.4


def test_noisy_data_is_inconclusive_not_used():
    v = decide(noisy(1000, 0.6, n=12), noisy(1100, 0.6, n=12, seed=5))
    assert v.verdict == "inconclusive"
    (why,) = v.reasons
    assert why.why is Why.WITHIN_NOISE and why["lo"] < 1.05 < why["hi"]
    assert why["margin"] == 1.05 and v.margin == 1.05
    assert v.rerun == Rerun("--rounds 40", Why.WITHIN_NOISE)


def test_faster_when_masked_is_inconclusive():
    v = decide(noisy(2000, 0.01), noisy(1000, 0.01, seed=7))
    assert v.verdict == "inconclusive" and whys(v) == [Why.MASKED_FASTER]
    assert v.masked_faster and v.rerun == Rerun("", Why.MASKED_FASTER)


@pytest.mark.parametrize(
    ("why", "verdict"),
    [
        (CpuLacks("sha", Source.CPUINFO), Verdict.CPU_LACKS),
        (EnvMasks("OPENSSL_ia32cap", "~0x200000200000000"), Verdict.MASKED),
        (BypassesEvp("_sha2.SHA256Type"), Verdict.NOT_OPENSSL),
    ],
)
def test_a_path_that_does_not_use_the_feature_says_why(why, verdict):
    v = verdicts.untested(why)
    assert v.verdict is verdict and v.why == why and v.reasons == () and v.speedup is None


@pytest.mark.parametrize(
    "why",
    [reason(Why.ZEROES_LEAF7), reason(Why.MASK_NO_EFFECT), reason(Why.UNKNOWN_FEATURE)],
)
def test_what_cannot_be_tested_carries_its_reason(why):
    v = verdicts.untested(why)
    assert v.verdict is Verdict.CANNOT_TEST and v.reasons == (why,) and v.why is None


def test_a_side_without_a_measurement_cannot_be_tested():
    v = decide([], [2.0])
    assert v.verdict is Verdict.CANNOT_TEST and whys(v) == [Why.NO_MEASUREMENT]


def test_a_clear_used_says_nothing_more_and_what_it_needed():
    v = decide(noisy(1000, 0.02), noisy(3200, 0.02, seed=3))
    assert v.reasons == () and v.rerun is None
    assert v.margin == 1.05 and v.statistic is Statistic.LOW


# -- evidence, two speeds, rounds (issue 25) ---------------------------------


def two_speeds(n: int, fast_share: float, seed: int, fast: float = 2876, ratio: float = 1.62):
    rng = random.Random(seed)
    k = round(n * fast_share)
    xs = [fast * (1 + rng.gauss(0, 0.02)) for _ in range(k)]
    xs += [fast * ratio * (1 + rng.gauss(0, 0.02)) for _ in range(n - k)]
    rng.shuffle(xs)
    return xs


def test_one_openssl_run_a_side_is_never_a_verdict():
    # --quick: one openssl run per side gave "uses SHA extensions" on a CI
    # of [1.14, 1.14].
    more = verdicts.Reruns(samples="--openssl-runs 3")
    v = decide([1000.0], [1140.0], what="openssl run", reruns=more)
    assert v.verdict == "inconclusive" and v.ci95 is None
    assert v.speedup == pytest.approx(1.14)
    assert v.reasons == (reason(Why.TOO_FEW_SAMPLES, what="openssl run", have=1, need=3),)
    assert v.rerun == Rerun("--openssl-runs 3", Why.TOO_FEW_SAMPLES)
    two = decide([1000.0, 1001.0], [2000.0, 2001.0, 2002.0])
    assert two.verdict == "inconclusive"
    assert two.reasons == (reason(Why.TOO_FEW_SAMPLES, what="sample", have=2, need=3),)


def test_samples_without_spread_give_no_ci_and_no_verdict():
    v = decide([1000.0] * 6, [2000.0] * 6)
    assert v.verdict == "inconclusive" and v.ci95 is None and whys(v) == [Why.SAMPLES_EQUAL]
    assert v.rerun == Rerun("--samples 6", Why.SAMPLES_EQUAL)


@pytest.mark.parametrize(("on_fast", "off_fast"), [(0.34, 0.10), (0.66, 0.05), (0.10, 0.50)])
def test_a_two_speed_machine_with_different_shares_on_each_side_gives_no_verdict(on_fast, off_fast):
    # The control on a two-speed machine: the feature changes nothing, the
    # twins caught the fast speed in different shares. Medians would read
    # up to 1.62x "used" (or 0.62x).
    for seed in range(5):
        on = two_speeds(24, on_fast, seed)
        off = two_speeds(24, off_fast, seed + 100)
        v = decide(on, off)
        assert v.verdict in ("inconclusive", "not-used"), (seed, v)
        assert v.verdict != "used"


def test_the_slow_speed_alone_on_one_side_is_named_as_the_machine():
    on = two_speeds(40, 0.4, seed=1)
    off = two_speeds(40, 0.0, seed=2)  # the masked twin caught only the slow speed
    v = decide(on, off)
    assert v.verdict == "inconclusive"
    (why,) = v.reasons
    assert why.why is Why.TWO_SPEEDS and why["side"] == "on"
    assert why["low_share"] == pytest.approx(0.4) and 2800 < why["low_ns"] < 2950
    assert why["high_ns"] / why["low_ns"] == pytest.approx(1.62, rel=0.03)
    assert v.rerun == Rerun("", Why.TWO_SPEEDS)


def test_a_real_gain_on_a_two_speed_machine_is_still_found():
    on = two_speeds(40, 0.4, seed=1)
    off = [x * 3 for x in two_speeds(40, 0.4, seed=2)]
    v = decide(on, off)
    assert v.verdict == "used" and v.speedup == pytest.approx(3, rel=0.05)


def test_the_masked_run_faster_is_the_machine_and_says_so():
    # Python sha512 came out 0.74x (CI 0.73-0.77): no mask does that.
    v = decide(noisy(1000, 0.01), noisy(740, 0.01, seed=7))
    assert v.verdict == "inconclusive"
    (why,) = v.reasons
    assert why.why is Why.MASKED_FASTER and why["ratio"] == pytest.approx(0.74, abs=0.005)
    assert why["hi"] < 0.95


def test_used_needs_the_interleaved_rounds_to_agree():
    on, off = noisy(1000, 0.02, n=24), noisy(1300, 0.02, n=24, seed=3)
    agree = (
        {i: on[i * 6 : i * 6 + 6] for i in range(4)},
        {i: off[i * 6 : i * 6 + 6] for i in range(4)},
    )
    assert decide(on, off, rounds=agree).verdict == "used"
    # One round where the masked side was the faster: a slow spell, not the feature.
    flipped = dict(agree[1])
    flipped[2] = [x / 1.6 for x in flipped[2]]
    v = decide(on, off, rounds=(agree[0], flipped))
    # Four paired rounds give the CI of their whole range, which now takes in
    # the flipped round.
    assert v.verdict == "inconclusive" and v.ci95[0] < 1 < v.ci95[1], v
    assert whys(v) == [Why.WITHIN_NOISE]


def test_a_ci_that_clears_the_margin_with_rounds_that_disagree_is_no_verdict():
    # Two rounds (too few to pair): the cells' low statistics are 1.1x apart,
    # but in the second round the unmasked side was the slower: a slow spell
    # that caught one side's batch, not the feature.
    on = {0: noisy(1000, 0.02, n=20), 1: noisy(1150, 0.15, n=20, seed=2)}
    off = {0: noisy(1300, 0.01, n=20, seed=3), 1: noisy(1100, 0.02, n=20, seed=4)}
    v = decide(flat(on), flat(off), rounds=(on, off))
    assert v.verdict == "inconclusive" and v.ci95[0] > 1.05, v
    assert v.reasons == (reason(Why.ROUNDS_DISAGREE, agree=1, rounds=2),)
    assert v.rerun == Rerun("", Why.ROUNDS_DISAGREE) and v.statistic is Statistic.LOW


def phased(level: float, fast: list[bool], n: int = 5, seed: int = 1) -> dict[int, list[float]]:
    """Rounds of a host that runs at two speeds for seconds at a time: round i
    at the fast level when fast[i], else 1.7x slower, with 2% noise."""
    rng = random.Random(seed)
    return {
        i: [level * (1 if f else 1.7) * (1 + rng.uniform(-0.02, 0.02)) for _ in range(n)]
        for i, f in enumerate(fast)
    }


def flat(by_round: dict[int, list[float]]) -> list[float]:
    return [x for i in sorted(by_round) for x in by_round[i]]


def test_paired_rounds_see_through_a_two_speed_machine():
    # The twins' rounds, tens of milliseconds apart, caught the same speed.
    rng = random.Random(4)
    for trial in range(20):
        fast = [rng.random() < 0.15 for _ in range(20)]
        procs = {i: i % 3 for i in range(20)}
        on = phased(1000, fast, seed=trial)
        control = phased(1000, fast, seed=100 + trial)
        v = decide(flat(on), flat(control), rounds=(on, control), processes=procs)
        assert v.verdict != "used" and v.statistic == "paired", (trial, v)
        gain = phased(1250, fast, seed=200 + trial)
        v = decide(flat(on), flat(gain), rounds=(on, gain), processes=procs)
        assert v.verdict == "used" and v.speedup == pytest.approx(1.25, rel=0.03), (trial, v)


def test_unpaired_low_statistic_is_fooled_where_pairing_is_not():
    # The masked twin's cell caught no fast round of its own in the 10th
    # percentile: unpaired, that reads as a 1.7x "gain" on the control.
    fast_on = [True, True, True, False, False, False, False, False, False, False] * 2
    fast_off = [False] * 20
    on, off = phased(1000, fast_on), phased(1000, fast_off, seed=2)
    assert decide(flat(on), flat(off)).speedup > 1.5
    # Paired, each round compares like with like (here the rounds disagree
    # on the speed, as no real twins measured a few ms apart would).
    same = phased(1000, fast_on, seed=3)
    v = decide(flat(on), flat(same), rounds=(on, same), processes={})
    assert v.verdict == "not-used" and v.speedup == pytest.approx(1, abs=0.02)


def test_one_or_two_processes_a_side_need_a_wider_margin():
    # Two processes of one call can differ by several percent for reasons of
    # their own, which rounds of those same two processes cannot show.
    on = phased(1000, [True] * 6, seed=1)
    off = phased(1080, [True] * 6, seed=2)
    v = decide(flat(on), flat(off), rounds=(on, off))
    assert v.verdict == "inconclusive"
    assert v.reasons == (reason(Why.FEW_PROCESS_PAIRS, pairs=1, needs=1.1),)
    assert v.rerun == Rerun("without --quick", Why.FEW_PROCESS_PAIRS) and v.margin == 1.1
    # Two pairs are two draws of that gap: still not enough.
    two = decide(flat(on), flat(off), rounds=(on, off), processes={i: i % 2 for i in range(6)})
    assert two.verdict == "inconclusive", two
    on, off = phased(1000, [True] * 9, seed=1), phased(1080, [True] * 9, seed=2)
    procs = {i: i % 3 for i in range(9)}
    v = decide(flat(on), flat(off), rounds=(on, off), processes=procs)
    assert v.verdict == "used", v


def test_twins_that_waited_unlike_need_a_wider_margin():
    # Three process pairs, 8% apart: a "used" as a rule, but not when the
    # twins' waits for a CPU differ (bridge.hw.ab.WAITED_APART): that alone
    # moved the controls up to 1.12x.
    on, off = phased(1000, [True] * 9, seed=1), phased(1080, [True] * 9, seed=2)
    procs = {i: i % 3 for i in range(9)}
    gap = reason(Why.TWINS_WAITED_APART, points=5.0, needs=1.1)
    v = decide(flat(on), flat(off), rounds=(on, off), processes=procs, unlike=gap)
    assert v.verdict == "inconclusive" and v.reasons == (gap,)
    assert v.rerun == Rerun("", Why.TWINS_WAITED_APART)
    # A real gain clears it: Erlang's HMAC-SHA1 at 1000 B, 1.23x.
    off = phased(1230, [True] * 9, seed=2)
    v = decide(flat(on), flat(off), rounds=(on, off), processes=procs, unlike=gap)
    assert v.verdict == "used", v


def test_a_busy_machine_needs_a_larger_gain():
    # The controls came out up to 1.65x "slower" masked at load 7, all rounds agreeing.
    on, off = noisy(1000, 0.02), noisy(1650, 0.02, seed=3)
    assert decide(on, off).verdict == "used"
    busy = (reason(Why.BUSY_MACHINE, others_cpus=1.6, cpus=2, needs=2.0),)
    v = decide(on, off, busy=busy)
    assert v.verdict == "inconclusive" and v.reasons == busy and v.margin == 2.0
    assert v.rerun == Rerun("", Why.BUSY_MACHINE)
    # A real gain at 16 KiB (SHA-NI: 3x) stands on a busy machine too.
    assert decide(on, noisy(3100, 0.02, seed=3), busy=busy).verdict == "used"


def test_the_busy_reasons_follow_the_noise_thresholds():
    from bridge.analysis import noise
    from bridge.report import schema

    def block(others, steal=0.0, windows=()):
        return schema.Noise(
            10, 2, (1, 1, 1), (7.2, 5, 3), 0.9, steal, 0, 0.4, others, windows=windows
        )

    assert noise.busy(block(0.1), "sha256", Environment()) == ()
    assert noise.busy(block(1.6), "sha256", Environment()) == (
        reason(Why.BUSY_MACHINE, others_cpus=1.6, cpus=2, needs=2.0),
    )
    assert noise.busy(block(0.1, steal=0.05), "sha256", Environment()) == (
        reason(Why.BUSY_HOST, steal=0.05, needs=2.0),
    )
    assert noise.busy(None, "sha256", Environment()) == ()
    # A scenario goes by the machine up to its own end: quiet then, busy later.
    quiet_then = (schema.NoiseWindow("sha256", 4.0, others_cpus=0.1, steal=0.0),)
    assert noise.busy(block(1.6, windows=quiet_then), "sha256", Environment()) == ()
    assert noise.busy(block(1.6, windows=quiet_then), "sha512", Environment()) != ()


def test_a_twin_whose_samples_were_stretched_gives_no_verdict():
    # Load 11: the masked Python twin's samples of a 5-ms plan took 17-60 ms
    # (7848 calls each), the unmasked twin's 0.3-0.8 ms; SHA-512 read 3.8x.
    from bridge.hw import ab
    from bridge.report import schema

    def cell(hw, loops, per_call):
        return schema.Result(
            scenario="sha512",
            runtime="python@3.11.7",
            call="hashlib.sha512(data).digest()",
            call_id="hashlib",
            api="hashlib.sha512",
            semantics="one-shot",
            algorithm="sha512",
            size=16,
            hw=hw,
            loops=loops,
            samples=tuple(round(loops * x) for x in per_call),
            output_hex="00",
        )

    on = cell("on", 517, noisy(1000, 0.2, n=24))
    off = cell("off", 7848, noisy(4000, 0.4, n=24, seed=2))
    stretched = ab._stretched(on, off, 5e6)
    assert stretched.why is Why.WAITED and stretched["side"] == "off"
    assert 4 < stretched["stretch"] < 5 and stretched["sample_ms"] == 5
    v = decide(on.per_op_ns(), off.per_op_ns(), stretched=stretched)
    assert v.verdict == "inconclusive" and v.speedup > 3 and v.reasons == (stretched,)
    # Samples of their planned length: nothing to say.
    assert (
        ab._stretched(cell("on", 5000, noisy(1000, 0.1)), cell("off", 5000, noisy(1000, 0.1)), 5e6)
        is None
    )


def test_twins_that_differ_elsewhere_raise_the_bar_for_used():
    # Python's twins ran SHA-512 at 8 KiB 0.74x (CI 0.73-0.77) on an idle
    # machine: the two processes differ by up to 1/0.77 = 1.3x for a reason no
    # mask has. A 1.25x "used" elsewhere in that run is not evidence.
    faster = decide(noisy(1000, 0.01), noisy(740, 0.01, seed=7))
    assert faster.masked_faster and faster.ci95[1] < 0.8
    used = decide(noisy(1000, 0.01), noisy(1250, 0.01, seed=3))
    assert used.verdict == "used"
    where = reason(
        Why.TWIN_GAP, gap=1.3, scenario="sha512", call_id="hashlib", size=8192, unit="bytes"
    )
    v = verdicts.against_twin_gap(used, 1 / faster.ci95[1], where)
    assert v.verdict == "inconclusive" and v.reasons == (where,) and v.speedup == used.speedup
    # A gain well clear of the gap stands.
    big = decide(noisy(1000, 0.01), noisy(3000, 0.01, seed=3))
    assert verdicts.against_twin_gap(big, 1.3, where).verdict == "used"


def test_a_twin_that_waited_for_a_cpu_makes_the_machine_busy():
    from bridge.hw import ab
    from bridge.report import schema

    on = schema.Result(
        scenario="sha512",
        runtime="python@3.11.7",
        call="c",
        call_id="hashlib",
        api="",
        semantics="",
        algorithm="sha512",
        size=64,
        hw="on",
        samples=(1, 2, 3),
        loops=1,
        output_hex="00",
    )
    off = schema.Result(**{**on.__dict__, "hw": "off"})
    assert ab._waited(on, off, {off.key: 0.02}, 0.05) == ()
    said = ab._waited(on, off, {off.key: 0.31}, 0.05)
    assert said == (reason(Why.TWIN_WAITED, share=0.31, needs=2.0),)
    v = decide(noisy(1000, 0.02), noisy(1650, 0.02, seed=3), busy=said)
    assert v.verdict == "inconclusive" and v.reasons == said
