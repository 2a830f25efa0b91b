"""Markdown that pastes into a GitHub issue or a Discourse forum
(erlangforums, elixirforum): the answer first (one line per call and runtime,
bridge.render.answers), then one table per scenario with hw on and its masked
twin side by side, numbers right-aligned, ops/s beside ns/op, the smallest
sample beside the median, MB/s only where bytes flow; then the cost model,
noise, environment and problems folded in <details> blocks, and the command
that reproduces the run.

Nothing depends on trailing spaces (a forum strips them): notes are list
items. Inside <details> the Markdown is set off by blank lines, or GitHub
shows it raw. The user's home directory reads `~` (bridge.render.home)."""

from __future__ import annotations

import re

from tabulate import tabulate

from bridge import plain
from bridge.render import answers, common, concurrency, decompose, home, ratios, units, upgrade
from bridge.render import env as env_view
from bridge.render import noise as noise_view
from bridge.report import schema
from bridge.report.hw import Hw


@plain.escaped
def render(report: schema.Report) -> str:
    groups = common.by_scenario(report)
    out = [f"### {', '.join(groups) or 'bridge'}: {common.title(report)}", ""]
    for scenario in groups:
        head = f"**{scenario}**: " if len(groups) > 1 else ""
        out += [f"- {head}{line}" for line in answers.lines(report, scenario)]
        said = answers.outputs_line(report, scenario)
        out += [f"- {head}{said}"] if said else []
        out += [f"- {s}" for s in decompose.sentences(report, scenario)]
    out += [f"- {s}" for s in concurrency.sentences(report)]
    out += [f"- {w}" for w in ratios.resolution_warning(report, ratios.Ratios(report).diffs)]
    out += [f"- Problem: {e.message}" for e in report.errors]
    for scenario, results in groups.items():
        out += ["", f"#### {scenario}: {common.scenario_description(report, scenario)}", ""]
        out += _table(report, scenario, results)
        out += _folded_model(report, scenario)
    out += listed(align(concurrency.markdown_lines(report)))
    out += _noise(report)
    out += details("Environment", [f"- {i}" for i in env_view.paste_items(report)])
    out += _problems(report)
    if report.reproduce:
        out += ["", "Reproduce:", "", "```sh", home.tilde_words(report.reproduce), "```"]
    return "\n".join(out).rstrip() + "\n"


def details(summary: str, body: list[str]) -> list[str]:
    """A folded block: blank lines around the Markdown inside, so that GitHub
    and Discourse render it rather than show it raw."""
    if not body:
        return []
    return ["", f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]


def pipe_table(rows: list[list], headers: list[str], right: set[int]) -> list[str]:
    """A pipe table, columns in `right` right-aligned (`---:`)."""
    align_ = ["right" if i in right else "left" for i in range(len(headers))]
    return tabulate(
        rows, headers=headers, tablefmt="pipe", colalign=align_, disable_numparse=True
    ).splitlines()


NUMERIC = re.compile(r"^[\s\d,.×x%()–\-?±+/=*]*\d[\s\d,.×x%()–\-?±+/=*a-zA-Zµ]*$")


def align(lines: list[str]) -> list[str]:
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
            body.append([c.strip() for c in row.strip("|").split("|")])
        widths = [len(c) for c in line.strip("|").split("|")]
        cols = []
        for n, w in enumerate(widths):
            values = [r[n] for r in body if n < len(r) and r[n] not in ("", "-", "–")]
            numeric = values and all(NUMERIC.match(v) for v in values)
            cols.append("-" * (w - 1) + ":" if numeric else "-" * w)
        out[i] = "|" + "|".join(cols) + "|"
    return out


def listed(lines: list[str]) -> list[str]:
    """Lines that end in two spaces (a line break a forum strips) as list
    items, set off from a table before them by a blank line."""
    out: list[str] = []
    for line in lines:
        if line.endswith("  ") and line.strip():
            if out and out[-1].startswith("|"):
                out.append("")
            line = line.rstrip()
            out.append(line if line.startswith("- ") else f"- {line}")
        else:
            out.append(line.rstrip())
    return out


def _table(report: schema.Report, scenario: str, results: list[schema.Result]) -> list[str]:
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
        head = [r.runtime, f"`{r.call}` [{marks[r.semantics]}]", units.cell_value(r.size, unit)]
        if not r.ok:
            rows.append([*head, f"unsupported [{unsupported[id(r)]}]"])
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
    lines.append("")
    lines += [f"- [{mark}] {semantics}" for semantics, mark in marks.items()]
    lines += [f"- {note}" for note in notes]
    legend = ratio.legend(results)
    if both:
        legend.append("off/on: the time with the hardware feature masked over the time as found.")
    lines += [f"- {line}" for line in legend]
    warning = common.semantics_warning(results)
    lines += ["", *warning] if warning else []
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


def _folded_model(report: schema.Report, scenario: str) -> list[str]:
    """The cost model (a table, not a code block: one row per runtime and
    call, hw on and off side by side) and the upgrade view, folded."""
    body = []
    fits: dict[tuple[str, str], dict[Hw, schema.CostFit]] = {}
    for f in report.fits:
        if f.scenario == scenario:
            fits.setdefault((f.runtime, f.call), {})[f.hw] = f
    if fits:
        off = any(Hw.OFF in by for by in fits.values())
        rows = []
        for (runtime, call), by in fits.items():
            row = [runtime, f"`{call}`", *_fit_cells(by.get(Hw.ON))]
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


def _noise(report: schema.Report) -> list[str]:
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
    return details(summary, [f"- {p}" for p in paragraphs])


def _problems(report: schema.Report) -> list[str]:
    """Skipped runtimes and errors (the unstable cells are under Noise)."""
    body = []
    for s in report.skipped:
        asked = f" (asked for with {s.requested})" if s.requested else ""
        body.append(f"- skipped {s.runtime}{asked}: {home.tilde(s.reason)}")
    for e in report.errors:
        body.append(f"- error: {home.tilde(e.message)}")
        tail = (e.stderr_tail or "").strip()
        if tail:
            body += ["", "  ```text", *[f"  {t}" for t in tail.splitlines()[-8:]], "  ```"]
    return details(f"Problems ({len(report.skipped) + len(report.errors)})", body)
