"""A comparison of reports (`bridge compare`) in a format: its view
(bridge.view.comparison) laid out by the writer of that format, or, as JSON,
the comparison itself."""

from __future__ import annotations

import json

from bridge.render import html, markdown, summary, terminal, text
from bridge.report.comparison import Comparison
from bridge.view import comparison
from bridge.view.model import Detail


def render(
    c: Comparison,
    fmt: str,
    width: int = terminal.DEFAULT_WIDTH,
    detail: Detail = Detail.NORMAL,
    colour: bool = False,
) -> str:
    """`colour`: the terminal view (table) in colour; no other format has any."""
    if fmt == "json":
        return json.dumps(c.to_json(), indent=1) + "\n"
    view = comparison.build(c, detail)
    if fmt == "markdown":
        return markdown.render(view)
    if fmt == "text":
        return text.render(view)
    if fmt == "summary":
        return summary.render(view)
    if fmt == "html":
        return html.render(view)
    return terminal.render(view, width, colour=colour)
