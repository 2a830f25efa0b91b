"""Every table of a view, built once: the results of a scenario, its level
cells (--concurrency), the cost model, the upgrade view, --method tc. Each
column says when it may go (`drop`, lower first) so that a writer fits it to
its width; each cell is text with a shorter form where it has one."""

from __future__ import annotations

import dataclasses
import re

from bridge.catalog import calls
from bridge.catalog.vocab import RuntimeKind
from bridge.report import schema
from bridge.report.levels import LevelResult
from bridge.view import codes, units, words
from bridge.view.context import LOW, Context, si
from bridge.view.model import Cell, Column, Table, Tone
from bridge.view.names import short_call

WORDS = {
    codes.FASTER: "sig",
    codes.SLOWER: "sig",
    codes.NOISE: "noise",
    codes.UNRESOLVED: "?",
    codes.FEW: "?",
}
# Where the answer is a hardware verdict, the ratios between runtimes go
# first; where it is the comparison, last, and the versions side by side
# (× first named) last of all.
DROP_RATIOS_HW = (-2.0, -1.0)
DROP_RATIOS = (4.0, 4.5)


# -- the results of a scenario ---------------------------------------------------------


def results(ctx: Context, scenario: str) -> Table | None:
    rows = ctx.results(scenario)
    if not rows:
        return None
    report, verbose = ctx.report, ctx.verbose
    unit = ctx.unit(scenario)
    scale = units.scale_of(rows)
    short_names = call_names(ctx, rows)
    marks = semantics_marks(rows)
    several_sizes = len({r.size for r in rows}) > 1
    masked = any(r.hw.masked for r in rows)
    unsupported, unsupported_notes = _unsupported(rows)
    first = bool(ctx.names.several) and any(ctx.diff(codes.FIRST, r) for r in rows)
    hw_answer = any(v.scenario == scenario for v in report.verdicts)
    drop_fastest, drop_first = DROP_RATIOS_HW if hw_answer else DROP_RATIOS

    cols: list[Column] = [
        Column("runtime", "runtime", ident=True),
        Column("call", "call", ident=True),
    ]
    if several_sizes or verbose:
        brief = unit == units.BYTES and not verbose
        header = "size" if brief else units.column_of(report, scenario)
        cols.append(Column("size", header, right=True, ident=True))
    if masked:
        cols.append(Column("hw", "hw", ident=True))
    cols.append(Column("low", f"{LOW} {scale.name}", right=True))
    cols.append(Column("median", f"median {scale.name} (95% CI)", right=True))
    cols.append(Column("ops", "ops/s", right=True, drop=2))
    if unit == units.BYTES:
        cols.append(Column("mbs", "MB/s", right=True, drop=1))
    if any(ctx.diff(codes.FASTEST, r) for r in rows):  # a row alone is compared with nothing
        cols.append(Column("fastest", "× fastest", drop=drop_fastest))
    if first:
        cols.append(
            Column("first", "× baseline" if ctx.rebased else "× first named", drop=drop_first)
        )
    oks = {ctx.match.get(id(r), "") for r in rows} - {""}
    if verbose or oks - {"yes"}:
        cols.append(Column("ok", "output ok", drop=None if "NO" in oks else 3))
    if verbose:
        cols = [Column(c.key, c.header, c.right, None, c.ident) for c in cols]

    table_rows = []
    for r in rows:
        by = {"runtime": Cell(r.runtime)}
        by["call"] = Cell(short_names[(ctx.kind(r), r.call_id)])
        brief = unit == units.BYTES and not verbose
        by["size"] = Cell(units.short(r.size) if brief else units.cell_value(r.size, unit))
        by["hw"] = Cell(str(r.hw))
        if not r.ok:
            by["median"] = Cell(f"unsupported [{unsupported[id(r)]}]", Tone.MUTED)
        else:
            by.update(_figures(ctx, r, unit, scale))
        table_rows.append(tuple(by.get(c.key, Cell("")) for c in cols))

    legend = _legend(ctx, rows, short_names, marks) + unsupported_notes
    table = Table("", tuple(cols), tuple(table_rows), tuple(legend))
    notes = column_notes(ctx, scenario, table)
    noted = tuple(dataclasses.replace(c, note=notes.get(c.key, "")) for c in cols)
    return dataclasses.replace(table, columns=noted)


