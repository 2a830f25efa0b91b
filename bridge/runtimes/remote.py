"""A running Erlang node, reached over Erlang distribution through bridge's
own hidden node (bridge.runtimes.relay): probed read-only for `bridge env
--node`, and measured with `bridge run --node NAME@HOST --measure`.

Starting one connects (bridge_remote checks the node's epmd, cookie and
release), probes it, and for --measure loads bridge's agent, renamed and
compiled for the node's release (bridge.nodes.agent). Its results come back as the
runtime erlang@<OTP>@<node>, with the same calls, checks and report as a
local Erlang runtime, measured under a duty cycle (--max-load).

Stopping it purges the agent and checks that it is gone; every path that
does not get that far (bridge killed, the connection lost) is covered by the
agent's guard on the node, which purges it when bridge's node goes down.

Failure policy, as the session sees it: a node that cannot be reached, that
refuses the cookie, or that runs a release too old is *skipped* with a
one-line reason; a node that disappears or stops answering mid-run is an
error of that runtime only (WorkerError): the other nodes carry on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, RuntimeUnavailable, WorkerError
from bridge.nodes import agent, probe
from bridge.nodes.distribution import NodeName, NodePlan, own_name
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.runtimes.base import Batch, BatchPlan, Job, Runtime, RuntimeSpec
from bridge.runtimes.relay import Relays
from bridge.settings import Settings
from bridge.system import discover, otp
from bridge.wire.codec import text

# Replies that mean the node, not the call, is the problem.
NODE_GONE = ("nodedown", "timeout")
# A probe makes about twenty calls; each gets this long.
PROBE_CALL_S = 15.0
NOT_HERE = (
    "a file-digest scenario reads a file that bridge writes on its own machine,"
    " which a node may not see"
)


class Compilers:
    """The OTP installations that can build the agent for a node's release:
    the relay's and every --erl first, then whatever discovery finds (only
    when those do not fit: discovery starts every erl it finds)."""

    def __init__(self, known: Sequence[otp.Installation]) -> None:
        self.known = list(known)
        self._discovered = False

    def for_release(self, release: int, relay: otp.Installation) -> otp.Installation:
        if relay not in self.known:
            self.known.insert(0, relay)
        inst = agent.choose(self.known, release)
        if inst is None and not self._discovered:
            self._discovered = True
            self.known += _discovered()
            inst = agent.choose(self.known, release)
        if inst is None:
            have = ", ".join(sorted({i.otp_version for i in self.known})) or "none"
            raise RuntimeUnavailable(
                f"bridge compiles its agent with the node's OTP {release} or up to"
                f" {agent.LOAD_WINDOW} releases older, and found none here (have: {have})",
                hint="name one with --erl PATH or BRIDGE_OTP_PATH",
            )
        return inst


def _discovered() -> list[otp.Installation]:
    out = []
    for found in discover.discover():
        if found.problem:
            continue
        with contextlib.suppress(Exception):
            out.append(otp.locate(str(found.erl)))
    return out


class RemoteRuntime(Runtime):
    kind = RuntimeKind.ERLANG

    def __init__(
        self,
        target: NodeName,
        plan: NodePlan,
        relays: Relays,
        settings: Settings,
        compilers: Compilers | None = None,
    ) -> None:
        super().__init__(settings, Hw.ON, None)
        self.target = target
        self.plan = plan
        self.relays = relays
        self.compilers = compilers
        self.id = f"erlang@{target}"
        self.relay = None
        self.build: agent.Build | None = None
        self.facts: probe.NodeFacts | None = None
        self._problems: list[schema.RunError] = []

    # -- start ----------------------------------------------------------------

    def start(self) -> schema.Runtime:
        self.relay = self.relays.acquire(self.target.domain)
        try:
            self._connect()
            self.facts = self._probe()
            before = self.facts.crypto_loaded
            if self.plan.measure:
                self._load()
                if not before:
                    self.facts = self._probe()  # the agent loaded crypto: now it can say
            info = describe(self.facts, self.target, self.plan, self.build, before)
        except BaseException:
            self.stop()
            raise
        self.rename(info.id)
        return info

    def _connect(self) -> None:
        args = {
            "node": str(self.target),
            "names": self.target.domain,
            "self": own_name(self.target.domain),
            "cookie": self.plan.cookie(),
        }
        try:
            self._call("node_connect", args, self.plan.connect_timeout)
        except OperationError as exc:
            hint = f"cookie from {self.plan.cookie_source}" if exc.kind == "refused" else None
            raise RuntimeUnavailable(self._about(exc.message), hint=hint) from None

    def _probe(self) -> probe.NodeFacts:
        try:
            props = self._call("node_probe", {"node": str(self.target)}, PROBE_CALL_S)
        except OperationError as exc:
            raise RuntimeUnavailable(self._about(f"the probe failed: {exc.message}")) from None
        return probe.from_props(str(self.target), props)

    def _load(self) -> None:
        assert self.facts is not None
        compilers = self.compilers or Compilers([])
        inst = compilers.for_release(
            agent.major(self.facts.otp_release), self.relays.installation()
        )
        build = agent.build(inst)
        args = {
            "node": str(self.target),
            "prefix": build.prefix,
            "agent": build.agent,
            "beams": list(build.beams),
        }
        try:
            self._call("node_load", args, PROBE_CALL_S)
        except OperationError as exc:
            raise RuntimeUnavailable(self._about(exc.message)) from None
        self.build = build

    def _about(self, message: str) -> str:
        name = str(self.target)
        return message if message.startswith(name) else f"{name}: {message}"

    def _call(self, op: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        assert self.relay is not None
        try:
            return self.relay.call(op, args, timeout_s)
        except WorkerError as exc:
            raise WorkerError(
                f"{self.id}: bridge's node failed: {exc.message}",
                runtime=self.id,
                stderr_tail=exc.stderr_tail,
            ) from None

    # -- measure ----------------------------------------------------------------

    def bench(self, job: Job, plan: BatchPlan) -> Batch:
        if self.build is None:
            raise OperationError("unsupported", "the node was probed, not measured (--measure)")
        if job.call.op == "hash_file":
            raise OperationError("unsupported", NOT_HERE)
        request = {
            **job.wire_args(),
            "warmup_ns": plan.warmup_ms * 1_000_000,
            "sample_ns": self.settings.sample_ms * 1_000_000,
            "samples": plan.samples,
            "load_permille": max(1, round(self.plan.max_load * 1000)),
        }
        if plan.loops:
            request["loops"] = plan.loops
        # Spread out by the duty cycle, the same work takes 1/max_load as long;
        # the slack for a slow machine stays what --request-timeout says.
        slack = self.settings.timeout_slack_s
        planned = self.settings.bench_timeout(plan.warmup_ms, plan.samples) - slack
        timeout = planned / self.plan.max_load + slack
        args = {"node": str(self.target), "agent": self.build.agent, "bench": request}
        try:
            reply = self._call("node_bench", args, timeout)
        except OperationError as exc:
            if exc.kind in NODE_GONE:
                raise WorkerError(f"{self.id}: {exc.message}", runtime=self.id) from None
            raise
        loops = int(reply["loops"])
        return Batch(
            api=text(reply["api"]),
            samples=[int(s) for s in reply["samples"]],
            loops=[loops] * len(reply["samples"]),
            output=reply["output"],
        )

    def tc(self, job: Job, n: int) -> dict[str, Any]:
        # The thread's harness makes a million calls back to back: no duty
        # cycle bounds it, so it does not run on a node someone else uses.
        raise OperationError("unsupported", "--method tc runs on local Erlang runtimes only")

    # -- stop -------------------------------------------------------------------

    def stop(self) -> None:
        relay, self.relay = self.relay, None
        if relay is None:
            return
        try:
            if self.build is not None and relay.worker is not None:
                self._purge(relay)
            if relay.worker is not None:
                with contextlib.suppress(OperationError, WorkerError):
                    relay.call("node_disconnect", {"node": str(self.target)}, 5.0)
        finally:
            self.relays.release(relay)

    def _purge(self, relay) -> None:
        assert self.build is not None
        args = {"node": str(self.target), "modules": list(self.build.modules)}
        try:
            left = [text(m) for m in relay.call("node_purge", args, PROBE_CALL_S)["left"]]
        except OperationError as exc:
            if exc.kind == "nodedown":
                return  # gone with the node, or purged there by the agent's guard
            left, why = list(self.build.modules), exc.message
        except WorkerError as exc:
            left, why = list(self.build.modules), exc.message
        else:
            why = "still loaded after the purge"
        if left:
            self._problems.append(
                schema.RunError(
                    self.id,
                    "node",
                    f"{self.target}: bridge's modules {', '.join(left)}: {why} (its guard"
                    " removes them when bridge's node disconnects)",
                )
            )
        else:
            self.build = None

    def problems(self) -> list[schema.RunError]:
        return list(self._problems)


def describe(
    f: probe.NodeFacts,
    target: NodeName,
    plan: NodePlan,
    build: agent.Build | None,
    crypto_loaded_before: bool,
) -> schema.Runtime:
    """The node as a runtime of the report: the provenance a local Erlang
    runtime has, the node's own host and environment, and how bridge
    reached it. crypto_loaded_before: whether crypto was loaded before bridge
    came (its agent loads it to measure)."""
    version = f.otp_version or f.otp_release
    cpu = f.cpu
    node: dict[str, Any] = {
        "name": str(target),
        "host": target.host,
        "hostname": f.hostname,
        "os_pid": f.os_pid,
        "os": f.os_type,
        "code_mode": f.code_mode,
        "cpu": None
        if cpu is None
        else {
            "model": cpu.model,
            "arch": cpu.arch,
            "flags": cpu.crypto_flags,
            "virtualized": cpu.virtualized,
        },
        "crypto_loaded_before": crypto_loaded_before,
        **({"maps_error": f.maps_error} if f.maps_error else {}),
        "provenance": probe.verdict(f),
        "reached_by": "Erlang distribution: bridge's hidden node, connecting out only",
    }
    if build is not None:
        node["agent"] = {
            "modules": list(build.modules),
            "compiled_by": f"OTP {build.compiled_by}",
            "max_load": plan.max_load,
        }
    details = {
        "otp_release": f.otp_release,
        "otp_version": version,
        "erts_version": f.erts_version,
        "emu_flavor": f.emu_flavor,
        "crypto_app_version": f.crypto_app_version,
        "crypto_lib": f.crypto_lib,
        "crypto_info_lib": [
            {"name": n, "version_number": v, "version_text": t} for n, v, t in f.info_lib
        ],
        "crypto_info": f.crypto_info,
        "crypto_fips": f.info_fips,
        "libcrypto_loaded": list(f.libcrypto_mapped),
        "schedulers_online": f.schedulers_online,
        "clock": "erlang:monotonic_time(nanosecond)",
        "env": dict(f.env),
        "node": node,
    }
    return schema.Runtime(
        id=f"erlang@{version}@{target}",
        kind=RuntimeKind.ERLANG,
        executable=str(target),
        version=f"OTP {version}",
        details=details,
        hw=Hw.ON,
    )


def specs(
    plan: NodePlan, settings: Settings, known: Sequence[otp.Installation]
) -> list[RuntimeSpec]:
    """One spec per node, sharing the relays and the compilers. A node is
    never masked (maskable=False): its libcrypto read its variables when it
    started."""
    relays = Relays(known[0] if known else None)
    compilers = Compilers(known)
    return [
        RuntimeSpec(
            RuntimeKind.ERLANG,
            str(t),
            lambda hw, env, t=t: RemoteRuntime(t, plan, relays, settings, compilers),
            maskable=False,
        )
        for t in plan.targets
    ]
