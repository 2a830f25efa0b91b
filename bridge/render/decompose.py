"""The cost decomposition (bridge.analysis.decompose) in sentences: how much of a call
is set-up, and what the call costs with the set-up done once. One sentence
per call; a call measured at several sizes lists them in it."""

from __future__ import annotations

from collections import defaultdict

from bridge.analysis import decompose
from bridge.render import common, units
from bridge.report import schema
from bridge.view import words


def sentences(report: schema.Report, scenario: str) -> list[str]:
    groups: dict[tuple[str, str], list[schema.Decomposition]] = defaultdict(list)
    for d in report.decompositions:
        if d.scenario == scenario:
            groups[(d.runtime, d.call_id)].append(d)
    unit = units.unit(report, scenario)
    return [_sentence(report, sorted(ds, key=lambda d: d.size), unit) for ds in groups.values()]


def lines(report: schema.Report, scenario: str) -> list[str]:
    """The block under a scenario's table (the table view has no summary)."""
    found = sentences(report, scenario)
    if not found:
        return []
    return ["", "Set-up cost (what a prepared key or a reused context saves):"] + [
        f"- {s}" for s in found
    ]


def _sentence(report: schema.Report, ds: list[schema.Decomposition], unit: str) -> str:
    d0 = ds[0]
    # "... on erlang@25.2.3" where the run has two of its kind.
    who = common.who(report, d0.runtime, d0.call)
    split = [d for d in ds if d.setup_ns is not None]
    if not split:
        why = words.reasons(d0.reasons) if d0.reasons else d0.note or ""
        return f"{who}: {d0.setup} cannot be timed apart here ({why})."
    sizes = len(split) > 1

    def at(d: schema.Decomposition) -> str:
        if not sizes:
            return ""
        return (
            f" at {units.short(d.size, unit)}"
            if unit != units.PER_CALL
            else f" {words.at(d.size, unit, True)}"
        )

    def per_size(values: list[tuple[schema.Decomposition, float | None]]) -> str:
        figures = ", ".join(_us(v) for _, v in values)
        listed = ", ".join(units.short(d.size, unit) for d, _ in values)
        return figures + (f" at {listed}" if sizes else "")

    parts = []
    for d in split:
        lo = d.setup_ci95[0] if d.setup_ci95 else d.setup_ns
        if d.setup_ns <= 0 or lo <= 0:
            parts.append(f"nothing measurable of {_us(d.total_ns)}{at(d)}")
            continue
        share = "" if d.share is None else f" ({d.share:.0%})" if d.share >= 0.01 else " (<1%)"
        parts.append(f"~{_us(d.setup_ns)} of {_us(d.total_ns)}{share}{at(d)}")
    text = f"{who} spends {'; '.join(parts)} {d0.setup}"
    if d0.method != decompose.BY_DIFFERENCE:
        return text + " (timed alone)."
    text += f": with it done once, {d0.prepared} {_verb(d0)} in "
    text += per_size([(d, d.prepared_ns) for d in split])
    if d0.prepared.endswith("on the same libcrypto"):
        text += " (so the difference also counts the call's other per-call work)"
    alone = [(d, d.alone_ns) for d in split if d.alone_ns is not None]
    if alone:
        text += f"; {d0.alone} alone takes {per_size(alone)}"
    return text + "."


def _verb(d: schema.Decomposition) -> str:
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
