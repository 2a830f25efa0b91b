"""How long and how often to measure. Vocabulary (used in code, the docs and
reports alike; docs/guide/numbers.md):

- warm-up: calls run first and discarded (NIF loading, caches, fetches);
- loop: back-to-back calls timed as one; `loops` is calibrated so that one
  sample lasts about `sample_ms`, far above the clock's resolution;
- sample: one timed loop; each cell gets `samples` of them;
- round: the samples of a cell are taken in `rounds` batches, interleaved with
  the other cells (every worker stays up for the whole run). A slow spell of a
  shared machine then hits every runtime alike and shows in the spread,
  instead of shifting one runtime's whole number. Round 1 warms up for
  `warmup_ms` and calibrates `loops`; later rounds reuse `loops` and warm up
  for `rewarm_ms`;
- openssl runs: `openssl speed` gives one count per process, so a cell gets
  `openssl_runs` processes of `openssl_seconds` each, one sample per run,
  spread over the rounds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Settings:
    # Chosen on a noisy 2-vCPU VM whose slow spells last 0.5-1 s: many short
    # samples in many rounds keep the median in the undisturbed cluster
    # (bench/overhead.py; docs/findings/overhead.md).
    # Time budget (docs/findings/overhead.md, "How long a run takes"): a
    # default hmac-sha1 A/B is 6 worker cells of warm-up + 100 x 5 ms + 49
    # re-warm-ups, and 2 openssl cells of 5 one-second runs. The samples stay
    # (the CI needs them); the warm-ups are what was cut. 100 ms before the
    # first round is tens of thousands of calls of a hash or MAC, a hundred of
    # a 1-ms call (calibration, doubling the loop up to half a sample, takes a
    # few ms of it); 10 ms before each later round re-runs enough calls to
    # bring caches and branch predictors back after another runtime's turn.
    warmup_ms: int = 100
    rewarm_ms: int = 10
    sample_ms: int = 5
    samples: int = 100
    # Rounds of two samples: a twin's samples run right beside its partner's
    # (ABBA), where the host's speed has had little time to change, and every
    # round is one pair of the paired ratios a verdict and a difference are
    # judged on. Quiet default hmac-sha1 A/Bs of Erlang and Python on the
    # 2-vCPU EPYC guest, five of each alternated (docs/findings/busy-machine.md):
    # 20 rounds of five samples gave 13 of 15 verdicts used, verdict CIs 0.20
    # wide at the median, in 7.4 s a run; 50 rounds of two, 15 of 15, 0.08
    # wide, 10.5 s; 100 rounds of one (5-ms re-warm-ups), 14 of 15, 0.06 wide,
    # 12.0 s (a round costs about 6 ms beyond its re-warm-up and samples).
    rounds: int = 50
    openssl_seconds: int = 1
    openssl_runs: int = 5
    quick: bool = False
    # --until-stable: after the planned rounds, keep adding rounds to cells
    # whose 95% CI half-width exceeds this fraction of the median, until
    # max_seconds have passed in all.
    until_stable: float | None = None
    max_seconds: int = 300
    # A cell whose 95% CI half-width is wider than this fraction of its
    # median is marked unstable in the report (and warned about), whether or
    # not --until-stable asked for more rounds.
    ci_target: float | None = 0.02
    # Extra seconds a worker may take beyond the planned time before it is
    # declared hung and killed (--request-timeout).
    timeout_slack_s: float = 30.0
    # --method tc: also run the erlang-questions thread's timer:tc harness
    # (tc_calls calls, whole microseconds) on every Erlang cell.
    tc_calls: int | None = None
    # --schedulers N: the Erlang node runs with +S N:N (None: ERTS's default,
    # one scheduler per CPU).
    schedulers: int | None = None
    # --processes N: each worker runtime (an Erlang node, a Python worker) runs
    # as N processes that take a cell's rounds in turn, so that its CI covers
    # what differs from one process to the next (docs/guide/noise.md). A
    # process's first batch of a cell, after the first process's, warms up
    # for fresh_warmup_ms (the loop count is known by then).
    processes: int = 3
    # --timeout: the longest one sample of a user call may take, in seconds
    # (a sh: process; in a worker, each timed run of its loop, its compile
    # and the call for its output). A sample aims at sample_ms (5 ms); a
    # call so slow that one takes a minute would need 100 minutes for a
    # cell's 100 samples, so past 60 s it is hung or not what bridge times,
    # and a hang then costs a minute instead of the ten that sh: had.
    user_timeout_s: float = 60.0
    # --memory-limit: the data limit (RLIMIT_DATA) of each worker process, of
    # each sh: process, and of each process either starts, in MiB. bridge's
    # largest message (1 GiB, --sizes 1G) takes an Erlang node to 3.1 GiB of
    # data (its input, the frame it came in and a copy); 4 GiB lets that
    # run, and ends a runaway (py:bytearray(1 << 34)) at once, before it
    # takes a shared machine's memory.
    memory_limit_mib: int = 4096

    def samples_in_round(self, round_index: int) -> int:
        """Samples of round `round_index` (0-based): `samples` spread evenly;
        a round past the planned ones (--until-stable) takes round_share's."""
        return round_share(self.samples, self.rounds, round_index)

    def openssl_runs_in_round(self, round_index: int) -> int:
        return round_share(self.openssl_runs, self.rounds, round_index)

    def bench_timeout(self, warmup_ms: int, samples: int) -> float:
        """Seconds to wait for one bench reply before declaring the worker hung:
        the planned time, doubled, plus calibration and a generous margin.
        (A call slower than a whole sample stretches this; 30 s covers it.)"""
        planned = (warmup_ms + self.sample_ms * (samples + 4)) / 1000
        return 2 * planned + self.timeout_slack_s

    def user_bench_timeout(self, warmup_ms: int, samples: int) -> float:
        """The same for a user call, whose every step may take up to
        user_timeout_s: the samples, the compile and output call, and the
        calibration's runs (the worker watches each step; this is the
        backstop should the worker itself stop answering)."""
        return self.bench_timeout(warmup_ms, samples) + (samples + 3) * self.user_timeout_s

    @property
    def memory_bytes(self) -> int:
        return self.memory_limit_mib << 20

    @property
    def processes_used(self) -> int:
        """The processes a worker runtime runs as: `processes`, but at least
        three rounds each, so that each process's samples span the run (a
        short run, --rounds 4 or --quick, stays in one process: two
        processes of two rounds each give a CI too crude to judge by)."""
        return max(1, min(self.processes, self.rounds // 3))

    def for_levels(self) -> Settings:
        """The settings a level cell (--concurrency) runs by: these, but in
        at most LEVEL_ROUNDS rounds (QUICK_LEVEL_ROUNDS under --quick),
        spread over the run's (level_round). Rounds of one or two samples
        are for the paired cells; a level batch costs about 60 ms of its own
        (its workers start on one clock), so 50 of them would add 1.8 s a
        level cell to the 1.2 s of 20. Its windows (`samples`) stay."""
        cap = QUICK_LEVEL_ROUNDS if self.quick else LEVEL_ROUNDS
        if self.rounds <= cap:
            return self
        return replace(self, rounds=cap)

    @property
    def fresh_warmup_ms(self) -> int:
        """20 ms by default: a fifth of the first warm-up, at least twice the re-warm-up."""
        return max(2 * self.rewarm_ms, self.warmup_ms // 5)

    def to_json(self) -> dict:
        d = asdict(self)
        if self.schedulers is None:  # as reports had it before the option
            del d["schedulers"]
        return d


def level_round(r: int, rounds: int, level_rounds: int) -> int | None:
    """The level cells' round that round `r` (of `rounds`) ends, or None:
    their `level_rounds` spread evenly, each at the end of its share."""
    j = (r + 1) * level_rounds // rounds
    return j - 1 if j > r * level_rounds // rounds else None


def round_share(total: int, rounds: int, index: int) -> int:
    """What round `index` (0-based) of a cell takes of its `total` samples
    or openssl runs: its share, spread evenly over the planned `rounds`; a
    round past them (--until-stable's) the first round's share, and at
    least one (5 openssl runs over 50 rounds leave the first round none,
    and an extra round of none added nothing: --until-stable never added an
    openssl run to a default run)."""
    if index < rounds:
        return spread(total, rounds, index)
    return max(1, spread(total, rounds, 0))


def spread(total: int, parts: int, index: int) -> int:
    """The index-th of `parts` near-equal shares of `total`, spread evenly: 5
    runs over 10 rounds go to every other round, not to the first five."""
    return (index + 1) * total // parts - index * total // parts


# The rounds a level cell takes at most (Settings.for_levels): as many as a
# run had before its rounds became one or two samples, 20 (12 under --quick).
LEVEL_ROUNDS = 20
QUICK_LEVEL_ROUNDS = 12
DEFAULT = Settings()
# --quick: a rough answer in about 5 s with the A/B. openssl speed cannot
# count for less than a second, and an A/B needs two processes, so its cells
# get one run each (a figure without a CI: "1 sample, no CI" in the table); two
# runs would cost 2 s more. The workers keep 24 samples, one a round, after a
# 30-ms warm-up (calibration takes a few ms of it; over 10,000 calls of a
# hash or MAC remain), and a cell is marked unstable only past ±5%.
QUICK = Settings(
    warmup_ms=30,
    # Half the default re-warm-up: twice the rounds cost no more re-warming
    # than 12 rounds of 10 ms did, and a twin's sample runs nearer its
    # partner's (below).
    rewarm_ms=5,
    sample_ms=5,
    samples=24,
    # 24 rounds of one sample: a busy machine's verdict is judged on the
    # rounds' paired CPU-time ratios (bridge.hw.ab), and a twin's one sample
    # then runs right beside its partner's (ABBA), where the host's speed has
    # had less time to change. Beside two busy loops on the 2-vCPU EPYC guest
    # (load 2-15; docs/findings/busy-machine.md), HMAC-SHA1 at 1000 B `used`
    # in 10 runs of each: 12 rounds of two samples (10-ms re-warm-ups) gave
    # Erlang's crypto:macN 6, Python's hmac.digest 2, hmac.new+copy 5; 24
    # rounds of one, 10-ms re-warm-ups, 6, 5 and 7; 5-ms ones 10, 8 and 10
    # (hmac.digest's CI low ends 1.08-1.26 against the 1.15x margin), with no
    # `used` among 138 SHA-512 and ChaCha20 control cells (CI low ends up to
    # 1.03). Its time: hmac-sha1 --quick 0-7% longer (paired, at load 8-13).
    rounds=24,
    openssl_runs=1,
    quick=True,
    ci_target=0.05,
    # One process: a second would cost the 0.5 s of its starts and warm-ups
    # (an A/B of Erlang and Python) that --quick's 5 s do not have; its CI
    # then covers one process only.
    processes=1,
)


@dataclass(frozen=True)
class Bound:
    """The range of one setting, for the command line (click reads it) and
    for --replay (bridge.cli.replay checks a report's settings against it), so
    that the two cannot drift apart."""

    option: str  # the `bridge run` option that sets it ("" where none does)
    low: float
    high: float
    integer: bool = True
    optional: bool = False  # may be null (not set)

    def describe(self) -> str:
        low, high = (f"{x:g}" if not self.integer else str(int(x)) for x in (self.low, self.high))
        return f"{'an integer' if self.integer else 'a number'} in {low}..{high}"


# Keyed by the report's name of each setting (Settings' fields, and seed).
BOUNDS: dict[str, Bound] = {
    "samples": Bound("--samples", 1, 10_000),
    "sample_ms": Bound("--sample-ms", 1, 10_000),
    "warmup_ms": Bound("--warmup-ms", 0, 60_000),
    "rewarm_ms": Bound("", 0, 60_000),
    "rounds": Bound("--rounds", 1, 1000),
    "openssl_runs": Bound("--openssl-runs", 1, 100),
    "openssl_seconds": Bound("", 1, 60),
    "until_stable": Bound("--until-stable", 0.001, 0.5, integer=False, optional=True),
    "ci_target": Bound("", 0.001, 0.5, integer=False, optional=True),
    "max_seconds": Bound("--max-time", 1, 86_400),
    "seed": Bound("--seed", 0, 2**63 - 1),
    "timeout_slack_s": Bound("--request-timeout", 1, 3600, integer=False),
    "tc_calls": Bound("--tc-calls", 3, 100_000_000, optional=True),
    "schedulers": Bound("--schedulers", 1, 1024, optional=True),
    "processes": Bound("--processes", 1, 16),
    "user_timeout_s": Bound("--timeout", 0.1, 86_400, integer=False),
    "memory_limit_mib": Bound("--memory-limit", 64, 1 << 20),
}


# What a replay takes from a report (bridge.cli.replay), lower than what the
# command line accepts (BOUNDS): a report is a file from someone else, and
# these settings make a run long or large. Each cap is several times the
# default (bridge.measure.cost.BUDGET then asks about what they add up to);
# a report beyond one is refused, naming the setting and its cap, and the
# user who wants it types the option. (Settings not named here are held to
# BOUNDS alone.)
REPORT_CAPS: dict[str, float] = {
    "samples": 2000,  # 20x the default 100
    "rounds": 200,  # 4x the default 50
    "sample_ms": 1000,  # 200x the default 5 ms
    "warmup_ms": 10_000,  # 100x the default 100 ms
    "rewarm_ms": 1000,  # 100x the default 10 ms
    "openssl_runs": 20,  # 4x the default 5
    "openssl_seconds": 10,  # bridge itself always uses 1
    "max_seconds": 3600,  # --until-stable's budget: an hour
    "timeout_slack_s": 300,  # how long a hung worker is waited for
    "tc_calls": 1_000_000,  # the erlang-questions thread's own count (the default)
    "processes": 8,
    "schedulers": 64,
    # User code's fences (bridge.system.fence): a report may widen them only
    # so far, 10x the default per sample and 4x the memory; an expression in a
    # report runs only after the user says yes to it, and still within these.
    "user_timeout_s": 600,
    "memory_limit_mib": 16_384,
}
# samples x rounds: every round is one request per cell, each with its
# share of the samples; 20x the default 100 x 50.
REPORT_SAMPLES_X_ROUNDS = 100_000
