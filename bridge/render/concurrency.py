"""The concurrency views (--concurrency): per scenario, one row per level
cell with its throughput, scaling, latency and (Erlang) probe lateness; a
second, narrow table with the slowest of N and the CPUs the work wanted; the
notes on what each mode runs, the warnings, and the summary sentences (the
scaling, the probe, a serialised level, level 1 against the per-call
median). One function per format; each returns lines and reads records only."""

from __future__ import annotations

import re
import textwrap
from collections import defaultdict
from collections.abc import Callable

from bridge.analysis import concurrency
from bridge.render import answers, common, units
from bridge.render.escape import Md, md, md_cell_code, md_table
from bridge.report import schema
from bridge.report.levels import (
    Concurrency,
    Gap,
    LevelOne,
    LevelResult,
    Machine,
    Scaling,
    Serialisation,
    Shape,
    Slowest,
    Spread,
)
from bridge.view import words

HOW = (
    "N workers of the same call, started together, over the same {window} ms windows;"
    " throughput = the sum of the workers' calls per second in a window, median over the"
    " windows (95% CI); scaling = throughput(N) / throughput(1), bootstrap 95% CI;"
    " efficiency = scaling / N. Latency: one call in each batch timed on its own"
    " ({batches} batches a window). Probe: how late an Erlang process that asks to wake"
    " every 1 ms wakes while the load runs (idle: before it starts)."
)


def block(report: schema.Report) -> Concurrency | None:
    c = report.concurrency
    return c if c is not None and c.cells else None


def by_scenario(c: Concurrency) -> dict[str, list[LevelResult]]:
    groups: dict[str, list[LevelResult]] = defaultdict(list)
    for cell in c.cells:
        groups[cell.scenario].append(cell)
    return {k: sorted(v, key=_order(v)) for k, v in groups.items()}


def _order(cells: list[LevelResult]):
    first: dict[tuple, int] = {}
    for c in cells:
        first.setdefault((c.runtime, c.call_id, c.mode), len(first))
    return lambda c: (first[(c.runtime, c.call_id, c.mode)], c.size, c.level)


def scaling_of(c: Concurrency, cell: LevelResult) -> Scaling | None:
    return next(
        (
            s
            for s in c.scaling
            if (s.scenario, s.runtime, s.call_id, s.mode, s.size, s.hw, s.level)
            == (*cell.group, cell.level)
        ),
        None,
    )


# -- formats -----------------------------------------------------------------


def dur(ns: float | None, ascii_only: bool = False) -> str:
    if ns is None:
        return "-"
    u = "us" if ascii_only else "µs"
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.0f} {u}" if ns >= 1e4 else f"{ns / 1e3:.1f} {u}"
    return f"{ns:.0f} ns"


def spread(s: Spread | None, ascii_only: bool = False) -> str:
    if s is None:
        return "-"
    return " / ".join(dur(v, ascii_only) for v in (s.p50_ns, s.p99_ns, s.max_ns))


def ops_ci(cell: LevelResult, sep: str = "–") -> tuple[str, str]:
    s = cell.ops()
    if s is None:
        return "-", "-"
    if cell.imported:
        return common.si(s.median), "as posted"
    if not cell.raw.windows or s.n < concurrency.MIN_FOR_CI:
        return common.si(s.median), f"n={s.n}"
    return common.si(s.median), f"{common.si(s.ci95[0])}{sep}{common.si(s.ci95[1])}"


def scaling_text(sc: Scaling | None, x: str = "×", sep: str = "–") -> tuple[str, str]:
    if sc is None:
        return "-", "-"
    ci = f"{sc.ci95[0]:.2f}{sep}{sc.ci95[1]:.2f}" if sc.ci95 else "no CI"
    return f"{sc.scaling:.2f}{x}", ci


def level_mark(cell: LevelResult) -> str:
    return f"{cell.level}*" if cell.oversubscribed else str(cell.level)


def mode_name(cell: LevelResult) -> str:
    names = {"processes": "procs", "threads": "threads", "multi": "-multi", "clients": "clients"}
    return names.get(cell.mode, cell.mode)


def problem(cell: LevelResult, marks: dict[str, str]) -> str:
    key = f"{cell.runtime} {cell.call_id} ({cell.mode}) at level {cell.level}: {cell.reason}"
    mark = marks.setdefault(key, f"f{len(marks) + 1}")
    return f"{cell.status} [{mark}]"


