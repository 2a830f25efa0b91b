"""Level cells in a session (--concurrency): which to measure, one batch of
windows per round interleaved with the other cells, and the failure policy.

A level cell is one call of a scenario at one size on one runtime, made by N
workers at once in one mode (bridge.analysis.concurrency). Each round it gets its
share of windows (openssl: of runs), after the runtime's ordinary cells, so a
slow spell of a shared machine falls on every level alike, then its races
(the slowest of N). Level 1's first round sets the race (the calls of its
median window) and calibrates the batch; every level of the call takes
both from it, so that a race is the same calls at every level.

Failure policy, per cell: a call the runtime cannot run at a level is
`unsupported`; a worker that dies, hangs or crashes at level N (an Erlang
process, a Python worker process, an openssl -multi child) fails that cell
only, and the run goes on; the runtime itself dying (its main worker, the
node) is the session's policy: it is stopped and its other cells end there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bridge.analysis import concurrency
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, WorkerError
from bridge.report import schema
from bridge.report.levels import Concurrency, LevelRaw, LevelResult, Machine
from bridge.runtimes import pinning
from bridge.runtimes.base import Job, LevelPlan, Live
from bridge.settings import Settings
from bridge.system import topology
from bridge.view import words

# The Erlang probe first watches the idle node this long (first round only),
# so that lateness under load has a baseline beside it.
IDLE_PROBE_MS = 30


@dataclass
class LevelCell:
    live: Live
    job: Job
    level: int
    mode: concurrency.Mode
    rounds: int = 0
    raw: LevelRaw = field(default_factory=LevelRaw)  # the rounds so far, merged
    output_ok: bool | None = None
    unsupported: str = ""
    failed: str = ""
    # Level 1 of the same call, size and mode (None: this is level 1).
    base: LevelCell | None = None

    @property
    def active(self) -> bool:
        return self.live.alive and not self.unsupported and not self.failed

    @property
    def size(self) -> int:
        """The cell's real size, as a one-call cell's: the message's, the
        bytes asked for (random) or the iterations (kdf)."""
        return self.job.inputs.size

    @property
    def where(self) -> str:
        """ "at 16 B", "at 1,024 iterations", "per call" (bridge.view.words.at)."""
        return words.at(self.size, self.job.scenario.size_unit, brief=True)

    def describe(self) -> str:
        return f"{self.job.call.id} {self.where}, {self.level} {self.mode.noun} ({self.mode.name})"

    @property
    def batch(self) -> int | None:
        """Level 1's batch where it has one, else this cell's own; None: the
        runtime calibrates it (level 1's first round)."""
        return (self.base.raw.batch if self.base else 0) or self.raw.batch or None

    def plan(self, settings: Settings, round_index: int) -> LevelPlan:
        first = self.rounds == 0
        timed_by_itself = self.live.driver.samples_are_processes  # openssl: no races
        if timed_by_itself:
            count = settings.openssl_runs_in_round(round_index)
        else:
            count = settings.samples_in_round(round_index)
        return LevelPlan(
            level=self.level,
            mode=self.mode.name,
            windows=count,
            window_ms=concurrency.window_ms(settings.sample_ms),
            warmup_ms=settings.warmup_ms if first else settings.rewarm_ms,
            batch=self.batch,
            idle_probe_ms=IDLE_PROBE_MS if first and self.live.kind == RuntimeKind.ERLANG else 0,
            same_output=not self.job.call.randomised,
            races=0 if timed_by_itself else concurrency.RACES_PER_ROUND,
            race_calls=(self.base.raw if self.base else self.raw).race_calls,
        )

    def add(self, b: LevelRaw) -> None:
        self.rounds += 1
        if not self.raw.output:
            sc, call, data = self.job.scenario, self.job.call, self.job.inputs
            self.output_ok = concurrency.output_ok(sc, call, data, b.output)
        self.raw = self.raw.merged(b)

    def record(self) -> LevelResult | None:
        sc, call, info = self.job.scenario, self.job.call, self.live.info
        common = dict(
            scenario=sc.name,
            runtime=info.id,
            call=self.mode.label(call.label(sc, self.raw.api), self.level),
            call_id=call.id,
            mode=self.mode.name,
            semantics=self.mode.describe(call.semantics_for(sc)),
            algorithm=sc.algorithm,
            size=self.size,
            hw=info.hw,
            level=self.level,
        )
        if self.unsupported:
            return LevelResult(**common, status="unsupported", reason=self.unsupported)
        if self.failed:
            return LevelResult(**common, status="failed", reason=self.failed)
        if not self.raw.windows:
            return None
        return LevelResult(**common, raw=self.raw, output_ok=self.output_ok)


def cells(live: Live, jobs: Iterator[Job]) -> Iterator[LevelCell]:
    """The level cells of a runtime: every job of a scenario that has levels,
    at each level, in each of the runtime kind's modes."""
    for job in jobs:
        sc = job.scenario
        if not sc.concurrency or not concurrency.runs_levels(sc):
            continue
        ones: dict[str, LevelCell] = {}
        for n in sc.concurrency:  # level 1 first (bridge.catalog.scenario)
            for m in concurrency.modes_for(live.kind, sc):
                cell = LevelCell(live, job, n, m, base=ones.get(m.name))
                if n == 1:
                    ones[m.name] = cell
                yield cell


def run_round(
    todo: Sequence[LevelCell],
    settings: Settings,
    round_index: int,
    label: str,
    *,
    note: Callable[[str], None],
    record: Callable[[schema.RunError], None],
    died: Callable[[Live, WorkerError], None],
) -> None:
    """One batch for each active level cell; failures as the module says:
    an error is recorded and the round goes on; a worker that died goes to
    `died`, which stops it. The session passes its own three."""
    for i, cell in enumerate(todo, 1):
        if not cell.active:
            continue
        plan = cell.plan(settings, round_index)
        if plan.windows == 0:
            continue
        job = cell.job
        note(
            f"{label} [{cell.live.id}] {job.scenario.name} {job.call.id} {cell.where}"
            f" ×{cell.level} {cell.mode.name} (level cell {i}/{len(todo)})"
        )
        try:
            batch = cell.live.driver.bench_level(job, plan)
        except OperationError as exc:
            if exc.kind == "unsupported":
                cell.unsupported = exc.message
                continue
            cell.failed = exc.message
            message = f"{cell.live.id}: {cell.describe()} failed: {exc.message}"
            record(schema.RunError(cell.live.id, "level", message))
            continue
        except WorkerError as exc:
            died(cell.live, exc)
            continue
        first_output = not cell.raw.output
        cell.add(batch)
        if first_output and cell.output_ok is False:
            message = (
                f"{cell.job.scenario.name} {cell.where}: {cell.live.id} {cell.describe()}"
                " computed different bytes from the reference"
            )
            record(schema.RunError(cell.live.id, "mismatch", message))


def records(cells_: list[LevelCell]) -> list[LevelResult]:
    return [r for r in (c.record() for c in cells_) if r is not None]


def block(
    wanted: Sequence[int],
    settings: Settings,
    machine: Machine | None,
    results: Iterable[LevelResult],
) -> Concurrency | None:
    """The report's concurrency block as measured: the levels, the machine
    (with the load average at the end too, and whether per-call cells ran
    pinned), each result marked oversubscribed or not. What it says (scaling,
    level 1 against the per-call cells...) is a finding
    (bridge.analysis.findings)."""
    if machine is None:
        return None
    pinned = pinning.Pinning.from_env().on
    machine = dataclasses.replace(machine, loadavg_end=topology.loadavg(), pinned=pinned)
    marked = [mark(r, concurrency.oversubscribed(r.level, machine)) for r in results]
    window = concurrency.window_ms(settings.sample_ms)
    return concurrency.block(wanted, window, settings.schedulers, machine, marked)


def mark(result: LevelResult, oversubscribed: bool) -> LevelResult:
    return dataclasses.replace(result, oversubscribed=oversubscribed)