def _figures(ctx: Context, r: schema.Result, unit: str, scale: units.TimeScale) -> dict[str, Cell]:
    s = r.summary()
    ops = 1e9 / s.median if s.median > 0 else 0.0
    unstable = (r.scenario, r.runtime, r.call_id, r.size, r.hw) in ctx.unstable
    if r.imported:
        median = f"{scale.fmt(s.median)} (as posted)"
    elif s.n == 1:
        median = f"{scale.fmt(s.median)} (1 sample)"
    else:
        median = f"{scale.fmt(s.median)} ({scale.fmt(s.ci95[0])}–{scale.fmt(s.ci95[1])})"
    low = scale.fmt(_low(r)) if r.samples else "–"
    mbs = f"{ops * r.size / 1e6:,.1f}" if units.throughput(unit) and r.size else "–"
    ok = ctx.match.get(id(r), "–")
    return {
        "low": Cell(low),
        "median": Cell(median, Tone.WARN if unstable else Tone.PLAIN, "!" if unstable else ""),
        "ops": Cell(si(ops)),
        "mbs": Cell(mbs),
        "fastest": ratio_cell(ctx, codes.FASTEST, r),
        "first": ratio_cell(ctx, codes.FIRST, r),
        "ok": Cell(ok, Tone.BAD if ok == "NO" else Tone.PLAIN),
    }


def _low(r: schema.Result) -> float:
    from bridge import stats

    return stats.low(r.per_op_ns())


def ratio_cell(ctx: Context, against: str, r: schema.Result) -> Cell:
    """'2.35× (2.20–2.51) sig', short '2.35× sig'; '1.66× ?'; '1.00×' the
    baseline itself; '' where the row is compared with nothing."""
    if not r.ok:
        return Cell("")
    d = ctx.diff(against, r)
    if d is None:
        if r.median() <= 0 or (against == codes.FASTEST and ctx.is_part(r)):
            return Cell("")
        baseline = against == codes.FASTEST or ctx.kind(r) in ctx.names.several
        return Cell("1.00×" if baseline else "")
    head = f"{d.ratio:.2f}×"
    if d.verdict == codes.FEW:
        return Cell(f"{head} ?", Tone.WARN)
    if d.ci95 is None:
        return Cell(head)
    word = _mark(d) or d.verdict
    if word == "?":
        return Cell(f"{head} ?", Tone.WARN)
    tone = Tone.BAD if word == "sig" and d.ratio > 1 else Tone.GOOD if word == "sig" else Tone.MUTED
    return Cell(f"{head} ({d.ci95[0]:.2f}–{d.ci95[1]:.2f}) {word}", tone, short=f"{head} {word}")


def ratio_legend(ctx: Context, rows: list[schema.Result]) -> str:
    """What the marks of the ratio columns mean, for the marks these rows show."""
    shown = [d for r in rows for a in (codes.FIRST, codes.FASTEST) if (d := ctx.diff(a, r))]
    return marks_legend(ctx, shown, "×: this row's median over the other's (95% CI)")


def marks_legend(ctx: Context, shown: list[schema.Difference], head: str) -> str:
    """`head`, then what each mark these differences show means."""
    marks = {_mark(d) for d in shown} - {""}
    if not marks:
        return ""
    parts = [head]
    if "sig" in marks:
        parts.append(f"sig = the CI clears ±{codes.MARGIN:.0%} and the rounds agree")
    if "noise" in marks:
        parts.append("noise = within the noise")
    if "drift" in marks:
        parts.append(words.drift_mark(codes.MARGIN))
    if "?" in marks:
        d = next(d for d in shown if WORDS.get(d.verdict) == "?")
        reason, rerun = words.difference_why(d, ctx.report.settings.quick)
        parts.append(f"? = {reason}; {rerun}" if rerun else f"? = {reason}")
    return "; ".join(parts) + "."


def _mark(d: schema.Difference) -> str:
    """A difference's mark in a table: sig, noise, ?, or drift where the CI
    clears the margin but the rounds disagree (so "noise" never stands
    beside a CI that says otherwise)."""
    return "drift" if words.is_drift(d) else WORDS.get(d.verdict, "")


def semantics_marks(rows: list[schema.Result]) -> dict[str, int]:
    marks: dict[str, int] = {}
    for r in rows:
        marks.setdefault(r.semantics, len(marks) + 1)
    return marks


