"""A scripted runtime for the fast tier: it implements the session's runtime
interface (bridge.runtimes.base.Runtime) with no process behind it. Its
samples, failures, interruptions and outputs follow a script, and every call
the session makes is written to a shared log, so a test can check the order
of events (interleaving, shutdown) exactly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.analysis import interop, noise
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, RuntimeUnavailable, WorkerError
from bridge.hw import hardware
from bridge.measure.plan import Plan
from bridge.measure.seams import Seams
from bridge.measure.twins import TwinGuesses
from bridge.report import levels, schema
from bridge.report.levels import LevelRaw
from bridge.runtimes.base import Batch, BatchPlan, Job, LevelPlan, Runtime, RuntimeSpec

FAKE_CPU = hardware.Cpu(
    arch="x86_64",
    model="Fake CPU",
    flags=frozenset({"sha_ni", "aes", "pclmulqdq", "avx2"}),
    virtualized=False,
)
LOOPS = 1000


@dataclass
class Script:
    """What one fake runtime does. per_op_ns(job, hw, round) gives the time of
    one call; a masked run (hw off) of a call that uses the feature is slower
    by `masked_factor`."""

    kind: str = "python"
    version: str = "3.11.0"
    per_op_ns: Callable[[Job, str, int], float] = lambda job, hw, n: 1000.0
    masked_factor: float = 2.0
    start_error: Exception | None = None
    # After this many bench calls (counted per runtime), every call raises this.
    fail_after: int | None = None
    failure: Exception = field(
        default_factory=lambda: WorkerError("fake@1 exited before it sent an answer", runtime="")
    )
    unsupported: dict[str, str] = field(default_factory=dict)  # call id -> reason
    output: Callable[[Job, int], bytes] | None = None  # (job, bench count) -> bytes
    tc_reply: dict[str, Any] | None = None
    # --concurrency: one worker's calls per second at a level (job, level, mode),
    # and what a level raises instead of measuring ({level: exception}).
    level_ops: Callable[[Job, int, str], float] = lambda job, level, mode: 1000.0
    level_failure: dict[int, Exception] = field(default_factory=dict)
    # ... and the CPUs its work wants at a level (Erlang: the processes the
    # probe finds running or ready to run; Python: CPU and run-queue wait).
    level_cpus: Callable[[int, str], float] = lambda level, mode: float(min(level, 2))
    # Settings.processes: more processes of it may be started (as a real
    # worker runtime); the k-th process made of it (per hw) times its calls
    # by process_factors[k] (a process effect), and its start raises
    # spare_error from the second process on.
    spreadable: bool = False
    process_factors: tuple[float, ...] = ()
    spare_error: Exception | None = None


class Log:
    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.benches = 0
        self.made: dict[tuple, list] = {}  # (script, hw) -> its FakeRuntimes, in order
        self.interrupt_at: int | None = None  # global bench count that raises Ctrl-C

    def of(self, what: str) -> list[tuple]:
        return [e for e in self.events if e[0] == what]


class FakeRuntime(Runtime):
    def __init__(self, script: Script, log: Log, hw: str, mask_env) -> None:
        from bridge.settings import DEFAULT

        self.kind = RuntimeKind(script.kind)  # type: ignore[misc]
        super().__init__(DEFAULT, hw, mask_env)
        # As the real openssl runtime: one sample is one process run.
        self.samples_are_processes = script.kind == "openssl"  # type: ignore[misc]
        self.script = script
        self.log = log
        self.calls = 0
        self.rounds: dict[tuple, int] = {}
        self.spreadable = script.spreadable  # type: ignore[misc]
        made = log.made.setdefault((id(script), hw), [])
        self.number = len(made)  # the how-many-th process of this script and hw
        made.append(self)

    def launch(self) -> None:
        self.log.events.append(("launch", self.script.kind, self.hw, dict(self.mask_env)))

    def start(self) -> schema.Runtime:
        self.log.events.append(("start", self.script.kind, self.hw, dict(self.mask_env)))
        if self.script.start_error is not None:
            raise self.script.start_error
        if self.number and self.script.spare_error is not None:
            raise self.script.spare_error
        library = "OpenSSL 3.0.19 27 Jan 2026"
        details = {
            "python": {
                "ssl_openssl_version": library,
                "hashlib_uses_openssl": True,
                "hmac_impl": "_hashlib.HMAC",
            },
            "erlang": {"crypto_lib": library},
            "openssl": {},
        }[self.script.kind]
        version = library if self.script.kind == "openssl" else self.script.version
        self.id = f"{self.script.kind}@{self.script.version}"
        return schema.Runtime(
            id=self.id,
            kind=self.script.kind,
            executable=f"/fake/{self.script.kind}",
            version=version,
            details={**details, "env": dict(self.mask_env)},
            hw=self.hw,
        )

    def bench(self, job: Job, plan: BatchPlan) -> Batch:
        self.log.benches += 1
        self.calls += 1
        key = (job.call.id, job.scenario.name, len(job.inputs.data))
        n = self.rounds.get(key, 0)
        self.rounds[key] = n + 1
        self.log.events.append(("bench", self.id, self.hw, job.call.id, key[2], plan, self.number))
        if self.log.interrupt_at is not None and self.log.benches >= self.log.interrupt_at:
            raise KeyboardInterrupt
        if self.script.fail_after is not None and self.calls > self.script.fail_after:
            raise self.script.failure
        if job.call.id in self.script.unsupported:
            raise OperationError("unsupported", self.script.unsupported[job.call.id])
        per_op = self.script.per_op_ns(job, self.hw, n)
        if self.hw == "off":
            per_op *= self.script.masked_factor
        if self.script.process_factors:
            per_op *= self.script.process_factors[self.number % len(self.script.process_factors)]
        # Calibration sizes a sample to its plan, as a real worker's does: a
        # masked twin twice as slow runs half the calls a sample.
        loops = plan.loops or max(1, round(LOOPS * self.script.per_op_ns(job, "on", 0) / per_op))
        output = (
            self.script.output(job, self.calls)
            if self.script.output
            else (interop.reference(job.scenario, job.inputs) or b"")
        )
        return Batch(
            api=f"fake {job.call.op}",
            # A nanosecond apart: samples with no spread at all give no CI.
            samples=[round(per_op * loops) + n * plan.samples + i for i in range(plan.samples)],
            loops=[loops] * plan.samples,
            output=output,
        )

    def bench_level(self, job: Job, plan: LevelPlan) -> LevelRaw:
        """Scripted windows of 100 ms: each of the N workers completes
        level_ops / 10 calls in each."""
        self.log.benches += 1
        self.log.events.append(("level", self.id, self.hw, job.call.id, plan.level, plan))
        if self.log.interrupt_at is not None and self.log.benches >= self.log.interrupt_at:
            raise KeyboardInterrupt
        if plan.level in self.script.level_failure:
            raise self.script.level_failure[plan.level]
        if job.call.id in self.script.unsupported:
            raise OperationError("unsupported", self.script.unsupported[job.call.id])
        ops = self.script.level_ops(job, plan.level, plan.mode)
        calls = round(ops / 10)
        window = tuple((calls, 100_000_000) for _ in range(plan.level))
        erlang = self.script.kind == "erlang"
        if self.script.kind == "openssl":
            return LevelRaw(
                api=f"fake {job.call.op}",
                batch=0,
                windows=(window,) * plan.windows,
                output=interop.reference(job.scenario, job.inputs) or b"",
                latency_note="counts only",
            )
        # Races: each worker's finish of the race's calls at its own rate
        # (a nanosecond apart, so that the slowest is the last).
        race_calls = plan.race_calls or calls
        race_ns = tuple(
            tuple(round(race_calls * 1e9 / ops) + k for k in range(plan.level))
            for _ in range(plan.races)
        )
        span = plan.windows * 100_000_000
        cpus = self.script.level_cpus(plan.level, plan.mode)
        return LevelRaw(
            api=f"fake {job.call.op}",
            batch=plan.batch or 10,
            windows=(window,) * plan.windows,
            latency_ns=(1000, 2000, 3000),
            output=interop.reference(job.scenario, job.inputs) or b"",
            probe_ns=(50_000, 60_000) if erlang else (),
            probe_idle_ns=(40_000,) if erlang and plan.idle_probe_ms else (),
            probe_active=(round(cpus),) * 2 if erlang else (),
            sched={"normal": (90, 100), "dirty_cpu": (0, 100)} if erlang else None,
            schedulers_online=2 if erlang else None,
            dirty_cpu_schedulers_online=2 if erlang else None,
            span_ns=span,
            cpu_ns=round(span * cpus * 0.9),
            wait_ns=round(span * cpus * 0.1),
            race_calls=race_calls if race_ns else 0,
            race_ns=race_ns,
        )

    def tc(self, job: Job, n: int) -> dict[str, Any]:
        if self.script.tc_reply is None:
            return super().tc(job, n)
        return dict(self.script.tc_reply, n=n)

    def stop(self) -> None:
        self.log.events.append(("stop", self.id, self.hw))


FAKE_MACHINE = levels.Machine(
    logical_cpus=2, usable_cpus=2, physical_cores=2, smt_siblings=1, loadavg_start=(0.1, 0.1, 0.1)
)


def seams(
    scripts: list[Script],
    log: Log,
    clock=None,
    mask_ok: bool | None = True,
    guesses: TwinGuesses | None = None,
) -> Seams:
    def specs(plan: Plan) -> list[RuntimeSpec]:
        return [
            RuntimeSpec(
                s.kind,
                f"fake {s.kind}",
                lambda hw, env, s=s: FakeRuntime(s, log, hw, env),
            )
            for s in scripts
        ]

    return Seams(
        specs=specs,
        cpu=FAKE_CPU,
        check_mask=lambda plan, ctx: schema.MaskCheck(ok=mask_ok, by="fake check"),
        environment=lambda: {"arch": "x86_64", "cpu_model": "Fake CPU"},
        clock=clock,
        machine=lambda: FAKE_MACHINE,
        # A machine with nothing to report: the fast tier reads no /proc.
        snapshot=lambda: noise.Snapshot(wall=0.0),
        # Twins' masks in memory: the fast tier writes no cache.
        guesses=guesses if guesses is not None else TwinGuesses(),
    )


def unavailable(message: str) -> RuntimeUnavailable:
    return RuntimeUnavailable(message)
