"""Hardware verdicts: does a runtime's call use a CPU feature? Pure functions.

The evidence is an experiment, not a CPU model: the same call timed with the
machine as found (hw "on") and with the feature masked from process start
(hw "off"), the two side by side in every interleaved round. speedup = the
median over the rounds of median(off) / median(on) in that round
(bridge.stats.paired_ratio: a host that switches speed moves both twins of a
round alike), with the CI of that median. A report that does not say how it
sampled is judged on low(off) / low(on), low being the 10th percentile of
each cell's per-call times (bridge.stats.LOW_STATISTIC), with a bootstrap
95% CI.

  used          the masked run is slower, and the CI clears the noise margin
  not-used      the CI lies inside the noise margin although the CPU has it;
                or the library has no assembler, whatever the twins measured
                (bridge.hw.ab, from bridge.hw.whynot)
  inconclusive  neither: the CI straddles the margin (noisy); or the masked
                run was faster, which no mask can cause (the machine changed
                speed between the runs); or a side has too few samples for a
                CI (--quick's one openssl run); or the machine ran at two
                speeds and the two runs caught different ones
  cpu-lacks     the CPU does not offer the feature
  masked        the environment bridge started in already switches it off
  not-openssl   the path does not go through OpenSSL (e.g. Python's built-in
                hash code), so the mask cannot reach it
  cannot-test   no mask can be expressed for this library, or it did not
                take effect

Each verdict carries its reasons as codes with their parameters
(bridge.report.findings.Reason), what would settle an inconclusive one
(`Rerun`) and the CI's low end a "used" needed (`margin`); every verdict but
used, inconclusive and cannot-test also why the path does not use the
feature (`why`, bridge.hw.whynot), and an inconclusive at a size too small
for the gain a larger size shows that size (whynot.too_small).
bridge.view.words words them.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bridge import stats
from bridge.report.findings import Basis, Reason, Rerun, Statistic, Verdict, Why, reason
from bridge.report.whynot import BypassesEvp, CpuLacks, EnvMasks, WhyNot

# Differences under 5% are treated as noise. On this project's shared VM a
# masked run that does not use the feature at all (sha512 with SHA masked) came
# out up to ~4% slower by chance; real effects are 1.2x and more even where
# fixed cost dominates (HMAC-SHA1 at 1000 bytes).
MARGIN = 0.05
# On a busy machine (other processes on a quarter of a CPU or more, as
# bridge.analysis.noise warns; or a twin that waited for a CPU) the two twins,
# two processes, are not slowed alike: on this project's 2-vCPU guest at load
# 7-8, the SHA-512 and ChaCha20 controls came out up to 1.65x "slower" masked
# at 64 B, all rounds agreeing. There a "used" needs its CI above 2x, which
# real gains at 16 KiB clear (SHA-NI 3x, AES-NI 5x and more).
BUSY_MARGIN = 1.0
BUSY_NEEDS = 1 + BUSY_MARGIN
# With fewer than FEW_PAIRS process pairs (--quick and --processes 1: one;
# --rounds 6: two), a "used" needs this much more: the rounds' CI cannot see,
# or sees only from two draws, a gap between the processes themselves (the
# ChaCha20 control, two pairs of Erlang nodes, came out "used" once at 5%; run
# again on the idle 2-vCPU guest, 1.06x, CI 1.03-1.12).
ONE_PAIR_MARGIN = 0.05
FEW_PAIRS = 3
# Where twins waited for a CPU, the verdict is judged on CPU time per call
# (bridge.hw.ab): waiting stretches a twin's wall time, not the CPU time its
# calls took. CPU time still moves with what shares the CPU (caches, an SMT
# sibling), and unlike for two processes, so a "used" on CPU time needs its
# CI above 1 + the larger of CPU_FLOOR and the gap the unmasked cell's own
# processes show against each other by CPU time in the same run (an A/A
# ratio; with one process, --quick, none can be measured and FEW_PROCESS_PAIRS
# adds ONE_PAIR_MARGIN to the floor). Calibration: docs/reference/statistics.md.
CPU_FLOOR = 0.10
# Below this, a "used" speedup is mostly fixed per-call cost diluting the gain.
SMALL_SPEEDUP = 1.5

# What a scenario's sizes count (scenario.Scenario.size_unit): bridge.view.words
# words a size by it.
BYTES = "bytes"  # message, file or output sizes: MB/s means something
ITERATIONS = "iterations"  # PBKDF2: the size axis is the iteration count
PER_CALL = "per call"  # fixed-size operations (sign, verify, key agreement)


@dataclass(frozen=True)
class Judgement:
    """A verdict with its figures and why: what bridge.hw.ab makes a
    report's HwVerdict of."""

    verdict: Verdict
    speedup: float | None = None
    ci95: tuple[float, float] | None = None
    reasons: tuple[Reason, ...] = ()
    rerun: Rerun | None = None
    margin: float | None = None  # the CI's low end a "used" needed to clear
    statistic: Statistic = Statistic.MEDIAN  # what the speedup is a ratio of
    why: WhyNot | None = None  # why the path does not use it (bridge.hw.whynot)
    basis: Basis = Basis.WALL  # what the figures are times of

    @property
    def masked_faster(self) -> bool:
        """The masked run was faster, its CI clear of the margin: what no mask
        can cause, so a measure of how much the two twin processes differ."""
        return any(r.why is Why.MASKED_FASTER for r in self.reasons)


