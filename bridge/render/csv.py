"""--export-csv: one tidy row per cell (bridge.view.cells), for a
spreadsheet or pandas.read_csv. Syntax only: the csv module's quoting,
numbers as Python writes them (no thousands separator, "." for the
decimal point, ns), an empty field for no figure, every text made safe for
a spreadsheet (escape.csv_text)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from bridge.render.escape import csv_text
from bridge.view.cells import COLUMNS, CellRow


def render(rows: Sequence[CellRow], labelled: bool = False) -> str:
    """The rows under a header; `labelled` adds the first column, the
    report each row is from (compare)."""
    columns = COLUMNS if labelled else tuple(c for c in COLUMNS if c != "report")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_field(getattr(row, c)) for c in columns])
    return out.getvalue()


def _field(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):  # a bool is an int: say it as a word
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(float(value)) if isinstance(value, float) else str(value)
    return csv_text(value)
