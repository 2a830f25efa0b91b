"""The answer a scenario opens with, chosen by what the run measured, in this
order: the hardware A/B (a verdict per runtime and call), two or more
versions of a runtime kind (the comparison at the smallest and largest
size, and at any size whose significance differs), --concurrency (the
scaling), a TLS run (handshakes per second), and the time per call: the
user's expressions ranked by their labels (bridge time), else each row
against the fastest doing the same work. Every verdict withheld
(inconclusive, ?) says why and what to rerun. No answer compares a row with
itself, and a significance here is the same finding the tables show."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from bridge.catalog import calls
from bridge.catalog.vocab import ScenarioKind
from bridge.report import schema
from bridge.report.findings import Reason
from bridge.report.levels import LevelResult, Scaling
from bridge.view import codes, names, tables, units, words
from bridge.view.context import Context, ci, fmt_ns, si3
from bridge.view.model import Answer, AnswerKind, AnswerLine, Phrase, Tone

# A scaling is called when its CI clears 1× by this much (either way).
SCALE_MARGIN = 0.10


def for_scenario(ctx: Context, scenario: str) -> tuple[Answer, ...]:
    """The answers in the order of the questions; the question a scenario
    exists for leads: a TLS scenario's handshakes, a --concurrency run's
    scaling, before the hardware verdicts a default run measures beside."""
    out = [hardware(ctx, scenario), versions(ctx, scenario), scaling(ctx, scenario)]
    if ctx.report.scenario_kind(scenario) == ScenarioKind.TLS:
        out.append(handshakes(ctx, scenario))
    if not any(out):
        out.append(times(ctx, scenario))
    found = [a for a in out if a is not None]
    lead = [a for a in found if a.kind in (AnswerKind.HANDSHAKES, AnswerKind.SCALING)]
    return tuple(lead + [a for a in found if a not in lead])


# -- 1. hardware ---------------------------------------------------------------------


def hardware(ctx: Context, scenario: str) -> Answer | None:
    vs = [v for v in ctx.report.verdicts if v.scenario == scenario]
    if not vs:
        return None
    unit = ctx.unit(scenario)
    features = list(dict.fromkeys(v.feature for v in vs))
    groups: dict[tuple[str, str, str], list[schema.HwVerdict]] = defaultdict(list)
    for v in vs:
        groups[(v.runtime, v.call_id, v.feature)].append(v)
    swept = len(units.sizes_run(ctx.report, scenario)) > 1
    one = len(features) == 1
    head = names.feature(features[0]) if one else "the feature"
    lines: list[AnswerLine] = []
    said: set[str | tuple[str, str]] = set()
    for (runtime, call_id, feature), group in groups.items():
        group.sort(key=lambda v: v.size)
        top = group[-1]
        row = _row(ctx, scenario, runtime, call_id)
        subject = ctx.names.short_who(row) if row else f"{runtime} {call_id}"
        if not one:
            subject += f", {names.feature(feature, brief=True)}"
        line = _verdict_line(subject, group, top, swept, unit, names.feature(feature, True))
        why = next((v.why for v in group[::-1] if v.why is not None), None)
        if why is not None and line.reason in said:  # four rows on one library: said once
            line = dataclasses.replace(line, reason=f"{words.why_not(why, brief=True)}, as above")
        elif line.reason and (line.reason, line.rerun) in said:
            # The same withheld reason and rerun (a busy machine): said once.
            line = dataclasses.replace(line, reason="as above", rerun="")
        elif line.reason and line.rerun and line.reason in said:
            # The same reason, its own rerun (the rounds that would settle it).
            line = dataclasses.replace(line, reason="as above")
        said.add(line.reason)
        said.add((line.reason, line.rerun))
        lines.append(line)
    return Answer(
        AnswerKind.HARDWARE, f"Hardware: hw off = {head} masked from process start", tuple(lines)
    )


def _verdict_line(subject, group, top, swept, unit, feature) -> AnswerLine:
    at = f" {words.at(top.size, unit, brief=True)}" if swept else ""
    word = _verdict_word(top, feature)
    figure = _off_on(top) + (at if top.speedup is not None else "")
    others = []
    for v in group[:-1]:
        if v.speedup is None:
            continue
        same = v.verdict == top.verdict
        tag = "" if same else f" ({_short_word(v)})"
        if v.why is not None and (top.why is None or type(top.why) is not type(v.why)):
            # Its own reason, briefly (an inconclusive one still says so).
            brief = words.why_not(v.why, brief=True)
            tag = f" ({'inconclusive, ' if v.verdict == 'inconclusive' else ''}{brief})"
        others.append(f"{v.speedup:.2f}× {words.at(v.size, unit, brief=True)}{tag}")
    if others:
        figure += "; " + ", ".join(others)
    withheld = next(
        (v for v in [top, *group[::-1]] if v.verdict not in (codes.USED, codes.NOT_USED)), None
    )
    # Why a path does not use the hardware (bridge.hw.whynot's reason records),
    # else why a verdict was withheld, and what would settle it.
    said = next((v for v in [top, *group[::-1]] if v.why is not None), withheld)
    reason, rerun = words.verdict_why(said, unit) if said is not None else ("", "")
    if said is None:  # judged on CPU time (a busy machine): it says so
        reason = words.on_cpu_time(top)
    return AnswerLine(subject, word, figure, reason, rerun)


def _verdict_word(v: schema.HwVerdict, feature: str) -> Phrase:
    if v.verdict == codes.USED:
        return Phrase(f"uses {feature}", Tone.GOOD)
    if v.verdict == codes.NOT_USED:
        return Phrase(f"does not use {feature}", Tone.MUTED)
    if v.verdict == "cpu-lacks":
        return Phrase("the CPU lacks it", Tone.MUTED)
    if v.verdict == "not-openssl":
        return Phrase("not OpenSSL: the mask cannot reach it", Tone.MUTED)
    return Phrase(v.verdict, Tone.WARN)


def _short_word(v: schema.HwVerdict) -> str:
    return {codes.USED: "used", codes.NOT_USED: "not used"}.get(v.verdict, v.verdict)


def _off_on(v: schema.HwVerdict) -> str:
    if v.speedup is None:
        return ""
    c = v.speedup_ci95
    one_run = c is None or abs(c[1] - c[0]) < 1e-9
    spread = "one run each, no CI" if one_run else ci(*c, marks=words.verdict_marks(v))
    if v.verdict == codes.NOT_USED:
        # A not-used decided by the library keeps figures that need not be within the margin.
        noise = ", within noise" if words.within_noise(v.speedup_ci95) else ""
        return f"{v.speedup:.2f}× without{noise} ({spread})"
    if v.speedup < 1:  # the masked run was the faster: no "slower" beside a ratio under 1
        return f"{v.speedup:.2f}× the time without ({spread})"
    return f"{v.speedup:.2f}× slower without ({spread})"


def _row(ctx: Context, scenario: str, runtime: str, call_id: str) -> schema.Result | None:
    return next(
        (
            r
            for r in ctx.report.results
            if r.scenario == scenario and r.runtime == runtime and r.call_id == call_id
        ),
        None,
    )


# -- 2. versions ---------------------------------------------------------------------


def versions(ctx: Context, scenario: str) -> Answer | None:
    """Each runtime against the first named of its kind (or --baseline):
    at the smallest and largest size, and at any size between whose
    significance differs from the size before it."""
    pairs: dict[tuple[str, str, str, str], list[schema.Difference]] = defaultdict(list)
    rows = {
        (r.runtime, r.call_id, r.size, r.hw): r
        for r in ctx.report.results
        if r.scenario == scenario
    }
    for d in ctx.diffs:
        if d.scenario == scenario and d.against == codes.FIRST and not d.hw.masked:
            pairs[(d.runtime, d.baseline_runtime, d.call_id, d.baseline_call_id)].append(d)
    if not pairs:
        return None
    unit = ctx.unit(scenario)
    lines = []
    for (runtime, baseline, call_id, _), ds in pairs.items():
        ds.sort(key=lambda d: d.size)
        row = rows.get((runtime, call_id, ds[0].size, ds[0].hw))
        call = names.short_call(row) if row else call_id
        swept = len(units.sizes_run(ctx.report, scenario)) > 1
        for d in _telling(ds):
            at = f" {words.at(d.size, unit, brief=True)}" if swept else ""
            subject = (
                f"{runtime} against {baseline}: {ctx.names.language(runtime, call_id)} {call}{at}"
            )
            lines.append(difference_line(ctx, subject, d))
    return Answer(
        AnswerKind.VERSIONS, "Versions: each against the first named of its kind", tuple(lines)
    )


def _telling(ds: list[schema.Difference]) -> list[schema.Difference]:
    """The smallest and largest size, and each size whose significance
    differs from the one before it."""
    out = [ds[0]]
    for prev, d in zip(ds, ds[1:], strict=False):
        if _sig(d) != _sig(prev) and d is not ds[-1]:
            out.append(d)
    if len(ds) > 1:
        out.append(ds[-1])
    return out


def _sig(d: schema.Difference) -> str:
    return codes.NOISE if words.is_drift(d) else d.verdict


def difference_line(ctx: Context, subject: str, d: schema.Difference) -> AnswerLine:
    """'2.09× slower (CI 1.90–2.31)', '1.02×, within noise', '1.66× ?': the
    runtime's time over its baseline's, in the words of its finding."""
    ratio = f"{d.ratio:.2f}×"
    spread = f"({ci(*d.ci95, marks=words.margins(d.reasons))})" if d.ci95 else ""
    named = dataclasses.replace(d, reasons=tuple(_labelled(ctx, r) for r in d.reasons))
    reason, rerun = words.difference_why(named, ctx.report.settings.quick)
    if words.is_drift(d):
        return AnswerLine(
            subject, Phrase("within noise", Tone.MUTED), f"{ratio} {spread}", reason, rerun
        )
    # A significant or noise verdict's reasons say what makes its CI lopsided.
    if d.verdict == codes.SLOWER:
        return AnswerLine(subject, Phrase(f"{ratio} slower", Tone.BAD), spread, reason)
    if d.verdict == codes.FASTER:
        return AnswerLine(
            subject,
            Phrase(f"{1 / d.ratio:.2f}× faster", Tone.GOOD),
            f"{ratio} the time {spread}",
            reason,
        )
    if d.verdict == codes.NOISE:
        return AnswerLine(
            subject, Phrase("within noise", Tone.MUTED), f"{ratio} {spread}".strip(), reason
        )
    return AnswerLine(subject, Phrase(f"{ratio} ?", Tone.WARN), spread, reason, rerun)


def _labelled(ctx: Context, r: Reason) -> Reason:
    """A reason that names a cell, naming a user's expression by its label
    (bridge time's name=EXPR) rather than its id (expr:83f2aa0a)."""
    if not str(r.params.get("call_id", "")).startswith(calls.USER_PREFIX):
        return r
    row = next(
        (
            x
            for x in ctx.report.results
            if (x.scenario, x.runtime, x.call_id) == (r["scenario"], r["runtime"], r["call_id"])
        ),
        None,
    )
    return r if row is None else Reason(r.why, {**r.params, "call_id": names.short_call(row)})


# -- 3. scaling ----------------------------------------------------------------------


def scaling(ctx: Context, scenario: str) -> Answer | None:
    c = ctx.report.concurrency
    if c is None or not c.scaling:
        return None
    mine = [s for s in c.scaling if s.scenario == scenario and s.level > 1]
    if not mine:
        return None
    cells = {(*cell.group, cell.level): cell for cell in c.cells}
    # Each call's highest level that has a CPU per worker (more workers
    # than CPUs only take turns), else its highest.
    top: dict[tuple, Scaling] = {}
    for s in sorted(mine, key=lambda s: (not s.oversubscribed, s.level)):
        top[(s.runtime, s.call_id, s.mode, s.size, s.hw)] = s
    sizes = sorted({s.size for s in top.values()})
    ends = {sizes[0], sizes[-1]}
    unit = ctx.unit(scenario)
    lines = []
    for s in top.values():
        if s.size not in ends:
            continue
        cell = cells.get((s.scenario, s.runtime, s.call_id, s.mode, s.size, s.hw, s.level))
        at = f" {words.at(s.size, unit, brief=True)}" if len(sizes) > 1 else ""
        lines.append(_scaling_line(ctx, s, cell, at))
    head = f"Scaling: throughput of N workers at once over one ({', '.join(map(str, c.levels))})"
    return Answer(AnswerKind.SCALING, head, tuple(lines))


def _scaling_line(ctx: Context, s: Scaling, cell: LevelResult | None, at: str) -> AnswerLine:
    call = tables.short_level_call(cell) if cell else s.call_id
    mode = {"processes": "processes", "threads": "threads", "multi": "processes"}.get(
        s.mode, s.mode
    )
    subject = f"{ctx.names.who(s.runtime, call, s.call_id)}, {s.level} {mode}{at}"
    figure = f"{s.scaling:.2f}×" + (f" ({ci(*s.ci95)})" if s.ci95 else "")
    over = " (more workers than CPUs)" if s.oversubscribed else ""
    if s.ci95 is None:
        return AnswerLine(
            subject,
            Phrase(f"{s.scaling:.2f}×, no CI", Tone.WARN),
            over.strip(),
            "one run per level, no spread to judge",
            "",
        )
    lo, hi = s.ci95
    if lo > 1 + SCALE_MARGIN:
        return AnswerLine(subject, Phrase("scales", Tone.GOOD), figure + over)
    if hi < 1 + SCALE_MARGIN:
        return AnswerLine(subject, Phrase("does not scale", Tone.BAD), figure + over)
    return AnswerLine(
        subject,
        Phrase("unclear", Tone.WARN),
        figure + over,
        f"the CI reaches both sides of {1 + SCALE_MARGIN:.2f}×",
        "rerun with more --rounds",
    )


# -- 4. TLS handshakes -------------------------------------------------------------


def handshakes(ctx: Context, scenario: str) -> Answer | None:
    """Per runtime and call: handshakes per second (client and server), and
    the server's CPU per handshake where the run measured it."""
    block = ctx.report.tls
    cells = [c for c in block.cells if c.scenario == scenario and not c.hw.masked] if block else []
    rows = [r for r in ctx.results(scenario) if r.ok and not r.hw.masked and r.median() > 0]
    if cells:
        lines = []
        for c in cells:
            subject = f"{ctx.names.language(c.runtime)} {c.call_id} on {c.runtime}"
            row = next((r for r in rows if (r.runtime, r.call_id) == (c.runtime, c.call_id)), None)
            figure = _each(c.wall_ns, row)
            if c.server_cpu_ns:
                figure += f"; the server's CPU {_duration(c.server_cpu_ns)} a handshake"
            lines.append(
                AnswerLine(subject, Phrase(f"{c.handshakes_per_s:,.0f} handshakes/s"), figure)
            )
        head = "Handshakes per second, client and server, per runtime and version"
        return Answer(AnswerKind.HANDSHAKES, head, tuple(lines))
    if not rows:
        return None
    lines = []
    for r in rows:
        s = r.summary()
        rate = 1e9 / s.median
        subject = (
            f"{ctx.names.short_who(r)} on {r.runtime}"
            if not ctx.names.is_several(r.runtime)
            else ctx.names.short_who(r)
        )
        lines.append(AnswerLine(subject, Phrase(f"{rate:,.0f} handshakes/s"), _each(s.median, r)))
    return Answer(
        AnswerKind.HANDSHAKES, "Handshakes per second, per runtime and version", tuple(lines)
    )


def _each(ns: float, r: schema.Result | None) -> str:
    """The rate's CI beside the rate it is of, then the time a handshake:
    "(CI 63–198), 14.82 ms each"."""
    spread = _rate_ci(r) if r is not None else ""
    return f"{spread}, {_duration(ns)} each" if spread else f"{_duration(ns)} each"


def _rate_ci(r: schema.Result) -> str:
    """The handshakes per second's CI, from the cell's times: "(CI 63–198)"."""
    s = r.summary()
    if s.n > 1 and not r.imported and s.ci95[0] > 0:
        return f"(CI {1e9 / s.ci95[1]:,.0f}–{1e9 / s.ci95[0]:,.0f})"
    return ""


def _duration(ns: float) -> str:
    """A handshake's time in the unit it reads in: 14.82 ms, 568 µs."""
    if ns >= 1e6:
        return f"{ns / 1e6:,.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:,.0f} µs"
    return fmt_ns(ns)


# -- 5. time per call ----------------------------------------------------------------


def times(ctx: Context, scenario: str) -> Answer | None:
    """Each row at the largest size (hw on) against the fastest doing the
    same work; the user's expressions (bridge time) by their labels. One
    row is its time alone: nothing to compare it with."""
    report = ctx.report
    rows = [
        r
        for r in ctx.results(scenario)
        if r.ok and not r.hw.masked and not ctx.is_part(r) and ctx.role(r) != "setup"
    ]
    if not rows:
        return None
    size = max(r.size for r in rows)
    rows = [r for r in rows if r.size == size]
    expressions = report.scenario_kind(scenario) == ScenarioKind.EXPR or all(
        r.call_id.startswith("expr:") for r in rows
    )
    roles = sorted({ctx.role(r) for r in rows})
    unit = ctx.unit(scenario)
    swept = len(units.sizes_run(report, scenario)) > 1
    where = f" {words.at(size, unit, brief=True)}" if size and swept else ""
    kind = AnswerKind.EXPRESSIONS if expressions else AnswerKind.TIMES
    if len(rows) == 1:
        r = rows[0]
        return Answer(
            kind,
            f"Time per call{where}",
            (AnswerLine(_subject(ctx, r, expressions), Phrase(_time(r))),),
        )
    apart = " (each role apart)" if len(roles) > 1 else ""
    head = f"Time per call{where}, ranked, against the fastest{apart}"
    lines = []
    for r in sorted(rows, key=lambda r: (roles.index(ctx.role(r)), r.median())):
        subject = _subject(ctx, r, expressions)
        if len(roles) > 1 and ctx.role(r):
            subject += f" ({ctx.role(r)})"
        d = ctx.diff(codes.FASTEST, r)
        if d is None:
            lines.append(AnswerLine(subject, Phrase("the fastest", Tone.GOOD), _time(r)))
            continue
        line = difference_line(ctx, subject, d)
        # The ratio's CI beside the ratio ("2.63× slower (CI 1.86–3.38)"), then the time.
        figure = f"{line.figure}, {_time(r)}" if line.figure else _time(r)
        lines.append(AnswerLine(line.subject, line.verdict, figure, line.reason, line.rerun))
    return Answer(kind, head, tuple(lines))


def _subject(ctx: Context, r: schema.Result, expressions: bool) -> str:
    if expressions:
        lang = ctx.names.language(r.runtime, r.call_id)
        on = f" on {r.runtime}" if ctx.names.is_several(r.runtime) else ""
        return f"{r.call} ({lang}{on})"
    return ctx.names.short_who(r)


def _time(r: schema.Result) -> str:
    s = r.summary()
    ops = 1e9 / s.median if s.median > 0 else 0.0
    return f"{fmt_ns(s.median)}, {si3(ops)} calls/s"