def probe_text(cell: LevelResult, ascii_only: bool = False) -> str:
    p = cell.probe()
    if p is None:
        return "-"
    idle = cell.probe_idle()
    tail = f" (idle p99 {dur(idle.p99_ns, ascii_only)})" if idle else ""
    return spread(p, ascii_only) + tail


# -- the terminal table --------------------------------------------------------


def table_lines(report: schema.Report) -> list[str]:
    c = block(report)
    if c is None:
        return []
    out = ["", f"== Concurrency: {', '.join(map(str, c.levels))} workers at once"]
    out += textwrap.wrap(_how(c), 100)
    out += machine_lines(c)
    marks: dict[str, str] = {}
    for scenario, cells in by_scenario(c).items():
        rows = []
        for cell in cells:
            head = [
                cell.runtime,
                f"{cell.call_id} ({mode_name(cell)})",
                _size(report, cell),
                level_mark(cell),
            ]
            if not cell.ok:
                rows.append([*head, problem(cell, marks), "", "", "", "", "", "", ""])
                continue
            ops, ci = ops_ci(cell)
            s, sci = scaling_text(scaling_of(c, cell))
            eff = scaling_of(c, cell)
            rows.append(
                [
                    *head,
                    f"{ops} ({ci})",
                    _workers(cell),
                    _mbs(report, cell),
                    f"{s} ({sci})",
                    f"{eff.efficiency:.0%}" if eff else "-",
                    spread(cell.latency()),
                    probe_text(cell),
                    _sched(cell),
                ]
            )
        headers = [
            "runtime",
            "call (mode)",
            units.column_of(report, scenario),
            "N",
            "ops/s (95% CI)",
            "each worker",
            "MB/s",
            "scaling (95% CI)",
            "eff.",
            "latency p50 / p99 / max",
            "probe late p50 / p99 / max",
            "schedulers busy",
        ]
        out += ["", f"-- {scenario}", *common.simple_table(rows, headers)]
        out += slowest_lines(report, c, cells, SLOWEST_WIDTH)
    out += note_lines(report, c, marks)
    sentences_ = sentences(report)
    if sentences_:
        out.append("")
        for s in sentences_:
            out += textwrap.wrap(s, 100, subsequent_indent="  ")
    return out


IMPORTED = (
    "Imported from openssl speed -multi output: the summed number as posted, and each"
    " child's beside it. Level 1 is a single-process run of the same document, of the"
    " same version, path, algorithm and size, timed by the wall clock (-elapsed) as"
    " -multi is; without one there is no scaling."
)


def _how(c: Concurrency) -> str:
    if all(cell.imported for cell in c.cells):
        return IMPORTED
    return HOW.format(window=c.window_ms or "-", batches=8)


def _workers(cell: LevelResult) -> str:
    """Each worker's own calls per second: an unfair share shows here."""
    each = cell.worker_ops()
    return " / ".join(common.si(x) for x in each) if len(each) > 1 else "-"


def _mbs(report: schema.Report, cell: LevelResult) -> str:
    """MB/s where bytes flow through the call (not per-call or iteration rows)."""
    s = cell.ops()
    if not units.throughput(units.unit(report, cell.scenario)):
        return "-"
    return f"{s.median * cell.size / 1e6:,.1f}" if s else "-"


def _size(report: schema.Report, cell: LevelResult) -> str:
    return units.cell_value(cell.size, units.unit(report, cell.scenario))


def _sched(cell: LevelResult) -> str:
    u = cell.utilisation()
    if not u:
        return "-"
    return f"normal {u.get('normal', 0):.0%}, dirty {u.get('dirty_cpu', 0):.0%}"


def machine_lines(c: Concurrency, ascii_only: bool = False) -> list[str]:
    m = c.machine
    if m == Machine():
        return []  # imported: the text says nothing of the machine
    parts = [f"{m.logical_cpus} CPUs" if m.logical_cpus else "CPUs unknown"]
    if m.usable_cpus and m.usable_cpus != m.logical_cpus:
        parts.append(f"{m.usable_cpus} usable by bridge")
    if m.physical_cores:
        smt = m.smt_siblings or 1
        parts.append(f"{m.physical_cores} cores, {smt} thread{'s' if smt > 1 else ''} per core")
    if m.loadavg_start:
        end = f", {m.loadavg_end[0]:.2f} at the end" if m.loadavg_end else ""
        parts.append(f"load average {m.loadavg_start[0]:.2f} at the start{end}")
    if m.autogroup is not None:
        parts.append(f"Linux autogroup {'on' if m.autogroup else 'off'}")
    if c.schedulers:
        parts.append(f"Erlang node started with +S {c.schedulers}:{c.schedulers}")
    return ["Machine: " + "; ".join(parts) + "."]


