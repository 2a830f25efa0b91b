"""Markdown that pastes into a GitHub issue or a Discourse forum
(erlangforums, elixirforum): the answer first (one line per call and runtime,
bridge.render.answers), then one table per scenario with hw on and its masked
twin side by side, numbers right-aligned, ops/s beside ns/op, the smallest
sample beside the median, MB/s only where bytes flow; then the cost model,
noise, environment and problems folded in <details> blocks, and the command
that reproduces the run.

Nothing depends on trailing spaces (a forum strips them): notes are list
items. Inside <details> the Markdown is set off by blank lines, or GitHub
shows it raw. The user's home directory reads `~` (bridge.view.home).

Every line is Markdown made by bridge.render.escape: the view's own syntax
is the literal template of `md`, and each value from the report is escaped
for where it stands (inline text, a code span, a table cell, the <summary>
of a <details>, a fenced block). The command that reproduces the run is
rebuilt from the report's checked settings (bridge.render.reproduce), never
taken from the report."""

from __future__ import annotations

import re

from bridge import plain
from bridge.render import (
    answers,
    common,
    concurrency,
    decompose,
    ratios,
    reproduce,
    units,
    upgrade,
)
from bridge.render import env as env_view
from bridge.render import noise as noise_view
from bridge.render import tls as tls_view
from bridge.render.escape import (
    Md,
    document,
    md,
    md_cell_code,
    md_code,
    md_fence,
    md_html,
    md_row_cells,
    md_table,
)
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.view import home

BLANK = Md("")


@plain.escaped
def render(report: schema.Report) -> str:
    groups = common.by_scenario(report)
    out = [md("### {}: {}", ", ".join(groups) or "bridge", common.title(report)), BLANK]
    for scenario in groups:
        named = len(groups) > 1
        head = md("**{}**: ", scenario) if named else BLANK
        for a in answers.answers(report, scenario):
            out.append(md("- {}{} {}: {}", head, a.runtime, md_code(a.call), a.said))
        said = answers.outputs_line(report, scenario)
        out += [md("- {}{}", head, said)] if said else []
        out += [md("- {}", s) for s in decompose.sentences(report, scenario)]
        out += [md("- {}", s) for s in tls_view.sentences(report, scenario)]
    out += [md("- {}", s) for s in concurrency.sentences(report)]
    out += [md("- {}", w) for w in ratios.resolution_warning(report, ratios.Ratios(report).diffs)]
    out += [md("- Problem: {}", e.message) for e in report.errors]
    for scenario, results in groups.items():
        description = common.scenario_description(report, scenario)
        out += [BLANK, md("#### {}: {}", scenario, description), BLANK]
        out += _table(report, scenario, results)
        out += _folded_model(report, scenario)
    out += listed(align(concurrency.markdown_lines(report)))
    out += _noise(report)
    out += details("Environment", [md("- {}", i) for i in env_view.paste_items(report)])
    out += _problems(report)
    out += _reproduce(report)
    return document(out)


def _reproduce(report: schema.Report) -> list[Md]:
    """The command that measures the same again, rebuilt from the report's
    checked fields (bridge.render.reproduce), in a block that pastes into a shell."""
    rebuilt = reproduce.of(report)
    if rebuilt is None:
        return []
    out = [BLANK, md("Reproduce:"), BLANK]
    if rebuilt.argv:
        out += [*md_fence([" ".join(reproduce.words(rebuilt))], "sh")]
    notes = reproduce.notes(rebuilt)
    out += [BLANK] if rebuilt.argv and notes else []
    return out + [md("- {}", n) for n in notes]


def details(summary: str, body: list[Md]) -> list[Md]:
    """A folded block: blank lines around the Markdown inside, so that GitHub
    and Discourse render it rather than show it raw. The summary stands in
    raw HTML, where Markdown is not read: escaped as HTML text."""
    if not body:
        return []
    head = Md(f"<details><summary>{md_html(summary)}</summary>")
    return [BLANK, head, BLANK, *body, BLANK, Md("</details>")]


def pipe_table(rows: list[list], headers: list[str], right: set[int]) -> list[Md]:
    """A pipe table, columns in `right` right-aligned (`---:`). Each cell is
    escaped for a cell (md_cell): Markdown made by bridge.render.escape
    stays as it is, anything else is text."""
    align_ = ["right" if i in right else "left" for i in range(len(headers))]
    return md_table(rows, headers, "pipe", align_)


