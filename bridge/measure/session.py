"""The session: start runtimes, measure every cell in interleaved rounds, and
stop every runtime on any exit. Nothing here prints; progress goes through a
callback.

Interleaving: all runtimes stay up for the whole run, and each cell (one call
of one scenario at one size on one runtime) gets its samples in `rounds`
batches, in turn with the other cells of its scenario. A slow spell of a
shared machine then lands on every runtime alike and shows in the spread,
instead of silently shifting one runtime's whole number. Within a round the
cells compared with each other run side by side, in an order that turns
from round to round (`compared_together`), so that each comparison is judged
on pairs of batches taken moments apart.

Scenario by scenario: a run of several scenarios measures the first one's
cells (their rounds, --method tc, --until-stable's extra rounds), tells the
caller it is done (`measure(done=...)`), then the next. Every verdict and
comparison is between cells of one scenario, so nothing is lost by it, and
the caller can show each scenario's answer while the next one runs.

Failure policy: a runtime that cannot start is *skipped* (with the reason);
a runtime that dies or hangs is recorded in `errors`, stopped, and the others
carry on; a call that this OTP/OpenSSL lacks becomes an `unsupported` result.
Ctrl-C/SIGTERM stop the run (the caller records it). In every case the samples
already taken stay in the outcome.

Processes: a worker runtime (an Erlang node, a Python worker) runs as
`Settings.processes` processes (at least three rounds each), started from the
same spec once the line-up is up (launched before the first round, which is
mostly warm-ups, and waited for before the second), and a cell's rounds go to
them in turn: round r to process r mod N. A process carries state that moves
all of its samples together (memory layout, hash seed, the CPU it settles on),
which the spread inside one process cannot show; each sample's process is
recorded (`procs`), and the cell's CI resamples processes, then samples
(bridge.stats). A process's first batch of a cell warms up again
(Settings.fresh_warmup_ms).

Starting is in three steps, so that runtimes boot side by side: launch
(spawn the process), ready (wait for it, give it its id), commit (add it to
the run). The line-up (bridge.measure.startup) launches a batch, readies it, and
commits every runtime in the order it was asked for, so a report is the same
whichever booted first. Every launched runtime is stopped when the session
ends, whatever happened. The session knows runtimes only through the narrow
interface of bridge.runtimes.base.Runtime, so the fast tests drive it with a
fake.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from bridge import stats
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, RuntimeUnavailable, WorkerError
from bridge.measure import levelrun
from bridge.measure.eta import CellNote, Eta, Step, duration, status
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.report.levels import LevelResult
from bridge.runtimes.base import Batch, BatchPlan, Job, Live, Runtime, RuntimeSpec
from bridge.settings import Settings, level_round
from bridge.system import signals
from bridge.view import words

Progress = Callable[[str], None]


@dataclass
class Starting:
    """A runtime between launch and commit: ready once `live` is set, or
    failed with a reason to skip it or an error."""

    spec: RuntimeSpec
    driver: Runtime
    live: Live | None = None
    skipped: schema.Skipped | None = None
    error: schema.RunError | None = None
    # A launch or start that raised has stopped what it began (the contract
    # of Runtime.start): the session does not stop it again.
    gave_up: bool = False

    @property
    def failed(self) -> bool:
        return self.skipped is not None or self.error is not None


@dataclass
class Cell:
    """One call of one scenario at one size on one runtime, filled round by round."""

    live: Live
    job: Job
    api: str = ""
    output: bytes = b""
    samples: list[int] = field(default_factory=list)
    loops: list[int] = field(default_factory=list)
    procs: list[int] = field(default_factory=list)  # the process of each sample
    unsupported: str = ""
    failed: bool = False
    batches: int = 0  # rounds measured so far: the CPU the runtime is pinned to rotates with it
    # Per sample, parallel to `samples` (bridge.runtimes.base.Batch); dropped
    # for the whole cell when one batch lacked them.
    probed: dict[str, list[int]] | None = field(default_factory=dict)
    turns: int = 0  # batches asked of it so far: the next goes to process turns mod N
    # The processes it will have once its runtime's spares are up (for the ETA).
    planned_processes: int = 0

    @property
    def key(self) -> schema.CellKey:
        return schema.CellKey(
            self.job.scenario.name, self.live.id, self.job.call.id, self.size, self.live.info.hw
        )

    @property
    def size(self) -> int:
        return self.job.inputs.size

    @property
    def active(self) -> bool:
        return self.live.alive and not self.unsupported and not self.failed

    @property
    def process(self) -> int:
        """The process that takes the cell's next batch."""
        return self.turns % len(self.live.processes)

    def _warmup_ms(self, settings: Settings, turn: int) -> int:
        if turn == 0:
            return settings.warmup_ms
        processes = self.planned_processes or len(self.live.processes)
        return settings.fresh_warmup_ms if turn < processes else settings.rewarm_ms

    def plan(self, settings: Settings, round_index: int) -> BatchPlan:
        first = not self.loops
        fresh = self.process not in self.procs
        # One call of an openssl process or of a whole-file digest takes a
        # second or so: those cells get the few samples of openssl_runs.
        few = self.live.driver.samples_are_processes or self.job.scenario.long_calls
        count = (
            settings.openssl_runs_in_round(round_index)
            if few
            else settings.samples_in_round(round_index)
        )
        return BatchPlan(
            samples=count,
            warmup_ms=settings.warmup_ms
            if first
            else (settings.fresh_warmup_ms if fresh else settings.rewarm_ms),
            loops=None if first else self.loops[-1],
            round=self.batches,
        )

    def planned_s(self, settings: Settings, round_index: int) -> float:
        """What round `round_index` is planned to take on this cell, for the
        ETA: warm-up and samples, or openssl runs (a whole-file digest is
        guessed at a second a sample; the ETA corrects for it)."""
        if self.live.driver.samples_are_processes or self.job.scenario.long_calls:
            return settings.openssl_runs_in_round(round_index) * settings.openssl_seconds
        warm = self._warmup_ms(settings, round_index)
        return (warm + settings.samples_in_round(round_index) * settings.sample_ms) / 1000

    def add(self, batch: Batch, process: int = 0) -> None:
        if self.samples and batch.output != self.output and not self.job.call.randomised:
            raise WorkerError(
                f"{self.live.id}: {self.job.call.id} gave different outputs in different rounds",
                runtime=self.live.id,
            )
        self.api, self.output = batch.api, batch.output
        had = len(self.samples)
        self.probed = schema.merge_probed(self.probed, batch.probed(), had, len(batch.samples))
        self.samples += batch.samples
        self.loops += batch.loops
        self.batches += 1
        self.procs += [process] * len(batch.samples)

    def per_op_ns(self) -> list[float]:
        values = [s / n for s, n in zip(self.samples, self.loops, strict=True)]
        return stats.Samples(values, self.procs) if len(set(self.procs)) > 1 else values

    def halfwidth(self) -> float | None:
        """The 95% CI half-width relative to the median, once there are samples."""
        if not self.samples:
            return None
        return stats.summarize(self.per_op_ns()).ci_halfwidth_rel

    def result(self) -> schema.Result | None:
        sc, call = self.job.scenario, self.job.call
        common = dict(
            scenario=sc.name,
            runtime=self.live.id,
            call_id=call.id,
            semantics=call.semantics_for(sc),
            algorithm=sc.algorithm,
            size=self.size,
            hw=self.live.info.hw,
        )
        if self.unsupported:
            return schema.Result(
                **common,
                call=call.label(sc, ""),
                api="",
                samples=(),
                loops=0,
                output_hex="",
                status="unsupported",
                reason=self.unsupported,
            )
        if not self.samples:
            return None
        return schema.Result(
            **common,
            call=call.label(sc, self.api),
            api=self.api,
            samples=tuple(self.samples),
            loops=self.loops[0] if len(set(self.loops)) == 1 else tuple(self.loops),
            # A user call asked not to be checked keeps no output (it is listed unchecked).
            output_hex="" if call.user and call.unchecked else self.output.hex(),
            inputs=self.job.inputs.to_json(),
            **schema.probed_fields(self.probed),
            procs=tuple(self.procs) if len(set(self.procs)) > 1 else (),
        )


