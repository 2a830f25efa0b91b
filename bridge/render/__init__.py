"""The writers: each lays out one view (bridge.view) in one format and adds
only its syntax; a new format is one module plus one entry in RENDERERS.
`--format json` is the report itself (bridge.report.schema.dumps)."""

from __future__ import annotations

import enum
import shutil
from collections.abc import Callable

from bridge.render import csv, html, markdown, summary, terminal, text
from bridge.report import schema
from bridge.view import Detail, View, build, cells


class Format(str, enum.Enum):
    TABLE = "table"  # the terminal view
    MARKDOWN = "markdown"
    TEXT = "text"
    JSON = "json"  # the report
    SUMMARY = "summary"  # the view, as JSON
    HTML = "html"  # one self-contained page
    CSV = "csv"  # one row per cell (bridge.view.cells)


RENDERERS: dict[Format, Callable[[View], str]] = {
    Format.TABLE: terminal.render,
    Format.MARKDOWN: markdown.render,
    Format.TEXT: text.render,
    Format.SUMMARY: summary.render,
    Format.HTML: html.render,
}


def show(
    fmt: Format | str,
    report: schema.Report,
    detail: Detail = Detail.NORMAL,
    width: int | None = None,
    omit: frozenset[str] = frozenset(),
    colour: bool = False,
) -> str:
    """The report in `fmt`: the terminal view laid out for `width` without
    the sections in `omit` (printed already, as each scenario finished),
    its verdicts and warnings in colour when `colour`."""
    fmt = Format(fmt)
    if fmt is Format.JSON:
        return schema.dumps(report)
    if fmt is Format.CSV:
        return csv.render(cells.rows(report))
    view = build(report, detail)
    if fmt is Format.TABLE:
        return terminal.render(view, width or terminal_width(), omit, colour)
    return RENDERERS[fmt](view)


def terminal_width() -> int:
    """The width the terminal view is laid out for: COLUMNS when set, else
    the terminal's, else 80 (piped to a file or another program)."""
    return shutil.get_terminal_size((terminal.DEFAULT_WIDTH, 24)).columns
