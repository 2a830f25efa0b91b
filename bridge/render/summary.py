"""`--format summary`: the view as JSON, what every other writer lays out:
the answers with their verdicts, figures and reasons, the tables with their
cells, the notes. For programs that want the words, not the report."""

from __future__ import annotations

import dataclasses
import enum
import json

from bridge.view.model import View


def render(view: View) -> str:
    return json.dumps(_plain(dataclasses.asdict(view)), indent=1) + "\n"


def _plain(value):
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
