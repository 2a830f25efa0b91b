"""Plain text for email: ASCII only, at most 72 columns, nothing a mail client
re-wraps or mangles. Long call names are given once, numbered, above each
table, so the table itself stays narrow."""

from __future__ import annotations

import textwrap

from bridge import plain
from bridge.render import common, concurrency, ratios, shell, summary, units, upgrade
from bridge.render import noise as noise_view
from bridge.report import schema

WIDTH = 72


@plain.escaped
def render(report: schema.Report) -> str:
    out = [*_wrap(common.title(report)), ""]
    for sentence in summary.sentences(report, ascii_only=True):
        out += _wrap(sentence.strip(), indent="  " if sentence.startswith("  ") else "")
    for scenario, results in common.by_scenario(report).items():
        out += [""] + _wrap(f"== {scenario}: {common.scenario_description(report, scenario)}")
        out += _table(report, common.ordered(report, results))
    out += concurrency.text_lines(report, WIDTH)
    paragraphs = noise_view.lines(report)
    if paragraphs:
        out += ["", "Noise:"] + [w for p in paragraphs for w in _wrap(f"- {p}", indent="  ")]
    out += ["", "Environment:"]
    for item in common.provenance_items(report):
        out += _wrap(f"- {item}", indent="  ")
    problems = [line for line in common.problem_lines(report) if line]
    if problems:
        out += ["", "Problems:"] + [w for p in problems for w in _wrap(p.strip(), indent="  ")]
    if report.reproduce:
        # Wrapped with `\` continuations, so the lines paste into a shell.
        out += ["", "Reproduce:"] + shell.lines(report.reproduce, WIDTH, indent="    ")
    text = "\n".join(_ascii(line) for line in out).rstrip() + "\n"
    assert all(len(line) <= WIDTH for line in text.splitlines()), "text view over 72 columns"
    return text


def _table(report: schema.Report, results: list[schema.Result]) -> list[str]:
    marks = common.semantics_marks(results)
    fastest = common.fastest(report, results)
    match = common.match_by_result(report)
    unsupported, notes = common.unsupported(results)
    unit = units.unit(report, results[0].scenario) if results else units.BYTES
    scale = units.scale_of(results)
    keys: dict[tuple[str, str], int] = {}
    for r in results:
        keys.setdefault((r.runtime, r.call), len(keys) + 1)
    out = [""]
    for (runtime, call), n in keys.items():
        out += _wrap(f"[{n}] {runtime}: {call}", indent="     ")
    rows = []
    for r in results:
        n = keys[(r.runtime, r.call)]
        size = units.cell_value(r.size, unit)
        if not r.ok:
            rows.append([f"[{n}]", size, r.hw, f"n/a [{unsupported[id(r)]}]", "", "", "", ""])
            continue
        s = r.summary()
        c = common.cells(r, fastest, match, x="x", unit=unit, scale=scale)
        ci = "as posted" if r.imported else f"{scale.fmt(s.ci95[0])}-{scale.fmt(s.ci95[1])}"
        ci = "no CI (n=1)" if s.n == 1 and not r.imported else ci
        ok = "-" if c["ok"] == "–" else c["ok"]
        rows.append([f"[{n}]", size, r.hw, c["median"], ci, c["mbs"], c["rel"], ok])
    column = units.column_of(report, results[0].scenario) if results else units.BYTES
    headers = ["call", column, "hw", scale.per_op(), "95% CI", "MB/s", "x best", "ok"]
    out += ["", *common.simple_table(rows, headers, WIDTH), ""]
    for semantics, mark in marks.items():
        out += _wrap(f"semantics {mark}: {semantics}", indent="  ")
    for note in notes:
        out += _wrap(note, indent="  ")
    out += _ratio_table(report, results, keys)
    out += [w for line in common.semantics_warning(results) for w in _wrap(line)]
    if results:
        for line in common.fit_lines(report, results[0].scenario, short=True, width=WIDTH):
            out += _wrap(line) if len(line) > WIDTH else [line]
    if results:
        out += upgrade.narrow(upgrade.of(report, results[0].scenario), WIDTH)
    verdicts = common.verdict_lines(report, results[0].scenario) if results else []
    for line in verdicts:
        out += _wrap(line, indent="  ") if line else [""]
    return out


def _ratio_table(
    report: schema.Report, results: list[schema.Result], keys: dict[tuple[str, str], int]
) -> list[str]:
    """x first named and x fastest with their CIs and verdicts: a table of
    their own, since the main one has no room for them in 72 columns."""
    ratio = ratios.Ratios(report)
    unit = units.unit(report, results[0].scenario) if results else units.BYTES
    rows = []
    for r in results:
        first, fastest = ratio.get(ratios.FIRST, r), ratio.get(ratios.FASTEST, r)
        if first is None and fastest is None:
            continue
        rows.append(
            [
                f"[{keys[(r.runtime, r.call)]}]",
                units.cell_value(r.size, unit),
                r.hw,
                *([ratio.cell(ratios.FIRST, r, "x", "-")] if ratio.shows_first else []),
                ratio.cell(ratios.FASTEST, r, "x", "-"),
            ]
        )
    if not rows:
        return []
    column = units.column_of(report, results[0].scenario) if results else units.BYTES
    headers = [
        "call",
        column,
        "hw",
        *([ratio.first_heading("x")] if ratio.shows_first else []),
        "x best",
    ]
    out = ["", "Between runtimes (median over the other's, 95% CI):"]
    out += common.simple_table(rows, headers, WIDTH)
    for line in ratio.legend(results, "x"):
        out += _wrap(line, indent="  ")
    return out


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        _ascii(text),
        WIDTH,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    ) or [""]


ASCII = str.maketrans(
    {"×": "x", "–": "-", "—": "-", "·": "-", "µ": "u", "’": "'", "²": "^2", "±": "+/-"}
)


def _ascii(text: str) -> str:
    return text.translate(ASCII).encode("ascii", "replace").decode("ascii")