@dataclass(frozen=True)
class Reruns:
    """The options that would give more evidence, as the run's settings
    make them: more samples of a side, more process pairs, more rounds."""

    samples: str = "--samples 6"
    processes: str = "without --quick"
    rounds: str = "--rounds 40"
    # The run's samples a round (0: unknown), to keep in a rerun with more
    # rounds (rounds_to_settle).
    per_round: int = 0


# A rerun with more rounds asks this many more than the CI's width says it
# needs (the width shrinks about as 1/sqrt(rounds), and a rerun draws anew).
SPARE_ROUNDS = 1.25
# Past this many rounds a rerun with more of them is not the smallest that
# settles it: the one with more processes (without --quick), or a quieter
# machine, is.
MAX_ROUNDS = 100


def rounds_to_settle(
    speedup: float, lo: float, needs: float, rounds: int, reruns: Reruns
) -> str | None:
    """The smallest rerun with more rounds that would lift a CI's low end
    (`lo`, from `rounds` paired rounds) above `needs`, the ratio staying at
    `speedup`: the options to add ("--rounds 30 --samples 60");
    None where the ratio itself is not above `needs` (more rounds would
    not settle it) or more than MAX_ROUNDS would be needed."""
    if speedup <= needs or lo <= 0 or rounds < 1:
        return None
    factor = math.log(speedup / lo) / math.log(speedup / needs)
    want = math.ceil(rounds * factor * factor * SPARE_ROUNDS)
    if want > MAX_ROUNDS:
        return None
    want = max(want, rounds + 1)
    samples = f" --samples {want * reruns.per_round}" if reruns.per_round else ""
    return f"--rounds {want}{samples}"


@dataclass(frozen=True)
class Evidence:
    """What a verdict is judged on: per-call times with the feature (on) and
    without it (off), and what the run says about them.

    `rounds`: the samples of each side by interleaved round, when the run
    says how it sampled: a "used" then needs the rounds to agree, so that a
    slow spell that caught one side's batches is not a verdict, and the
    speedup is the median of the rounds' ratios (stats.paired_ratio).
    `processes`: the process pair of each round, when they came from several.
    `what`: what one sample is ("sample", "openssl run"), for the reason of a
    side with too few. `busy`: what kept the machine busy (BUSY_MACHINE,
    BUSY_HOST, TWIN_WAITED, TWINS_WAITED_APART), when it was: a "used" then
    needs its CI above BUSY_NEEDS. `unlike`: twins that waited for a CPU
    unlike, by less than the busy machine's rule: a "used" needs
    ONE_PAIR_MARGIN more. `stretched`: why a side's samples are not the
    call's cost (WAITED): no verdict then."""

    on: Sequence[float]
    off: Sequence[float]
    rounds: tuple[Mapping[int, Sequence[float]], Mapping[int, Sequence[float]]] | None = None
    processes: Mapping[int, int] | None = None
    what: str = "sample"
    busy: tuple[Reason, ...] = ()
    unlike: Reason | None = None
    stretched: Reason | None = None
    reruns: Reruns = Reruns()
    margin: float = MARGIN
    # (rounds left out, of how many): rounds in which a twin waited for a CPU
    # more than in its others (bridge.hw.ab), said beside a paired verdict.
    left_out: tuple[int, int] | None = None
    # CPU: on, off and rounds are CPU time per call, and a "used" needs its
    # CI above 1 + `used_margin` (derived from the run, CPU_FLOOR at least),
    # not the busy machine's 2x; `margin` stays the band of a "not-used".
    basis: Basis = Basis.WALL
    used_margin: float | None = None


# The verdict a path that does not use the feature gets without numbers.
_UNTESTED: dict[type, Verdict] = {
    CpuLacks: Verdict.CPU_LACKS,
    EnvMasks: Verdict.MASKED,
    BypassesEvp: Verdict.NOT_OPENSSL,
}


