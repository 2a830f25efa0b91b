"""The narrow interface every runtime kind implements, and the shared
worker-backed implementation used by the Erlang and Python runtimes.

A runtime is driven by the session (bridge.measure.session) through these calls:

    launch()                   optional: begin starting (spawn a process) and
                               return at once, so that the session can boot
                               several runtimes side by side
    start() -> schema.Runtime   start it (a worker process, or a probe of the
                               openssl binary), or finish what launch() began,
                               and return its provenance
    bench(job, plan) -> Batch  one batch of samples of one call
    tc(job, n) -> dict         optional: the thread's timer:tc harness
    stop()                     stop every process; safe to call twice

It is also a context manager (enter = start, exit = stop), which is how the
session holds it in an ExitStack.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bridge.catalog import calls
from bridge.catalog.inputs import Inputs
from bridge.catalog.scenario import Scenario
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, WorkerError
from bridge.hw.hardware import MASK_VARS
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.report.levels import LevelRaw
from bridge.runtimes import pinning
from bridge.settings import Settings
from bridge.system import libcrypto, proc
from bridge.system.fence import Fence
from bridge.wire import codec
from bridge.wire.codec import text
from bridge.wire.port import Launch, Worker


@dataclass(frozen=True)
class Job:
    """What to run: one call of one scenario on one set of inputs."""

    scenario: Scenario
    call: calls.Call
    inputs: Inputs

    def wire_args(self) -> dict[str, Any]:
        """The request's arguments: the operation, what it needs of the
        scenario, and the inputs."""
        args = {"call": self.call.op, **self.scenario.params(), **self.inputs.wire()}
        if self.call.user:
            # A user call is named by its key: the runtime was started with
            # its expression (bridge.runtimes.usercode), no request carries code.
            args |= {"expr": self.call.user, "size": self.inputs.size}
            args["twice"] = int(self.call.check is calls.Check.DISTINCT)
        return args


@dataclass(frozen=True)
class BatchPlan:
    """What one round asks of a cell: how many samples, how long to warm up,
    and (after the first round) the loop count to reuse."""

    samples: int
    warmup_ms: int
    loops: int | None = None
    # The round (0-based): the CPU a runtime is pinned to rotates with it,
    # so a cell and its masked twin see the same CPUs alike (bridge.runtimes.pinning).
    round: int = 0


@dataclass
class Batch:
    api: str  # the function really used, e.g. "crypto:macN/5"
    samples: list[int]  # raw durations, ns
    loops: list[int]  # calls per sample
    output: bytes
    # Per sample, parallel to `samples` (empty: not known): the CPU the
    # measuring thread ran on (-1: unknown), its CPU ns and its run-queue
    # wait ns over the window (openssl: the child's user+system CPU, and the
    # process's wall time less that), and openssl's user CPU ns alone.
    cpus: list[int] = dataclasses.field(default_factory=list)
    cpu_ns: list[int] = dataclasses.field(default_factory=list)
    wait_ns: list[int] = dataclasses.field(default_factory=list)
    user_ns: list[int] = dataclasses.field(default_factory=list)
    # A TLS cell's server: its CPU ns over each sample (bridge.analysis.tls).
    server_cpu_ns: list[int] = dataclasses.field(default_factory=list)

    def probed(self) -> dict[str, list[int]]:
        """The per-sample arrays it has, by their report key (schema.PROBED)."""
        arrays = {
            "sample_cpus": self.cpus,
            "sample_cpu_ns": self.cpu_ns,
            "sample_wait_ns": self.wait_ns,
            "sample_user_ns": self.user_ns,
            "sample_server_cpu_ns": self.server_cpu_ns,
        }
        return {k: v for k, v in arrays.items() if v}


@dataclass(frozen=True)
class LevelPlan:
    """What one round asks of a level cell: N workers in one mode, over
    `windows` windows of `window_ms` (openssl: `windows` runs of speed
    -multi), after a common warm-up; the batch to reuse after the first
    round; how long the Erlang probe first watches the idle node; then
    `races` races of `race_calls` calls per worker (the slowest of N; 0:
    the runtime takes the calls of one worker's median window)."""

    level: int
    mode: str
    windows: int
    window_ms: int
    warmup_ms: int
    batch: int | None = None
    idle_probe_ms: int = 0
    same_output: bool = True
    races: int = 0
    race_calls: int = 0


def level_windows(per_worker: list) -> tuple[tuple[tuple[int, int], ...], ...]:
    """A worker's reply lists its windows; a level cell keeps them by window."""
    rows = [[(int(c), int(ns)) for c, ns in ws] for ws in per_worker]
    return tuple(tuple(w) for w in zip(*rows, strict=True)) if rows else ()


class Runtime:
    kind: ClassVar[RuntimeKind]
    # One sample is one process (openssl speed): a cell gets few of them.
    samples_are_processes: ClassVar[bool] = False
    # More processes of it can be started from its spec to share a cell's
    # rounds (Settings.processes; bridge.measure.session): a worker bridge
    # starts itself, not a running node or openssl (each of whose samples is
    # a process already).
    spreadable: ClassVar[bool] = False

    def __init__(
        self, settings: Settings, hw: Hw = Hw.ON, mask_env: Mapping[str, str] | None = None
    ):
        self.settings = settings
        self.hw = hw
        self.mask_env = dict(mask_env or {})
        self.id = self.kind
        # What the user gave this runtime alone (--env NAME=VALUE after its
        # --erl/--python/--openssl); recorded in the report as given.
        self.given_env: dict[str, str] = {}
        # --libcrypto: a directory put in front of LD_LIBRARY_PATH.
        self.libcrypto_dir: str | None = None
        # The user's calls this runtime starts with (bridge.runtimes.usercode.UserCode),
        # given only by the command line: None, and no user path at all, otherwise.
        self.user: Any = None
        # The CPU its measuring process is on in each round (bridge.runtimes.pinning).
        self.pinning = pinning.Pinning.from_env()

    def launch(self) -> None:
        """Begin starting, without waiting (nothing to do by default: start()
        does it all). A runtime that launched something is stopped by
        stop(), whether or not start() followed."""

    def start(self) -> schema.Runtime:
        raise NotImplementedError

    def stop(self) -> None:
        pass

    def bench(self, job: Job, plan: BatchPlan) -> Batch:
        """One batch of samples of one call (one round of an interleaved run)."""
        raise NotImplementedError

    def tc(self, job: Job, n: int) -> dict[str, Any]:
        raise OperationError("unsupported", f"--method tc does not time {job.call.id}")

    def bench_level(self, job: Job, plan: LevelPlan) -> LevelRaw:
        """One round of N workers making the call at once (--concurrency)."""
        raise OperationError("unsupported", f"{self.kind} does not run calls concurrently")

    def rename(self, runtime_id: str) -> None:
        self.id = runtime_id

    def problems(self) -> list[schema.RunError]:
        """What went wrong in stop(), for the report (stop itself never raises)."""
        return []

    def __enter__(self) -> schema.Runtime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def with_user(self, code: Any) -> Runtime:
        self.user = code
        return self

    def bench_shell(self, job: Job, plan: BatchPlan, directory: str) -> Batch:
        """A user's `sh:` command (bridge.runtimes.usercode), timed as a whole
        process from spawn to exit, with this runtime's environment."""
        from bridge.runtimes import usercode

        mine = {uc.key: uc for uc in (self.user.of(self.kind) if self.user else ())}
        uc = mine.get(job.call.user)
        if uc is None:
            raise OperationError("unknown_call", "this run was not started with that command")
        where = (self.child_env(), directory)
        samples, output = usercode.shell_samples(
            uc, job, plan.samples, bool(plan.warmup_ms), where, self.settings
        )
        return Batch(
            api="/bin/sh -c (whole process)",
            samples=samples,
            loops=[1] * len(samples),
            output=output,
        )

    def with_env(self, given: Mapping[str, str]) -> Runtime:
        self.given_env = dict(given)
        return self

    def extra_env(self) -> dict[str, str]:
        """What this runtime's children get on top of bridge's environment:
        the variables given for it, the --libcrypto directory in front of the
        library path, and the mask of an hw "off" run."""
        extra = {**self.given_env, **self.mask_env}
        if self.libcrypto_dir:
            rest = self.given_env.get("LD_LIBRARY_PATH", os.environ.get("LD_LIBRARY_PATH"))
            extra["LD_LIBRARY_PATH"] = ":".join(p for p in (self.libcrypto_dir, rest) if p)
        return extra

    def child_env(self) -> dict[str, str]:
        """The environment for a child: bridge's own, less the variables it
        controls, plus extra_env()."""
        return proc.erlang_env(self.extra_env())

    def env_record(self) -> dict[str, str | None]:
        """Only the variables bridge sets or reads, and those given for this
        runtime, for the report: nothing inherited from bridge's environment
        (a --libcrypto directory is recorded on its own, see
        bridge.runtimes.other_libcrypto)."""
        env = self.child_env()
        return {**{k: env.get(k) for k in MASK_VARS}, **self.given_env}

    def mapped_libcrypto(self) -> list[libcrypto.Mapped]:
        """The libcrypto files this runtime's process maps, once started."""
        raise libcrypto.CannotTell(f"{self.id} cannot show what it maps")


class WorkerRuntime(Runtime):
    """A runtime whose calls run in a worker process speaking bridge's protocol."""

    start_timeout = 30.0
    spreadable = True

    def __init__(self, settings: Settings, hw: Hw = Hw.ON, mask_env=None):
        super().__init__(settings, hw, mask_env)
        self.worker: Worker | None = None
        self.user_dir: Any = None  # bridge.runtimes.usercode.UserDir, made by argv()

    def argv(self) -> list[str]:
        raise NotImplementedError

    def describe(self, info: dict[str, Any]) -> schema.Runtime:
        raise NotImplementedError

    def worker_options(self) -> dict[str, Any]:
        """More keyword arguments for bridge.wire.port.Worker: a hint about
        start-up output, a postmortem."""
        return {}

    def launch_options(self) -> Launch:
        """Where the worker runs and how it is held (bridge.wire.port.Launch):
        every worker has the data limit; one that runs user code has a fence."""
        fence = Fence() if self.runs_user_code() else None
        return Launch(fence=fence, memory=self.settings.memory_bytes)

    def runs_user_code(self) -> bool:
        return bool(self.user is not None and self.user.of(self.kind))

    def new_worker(self, name: str) -> Worker:
        """A worker process of this runtime, not started."""
        return Worker(
            name,
            self.argv(),
            self.child_env(),
            start_timeout=self.start_timeout,
            launch=self.launch_options(),
            **self.worker_options(),
        )

    def launch(self) -> None:
        """Spawn the worker process; start() waits for its greeting. An
        Erlang node takes about 0.3 s to boot, a Python worker 0.1 s: booted
        side by side, they cost the time of the slowest."""
        if self.worker is not None:
            return
        try:
            self.worker = self.new_worker(self.kind)
            self.worker.spawn()
        except BaseException:
            self.stop()  # what a subclass made for the start goes too
            raise

    def start(self) -> schema.Runtime:
        try:
            self.launch()
            assert self.worker is not None
            self.worker.greet()
            self.check_greeting(self.worker.greeting)
            info = codec.props(self.worker.call("info", timeout=30))
            described = self.describe(info)
        except BaseException:
            self.stop()  # what a subclass made for the start goes too
            raise
        self.rename(described.id)
        return described

    def check_greeting(self, greeting: dict[str, Any]) -> None:
        pass

    def mapped_libcrypto(self) -> list[libcrypto.Mapped]:
        if self.worker is None or self.worker.pid is None:
            return super().mapped_libcrypto()
        return libcrypto.mapped(self.worker.pid)

    def rename(self, runtime_id: str) -> None:
        super().rename(runtime_id)
        if self.worker is not None:
            self.worker.name = runtime_id

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None
        if self.user_dir is not None:
            self.user_dir.close()
            self.user_dir = None

    def bench(self, job: Job, plan: BatchPlan) -> Batch:
        assert self.worker is not None
        args = {
            **job.wire_args(),
            "warmup_ns": plan.warmup_ms * 1_000_000,
            "sample_ns": self.settings.sample_ms * 1_000_000,
            "samples": plan.samples,
        }
        if plan.loops:
            args["loops"] = plan.loops
        cpu = self.pinning.pin(self.worker.pid, plan.round)
        try:
            with self.placed(job, plan.round, cpu) as placement:
                reply = codec.props(self._bench_request(job, args | placement, plan))
        finally:
            # Free again until its next batch: a process that has measured
            # goes on running a little (its threads spin, it frees what the
            # batch made), and pinned where the next batch measures it would
            # take that CPU in turns with it (bridge.runtimes.pinning).
            if self.worker is not None and self.worker.running:
                self.pinning.unpin(self.worker.pid)
        if job.call.user:  # what the user's code started may listen on loopback only
            self.check_user_processes(job)
        loops = int(reply["loops"])
        n = len(reply["samples"])
        probed = [[int(x) for x in reply.get(k, [])] for k in ("cpus", "cpu_ns", "wait_ns")]
        if any(len(p) != n for p in probed):
            probed = [[], [], []]
        server = [int(x) for x in reply.get("server_cpu_ns", [])]
        return Batch(
            api=text(reply["api"]),
            samples=[int(s) for s in reply["samples"]],
            loops=[loops] * n,
            output=reply["output"],
            cpus=probed[0],
            cpu_ns=probed[1],
            wait_ns=probed[2],
            server_cpu_ns=server if len(server) == n else [],
        )

    def placed(
        self, job: Job, round_index: int, cpu: int | None
    ) -> contextlib.AbstractContextManager[dict[str, Any]]:
        """Where what serves the batch runs while the worker measures on
        `cpu` (a TLS cell's server node: ErlangRuntime), and what the request
        says of it; nothing by default."""
        return contextlib.nullcontext({})

    def _bench_request(self, job: Job, args: dict[str, Any], plan: BatchPlan) -> Any:
        """The bench request and its reply. A user call carries its limit per
        sample (--timeout), which the worker watches; one that passes it, or
        runs a worker out of its memory, fails with a message that names the
        call and the limit."""
        assert self.worker is not None
        try:
            if not job.call.user:
                timeout = self.settings.bench_timeout(plan.warmup_ms, plan.samples)
                return self.worker.call("bench", args, timeout=timeout)
            limit = self.settings.user_timeout_s
            args["limit_ms"] = max(1, round(limit * 1000))
            timeout = self.settings.user_bench_timeout(plan.warmup_ms, plan.samples)
            return self.user_request(args, timeout)
        except OperationError as exc:
            if exc.kind == "timeout":
                raise self.overdue(job) from None
            if exc.kind == "memory":
                raise OperationError("failed", self.out_of_memory(job)) from None
            raise
        except WorkerError as exc:
            raise self.explain(exc, job) from None

    def user_request(self, args: dict[str, Any], timeout: float) -> Any:
        """A user call's bench request (the Python worker's is watched from here)."""
        assert self.worker is not None
        return self.worker.call("bench", args, timeout=timeout)

    def overdue(self, job: Job) -> WorkerError:
        """A user call passed its limit per sample: the worker, and every
        process its user code started, are killed."""
        if self.worker is not None:
            self.worker.kill()
        limit = self.settings.user_timeout_s
        return WorkerError(
            f"{self.id}: {job.call.label(job.scenario, '')}: a sample ran past the {limit:g}-s"
            f" limit (--timeout {limit:g}); the worker and the processes its code started"
            " were killed",
            runtime=self.id,
        )

    def out_of_memory(self, job: Job) -> str:
        return f"{job.call.label(job.scenario, '')}: {memory_words(self.settings)}"

    def explain(self, exc: WorkerError, job: Job) -> WorkerError:
        """A worker that died in a call, as the user should hear of it (the
        Erlang node says when it ran out of memory)."""
        return exc

    def check_user_processes(self, job: Job) -> None:
        """After a user call's batch: a runtime whose user code listens beyond
        loopback (the worker itself, or any process below it), or left more
        processes running than any call needs, is stopped (the session does
        so on a WorkerError), with the reason."""
        from bridge.runtimes import usercode

        worker = self.worker
        fence = worker.launch.fence if worker is not None else None
        if worker is None or worker.pid is None or fence is None:
            return
        usercode.refuse_listeners(fence.members(worker.pid), job, self.id)
        usercode.refuse_crowd(len(fence.started(worker.pid)), job, self.id)

    def conc_args(self, job: Job, plan: LevelPlan, workers: int) -> dict[str, Any]:
        """The `conc` request of bridge_concurrency.erl and bridge.pyworker.conc."""
        args = {
            **job.wire_args(),
            "workers": workers,
            "warmup_ns": plan.warmup_ms * 1_000_000,
            "window_ns": plan.window_ms * 1_000_000,
            "windows": plan.windows,
            "same_output": int(plan.same_output),
        }
        if plan.batch:
            args["batch"] = plan.batch
        if plan.races:
            args |= {"races": plan.races, "race_calls": plan.race_calls}
        return args

    def conc_timeout(self, plan: LevelPlan, extra_ms: int = 0) -> float:
        """Seconds to wait for a `conc` reply before declaring the worker hung:
        the planned time (warm-up, idle probe, the windows, and two windows
        for calibration and the workers' start), doubled, plus the slack.
        A race lasts about a window at level 1, and up to N times that
        when the N take turns."""
        planned_ms = plan.warmup_ms + plan.idle_probe_ms + extra_ms
        planned_ms += plan.window_ms * (plan.windows + 2)
        planned_ms += plan.races * plan.level * plan.window_ms
        return 2 * planned_ms / 1000 + self.settings.timeout_slack_s


def memory_words(settings: Settings) -> str:
    """'the worker ran out of its 4 GiB memory limit (--memory-limit 4G)'."""
    mib = settings.memory_limit_mib
    size = f"{mib / 1024:g} GiB" if mib >= 1024 else f"{mib} MiB"
    option = f"{mib // 1024}G" if mib % 1024 == 0 else f"{mib}M"
    return f"the worker ran out of its {size} memory limit (--memory-limit {option})"


def race_calls_of(windows: tuple[tuple[tuple[int, int], ...], ...]) -> int:
    """The calls one worker made in the median window, at least one: the
    race the workers run when not told (erl/bridge_concurrency.erl,
    bridge.pyworker.conc)."""
    calls = sorted(c for window in windows for c, _ in window if c > 0)
    return calls[(len(calls) + 1) // 2 - 1] if calls else 1


def level_batch(reply: dict[str, Any]) -> LevelRaw:
    """A `conc` reply as one round's raw record."""
    sched = reply.get("sched")
    return LevelRaw(
        api=text(reply["api"]),
        batch=int(reply["batch"]),
        windows=level_windows(reply["windows"]),
        latency_ns=tuple(int(x) for ws in reply["latency_ns"] for x in ws),
        output=reply["output"],
        probe_ns=tuple(int(x) for x in reply.get("probe_ns", [])),
        probe_idle_ns=tuple(int(x) for x in reply.get("probe_idle_ns", [])),
        probe_active=tuple(int(x) for x in reply.get("probe_active", [])),
        sched=None if sched is None else {str(k): (int(a), int(t)) for k, a, t in sched},
        schedulers_online=reply.get("schedulers_online"),
        dirty_cpu_schedulers_online=reply.get("dirty_cpu_schedulers_online"),
        clock_ns=reply.get("clock_ns"),
        span_ns=reply.get("span_ns"),
        cpu_ns=reply.get("cpu_ns"),
        wait_ns=reply.get("wait_ns"),
        race_calls=int(reply.get("race_calls", 0)),
        race_ns=tuple(tuple(int(x) for x in race) for race in reply.get("race_ns", [])),
    )


# -- what the session starts -------------------------------------------------

# (hw, mask environment) -> a runtime, not started yet
Factory = Callable[[Hw, Mapping[str, str] | None], Runtime]


@dataclass(frozen=True)
class RuntimeSpec:
    """A runtime to start: its kind, what the user called it, and how to make it."""

    kind: RuntimeKind
    label: str
    make: Factory
    hw: Hw = Hw.ON
    mask_env: Mapping[str, str] | None = None
    # A masked twin shares its partner's id: that is how results and verdicts pair.
    same_id: str | None = None
    # False for a running node (--node): its libcrypto read the masks when it
    # started, so it has no masked twin.
    maskable: bool = True
    # The option that asked for this runtime (--erl, --python, --openssl), or
    # "" when bridge chose it: one that was asked for and cannot run fails the run.
    requested: str = ""

    def build(self) -> Runtime:
        return self.make(self.hw, self.mask_env)

    def masked(self, label: str, mask_env: Mapping[str, str], same_id: str) -> RuntimeSpec:
        return dataclasses.replace(
            self, label=label, hw=Hw.OFF, mask_env=dict(mask_env), same_id=same_id, requested=""
        )


@dataclass
class Live:
    """A started runtime: its driver, its provenance, and whether it still
    runs; `spares`: more processes of the same runtime that share its cells'
    rounds (Settings.processes), started by the session."""

    driver: Runtime
    info: schema.Runtime
    alive: bool = True
    spares: list[Runtime] = dataclasses.field(default_factory=list)

    @property
    def processes(self) -> list[Runtime]:
        """The driver, then its spares: process i of the report's `procs`."""
        return [self.driver, *self.spares]

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def kind(self) -> RuntimeKind:
        return self.info.kind
