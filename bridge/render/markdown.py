"""Markdown for GitHub issues and forums: summary sentences, one table per
scenario, the notes on what each row measures, provenance, reproduce."""

from __future__ import annotations

from tabulate import tabulate

from bridge import plain
from bridge.render import common, concurrency, ratios, summary, units, upgrade
from bridge.render import noise as noise_view
from bridge.report import schema


@plain.escaped
def render(report: schema.Report) -> str:
    out = [f"### {common.title(report)}", ""]
    out += [f"- {s.strip()}" for s in summary.sentences(report)]
    for scenario, results in common.by_scenario(report).items():
        out += ["", f"#### {scenario}: {common.scenario_description(report, scenario)}", ""]
        out += _table(report, common.ordered(report, results))
    out += concurrency.markdown_lines(report)
    paragraphs = noise_view.lines(report)
    if paragraphs:
        out += ["", "#### Noise", ""] + [f"- {p}" for p in paragraphs]
    out += ["", "#### Environment", ""]
    out += [f"- {item}" for item in common.provenance_items(report)]
    problems = [line for line in common.problem_lines(report) if line]
    if problems:
        out += ["", "#### Problems", ""] + [f"- {p.strip()}" for p in problems]
    if report.reproduce:
        out += ["", "#### Reproduce", "", "```sh", report.reproduce, "```"]
    return "\n".join(out).rstrip() + "\n"


def _table(report: schema.Report, results: list[schema.Result]) -> list[str]:
    marks = common.semantics_marks(results)
    fastest = common.fastest(report, results)
    match = common.match_by_result(report)
    unsupported, notes = common.unsupported(results)
    ratio = ratios.Ratios(report)
    first = [ratios.FIRST] if ratio.shows_first else []
    unit = units.unit(report, results[0].scenario) if results else units.BYTES
    scale = units.scale_of(results)
    rows = []
    for r in results:
        call = f"`{r.call}` [{marks[r.semantics]}]"
        if not r.ok:
            mark = f"unsupported [{unsupported[id(r)]}]"
            rows.append([r.runtime, call, r.size, r.hw, mark, "", "", "", *["" for _ in first]])
            continue
        c = common.cells(r, fastest, match, unit=unit, scale=scale)
        rows.append(
            [
                r.runtime,
                call,
                units.cell_value(r.size, unit),
                r.hw,
                c["ns_ci"],
                c["mbs"],
                ratio.cell(ratios.FASTEST, r),
                c["ok"],
                *[ratio.cell(a, r) for a in first],
            ]
        )
    headers = [
        "runtime",
        "call",
        units.column_of(report, results[0].scenario) if results else units.BYTES,
        "hw",
        f"{scale.per_op()} median (95% CI)",
        "MB/s",
        "× fastest",
        "output ok",
        *[ratio.first_heading() for _ in first],
    ]
    lines = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True).splitlines()
    lines.append("")
    lines += [f"[{mark}] {semantics}  " for semantics, mark in marks.items()]
    lines += [f"{note}  " for note in notes]
    lines += [f"{line}  " for line in ratio.legend(results)]
    lines += ["", *common.semantics_warning(results)]
    if results:
        fit = common.fit_lines(report, results[0].scenario)
        if fit:
            lines += ["", fit[1], "", "```", *fit[2:], "```"]
        lines += upgrade.wide(upgrade.of(report, results[0].scenario), "markdown")
        lines += common.verdict_lines(report, results[0].scenario)
    return lines