def note_lines(
    report: schema.Report, c: Concurrency, marks: dict[str, str], width: int = 100
) -> list[str]:
    out = [""]
    seen: dict[str, str] = {}
    for cell in c.cells:
        kind = report.kind_of(cell.runtime)
        m = concurrency.mode(kind, cell.mode)
        if m is not None:
            seen.setdefault(f"{kind} {mode_name(cell)}", m.semantics)
    for name, semantics in seen.items():
        out += textwrap.wrap(f"{name}: {semantics}", width, subsequent_indent="  ")
    if any(cell.oversubscribed for cell in c.cells):
        out += textwrap.wrap("* oversubscribed: more workers than CPUs, so they take turns", width)
    for text, mark in marks.items():
        out += textwrap.wrap(f"[{mark}] {text}", width, subsequent_indent="     ")
    clocks: dict[str, list[int]] = defaultdict(list)
    for cell in c.cells:
        if cell.raw.clock_ns is not None:
            clocks[cell.runtime].append(cell.raw.clock_ns)
    if clocks:
        each = ", ".join(f"{rid} {dur(max(v))}" for rid, v in clocks.items())
        out += textwrap.wrap(
            f"Each sampled latency includes the clock reads around the call, not subtracted:"
            f" {each}.",
            width,
        )
    notes = {cell.raw.latency_note for cell in c.cells if cell.raw.latency_note}
    for note in sorted(notes):
        out += textwrap.wrap(f"No latency for openssl: {note}.", width)
    raced = any(cell.raw.race_ns for cell in c.cells)
    if raced and any(cell.ok and cell.mode in FIXED_TIME for cell in c.cells):
        out += textwrap.wrap(NO_RACE, width)
    for w in words.concurrency_lines(c):
        out += textwrap.wrap(f"warning: {w}", width, subsequent_indent="  ")
    return out


# -- markdown --------------------------------------------------------------------


def markdown_lines(report: schema.Report) -> list[Md]:
    """Markdown (bridge.render.escape): lines ending in two spaces are notes,
    which the Markdown view lists."""
    c = block(report)
    if c is None:
        return []
    blank = Md("")
    out = [blank, md("#### Concurrency: {} workers at once", ", ".join(map(str, c.levels))), blank]
    out += [md("{}", _how(c)), blank, *(md("{}", line) for line in machine_lines(c))]
    marks: dict[str, str] = {}
    for scenario, cells in by_scenario(c).items():
        rows = []
        for cell in cells:
            head = [cell.runtime, md_cell_code(cell.call), _size(report, cell), level_mark(cell)]
            if not cell.ok:
                rows.append([*head, problem(cell, marks), "", "", "", "", "", ""])
                continue
            ops, ci = ops_ci(cell)
            sc = scaling_of(c, cell)
            s, sci = scaling_text(sc)
            rows.append(
                [
                    *head,
                    f"{ops} ({ci})",
                    _workers(cell),
                    _mbs(report, cell),
                    f"{s} ({sci})",
                    f"{sc.efficiency:.0%}" if sc else "-",
                    spread(cell.latency()),
                    probe_text(cell),
                ]
            )
        headers = [
            "runtime",
            "call",
            units.column_of(report, scenario),
            "N",
            "ops/s (95% CI)",
            "each worker",
            "MB/s",
            "scaling (95% CI)",
            "efficiency",
            "latency p50 / p99 / max",
            "probe late p50 / p99 / max",
        ]
        out += [blank, md("##### {}", scenario), blank, *md_table(rows, headers)]
        slow_rows, slow_headers = slowest_table(
            report, c, cells, label=lambda x: md_cell_code(_short_who(report, x))
        )
        if slow_rows:
            out += [blank, md("{}", SLOWEST_TITLE), blank, *md_table(slow_rows, slow_headers)]
    notes = note_lines(report, c, marks, width=10_000)
    out += [md("{}  ", line) if line else blank for line in notes]
    return out


