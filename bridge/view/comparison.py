"""`bridge compare` as a view: per report compared with the first, the
answer (each call at its smallest and largest size, and at any size whose
verdict differs, saying slower or faster with its CI), one table per
scenario, the notes (unequal load, too few samples, where the versions
differ), and what differs between the environments. The comparison is
bridge.analysis.compare's, read here as data."""

from __future__ import annotations

from collections import defaultdict

from bridge import stats
from bridge.report.comparison import Comparison, Row
from bridge.report.findings import Basis
from bridge.view import chart, codes, units, words
from bridge.view.context import ci, count
from bridge.view.model import (
    Answer,
    AnswerKind,
    AnswerLine,
    Cell,
    Column,
    Detail,
    Note,
    NoteKind,
    Phrase,
    Section,
    Table,
    Tone,
    View,
)

SHORT = {codes.NOISE: "noise", codes.UNKNOWN: "n/a", codes.FEW: "few", codes.UNEQUAL: "load"}


def build(c: Comparison, detail: Detail = Detail.NORMAL) -> View:
    sections = [_pair(c, i, rows, detail) for i, rows in c.pairs]
    env = []
    for what, values in c.environment_diff:
        known = [f"{c.labels[i]}: {v}" for i, v in enumerate(values) if v is not None]
        env.append(f"{what}: {' | '.join(known)}")
    said = [Note(NoteKind.CAVEAT, f"What differs between the environments: {e}.") for e in env]
    if not env:
        said = [Note(NoteKind.FINDING, "The environments match (CPU, OS, kernel, OTP, OpenSSL).")]
    return View(
        title=f"{', '.join(c.labels[1:])} against {c.labels[0]}",
        sections=tuple(sections),
        caveats=tuple(said),
        detail=detail,
    )


def _pair(c: Comparison, i: int, rows: list[Row], detail: Detail) -> Section:
    title = f"{c.labels[i]} against {c.labels[0]}"
    if not rows:
        note = Note(NoteKind.PROBLEM, "No results line up (different scenarios, calls or sizes).")
        return Section(key=c.labels[i], title=title, notes=(note,))
    significant = sum(r.verdict in codes.SIGNIFICANT for r in rows)
    head = (
        f"{significant} of {count(len(rows), 'cell')} {'differs' if len(rows) == 1 else 'differ'}"
    )
    head += f" (B/A: the time of {c.labels[i]} over {c.labels[0]})"
    answer = Answer(AnswerKind.VERSIONS, head, tuple(_answer_lines(rows, named=_named(rows))))
    tables = tuple(
        _table(rows, scenario, detail) for scenario in dict.fromkeys(r.scenario for r in rows)
    )
    notes = []
    if i in c.unequal:
        a, b = c.conditions[0], c.conditions[i]
        differed = f"A: {words.conditions(a)}; B: {words.conditions(b)}"
        notes.append(
            Note(
                NoteKind.CAVEAT,
                f"The machines differed ({differed}): a difference in the direction of"
                " the load is judged on CPU time per call, and marked unequal load where"
                " CPU time cannot settle it.",
            )
        )
    few = dict.fromkeys(
        words.reasons(r.reasons) for r in rows if r.verdict == codes.FEW and r.reasons
    )
    notes += [Note(NoteKind.CAVEAT, f"Too few samples: {n}.") for n in few]
    notes += [Note(NoteKind.FINDING, s) for s in _upgrades(c.upgrades.get(i, []))]
    return Section(
        key=c.labels[i],
        title=title,
        answers=(answer,),
        tables=tables,
        notes=tuple(notes),
        series=chart.compared((c.labels[0], c.labels[i]), rows),
    )


def _named(rows: list[Row]) -> set[str]:
    """Kinds with several runtimes on either side: their rows name the runtimes."""
    return {
        k
        for k in {r.kind for r in rows}
        if len({r.runtime_a for r in rows if r.kind == k}) > 1
        or len({r.runtime_b for r in rows if r.kind == k}) > 1
    }


def _runtimes(r: Row) -> str:
    return r.runtime_a if r.runtime_a == r.runtime_b else f"{r.runtime_a} / {r.runtime_b}"


