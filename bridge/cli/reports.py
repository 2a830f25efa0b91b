"""The commands that read reports: report, compare, plot, and import-speed,
which makes one of pasted `openssl speed` output."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import click

from bridge import plain
from bridge.analysis import findings
from bridge.cli import gating, plans
from bridge.cli.common import (
    OUTPUT_GROUP,
    Command,
    Exports,
    StdoutError,
    baseline_option,
    check_outputs,
    colour_option,
    colour_wanted,
    export_options,
    format_option,
    output_option,
    rebase,
    recorded_command,
    rendered,
    save_report,
    show_results,
    verbosity_options,
)
from bridge.errors import BridgeError, BridgeWarning, ExitStatus, UsageError
from bridge.render import terminal_width
from bridge.report import schema
from bridge.report.comparison import Comparison
from bridge.view import Detail

_OUTPUT = (("Output", OUTPUT_GROUP),)


@click.command(
    "import-speed",
    cls=Command,
    groups=_OUTPUT,
    examples=(
        ("bridge import-speed pasted.txt -o r.json", "A pasted `openssl speed` run as a report."),
        ("xclip -o | bridge import-speed - --format markdown", "From the clipboard, as Markdown."),
    ),
)
@click.argument("file")
@format_option()
@colour_option
@output_option()
def import_speed(file, fmt, output) -> None:
    """Turn `openssl speed` output (FILE, or - for stdin) into a bridge report:
    pasted, quoted or re-wrapped text from 1.0.2, 1.1.1 and 3.x, several runs
    per document."""
    check_outputs([("-o", output)], [("the input", file)])
    if output is not None:
        plans.check_writable(output)
    from bridge.speed import importer

    stdin = click.get_binary_stream("stdin") if file == "-" else None
    text, name = importer.read_document(file, stdin)
    report, skipped = importer.to_report(text, name, list(recorded_command()))
    for warning in skipped:
        click.echo(f"bridge: warning: skipped {plain.printable(warning)}", err=True)
    shown = show_results(rendered(fmt, report, colour=colour_wanted()))
    failure = save_report(schema.dumps(report), output, shown)
    if failure is None and shown is not None and output is not None:
        failure = StdoutError(shown)
    if failure is not None:
        raise failure


def _print_and_export(view: str, render, output: Path | None, exports: Exports) -> None:
    """The view on stdout, then -o (the JSON) and the --export-* files, each
    written atomically and kept elsewhere when it cannot be: what stdout
    refused is said after the files are safe."""
    failure = _show_and_save(view, render, output, exports)
    if failure is not None:
        raise failure


def _show_and_save(
    view: str | None, render, output: Path | None, exports: Exports, say: bool = True
) -> BridgeError | None:
    """_print_and_export's work, the failure returned; `view` None shows
    nothing, `say` False leaves out the lines naming the files written."""
    shown = show_results(view) if view is not None else None
    failure: BridgeError | None = None
    if output is not None:
        failure = save_report(render("json"), output)
        if failure is None and say:
            click.echo(f"json written to {output}", err=True)
    exported = exports.write(render, say)
    failure = failure or exported
    if failure is None and shown is not None:
        failure = StdoutError(shown)
    return failure


def csv_rows(reports: list[schema.Report], labels: list[str]) -> str:
    """--export-csv of a comparison: every report's cells, each row labelled
    with its report, in the order the reports were named."""
    from bridge.render import csv
    from bridge.view import cells

    rows = [
        row
        for r, label in zip(reports, labels, strict=True)
        for row in cells.rows(findings.complete(r), label)
    ]
    return csv.render(rows, labelled=True)


@click.command(
    cls=Command,
    groups=_OUTPUT,
    examples=(
        ("bridge report r.json", "The table, as bridge run printed it."),
        ("bridge report r.json --format markdown", "For a forum or an issue."),
        ("bridge report r.json --export-text r.txt", "The table here, the email view in r.txt."),
    ),
)
@click.argument("file", type=click.Path(dir_okay=True, path_type=Path))
@format_option(what="the report")
@output_option("the report, as JSON (checked and rewritten as this bridge writes it),")
@export_options
@colour_option
@verbosity_options
@baseline_option
def report(file, fmt, output, exports: Exports, verbose, quiet, baseline) -> None:
    """Render a saved report (table, markdown, text for email, json)."""
    from bridge.cli.run import Shape

    shape = Shape(fmt, verbose, quiet)  # checks the pair before the file is read
    check_outputs([("-o", output), *exports.flagged], [("the report", file)])
    if output is not None:
        plans.check_writable(output)
    loaded = schema.load(file)
    # The JSON is the report as it was written (re-serialised), or rebased;
    # every other format shows it completed (bridge.cli.common.rendered).
    written = loaded if baseline is None else rebase(loaded, baseline)
    _print_and_export(
        shape.render(written), lambda f: rendered(f, written, shape.detail), output, exports
    )


# The formats that are JSON: they carry the gate's outcome beside the comparison.
GATED = ("json", "summary")


@click.command(
    cls=Command,
    groups=(("Gate", ("fail_slower", "fail_faster", "quiet")), *_OUTPUT),
    examples=(
        ("bridge compare old.json new.json", "new against old, cell by cell."),
        (
            "bridge compare a.json b.json c.json --export-markdown cmp.md",
            "b and c against a; the table here, the Markdown view in cmp.md.",
        ),
        (
            "bridge compare base.json new.json --fail-if-slower 5",
            "In CI: exit status 3 if a cell is significantly over 5% slower.",
        ),
    ),
)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@format_option(what="the comparison")
@output_option("the comparison, as JSON,")
@export_options
@colour_option
@verbosity_options
@gating.gate_options
def compare(files, fmt, output, exports: Exports, verbose, quiet, **gate_limits) -> None:
    """Line up reports by scenario, call, size and hw (runtimes matched by kind)
    and say which differences are significant. The first file is the baseline.
    With --fail-if-slower or --fail-if-faster, a gate for CI: exit status 3
    when a significant difference passes the threshold (docs/guide/ci.md)."""
    if len(files) < 2:
        raise UsageError("compare needs at least two reports")
    check_outputs([("-o", output), *exports.flagged], [("the report", f) for f in files])
    if verbose and quiet:
        raise UsageError("--verbose and --quiet: choose one")
    thresholds = gating.thresholds(gate_limits["fail_slower"], gate_limits["fail_faster"])
    if output is not None:
        plans.check_writable(output)
    from bridge.analysis import compare as comparison
    from bridge.analysis import gate
    from bridge.render.compare import render as render_compare

    reports = [schema.load(f) for f in files]
    labels = [
        f.name if list(map(lambda p: p.name, files)).count(f.name) == 1 else str(f) for f in files
    ]
    pairs = comparison.compare(reports, labels)
    verdict = gate.judge(pairs, reports, thresholds) if thresholds else None

    def gated(text: str) -> str:
        # The comparison's JSON, or its view's (summary), with the gate's
        # outcome: the same cells, by code, in both.
        data = {**json.loads(text), "gate": verdict.to_json(labels)} if verdict else None
        return text if data is None else json.dumps(data, indent=1) + "\n"

    def render(f: str) -> str:
        if f == "csv":  # each report's cells, labelled: one tidy table of them all
            return csv_rows(reports, labels)
        said = render_compare(pairs, f)
        return gated(said) if f in GATED else said

    # With a gate, -q is the gate's lines alone (stderr): nothing on stdout.
    gate_only = quiet and verdict is not None
    shown = (
        None
        if gate_only
        else render_compare(
            pairs, fmt, terminal_width(), Detail.of(verbose, quiet), colour_wanted()
        )
    )
    if shown is not None and fmt in GATED:
        shown = gated(shown)
    failure = _show_and_save(shown, render, output, exports, not gate_only)
    status = gating.report(verdict, labels) if verdict is not None else ExitStatus.OK
    if failure is not None:
        raise failure
    if status:
        raise click.exceptions.Exit(int(status))


PICTURES = (".png", ".svg")


@click.command(
    "plot",
    cls=Command,
    groups=(("Pictures", ("png", "svg", "output")), ("Reports", ("others",))),
    examples=(
        ("bridge plot r.json --png r.png", "One report: time per call by size, and its ratios."),
        (
            "bridge plot old.json --compare new.json --svg both.svg --png both.png",
            "Two reports in one picture, as SVG and PNG.",
        ),
    ),
)
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--png",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.png",
    help="Draw the picture as PNG into this file.",
)
@click.option(
    "--svg",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.svg",
    help="Draw the picture as SVG into this file (text stays text).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    hidden=True,
    help="Deprecated: -o is the JSON report in every other command; use --png or --svg.",
)
@click.option(
    "--compare",
    "others",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Another report to draw in the same picture (repeatable).",
)
def plot_command(file, png, svg, output, others) -> None:
    """Draw a picture for a forum post: time per call against message size
    with 95% CIs, each ratio (hw off/on, versions, reports, the fastest)
    around a line at 1 with its verdict, and a caption from the reports:
    --png FILE, --svg FILE, or both."""
    from bridge.render import plot

    pictures = [p for p in (png, svg) if p is not None]
    for flag, path in (("--png", png), ("--svg", svg)):
        if path is not None and path.suffix.lower() != flag.replace("--", "."):
            raise UsageError(f"{flag} {path}: the file name must end in {flag.replace('--', '.')}")
    if output is not None:
        flag = {".png": "--png", ".svg": "--svg"}.get(output.suffix.lower())
        if flag is None:
            raise UsageError(
                f"plot -o {output}: -o is the JSON report in bridge's other commands;"
                " name the picture with --png FILE.png or --svg FILE.svg"
            )
        warnings.warn(
            BridgeWarning(f"plot -o is deprecated (-o is the JSON report elsewhere): use {flag}"),
            stacklevel=1,
        )
        pictures.append(output)
    if not pictures:
        raise UsageError("plot: name the picture with --png FILE.png and/or --svg FILE.svg")
    paths = [file, *others]
    flags = [("--png", png), ("--svg", svg), ("-o", output)]
    check_outputs(flags, [("the report", p) for p in paths])
    reports, compared = plotted(paths)
    for picture in pictures:
        plans.check_writable(picture, "--png" if picture.suffix.lower() == ".png" else "--svg")
    for picture in pictures:
        n = plot.plot(reports, picture, compared)
        click.echo(f"{picture}: {n} lines", err=True)


def plotted(paths: list[Path]) -> tuple[list[tuple[str, schema.Report]], Comparison | None]:
    """What `bridge plot` draws: each report (by its file name) with the
    findings it lacks, and, for two or more, bridge compare's rows of them
    (the reports' ratio). A picture computes no finding itself."""
    from bridge.analysis import compare, findings

    reports = [(p.name, findings.complete(schema.load(p))) for p in paths]
    if len(reports) < 2:
        return reports, None
    return reports, compare.compare([r for _, r in reports], [label for label, _ in reports])