# -- text (72 columns) -----------------------------------------------------------


def text_lines(report: schema.Report, width: int = 72) -> list[str]:
    c = block(report)
    if c is None:
        return []

    def wrap(s: str, indent: str = "") -> list[str]:
        return textwrap.wrap(s, width, subsequent_indent=indent, break_on_hyphens=False) or [""]

    out = ["", *wrap(f"== Concurrency: {', '.join(map(str, c.levels))} workers at once")]
    out += wrap(_how(c))
    for line in machine_lines(c, ascii_only=True):
        out += wrap(line)
    marks: dict[str, str] = {}
    for scenario, cells in by_scenario(c).items():
        # Lettered as the text view's calls are: [n] is a note (bridge.render.answers.letter).
        keys: dict[tuple[str, str, str], str] = {}
        for cell in cells:
            keys.setdefault((cell.runtime, cell.call_id, cell.mode), answers.letter(len(keys)))
        out += ["", f"-- {scenario}"]
        # One size (a handshake, a key): its column says nothing, and is left
        # out so that the tables fit.
        column = [units.column_of(report, scenario)] if len({x.size for x in cells}) > 1 else []
        for (runtime, _, _), n in keys.items():
            cell = next(x for x in cells if keys[(x.runtime, x.call_id, x.mode)] == n)
            label = _n_label(report, cell)
            out += wrap(f"({n}) {runtime}: {label}", indent="     ")
        speed, times = [], []
        for cell in cells:
            ref = f"({keys[(cell.runtime, cell.call_id, cell.mode)]})"
            head = [ref, *([_size(report, cell)] if column else []), level_mark(cell)]
            if not cell.ok:
                speed.append([*head, problem(cell, marks), "", "", ""])
                continue
            ops, ci = ops_ci(cell, sep="-")
            sc = scaling_of(c, cell)
            s, sci = scaling_text(sc, x="x", sep="-")
            speed.append([*head, ops, ci, s, sci])
            lat, probe = cell.latency(), cell.probe()
            if lat or probe:
                times.append(
                    [
                        *head,
                        spread(lat, True).replace(" / ", "/"),
                        spread(probe, True).replace(" / ", "/"),
                    ]
                )
        out += [
            "",
            *common.simple_table(
                speed, ["call", *column, "N", "ops/s", "95% CI", "scaling", "95% CI"], width
            ),
        ]
        if times:
            out += ["", "Latency of sampled calls and probe lateness (p50/p99/max):"]
            out += common.simple_table(
                times, ["call", *column, "N", "latency", "probe late"], width
            )
        out += slowest_lines(
            report, c, cells, width, lambda x, k=keys: f"({k[(x.runtime, x.call_id, x.mode)]})"
        )
    for line in note_lines(report, c, marks, width=width):
        out += wrap(line, indent="  ") if len(line) > width else [line]
    return out


def _n_label(report: schema.Report, cell: LevelResult) -> str:
    """The call with N for the level: one line for all levels of a call."""
    if " ×" in cell.call:
        m = concurrency.mode(report.kind_of(cell.runtime), cell.mode)
        return f"{cell.call.split(' ×')[0]} ×N {m.noun if m else cell.mode}"
    return re.sub(r"-multi \d+", "-multi N", cell.call)


# -- sentences -------------------------------------------------------------------