def _answer_lines(rows: list[Row], named: set[str]) -> list[AnswerLine]:
    groups: dict[tuple, list[Row]] = defaultdict(list)
    for r in rows:
        groups[(r.scenario, r.kind, r.call_id, r.hw_a, r.hw_b, _runtimes(r))].append(r)
    out = []
    for (scenario, kind, call_id, hw_a, hw_b, runtimes), rs in groups.items():
        rs.sort(key=lambda r: r.size)
        picked = [rs[0]] + [
            b
            for a, b in zip(rs, rs[1:], strict=False)
            if a.verdict != b.verdict and b is not rs[-1]
        ]
        picked += [rs[-1]] if len(rs) > 1 else []
        for r in picked:
            hw = (
                ""
                if hw_a == hw_b == "on"
                else f", hw {hw_a}"
                if hw_a == hw_b
                else f", hw {hw_a}/{hw_b}"
            )
            at = f" at {units.short(r.size)}" if len(rs) > 1 or r.size else ""
            on = f" on {runtimes}" if kind in named else ""
            subject = f"{scenario}: {kind} {call_id}{on}{at}{hw}"
            out.append(_line(subject, r))
    return out


def _line(subject: str, r: Row) -> AnswerLine:
    spread = f"({ci(*r.ci95)})" if r.ci95 else ""
    ratio = f"{r.ratio:.2f}×"
    # Judged on CPU time (the loads differed): it says so.
    basis = words.reasons(r.reasons) if r.basis is Basis.CPU else ""
    if r.verdict == codes.SLOWER:
        return AnswerLine(subject, Phrase(f"{ratio} slower", Tone.BAD), spread, basis)
    if r.verdict == codes.FASTER:
        return AnswerLine(
            subject,
            Phrase(f"{1 / r.ratio:.2f}× faster", Tone.GOOD),
            f"{ratio} the time {spread}",
            basis,
        )
    if r.verdict == codes.NOISE:
        return AnswerLine(subject, Phrase("within noise", Tone.MUTED), f"{ratio} {spread}".strip())
    reason, _ = words.difference_why(r)
    if r.verdict == codes.UNEQUAL:
        return AnswerLine(
            subject,
            Phrase(f"{ratio}, unequal load", Tone.WARN),
            spread,
            reason,
            "compare runs from equally loaded machines",
        )
    if r.verdict == codes.FEW:
        return AnswerLine(
            subject, Phrase(f"{ratio} ?", Tone.WARN), "", reason or "too few samples for a CI", ""
        )
    return AnswerLine(
        subject, Phrase(f"{ratio} ?", Tone.WARN), "", "as posted: no samples to tell", ""
    )


def _table(rows: list[Row], scenario: str, detail: Detail) -> Table:
    mine = [r for r in rows if r.scenario == scenario]
    named = _named(mine)
    times = [x for r in mine for x in (_low(r.low_a, r.median_a), _low(r.low_b, r.median_b))]
    scale = units.time_scale(times)
    low = stats.LOW_STATISTIC
    cols = [Column("call", "call", ident=True)]
    cols += [Column("runtime", "runtime (A / B)", ident=True)] if named else []
    cols += [
        Column("size", "size", right=True, ident=True),
        Column("hw", "hw", ident=True),
        Column("a", f"A {low} {scale.name}", right=True, drop=2),
        Column("b", f"B {low} {scale.name}", right=True, drop=1),
        Column("ratio", "B/A (95% CI)", right=True),
        Column("verdict", "verdict"),
    ]
    if detail is Detail.VERBOSE:
        cols = [Column(c.key, c.header, c.right, None, c.ident) for c in cols]
    out = []
    for r in mine:
        hw = str(r.hw_a) if r.hw_a == r.hw_b else f"{r.hw_a}/{r.hw_b}"
        spread = f" ({r.ci95[0]:.2f}–{r.ci95[1]:.2f})" if r.ci95 else ""
        tone = (
            Tone.BAD
            if r.verdict == codes.SLOWER
            else Tone.GOOD
            if r.verdict == codes.FASTER
            else Tone.PLAIN
        )
        by = {
            "call": Cell(r.call_id if r.call_id else r.call),
            "runtime": Cell(_runtimes(r) if r.kind in named else ""),
            "size": Cell(str(r.size)),
            "hw": Cell(hw),
            "a": Cell(scale.fmt(_low(r.low_a, r.median_a))),
            "b": Cell(scale.fmt(_low(r.low_b, r.median_b))),
            "ratio": Cell(f"{r.ratio:.2f}×{spread}", short=f"{r.ratio:.2f}×"),
            "verdict": Cell(r.verdict, tone, short=SHORT.get(r.verdict, r.verdict)),
        }
        out.append(tuple(by[c.key] for c in cols))
    return Table(f"-- {scenario}", tuple(cols), tuple(out))


def _low(low: float | None, median: float) -> float:
    """The statistic the ratio is of; a comparison from before it, the median."""
    return median if low is None else low


def _upgrades(ups) -> list[str]:
    """Where each version's difference lives, per call and per byte."""
    return [
        words.upgrade_split(u, f"{u.kind} {u.call_id}") for u in ups if u.delta_a_ns is not None
    ]
