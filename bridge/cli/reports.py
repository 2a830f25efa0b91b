"""The commands that read reports: report, compare, plot, and import-speed,
which makes one of pasted `openssl speed` output."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bridge import plain
from bridge.cli import plans
from bridge.cli.common import (
    StdoutError,
    out,
    save_report,
    show_results,
    verbosity_options,
)
from bridge.errors import UsageError
from bridge.render import RENDERERS
from bridge.report import schema


@click.command("import-speed")
@click.argument("file")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the report."
)
def import_speed(file, fmt, output) -> None:
    """Turn `openssl speed` output (FILE, or - for stdin) into a bridge report:
    pasted, quoted or re-wrapped text from 1.0.2, 1.1.1 and 3.x, several runs
    per document."""
    if output is not None:
        plans.check_writable(output)
    from bridge.speed import importer

    stdin = click.get_binary_stream("stdin") if file == "-" else None
    text, name = importer.read_document(file, stdin)
    report, warnings = importer.to_report(text, name, ["bridge", *sys.argv[1:]])
    for warning in warnings:
        click.echo(f"bridge: warning: skipped {plain.printable(warning)}", err=True)
    shown = show_results(RENDERERS[fmt](report))
    failure = save_report(schema.dumps(report), output, shown)
    if failure is None and shown is not None and output is not None:
        failure = StdoutError(shown)
    if failure is not None:
        raise failure


@click.command()
@click.argument("file", type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="table", show_default=True
)
@verbosity_options
def report(file, fmt, verbose, quiet) -> None:
    """Render a saved report (table, markdown, text for email, json)."""
    from bridge.cli.run import Shape

    shape = Shape(fmt, verbose, quiet)  # checks the pair before the file is read
    out(shape.render(schema.load(file)), nl=False)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "text", "json"]),
    default="table",
    show_default=True,
)
def compare(files, fmt) -> None:
    """Line up reports by scenario, call, size and hw (runtimes matched by kind)
    and say which differences are significant. The first file is the baseline."""
    if len(files) < 2:
        raise UsageError("compare needs at least two reports")
    from bridge.analysis import compare as comparison
    from bridge.render.compare import render as render_compare

    reports = [schema.load(f) for f in files]
    labels = [
        f.name if list(map(lambda p: p.name, files)).count(f.name) == 1 else str(f) for f in files
    ]
    out(render_compare(comparison.compare(reports, labels), fmt), nl=False)


@click.command("plot")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The picture: .png or .svg.",
)
@click.option(
    "--compare",
    "others",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Another report to draw in the same picture (repeatable).",
)
def plot_command(file, output, others) -> None:
    """Draw throughput against message size (log axes), one line per runtime
    and call, hw on solid and off dashed."""
    from bridge.render import plot

    paths = [file, *others]
    reports = [(p.name, schema.load(p)) for p in paths]
    plans.check_writable(output)
    n = plot.plot(reports, output)
    click.echo(f"{output}: {n} lines", err=True)
