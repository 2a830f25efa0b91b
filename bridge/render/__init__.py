"""Renderers: each turns a report into a string; a new format is one module
plus one entry here."""

from __future__ import annotations

from collections.abc import Callable

from bridge.render import markdown, table, text
from bridge.report import schema


def _json(report: schema.Report) -> str:
    return schema.dumps(report)


RENDERERS: dict[str, Callable[[schema.Report], str]] = {
    "table": table.render,
    "markdown": markdown.render,
    "text": text.render,
    "json": _json,
}