def sentences(report: schema.Report, ascii_only: bool = False) -> list[str]:
    """E.g. "sha256 at 16 KiB, 2 workers: Erlang crypto:hash scales 1.90x on 2
    schedulers (95% CI 1.80-2.00); Python threads 1.02x, processes 1.93x;
    openssl speed -multi 2 -evp sha256 1.95x." and the probe's findings."""
    c = block(report)
    if c is None:
        return []
    x, sep = ("x", "-") if ascii_only else ("×", "–")
    out = []
    cells = {(*cell.group, cell.level): cell for cell in c.cells}
    groups: dict[tuple[str, int, int], list[Scaling]] = defaultdict(list)
    for s in c.scaling:
        if s.level > 1:
            groups[(s.scenario, s.size, s.level)].append(s)
    for (scenario, size, level), rows in groups.items():
        clauses = []
        for s in rows:
            cell = cells[(s.scenario, s.runtime, s.call_id, s.mode, s.size, s.hw, s.level)]
            ci = f" (95% CI {s.ci95[0]:.2f}{sep}{s.ci95[1]:.2f})" if s.ci95 else ""
            over = " (oversubscribed)" if s.oversubscribed else ""
            named = common.several_of_kind(report, cell.runtime)
            who = _who(report.kind_of(cell.runtime), cell, level, named)
            clauses.append(f"{who} {s.scaling:.2f}{x}{ci}{over}")
        out.append(
            f"{scenario}{_at(report, scenario, size)}, {level} workers at once against"
            f" one: {'; '.join(clauses)}."
        )
    out += _probe_sentences(report, c, ascii_only)
    for finding in c.serialisation:
        if finding.shape is Shape.SERIALISED:
            out.append(serialised_sentence(report, c, finding, ascii_only))
    for lo in c.level_one:
        if lo.gap is not Gap.AGREE:
            out.append(level_one_sentence(report, lo, ascii_only))
    failed = [cell for cell in c.cells if cell.status == "failed"]
    for cell in failed:
        out.append(
            f"Level {cell.level} of {cell.runtime} {cell.call_id} ({cell.mode}) failed:"
            f" {cell.reason}."
        )
    return out


def _who(kind: str, cell: LevelResult, level: int, named: bool = False) -> str:
    """The call, its runtime where the run has two of its kind, and how N ran."""
    base = cell.call.split(" ×")[0] + (f" on {cell.runtime}" if named else "")
    if kind == "erlang":
        where = (
            f" on {_plural(cell.raw.schedulers_online, 'scheduler')}"
            if cell.raw.schedulers_online
            else ""
        )
        return f"Erlang {base} in {level} processes{where}"
    if kind == "python":
        how = "threads of one interpreter" if cell.mode == "threads" else "processes"
        return f"Python {base} in {level} {how}"
    if cell.mode == "clients":
        return f"{base}, {level} clients at once"
    return base


def _at(report: schema.Report, scenario: str, size: int) -> str:
    """ " at 16 KiB", " at 1,024 iterations"; nothing for a fixed-size call."""
    at = units.at(report, scenario, size)
    return "" if at == units.PER_CALL else f" {at}"


