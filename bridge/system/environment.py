"""Small collectors that fill the report's `environment` block.

Each collector may fail alone (a missing /proc file, an odd OS) and then
contributes nothing; none of them copies the process environment.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from bridge.hw import hardware


def collect() -> dict[str, Any]:
    env: dict[str, Any] = {}
    for collector in (collect_cpu, collect_os, collect_cpufreq, collect_smt):
        try:
            env.update(collector())
        except (OSError, ValueError):
            continue
    return env


def cpu(cpuinfo: str | None = None, arch: str | None = None) -> hardware.Cpu:
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            cpuinfo = ""
    return hardware.parse_cpuinfo(cpuinfo, arch or platform.machine())


def collect_cpu(cpuinfo: str | None = None) -> dict[str, Any]:
    found = cpu(cpuinfo)
    return {
        "cpu_model": found.model,
        "arch": found.arch,
        "cpu_count": os.cpu_count(),
        "cpu_flags": found.crypto_flags,
        "virtualized": found.virtualized,
        "features": {f: found.has(f) for f in hardware.FEATURES if found.has(f) is not None},
    }


def collect_os() -> dict[str, Any]:
    pretty = ""
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {"os": pretty or platform.system(), "kernel": platform.release()}


def collect_cpufreq() -> dict[str, Any]:
    """The frequency governor and turbo state, where the kernel exposes them
    (often not inside a VM): 'powersave' or a busy neighbour moves numbers."""
    out: dict[str, Any] = {}
    base = Path("/sys/devices/system/cpu")
    governor = base / "cpu0" / "cpufreq" / "scaling_governor"
    if governor.exists():
        out["cpu_governor"] = governor.read_text().strip()
    for path, key, invert in (
        (base / "intel_pstate" / "no_turbo", "turbo", True),
        (base / "cpufreq" / "boost", "turbo", False),
    ):
        if path.exists():
            value = path.read_text().strip() == "1"
            out[key] = (not value) if invert else value
    return out


def collect_smt(base: Path = Path("/sys/devices/system/cpu")) -> dict[str, Any]:
    """SMT siblings: CPUs that share one core (hyperthreads). A busy process
    on a sibling slows the measured one. Only groups of two or more."""
    groups: list[list[int]] = []
    for path in sorted(base.glob("cpu[0-9]*/topology/thread_siblings_list")):
        group = parse_cpu_list(path.read_text())
        if len(group) > 1 and group not in groups:
            groups.append(group)
    return {"smt_siblings": groups} if base.is_dir() else {}


def parse_cpu_list(text: str) -> list[int]:
    """The kernel's CPU list format: "0-3,8,10-11"."""
    cpus: list[int] = []
    for piece in text.strip().split(","):
        if not piece:
            continue
        lo, _, hi = piece.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def loaded_libcrypto(pid: int | None) -> list[str]:
    """The libcrypto files a process has mapped: what it really uses, which can
    differ from what its version string or PATH suggest."""
    if pid is None:
        return []
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return []
    found = []
    for line in maps.splitlines():
        path = line.split()[-1] if line.split() else ""
        if "libcrypto" in os.path.basename(path) and path not in found:
            found.append(path)
    return found
