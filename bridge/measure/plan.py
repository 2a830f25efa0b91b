"""What a run will do: the scenarios, the runtimes, the hw mode and the
settings, decided before anything starts (bridge.cli.plans makes one from the
command line or a saved report; bridge.measure.runner carries it out)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bridge.catalog import calls
from bridge.catalog.scenario import Scenario
from bridge.nodes.distribution import NodePlan
from bridge.report.hw import HwMode
from bridge.runtimes.usercode import UserCode, plan_code

__all__ = ["Plan", "UserCode", "plan_code"]  # plan_code: the user calls' code, for the commands
from bridge.settings import Settings
from bridge.system.libcrypto import Directory


@dataclass(frozen=True)
class Plan:
    scenarios: tuple[Scenario, ...]
    settings: Settings
    seed: int
    erl: tuple[str | None, ...] = (None,)  # None: the erl on PATH
    openssl: tuple[str | None, ...] = (None,)
    python: tuple[str | None, ...] = (None,)
    kinds: tuple[str, ...] = calls.RUNTIME_KINDS
    hw: HwMode = HwMode.ON  # as found, features masked, or an A/B of the two
    command: tuple[str, ...] = ()
    reproduce: str = ""
    nodes: NodePlan | None = None  # --node: running nodes, measured over distribution
    # Per kind, the variables each of its runtimes was given (--env), in the
    # order of erl / python / openssl above.
    env: Mapping[str, tuple[Mapping[str, str], ...]] = field(default_factory=dict)
    # --libcrypto: every runtime again with each directory's library.
    libcrypto: tuple[Directory, ...] = ()
    # The user's calls with their code paths (bridge time, [[calls]]): None
    # unless the command line brought them, and then no runtime has a user path.
    user: UserCode | None = None
