"""What the machine has to run N workers on: logical CPUs, the CPUs this
process may use, physical cores, SMT siblings, sockets, the load average (a
shared machine's other work competes with every level), and whether Linux's
autogroup shares the CPU between sessions first.

Small collectors, each may fail alone; tested on canned sysfs/cpuinfo text.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from bridge.report.levels import Machine

SYS_CPU = Path("/sys/devices/system/cpu")


def collect(sys_cpu: Path = SYS_CPU, cpuinfo: str | None = None) -> Machine:
    logical = os.cpu_count()
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    cores, sockets = _from_sysfs(sys_cpu)
    if cores is None:
        cores, sockets = _from_cpuinfo(cpuinfo)
    return Machine(
        logical_cpus=logical,
        usable_cpus=usable,
        physical_cores=cores,
        smt_siblings=(logical // cores) if logical and cores else None,
        sockets=sockets,
        loadavg_start=loadavg(),
        autogroup=autogroup(),
    )


def autogroup(path: Path = Path("/proc/sys/kernel/sched_autogroup_enabled")) -> bool | None:
    try:
        return path.read_text().strip() == "1"
    except OSError:
        return None


def loadavg(read: Callable[[], tuple[float, float, float]] = os.getloadavg):
    try:
        one, five, fifteen = read()
    except OSError:
        return None
    return (round(one, 2), round(five, 2), round(fifteen, 2))


def _from_sysfs(sys_cpu: Path) -> tuple[int | None, int | None]:
    """Distinct (package, core) pairs over the online CPUs' topology files."""
    pairs, packages = set(), set()
    try:
        cpus = [p for p in sys_cpu.glob("cpu[0-9]*") if (p / "topology").is_dir()]
        for cpu in cpus:
            package = (cpu / "topology" / "physical_package_id").read_text().strip()
            core = (cpu / "topology" / "core_id").read_text().strip()
            pairs.add((package, core))
            packages.add(package)
    except OSError:
        return None, None
    return (len(pairs) or None), (len(packages) or None)


def _from_cpuinfo(text: str | None) -> tuple[int | None, int | None]:
    """x86 /proc/cpuinfo: distinct (physical id, core id) pairs."""
    if text is None:
        try:
            text = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            return None, None
    pairs, packages = set(), set()
    package = core = None
    for line in [*text.splitlines(), ""]:
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "physical id":
            package = value.strip()
        elif key == "core id":
            core = value.strip()
        elif not line.strip() and package is not None and core is not None:
            pairs.add((package, core))
            packages.add(package)
            package = core = None
    return (len(pairs) or None), (len(packages) or None)
