"""What bridge loads into a running node for `--measure`: bridge_agent and
the measurement modules it calls, renamed and compiled for the node's release.

- Renamed: every module becomes bridge_node_<tag>_<job> (bridge_ops ->
  bridge_node_3fa9c2d1_ops), where <tag> hashes the sources. Nothing bridge
  loads can clash with the node's own code or with a bridge worker, and the
  common prefix tells bridge_remote that another bridge is already measuring
  the node.
- Compiled by the node's release, or the nearest older one bridge can find:
  a .beam from a newer OTP does not load on an older one (OTP 23 refuses
  OTP 25's opcodes), while OTP loads code from up to two releases back.
  The candidates are the erl bridge runs its own node with, every --erl, and
  what `bridge otp list` finds (BRIDGE_OTP_PATH included).

Builds are cached like the worker (bridge.system.otp.worker_beams): one directory per
compiler and source hash, written privately and renamed into place.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bridge import plain
from bridge.errors import RuntimeUnavailable
from bridge.system import otp, proc

# The modules loaded into a node: the agent and everything a bench request
# reaches (bridge_ops -> bridge_args, bridge_api, bridge_loops,
# bridge_measure, bridge_concurrency; bridge_agent -> bridge_info).
SOURCES = (
    "bridge_agent",
    "bridge_ops",
    "bridge_args",
    "bridge_api",
    "bridge_loops",
    "bridge_measure",
    "bridge_concurrency",
    "bridge_alt",
    "bridge_info",
)
PREFIX = "bridge_node_"
# OTP loads code compiled by up to two releases back.
LOAD_WINDOW = 2


@dataclass(frozen=True)
class Build:
    prefix: str  # bridge_node_<tag>_: every module's name starts with it
    agent: str  # the renamed bridge_agent
    beams: tuple[tuple[str, bytes], ...]  # (module, .beam) in load order
    compiled_by: str  # the OTP version of the erlc that built them

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(m for m, _ in self.beams)


def tag() -> str:
    h = hashlib.sha256()
    for module in SOURCES:
        h.update(module.encode() + b"\0" + (otp.ERL_SOURCES_DIR / f"{module}.erl").read_bytes())
    return h.hexdigest()[:8]


def renamed(module: str, t: str) -> str:
    return f"{PREFIX}{t}_{module.removeprefix('bridge_')}"


def rename_source(text: str, mapping: dict[str, str]) -> str:
    """Every occurrence of a module name as a whole word (module attribute,
    remote calls, -import, remote types, comments) becomes its new name.
    bridge_measure_pace is a different word and stays."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def major(version: str) -> int:
    head = version.split(".")[0]
    return plain.whole_number(head) or 0


def choose(candidates: Iterable[otp.Installation], release: int) -> otp.Installation | None:
    """The installation whose release is the newest that is not newer than
    the node's, within the load window."""
    fitting = [inst for inst in candidates if 0 <= release - major(inst.otp_version) <= LOAD_WINDOW]
    return max(fitting, key=lambda i: otp.version_key(i.otp_version), default=None)


def build(inst: otp.Installation) -> Build:
    t = tag()
    mapping = {m: renamed(m, t) for m in SOURCES}
    where = hashlib.sha256(str(inst.erl.resolve()).encode()).hexdigest()[:8]
    target = otp.cache_root() / "agent" / f"otp-{inst.otp_version or 'unknown'}-{where}-{t}"
    if not all((target / f"{mapping[m]}.beam").is_file() for m in SOURCES):
        _compile(inst, mapping, target)
    return Build(
        prefix=f"{PREFIX}{t}_",
        agent=mapping["bridge_agent"],
        beams=tuple((mapping[m], (target / f"{mapping[m]}.beam").read_bytes()) for m in SOURCES),
        compiled_by=inst.otp_version,
    )


def _compile(inst: otp.Installation, mapping: dict[str, str], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        sources = []
        for module, new in mapping.items():
            text = (otp.ERL_SOURCES_DIR / f"{module}.erl").read_text()
            path = staging / f"{new}.erl"
            path.write_text(rename_source(text, mapping))
            sources.append(str(path))
        try:
            done = proc.run(
                [str(inst.erlc), "-o", str(staging), *sources], env=proc.erlang_env(), timeout=120
            )
        except subprocess.TimeoutExpired:
            raise RuntimeUnavailable(f"{inst.erlc} took over 120 s to compile") from None
        except OSError as exc:
            raise RuntimeUnavailable(f"cannot run {inst.erlc}: {exc.strerror}") from None
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).decode("utf-8", "replace").strip()[-400:]
            raise RuntimeUnavailable(f"{inst.erlc} could not compile bridge's agent: {tail}")
        for path in sources:
            Path(path).unlink()
        try:
            staging.rename(target)
        except OSError:
            # Another bridge built the same key at the same time: use theirs.
            if not target.is_dir():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
