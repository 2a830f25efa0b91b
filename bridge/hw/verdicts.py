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

Every verdict but used, inconclusive and cannot-test carries why the path
does not use the feature, as a code with its parameters (Verdict.why,
bridge.hw.whynot); an inconclusive at a size too small for a gain that a
larger size shows carries that size (whynot.too_small).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bridge import stats
from bridge.report.whynot import WhyNot

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
# With fewer than FEW_PAIRS process pairs (--quick and --processes 1: one;
# --rounds 6: two), a "used" needs this much more: the rounds' CI cannot see,
# or sees only from two draws, a gap between the processes themselves (the
# ChaCha20 control, two pairs of Erlang nodes, came out "used" once at 5%; run
# again on the idle 2-vCPU guest, 1.06x, CI 1.03-1.12).
ONE_PAIR_MARGIN = 0.05
FEW_PAIRS = 3
# Below this, a "used" speedup is mostly fixed per-call cost diluting the gain.
SMALL_SPEEDUP = 1.5

# What a scenario's sizes count (scenario.Scenario.size_unit): the one
# source of a size's wording, used by every sentence, title and column.
BYTES = "bytes"  # message, file or output sizes: MB/s means something
ITERATIONS = "iterations"  # PBKDF2: the size axis is the iteration count
PER_CALL = "per call"  # fixed-size operations (sign, verify, key agreement)


@dataclass(frozen=True)
class Verdict:
    verdict: str
    speedup: float | None = None
    ci95: tuple[float, float] | None = None
    reason: str = ""  # the part of the explanation that needs no names
    # The masked run was faster, its CI clear of the margin: what no mask can
    # cause, so a measure of how much the two twin processes differ.
    masked_faster: bool = False
    statistic: str = ""  # what the speedup is a ratio of (stats.PAIRED_STATISTIC, LOW_STATISTIC)
    note: str = ""  # what the explanation adds at its end (rounds left out)
    why: WhyNot | None = None  # why the path does not use it (bridge.hw.whynot)


def decide(
    on: Sequence[float] | None,
    off: Sequence[float] | None,
    *,
    cpu_has: bool | None = True,
    already_masked: bool = False,
    via_openssl: bool = True,
    cannot_mask: str = "",
    margin: float = MARGIN,
    evidence: tuple[str, str] = ("sample", "--samples 6"),
    rounds: tuple[Mapping[int, Sequence[float]], Mapping[int, Sequence[float]]] | None = None,
    busy: str = "",
    stretched: str = "",
    processes: Mapping[int, int] | None = None,
    unlike: str = "",
) -> Verdict:
    """The verdict from per-call times with the feature (on) and without (off).
    `evidence` names a sample and the option that gives more of them, for the
    sentence of a cell with too few: ("openssl run", "--openssl-runs 3").
    `rounds`, the samples of each side by interleaved round (when the run
    says how it sampled): a "used" needs the rounds to agree, round by round,
    so that a slow spell that caught one side's batches is not a verdict.
    `busy`: what kept the machine busy, in words ("other processes used 1.6
    of 2 CPUs"), when it was: a "used" then needs BUSY_MARGIN. `stretched`:
    why a side's samples are not the call's cost (they waited for a CPU),
    when they are not: no verdict then. `processes`: the process pair of
    each round (round index -> pair), when the rounds came from several.
    `unlike`: how unlike the paired twins waited for a CPU, in words, when
    that could move their ratio by itself: a "used" then needs
    ONE_PAIR_MARGIN more.

    With rounds (at least MIN_CI_SAMPLES of them on both sides), the speedup
    is the median of the rounds' ratios of round medians, masked over
    unmasked (stats.paired_ratio): a two-speed machine moves both sides of a
    round alike. Without, it is low(off)/low(on) of the whole cells."""
    if cpu_has is False:
        return Verdict("cpu-lacks", reason="the CPU does not offer it")
    if already_masked:
        return Verdict("masked", reason="the environment bridge was started in already masks it")
    if not via_openssl:
        return Verdict(
            "not-openssl", reason="this path does not use OpenSSL, so the mask cannot reach it"
        )
    if cannot_mask:
        return Verdict("cannot-test", reason=cannot_mask)
    if cpu_has is None:
        return Verdict("cannot-test", reason="bridge does not know this feature on this CPU")
    if not on or not off:
        return Verdict("cannot-test", reason="one side of the comparison has no measurement")
    what, rerun = evidence
    missing = stats.missing_evidence(len(on), len(off), what, rerun)
    if missing:
        return Verdict("inconclusive", stats.low(off) / stats.low(on), None, missing)
    paired = stats.paired_ratio(rounds[0], rounds[1], processes) if rounds else None
    more = None  # (why a "used" needs more than the margin, what to rerun), when it does
    if paired is not None:
        speedup, (lo, hi) = paired.ratio, paired.ci95
        statistic = stats.PAIRED_STATISTIC
        # One or two processes a side: the CI cannot see (or barely) what sets
        # those processes apart (their layout, the node's state); twins that
        # waited unlike differ by that too. A "used" then needs more.
        if paired.processes < FEW_PAIRS:
            more = (
                f"with fewer than {FEW_PAIRS} processes a side the CI cannot see how much two"
                " processes of one call differ",
                f"rerun without --quick ({FEW_PAIRS} processes a side)",
            )
        elif unlike:
            more = (f"{unlike}, which can move the ratio by itself", "rerun on a quieter machine")
        used_margin = margin + (ONE_PAIR_MARGIN if more else 0.0)
    else:
        used_margin = margin
        speedup, (lo, hi) = stats.low_ratio_ci(on, off)
        statistic = stats.LOW_STATISTIC
    if stretched:
        return Verdict("inconclusive", speedup, (lo, hi), stretched, statistic=statistic)
    if lo == hi and paired is None:  # (rounds that all agree exactly are evidence)
        return Verdict(
            "inconclusive",
            speedup,
            None,
            f"the samples of a side are all equal, so there is no CI; rerun with {rerun}",
            statistic=statistic,
        )
    # Paired rounds caught the same speed on both sides: a two-speed machine
    # cannot make their ratio.
    machine = "" if paired is not None else two_speeds(on, off)
    if machine:
        return Verdict("inconclusive", speedup, (lo, hi), machine, statistic=statistic)
    v = _judge(speedup, lo, hi, margin, used_margin, busy, rounds, more)
    return dataclasses.replace(v, statistic=statistic)