def _plural(n: int | None, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _probe_sentences(report: schema.Report, c: Concurrency, ascii_only: bool) -> list[str]:
    """At the highest level of each Erlang call and size: how late the probe
    woke, against idle, and which schedulers did the work; on which node,
    where the run has two Erlangs."""
    out = []
    top: dict[tuple, LevelResult] = {}
    for cell in c.cells:
        if cell.ok and cell.raw.probe_ns:
            key = (cell.scenario, cell.runtime, cell.call_id, cell.size)
            if key not in top or cell.level > top[key].level:
                top[key] = cell
    for cell in top.values():
        p, idle = cell.probe(), cell.probe_idle()
        assert p is not None
        base = cell.call.split(" ×")[0]
        idle_text = f" (idle: p99 {dur(idle.p99_ns, ascii_only)})" if idle else ""
        procs = "1 process" if cell.level == 1 else f"{cell.level} processes"
        scheds = _plural(cell.raw.schedulers_online, "scheduler")
        on = (
            f"On {cell.runtime}, while" if common.several_of_kind(report, cell.runtime) else "While"
        )
        out.append(
            f"{on} {procs} ran {base}{_at(report, cell.scenario, cell.size)}"
            f" on {scheds}, a process asking to wake every 1 ms"
            f" woke p99 {dur(p.p99_ns, ascii_only)} late (max {dur(p.max_ns, ascii_only)})"
            f"{idle_text}{_where(cell)}."
        )
    return out


def _where(cell: LevelResult) -> str:
    """Which schedulers did the work, from the normal ones' busy time: N
    processes busy all the time keep min(N, S) of S normal schedulers busy,
    unless their calls run elsewhere (dirty CPU schedulers). The dirty
    schedulers' own wall time is shown but not used: on a busy machine it read
    low (docs/guide/concurrency.md)."""
    u = cell.utilisation()
    s = cell.raw.schedulers_online
    if not u or not s:
        return ""
    normal = u.get("normal", 0.0)
    expected = min(cell.level, s) / s
    if normal >= 0.5 * expected:
        return f"; the normal schedulers were {normal:.0%} busy: the calls ran on them"
    return (
        f"; the normal schedulers were only {normal:.0%} busy: the calls ran on dirty CPU"
        " schedulers"
    )


# -- the slowest of N and CPU use --------------------------------------------------

SLOWEST_WIDTH = 80
FIXED_TIME = ("multi", "clients")  # openssl's modes: each worker counts for the same seconds
NO_RACE = (
    "No slowest of N for openssl: speed -multi's children and s_time's clients count calls for"
    " a fixed time, not a fixed number; the slowest is the lowest of each worker's figures."
)
SLOWEST_TITLE = (
    "Slowest of N: each of the N makes the same calls from a common start; the time"
    " the last one finished, median over the races (95% CI), and against level 1."
    " CPUs: how many CPUs the work wanted (running, or ready to run and waiting for"
    " one), not counting workers blocked on each other."
)


def _base(c: Concurrency, cell: LevelResult) -> LevelResult | None:
    """Level 1 of the cell's group."""
    return next((x for x in c.cells if x.ok and x.group == cell.group and x.level == 1), None)


def _short_who(report: schema.Report, cell: LevelResult) -> str:
    """ "erlang handshake-1.3 procs": the runtime's id only where the run has
    two of its kind."""
    kind = report.kind_of(cell.runtime)
    who = cell.runtime if common.several_of_kind(report, cell.runtime) else kind
    return f"{who} {cell.call_id} {mode_name(cell)}"


def slowest_table(
    report: schema.Report,
    c: Concurrency,
    cells: list[LevelResult],
    ascii_only: bool = False,
    label: Callable[[LevelResult], str] | None = None,
) -> tuple[list[list[str]], list[str]]:
    """Rows of the cells that raced or say what CPU they used; `label`
    names a cell's call and mode (default: "erlang handshake-1.3 procs")."""
    x = "x" if ascii_only else "×"
    name = label or (lambda cell: _short_who(report, cell))
    sizes = {cell.size for cell in cells}
    rows = []
    for cell in cells:
        slow, use = (cell.slowest(), cell.cpu_use()) if cell.ok else (None, None)
        if slow is None and use is None:
            continue
        base = _base(c, cell)
        base_slow = base.slowest() if base else None
        ratio = "-"
        if slow and base_slow and base_slow.median_ns > 0:
            ratio = f"{slow.median_ns / base_slow.median_ns:.2f}{x}"
        row = [name(cell)] + ([_size(report, cell)] if len(sizes) > 1 else [])
        row += [level_mark(cell), str(slow.calls) if slow else "-"]
        row += [_slowest_text(slow, ascii_only), ratio, f"{use.cpus:.1f}" if use else "-"]
        rows.append(row)
    headers = ["call" if label else "call (mode)"] + (["size"] if len(sizes) > 1 else [])
    headers += ["N", "calls", "slowest (95% CI)", f"{x} N=1", "CPUs"]
    return rows, headers


def _slowest_text(slow: Slowest | None, ascii_only: bool) -> str:
    """ "41.5 ms (13.0-83.4)": the CI in the median's unit where both ends
    have it."""
    if slow is None:
        return "-"
    head = dur(slow.median_ns, ascii_only)
    if slow.ci95 is None:
        return f"{head} (n={slow.races})"
    sep = "-" if ascii_only else "–"
    lo, hi = (dur(v, ascii_only) for v in slow.ci95)
    unit = head.split(" ")[-1]
    if lo.endswith(f" {unit}") and hi.endswith(f" {unit}"):
        lo, hi = lo.removesuffix(f" {unit}"), hi.removesuffix(f" {unit}")
    return f"{head} ({lo}{sep}{hi})"


def slowest_lines(
    report: schema.Report,
    c: Concurrency,
    cells: list[LevelResult],
    width: int,
    label: Callable[[LevelResult], str] | None = None,
) -> list[str]:
    ascii_only = label is not None  # the text view names calls by letter, in ASCII
    rows, headers = slowest_table(report, c, cells, ascii_only, label)
    if not rows:
        return []
    # The explanation once, under the first scenario's table.
    first = next((x for x in c.cells if x.slowest() or x.cpu_use()), None)
    said = SLOWEST_TITLE if first is not None and first in cells else "Slowest of N, CPUs:"
    title = textwrap.wrap(said, width, break_on_hyphens=False)
    return ["", *title, *common.simple_table(rows, headers, width)]


def serialised_sentence(
    report: schema.Report, c: Concurrency, f: Serialisation, ascii_only: bool = False
) -> str:
    """A level whose per-call time grew faster than the CPUs its work wanted."""
    x, sep = ("x", "-") if ascii_only else ("×", "–")
    cell = next((x_ for x_ in c.cells if (*x_.group, x_.level) == (*_group_of(f), f.level)), None)
    call = cell.call.split(" ×")[0] if cell else f.call_id
    m = concurrency.mode(report.kind_of(f.runtime), f.mode)
    noun = m.noun if m else "workers"
    ci = (
        f" (95% CI {f.per_call_ci95[0]:.2f}{sep}{f.per_call_ci95[1]:.2f})"
        if f.per_call_ci95
        else ""
    )
    cpus = f" ({f.cpus[0]:.1f} to {f.cpus[1]:.1f})" if f.cpus else ""
    slow = (
        f"; the slowest of {f.level} took {f.slowest_ratio:.2f}{x} as long as one alone"
        if f.slowest_ratio
        else ""
    )
    return (
        f"{f.scenario}{_at(report, f.scenario, f.size)}: from 1 to {f.level} {noun} of"
        f" {f.runtime} {call}, per-call time grew {f.per_call_ratio or 0:.2f}{x}{ci} while"
        f" the CPUs the work wanted grew {f.cpu_ratio or 0:.2f}{x}{cpus}{slow}: the {noun}"
        " waited for each other (a lock, one process or thread doing the work, the GIL),"
        " not for work or for a CPU."
    )


def _group_of(f: Serialisation) -> tuple:
    return (f.scenario, f.runtime, f.call_id, f.mode, f.size, f.hw)


def level_one_sentence(report: schema.Report, lo: LevelOne, ascii_only: bool = False) -> str:
    """Why level 1's rate and the per-call median disagree."""
    x = "x" if ascii_only else "×"
    head = (
        f"{lo.scenario}{_at(report, lo.scenario, lo.size)}: {lo.runtime} {lo.call_id}"
        f" at level 1 ({lo.mode}) did {_rate(lo.ops)}/s, {lo.ratio:.2f}{x} the per-call"
        f" median's {_rate(lo.median_ops)}/s"
    )
    waits = _waits(lo)
    if lo.gap is Gap.WAITED and lo.level_wait_share is not None:
        alone = lo.ops / (1 - lo.level_wait_share)
        return (
            f"{head}: its threads waited for a CPU {lo.level_wait_share:.0%} of the time they"
            f" wanted one, and the rate counts that time (without it, {_rate(alone)}/s); the"
            " median of the per-call cell's short samples keeps those that did not wait"
            f" (their mean: {_rate(lo.mean_ops)}/s)."
        )
    if lo.gap is Gap.TAIL:
        return (
            f"{head}: the rate counts every call, the median the middle one, and this"
            f" call's times vary (the per-call cell's mean: {_rate(lo.mean_ops)}/s{waits})."
        )
    if lo.gap is Gap.PINNED:
        return (
            f"{head}: level 1's work wanted {lo.cpus or 0:.1f} CPUs at once (it runs in more"
            " than one thread, as a TLS client and its server in one node), while the"
            f" per-call cell ran pinned to one CPU for its batch{waits}."
        )
    if lo.gap is Gap.FEW:
        return f"{head}: too few runs at level 1 for a CI, so the gap may be their own spread."
    return (
        f"{head}, and neither the waits for a CPU nor the spread of the calls' times"
        f" explains it (the per-call cell's mean: {_rate(lo.mean_ops)}/s{waits})."
    )


def _waits(lo: LevelOne) -> str:
    parts = []
    if lo.level_wait_share is not None:
        parts.append(f"level 1 waited for a CPU {lo.level_wait_share:.0%}")
    if lo.cell_wait_share is not None:
        parts.append(f"the per-call samples {lo.cell_wait_share:.0%}")
    return f"; {', '.join(parts)}" if parts else ""


def _rate(ops: float) -> str:
    return common.si(ops) if ops >= 1000 else f"{ops:,.0f}"