def call_names(ctx: Context, rows: list[schema.Result]) -> dict[tuple[str, str], str]:
    """Each call's short name; with the language where two share one."""
    short = {(ctx.kind(r), r.call_id): short_call(r) for r in rows}
    lang = {(ctx.kind(r), r.call_id): ctx.names.language(r.runtime, r.call_id) for r in rows}
    taken: dict[str, int] = {}
    for name in short.values():
        taken[name] = taken.get(name, 0) + 1
    return {k: name if taken[name] == 1 else f"{lang[k]} {name}" for k, name in short.items()}


def _legend(ctx, rows, short_names, marks) -> list[str]:
    """Each short name, the call it stands for and what one call includes."""
    seen: dict[str, tuple[str, str]] = {}
    for r in rows:
        # A user's expression under its label (bridge time name=EXPR): the label and the code.
        expr = ctx.names.expressions.get(r.call_id, r.call)
        name = short_names[(ctx.kind(r), r.call_id)]
        label = r.call if expr == r.call or name == r.call else f"{r.call} = {expr}"
        label = expr if name == r.call and expr != r.call else label
        seen.setdefault(short_names[(ctx.kind(r), r.call_id)], (label, r.semantics))
    out = []
    for name, (label, semantics) in seen.items():
        same = label == name or label.startswith(f"{name}(") or name.endswith(label)
        out.append(f"{label if same else f'{name} = {label}'}: {semantics}")
    return out


def _unsupported(rows: list[schema.Result]) -> tuple[dict[int, str], list[str]]:
    notes: dict[str, str] = {}
    marks = {}
    for r in rows:
        if not r.ok:
            marks[id(r)] = notes.setdefault(f"{r.runtime}: {r.reason}", f"u{len(notes) + 1}")
    return marks, [f"[{mark}] unsupported on {text}" for text, mark in notes.items()]


def column_notes(ctx: Context, scenario: str, table: Table) -> dict[str, str]:
    """What a column's marks mean, said under the table only when the
    column is shown: the ratio marks, and the unstable cells' !."""
    rows = ctx.results(scenario)
    out = {}
    legend = ratio_legend(ctx, rows)
    if legend:
        out["fastest"] = out["first"] = legend
    if any(c.mark == "!" for row in table.rows for c in row):
        goal = ctx.report.settings.ci_goal
        target = f"the run's ±{goal * 100:g}% target" if goal else "the run's target"
        out["median"] = f"! = 95% CI wider than {target}: rerun with --until-stable."
    return out


def semantics_warning(rows: list[schema.Result]) -> str:
    """A table that mixes per-call key set-up with a reused key: the ratio
    between such rows is not a speed difference. Names the calls present."""
    once: list[str] = []
    every: list[str] = []
    for r in rows:
        if not r.ok or r.semantics not in _KEY_SETUP:
            continue
        side = every if r.semantics == calls.ONE_SHOT_MAC else once
        name = words.KEY_CALLS.get(r.call_id) or short_call(r)
        if name not in side:
            side.append(name)
    return words.not_like_for_like(once, every) if once and every else ""


_KEY_SETUP = frozenset({calls.ONE_SHOT_MAC, calls.SPEED_HMAC, calls.REUSED_KEY})


# -- level cells (--concurrency) ---------------------------------------------------------