def _judge(speedup, lo, hi, margin, used_margin, busy, rounds, more=None) -> Verdict:
    """`more`: (why a "used" needs used_margin, what to rerun), when it does."""
    if busy and lo > 1 + used_margin and lo <= 1 + BUSY_MARGIN:
        return Verdict(
            "inconclusive",
            speedup,
            (lo, hi),
            f"{speedup:.2f}× slower masked (CI {lo:.2f}–{hi:.2f}), but {busy}: two processes"
            f" of one call differ that much on a busy machine; a verdict needs"
            f" {1 + BUSY_MARGIN:.0f}× there, or a quieter machine",
        )
    if lo > 1 + used_margin:
        drift = _rounds_disagree(rounds)
        if drift:
            return Verdict("inconclusive", speedup, (lo, hi), drift)
        return Verdict("used", speedup, (lo, hi), "masking it makes the call slower")
    if lo > 1 + margin and more is not None:
        why, advice = more
        return Verdict(
            "inconclusive",
            speedup,
            (lo, hi),
            f"{speedup:.2f}× slower masked (CI {lo:.2f}–{hi:.2f}), but {why}; a verdict needs"
            f" its CI above {1 + used_margin:.2f}× there; {advice}",
        )
    if lo >= 1 - margin and hi <= 1 + margin:
        return Verdict("not-used", speedup, (lo, hi), "masking it changes nothing measurable")
    if hi < 1 - margin:
        return Verdict(
            "inconclusive",
            speedup,
            (lo, hi),
            f"the masked run was faster ({speedup:.2f}×, CI {lo:.2f}–{hi:.2f}), which no mask"
            " can cause: the machine's speed changed between the two runs",
            masked_faster=True,
        )
    return Verdict(
        "inconclusive",
        speedup,
        (lo, hi),
        f"the difference is within the noise (CI {lo:.2f}–{hi:.2f}×); rerun with more samples",
    )


def against_twin_gap(v: Verdict, gap: float, where: str) -> Verdict:
    """A "used" of a runtime whose twins, elsewhere in the same run, showed
    the masked run `gap` times faster (at least, by its CI), which no mask can
    cause: the two processes differ by that much for another reason (on the
    EPYC guest Python's twins differed 0.74x on SHA-512, idle), so a gain
    whose CI does not clear that is the processes', not the feature's."""
    if v.verdict != "used" or v.ci95 is None or v.ci95[0] > gap * (1 + MARGIN):
        return v
    return Verdict(
        "inconclusive",
        v.speedup,
        v.ci95,
        f"{v.speedup:.2f}× slower masked (CI {v.ci95[0]:.2f}–{v.ci95[1]:.2f}), but the same"
        f" twins ran the masked side at least {gap:.2f}× faster ({where}), which no mask can"
        " cause: the two processes differ by that much for another reason",
    )


def _rounds_disagree(
    rounds: tuple[Mapping[int, Sequence[float]], Mapping[int, Sequence[float]]] | None,
) -> str:
    """ "" when the rounds agree the masked side is slower (or there are no
    rounds to ask); otherwise why the CI is not enough."""
    if rounds is None:
        return ""
    on, off = rounds
    paired = sorted(i for i in set(on) & set(off) if on[i] and off[i])
    k = len(paired)
    if k < 2:
        return ""
    slower = sum(statistics.median(off[i]) > statistics.median(on[i]) for i in paired)
    if slower >= stats.agreeing_rounds_needed(k):
        return ""
    return (
        f"the CI clears the margin but only {slower} of {k} interleaved rounds have the"
        " masked run slower: the machine's speed moved during the run; rerun"
    )


