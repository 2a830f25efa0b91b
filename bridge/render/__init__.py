"""Renderers: each turns a report into a string; a new format is one module
plus one entry here."""

from __future__ import annotations

from collections.abc import Callable

from bridge import model
from bridge.render import markdown, table, text


def _json(report: model.Report) -> str:
    return model.dumps(report)


RENDERERS: dict[str, Callable[[model.Report], str]] = {
    "table": table.render,
    "markdown": markdown.render,
    "text": text.render,
    "json": _json,
}
