"""Python `hashlib`/`hmac`, timed in a worker process (`python -m bridge.pyworker.worker`).

The worker is a separate interpreter, never the driver, because libcrypto reads
the hardware masks once, when it is loaded.

Under --concurrency the Python runtime runs a call two ways: N threads in
its one worker (bridge.pyworker.conc), and N worker processes. The extra processes
are started the first time a level needs them and kept for the rest of the
run, each with the same interpreter and environment (the hardware mask
included) as the first.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Iterable
from typing import Any

from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, WorkerError
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.report.levels import LevelRaw
from bridge.runtimes import usercode
from bridge.runtimes.base import (
    Job,
    LevelPlan,
    WorkerRuntime,
    level_batch,
    race_calls_of,
    text,
)
from bridge.settings import Settings
from bridge.system import environment
from bridge.wire import codec
from bridge.wire.port import Worker

# Time given to send a `conc` request to each of N processes before their
# common start: the warm-up that follows absorbs a process that is late.
START_SLACK_MS = 25
START_SLACK_PER_PROCESS_MS = 5


class PythonRuntime(WorkerRuntime):
    kind = RuntimeKind.PYTHON
    start_timeout = 20.0

    def __init__(
        self, settings: Settings, hw: Hw = Hw.ON, mask_env=None, executable: str | None = None
    ):
        super().__init__(settings, hw, mask_env)
        self.executable = executable or sys.executable
        self.extras: list[Worker] = []  # worker processes 2..N for the processes mode

    def argv(self) -> list[str]:
        """A run with user calls starts the worker with them (--user FILE):
        without, the worker has no user path at all (bridge.pyworker.usercode)."""
        mine = self.user.of(RuntimeKind.PYTHON) if self.user is not None else ()
        if not mine:
            return [self.executable, "-m", "bridge.pyworker.worker"]
        if self.user_dir is None:
            self.user_dir = usercode.UserDir()
        file = self.user_dir.write_python(mine, self.user.python_path)
        return [self.executable, "-m", "bridge.pyworker.worker", "--user", file]

    def user_request(self, args: dict[str, Any], timeout: float) -> Any:
        """A py: call's bench request, watched from here: the worker marks
        the start of each timed run in its progress file, and one whose last
        mark is older than the limit has a sample that ran past it. A Python
        worker cannot stop its own main thread (a C call that holds the GIL
        does not return to the interpreter), so it is watched from outside."""
        assert self.worker is not None and self.user_dir is not None
        progress = self.user_dir.progress
        assert progress is not None  # made with the --user FILE
        limit_ns = int(self.settings.user_timeout_s * 1e9)
        deadline = time.monotonic() + timeout
        progress.mark()
        request = self.worker.send("bench", args)
        while not self.worker.readable(min(1.0, max(0.0, deadline - time.monotonic()))):
            if progress.age_ns() > limit_ns:
                raise OperationError("timeout", "a sample ran past the limit")
            if time.monotonic() >= deadline:
                raise self.worker.timed_out("an answer to 'bench'", timeout)
        # A reply has begun: the rest of its frame (a large output) may take a moment.
        rest = max(self.settings.timeout_slack_s, deadline - time.monotonic())
        return self.worker.reply("bench", request, timeout=rest)

    def worker_options(self) -> dict[str, Any]:
        # What runs before bridge.pyworker.worker takes over its standard output.
        return {"startup_hint": "a sitecustomize.py, usercustomize.py or .pth file?"}

    def describe(self, info: dict[str, Any]) -> schema.Runtime:
        version = text(info["python_version"])
        pid = self.worker.pid if self.worker else None
        return schema.Runtime(
            id=f"python@{version}",
            kind=RuntimeKind.PYTHON,
            executable=self.executable,
            version=f"Python {version}",
            details={
                "implementation": text(info.get("implementation", b"")),
                "ssl_openssl_version": text(info.get("ssl_openssl_version", b"")),
                "cryptography_openssl_version": text(info.get("cryptography_openssl_version", b"")),
                "hashlib_sha256_type": text(info.get("hashlib_sha256_type", b"")),
                "hashlib_uses_openssl": bool(info.get("hashlib_uses_openssl")),
                "hmac_impl": text(info.get("hmac_impl", b"")),
                "fips_mode": bool(info.get("fips_mode")),
                "libcrypto_loaded": environment.loaded_libcrypto(pid),
                "clock": text(info.get("clock", b"")),
                "env": self.env_record(),
            },
            hw=self.hw,
        )

    def stop(self) -> None:
        self._close_extras()
        super().stop()

    # -- concurrency -----------------------------------------------------------

    def bench_level(self, job: Job, plan: LevelPlan) -> LevelRaw:
        assert self.worker is not None
        self.pinning.unpin(self.worker.pid)  # N threads or processes want every CPU
        if plan.mode == "threads":
            args = self.conc_args(job, plan, plan.level)
            reply = self.worker.call("conc", args, timeout=self.conc_timeout(plan))
            return level_batch(codec.props(reply))
        return self._processes(job, plan)

    def _processes(self, job: Job, plan: LevelPlan) -> LevelRaw:
        """N processes, each given the same start on CLOCK_MONOTONIC. A process
        other than the first that dies or hangs costs this level's cell only:
        the extra processes are stopped and started afresh when next needed.
        The races follow, one request per process per race, each with its
        common start (processes share no barrier)."""
        assert self.worker is not None
        pool = [self.worker, *self._extras(plan.level - 1)]
        slack = START_SLACK_MS + START_SLACK_PER_PROCESS_MS * plan.level
        args = self.conc_args(job, plan, 1)
        for key in ("races", "race_calls"):
            args.pop(key, None)
        timeout = self.conc_timeout(plan, extra_ms=slack)
        replies = self._on_all(pool, args, slack, timeout)
        windows = _merge(replies, plan)
        if not plan.races:
            return windows
        calls = plan.race_calls or race_calls_of(windows.windows)
        race = {**args, "windows": 0, "races": 1, "race_calls": calls}
        finishes = []
        for _ in range(plan.races):
            each = self._on_all(pool, race, slack, timeout)
            finishes.append(tuple(r.race_ns[0][0] for r in each))
        return dataclasses.replace(windows, race_calls=calls, race_ns=tuple(finishes))

    def _on_all(
        self, pool: list[Worker], args: dict[str, Any], slack_ms: int, timeout: float
    ) -> list[LevelRaw]:
        """One `conc` request to every process of the pool, all with the same
        start `slack_ms` ahead; their replies, or the failure policy."""
        assert self.worker is not None
        start_at = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + slack_ms * 1_000_000
        args = {**args, "start_at_ns": start_at}
        level = len(pool)
        sent = []
        for w in pool:
            try:
                sent.append((w, w.send("conc", args)))
            except WorkerError as exc:
                sent.append((w, exc))
        replies: list[LevelRaw] = []
        failures: list[str] = []
        unsupported: list[str] = []
        for w, request in sent:
            try:
                if isinstance(request, WorkerError):
                    raise request
                replies.append(level_batch(codec.props(w.reply("conc", request, timeout=timeout))))
            except WorkerError as exc:
                if w is self.worker:
                    self._close_extras()
                    raise  # the runtime itself is gone: the session's failure policy
                failures.append(_died(exc, level))
            except OperationError as exc:
                (unsupported if exc.kind == "unsupported" else failures).append(exc.message)
        if failures:
            self._close_extras()
            raise OperationError("failed", "; ".join(dict.fromkeys(failures)))
        if unsupported:
            raise OperationError("unsupported", unsupported[0])
        return replies

    def _extras(self, n: int) -> list[Worker]:
        while len(self.extras) < n:
            extra = self.new_worker(f"{self.id} process {len(self.extras) + 2}")
            try:
                extra.start()
            except WorkerError as exc:
                self._close_extras()
                raise OperationError("failed", f"could not start {exc.one_line()}") from None
            self.extras.append(extra)
        return self.extras[:n]

    def _close_extras(self) -> None:
        extras, self.extras = self.extras, []
        for w in extras:
            w.close()


def _died(exc: WorkerError, level: int) -> str:
    tail = (exc.stderr_tail or "").strip().splitlines()
    said = f" (its stderr: {tail[-1][:120]})" if tail else ""
    return f"at level {level}, {exc.one_line()}{said}"


def _merge(replies: list[LevelRaw], plan: LevelPlan) -> LevelRaw:
    """One process's reply per worker: their windows side by side, their CPU
    time and waits added up over the longest span."""
    first = replies[0]
    if plan.same_output and any(r.output != first.output for r in replies):
        raise OperationError("failed", "the worker processes computed different bytes")
    windows = tuple(
        tuple(pair for w in same_window for pair in w)
        for same_window in zip(*(r.windows for r in replies), strict=True)
    )
    return LevelRaw(
        api=first.api,
        batch=first.batch,
        windows=windows,
        latency_ns=tuple(x for r in replies for x in r.latency_ns),
        output=first.output,
        clock_ns=first.clock_ns,
        span_ns=_most(r.span_ns for r in replies),
        cpu_ns=_total(r.cpu_ns for r in replies),
        wait_ns=_total(r.wait_ns for r in replies),
    )


def _total(values: Iterable[int | None]) -> int | None:
    """The sum, or None if any process could not say."""
    xs = list(values)
    return None if any(x is None for x in xs) else sum(x for x in xs if x is not None)


def _most(values: Iterable[int | None]) -> int | None:
    xs = list(values)
    return None if any(x is None for x in xs) else max(x for x in xs if x is not None)
