"""`bridge otp list`: the OTP installations found on this machine, one row each."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from bridge import plain
from bridge.render import terminal
from bridge.system.discover import Found
from bridge.view.model import Cell, Column, Table


@plain.escaped
def render_otp(found: Sequence[Found], width: int | None = None) -> str:
    """One row per installation; within `width` (None: every column on one
    line) the columns a reader needs least go first (libcrypto's path, how
    it was found, the crypto and ERTS versions), then the table folds."""
    rows = [
        [
            f.otp_version or "?",
            f.erts_version or "?",
            f.crypto_version or "no",
            f.crypto_lib or "",
            f.libcrypto or "",
            ", ".join(f.sources),
            str(f.root),
            f.problem or "ok",
        ]
        for f in found
    ]
    headers = [
        "OTP",
        "ERTS",
        "crypto",
        "crypto lib",
        "libcrypto",
        "found via",
        "root",
        "status",
    ]
    if width is None:
        return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
    drops = {"ERTS": 4.0, "crypto": 3.0, "found via": 2.0, "libcrypto": 1.0}
    cols = tuple(Column(h, h, drop=drops.get(h), ident=h in ("OTP", "root")) for h in headers)
    table = Table("", cols, tuple(tuple(Cell(v) for v in row) for row in rows))
    return "\n".join(terminal.table_lines(table, width, esc=str))
