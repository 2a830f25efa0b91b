"""`bridge otp list`: the OTP installations found on this machine, one row each."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from bridge import plain
from bridge.system.discover import Found


@plain.escaped
def render_otp(found: Sequence[Found]) -> str:
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
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
