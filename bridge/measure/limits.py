"""The machine's own best for an algorithm: `openssl speed -evp ALG -bytes
16384 -seconds 1 -mr`, hw as found, so that a cell's distance from the limit
is a number (bridge.analysis.cputime). Without -elapsed, speed divides by its
user CPU time, so a figure taken while other processes held the CPU is not
lowered by their time slices (only by what they do to the caches and a
shared core).

It is measured once per openssl binary, CPU model and algorithm, and kept a
day in bridge's cache (limits.json), so a run pays the second once. The
figure is the best seen: a run's own openssl -evp cell at 16 KiB (hw on)
replaces it when faster, and a figure measured on a loaded machine is
replaced by a later, faster one. The report says where each came from.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
from collections.abc import Sequence

from bridge import plain
from bridge.errors import UsageError
from bridge.report import schema
from bridge.system import cache, proc

SIZE = 16384
KEEP_S = 24 * 3600
MAX_CACHE_BYTES = 1 << 20
_MR = "+R:"


NAME = "limits.json"


def _read_cache() -> dict:
    """The kept figures; {} for a file that is missing, not a regular file
    (a FIFO no longer blocks), a link, garbled or too deep (bridge.system.cache)."""
    try:
        path = cache.directory(create=False) / NAME
        what = "not bridge's limits cache"
        text = plain.decode(cache.read_bytes(path, MAX_CACHE_BYTES), str(path), what)
        plain.check_json_depth(text, str(path))
        data = json.loads(text)
    except (UsageError, ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(data: dict) -> None:
    """Keep the figures; a cache that cannot be written is no error."""
    text = json.dumps(data, indent=1, sort_keys=True)
    with contextlib.suppress(OSError):
        cache.write_bytes(cache.directory() / NAME, text.encode())


def measure_best(executable: str, algorithm: str, timeout: float = 20) -> float | None:
    """bytes/s of one `openssl speed -evp` run at 16 KiB, or None."""
    argv = [executable, "speed", "-evp", algorithm, "-bytes", str(SIZE)]
    argv += ["-seconds", "1", "-mr"]
    try:
        done = proc.run(argv, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith(_MR):
            parts = line.strip().split(":")
            with contextlib.suppress(ValueError, IndexError):
                count, seconds = int(parts[1]), float(parts[3])
                if count > 0 and seconds > 0:
                    return count * SIZE / seconds
    return None


def _from_cells(results: Sequence[schema.Result], algorithm: str, scenarios: dict) -> float | None:
    """The run's own openssl -evp cell at 16 KiB, hw as found, in bytes/s."""
    best = None
    for r in results:
        if (
            r.ok
            and r.size == SIZE
            and not r.hw.masked
            and r.call_id == "speed-evp"
            and scenarios.get(r.scenario) == algorithm
            and r.samples
        ):
            rate = SIZE * 1e9 / r.median()
            best = rate if best is None else max(best, rate)
    return best


def collect(
    algorithms: Sequence[str],
    results: Sequence[schema.Result],
    scenario_algorithms: dict[str, str],
    executable: str | None,
    cpu_model: str,
) -> tuple[schema.Limit, ...]:
    """A Limit for each algorithm that has one (openssl found, speed knows it)."""
    executable = executable or shutil.which("openssl")
    kept = _read_cache()
    changed = False
    out = []
    now = time.time()
    for alg in algorithms:
        key = f"{executable}|{cpu_model}|{alg}"
        entry = kept.get(key)
        fresh = (
            isinstance(entry, dict)
            and isinstance(entry.get("bytes_per_s"), (int, float))
            and isinstance(entry.get("at"), (int, float))
            and now - entry["at"] < KEEP_S
        )
        rate, source = None, ""
        if fresh:
            rate = float(entry["bytes_per_s"])
            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(entry["at"]))
            source = f"openssl speed -evp {alg} -bytes {SIZE} (user CPU), measured {when}"
        elif executable:
            rate = measure_best(executable, alg)
            if rate is not None:
                source = f"openssl speed -evp {alg} -bytes {SIZE} (user CPU), measured in this run"
                kept[key] = {"bytes_per_s": rate, "at": now}
                changed = True
        own = _from_cells(results, alg, scenario_algorithms)
        if own is not None and (rate is None or own > rate):
            rate, source = own, f"this run's openssl speed -evp {alg} cell at {SIZE} B"
            kept[key] = {"bytes_per_s": own, "at": now}
            changed = True
        if rate is not None:
            out.append(schema.Limit(alg, round(rate), source))
    if changed:
        _write_cache(kept)
    return tuple(out)
