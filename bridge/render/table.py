"""The terminal view of a report: a header with the versions, one table per
scenario, the semantics of each call beside its number, then problems."""

from __future__ import annotations

import textwrap

from tabulate import tabulate

from bridge import plain
from bridge.render import common, concurrency, ratios, units, upgrade
from bridge.render import decompose as decomposition
from bridge.render import noise as noise_view
from bridge.report import schema


@plain.escaped
def render(report: schema.Report) -> str:
    out = [common.title(report), ""]
    out += common.provenance_lines(report)
    for scenario, rows in common.by_scenario(report).items():
        out += ["", f"== {scenario}: {common.scenario_description(report, scenario)}"]
        out += _table(report, common.ordered(report, rows))
        out += common.fit_lines(report, scenario)
        out += upgrade.wide(upgrade.of(report, scenario))
        for line in decomposition.lines(report, scenario):
            out += textwrap.wrap(line, 100, subsequent_indent="  ") or [""]
        out += common.tc_lines(report, scenario)
        for line in common.verdict_lines(report, scenario):
            out += textwrap.wrap(line, 100, subsequent_indent="  ") or [""]
    out += concurrency.table_lines(report)
    out += common.warning_lines(report)
    paragraphs = noise_view.lines(report)
    if paragraphs:
        out.append("")
        out += [w for p in paragraphs for w in textwrap.wrap(p, 100, subsequent_indent="  ")]
    out += common.problem_lines(report)
    return "\n".join(out).rstrip() + "\n"


def _table(report: schema.Report, results: list[schema.Result]) -> list[str]:
    marks = common.semantics_marks(results)
    fastest = common.fastest(report, results)
    match = common.match_by_result(report)
    with_hw = any(r.hw.masked for r in results)
    ratio = ratios.Ratios(report)
    vs_first = ratio.shows_first
    unsupported, notes = common.unsupported(results)
    unit = units.unit(report, results[0].scenario) if results else units.BYTES
    scale = units.scale_of(results)
    rows = []
    for r in results:
        label = f"{r.call} [{marks[r.semantics]}]"
        hw = [r.hw] if with_hw else []
        if not r.ok:
            blank = ["", "", "", ""] + ([""] if vs_first else [])
            rows.append(
                [r.runtime, label, r.size, *hw, f"unsupported [{unsupported[id(r)]}]", *blank]
            )
            continue
        c = common.cells(r, fastest, match, unit=unit, scale=scale)
        rows.append(
            [
                r.runtime,
                label,
                units.cell_value(r.size, unit),
                *hw,
                c["ns_ci"],
                c["ops"],
                c["mbs"],
                ratio.cell(ratios.FASTEST, r),
                c["ok"],
                *([ratio.cell(ratios.FIRST, r)] if vs_first else []),
            ]
        )
    headers = [
        "runtime",
        "call",
        units.column_of(report, results[0].scenario) if results else units.BYTES,
        *(["hw"] if with_hw else []),
        f"{scale.per_op()} median (95% CI)",
        "ops/s",
        "MB/s",
        "× fastest",
        "output ok",
        *([ratio.first_heading()] if vs_first else []),
    ]
    align = (
        "left",
        "left",
        "right",
        *(["left"] if with_hw else []),
        "right",
        "right",
        "right",
        "left",
        "left",
        *(["left"] if vs_first else []),
    )
    table = tabulate(
        rows, headers=headers, tablefmt="simple", disable_numparse=True, colalign=align
    )
    lines = table.splitlines()
    lines.append("")
    for semantics, mark in marks.items():
        lines.append(f"[{mark}] {semantics}")
    for note in notes:
        lines += textwrap.wrap(note, 100, subsequent_indent="     ")
    for line in ratio.legend(results):
        lines += textwrap.wrap(line, 100)
    for warning in common.semantics_warning(results):
        lines += textwrap.wrap(warning, 88)
    return lines
