"""Renderers: each turns a report into a string; a new format is one module
plus one entry here."""

from __future__ import annotations

from collections.abc import Callable

from bridge import model
from bridge.render import table


def _json(report: model.Report) -> str:
    return model.dumps(report)


RENDERERS: dict[str, Callable[[model.Report], str]] = {
    "table": table.render,
    "json": _json,
}
