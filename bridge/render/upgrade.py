"""The upgrade view in each format (bridge.analysis.upgrade computes it, bridge.view.words
words it): one sentence
per call saying where the difference between two versions lives, and a table
of new/old per size beside the cost model of each version."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from bridge.render import common, units
from bridge.render.escape import Md, md, md_table
from bridge.report import schema
from bridge.view import words

HEADING = "Upgrade view: new against old, per size, and the cost model (ns per call = a + b·bytes)"


class Shown(list):
    """A scenario's upgrades as a view shows them: with the unit of its sizes,
    and the hint to split a difference per call and per byte when this is
    the report's first scenario where following it would work (bytes, one
    size): the hint is said once per report."""

    unit: str = units.BYTES
    hint: str = ""


def sentences(
    upgrades: Sequence[schema.Upgrade], ascii_only: bool = False, hint: bool = True
) -> list[str]:
    """One sentence per call, and the report's one hint (`hint`: the view
    that says it; a view showing both the summary and the upgrade block says
    it in the summary)."""
    unit = getattr(upgrades, "unit", units.BYTES)
    out = [words.upgrade_line(u, unit, "x" if ascii_only else "×") for u in upgrades]
    said = getattr(upgrades, "hint", "") if hint else ""
    return out + [said] if said else out


def of(report: schema.Report, scenario: str) -> Shown:
    shown = Shown(u for u in report.upgrades if u.scenario == scenario)
    shown.unit = units.unit(report, scenario)
    first = next((u.scenario for u in report.upgrades if _hint_works(report, u)), None)
    shown.hint = words.SPLIT_HINT if first == scenario else ""
    return shown


def _hint_works(report: schema.Report, u: schema.Upgrade) -> bool:
    return u.delta_a_ns is None and units.unit(report, u.scenario) == units.BYTES


def wide(upgrades: Sequence[schema.Upgrade], fmt: str = "table", width: int = 100) -> list[str]:
    """Table and markdown: the sentences, then one row per call with new/old
    at every size (markdown: lines of bridge.render.escape.Md)."""
    if not upgrades:
        return []
    markdown = fmt == "markdown"
    head = [Md(""), md("**{}:**", HEADING), Md("")] if markdown else ["", f"{HEADING}:", ""]
    lines: list[str] = list(head)
    # Markdown opens with the summary sentences, which give the hint already.
    for s in sentences(upgrades, hint=not markdown):
        if markdown:
            lines.append(md("- {}", s))
        else:
            lines += textwrap.wrap(s, width, initial_indent="- ", subsequent_indent="  ")
    sizes = sorted({s.size for u in upgrades for s in u.sizes})
    rows = []
    for u in upgrades:
        ratio = {s.size: f"{s.ratio:.2f}×" for s in u.sizes}
        rows.append(
            [
                u.new,
                u.old,
                u.call_id,
                u.hw,
                _pair(u.old_a_ns, u.new_a_ns, "{:,.0f}"),
                _pair(u.old_b_ns_per_byte, u.new_b_ns_per_byte, "{:.3f}"),
                *(ratio.get(n, "") for n in sizes),
            ]
        )
    headers = ["new", "old", "call", "hw", "a ns/call", "b ns/byte"]
    headers += [words.short(n, getattr(upgrades, "unit", units.BYTES)) for n in sizes]
    if markdown:
        lines += [Md(""), *md_table(rows, headers)]
    else:
        lines += [""] + common.simple_table(rows, headers)
    return lines


def narrow(upgrades: Sequence[schema.Upgrade], width: int = 72) -> list[str]:
    """Text (72 columns, ASCII): per call, which two runtimes, their cost
    models, then one row per size (the sentences open the text view)."""
    lines: list[str] = []
    unit = getattr(upgrades, "unit", units.BYTES)
    for u in upgrades:
        name = words.who(u.kind, u.call) if u.kind in ("erlang", "python") else u.call
        head = f"{name}, hw {u.hw}: {u.new} against {u.old}"
        lines += ["", *textwrap.wrap(head, width, subsequent_indent="  ")]
        if u.old_a_ns is not None:
            lines += textwrap.wrap(
                f"  a ns/call {_pair(u.old_a_ns, u.new_a_ns, '{:,.0f}', '->')},"
                f" b ns/byte {_pair(u.old_b_ns_per_byte, u.new_b_ns_per_byte, '{:.3f}', '->')}",
                width,
                subsequent_indent="  ",
            )
        scale = units.time_scale([s.old_ns for s in u.sizes] + [s.new_ns for s in u.sizes])
        rows = [
            [
                units.cell_value(s.size, unit),
                scale.fmt(s.old_ns),
                scale.fmt(s.new_ns),
                f"{s.ratio:.2f}",
                f"{s.ratio_ci95[0]:.2f}-{s.ratio_ci95[1]:.2f}" if s.ratio_ci95 else "n/a",
            ]
            for s in u.sizes
        ]
        headers = [
            units.column(unit),
            f"old {scale.name}",
            f"new {scale.name}",
            "new/old",
            "95% CI",
        ]
        table = common.simple_table(rows, headers, width)
        lines += ["", *(f"  {line}" for line in table)]
    if lines:
        lines = ["", "Upgrade view (new against old; a + b*bytes per call):", *lines]
    return lines


def _pair(old: float | None, new: float | None, fmt: str, arrow: str = "→") -> str:
    if old is None or new is None:
        return "-"
    return f"{fmt.format(old)} {arrow} {fmt.format(new)}"