def untested(why: Reason | WhyNot) -> Judgement:
    """A verdict decided without measuring: the CPU lacks the feature, the
    environment masks it, the path does not go through OpenSSL (each with
    why it does not use it, bridge.hw.whynot); or no mask can test it
    (cannot-test, with the reason)."""
    if isinstance(why, Reason):
        return Judgement(Verdict.CANNOT_TEST, reasons=(why,))
    return Judgement(_UNTESTED[type(why)], why=why)


def decide(e: Evidence) -> Judgement:
    """The verdict from the evidence (see _decide); with the rounds left
    out, when a paired verdict left some out."""
    v = dataclasses.replace(_decide(e), basis=e.basis)
    if e.left_out is None or v.speedup is None or v.statistic is not Statistic.PAIRED:
        return v
    left, total = e.left_out
    return dataclasses.replace(
        v, reasons=(*v.reasons, reason(Why.ROUNDS_LEFT_OUT, left_out=left, rounds=total))
    )


def _decide(e: Evidence) -> Judgement:
    """The verdict from the evidence. With rounds (at least MIN_CI_SAMPLES of
    them on both sides), the speedup is the median of the rounds' ratios of
    round medians, masked over unmasked (stats.paired_ratio): a two-speed
    machine moves both sides of a round alike. Without, it is low(off)/low(on)
    of the whole cells."""
    on, off = e.on, e.off
    if not on or not off:
        return untested(reason(Why.NO_MEASUREMENT))
    fewest = min(len(on), len(off))
    if fewest < stats.MIN_CI_SAMPLES:
        few = reason(Why.TOO_FEW_SAMPLES, what=e.what, have=fewest, need=stats.MIN_CI_SAMPLES)
        return Judgement(
            Verdict.INCONCLUSIVE,
            stats.low(off) / stats.low(on),
            reasons=(few,),
            rerun=Rerun(e.reruns.samples, Why.TOO_FEW_SAMPLES),
            statistic=Statistic.LOW,
        )
    paired = stats.paired_ratio(e.rounds[0], e.rounds[1], e.processes) if e.rounds else None
    more = None  # why a "used" needs more than the margin, and what to rerun
    used = e.margin if e.used_margin is None else e.used_margin
    if paired is not None:
        speedup, (lo, hi) = paired.ratio, paired.ci95
        statistic = Statistic.PAIRED
        needs = 1 + used + ONE_PAIR_MARGIN
        # One or two processes a side: the CI cannot see (or barely) what sets
        # those processes apart (their layout, the node's state); twins that
        # waited unlike differ by that too. A "used" then needs more.
        if paired.processes < FEW_PAIRS:
            why = reason(Why.FEW_PROCESS_PAIRS, pairs=paired.processes, needs=round(needs, 4))
            more = (why, Rerun(e.reruns.processes, Why.FEW_PROCESS_PAIRS))
        elif e.unlike is not None:
            more = (e.unlike, Rerun("", e.unlike.why))
        used_margin = used + (ONE_PAIR_MARGIN if more else 0.0)
    else:
        used_margin = used
        speedup, (lo, hi) = stats.low_ratio_ci(on, off)
        statistic = Statistic.LOW
    figures = _Figures(speedup, (lo, hi), statistic)
    if e.stretched is not None:
        return figures.inconclusive(e.stretched, Rerun("", Why.WAITED))
    if lo == hi and paired is None:  # (rounds that all agree exactly are evidence)
        equal = reason(Why.SAMPLES_EQUAL)
        return Judgement(
            Verdict.INCONCLUSIVE,
            speedup,
            None,
            (equal,),
            Rerun(e.reruns.samples, Why.SAMPLES_EQUAL),
            statistic=statistic,
        )
    # Paired rounds caught the same speed on both sides: a two-speed machine
    # cannot make their ratio.
    machine = None if paired is not None else two_speeds(on, off)
    if machine is not None:
        return figures.inconclusive(machine, Rerun("", Why.TWO_SPEEDS))
    return _judge(figures, e, used_margin, more)


@dataclass(frozen=True)
class _Figures:
    speedup: float
    ci95: tuple[float, float]
    statistic: Statistic
    margin: float | None = None

    def judged(self, verdict: Verdict, reasons=(), rerun: Rerun | None = None) -> Judgement:
        return Judgement(
            verdict, self.speedup, self.ci95, tuple(reasons), rerun, self.margin, self.statistic
        )

    def inconclusive(self, why: Reason, rerun: Rerun | None = None) -> Judgement:
        return self.judged(Verdict.INCONCLUSIVE, (why,), rerun)


