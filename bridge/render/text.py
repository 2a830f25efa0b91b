"""Plain text for email (the erlang-questions list): ASCII only, at most 72
columns, nothing a mail client re-wraps or mangles. The answer first (one
line per call and runtime, bridge.render.answers), then a table per
scenario, then the full findings, noise, environment and the command.

Long call names are given once above each table, lettered (a), (b), ...,
so the table itself stays narrow; [n] means what it means in the other
views, a note on what a row measures, and [u1] an unsupported cell.

Every line is at most 72 columns, whatever the report holds: a table too
wide even without its optional columns is given row by row, and a line
still too long (a table of absurd figures, a long unbroken name) is folded.
Controls, bidi overrides and other text no mail should carry are spelt as
escapes before anything is laid out (bridge.render.escape.term_text)."""

from __future__ import annotations

import re
import textwrap

from bridge import plain
from bridge.render import (
    answers,
    common,
    concurrency,
    ratios,
    reproduce,
    shell,
    summary,
    units,
    upgrade,
)
from bridge.render import env as env_view
from bridge.render import noise as noise_view
from bridge.render import tls as tls_view
from bridge.render.escape import term_text
from bridge.report import schema
from bridge.view import home

WIDTH = 72


@plain.escaped
def render(report: schema.Report) -> str:
    groups = common.by_scenario(report)
    out = [*_wrap(common.title(report)), "", "Answer:"]
    for scenario in groups:
        head = f"{scenario}: " if len(groups) > 1 else ""
        for line in answers.lines(report, scenario, ascii_only=True):
            out += _wrap(f"- {head}{line}", indent="  ")
        said = answers.outputs_line(report, scenario)
        out += _wrap(f"- {head}{said}", indent="  ") if said else []
        for sentence in tls_view.sentences(report, scenario):
            out += _wrap(f"- {head}{sentence}", indent="  ")
    for scenario, results in groups.items():
        out += [""] + _wrap(f"== {scenario}: {common.scenario_description(report, scenario)}")
        out += _table(report, common.ordered(report, results))
    out += concurrency.text_lines(report, WIDTH)
    out += ["", "Findings:"]
    for sentence in summary.sentences(report, ascii_only=True):
        out += _wrap(f"- {sentence.strip()}", indent="  ")
    paragraphs = noise_view.lines(report)
    if paragraphs:
        out += ["", "Noise:"] + [w for p in paragraphs for w in _wrap(f"- {p}", indent="  ")]
    out += ["", "Environment:"]
    for item in env_view.paste_items(report):
        out += _wrap(f"- {item}", indent="  ")
    problems = [home.tilde(line) for line in common.problem_lines(report) if line]
    if problems:
        out += ["", "Problems:"] + [w for p in problems for w in _wrap(p.strip(), indent="  ")]
    out += _reproduce(report)
    text = "\n".join(f for line in out for f in _fold(_ascii(line))).rstrip() + "\n"
    return text


def _reproduce(report: schema.Report) -> list[str]:
    r"""The command rebuilt from the report's checked fields
    (bridge.render.reproduce), wrapped with `\` continuations, so the lines
    paste into a shell; what it leaves out under it."""
    rebuilt = reproduce.of(report)
    if rebuilt is None:
        return []
    out = ["", "Reproduce:"]
    notes = reproduce.notes(rebuilt, ascii_only=True)
    if rebuilt.argv and all(w.isascii() for w in rebuilt.argv):
        out += shell.lines(rebuilt.argv, WIDTH, indent="    ")
    elif rebuilt.argv:
        # ASCII only: a path outside it would be printed as another path.
        notes.insert(0, "The command names a path outside ASCII; the Markdown view shows it.")
    for note in notes:
        out += _wrap(f"- {note}", indent="  ")
    return out


