"""Renderers: each turns a report into a string; a new format is one module
plus one entry here."""

from __future__ import annotations

import shutil
from collections.abc import Callable

from bridge.render import common, markdown, table, text
from bridge.report import schema


def _json(report: schema.Report) -> str:
    return schema.dumps(report)


RENDERERS: dict[str, Callable[..., str]] = {
    "table": table.render,
    "markdown": markdown.render,
    "text": text.render,
    "json": _json,
}


def view(
    fmt: str,
    report: schema.Report,
    width: int | None = None,
    verbose: bool = False,
    quiet: bool = False,
    omit: frozenset[str] = frozenset(),
) -> str:
    """`fmt`'s rendering; the terminal view (table) laid out for `width`,
    with every detail (`verbose`) or without the caveats (`quiet`), and
    without the sections of the scenarios in `omit`, shown already as each
    finished (`section`)."""
    if fmt == "table":
        return table.render(report, width=width, verbose=verbose, quiet=quiet, omit=omit)
    return RENDERERS[fmt](report)


def section(
    report: schema.Report, scenario: str, width: int | None, verbose: bool, quiet: bool
) -> str:
    """One scenario's part of the terminal view: its heading, answer and table."""
    return table.section(report, scenario, width=width, verbose=verbose, quiet=quiet)


def terminal_width() -> int:
    """The width the terminal view is laid out for: COLUMNS when set, else
    the terminal's, else 80 (piped to a file or another program)."""
    return shutil.get_terminal_size((common.DEFAULT_WIDTH, 24)).columns
