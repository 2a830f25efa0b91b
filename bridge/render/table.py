"""The terminal view of a report, answer first: for each scenario its
heading, the answer (one line per call and runtime: the hardware verdict or
the comparison, with its CI), the table and what its names and marks mean;
then where it ran, and the caveats last.

The default view fits a width (the terminal's, 80 when unknown): short call
names with a legend, the columns that carry nothing at that width left out
(bridge.render.common.fit), prose wrapped. `verbose` keeps every column,
the calls' full labels, the full verdicts and provenance; `quiet` drops the
caveats. Each warning is said once here: `bridge run` does not repeat on
stderr what this view prints (bridge.cli.run)."""

from __future__ import annotations

import dataclasses
import re

from bridge import plain
from bridge.render import common, concurrency, ratios, summary, units, upgrade
from bridge.render import decompose as decomposition
from bridge.render import noise as noise_view
from bridge.render import tls as tls_view
from bridge.report import schema
from bridge.view import words

WIDE = 10_000  # --verbose: a table is as wide as its cells


@plain.escaped
def render(
    report: schema.Report,
    width: int | None = None,
    verbose: bool = False,
    quiet: bool = False,
    omit: frozenset[str] = frozenset(),
) -> str:
    """The whole view; without the sections of the scenarios in `omit`
    (printed already, as each finished: `section`), though what they mark
    in the caveats is still said."""
    w = max(width or common.DEFAULT_WIDTH, common.MIN_WIDTH)
    view = _View(report, w, verbose, quiet)
    out: list[str] = []
    if verbose:
        out += [common.title(report)]
    for scenario, rows in common.by_scenario(report).items():
        lines = view.scenario(scenario, common.ordered(report, rows))
        if scenario in omit:
            continue
        if out:
            out.append("")
        out += lines
    out += concurrency.table_lines(report)
    if not quiet:
        out.append("")
        if verbose:
            out += [x for p in common.provenance_lines(report) for x in common.wrap(p, w)]
        else:
            out += [x for p in common.brief_provenance(report) for x in common.wrap(p, w)]
        out += view.caveats()
    out += [x for p in common.problem_lines(report, unstable=False) for x in _para(p, w)]
    return "\n".join(out).strip("\n") + "\n"


@plain.escaped
def section(
    report: schema.Report,
    scenario: str,
    width: int | None = None,
    verbose: bool = False,
    quiet: bool = False,
) -> str:
    """One scenario's part of the view (its heading, answer and table), as
    `render` lays it out."""
    w = max(width or common.DEFAULT_WIDTH, common.MIN_WIDTH)
    rows = [r for r in report.results if r.scenario == scenario]
    lines = _View(report, w, verbose, quiet).scenario(scenario, common.ordered(report, rows))
    return "\n".join(lines).strip("\n") + "\n"


def _para(text: str, width: int) -> list[str]:
    return common.wrap(text, width) if text else [""]