def _table(report: schema.Report, results: list[schema.Result]) -> list[str]:
    marks = common.semantics_marks(results)
    fastest = common.fastest(report, results)
    match = common.match_by_result(report)
    unsupported, notes = common.unsupported(results)
    unit = units.unit(report, results[0].scenario) if results else units.BYTES
    flow = bool(results) and answers.bytes_flow(report, results[0].scenario)
    keys: dict[tuple[str, str], str] = {}
    semantics: dict[tuple[str, str], str] = {}
    scale = units.scale_of(results)
    for r in results:
        keys.setdefault((r.runtime, r.call), answers.letter(len(keys)))
        semantics.setdefault((r.runtime, r.call), r.semantics)
    out = [""]
    for (runtime, call), n in keys.items():
        mark = marks[semantics[(runtime, call)]]
        out += _wrap(f"({n}) {runtime}: {call} [{mark}]", indent="     ")
    rows = []
    for r in results:
        n = keys[(r.runtime, r.call)]
        size = units.cell_value(r.size, unit)
        if not r.ok:
            rows.append([f"({n})", size, r.hw, f"n/a [{unsupported[id(r)]}]"])
            continue
        s = r.summary()
        c = common.cells(r, fastest, match, x="x", unit=unit, scale=scale)
        c["min"] = c["low"] if s.n > 1 else "-"
        c["ops"] = answers.si3(1e9 / s.median if s.median > 0 else 0.0)
        c["mbs"] = _mbs(c["mbs"])
        ci = "as posted" if r.imported else f"{scale.fmt(s.ci95[0])}-{scale.fmt(s.ci95[1])}"
        ci = "n=1" if s.n == 1 and not r.imported else ci
        ok = "-" if c["ok"] == "–" else c["ok"]
        mbs = [c["mbs"]] if flow else []
        rows.append(
            [
                f"({n})",
                size,
                r.hw,
                c["median"],
                ci,
                c["min"],
                c["ops"],
                *mbs,
                ok,
            ]
        )
    # x best is in the table of differences below, with its CI.
    column = units.column_of(report, results[0].scenario) if results else units.BYTES
    headers = ["call", column, "hw", scale.per_op(), "95% CI", common.LOW, "ops/s"]
    headers += ["MB/s"] if flow else []
    headers += ["ok"]
    out += ["", *_fitted(rows, headers), ""]
    for what, mark in marks.items():
        out += _wrap(f"[{mark}] {what}", indent="    ")
    for note in notes:
        out += _wrap(note, indent="  ")
    out += _ratio_table(report, results, keys, unit)
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
    report: schema.Report,
    results: list[schema.Result],
    keys: dict[tuple[str, str], str],
    unit: str = units.BYTES,
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
                f"({keys[(r.runtime, r.call)]})",
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


def _fitted(rows: list[list], headers: list[str]) -> list[str]:
    """The table in WIDTH columns: where it is wider, min goes first, then
    ops/s (the median, its CI and MB/s stay); wider still (figures no run
    gives), each row as a line of its own, column names beside the figures."""
    for drop in ((), (common.LOW,), (common.LOW, "ops/s")):
        keep = [i for i, h in enumerate(headers) if h not in drop]
        cut = [[row[i] for i in keep if i < len(row)] for row in rows]
        lines = common.simple_table(cut, [headers[i] for i in keep], WIDTH)
        if max(map(len, lines), default=0) <= WIDTH:
            return lines
    return [w for row in rows for w in _stacked(row, headers)]


def _stacked(row: list[str], headers: list[str]) -> list[str]:
    """One row of the table as "(a) 16 on: ns/op 1,234; 95% CI ...", wrapped."""
    head = " ".join(str(v) for v in row[:3])
    said = "; ".join(f"{h} {v}" for h, v in zip(headers[3:], row[3:], strict=False) if v)
    return _wrap(f"{head}: {said}", indent="    ")


def _fold(line: str) -> list[str]:
    """A line of at most WIDTH columns, or the line folded into such lines
    (the rest indented): the view's promise holds for any report."""
    if len(line) <= WIDTH:
        return [line]
    return textwrap.wrap(
        line,
        WIDTH,
        subsequent_indent="    ",
        break_long_words=True,
        break_on_hyphens=False,
        drop_whitespace=True,
    ) or [line[:WIDTH]]


def _mbs(text: str) -> str:
    """MB/s without its decimal from 100 up: 1,297 rather than 1,296.9."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return text
    return f"{value:,.0f}" if value >= 100 else text


def _wrap(text: str, indent: str = "") -> list[str]:
    # A figure stays with its unit ("16 B", "1.2 ms"): no line starts with "B".
    kept = UNIT.sub(lambda m: m[1] + "\xa0" + m[2], _ascii(text))
    lines = textwrap.wrap(
        kept,
        WIDTH,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    ) or [""]
    return [line.replace("\xa0", " ") for line in lines]


UNIT = re.compile(r"(\d) (B|KiB|MiB|GiB|bytes|ms|us|ns|iterations)\b")


ASCII = str.maketrans(
    {"×": "x", "–": "-", "—": "-", "·": "-", "µ": "u", "’": "'", "²": "^2", "±": "+/-"}
)


def _ascii(text: str) -> str:
    """ASCII for a mail, every control and bidi override first spelt as an escape."""
    return term_text(text.translate(ASCII)).encode("ascii", "replace").decode("ascii")
