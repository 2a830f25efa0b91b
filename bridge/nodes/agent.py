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

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bridge import plain
from bridge.errors import RuntimeUnavailable
from bridge.system import cache, otp, proc

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


# Bound on a compiled module read back (they are tens of KiB).
MAX_BEAM_BYTES = 1 << 24


def build(inst: otp.Installation) -> Build:
    t = tag()
    mapping = {m: renamed(m, t) for m in SOURCES}
    where = hashlib.sha256(str(inst.erl.resolve()).encode()).hexdigest()[:8]
    name = f"otp-{inst.otp_version or 'unknown'}-{where}-{t}"
    place = cache.directory_or_none("agent")
    if place is None:  # a cache bridge cannot use: build apart, once
        with tempfile.TemporaryDirectory(prefix="bridge-agent-") as tmp:
            _compile(inst, mapping, Path(tmp) / name)
            beams = _read_beams(Path(tmp) / name, mapping)
    else:
        target = place / name
        beams = _read_beams(target, mapping)
        if beams is None:
            if os.path.lexists(target):
                # A link, or a part missing or damaged; what cannot be moved
                # aside makes the rename below fail, with its reason.
                with contextlib.suppress(OSError):
                    cache.discard(target)
            _compile(inst, mapping, target)
            beams = _read_beams(target, mapping)
    if beams is None:
        raise RuntimeUnavailable(f"bridge's agent, compiled by {inst.erlc}, cannot be read back")
    return Build(
        prefix=f"{PREFIX}{t}_",
        agent=mapping["bridge_agent"],
        beams=beams,
        compiled_by=inst.otp_version,
    )


def _read_beams(target: Path, mapping: dict[str, str]) -> tuple[tuple[str, bytes], ...] | None:
    """Each renamed module's .beam in `target`, read without following a
    link (bridge.system.cache); None when one is missing or unreadable."""
    if not cache.is_real_directory(target):
        return None
    try:
        return tuple(
            (mapping[m], cache.read_bytes(target / f"{mapping[m]}.beam", MAX_BEAM_BYTES))
            for m in SOURCES
        )
    except OSError:
        return None


def _compile(inst: otp.Installation, mapping: dict[str, str], target: Path) -> None:
    try:
        staging = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    except OSError as exc:
        raise RuntimeUnavailable(
            f"cannot compile bridge's agent in {target.parent}: {exc.strerror or exc}"
        ) from None
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
        except OSError as exc:
            # Another bridge built the same key at the same time: use theirs.
            if not cache.is_real_directory(target):
                raise RuntimeUnavailable(
                    f"cannot keep bridge's agent in {target}: {exc.strerror or exc}"
                ) from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
