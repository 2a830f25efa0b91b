"""bridge's own node on Erlang distribution (erl/bridge_remote.erl): the
local Erlang worker, started for --node only, that connects to running nodes
and relays bridge's requests to them.

It is started as

    erl -noshell -noinput -hidden -dist_listen false -nocookie
        -kernel dist_auto_connect never -pa CACHE -s bridge_worker main

- no -sname/-name: distribution starts only when the first node_connect
  arrives, with the name the driver chose (bridge.nodes.distribution.own_name);
- -dist_listen false (OTP 23+): it never listens, so it takes no port and
  registers with no epmd, and it needs none running here. -hidden goes with
  it: it joins no cluster, and the node sees it only in nodes(hidden);
- -nocookie: it never reads or creates ~/.erlang.cookie. The cookie for each
  node arrives in the node_connect request, over the worker's stdin, and
  is handed to erlang:set_cookie/2 for that node only;
- dist_auto_connect never: a node that went away stays away; bridge does
  not silently measure a restarted one.

One relay serves every node of one name kind (short or long names cannot
mix on one node), and stops when the last of them is done.
"""

from __future__ import annotations

from typing import Any

from bridge import plain
from bridge.errors import RuntimeUnavailable
from bridge.system import otp
from bridge.system.proc import erlang_env
from bridge.wire import codec
from bridge.wire.codec import text
from bridge.wire.port import Worker

# -dist_listen arrived in OTP 23 (kernel 7.0).
MIN_RELAY_RELEASE = 23
# The relay answers before the driver gives up on it: every request carries
# the node-side timeout, and the driver waits this much longer.
MARGIN_S = 10.0


def argv(inst: otp.Installation) -> list[str]:
    return [
        str(inst.erl),
        "-noshell",
        "-noinput",
        "-hidden",
        "-dist_listen",
        "false",
        "-nocookie",
        "-kernel",
        "dist_auto_connect",
        "never",
        "-pa",
        str(otp.worker_beams(inst)),
        "-s",
        "bridge_worker",
        "main",
    ]


class Relay:
    def __init__(self, inst: otp.Installation, domain: str) -> None:
        self.inst = inst
        self.domain = domain
        self.worker: Worker | None = None
        self.users = 0

    @property
    def name(self) -> str:
        return f"bridge's node ({self.domain})"

    @property
    def pid(self) -> int | None:
        return self.worker.pid if self.worker else None

    def start(self) -> None:
        # No crash dump: it would hold the atom table, and with it the cookie.
        env = erlang_env({"ERL_CRASH_DUMP_SECONDS": "0"})
        worker = Worker(self.name, argv(self.inst), env, start_timeout=30.0)
        worker.start()
        release = text(worker.greeting.get("otp_release", b""))
        number = plain.whole_number(release)
        if number is None or number < MIN_RELAY_RELEASE:
            worker.close()
            raise RuntimeUnavailable(
                f"bridge's own node runs {self.inst.erl} (OTP {release or '?'}), which cannot"
                f" connect without listening (-dist_listen false needs OTP {MIN_RELAY_RELEASE}+)",
                hint="put a newer erl first on PATH",
            )
        self.worker = worker

    def call(self, op: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """One request; the node side gets timeout_s, this side a margin more.
        Raises OperationError for a refusal, WorkerError when the relay
        itself died or hung."""
        assert self.worker is not None
        wire = {**args, "timeout_ms": max(1, int(timeout_s * 1000))}
        return codec.props(self.worker.call(op, wire, timeout=timeout_s + MARGIN_S))

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None


class Relays:
    """The relays of one run, one per name kind, started on first use and
    stopped when their last node is done. They run the erl on PATH, or the
    first --erl when there is none."""

    def __init__(self, fallback: otp.Installation | None = None) -> None:
        self._fallback = fallback
        self._inst: otp.Installation | None = None
        self._relays: dict[str, Relay] = {}

    def installation(self) -> otp.Installation:
        if self._inst is None:
            try:
                self._inst = otp.locate(None)
            except RuntimeUnavailable:
                if self._fallback is None:
                    raise
                self._inst = self._fallback
        return self._inst

    def acquire(self, domain: str) -> Relay:
        relay = self._relays.get(domain)
        if relay is None or relay.worker is None:
            relay = Relay(self.installation(), domain)
            relay.start()
            self._relays[domain] = relay
        relay.users += 1
        return relay

    def release(self, relay: Relay) -> None:
        relay.users -= 1
        if relay.users <= 0:
            relay.stop()
            self._relays.pop(relay.domain, None)