NUMERIC = re.compile(r"^[\s\d,.×x%()–\-?±+/=*]*\d[\s\d,.×x%()–\-?±+/=*a-zA-Zµ]*$")


def align(lines: list[Md]) -> list[Md]:
    """Right-align the numeric columns of the GitHub tables other modules make
    (tabulate's "github" format leaves every column left-aligned)."""
    out = list(lines)
    for i, line in enumerate(out):
        if not re.fullmatch(r"\|(-+\|)+", line) or i == 0:
            continue
        body = []
        for row in out[i + 1 :]:
            if not row.startswith("|"):
                break
            body.append([c.strip() for c in md_row_cells(row)])
        widths = [len(c) for c in line.strip("|").split("|")]
        cols = []
        for n, w in enumerate(widths):
            values = [r[n] for r in body if n < len(r) and r[n] not in ("", "-", "–")]
            numeric = values and all(NUMERIC.match(v) for v in values)
            cols.append("-" * (w - 1) + ":" if numeric else "-" * w)
        out[i] = Md("|" + "|".join(cols) + "|")
    return out


def listed(lines: list[Md]) -> list[Md]:
    """Lines that end in two spaces (a line break a forum strips) as list
    items, set off from a table before them by a blank line."""
    out: list[Md] = []
    for line in lines:
        if line.endswith("  ") and line.strip():
            if out and out[-1].startswith("|"):
                out.append(BLANK)
            line = Md(line.rstrip())
            out.append(line if line.startswith("- ") else Md(f"- {line}"))
        else:
            out.append(Md(line.rstrip()))
    return out


def _table(report: schema.Report, scenario: str, results: list[schema.Result]) -> list[Md]:
    marks = common.semantics_marks(results)
    fastest = common.fastest(report, results)
    match = common.match_by_result(report)
    unsupported, notes = common.unsupported(results)
    ratio = ratios.Ratios(report)
    unit = units.unit(report, scenario)
    mbs = answers.bytes_flow(report, scenario)
    cs = answers.cells(report, results)
    both = any(c.on and c.off for c in cs)
    only_off = all(c.on is None for c in cs)
    first = ratio.shows_first and any(c.on and ratio.get(ratios.FIRST, c.on) for c in cs)
    scale = units.scale_of(results)
    rows = []
    for c in cs:
        r = c.first
        call = md("{} [{}]", md_cell_code(r.call), marks[r.semantics])
        head = [r.runtime, call, units.cell_value(r.size, unit)]
        if not r.ok:
            rows.append([*head, md("unsupported [{}]", unsupported[id(r)])])
            continue
        s = r.summary()
        cell = common.cells(r, fastest, match, unit=unit, scale=scale)
        ops = answers.si3(1e9 / s.median) if s.median > 0 else "–"
        row = [*head, cell["median"], _ci(r, s, scale), cell["low"], ops]
        row += [cell["mbs"]] if mbs else []
        if both:
            row += _off_columns(c, scale)
        row += [ratio.cell(ratios.FASTEST, r) if c.on else ""]
        row += [ratio.cell(ratios.FIRST, r) if c.on else ""] if first else []
        row.append(cell["ok"])
        rows.append(row)
    state = " (hw off)" if only_off else " (hw on)" if both else ""
    headers = [
        *("runtime", "call", units.column_of(report, scenario)),
        *(f"{scale.per_op()}{state}", "95% CI", common.LOW, "ops/s"),
    ]
    headers += ["MB/s"] if mbs else []
    headers += [f"{scale.per_op()} (hw off)", "off/on (95% CI)"] if both else []
    headers += ["× fastest"] + ([ratio.first_heading()] if first else []) + ["ok"]
    width = len(headers)
    rows = [row + [""] * (width - len(row)) for row in rows]
    right = set(range(2, width - 1))
    lines = pipe_table(rows, headers, right)
    lines.append(BLANK)
    lines += [md("- [{}] {}", mark, semantics) for semantics, mark in marks.items()]
    lines += [md("- {}", note) for note in notes]
    legend = ratio.legend(results)
    if both:
        legend.append("off/on: the time with the hardware feature masked over the time as found.")
    lines += [md("- {}", line) for line in legend]
    warning = [md("{}", w) for w in common.semantics_warning(results)]
    lines += [BLANK, *warning] if warning else []
    return lines


