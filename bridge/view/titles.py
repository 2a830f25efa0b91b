"""A scenario's title as printed: its description, with the sizes it names
made to match the sizes actually run.

Scenario descriptions name their sizes ("1000-byte message", "16 B to
16 KiB", "a 256 MiB file"), and `--sizes`/`--file-size` change the sizes
without changing the description. The title is composed at render time from
the report's results, so reports written before this module read right too.
A description that names no sizes is left as it is: the rows say them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bridge.view import units

UNIT = r"(?:B|bytes|KiB|MiB|GiB)"
SCALE = {"B": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
RANGE = re.compile(rf"(\d+) ?({UNIT}) to (\d+) ?({UNIT})")
PAIR = re.compile(rf"(\d+) ?({UNIT}) and (\d+) ?({UNIT}) messages")
ONE_MESSAGE = re.compile(r"(\ba )?(\d+)-byte message\b")
ONE_FILE = re.compile(rf"\ba (\d+) ?({UNIT}) file\b")
TOKEN = rf"\d+ ?{UNIT}\b(?: \([^)]*\))?"
# A list of sizes: "64 B, 1200 B (QUIC) and 16 KiB", "16 KiB, 32 KiB and 1 MiB".
LIST = re.compile(rf"{TOKEN}(?:(?:,? and |, ){TOKEN})+")
ONE = re.compile(rf"(\d+) ?({UNIT})\b")
# PBKDF2's sizes are iteration counts: "1,000 and 100,000 iterations".
ITERATIONS = re.compile(r"\d[\d,]*(?:(?:,? and |, )\d[\d,]*)* iterations\b")
SPEED_SIZES = (16, 64, 256, 1024, 8192, 16384)
SPEED_NOTE = re.compile(r" ?\(the openssl speed sizes\)")


def sized(description: str, sizes: Sequence[int]) -> str:
    """`description` with its size phrase rewritten when it does not say
    `sizes` (sorted, distinct)."""
    run = sorted(set(sizes))
    if not run:
        return description
    text = description
    if tuple(run) != SPEED_SIZES:
        text = SPEED_NOTE.sub("", text)
    m = RANGE.search(text)
    if m:
        lo, hi = _n(m[1], m[2]), _n(m[3], m[4])
        if (lo, hi) != (run[0], run[-1]) or len(run) < 3:
            text = _swap(text, m, _range(run))
        return text
    m = PAIR.search(text)
    if m:
        if {_n(m[1], m[2]), _n(m[3], m[4])} != set(run):
            text = _swap(text, m, _messages(run))
        return text
    m = ONE_MESSAGE.search(text)
    if m:
        if run != [int(m[2])]:
            article = m[1] if len(run) == 1 else ""
            text = _swap(text, m, (article or "") + _messages(run))
        return text
    m = ONE_FILE.search(text)
    if m:
        if run != [_n(m[1], m[2])]:
            text = _swap(
                text, m, f"a {_size(run[0])} file" if len(run) == 1 else f"files of {_list(run)}"
            )
        return text
    m = LIST.search(text)
    if m:
        if sorted({_n(n, u) for n, u in ONE.findall(m[0])}) != run:
            text = _swap(text, m, _list(run))
        return text
    m = ITERATIONS.search(text)
    if m:
        said = sorted({int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", m[0])})
        if said != run:
            text = _swap(text, m, _joined([f"{n:,}" for n in run]) + " iterations")
    return text


def _n(number: str, unit: str) -> int:
    return int(number) * SCALE[unit]


def _swap(text: str, m: re.Match, phrase: str) -> str:
    return text[: m.start()] + phrase + text[m.end() :]


def _size(n: int) -> str:
    return units.short(n)


def _list(run: list[int]) -> str:
    return _joined([_size(n) for n in run])


def _joined(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _range(run: list[int]) -> str:
    return f"{_size(run[0])} to {_size(run[-1])}" if len(run) >= 3 else _list(run)


def _messages(run: list[int]) -> str:
    if len(run) == 1:
        n = run[0]
        return f"{n}-byte message" if n % 1024 else f"{_size(n)} message"
    return f"{_list(run)} messages"