def levels(ctx: Context, scenario: str) -> tuple[Table | None, list[str]]:
    """One row per level cell: throughput and scaling (95% CI), and, as
    columns that go first at a narrow width, each worker's share, MB/s,
    latency, the probe's lateness and the schedulers' use."""
    c = ctx.report.concurrency
    if c is None or not c.cells:
        return None, []
    cells = sorted(
        (cell for cell in c.cells if cell.scenario == scenario), key=level_order(c.cells)
    )
    if not cells:
        return None, []
    scaling = {
        (s.scenario, s.runtime, s.call_id, s.mode, s.size, s.hw, s.level): s for s in c.scaling
    }
    unit = ctx.unit(scenario)
    bytes_flow = units.throughput(unit)
    probes = any(cell.raw.probe_ns for cell in cells)
    latency = any(cell.latency() for cell in cells)
    cols = [
        Column("runtime", "runtime", ident=True),
        Column("call", "call (mode)", ident=True),
        Column("size", units.column_of(ctx.report, scenario), right=True, ident=True),
        Column("n", "N", right=True, ident=True),
        Column("ops", "ops/s (95% CI)", right=True),
        Column("scaling", "scaling (95% CI)", right=True),
        Column("eff", "eff.", right=True, drop=6),
        Column("each", "each worker", right=True, drop=3),
    ]
    cols += [Column("mbs", "MB/s", right=True, drop=5)] if bytes_flow else []
    cols += [Column("latency", "latency p50/p99/max", right=True, drop=4)] if latency else []
    cols += [Column("probe", "probe late p50/p99/max", right=True, drop=2)] if probes else []
    cols += [Column("sched", "schedulers busy", drop=1)] if probes else []
    if ctx.verbose:
        cols = [Column(col.key, col.header, col.right, None, col.ident) for col in cols]
    failed: dict[str, str] = {}
    rows = []
    for cell in cells:
        by = {
            "runtime": Cell(cell.runtime),
            "call": Cell(f"{short_level_call(cell)} ({mode_name(cell.mode)})"),
            "size": Cell(units.cell_value(cell.size, unit)),
            "n": Cell(f"{cell.level}*" if cell.oversubscribed else str(cell.level)),
        }
        if not cell.ok:
            key = (
                f"{cell.runtime} {cell.call_id} ({cell.mode}) at level {cell.level}: {cell.reason}"
            )
            mark = failed.setdefault(key, f"f{len(failed) + 1}")
            by["ops"] = Cell(f"{cell.status} [{mark}]", Tone.BAD)
        else:
            by.update(_level_figures(cell, scaling.get((*cell.group, cell.level)), bytes_flow))
        rows.append(tuple(by.get(col.key, Cell("")) for col in cols))
    legend = [f"[{mark}] {text}" for text, mark in failed.items()]
    if any(cell.oversubscribed for cell in cells):
        legend.append("* oversubscribed: more workers than CPUs, so they take turns")
    return Table("", tuple(cols), tuple(rows), tuple(legend)), _level_semantics(
        ctx, cells, c.schedulers
    )


def _level_figures(cell: LevelResult, sc, bytes_flow: bool) -> dict[str, Cell]:
    s = cell.ops()
    if s is None:
        ops = Cell("-")
    elif cell.imported:
        ops = Cell(f"{si(s.median)} (as posted)", short=si(s.median))
    elif not cell.raw.windows or s.n < codes.MIN_FOR_CI:
        ops = Cell(f"{si(s.median)} (n={s.n})", short=si(s.median))
    else:
        ops = Cell(f"{si(s.median)} ({si(s.ci95[0])}–{si(s.ci95[1])})", short=si(s.median))
    if sc is None:
        scaling = Cell("-")
    else:
        spread = f"{sc.ci95[0]:.2f}–{sc.ci95[1]:.2f}" if sc.ci95 else "no CI"
        scaling = Cell(f"{sc.scaling:.2f}× ({spread})", short=f"{sc.scaling:.2f}×")
    each = cell.worker_ops()
    u = cell.utilisation()
    lat, probe = cell.latency(), cell.probe()
    return {
        "ops": ops,
        "scaling": scaling,
        "eff": Cell(f"{sc.efficiency:.0%}" if sc else "-"),
        "each": Cell(" / ".join(si(x) for x in each) if len(each) > 1 else "-"),
        "mbs": Cell(f"{s.median * cell.size / 1e6:,.1f}" if s and bytes_flow else "-"),
        "latency": Cell(spread3(lat)),
        "probe": Cell(spread3(probe)),
        "sched": Cell(
            f"normal {u.get('normal', 0):.0%}, dirty {u.get('dirty_cpu', 0):.0%}" if u else "-"
        ),
    }


def level_order(cells):
    """Level cells as every table of them stands: each call and mode in the
    order first met, then size, then level."""
    first: dict[tuple, int] = {}
    for c in cells:
        first.setdefault((c.runtime, c.call_id, c.mode), len(first))
    return lambda c: (first[(c.runtime, c.call_id, c.mode)], c.size, c.level)


def mode_name(mode: str) -> str:
    names = {"processes": "procs", "threads": "threads", "multi": "-multi", "clients": "clients"}
    return names.get(mode, mode)


def short_level_call(cell: LevelResult) -> str:
    """The level cell's call as the results table names it (its id)."""
    head = cell.call.split(" ×")[0]
    m = re.search(r"\b([a-z][\w]*:[a-z][\w]*)\(", head)
    if m and m.group(1).split(":")[1] == cell.call_id:
        return m.group(1)
    return cell.call_id


