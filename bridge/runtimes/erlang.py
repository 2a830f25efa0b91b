"""Erlang `crypto`, timed inside a real OTP node (erl/bridge_worker.erl).

The node runs as
`erl -noshell -noinput -boot ROOT/bin/no_dot_erlang -pa CACHE -s bridge_worker main`:
no -sname/-name, so no distribution, no epmd and no listening socket; the
ERL_*FLAGS variables that could add them are removed from its environment.
It starts apart from the user's Erlang set-up (bridge.system.otp): no ~/.erlang, no
ERL_LIBS, a private working directory that also receives any crash dump.

Its frames travel on two descriptors of their own (-bridge_channel IN OUT),
and its standard output goes where its standard error does: what an
expression prints (io:format, erlang:display, a NIF's printf) is captured
there, never taken for a frame.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from bridge.catalog import calls
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, RuntimeUnavailable, WorkerError
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.report.levels import LevelRaw
from bridge.runtimes import usercode
from bridge.runtimes.base import Job, LevelPlan, WorkerRuntime, level_batch, memory_words
from bridge.settings import Settings
from bridge.system import environment, fence, otp
from bridge.wire import codec
from bridge.wire.codec import text
from bridge.wire.port import Launch

# A crash dump holds the node's binaries: one that ran out of a 4 GiB limit
# would write gigabytes. The slogan (what bridge quotes) and the process list
# come first; 16 MiB keeps them.
CRASH_DUMP_BYTES = 16 << 20
# How erts says that an allocation failed, in a crash dump's slogan.
OUT_OF_MEMORY = "Cannot allocate"


class ErlangRuntime(WorkerRuntime):
    kind = RuntimeKind.ERLANG

    def __init__(
        self, installation: otp.Installation, settings: Settings, hw: Hw = Hw.ON, mask_env=None
    ):
        super().__init__(settings, hw, mask_env)
        self.installation = installation
        self._node_dir: otp.NodeDir | None = None  # made on first use, per start
        self._worker_cache = ""  # how the cache served the worker, for the report

    def argv(self) -> list[str]:
        build = otp.build_worker(self.installation)
        self._worker_cache = build.note
        boot = self.installation.boot
        schedulers = self.settings.schedulers
        return [
            str(self.installation.erl),
            *(["+S", f"{schedulers}:{schedulers}"] if schedulers else []),
            "-noshell",
            "-noinput",
            *(["-boot", str(boot)] if boot else []),
            # Logger's default handler writes to standard_io, and fd 1 is the
            # port: a report logged while crypto fails to load would land in
            # the frame stream. Send it to standard_error (OTP 21+).
            "-kernel",
            "logger",
            "[{handler,default,logger_std_h,#{config => #{type => standard_error}}}]",
            "-pa",
            str(build.path),
            *self._user_args(),
            "-s",
            "bridge_worker",
            "main",
        ]

    def _user_args(self) -> list[str]:
        """Only a run with user calls starts the node with them (bridge.runtimes.usercode)."""
        mine = self.user.of(RuntimeKind.ERLANG) if self.user is not None else ()
        if not mine:
            return []
        if self.user_dir is None:
            self.user_dir = usercode.UserDir()
        return usercode.erl_args(self.user, self.user_dir.write_erlang(mine))

    def child_env(self) -> dict[str, str]:
        env = otp.node_env(self.node_dir().crash_dump, self.extra_env())
        env["ERL_CRASH_DUMP_BYTES"] = str(CRASH_DUMP_BYTES)
        return env

    def worker_options(self) -> dict[str, Any]:
        return {
            "startup_hint": "" if self.installation.boot else "a ~/.erlang?",
            "postmortem": self.node_dir().postmortem,
        }

    def launch_options(self) -> Launch:
        return dataclasses.replace(
            super().launch_options(),
            # A wrapper erl (a shim) may choose its version by the directory.
            cwd=None if self.installation.wrapped else str(self.node_dir().path),
            channel_argv=channel_argv,
        )

    def explain(self, exc: WorkerError, job: Job) -> WorkerError:
        """A node that could not allocate: out of its memory limit, said so."""
        if OUT_OF_MEMORY not in exc.message:
            return exc
        dump = self.node_dir().crash_dump
        return WorkerError(
            f"{self.id}: {job.call.label(job.scenario, '')}: {memory_words(self.settings)};"
            f" crash dump: {dump}",
            runtime=self.id,
            stderr_tail=exc.stderr_tail,
        )

    def node_dir(self) -> otp.NodeDir:
        if self._node_dir is None:
            self._node_dir = otp.NodeDir()
        return self._node_dir

    def stop(self) -> None:
        try:
            super().stop()
        finally:  # the private directory goes even if stopping was interrupted
            if self._node_dir is not None:
                self._node_dir.close()  # kept if the node left a crash dump
                self._node_dir = None

    def tc(self, job: Job, n: int) -> dict[str, Any]:
        """The thread's harness: n calls timed one by one with timer:tc (us)."""
        assert self.worker is not None
        if not job.call.timer_tc:
            raise OperationError("unsupported", f"--method tc does not time {job.call.id}")
        args = {**job.wire_args(), "n": n}
        # timer:tc itself costs about a microsecond a call: allow 50 us each.
        timeout = n * 50e-6 + self.settings.timeout_slack_s
        try:
            reply = codec.props(self.worker.call("tc", args, timeout=timeout))
        except WorkerError as exc:
            raise self.explain(exc, job) from None
        return {k: text(v) if isinstance(v, bytes) else v for k, v in reply.items()}

    @contextlib.contextmanager
    def placed(self, job: Job, round_index: int, cpu: int | None) -> Iterator[dict[str, Any]]:
        """A TLS cell's server node runs below the worker: erl_child_setup
        forks it and it starts with erl_child_setup's affinity, which pinning
        the worker's threads leaves alone. For the batch, the server (and
        erl_child_setup, for a server node started in it) on the other CPUs,
        the worker on `cpu`, each told how many it has
        (bridge_tls:measuring/1); then both free (bridge.runtimes.pinning)."""
        if cpu is None or job.call.op not in calls.TLS_OPS or self.worker is None:
            yield {}
            return
        root = self.worker.pid
        assert root is not None
        server = self.pinning.apart([p.pid for p in fence.below(root)], round_index)
        try:
            yield {"client_cpus": 1, "server_cpus": len(server)}
        finally:
            # The server node may have started in the batch (its first cell).
            self.pinning.free([p.pid for p in fence.below(root)])

    def bench_level(self, job: Job, plan: LevelPlan) -> LevelRaw:
        """N processes in this node behind a barrier, with the scheduler
        probe (erl/bridge_concurrency.erl)."""
        assert self.worker is not None
        self.pinning.unpin(self.worker.pid)  # N processes want every CPU
        args = {**self.conc_args(job, plan, plan.level), "idle_probe_ms": plan.idle_probe_ms}
        reply = codec.props(self.worker.call("conc", args, timeout=self.conc_timeout(plan)))
        return level_batch(reply)

    def check_greeting(self, greeting: dict[str, Any]) -> None:
        if not greeting.get("crypto"):
            reason = text(greeting.get("crypto_error", b"")) or "unknown reason"
            raise RuntimeUnavailable(
                f"Erlang at {self.installation.erl} cannot use crypto: {reason}",
                hint=crypto_hint(reason),
            )

    def describe(self, info: dict[str, Any]) -> schema.Runtime:
        version = text(info["otp_version"])
        pid = self.worker.pid if self.worker else None
        crypto_info = {
            k: text(v) if isinstance(v, bytes) else v for k, v in info.get("crypto_info", [])
        }
        info_lib = [
            {"name": text(n), "version_number": num, "version_text": text(t)}
            for (n, num, t) in info.get("info_lib", [])
        ]
        apis = {k: text(v) for k, v in info.get("apis", [])}
        libcrypto = info_lib[0]["version_text"] if info_lib else ""
        return schema.Runtime(
            id=f"erlang@{version}",
            kind=RuntimeKind.ERLANG,
            executable=str(self.installation.erl),
            version=f"OTP {version}",
            details={
                "otp_release": text(info["otp_release"]),
                "otp_version": version,
                "erts_version": text(info["erts_version"]),
                "emu_flavor": str(info.get("emu_flavor", "")),
                "emu_type": str(info.get("emu_type", "")),
                "crypto_app_version": text(info.get("crypto_vsn", b"")),
                "crypto_lib": libcrypto,
                "crypto_info_lib": info_lib,
                "crypto_info": crypto_info,
                "apis": apis,
                "libcrypto_loaded": environment.loaded_libcrypto(pid),
                "schedulers_online": info.get("schedulers_online"),
                "clock": "erlang:monotonic_time(nanosecond)",
                "clock_resolution_hz": info.get("clock_resolution_hz"),
                "env": self.env_record(),
                "startup": otp.startup_record(self.installation, self._worker_cache),
            },
            hw=self.hw,
        )


def channel_argv(read_fd: int, write_fd: int) -> list[str]:
    """The node's channel descriptors, as erl/bridge_worker.erl reads them."""
    return ["-bridge_channel", str(read_fd), str(write_fd)]


def crypto_hint(reason: str) -> str | None:
    """What to do about crypto that cannot load, from what the node said:
    installing erlang-crypto helps only when the application is missing."""
    if "not installed" in reason:
        return (
            "install it with 'apt-get install erlang-crypto' (Debian/Ubuntu)"
            " or use an OTP built with OpenSSL"
        )
    if "cannot open shared object" in reason or "libcrypto" in reason:
        return (
            "the OpenSSL library this OTP was built against is not found: install it,"
            " or run this erl through a wrapper that sets LD_LIBRARY_PATH to it"
        )
    return None
