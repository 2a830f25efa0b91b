"""What analysis found, as data: the closed sets of verdicts, significances
and changes, and the reasons behind them as codes with their parameters.

bridge.analysis and bridge.hw decide; bridge.view.words words, once, for
every format. A reason is a `Why` and the figures its wording needs
(`PARAMS[why]` names them, and a `Reason` with other names is refused), so a
report says what it found without a sentence that could not be re-worded,
shortened for 80 columns or checked against its own CI.

Every enum is a str enum whose values are the strings reports have always
held, so older reports load unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bridge.catalog.choice import Choice as _Choice
from bridge.report.codec import Record, jf


class Verdict(_Choice):
    """A hardware verdict (bridge.hw.verdicts): does a call use a feature?"""

    USED = "used"
    NOT_USED = "not-used"
    INCONCLUSIVE = "inconclusive"
    CPU_LACKS = "cpu-lacks"
    MASKED = "masked"
    NOT_OPENSSL = "not-openssl"
    CANNOT_TEST = "cannot-test"


class Significance(_Choice):
    """A difference between two cells (bridge.analysis.versus, compare)."""

    FASTER = "faster"
    SLOWER = "slower"
    NOISE = "within noise"
    UNRESOLVED = "unresolved"  # too few rounds to tell a difference from drift
    UNKNOWN = "unknown (no samples)"  # imported numbers: as posted
    UNEQUAL_LOAD = "unequal load"  # bridge compare: the load alone can make it
    FEW = "too few samples"  # a side has fewer samples than a CI needs

    @property
    def significant(self) -> bool:
        return self in (Significance.FASTER, Significance.SLOWER)


class Statistic(_Choice):
    """What a ratio is a ratio of."""

    PAIRED = "paired"  # the median of interleaved rounds' ratios (stats.PAIRED_STATISTIC)
    LOW = "p10"  # the cells' 10th percentiles (stats.LOW_STATISTIC)
    MEDIAN = ""  # the cells' medians: reports from before either


class Change(_Choice):
    """How a cost moved between two versions (Upgrade.per_call, per_byte)."""

    MORE = "more"
    LESS = "less"
    SAME = "same"  # within noise
    UNKNOWN = "unknown"
    UNEQUAL_LOAD = "unequal load"


class Basis(_Choice):
    """What a verdict or comparison was judged on."""

    WALL = "wall"
    CPU = "cpu"


class Why(_Choice):
    """One member per reason analysis or hw can give. Its parameters are
    PARAMS[why]; bridge.view.words words each."""

    # -- a hardware verdict withheld, or what it needed ----------------------
    BUSY_MACHINE = "busy-machine"  # other processes kept the machine busy
    BUSY_HOST = "busy-host"  # the hypervisor gave CPU time to other guests
    TWIN_WAITED = "twin-waited"  # a twin waited for a CPU a share of its sample time
    TWINS_WAITED_APART = "twins-waited-apart"  # the twins waited for a CPU unlike
    FEW_PROCESS_PAIRS = "few-process-pairs"  # the CI cannot see two processes differ
    ROUNDS_DISAGREE = "rounds-disagree"  # the CI clears the margin, the rounds do not agree
    TWO_SPEEDS = "two-speeds"  # a side caught the machine at another speed
    TOO_FEW_SAMPLES = "too-few-samples"
    WITHIN_NOISE = "within-noise"
    MASKED_FASTER = "masked-faster"  # which no mask can cause
    SAMPLES_EQUAL = "samples-equal"  # no spread: no CI
    WAITED = "waited"  # a side's samples took far longer than planned
    TWIN_GAP = "twin-gap"  # the same twins differed as much elsewhere
    FIXED_COST = "fixed-cost"  # a small gain: mostly fixed per-call cost
    ROUNDS_LEFT_OUT = "rounds-left-out"  # rounds in which a twin waited, left out
    CPU_SHORT = "cpu-short"  # busy: the wall-time gain is not there in CPU time
    CPU_BASIS = "cpu-basis"  # busy: judged on CPU time per call, against a margin from the run
    LOAD_CPU = "load-cpu"  # compare: the loads differed, so judged on CPU time per call
    # Why a path does not use the feature: a not-used, masked, cpu-lacks or
    # not-openssl verdict's `why`, as the records of bridge.report.whynot
    # (their fields are the parameters).
    CPU_LACKS = "cpu-lacks"  # the CPU (or the library's vector) lacks it
    ENV_MASKS = "env-masks"  # the environment bridge started in masks it
    NO_ASM = "no-asm"  # the library was built without assembler
    NO_CAPVECTOR = "no-capvector"  # the library has no capability vector to read
    BYPASSES_EVP = "bypasses-evp"  # the call does not reach the library's assembler
    TOO_SMALL = "too-small"  # the size is too small for it to show
    NONE_FOUND = "none-found"  # none of the above: the evidence names no reason
    UNKNOWN_FEATURE = "unknown-feature"  # bridge does not know it on this CPU
    MASK_NO_EFFECT = "mask-no-effect"
    NO_MEASUREMENT = "no-measurement"  # a side has no measurement
    # Why no mask can be written (bridge.hw.hardware.CannotMask).
    LIBRARY_UNKNOWN = "library-unknown"
    FOREIGN_LIBRARY = "foreign-library"
    OLD_LEAF7 = "old-leaf7"  # OpenSSL before 1.1.1 reads only EBX of leaf 7
    ZEROES_LEAF7 = "zeroes-leaf7"  # OpenSSL 1.0.2 zeroes all of leaf 7
    ARMCAP_UNKNOWN = "armcap-unknown"
    NO_MASK_FOR_ARCH = "no-mask-for-arch"
    NO_MASK_BIT = "no-mask-bit"
    # -- a difference between two cells -------------------------------------
    FEW_ROUNDS = "few-rounds"  # fewer rounds on both sides than drift needs
    NO_SAMPLES = "no-samples"  # imported: as posted
    UNEQUAL_LOAD = "unequal-load"  # bridge compare: the busier side slower
    # -- the machine and the cells (the noise block) -------------------------
    OTHERS_BUSY = "others-busy"
    STEAL = "steal"
    GOVERNOR = "governor"
    SMT = "smt"
    CELL_TWO_SPEEDS = "cell-two-speeds"
    CELL_DRIFT = "cell-drift"
    CELL_BY_PROCESS = "cell-by-process"
    CELLS_TWO_SPEEDS = "cells-two-speeds"
    CELLS_DRIFT = "cells-drift"
    CELLS_BY_PROCESS = "cells-by-process"
    CELL_WAITED = "cell-waited"
    CELLS_WAITED = "cells-waited"
    CELL_BY_CPU = "cell-by-cpu"
    IMPLAUSIBLE_COST = "implausible-cost"
    NOISY_RUN = "noisy-run"  # what to do about a noisy run
    # -- levels of concurrency (the concurrency block) -----------------------
    OVERSUBSCRIBED = "oversubscribed"  # levels above the CPUs bridge may use
    SMT_LEVELS = "smt-levels"  # hardware threads share each core
    SCHEDULERS_OVER = "schedulers-over"  # --schedulers above the CPUs
    BUSY_START = "busy-start"  # the machine was busy as the run started
    AUTOGROUP = "autogroup"  # Linux autogroup on a busy machine
    WINDOWS_DROPPED = "windows-dropped"  # a level cell lost a tenth of its windows
    # -- a set-up that cannot be split off (bridge.analysis.decompose) -------
    OTHER_LIBRARY = "other-library"
    UNSUPPORTED = "unsupported"  # the runtime's own words, as it gave them
    NOTHING_TO_SUBTRACT = "nothing-to-subtract"
    # -- bridge env's quietness check ----------------------------------------
    QUIET_ENOUGH = "quiet-enough"
    PIN_CPU = "pin-cpu"
    UNTIL_STABLE = "until-stable"
    BUSY_MEANWHILE = "busy-meanwhile"


# A cell named in a finding: which one, and what its sizes count
# (scenario.Scenario.size_unit), for the words "at 1,024 iterations".
CELL = frozenset({"scenario", "runtime", "call_id", "size", "hw", "unit"})

PARAMS: dict[Why, frozenset[str]] = {
    Why.BUSY_MACHINE: frozenset({"others_cpus", "cpus", "needs"}),
    Why.BUSY_HOST: frozenset({"steal", "needs"}),
    Why.TWIN_WAITED: frozenset({"share", "needs"}),
    Why.TWINS_WAITED_APART: frozenset({"points", "needs"}),
    Why.FEW_PROCESS_PAIRS: frozenset({"pairs", "needs"}),
    Why.ROUNDS_DISAGREE: frozenset({"agree", "rounds"}),
    Why.TWO_SPEEDS: frozenset({"side", "low_share", "low_ns", "high_ns"}),
    Why.TOO_FEW_SAMPLES: frozenset({"what", "have", "need"}),
    Why.WITHIN_NOISE: frozenset({"lo", "hi", "margin"}),
    Why.MASKED_FASTER: frozenset({"ratio", "lo", "hi"}),
    Why.SAMPLES_EQUAL: frozenset(),
    Why.WAITED: frozenset({"side", "stretch", "sample_ms"}),
    Why.CPU_SHORT: frozenset({"cpu", "cpu_lo", "cpu_hi", "needs"}),
    # aa: the largest ratio of the unmasked cell's processes against each
    # other by CPU time (null: one process); floor: the least margin.
    Why.CPU_BASIS: frozenset({"aa", "floor", "needs"}),
    Why.LOAD_CPU: frozenset({"busier"}),  # as UNEQUAL_LOAD's
    Why.TWIN_GAP: frozenset({"gap", "scenario", "call_id", "size", "unit"}),
    Why.FIXED_COST: frozenset({"speedup", "best_size", "best_speedup", "example"}),
    Why.ROUNDS_LEFT_OUT: frozenset({"left_out", "rounds"}),
    Why.CPU_LACKS: frozenset({"feature", "seen_by"}),
    Why.ENV_MASKS: frozenset({"variable", "value"}),
    Why.NO_ASM: frozenset({"library", "version", "evidence"}),
    Why.NO_CAPVECTOR: frozenset({"library", "version", "evidence"}),
    Why.BYPASSES_EVP: frozenset({"api"}),
    Why.TOO_SMALL: frozenset({"size", "shows_at", "speedup"}),
    Why.NONE_FOUND: frozenset({"largest"}),
    Why.UNKNOWN_FEATURE: frozenset(),
    Why.MASK_NO_EFFECT: frozenset(),
    Why.NO_MEASUREMENT: frozenset(),
    Why.LIBRARY_UNKNOWN: frozenset(),
    Why.FOREIGN_LIBRARY: frozenset({"library"}),
    Why.OLD_LEAF7: frozenset({"version", "features"}),
    Why.ZEROES_LEAF7: frozenset(),
    Why.ARMCAP_UNKNOWN: frozenset(),
    Why.NO_MASK_FOR_ARCH: frozenset({"arch"}),
    Why.NO_MASK_BIT: frozenset({"variable", "features"}),
    Why.FEW_ROUNDS: frozenset({"rounds", "need"}),
    Why.NO_SAMPLES: frozenset(),
    Why.UNEQUAL_LOAD: frozenset({"busier"}),
    Why.OTHERS_BUSY: frozenset({"others_cpus", "cpus", "load", "busy_count", "shares"}),
    Why.STEAL: frozenset({"steal"}),
    Why.GOVERNOR: frozenset({"governor"}),
    Why.SMT: frozenset({"siblings"}),
    Why.CELL_TWO_SPEEDS: CELL | {"low_share", "low_ns", "high_ns", "d"},
    Why.CELL_DRIFT: CELL | {"shift", "z"},
    Why.CELL_BY_PROCESS: CELL | {"spread", "processes", "share"},
    Why.CELLS_TWO_SPEEDS: frozenset(
        {"cells", "calls", "gap_lo", "gap_hi", "fast_lo", "fast_hi", "drifting", "z_lo", "z_hi"}
    ),
    Why.CELLS_DRIFT: frozenset({"cells", "calls", "z_lo", "z_hi"}),
    Why.CELLS_BY_PROCESS: frozenset({"cells", "calls"}),
    Why.CELL_WAITED: CELL | {"share"},
    Why.CELLS_WAITED: frozenset({"runtime", "cells", "lo", "hi"}),
    Why.CELL_BY_CPU: CELL | {"cpus"},
    Why.IMPLAUSIBLE_COST: CELL | {"per_unit", "ratio", "b"},
    Why.NOISY_RUN: frozenset(),
    Why.OVERSUBSCRIBED: frozenset({"levels", "cpus"}),
    Why.SMT_LEVELS: frozenset({"siblings", "cores"}),
    Why.SCHEDULERS_OVER: frozenset({"schedulers", "cpus"}),
    Why.BUSY_START: frozenset({"load", "cpus"}),
    Why.AUTOGROUP: frozenset(),
    Why.WINDOWS_DROPPED: frozenset(
        {"runtime", "call_id", "mode", "size", "level", "dropped", "windows"}
    ),
    Why.OTHER_LIBRARY: frozenset({"runtime", "theirs", "ours"}),
    Why.UNSUPPORTED: frozenset({"reason"}),
    Why.NOTHING_TO_SUBTRACT: frozenset(),
    Why.QUIET_ENOUGH: frozenset(),
    Why.PIN_CPU: frozenset({"cpu"}),
    Why.UNTIL_STABLE: frozenset(),
    Why.BUSY_MEANWHILE: frozenset({"busiest"}),
}


def _frozen(value: Any) -> Any:
    """A parameter as a record keeps it: lists (as JSON reads them) as tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