@dataclass(frozen=True)
class Outcome:
    """What a session measured and what went wrong, as report records."""

    runtimes: tuple[schema.Runtime, ...]
    results: tuple[schema.Result, ...]
    errors: tuple[schema.RunError, ...]
    skipped: tuple[schema.Skipped, ...]
    tc: tuple[schema.TcFigure, ...]
    unstable: tuple[schema.UnstableCell, ...]
    levels: tuple[LevelResult, ...] = ()  # --concurrency (bridge.measure.levelrun)


class Session:
    def __init__(
        self,
        settings: Settings,
        progress: Progress | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.shows_progress = progress is not None
        self.note = progress or (lambda _msg: None)
        self.clock = clock
        self.live: list[Live] = []
        self.cells: list[Cell] = []
        self.errors: list[schema.RunError] = []
        self.skipped: list[schema.Skipped] = []
        self.tc: list[schema.TcFigure] = []
        self.level_cells: list[levelrun.LevelCell] = []
        self._stack = contextlib.ExitStack()
        self._ids: set[str] = set()  # ids given to runtimes as found, when ready
        self._specs: dict[int, RuntimeSpec] = {}  # by id(live): how to start more of it

    def __enter__(self) -> Session:
        self._stack.__enter__()
        return self

    def __exit__(self, *exc: object) -> bool | None:
        return self._stack.__exit__(*exc)

    # -- runtimes --------------------------------------------------------------

    def start(self, spec: RuntimeSpec) -> Live | None:
        """Start a runtime and add it to the run (or record why not)."""
        starting = self.launch(spec)
        self.ready(starting)
        return self.commit(starting)

    def launch(self, spec: RuntimeSpec) -> Starting:
        """Begin starting a runtime (Runtime.launch) and return at once. From
        here on the session stops it when it ends."""
        self.note(status(None, f"starting {spec.label}", Step.START))
        starting = Starting(spec, spec.build())
        # Stopped on any exit from here on, even between launch and ready.
        self._stack.callback(self._stop, starting)
        try:
            starting.driver.launch()
        except (RuntimeUnavailable, WorkerError) as exc:
            self._failed(starting, exc)
        except BaseException:
            starting.gave_up = True
            raise
        return starting

    def ready(self, starting: Starting) -> None:
        """Wait until a launched runtime is up, and give it its id: unique
        among runtimes as found, in the order they are readied (two
        installations of OTP 25.2.3 become erlang@25.2.3 and
        erlang@25.2.3#2); a masked twin takes its partner's."""
        if starting.failed or starting.live is not None:
            return
        spec, driver = starting.spec, starting.driver
        try:
            info = driver.start()
        except (RuntimeUnavailable, WorkerError) as exc:
            self._failed(starting, exc)
            return
        except BaseException:
            starting.gave_up = True
            raise
        wanted = spec.same_id or _unique(info.id, self._ids)
        if not info.masked:
            self._ids.add(wanted)
        if wanted != info.id:
            info = dataclasses.replace(info, id=wanted)
            driver.rename(wanted)
        starting.live = Live(driver, info)

    def commit(self, starting: Starting) -> Live | None:
        """Add a readied runtime to the run, or record why it is not in it."""
        if starting.skipped is not None:
            self.skipped.append(starting.skipped)
        if starting.error is not None:
            self.errors.append(starting.error)
        if starting.live is not None:
            self.live.append(starting.live)
            self._specs[id(starting.live)] = starting.spec
        return starting.live

    def discard(self, starting: Starting) -> None:
        """Stop a launched runtime that the run will not use (a twin launched
        on a wrong guess, bridge.measure.startup); it is never committed."""
        self._stop(starting)
        starting.gave_up = True

    @staticmethod
    def _stop(starting: Starting) -> None:
        if not starting.gave_up:
            starting.driver.stop()

    def _failed(self, starting: Starting, exc: RuntimeUnavailable | WorkerError) -> None:
        starting.gave_up = True
        spec = starting.spec
        if isinstance(exc, RuntimeUnavailable):
            starting.skipped = schema.Skipped(
                spec.label, spec.kind, exc.one_line(), requested=spec.requested
            )
        else:
            starting.error = worker_error(exc, spec.label)

    def add(self, live: Live, jobs: Iterable[Job]) -> None:
        self.cells += [Cell(live, job) for job in jobs]

    def add_levels(self, live: Live, jobs: Iterable[Job]) -> None:
        """The level cells of these jobs (--concurrency), see bridge.measure.levelrun."""
        self.level_cells += levelrun.cells(live, iter(jobs))

    def _died(self, live: Live, exc: WorkerError) -> None:
        # Gone or out of step: stop it now (all its processes); its samples so far are kept.
        self.errors.append(worker_error(exc, live.id))
        live.alive = False
        for driver in live.processes:
            driver.stop()

    def launch_spares(self) -> list[tuple[Live, Runtime | None]]:
        """Launch the spare processes of every worker runtime with cells
        (Settings.processes_used - 1 each), side by side, and return at once:
        they boot while the first round (mostly warm-ups and calibration)
        runs on each runtime's first process, and `ready_spares` waits for
        them before the second."""
        wanted = self.settings.processes_used - 1
        with_cells = {id(c.live) for c in self.cells}
        todo = [
            x
            for x in self.live
            if wanted > 0 and x.alive and x.driver.spreadable and id(x) in with_cells
        ]
        return [(x, self._launch_spare(x)) for x in todo for _ in range(wanted)]

    def ready_spares(self, launched: list[tuple[Live, Runtime | None]]) -> None:
        """Wait for the launched spares and add each to its runtime. A spare
        that fails to start, or starts a runtime other than its first
        process's, is left out (recorded as an error): the cells keep the
        processes they have."""
        for live, driver in launched:
            if driver is None:
                continue
            if not live.alive:
                driver.stop()
            elif self._ready_spare(live, driver):
                live.spares.append(driver)

    def _launch_spare(self, live: Live) -> Runtime | None:
        driver = self._specs[id(live)].build()
        self._stack.callback(driver.stop)  # stop() is safe to call twice
        try:
            driver.launch()
        except (RuntimeUnavailable, WorkerError) as exc:
            self._spare_failed(live, exc)
            return None
        return driver

    def _ready_spare(self, live: Live, driver: Runtime) -> bool:
        try:
            info = driver.start()
        except (RuntimeUnavailable, WorkerError) as exc:
            self._spare_failed(live, exc)
            return False
        first = live.info
        if (info.kind, info.version, info.executable) != (
            first.kind,
            first.version,
            first.executable,
        ):
            driver.stop()
            message = (
                f"{live.id}: another process started {info.kind} {info.version}"
                f" ({info.executable}); its cells keep the processes of {first.version}"
            )
            self.errors.append(schema.RunError(live.id, "worker", message))
            return False
        driver.rename(live.id)
        return True

    def _spare_failed(self, live: Live, exc: RuntimeUnavailable | WorkerError) -> None:
        message = f"{live.id}: another process of it did not start: {exc.one_line()}"
        self.errors.append(schema.RunError(live.id, "worker", message))

    # -- measuring -------------------------------------------------------------

    def measure(self, done: Callable[[str], None] | None = None, order: Sequence[str] = ()) -> None:
        """Scenario by scenario, in `order` (the plan's; others after, as
        their cells came): the planned rounds, then --method tc, then
        --until-stable rounds; then `done(scenario)`."""
        started = self.clock()
        spares = self.launch_spares()
        for cell in self.cells:
            cell.planned_processes = 1 + sum(
                1 for live, driver in spares if live is cell.live and driver is not None
            )
        rounds = self.settings.rounds
        levels = self.settings.for_levels()
        planned = sum(c.planned_s(self.settings, r) for r in range(rounds) for c in self.cells)
        # Only a progress line needs an ETA (and only then is the clock read for it).
        eta = Eta(planned, self.clock) if self.shows_progress else None
        groups = by_scenario(self.cells, self.level_cells, order)
        for i, (name, cells, level_cells) in enumerate(groups):
            for r in range(rounds):
                if spares and (r == 1 or i > 0):
                    self.note(status(eta, f"waiting for {len(spares)} more processes", Step.START))
                    self.ready_spares(spares)
                    spares = []
                label = f"round {r + 1}/{rounds}"
                self._round(cells, r, label, eta)
                level_r = level_round(r, rounds, levels.rounds)
                if level_r is not None:
                    levelrun.run_round(
                        level_cells,
                        levels,
                        level_r,
                        label,
                        note=self.note,
                        record=self.errors.append,
                        died=self._died,
                    )
                self._round_done(name, cells, f"{label} of {name}", eta)
            if self.settings.tc_calls:
                self._timer_tc(cells)
            # --max-time bounds the whole run: each scenario may spend up to
            # its share of it, and what one leaves unspent goes to the next.
            deadline = started + self.settings.max_seconds * (i + 1) / len(groups)
            self._until_stable(name, cells, deadline, eta)
            if i == len(groups) - 1:
                # From here the run only stops and saves: a signal now waits
                # until the report is safe (bridge.system.signals).
                signals.hold()
            if done is not None:
                done(name)
        signals.hold()  # a run with no cells at all

    def _until_stable(
        self, scenario: str, cells: list[Cell], deadline: float, eta: Eta | None
    ) -> None:
        """--until-stable: rounds for this scenario's cells that miss the
        target, until none does or the scenario's deadline passes."""
        target = self.settings.until_stable
        extra = 0
        while target is not None:
            unstable = [c for c in cells if c.live.alive and _misses(c, target)]
            now = self.clock()
            if not unstable or now > deadline:
                break
            extra += 1
            # An extra round is a first-round-sized batch, at least one sample
            # or openssl run (settings.round_share). How many it takes is
            # unknown: the bound is --max-time.
            left = duration(deadline - now)
            label = f"extra round {extra} ({len(unstable)} unstable, at most {left} left)"
            # Sized and ordered as the rounds after the planned ones.
            self._round(unstable, self.settings.rounds + extra - 1, label)
            self._round_done(scenario, unstable, f"{label} of {scenario}", eta)

    def _round_done(self, scenario: str, cells: list[Cell], label: str, eta: Eta | None) -> None:
        """Say that a round ended: a plain progress line prints this one."""
        alive = sum(1 for c in cells if c.active)
        self.note(status(eta, f"{label} done ({alive} cells)", Step.ROUND))

    def _round(self, cells: list[Cell], r: int, label: str, eta: Eta | None = None) -> None:
        """One batch for each of `cells`, in round `r`'s order
        (compared_together); a failure is recorded and stops that cell (a
        call error) or that runtime (a worker error)."""
        for cell in compared_together(cells, r):
            planned = cell.planned_s(self.settings, r)
            batch_plan = cell.plan(self.settings, r)
            if not cell.active or batch_plan.samples == 0:
                if eta is not None:
                    eta.finished(planned)  # its share of the plan will not be spent
                continue
            job = cell.job
            note = CellNote(
                round=label,
                runtime=cell.live.id,
                masked=cell.live.info.hw.masked,
                scenario=job.scenario.name,
                call=job.call.id,
                size=f"{cell.size} B",
                index=self.cells.index(cell) + 1,
                total=len(self.cells),
            )
            # The share done and the time left ride on the message (eta.Status).
            self.note(status(eta, note.text(), Step.CELL, note))
            process = cell.process
            cell.turns += 1
            try:
                cell.add(cell.live.processes[process].bench(job, batch_plan), process)
            except OperationError as exc:
                if exc.kind == "unsupported":
                    cell.unsupported = exc.message
                    continue
                cell.failed = True
                where = words.at(cell.size, job.scenario.size_unit, brief=True)
                message = f"{cell.live.id}: {job.call.id} {where} failed: {exc.message}"
                self.errors.append(schema.RunError(cell.live.id, "call", message))
            except WorkerError as exc:
                self._died(cell.live, exc)
            finally:
                if eta is not None:
                    eta.finished(planned)

    def _timer_tc(self, cells: list[Cell]) -> None:
        """--method tc: the thread's timer:tc harness on each Erlang cell."""
        n = self.settings.tc_calls or 0
        for cell in cells:
            if cell.live.kind != RuntimeKind.ERLANG or not cell.live.alive or not cell.samples:
                continue
            key = cell.key
            self.note(f"timer:tc x {n} [{key.runtime}] {key.call_id} {key.size} B")
            try:
                reply = cell.live.driver.tc(cell.job, n)
            except OperationError as exc:
                self.tc.append(
                    schema.TcFigure(
                        key.scenario,
                        key.runtime,
                        key.call_id,
                        key.size,
                        key.hw,
                        unsupported=exc.message,
                    )
                )
                continue
            except WorkerError as exc:
                self._died(cell.live, exc)
                continue
            self.tc.append(
                schema.TcFigure(
                    key.scenario,
                    key.runtime,
                    key.call_id,
                    key.size,
                    key.hw,
                    call=cell.job.call.label(cell.job.scenario, cell.api),
                    bridge_median_ns=stats.summarize(cell.per_op_ns()).median,
                    **reply,
                )
            )

    # -- what came of it -------------------------------------------------------

    def interrupted(self) -> None:
        self.errors.append(
            schema.RunError(
                "", "interrupted", "interrupted: the run was stopped before it finished"
            )
        )

    def outcome(self, scenario: str | None = None) -> Outcome:
        """What was measured; of one `scenario` only, the moment it is done
        (its cells, level cells and tc figures, and the errors so far)."""
        cells = [c for c in self.cells if scenario in (None, c.job.scenario.name)]
        # --until-stable's target, or the run's own: a cell that misses it is
        # marked unstable in every run, not only in --until-stable runs.
        target = self.settings.until_stable or self.settings.ci_target
        unstable = []
        if target is not None:
            for c in cells:
                width = c.halfwidth() if not (c.unsupported or c.failed) else None
                if width is not None and width > target:
                    k = c.key
                    unstable.append(
                        schema.UnstableCell(k.scenario, k.runtime, k.call_id, k.size, k.hw, width)
                    )
        # What went wrong while a runtime stopped (a node's purge) is known
        # once the session has stopped them.
        stopping = [e for x in self.live for e in x.driver.problems()] if scenario is None else []
        levels = [c for c in self.level_cells if scenario in (None, c.job.scenario.name)]
        return Outcome(
            runtimes=tuple(x.info for x in self.live),
            results=tuple(r for r in (c.result() for c in cells) if r is not None),
            errors=(*self.errors, *stopping),
            skipped=tuple(self.skipped),
            tc=tuple(t for t in self.tc if scenario in (None, t.scenario)),
            unstable=tuple(unstable),
            levels=tuple(levelrun.records(levels)),
        )


def _misses(cell: Cell, target: float) -> bool:
    if cell.unsupported or cell.failed:
        return False
    width = cell.halfwidth()
    return width is not None and width > target


def _unique(rid: str, taken: set[str]) -> str:
    n, candidate = 1, rid
    while candidate in taken:
        n += 1
        candidate = f"{rid}#{n}"
    return candidate


def worker_error(exc: WorkerError, label: str) -> schema.RunError:
    return schema.RunError(
        runtime=exc.runtime or label,
        kind="worker",
        message=exc.one_line(),
        stderr_tail=exc.stderr_tail,
    )


def by_scenario(
    cells: list[Cell], level_cells: list[levelrun.LevelCell], order: Sequence[str] = ()
) -> list[tuple[str, list[Cell], list[levelrun.LevelCell]]]:
    """The cells and level cells of each scenario, scenarios in `order`
    (then any other in the order its first cell was added), cells in theirs."""
    found = dict.fromkeys(c.job.scenario.name for c in (*cells, *level_cells))
    names = [n for n in order if n in found] + [n for n in found if n not in order]
    return [
        (
            name,
            [c for c in cells if c.job.scenario.name == name],
            [c for c in level_cells if c.job.scenario.name == name],
        )
        for name in names
    ]


def compared_together(cells: list[Cell], r: int) -> list[Cell]:
    """`cells` in round `r`'s order: the cells that are compared with each
    other side by side. Each cell's masked twin (hw off) sits right beside
    it, and the cells of one scenario at one size (the other runtimes of its
    kind, a version matrix; --with alternatives and `bridge time`
    expressions ranked against it; the other kinds' rows of its table) form
    one group, where their order turns from round to round. A shared host
    can switch speed within tens of milliseconds (on this project's 2-vCPU
    EPYC guest, two 5-ms samples 5 ms apart caught the same speed 93% of the
    time, 50 ms apart 85%), and the verdicts and comparisons judge pairs of
    cells round by round (bridge.stats.paired_ratio), so the nearer they
    run, the more rounds compare like with like.

    The order within a group changes so that no cell always runs first or
    after the same neighbour (a warmer cache, a drift within the round): on
    odd rounds the group runs backwards (a twin then runs before its
    partner, ABBA), and every second round it starts one runtime (a twin
    pair) further on. Two runtimes A and B run AB, BA, BA, AB, ...; three
    run ABC, CBA, BCA, ACB, CAB, BAC: over six rounds each ordered pair is
    adjacent equally often. Groups keep the order of their first cell.

    A cell that takes a batch only in some rounds (openssl's runs, a whole
    file's digests: 5 runs over 50 rounds land in rounds 9, 19, ... 49, all
    odd) puts its twin first by its own batches' parity, not the round's:
    by the round's, its masked twin ran first in every pair (a quiet default
    sha512 run called openssl's SHA-512 at 1 KiB `used`, 1.077x with all
    five pairs 1.067-1.087x, a control the mask cannot speed)."""
    groups: dict[tuple[str, int], list[list[Cell]]] = {}
    index = {c.key: c for c in cells}
    placed: set[int] = set()
    for cell in cells:
        if id(cell) in placed:
            continue
        k = cell.key
        twin = None if k.hw.masked else index.get(dataclasses.replace(k, hw=Hw.OFF))
        unit = [cell] if twin is None or id(twin) in placed else [cell, twin]
        placed.update(id(c) for c in unit)
        groups.setdefault((k.scenario, k.size), []).append(unit)
    out: list[Cell] = []
    for units in groups.values():
        turn = (r // 2) % len(units)
        ordered = units[turn:] + units[:turn]
        if r % 2:
            ordered = ordered[::-1]
        out += [c for unit in ordered for c in (unit[::-1] if _twin_first(unit, r) else unit)]
    return out


def _twin_first(unit: list[Cell], r: int) -> bool:
    """Does the masked twin of `unit` (a cell, and its twin where it has
    one) run first in round `r`: on odd rounds, or for a cell that takes a
    batch only in some rounds, on its odd batches."""
    cell = unit[0]
    if cell.live.driver.samples_are_processes or cell.job.scenario.long_calls:
        return cell.turns % 2 == 1
    return r % 2 == 1
