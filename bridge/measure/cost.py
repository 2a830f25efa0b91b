"""What a plan costs before anything starts: its wall time, the worker
processes alive at once, and its memory. Pure: the machine's CPU count is
passed in. `bridge run --replay` shows it and asks before a costly replay
(bridge.cli.run); every run is refused when its memory is beyond what the
machine has (bridge.cli.plans.check_memory).

The estimate follows the session's plan (bridge.measure.session, levelrun):
every cell's warm-ups, samples and requests, every openssl run, the level
cells of --concurrency, --method tc and --until-stable's bound. It cannot
know how fast a call is: a call slower than one sample stretches its
samples, which the estimate takes into account only where the scenario says
so (PBKDF2 iterations, a whole file). For those it is a floor.

The figures below were measured on this project's machine (2-vCPU AMD EPYC
guest, Debian 12, OTP 25.2.3, Python 3.11, OpenSSL 3.0.19), 2026-12-03,
while other users kept its load average at 4 to 18. Each run was watched
through /proc: the worker processes alive at once (beam.smp, Python workers,
openssl), and the sum of their Pss (what is shared counted once among its
sharers) with bridge's own. The estimate is for the machine as it is when
quiet; a load of 15 on 2 CPUs doubles a short run.

| run (default settings)        | estimate | measured (load)           | workers | MiB est./seen |
|-------------------------------|----------|---------------------------|---------|---------------|
| hmac-sha1 (A/B, 3 processes)  |   20.3 s | 23.0 s (4.5), 34.7 s (15) | 13 / 13 | 299 / 268     |
| hmac-sha1 --quick             |    6.6 s | 6.2 s (5), 14.3 s (17)    |  5 / 5  | 151 / 111     |
| hmac-sha1 sha256              |  173.4 s | 173.7 s (8), 193.5 s (14) | 13 / 13 | 300 / 274     |
| hmac-sha1 --concurrency 1,2,4 |  134.3 s | 132.6 s (8), 138.0 s (11) | 20 / 20 | 339 / 300     |
| sha256 --hw on --processes 1  |   77.8 s | 88.3 s (12)               |  3 / 3  | 114 / 74      |
| rsa-2048 --quick              |   12.6 s | 43.9 s (13), 56.2 s (15)  |  5 / 5  | 151 / 114     |

WAVE_S and BATCH_S were fitted to the first three rows at the lower load,
so only the last three check the model. rsa-2048 shows its limit: Python's
key load takes 0.12-0.14 s a call, 25 times a sample; from its own report
(a replay, which knows each call's time) the estimate is 31.5 s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from bridge.analysis import concurrency
from bridge.catalog import calls, scenario
from bridge.catalog.vocab import RuntimeKind
from bridge.hw import ab
from bridge.measure.plan import Plan
from bridge.settings import Settings

MIB = 1 << 20

# -- what one process costs --------------------------------------------------
# Measured from /proc/PID/smaps_rollup during a default hmac-sha1 run: what
# each process has of its own (Private_Dirty), and what processes of one
# program share (the rest of its Rss: code, libcrypto), counted once. The
# machine loses the sum of the first and one of the second, which is less
# than the processes' Rss added up (`ps` shows that: 256 Python workers
# showed 4.9 GB there).

# An Erlang node (beam.smp) with crypto loaded and bridge's worker running:
# Rss 41-42 MB, 22.4-23.7 MB of it its own. Schedulers add to its own: Rss
# 43.7 MB with +S 1, 44.0 MB with 2, 51.7 MB with 16, 75.2 MB with 64,
# 173 MB with 256 and 574 MB with 1024, so 0.52 MB each. Its erl_child_setup
# adds 1.5 MB (0.2 MB of its own), counted in the node's share.
BEAM_OWN = 24 * MIB
BEAM_SHARED = 19 * MIB
BEAM_PER_SCHEDULER = 530 * 1024
# A Python worker (python -m bridge.pyworker.worker), hashlib and hmac used:
# Rss 28.2 MB, 12.1 MB its own (a spare that has not measured yet: 19.1 and
# 9.4). The same for each extra process of a --concurrency level. A level's
# threads cost about 20 KB each (256 threads: 4.9 MB): not counted.
PYTHON_OWN = 12 * MIB
PYTHON_SHARED = 16 * MIB
# openssl speed: Rss 6.2 MB, 1.0 MB its own; s_server and s_time of a TLS
# cell: Rss 8.4 MB each.
OPENSSL_OWN = 1 * MIB
OPENSSL_SHARED = 5 * MIB + MIB // 4
TLS_PEER_OWN = 3 * MIB
# bridge itself, before the messages it generates: Rss 32-38 MB, 21 MB its own.
DRIVER = 36 * MIB

# Copies of the largest message alive at once besides the inputs the driver
# keeps for each cell: its frame being built (payload, then header + payload)
# in the driver, and in each worker process the frame read and the binary
# decoded from it. An Erlang node may keep both until it collects garbage.
DRIVER_COPIES = 2
WORKER_COPIES = 2

# -- what the time goes to -----------------------------------------------------

# Booting the line-up, per wave (runtimes as found; then the masked twins,
# unless a past run's mask let them boot beside their partners): a node
# boots in 0.3-1.5 s here, then each runtime is readied in turn and the
# mask checked with three short openssl processes. What --quick runs
# (6.2 s) beyond its planned 3.1 s of warm-ups, samples and openssl runs.
WAVE_S = 1.5
# One request (a batch of one cell's round): the round trip, the loop's
# calibration in the first round, the CPU pinning. 14-18 ms a batch here
# under load (the two-scenario run: 600 batches, 12.9 s beyond its plan).
BATCH_S = 0.016
# A level batch also waits for its N workers to start on one clock, and the
# first calibrates its batch size: about one 50-ms window more.
LEVEL_BATCH_S = 0.06
# Starting one more Python worker process for a --concurrency level.
PROCESS_START_S = 0.3
# An openssl process beyond its -seconds: 10-30 ms to start, and the parse.
OPENSSL_START_S = 0.05
# timer:tc around one call (--method tc): 1 us here, and an HMAC or a short
# digest at least 2 us more. A floor: 10^7 HMAC-SHA1 calls took 109 s here
# under load (11 us a call).
TIMER_TC_S = 1e-6
TC_CALL_S = 3e-6
# Calls slower than a sample, where the scenario says how slow: PBKDF2-
# HMAC-SHA256 took 0.89 us an iteration here under load (0.3-0.5 us on an
# idle CPU with SHA extensions): 0.3 us is the floor. A whole file is read
# and hashed at no more than 2 GB/s.
ITERATION_S = 0.3e-6
FILE_BYTES_PER_S = 2e9


class Part(str, Enum):
    """What a share of the time, of the processes or of the memory goes to."""

    STARTUP = "startup"  # booting the line-up
    WARMUPS = "warmups"  # warmup_ms, rewarm_ms, each round of each cell
    SAMPLES = "samples"  # samples × sample_ms
    SLOW_CALLS = "slow_calls"  # samples whose one call takes longer than sample_ms
    REQUESTS = "requests"  # one request per cell per round
    OPENSSL_RUNS = "openssl_runs"  # openssl_runs × openssl_seconds
    LEVELS = "levels"  # the level cells of --concurrency
    TC = "tc"  # --method tc: tc_calls per Erlang cell
    UNTIL_STABLE = "until_stable"  # extra rounds, up to max_seconds
    ERLANG_NODES = "erlang_nodes"  # runtimes × masked twins × processes
    PYTHON_WORKERS = "python_workers"
    LEVEL_PROCESSES = "level_processes"  # Python processes of the largest level
    OPENSSL = "openssl"  # openssl speed (-multi N: N + 1), or a TLS cell's two
    MESSAGES = "messages"  # the generated inputs: kept, and copies in flight
    DRIVER = "driver"  # bridge itself


@dataclass(frozen=True)
class Share:
    """One part of a cost: how much, and over how many cells (or runtimes)
    it comes, so that the words can say what drives it."""

    part: Part
    amount: float  # seconds, processes or bytes
    cells: int = 0


@dataclass(frozen=True)
class Cost:
    """A plan's estimate. `seconds` is the plan's own time; with
    --until-stable, `seconds_max` is its bound (max_seconds, when that is
    longer), else the same. `workers`: worker processes alive at once, at most."""

    seconds: float
    seconds_max: float
    workers: int
    memory: int  # bytes, at most
    time: tuple[Share, ...]  # largest first
    processes: tuple[Share, ...]
    memory_parts: tuple[Share, ...]
    largest_message: int = 0


class Over(str, Enum):
    """Which figure of a Cost is past a Budget."""

    TIME = "time"
    WORKERS = "workers"
    MEMORY = "memory"


@dataclass(frozen=True)
class Budget:
    seconds: float
    workers: int
    memory: int

    def over(self, cost: Cost) -> tuple[Over, ...]:
        found = []
        if cost.seconds_max > self.seconds:
            found.append(Over.TIME)
        if cost.workers > self.workers:
            found.append(Over.WORKERS)
        if cost.memory > self.memory:
            found.append(Over.MEMORY)
        return tuple(found)


# A replay past this asks first (or takes --yes). The default hmac-sha1
# (the A/B, three processes per runtime) takes 20-25 s, 13 workers and
# 0.3 GB here (0.46 GB in the processes' Rss added up); a default
# two-scenario run (hmac-sha1 sha256: a six-size sweep with openssl) about
# 3 min, the same workers; hmac-sha1 with --concurrency 1,2,4 about 2 min,
# 20 workers, 0.3 GB (the module's table). Ten minutes, 32 workers and
# 2 GiB leave room for a few default scenarios, a sweep or levels up to 8,
# and catch what is ten times beyond them.
BUDGET = Budget(seconds=600, workers=32, memory=2 << 30)
# The line: past an hour or 64 workers a replay always asks. The
# budget sits below it (tests/unit/measure/test_cost.py checks it).
ALWAYS_ASK = Budget(seconds=3600, workers=64, memory=2 << 30)


# -- the estimate ------------------------------------------------------------


@dataclass(frozen=True)
class _Runtime:
    """The runtimes of one kind in a plan: how many as found, whether each
    has a masked twin, and how many states its cells are measured in."""

    kind: str
    count: int  # as found: one per --erl/--python/--openssl, and per --libcrypto
    twins: bool
    states: int  # 2 for an A/B, else 1


# Seconds one call took, where a run has measured it, by (scenario, runtime
# kind, call id, size): a replay's report says how long its calls took there.
CallTimes = Mapping[tuple[str, str, str, int], float]


def estimate(plan: Plan, cpus: int, known: CallTimes | None = None) -> Cost:
    """The time, processes and memory of `plan` on a machine of `cpus` CPUs
    (the Erlang node's default schedulers). `known`: calls' measured times,
    which can only lengthen a sample (a report cannot make its replay look
    cheaper than its settings)."""
    s = plan.settings
    runtimes = list(_runtimes(plan))
    time = _time(plan, runtimes, known or {})
    measured = sum(x.amount for x in time)
    extra = 0.0
    if s.until_stable is not None and s.max_seconds > measured:
        extra = s.max_seconds - measured
    if extra:
        time.append(Share(Part.UNTIL_STABLE, extra))
    processes, memory, largest = _processes_and_memory(plan, runtimes, cpus)
    return Cost(
        seconds=measured,
        seconds_max=measured + extra,
        workers=sum(int(x.amount) for x in processes),
        memory=sum(int(x.amount) for x in memory),
        time=_largest_first(time),
        processes=_largest_first(processes),
        memory_parts=_largest_first(memory),
        largest_message=largest,
    )


def _largest_first(shares: list[Share]) -> tuple[Share, ...]:
    return tuple(sorted((x for x in shares if x.amount > 0), key=lambda x: -x.amount))


def _runtimes(plan: Plan) -> Iterator[_Runtime]:
    per_kind = {
        RuntimeKind.ERLANG: len(plan.erl),
        RuntimeKind.PYTHON: len(plan.python),
        RuntimeKind.OPENSSL: len(plan.openssl),
    }
    for kind in plan.kinds:
        if not any(kind in _kinds(sc) for sc in plan.scenarios):
            continue
        twins = plan.hw.masks and bool(ab.kinds_features(plan.scenarios, kind))
        states = len(plan.hw.states) if twins else 1
        count = per_kind[kind] * (1 + len(plan.libcrypto))
        yield _Runtime(kind, count, twins, states)


def _kinds(sc: scenario.Scenario) -> set[str]:
    return {*sc.calls, *(uc.kind for uc in sc.user_calls)}


def _call_ids(sc: scenario.Scenario, kind: str) -> list[calls.Call]:
    """The calls a runtime of `kind` makes in `sc`: the table's, then the
    user's (which run whenever a plan has them: bridge.measure.startup)."""
    found = [calls.CALLS[kind, cid] for cid in sc.calls.get(kind, ()) if (kind, cid) in calls.CALLS]
    return found + [_user_call(sc, n) for n, uc in enumerate(sc.user_calls, 1) if uc.kind == kind]


def _user_call(sc: scenario.Scenario, n: int) -> calls.Call:
    from bridge.catalog import usercode

    return usercode.as_call(sc, n)


def _processes_used(s: Settings, kind: str) -> int:
    return 1 if kind == RuntimeKind.OPENSSL else s.processes_used


def _time(plan: Plan, runtimes: list[_Runtime], known: CallTimes) -> list[Share]:
    s = plan.settings
    waves = 2 if any(r.twins for r in runtimes) else 1
    shares = [Share(Part.STARTUP, WAVE_S * waves, sum(r.count for r in runtimes))]
    warm = samples = slow = requests = runs = levels = tc = 0.0
    cells = slow_cells = runs_cells = level_cells = tc_cells = 0
    for r in runtimes:
        for sc in plan.scenarios:
            for call in _call_ids(sc, r.kind):
                for size in sc.sizes:
                    n = r.count * r.states
                    one = max(_call_s(sc, size), known.get((sc.name, r.kind, call.id, size), 0.0))
                    if r.kind == RuntimeKind.OPENSSL or sc.long_calls:
                        runs += n * s.openssl_runs * _run_s(s, r.kind, sc.long_calls, one)
                        runs_cells += n
                    else:
                        w, rq = _worker_cell(s, _processes_used(s, r.kind))
                        warm, requests, cells = warm + n * w, requests + n * rq, cells + n
                        samples += n * s.samples * s.sample_ms / 1000
                        if one > s.sample_ms / 1000:
                            slow += n * s.samples * (one - s.sample_ms / 1000)
                            slow_cells += n
                    if r.kind == RuntimeKind.ERLANG and s.tc_calls and call.timer_tc:
                        tc += n * s.tc_calls * max(TC_CALL_S, TIMER_TC_S + one)
                        tc_cells += n
                    if sc.concurrency and concurrency.runs_levels(sc) and call.op != "user_shell":
                        modes = len(concurrency.MODES.get(r.kind, ()))
                        k = r.count * modes * len(sc.concurrency)
                        levels += k * _level_cell(s.for_levels(), one, r.kind)
                        level_cells += k
    extra_processes = sum(
        r.count * (_largest_level(plan) - 1) for r in runtimes if r.kind == RuntimeKind.PYTHON
    )
    levels += extra_processes * PROCESS_START_S
    shares += [
        Share(Part.WARMUPS, warm, cells),
        Share(Part.SAMPLES, samples, cells),
        Share(Part.SLOW_CALLS, slow, slow_cells),
        Share(Part.REQUESTS, requests, cells),
        Share(Part.OPENSSL_RUNS, runs, runs_cells),
        Share(Part.LEVELS, levels, level_cells),
        Share(Part.TC, tc, tc_cells),
    ]
    return shares


def _call_s(sc: scenario.Scenario, size: int) -> float:
    """A floor of one call's time, where the scenario says it (else 0)."""
    if isinstance(sc, scenario.KdfScenario):
        return size * ITERATION_S
    if sc.long_calls:
        return size / FILE_BYTES_PER_S
    return 0.0


def _run_s(s: Settings, kind: str, long_calls: bool, call_s: float) -> float:
    """One sample that is a process (openssl) or a whole long call."""
    if kind == RuntimeKind.OPENSSL:
        return (call_s if long_calls else max(s.openssl_seconds, call_s)) + OPENSSL_START_S
    return max(s.sample_ms / 1000, call_s) + BATCH_S


def _worker_cell(s: Settings, processes: int) -> tuple[float, float]:
    """(warm-ups, requests) of one worker cell over every round, in seconds:
    the first round warms up for warmup_ms, each other process's first batch
    for fresh_warmup_ms, the rest for rewarm_ms (session.Cell)."""
    rounds = min(s.rounds, s.samples)  # a round without samples asks nothing
    fresh = max(0, min(processes, rounds) - 1)
    warm_ms = s.warmup_ms + fresh * s.fresh_warmup_ms + (rounds - 1 - fresh) * s.rewarm_ms
    return warm_ms / 1000, rounds * BATCH_S


def _level_cell(s: Settings, call_s: float, kind: str) -> float:
    """One level cell over every round (levelrun.LevelCell.plan)."""
    if kind == RuntimeKind.OPENSSL:
        return s.openssl_runs * (s.openssl_seconds + OPENSSL_START_S)
    rounds = min(s.rounds, s.samples)
    window = max(concurrency.window_ms(s.sample_ms) / 1000, call_s)
    warm = s.warmup_ms + (rounds - 1) * s.rewarm_ms
    return s.samples * window + warm / 1000 + rounds * LEVEL_BATCH_S


def _largest_level(plan: Plan) -> int:
    return max(
        (n for sc in plan.scenarios if concurrency.runs_levels(sc) for n in sc.concurrency),
        default=1,
    )


def _processes_and_memory(
    plan: Plan, runtimes: list[_Runtime], cpus: int
) -> tuple[list[Share], list[Share], int]:
    """The worker processes alive at once and the memory, by part; and the
    largest message. What processes of one program share is counted once."""
    s = plan.settings
    schedulers = s.schedulers or max(cpus, 1)
    top = _largest_level(plan)
    count = {Part.ERLANG_NODES: 0, Part.PYTHON_WORKERS: 0, Part.LEVEL_PROCESSES: 0}
    for r in runtimes:
        # A twin is one more runtime; with --hw off the runtime as found
        # still starts (for its provenance) as one process, without cells,
        # and only its twin gets the spare processes (session.launch_spares).
        p = _processes_used(s, r.kind)
        if r.twins and not plan.hw.as_found:
            started = r.count * (1 + p)
        else:
            started = r.count * (2 if r.twins else 1) * p
        if r.kind == RuntimeKind.ERLANG:
            count[Part.ERLANG_NODES] += started
        elif r.kind == RuntimeKind.PYTHON:
            count[Part.PYTHON_WORKERS] += started
            if _levels_run(plan, RuntimeKind.PYTHON):
                count[Part.LEVEL_PROCESSES] += r.count * (top - 1)
    if plan.nodes is not None:  # bridge's own relay node
        count[Part.ERLANG_NODES] += 1
    nodes, python, extra = count.values()
    beam = BEAM_OWN + BEAM_PER_SCHEDULER * schedulers
    processes = [Share(part, n) for part, n in count.items()]
    memory = [
        Share(Part.DRIVER, DRIVER),
        Share(Part.ERLANG_NODES, _once(nodes, BEAM_SHARED, beam), nodes),
        Share(Part.PYTHON_WORKERS, _once(python + extra, PYTHON_SHARED, 0) + python * PYTHON_OWN),
        Share(Part.LEVEL_PROCESSES, extra * PYTHON_OWN, extra),
    ]
    if any(r.kind == RuntimeKind.OPENSSL for r in runtimes):
        # One at a time: openssl speed, speed -multi N (N + 1), or a TLS cell's two.
        multi = top + 1 if top > 1 and _levels_run(plan, RuntimeKind.OPENSSL) else 1
        tls = any(isinstance(sc, scenario.TlsScenario) for sc in plan.scenarios)
        n = max(multi, 2 if tls else 1)
        own = TLS_PEER_OWN if tls and n == 2 else OPENSSL_OWN
        processes.append(Share(Part.OPENSSL, n))
        memory.append(Share(Part.OPENSSL, _once(n, OPENSSL_SHARED, own)))
    kept, largest = _messages(plan, runtimes)
    in_flight = largest * (DRIVER_COPIES + WORKER_COPIES * (nodes + python + extra))
    memory.append(Share(Part.MESSAGES, kept + in_flight))
    return processes, memory, largest


def _once(n: int, shared: int, own: int) -> int:
    """n processes of one program: each its own, and what they share once."""
    return shared + n * own if n else 0


def _levels_run(plan: Plan, kind: str) -> bool:
    return any(
        sc.concurrency and concurrency.runs_levels(sc) and kind in _kinds(sc)
        for sc in plan.scenarios
    )


def _messages(plan: Plan, runtimes: list[_Runtime]) -> tuple[int, int]:
    """(bytes of messages the driver keeps, the largest message). Each cell
    (a call at a size on a runtime, twice with --hw both) holds its own
    inputs for the whole run; a file digest streams from a file instead
    (bridge.cli.plans.check_disk)."""
    kept = largest = 0
    for r in runtimes:
        for sc in plan.scenarios:
            if isinstance(sc, (scenario.FileDigestScenario, scenario.KdfScenario)):
                continue  # a file, or iteration counts: no message of that size
            n = len(_call_ids(sc, r.kind))
            if n and sc.sizes:
                kept += n * r.count * r.states * sum(sc.sizes)
                largest = max(largest, *sc.sizes)
    return kept, largest
