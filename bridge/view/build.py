"""`build(report, detail) -> View`: the one place a report is worded. Each
scenario is a section (its answers, its tables, its notes); then where it
ran, the caveats and the problems. The writers (bridge.render) lay it out."""

from __future__ import annotations

from bridge.report import schema
from bridge.view import answers, chart, notes, reproduce, tables, titles, tls
from bridge.view import levels as level_findings
from bridge.view.context import Context, scenarios
from bridge.view.model import Detail, Note, NoteKind, Section, Table, View


def build(report: schema.Report, detail: Detail = Detail.NORMAL) -> View:
    ctx = Context(report, detail)
    sections = tuple(section(ctx, name) for name in scenarios(report))
    provenance = (
        tuple(notes.environment(report)) if ctx.verbose else (notes.brief_provenance(report),)
    )
    if ctx.quiet:  # -q: the answers and the tables
        provenance = ()
    argv, said = _reproduce(report)
    return View(
        title=notes.title(report),
        sections=sections,
        provenance=provenance,
        caveats=tuple(notes.caveats(ctx)),
        problems=tuple(notes.problems(ctx)),
        reproduce=argv,
        reproduce_notes=said,
        detail=detail,
    )


def section_of(report: schema.Report, scenario: str, detail: Detail) -> Section:
    """One scenario's section alone (printed as soon as it is measured)."""
    return section(Context(report, detail), scenario)


def section(ctx: Context, scenario: str) -> Section:
    report = ctx.report
    sizes = [r.size for r in report.results if r.scenario == scenario]
    if not sizes and report.concurrency is not None:
        sizes = [c.size for c in report.concurrency.cells if c.scenario == scenario]
    title = f"{scenario}: {titles.sized(report.description(scenario), sizes)}".rstrip(": ")
    found: list[Table | None] = [tables.results(ctx, scenario)]
    levels, level_notes = tables.levels(ctx, scenario)
    found.append(levels)
    c = report.concurrency
    if c is not None and levels is not None:
        mine = [cell for cell in c.cells if cell.scenario == scenario]
        found.append(level_findings.slowest(report, c, mine))
        level_notes += level_findings.findings(report, c, scenario)
    found.append(tables.fits(ctx, scenario))
    upgrade, upgrade_notes = tables.upgrades(ctx, scenario)
    found.append(upgrade)
    found.append(tables.tc(ctx, scenario))
    said: list[Note] = []
    warning = tables.semantics_warning(ctx.results(scenario))
    if warning:
        said.append(Note(NoteKind.WARNING, warning))
    said += notes.outputs(ctx, scenario)
    said += [Note(NoteKind.LEGEND, t) for t in level_notes]
    said += [Note(NoteKind.FINDING, t) for t in upgrade_notes]
    said += notes.setup_costs(ctx, scenario)
    said += [Note(NoteKind.FINDING, t) for t in tls.sentences(report, scenario)]
    said += notes.cost(ctx, scenario)
    said += notes.verdict_details(ctx, scenario)
    if ctx.quiet:
        said = [
            n for n in said if n.kind not in (NoteKind.WARNING, NoteKind.CAVEAT, NoteKind.ADVICE)
        ]
    return Section(
        key=scenario,
        title=title,
        answers=answers.for_scenario(ctx, scenario),
        tables=tuple(t for t in found if t is not None),
        notes=tuple(said),
        series=chart.for_scenario(ctx, scenario),
    )


def _reproduce(report: schema.Report) -> tuple[tuple[str, ...], tuple[str, ...]]:
    rebuilt = reproduce.of(report)
    if rebuilt is None:
        return (), ()
    return rebuilt.argv, tuple(reproduce.notes(rebuilt))