# A side sits at the other side's slow speed when its low statistic is within
# this of the other side's upper cluster (and nearer it than the lower one).
TWO_SPEED_TOLERANCE = 0.08


def two_speeds(on: Sequence[float], off: Sequence[float]) -> str:
    """ "" unless the machine ran at two speeds and the two runs caught
    different ones: one side's samples form two clusters (bridge.stats.clusters)
    and the other side's low statistic sits at the slower of them, so the
    ratio is the machine's two speeds, not the feature."""
    for name, split, other_name, other in (
        ("hw on", on, "masked", off),
        ("hw off", off, "unmasked", on),
    ):
        found = stats.clusters(split)
        if found is None or stats.clusters(other) is not None:
            continue
        level = stats.low(other)
        near_high = abs(math.log(level / found.high.level))
        if near_high < math.log1p(TWO_SPEED_TOLERANCE) and near_high < abs(
            math.log(level / found.low.level)
        ):
            return (
                f"the machine ran at two speeds ({name}: {found.sentence()}) and the"
                f" {other_name} run's samples sit at the slow one: the ratio is the"
                " machine's, not the feature's; rerun on a quieter machine"
            )
    return ""


def explain(
    v: Verdict,
    *,
    who: str,
    feature: str,
    size: int,
    best: tuple[int, float] | None = None,
    larger_example: str = "",
    unit: str = BYTES,
) -> str:
    """One line a mailing-list reader understands. `best` is (size, speedup)
    of the largest speedup this call showed in the same scenario;
    `larger_example` a command whose larger messages would show the gain;
    `unit` what the sizes count (bytes, or iterations for PBKDF2)."""
    text = _explain(v, who, feature, size, best, larger_example, unit)
    return f"{text} ({v.note})" if v.note else text


def _explain(v, who, feature, size, best, larger_example, unit) -> str:
    def size_text(n: int) -> str:
        return _size_text(n, unit)

    where = at(size, unit)
    if v.verdict == "used":
        text = f"{who} uses {feature}: {v.speedup:.2f}× slower without it {where}"
        # Fixed cost diluting the gain is a matter of message size: bytes only.
        if v.speedup is not None and v.speedup < SMALL_SPEEDUP and unit == BYTES:
            text += (
                "; at this size most of a call is fixed cost (set-up, call overhead),"
                " which the feature does not speed up"
            )
            if best and best[0] != size and best[1] >= SMALL_SPEEDUP:
                text += f"; the gain shows at {size_text(best[0])}: {best[1]:.2f}×"
            elif (not best or best[0] == size) and larger_example:
                text += f"; it shows on larger messages (e.g. {larger_example})"
            elif not best or best[0] == size:
                text += "; it shows on larger messages"
        return text
    if v.verdict == "not-used" and v.speedup is None:
        return f"{who} does not use {feature} {where}"
    if v.verdict == "not-used":
        noise = ", within noise" if within_margin(v.ci95) else ""
        return f"{who} does not use {feature}: {v.speedup:.2f}× {where}{noise}"
    if v.verdict == "inconclusive":
        return f"{who}, {feature}: inconclusive {where}: {v.reason}"
    return f"{who}, {feature}: {v.verdict}: {v.reason}"


def within_margin(ci95: tuple[float, float] | None, margin: float = MARGIN) -> bool:
    """Does a speedup's CI lie inside the noise margin? A not-used decided
    by the library (bridge.hw.whynot) keeps figures that need not."""
    return ci95 is not None and ci95[0] >= 1 - margin and ci95[1] <= 1 + margin


def size_text(n: int, unit: str = BYTES) -> str:
    """16 bytes, 1 KiB, 64 MiB: the unit a reader would say. Sizes that are
    not bytes are counted: 1,024 iterations. A fixed-size operation's size is
    the message it signs: a 64-byte message."""
    if unit == PER_CALL:
        return f"{n}-byte message"
    if unit != BYTES:
        return f"{n:,} {unit}"
    for name, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {name}"
    return f"{n} bytes"


def short(n: int, unit: str = BYTES) -> str:
    """The form lists of sizes use: 16 B, 1 KiB; 1,024 iterations."""
    text = size_text(n, unit)
    return text.replace(" bytes", " B") if unit == BYTES else text


def at(n: int, unit: str = BYTES, several: bool = False, brief: bool = False) -> str:
    """Where a cell is, for a sentence: "at 16 KiB", "at 1,024 iterations"
    ("at 16 B" `brief`, for lists); a fixed-size operation is timed "per
    call" (naming its message only when the scenario ran several: "per
    call, 64-byte message")."""
    if unit == PER_CALL:
        return f"per call, {size_text(n, unit)}" if several else "per call"
    return f"at {short(n, unit) if brief else size_text(n, unit)}"


_size_text = size_text
