"""The cost decomposition (bridge.decompose) in sentences: how much of a call
is set-up, and what the call costs with the set-up done once. One sentence
per call; a call measured at several sizes lists them in it."""

from __future__ import annotations

from collections import defaultdict

from bridge import decompose, model, vocab
from bridge.render import units


def sentences(report: model.Report, scenario: str) -> list[str]:
    groups: dict[tuple[str, str], list[model.Decomposition]] = defaultdict(list)
    for d in report.decompositions:
        if d.scenario == scenario:
            groups[(d.runtime, d.call_id)].append(d)
    unit = units.unit(report, scenario)
    return [_sentence(report, sorted(ds, key=lambda d: d.size), unit) for ds in groups.values()]


def lines(report: model.Report, scenario: str) -> list[str]:
    """The block under a scenario's table (the table view has no summary)."""
    found = sentences(report, scenario)
    if not found:
        return []
    return ["", "Set-up cost (what a prepared key or a reused context saves):"] + [
        f"- {s}" for s in found
    ]


def _sentence(report: model.Report, ds: list[model.Decomposition], unit: str) -> str:
    d0 = ds[0]
    kind = report.kind_of(d0.runtime)
    who = f"{vocab.KIND_NAMES.get(kind, kind)} {d0.call}"
    split = [d for d in ds if d.setup_ns is not None]
    if not split:
        return f"{who}: {d0.setup} cannot be timed apart here ({d0.note})."
    sizes = len(ds) > 1
    parts = []
    for d in split:
        at = f" at {units.short(d.size, unit)}" if sizes else ""
        share = "" if d.share is None else f" ({d.share:.0%})" if d.share >= 0.01 else " (<1%)"
        lo = d.setup_ci95[0] if d.setup_ci95 else d.setup_ns
        if d.setup_ns is not None and (d.setup_ns <= 0 or lo <= 0):
            parts.append(f"nothing measurable of {_us(d.total_ns)}{at}")
        else:
            parts.append(f"~{_us(d.setup_ns)} of {_us(d.total_ns)}{share}{at}")
    if d0.method == decompose.TIMED_ALONE:
        how = "timed alone"
    else:
        how = (
            "by difference with the prepared call, so it also counts the call's other per-call work"
        )
    text = f"{who} spends {'; '.join(parts)} {d0.setup} ({how})"
    prepared = [d for d in split if d.prepared_ns is not None]
    if prepared:
        figures = ", ".join(_us(d.prepared_ns) for d in prepared)
        where = f" at {', '.join(units.short(d.size, unit) for d in prepared)}" if sizes else ""
        text += f"; with it done once, {d0.prepared} {_verb(d0)} in {figures}{where}"
    rest = [_rest(d) for d in prepared if d.method == decompose.TIMED_ALONE]
    if any(rest):
        text += (
            f"; {', '.join(_us(r) for r in rest if r)} more per call than the two together:"
            " work a fresh key or context adds that neither row shows alone"
        )
    return text + "."


def _rest(d: model.Decomposition) -> float | None:
    """What the whole call costs beyond set-up plus prepared call, when that
    is more than a tenth of it (else noise)."""
    if d.total_ns is None or d.setup_ns is None or d.prepared_ns is None:
        return None
    rest = d.total_ns - d.setup_ns - d.prepared_ns
    return rest if rest > 0.1 * d.total_ns else None


def _verb(d: model.Decomposition) -> str:
    for rule in decompose.RULES:
        if rule.whole == d.call_id and rule.setup == d.setup:
            return rule.done
    return "runs"


def _us(ns: float | None) -> str:
    if ns is None:
        return "?"
    us = ns / 1000
    if abs(us) >= 100:
        return f"{us:,.0f} µs"
    return f"{us:.1f} µs" if abs(us) >= 10 else f"{us:.2f} µs"
