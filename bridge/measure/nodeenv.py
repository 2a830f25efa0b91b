"""`bridge env --node NAME@HOST`: probe running nodes without changing them,
and say where on this machine their libcrypto's A/B can be measured.

Each node is connected to, probed (bridge.runtimes.remote, measure=False:
nothing is loaded) and disconnected. The verdict and the A/B pointer come
from bridge.nodes.probe; the runtimes here that could run that A/B are the OTP
installations bridge finds, the openssl on PATH and this Python.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from dataclasses import dataclass

from bridge.catalog.vocab import COMMAND
from bridge.errors import RuntimeUnavailable, WorkerError
from bridge.hw import hardware
from bridge.nodes import probe
from bridge.nodes.distribution import NodePlan
from bridge.report import schema
from bridge.runtimes.relay import Relays
from bridge.runtimes.remote import RemoteRuntime
from bridge.settings import Settings
from bridge.system import discover, environment, proc


@dataclass(frozen=True)
class NodeEnv:
    runtimes: list[schema.Runtime]  # the nodes probed
    ab: dict[str, str]  # node runtime id -> the A/B sentence
    failed: list[str]  # one line per node that could not be probed


def probe_nodes(plan: NodePlan, settings: Settings) -> NodeEnv:
    relays = Relays()
    found, failed = [], []
    for target in plan.targets:
        rt = RemoteRuntime(target, plan, relays, settings)
        try:
            info = rt.start()
            found.append((info, rt.facts))
        except (RuntimeUnavailable, WorkerError) as exc:
            failed.append(exc.one_line())
        finally:
            rt.stop()
    local = local_libraries() if found else []
    cpu = environment.cpu()
    ab = {info.id: probe.local_ab(facts, local, cpu) for info, facts in found if facts}
    return NodeEnv([info for info, _ in found], ab, failed)


def local_libraries() -> list[probe.LocalLibrary]:
    """The libcrypto of each runtime on this machine that bridge could run an
    A/B with, Erlang first (the same path as the node's)."""
    out = []
    for found in discover.discover():
        if found.problem or not found.crypto_lib:
            continue
        out.append(
            probe.LocalLibrary(
                f"Erlang OTP {found.otp_version} ({found.erl})",
                found.crypto_lib,
                f"{COMMAND} run {{}} --runtimes erlang --erl {found.erl} --hw both",
            )
        )
    version = _openssl_version()
    if version:
        out.append(
            probe.LocalLibrary(
                f"the openssl CLI ({shutil.which('openssl')})",
                version,
                f"{COMMAND} run {{}} --runtimes openssl --hw both",
            )
        )
    out.append(
        probe.LocalLibrary(
            "this Python's hashlib",
            ssl.OPENSSL_VERSION,
            f"{COMMAND} run {{}} --runtimes python --hw both",
        )
    )
    return out


def _openssl_version() -> str:
    exe = shutil.which("openssl")
    if exe is None:
        return ""
    try:
        done = proc.run([exe, "version"], timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = done.stdout.decode("utf-8", "replace").strip()
    return text if hardware.parse_library(text) else ""