class _View:
    def __init__(self, report: schema.Report, width: int, verbose: bool, quiet: bool) -> None:
        self.report, self.width, self.verbose, self.quiet = report, width, verbose, quiet
        self.ratio = ratios.Ratios(report)
        self.match = common.match_by_result(report)
        self.shows_ratios = False  # a × column or a comparison answer was printed
        self.marked: set[schema.UnstableCell] = set()  # unstable cells marked in a table

    def wrap(self, text: str, indent: str = "  ") -> list[str]:
        return common.wrap(text, self.width, indent) if text else [""]

    def scenario(self, scenario: str, results: list[schema.Result]) -> list[str]:
        report = self.report
        out = self.wrap(f"== {scenario}: {common.scenario_description(report, scenario)}", "   ")
        head, lines = summary.answer(report, scenario)
        if lines:
            self.shows_ratios |= not any(v.scenario == scenario for v in report.verdicts)
            out += self.wrap(head)
            for line in lines:
                out += common.wrap(line, self.width, "    ", "  ")
        out.append("")
        out += self.table(report, results)
        out += common.fit_lines(
            report, scenario, short=not self.verbose, width=None if self.verbose else self.width
        )
        out += upgrade.wide(upgrade.of(report, scenario))
        for line in decomposition.lines(report, scenario):
            out += self.wrap(line)
        for line in tls_view.lines(report, scenario):
            out += self.wrap(line)
        out += common.tc_lines(report, scenario)
        if self.verbose:
            for line in common.verdict_lines(report, scenario):
                out += self.wrap(line)
        return out

    # -- the table ---------------------------------------------------------

    def table(self, report: schema.Report, results: list[schema.Result]) -> list[str]:
        if not results:
            return []
        scenario = results[0].scenario
        unit = units.unit(report, scenario)
        scale = units.scale_of(results)  # one time unit per column
        fastest = common.fastest(report, results)
        unsupported, notes = common.unsupported(results)
        # Keyed by scenario too: sha256 and sha512 both have hash at 16 B on one runtime.
        cell_of = {(u.scenario, u.runtime, u.call_id, u.size, u.hw): u for u in report.unstable}
        unstable = {k for k, u in cell_of.items() if u.scenario == scenario}
        names = self._names(results)
        marks = common.semantics_marks(results)
        cols: dict[str, list[str]] = {k: [] for k in _KEYS}
        for r in results:
            c = common.cells(r, fastest, self.match, unit=unit, scale=scale) if r.ok else {}
            key = (r.scenario, r.runtime, r.call_id, r.size, r.hw)
            mark = "!" if key in unstable else ""
            if mark:
                self.marked.add(cell_of[key])
            cols["runtime"].append(r.runtime)
            if self.verbose:
                cols["call"].append(f"{r.call} [{marks[r.semantics]}]")
            else:
                cols["call"].append(names[(report.kind_of(r.runtime), r.call_id)])
            brief = unit == units.BYTES and not self.verbose  # "16 B"; "1,024" under iterations
            cols["size"].append(units.short(r.size) if brief else units.cell_value(r.size, unit))
            cols["hw"].append(str(r.hw))
            if not r.ok:
                cols["median"].append(f"unsupported [{unsupported[id(r)]}]")
                for k in ("min", "ops", "mbs", "fastest", "first", "ok"):
                    cols[k].append("")
                continue
            cols["min"].append(c["low"])
            cols["median"].append(self._median(r, c) + mark)
            cols["ops"].append(c["ops"])
            cols["mbs"].append(c["mbs"])
            cols["fastest"].append(self.ratio.cell(ratios.FASTEST, r))
            cols["first"].append(self.ratio.cell(ratios.FIRST, r))
            cols["ok"].append(c["ok"])
        columns = self._columns(report, results, cols, unit, scale)
        fitted = common.fit(columns, WIDE if self.verbose else self.width)
        shown = {c.header for c in fitted}
        with_ratios = bool(shown & {"× fastest", "× first named", "× baseline", "× first"})
        self.shows_ratios |= with_ratios
        lines = common.layout(fitted)
        lines.append("")
        lines += self._legend(results, names, marks)
        for note in notes:
            lines += self.wrap(note, "     ")
        if with_ratios:
            for line in self.ratio.legend(results):
                lines += self.wrap(line)
        if unstable:
            goal = noise_view.target(report)
            target = f"the run's ±{goal * 100:g}% target" if goal else "the run's target"
            lines += self.wrap(f"! = 95% CI wider than {target}: rerun with --until-stable.")
        if not self.quiet:
            for warning in common.semantics_warning(results, short=not self.verbose):
                lines += self.wrap(warning)
        if not self.verbose or "ok" not in shown:
            for sentence in summary.interop_sentences(report, scenario):
                lines += self.wrap(sentence)
        return lines

    def _median(self, r: schema.Result, c: dict[str, str]) -> str:
        if self.verbose or r.imported:
            return c["ns_ci"]
        s = r.summary()
        if s.n == 1:
            return f"{c['median']} (1 sample)"
        return c["ns_ci"]

    def _columns(self, report, results, cols, unit, scale) -> list[common.Column]:
        several_sizes = len({r.size for r in results}) > 1
        with_hw = any(r.hw.masked for r in results)
        ok_values = set(cols["ok"]) - {""}
        Column = common.Column
        out = [Column("runtime", cols["runtime"]), Column("call", cols["call"])]
        if several_sizes or self.verbose:
            brief = unit == units.BYTES and not self.verbose
            header = "size" if brief else units.column_of(report, results[0].scenario)
            out.append(Column(header, cols["size"], right=True))
        if with_hw:
            out.append(Column("hw", cols["hw"]))
        out.append(Column(f"{common.LOW} {scale.name}", cols["min"], right=True))
        out.append(Column(f"median {scale.name} (95% CI)", cols["median"], right=True))
        out.append(Column("ops/s", cols["ops"], right=True, drop=2))
        if unit == units.BYTES:
            out.append(Column("MB/s", cols["mbs"], right=True, drop=1))
        # Where the answer is a hardware verdict, the ratios between runtimes
        # are the first to go; where it is the comparison, the last, and the
        # versions side by side (× first named) last of all.
        verdicts = any(v.scenario == results[0].scenario for v in report.verdicts)
        fastest, first = (-2, -1) if verdicts else (4, 4.5)
        short = [_short(x) for x in cols["fastest"]]
        out.append(Column("× fastest", cols["fastest"], drop=fastest, short=short))
        if self.ratio.shows_first:
            short = [_short(x) for x in cols["first"]]
            heading = self.ratio.first_heading()  # × first named, or × baseline
            out.append(Column(heading, cols["first"], drop=first, short=short))
        # "yes" in every row carries nothing: the sentence under the table says it.
        if self.verbose or ok_values - {"yes"}:
            out.append(Column("output ok", cols["ok"], drop=None if "NO" in ok_values else 3))
        return out

    def _names(self, results: list[schema.Result]) -> dict[tuple[str, str], str]:
        """Each call's short name; with the runtime kind where two kinds
        share one (sign on Erlang and on Python)."""
        kind = self.report.kind_of
        short = {(kind(r.runtime), r.call_id): common.short_call(r) for r in results}
        counts: dict[str, int] = {}
        for name in short.values():
            counts[name] = counts.get(name, 0) + 1
        return {
            k: (name if counts[name] == 1 or self.verbose else f"{k[0]} {name}")
            for k, name in short.items()
        }

    def _legend(self, results, names, marks) -> list[str]:
        if self.verbose:
            return [x for s, m in marks.items() for x in self.wrap(f"[{m}] {s}", "    ")]
        seen: dict[str, tuple[str, str]] = {}
        for r in results:
            name = names[(self.report.kind_of(r.runtime), r.call_id)]
            seen.setdefault(name, (r.call, r.semantics))
        out = []
        for name, (label, semantics) in seen.items():
            # A label that begins with its short name needs no "name =".
            same = label == name or label.startswith(f"{name}(")
            text = label if same else f"{name} = {label}"
            text = f"{text}: {semantics}"
            out += self.wrap(text, "    ")
        return out

    # -- the caveats -------------------------------------------------------

    def caveats(self) -> list[str]:
        report = self.report
        lines = [
            x for p in common.warning_lines(report, self.shows_ratios) if p for x in self.wrap(p)
        ]
        # Unstable cells without a row to mark (none in a report bridge wrote).
        rest = tuple(u for u in report.unstable if u not in self.marked)
        for p in noise_view.unstable_lines(dataclasses.replace(report, unstable=rest)):
            lines += self.wrap(p)
        n = report.noise
        if n is not None:
            warned = noise_view.warning_lines(report, self.verbose)
            if self.verbose or not warned:
                lines += self.wrap(noise_view.machine_line(n))
            for w in warned:
                lines += self.wrap(f"Warning: {w}.")
            advice = words.noise_advice(n)
            if advice:
                lines += self.wrap(f"Advice: {advice}.")
        if self.verbose:  # cycles per byte, the share of the machine's best
            for p in noise_view.cost_lines(report):
                lines += self.wrap(p)
        return [""] + lines if lines else []


_KEYS = ("runtime", "call", "size", "hw", "min", "median", "ops", "mbs", "fastest", "first", "ok")


def _short(cell: str) -> str:
    """'2.35× (2.20–2.51) sig' -> '2.35× sig': the CI is in --verbose."""
    return re.sub(r" \([^)]*\)", "", cell)
