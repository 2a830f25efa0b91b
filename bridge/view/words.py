"""Why a verdict was withheld, in one short clause, and what to rerun.

A stand-in until findings carry reason codes (issue 34's typed findings):
today a verdict's reason is the tail of the sentence hw stored in the
report (`HwVerdict.explanation`), and a difference's is its verdict and the
run's settings. Each function returns (reason, rerun); "" where there is
none."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bridge.report import schema
from bridge.view import codes

# "1.33× slower masked (CI 1.28–1.33), but ": the figure, which the answer gives already.
_FIGURE = re.compile(r"^\d[\d.,]*× (?:slower|faster) masked(?: \([^)]*\))?,? (?:but )?")
_WHERE = re.compile(r"^ (?:at [^:]*|per call[^:]*)")
_NOTE = re.compile(r" \((?:\d+ of \d+ rounds? left out|the twins)[^()]*(?:\([^()]*\)[^()]*)*\)$")


def verdict_reason(v: schema.HwVerdict) -> tuple[str, str]:
    """A hardware verdict's reason and rerun, from its stored explanation."""
    if v.verdict in (codes.USED, codes.NOT_USED):
        return "", ""
    text = v.explanation or ""
    head = f": {v.verdict}"
    i = text.find(head)
    if i < 0:
        return _split_rerun(text)
    rest = text[i + len(head) :]
    rest = _WHERE.sub("", rest, count=1)
    rest = rest.removeprefix(": ").removeprefix(":")
    rest = _NOTE.sub("", rest.strip())
    return _split_rerun(_FIGURE.sub("", rest))


def _split_rerun(text: str) -> tuple[str, str]:
    text = text.strip().rstrip(".")
    for sep in ("; rerun ", ": rerun "):
        if sep in text:
            reason, rerun = text.split(sep, 1)
            return reason.strip(), "rerun " + rerun.strip()
    if text.endswith(", or a quieter machine"):
        return text.removesuffix(", or a quieter machine"), "rerun on a quieter machine"
    if "; rerun on a quieter machine" in text:
        return text.replace("; rerun on a quieter machine", ""), "rerun on a quieter machine"
    return text, ""


def difference_reason(d: schema.Difference, settings: Mapping[str, Any]) -> tuple[str, str]:
    """Why a difference between two cells is not called: too few rounds
    (unresolved), the rounds disagree (drift), no samples (imported)."""
    if d.verdict == codes.UNRESOLVED:
        rerun = "rerun without --quick" if settings.get("quick") else "rerun with more --rounds"
        return f"fewer than {codes.MIN_ROUNDS} rounds on both sides", rerun
    if d.verdict == codes.UNKNOWN or d.ci95 is None:
        return "as posted: no samples", ""
    if codes.is_drift(d.note):
        return "the interleaved rounds disagree (drift)", "rerun on a quieter machine"
    return "", ""