def dur(ns: float | None) -> str:
    if ns is None:
        return "-"
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.0f} µs" if ns >= 1e4 else f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def spread3(s) -> str:
    if s is None:
        return "-"
    return "/".join(dur(v).replace(" ", "") for v in (s.p50_ns, s.p99_ns, s.max_ns))


MODES = {
    (
        RuntimeKind.ERLANG,
        "processes",
    ): "N Erlang processes in one node, released together by a barrier;"
    " the node's schedulers share them",
    (
        RuntimeKind.PYTHON,
        "threads",
    ): "N threads in one interpreter: they share the GIL, which hashlib"
    " releases only for inputs of 2048 bytes or more",
    (RuntimeKind.PYTHON, "processes"): "N worker processes, one interpreter each, started together",
    (
        RuntimeKind.OPENSSL,
        "multi",
    ): "openssl speed -multi N: N forked processes, each counting its own"
    " calls for the same seconds; the counts are summed",
    (
        RuntimeKind.OPENSSL,
        "clients",
    ): "N openssl s_time clients against one s_server, each counting its"
    " own handshakes for the same seconds; the counts are summed",
}


def _level_semantics(ctx: Context, cells: list[LevelResult], schedulers: int | None) -> list[str]:
    seen: dict[str, str] = {}
    for cell in cells:
        kind = ctx.report.kind_of(cell.runtime)
        text = MODES.get((kind, cell.mode))
        if text and kind == RuntimeKind.ERLANG and schedulers:
            text += f"; {words.schedulers_set(schedulers)}"
        if text:
            seen.setdefault(f"{kind} {mode_name(cell.mode)}", text)
    return [f"{name}: {text}" for name, text in seen.items()]


# -- the cost model, the upgrade view, timer:tc ------------------------------------------


def fits(ctx: Context, scenario: str) -> Table | None:
    fs = [f for f in ctx.report.fits if f.scenario == scenario]
    if not fs:
        return None
    per = "iteration" if ctx.unit(scenario) == units.ITERATIONS else "byte"
    named = any(ctx.names.is_several(f.runtime) for f in fs)
    cols = [Column("runtime", "runtime", ident=True)] if named else []
    cols += [Column("call", "call", ident=True), Column("hw", "hw", ident=True)]
    cols += [Column("a", "a ns/call", right=True), Column("b", f"b ns/{per}", right=True)]
    cols += [Column("gbs", "1/b GB/s", right=True, drop=2)] if per == "byte" else []
    if ctx.verbose:
        cols.append(Column("r2", "R²", right=True))
    rows = []
    for f in fs:
        lang = ctx.names.language(f.runtime, f.call_id)
        by = {
            "runtime": Cell(f.runtime),
            "call": Cell(f.call if ctx.verbose else f"{lang} {f.call_id}"),
            "hw": Cell(str(f.hw)),
            "a": Cell(f"{f.a_ns:,.0f}"),
            "b": Cell(f"{f.b_ns_per_byte:.3f}"),
            "gbs": Cell(f"{f.gb_per_s:.2f}" if f.gb_per_s else "-"),
            "r2": Cell(f"{f.r2:.3f}"),
        }
        rows.append(tuple(by[c.key] for c in cols))
    how = " (Theil-Sen over the sizes)" if ctx.verbose else ""
    title = f"Cost model: ns per call = a + b × {per}s{how}"
    legend = []
    for f in fs:
        legend += [f"{f.runtime} {f.call_id} (hw {f.hw}): {x}" for x in f.implausible]
    return Table(title, tuple(cols), tuple(rows), tuple(legend))


