"""Hardware verdicts: does a runtime's call use a CPU feature? Pure functions.

The evidence is an experiment, not a CPU model: the same call timed with the
machine as found (hw "on") and with the feature masked from process start
(hw "off"). speedup = median(off) / median(on), with a bootstrap 95% CI.

  used          the masked run is slower, and the CI clears the noise margin
  not-used      the CI lies inside the noise margin although the CPU has it
  inconclusive  neither: the CI straddles the margin (noisy), or the masked
                run was faster
  cpu-lacks     the CPU does not offer the feature
  masked        the environment bridge started in already switches it off
  not-openssl   the path does not go through OpenSSL (e.g. Python's built-in
                hash code), so the mask cannot reach it
  cannot-test   no mask can be expressed for this library, or it did not
                take effect
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bridge import stats

# Differences under 5% are treated as noise. On this project's shared VM a
# masked run that does not use the feature at all (sha512 with SHA masked) came
# out up to ~4% slower by chance; real effects are 1.2x and more even where
# fixed cost dominates (HMAC-SHA1 at 1000 bytes).
MARGIN = 0.05
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


def decide(
    on: Sequence[float] | None,
    off: Sequence[float] | None,
    *,
    cpu_has: bool | None = True,
    already_masked: bool = False,
    via_openssl: bool = True,
    cannot_mask: str = "",
    margin: float = MARGIN,
) -> Verdict:
    """The verdict from per-call times with the feature (on) and without (off)."""
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
    speedup, (lo, hi) = stats.relative_ci(on, off)
    if lo > 1 + margin:
        return Verdict("used", speedup, (lo, hi), "masking it makes the call slower")
    if lo >= 1 - margin and hi <= 1 + margin:
        return Verdict("not-used", speedup, (lo, hi), "masking it changes nothing measurable")
    if hi < 1 - margin:
        return Verdict(
            "inconclusive", speedup, (lo, hi), "the masked run was faster, which points at noise"
        )
    return Verdict(
        "inconclusive",
        speedup,
        (lo, hi),
        f"the difference is within the noise (CI {lo:.2f}–{hi:.2f}×); rerun with more samples",
    )


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
    if v.verdict == "not-used":
        return f"{who} does not use {feature}: {v.speedup:.2f}× {where}, within noise"
    if v.verdict == "inconclusive":
        return f"{who}, {feature}: inconclusive {where}: {v.reason}"
    return f"{who}, {feature}: {v.verdict}: {v.reason}"


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
