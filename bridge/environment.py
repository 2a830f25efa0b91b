"""Small collectors that fill the report's `environment` block.

Each collector may fail alone (a missing /proc file, an odd OS) and then
contributes nothing; none of them copies the process environment.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

# The CPU flags that matter for crypto (see crypto-facts.md §3).
X86_CRYPTO_FLAGS = (
    "sha_ni",
    "aes",
    "pclmulqdq",
    "ssse3",
    "avx",
    "avx2",
    "bmi1",
    "bmi2",
    "adx",
    "vaes",
    "vpclmulqdq",
    "sha512",
    "hypervisor",
)
ARM_CRYPTO_FLAGS = ("aes", "pmull", "sha1", "sha2", "sha512", "sha3", "asimd")


def collect() -> dict[str, Any]:
    env: dict[str, Any] = {}
    for collector in (collect_cpu, collect_os):
        try:
            env.update(collector())
        except (OSError, ValueError):
            continue
    return env


def collect_cpu(cpuinfo: str | None = None) -> dict[str, Any]:
    if cpuinfo is None:
        cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    parsed = parse_cpuinfo(cpuinfo)
    return {
        "cpu_model": parsed["model"] or platform.processor() or "unknown",
        "arch": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpu_flags": parsed["crypto_flags"],
        "virtualized": "hypervisor" in parsed["all_flags"],
    }


def parse_cpuinfo(text: str) -> dict[str, Any]:
    model = ""
    flags: set[str] = set()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key in ("model name", "cpu model", "hardware") and not model:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    wanted = X86_CRYPTO_FLAGS + ARM_CRYPTO_FLAGS
    crypto = sorted(f for f in flags if f in wanted or f.startswith("avx512"))
    return {"model": model, "crypto_flags": crypto, "all_flags": flags}


def collect_os() -> dict[str, Any]:
    pretty = ""
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {"os": pretty or platform.system(), "kernel": platform.release()}


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