def upgrades(ctx: Context, scenario: str) -> tuple[Table | None, list[str]]:
    """new/old, one row per pair and size, with its CI: the ratio and its
    significance at each size are the differences' (the same finding the
    results table and the answer show), where the run has them. A row per
    size keeps the table narrow however many sizes ran (a column per size
    folded at 72 columns); each side's cost model (a, b) is the cost model
    table's, and where the difference lives is said under it."""
    ups = [u for u in ctx.report.upgrades if u.scenario == scenario]
    if not ups:
        return None, []
    unit = ctx.unit(scenario)
    several_sizes = len({s.size for u in ups for s in u.sizes}) > 1
    cols = [
        Column("new", "new", ident=True),
        Column("old", "old", ident=True),
        Column("call", "call", ident=True),
        Column("size", units.column_of(ctx.report, scenario), right=True, ident=True),
        Column("ratio", "new/old", right=True),
        Column("ci", "95% CI", right=True, drop=1),
    ]
    rows = []
    shown: list[schema.Difference] = []
    for u in ups:
        call = u.call_id if u.hw == "on" else f"{u.call_id} (hw {u.hw})"
        for s in sorted(u.sizes, key=lambda s: s.size):
            d = _upgrade_diff(ctx, u, s.size)
            shown += [d] if d is not None else []
            ratio, ci95 = _upgrade_cell(d, s)
            rows.append(
                (
                    Cell(u.new),
                    Cell(u.old),
                    Cell(call),
                    Cell(units.cell_value(s.size, unit)),
                    ratio,
                    Cell(f"{ci95[0]:.2f}–{ci95[1]:.2f}" if ci95 else "-"),
                )
            )
    # One size (the section's title says it), no CI (imported numbers): no column.
    empty = {"size"} if not several_sizes else set()
    empty |= {"ci"} if all(row[5].text == "-" for row in rows) else set()
    keep = [i for i, c in enumerate(cols) if c.key not in empty]
    cols = [cols[i] for i in keep]
    rows = [tuple(row[i] for i in keep) for row in rows]
    sentences = [upgrade_sentence(ctx, u) for u in ups]
    title = "Upgrade: new time over old, per size"
    legend = marks_legend(ctx, shown, "new/old: the new version's median over the old's")
    table = Table(title, tuple(cols), tuple(rows), (legend,) if legend else ())
    return table, [s for s in sentences if s]


def _upgrade_diff(ctx: Context, u: schema.Upgrade, size: int) -> schema.Difference | None:
    for d in ctx.diffs:
        if (
            d.scenario == u.scenario
            and d.runtime == u.new
            and d.baseline_runtime == u.old
            and d.call_id == u.call_id
            and d.size == size
            and d.hw == u.hw
        ):
            return d
    return None


def _upgrade_cell(
    d: schema.Difference | None, s: schema.UpgradeSize
) -> tuple[Cell, tuple[float, float] | None]:
    if d is not None:
        return Cell(f"{d.ratio:.2f}× {_mark(d)}".strip()), d.ci95
    return Cell(f"{s.ratio:.2f}×"), None


def upgrade_sentence(ctx: Context, u: schema.Upgrade) -> str:
    """Where a difference between two versions lives: per call or per byte
    (the cost model's a and b); the per-size ratios are in the table."""
    if u.delta_a_ns is None:
        return ""
    who = (
        f"{ctx.names.language(u.new, u.call_id)} {u.call}"
        if u.kind != RuntimeKind.OPENSSL
        else u.call
    )
    return words.upgrade_split(u, who)


def tc(ctx: Context, scenario: str) -> Table | None:
    figures = [t for t in ctx.report.tc if t.scenario == scenario and not t.unsupported]
    if not figures:
        return None
    keys = (
        "runtime",
        "call",
        "size",
        "hw",
        "calls",
        "range",
        "median",
        "average",
        "zero",
        "bridge",
    )
    heads = (
        "runtime",
        "call",
        "bytes",
        "hw",
        "calls",
        "range µs",
        "median µs",
        "average µs",
        "0 µs",
        "bridge µs",
    )
    cols = [
        Column(
            k,
            h,
            right=k not in ("runtime", "call", "hw"),
            ident=k in ("runtime", "call", "size", "hw"),
        )
        for k, h in zip(keys, heads, strict=True)
    ]
    rows = []
    for t in figures:
        rows.append(
            (
                Cell(t.runtime),
                Cell(t.call_id),
                Cell(str(t.size)),
                Cell(str(t.hw)),
                Cell(str(t.n)),
                Cell(f"{t.min_us}-{t.max_us}"),
                Cell(str(t.median_us)),
                Cell(str(t.avg_us)),
                Cell(f"{t.zero_us_calls / max(t.n - 1, 1):.0%}"),
                Cell(f"{t.bridge_median_ns / 1000:.3f}"),
            )
        )
    legend = (
        "timer:tc rounds each call to a whole microsecond: a call of 2-4 µs reads as 2, 3 or 4,"
        " so a difference under a microsecond is below what it can show; bridge times loops of"
        " calls in nanoseconds instead.",
    )
    return Table(
        "The thread's method (timer:tc per call, whole microseconds)",
        tuple(cols),
        tuple(rows),
        legend,
    )
