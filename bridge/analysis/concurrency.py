"""Crypto under concurrency: how each runtime runs N workers at once (its
*modes*), and the figures across levels: scaling with a bootstrap CI,
efficiency, oversubscription, the output check, and the warnings. Pure.

Vocabulary (docs/guide/concurrency.md):
- level N: N workers of the same call over the same time windows, all
  started together;
- mode: how the N run. Erlang: processes in one node. Python: threads in one
  interpreter (the GIL), or separate worker processes. openssl: `speed
  -multi N` (forked processes);
- scaling: throughput(N) / throughput(1); efficiency: scaling / N.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bridge import plain, stats
from bridge.analysis import interop
from bridge.catalog import calls
from bridge.catalog.inputs import Inputs
from bridge.catalog.scenario import FileDigestScenario, Scenario, SignatureScenario
from bridge.crypto import ec
from bridge.report.levels import Concurrency, LevelResult, Machine, Scaling

# Fewer windows (or openssl runs) than this at either level: no CI.
MIN_FOR_CI = 3
MAX_LEVEL = 1024
# A window lasts at least this long: ten times Python's GIL switch interval
# (5 ms) and longer than the kernel hands a busy CPU to one thread, so every
# worker gets its turns in every window. With --sample-ms 5 windows, two
# threads each missed whole windows (measured on this project's VM).
WINDOW_MIN_MS = 50


def window_ms(sample_ms: int) -> int:
    return max(sample_ms, WINDOW_MIN_MS)


@dataclass(frozen=True)
class Mode:
    kind: str  # runtime kind
    name: str  # processes | threads | multi
    semantics: str
    noun: str  # what N of them are, for labels
    one: str  # ... and one of them

    def label(self, call_label: str, n: int) -> str:
        if self.kind == "openssl":
            return call_label.replace("openssl speed", f"openssl speed -multi {n}", 1)
        return f"{call_label} ×{n} {self.noun if n > 1 else self.one}"

    def describe(self, base_semantics: str) -> str:
        return f"{base_semantics}; {self.semantics}"


ERLANG_PROCESSES = Mode(
    "erlang",
    "processes",
    "N Erlang processes in one node, released together by a barrier; the node's"
    " schedulers share them",
    "processes",
    "process",
)
PYTHON_THREADS = Mode(
    "python",
    "threads",
    "N threads in one interpreter: they share the GIL, which hashlib releases only"
    " for inputs of 2048 bytes or more",
    "threads",
    "thread",
)
PYTHON_PROCESSES = Mode(
    "python",
    "processes",
    "N worker processes, one interpreter each, started together on the shared CLOCK_MONOTONIC",
    "processes",
    "process",
)
OPENSSL_MULTI = Mode(
    "openssl",
    "multi",
    "openssl speed -multi N: N forked processes, each counting its own calls for the"
    " same seconds; the counts are summed",
    "processes",
    "process",
)
MODES: dict[str, tuple[Mode, ...]] = {
    "erlang": (ERLANG_PROCESSES,),
    "python": (PYTHON_THREADS, PYTHON_PROCESSES),
    "openssl": (OPENSSL_MULTI,),
}


def mode(kind: str, name: str) -> Mode | None:
    return next((m for m in MODES.get(kind, ()) if m.name == name), None)


def runs_levels(sc: Scenario) -> bool:
    """File digests read a whole file per call; they are not run at levels."""
    return not isinstance(sc, FileDigestScenario)


def oversubscribed(level: int, machine: Machine) -> bool:
    cpus = machine.cpus
    return cpus is not None and level > cpus


def warnings(levels: Iterable[int], machine: Machine, schedulers: int | None) -> list[str]:
    out = []
    cpus = machine.cpus
    over = [n for n in levels if cpus is not None and n > cpus]
    if over:
        which = ", ".join(map(str, over))
        out.append(
            f"level {which} exceeds the {cpus} CPUs bridge may use: those cells are"
            " oversubscribed (the workers take turns on the CPUs, so they cannot scale)"
        )
    if machine.smt_siblings and machine.smt_siblings > 1:
        out.append(
            f"{machine.smt_siblings} hardware threads share each core (SMT): a level above"
            f" the {machine.physical_cores} physical cores shares execution units"
        )
    if schedulers is not None and cpus is not None and schedulers > cpus:
        out.append(f"--schedulers {schedulers} is more than the {cpus} CPUs")
    load = machine.loadavg_start
    busy = load is not None and cpus is not None and load[0] > cpus / 2
    if busy:
        assert load is not None
        out.append(
            f"the machine was busy: load average {load[0]:.2f} on {cpus} CPUs when the run"
            " started; other work competes with every level"
        )
    if busy and machine.autogroup:
        out.append(AUTOGROUP)
    return out


# Measured on this project's VM under load: one or two spinning processes in
# one session did the same work in a second; in two sessions, twice as much.
AUTOGROUP = (
    "Linux autogroup is on, and on a busy machine it shares the CPU between sessions"
    " before processes: each Python worker process runs in a session of its own and"
    " gets a share of its own, while an Erlang node's schedulers, Python's threads and"
    " openssl -multi's children share one. Scaling is then not like for like across"
    " modes; compare them on an idle machine"
)


def output_ok(sc: Scenario, call: calls.Call, data: Inputs, output: bytes) -> bool | None:
    """A level's output checked as the call's own output is (bridge.analysis.interop)."""
    if not output:
        return None
    if call.check is calls.Check.ACCEPTS:
        return output == b"\x01"
    if call.check is calls.Check.SIGNATURE and isinstance(sc, SignatureScenario):
        return ec.verify(sc.curve, data.pub, sc.digest, data.data, output)
    expected = interop.reference(sc, data)
    return None if expected is None else output == expected


def scaling(cells: Sequence[LevelResult]) -> list[Scaling]:
    """throughput(N) / throughput(1) per group of cells, with a bootstrap 95%
    CI over the windows (the same method `bridge compare` uses)."""
    out = []
    groups: dict[tuple, dict[int, LevelResult]] = {}
    for c in cells:
        if c.ok and c.ops() is not None:
            groups.setdefault(c.group, {})[c.level] = c
    for by_level in groups.values():
        base = by_level.get(1)
        if base is None:
            continue
        for n, cell in sorted(by_level.items()):
            ratio, ci = ratio_ci(base, cell)
            out.append(
                Scaling(
                    scenario=cell.scenario,
                    runtime=cell.runtime,
                    call_id=cell.call_id,
                    mode=cell.mode,
                    size=cell.size,
                    hw=cell.hw,
                    level=n,
                    scaling=ratio,
                    ci95=ci,
                    efficiency=ratio / n,
                    oversubscribed=cell.oversubscribed,
                )
            )
    return out


def ratio_ci(a: LevelResult, b: LevelResult) -> tuple[float, tuple[float, float] | None]:
    """throughput(b) / throughput(a), with a CI when both have enough windows."""
    xa, xb = a.window_ops(), b.window_ops()
    if len(xa) >= MIN_FOR_CI and len(xb) >= MIN_FOR_CI:
        ratio, ci = stats.relative_ci(xa, xb)
        return ratio, ci
    sa, sb = a.ops(), b.ops()
    assert sa is not None and sb is not None
    return sb.median / sa.median, None


def block(
    levels: Sequence[int],
    window_ms: int | None,
    schedulers: int | None,
    machine: Machine,
    cells: Sequence[LevelResult],
) -> Concurrency:
    return Concurrency(
        levels=tuple(levels),
        window_ms=window_ms,
        schedulers=schedulers,
        machine=machine,
        cells=tuple(cells),
        scaling=tuple(scaling(cells)),
        warnings=tuple([*warnings(levels, machine, schedulers), *dropped(cells)]),
    )


def dropped(cells: Sequence[LevelResult]) -> list[str]:
    """Cells that lost more than a tenth of their windows: a worker was off
    the CPU for a whole window, so the figures rest on fewer windows."""
    out = []
    for c in cells:
        n = len(c.raw.windows)
        if n and c.dropped_windows * 10 > n:
            out.append(
                f"{c.runtime} {c.call_id} ({c.mode}) at {c.size} B, level {c.level}:"
                f" {c.dropped_windows} of {n} windows dropped (a worker missed a whole window)"
            )
    return out


def parse_levels(text: str) -> tuple[int, ...]:
    """--concurrency 1,2,4: whole numbers from 1 to MAX_LEVEL. Level 1 is
    always measured, since scaling is relative to it. Raises ValueError with
    the offending piece."""
    out: set[int] = {1}
    for piece in text.split(","):
        piece = piece.strip()
        n = plain.whole_number(piece)
        if n is None or not 1 <= n <= MAX_LEVEL:
            raise ValueError(piece)
        out.add(n)
    return tuple(sorted(out))