def _judge(f: _Figures, e: Evidence, used_margin: float, more) -> Judgement:
    """`more`: (why a "used" needs used_margin, what to rerun), when it does."""
    lo, hi = f.ci95
    margin = e.margin
    busy = e.busy if e.basis is Basis.WALL else ()
    needs = BUSY_NEEDS if busy else 1 + used_margin
    f = _Figures(f.speedup, f.ci95, f.statistic, round(needs, 4))
    if busy and lo > 1 + used_margin and lo <= BUSY_NEEDS:
        return f.judged(Verdict.INCONCLUSIVE, busy, Rerun("", busy[0].why))
    if lo > 1 + used_margin:
        drift = _rounds_disagree(e.rounds)
        if drift is not None:
            return f.inconclusive(drift, Rerun("", Why.ROUNDS_DISAGREE))
        return f.judged(Verdict.USED)
    if lo > 1 + margin and more is not None:
        why, rerun = more
        return f.inconclusive(why, rerun)
    if lo >= 1 - margin and hi <= 1 + margin:
        return f.judged(Verdict.NOT_USED)
    if hi < 1 - margin:
        faster = reason(Why.MASKED_FASTER, ratio=f.speedup, lo=lo, hi=hi)
        return f.inconclusive(faster, Rerun("", Why.MASKED_FASTER))
    # On CPU time the margin a "used" needs is the run's (used_margin), not 5%.
    edge = f.margin if e.basis is Basis.CPU and f.margin else round(1 + margin, 4)
    noise = reason(Why.WITHIN_NOISE, lo=lo, hi=hi, margin=edge)
    return f.inconclusive(noise, Rerun(e.reruns.rounds, Why.WITHIN_NOISE))


def against_twin_gap(v: Judgement, gap: float, where: Reason) -> Judgement:
    """A "used" of a runtime whose twins, elsewhere in the same run, showed
    the masked run `gap` times faster (at least, by its CI), which no mask can
    cause: the two processes differ by that much for another reason (on the
    EPYC guest Python's twins differed 0.74x on SHA-512, idle), so a gain
    whose CI does not clear that is the processes', not the feature's.
    `where` is the TWIN_GAP reason that names the cell that showed it."""
    if v.verdict is not Verdict.USED or v.ci95 is None or v.ci95[0] > gap * (1 + MARGIN):
        return v
    return Judgement(
        Verdict.INCONCLUSIVE,
        v.speedup,
        v.ci95,
        (where,),
        Rerun("", Why.TWIN_GAP),
        v.margin,
        v.statistic,
        basis=v.basis,
    )


def _rounds_disagree(
    rounds: tuple[Mapping[int, Sequence[float]], Mapping[int, Sequence[float]]] | None,
) -> Reason | None:
    """None when the rounds agree the masked side is slower (or there are no
    rounds to ask); otherwise how many of them do."""
    if rounds is None:
        return None
    on, off = rounds
    paired = sorted(i for i in set(on) & set(off) if on[i] and off[i])
    k = len(paired)
    if k < 2:
        return None
    slower = sum(statistics.median(off[i]) > statistics.median(on[i]) for i in paired)
    if slower >= stats.agreeing_rounds_needed(k):
        return None
    return reason(Why.ROUNDS_DISAGREE, agree=slower, rounds=k)


# A side sits at the other side's slow speed when its low statistic is within
# this of the other side's upper cluster (and nearer it than the lower one).
TWO_SPEED_TOLERANCE = 0.08


def two_speeds(on: Sequence[float], off: Sequence[float]) -> Reason | None:
    """None unless the machine ran at two speeds and the two runs caught
    different ones: one side's samples form two clusters (bridge.stats.clusters)
    and the other side's low statistic sits at the slower of them, so the
    ratio is the machine's two speeds, not the feature. `side` is the one
    with two clusters (on: the machine as found; off: masked)."""
    for side, split, other in (("on", on, off), ("off", off, on)):
        found = stats.clusters(split)
        if found is None or stats.clusters(other) is not None:
            continue
        level = stats.low(other)
        near_high = abs(math.log(level / found.high.level))
        if near_high < math.log1p(TWO_SPEED_TOLERANCE) and near_high < abs(
            math.log(level / found.low.level)
        ):
            return reason(
                Why.TWO_SPEEDS,
                side=side,
                low_share=round(found.low.share, 4),
                low_ns=round(found.low.level, 1),
                high_ns=round(found.high.level, 1),
            )
    return None