@dataclass(frozen=True)
class Reason(Record):
    """One reason: its code and the figures its wording needs, written flat:
    {"why": "busy-machine", "others_cpus": 1.6, "cpus": 2, "needs": 2.0}.
    Parameters are JSON scalars (null included) and lists of them."""

    why: Why
    params: Mapping[str, Any] = jf(flat=True, default_factory=dict)

    json_order: ClassVar[tuple[str, ...]] = ("why",)

    def __post_init__(self) -> None:
        want = PARAMS[self.why]
        if set(self.params) != want:
            raise ValueError(
                f"reason {self.why.value}: parameters {sorted(self.params)},"
                f" expected {sorted(want)}"
            )
        object.__setattr__(self, "params", {k: _frozen(v) for k, v in self.params.items()})

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def __hash__(self) -> int:
        return hash((self.why, tuple(sorted(self.params.items()))))


def reason(why: Why, **params: Any) -> Reason:
    """A Reason from keywords: reason(Why.FEW_ROUNDS, rounds=2, need=3)."""
    return Reason(why, params)


@dataclass(frozen=True)
class Rerun(Record):
    """What to do: the smallest rerun that would settle a finding. `option`
    is what to add or take away ("--rounds 40", "without --quick"); "" means
    the same command on a quieter machine."""

    option: str
    why: Why


# For the records that hold reasons (bridge.report.schema): written only
# when there are some, so older reports re-serialise as they were.
def reasons_field() -> Any:
    return jf(omit=lambda record, value: not value, default=())