def _ci(r: schema.Result, s, scale: units.TimeScale) -> str:
    if r.imported:
        return "as posted"
    if s.n == 1:
        return "1 sample"
    return f"{scale.fmt(s.ci95[0])}–{scale.fmt(s.ci95[1])}"


def _off_columns(c: answers.Cell, scale: units.TimeScale) -> list[str]:
    off = c.off
    if off is None:
        return ["", ""]
    if not off.ok:
        return ["unsupported", ""]
    figure = c.off_on()
    if figure is None:
        return [scale.fmt(off.median()), ""]
    value, ci = figure
    text = f"{value:.2f}×" + (f" ({ci[0]:.2f}–{ci[1]:.2f})" if ci else "")
    return [scale.fmt(off.median()), text]


def _folded_model(report: schema.Report, scenario: str) -> list[Md]:
    """The cost model (a table, not a code block: one row per runtime and
    call, hw on and off side by side) and the upgrade view, folded."""
    body: list[Md] = []
    fits: dict[tuple[str, str], dict[Hw, schema.CostFit]] = {}
    for f in report.fits:
        if f.scenario == scenario:
            fits.setdefault((f.runtime, f.call), {})[f.hw] = f
    if fits:
        off = any(Hw.OFF in by for by in fits.values())
        rows = []
        for (runtime, call), by in fits.items():
            row = [runtime, md_cell_code(call), *_fit_cells(by.get(Hw.ON))]
            rows.append(row + (_fit_cells(by.get(Hw.OFF), short=True) if off else []))
        headers = ["runtime", "call", "a ns/call", "b ns/byte", "1/b GB/s", "R²"]
        headers += ["a (hw off)", "b (hw off)", "R² (hw off)"] if off else []
        body += pipe_table(rows, headers, set(range(2, len(headers))))
    ups = upgrade.of(report, scenario)
    if ups:
        body += align(upgrade.wide(ups, "markdown"))
    if not body:
        return []
    model = "cost model, ns per call = a + b·bytes (Theil-Sen over the sizes)"
    return details(f"{scenario}: {model}" + ("; upgrade view" if ups else ""), body)


def _fit_cells(f: schema.CostFit | None, short: bool = False) -> list[str]:
    if f is None:
        return ["", ""] + ([] if short else [""]) + [""]
    gbs = [] if short else [f"{f.gb_per_s:.2f}" if f.gb_per_s else "–"]
    return [f"{f.a_ns:,.0f}", f"{f.b_ns_per_byte:.3f}", *gbs, f"{f.r2:.3f}"]


def _noise(report: schema.Report) -> list[Md]:
    paragraphs = noise_view.lines(report)
    if not paragraphs:
        return []
    what = []
    if report.unstable:
        n_cells = len(report.unstable)
        what.append(f"{n_cells} unstable cell{'s' * (n_cells != 1)}")
    n = report.noise
    if n is not None and n.others_cpus is not None:
        what.append(f"other processes used {n.others_cpus:.1f} CPUs")
    if n is not None and n.steal:
        what.append(f"steal {n.steal:.0%}")
    summary = "Noise" + (f": {', '.join(what)}" if what else "")
    return details(summary, [md("- {}", p) for p in paragraphs])


def _problems(report: schema.Report) -> list[Md]:
    """Skipped runtimes and errors (the unstable cells are under Noise)."""
    body: list[Md] = []
    for s in report.skipped:
        asked = md(" (asked for with {})", s.requested) if s.requested else BLANK
        body.append(md("- skipped {}{}: {}", s.runtime, asked, home.tilde(s.reason)))
    for e in report.errors:
        body.append(md("- error: {}", home.tilde(e.message)))
        tail = (e.stderr_tail or "").strip()
        if tail:
            fenced = md_fence(tail.splitlines()[-8:], "text")
            body += [BLANK, *(Md(f"  {line}") for line in fenced)]
    return details(f"Problems ({len(report.skipped) + len(report.errors)})", body)
