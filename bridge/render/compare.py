"""Renderings of a comparison: table, markdown, text (72 columns), json."""

from __future__ import annotations

import json
import textwrap

from tabulate import tabulate

from bridge import plain, stats
from bridge.render import common, units, upgrade
from bridge.render.escape import Md, document, md, md_table
from bridge.report.comparison import Comparison
from bridge.report.findings import Significance
from bridge.view import words

FEW, UNEQUAL = Significance.FEW, Significance.UNEQUAL_LOAD


@plain.escaped
def render(c: Comparison, fmt: str) -> str:
    """The comparison in `fmt`. Markdown: each line made by
    bridge.render.escape (the labels, calls and notes escaped as text)."""
    if fmt == "json":
        return json.dumps(c.to_json(), indent=1) + "\n"
    ascii_only = fmt == "text"
    markdown = fmt == "markdown"
    x = "x" if ascii_only else "×"
    out: list[str] = []
    for i, rows in c.pairs:
        title = f"{c.labels[i]} against {c.labels[0]}"
        out += ([md("### {}", title)] if markdown else _wrap(f"== {title}", ascii_only)) + [""]
        if not rows:
            out += ["No results line up (different scenarios, calls or sizes).", ""]
            continue
        significant = sum(r.significant for r in rows)
        out += _wrap(
            f"{significant} of {len(rows)} cells differ significantly; the others are"
            " within noise or have no samples to tell.",
            ascii_only,
        )
        if i in c.unequal:
            a, b = c.conditions[0], c.conditions[i]
            differed = f"A: {words.conditions(a)}; B: {words.conditions(b)}"
            out += _wrap(
                f"The machines differed ({differed}): a difference in the direction"
                " of the load is marked 'unequal load', not significant.",
                ascii_only,
            )
        few = (words.reasons(r.reasons) for r in rows if r.verdict == FEW and r.reasons)
        for note in dict.fromkeys(few):
            out += _wrap(f"Too few samples: {note}.", ascii_only)
        out.append("")
        if ascii_only:
            out += _text_tables(rows)
        else:
            out += _wide_table(rows, fmt, x)
        out += _upgrade_lines(c.upgrades.get(i, []), fmt)
        out.append("")
    if c.environment_diff:
        out += [
            "What differs between the environments:" if not markdown else Md("#### Environments")
        ]
        for what, values in c.environment_diff:
            known = [(c.labels[i], v) for i, v in enumerate(values) if v is not None]
            said = " | ".join(f"{label}: {v}" for label, v in known)
            if markdown:
                out.append(md("- {}: {}", what, said))
            else:
                out += _wrap(f"- {what}: {said}", ascii_only, indent="  ")
    else:
        out.append("The environments match (CPU, OS, kernel, OTP, OpenSSL).")
    if markdown:
        return document(out)
    text = "\n".join(out).rstrip() + "\n"
    if ascii_only:
        text = text.replace("×", "x").encode("ascii", "replace").decode()
    return text


def _wrap(text: str, ascii_only: bool, indent: str = "") -> list[str]:
    if not ascii_only:
        return [text]
    return textwrap.wrap(text, 72, subsequent_indent=indent, break_on_hyphens=False) or [""]


def _named(rows) -> set[str]:
    """Kinds with several runtimes on either side (two OTPs in a report):
    their rows name the runtimes, or two rows would differ only in numbers."""
    kinds = {r.kind for r in rows}
    return {
        k
        for k in kinds
        if len({r.runtime_a for r in rows if r.kind == k}) > 1
        or len({r.runtime_b for r in rows if r.kind == k}) > 1
    }


def _runtimes(r) -> str:
    return r.runtime_a if r.runtime_a == r.runtime_b else f"{r.runtime_a} / {r.runtime_b}"


def _wide_table(rows, fmt: str, x: str) -> list[str]:
    named = _named(rows)
    # One unit per column (render.units.TimeScale).
    scale = units.time_scale([r.median_a for r in rows] + [r.median_b for r in rows])
    table_rows = []
    for r in rows:
        hw = r.hw_a if r.hw_a == r.hw_b else f"{r.hw_a}/{r.hw_b}"
        ci = f"{r.ci95[0]:.2f}-{r.ci95[1]:.2f}" if r.ci95 else "n/a"
        who = r.call if r.call.startswith(r.kind) else f"{r.kind} {r.call}"
        table_rows.append(
            [
                r.scenario,
                *([_runtimes(r) if r.kind in named else ""] if named else []),
                who,
                r.size,
                hw,
                scale.fmt(_low(r.low_a, r.median_a)),
                scale.fmt(_low(r.low_b, r.median_b)),
                f"{r.ratio:.2f}{x}",
                ci,
                r.verdict,
            ]
        )
    headers = ["scenario", *(["runtime (A / B)"] if named else []), "call", "size", "hw"]
    headers += [f"A {stats.LOW_STATISTIC} {scale.name}", f"B {stats.LOW_STATISTIC} {scale.name}"]
    headers += ["B/A", "95% CI", "verdict"]
    if fmt == "markdown":
        return md_table(table_rows, headers)
    return tabulate(
        table_rows, headers=headers, tablefmt="simple", disable_numparse=True
    ).splitlines()


SHORT = {"within noise": "noise", "unknown (no samples)": "n/a", FEW: "few", UNEQUAL: "load"}


def _low(low: float | None, median: float) -> float:
    """The statistic the ratio is of; a comparison from before it, the median."""
    return median if low is None else low


def _text_tables(rows) -> list[str]:
    """Narrow enough for 72 columns: one table per scenario, short names;
    where a kind has several runtimes, each row names its pair by a number
    given once above the tables."""
    out = []
    named = _named(rows)
    pairs: dict[tuple[str, str], int] = {}
    for r in rows:
        if r.kind in named:
            pairs.setdefault((r.runtime_a, r.runtime_b), len(pairs) + 1)
    for (a, b), n in pairs.items():
        out += _wrap(f"[{n}] {a if a == b else f'{a} (A) / {b} (B)'}", True, indent="    ")
    if pairs:
        out.append("")
    for scenario in dict.fromkeys(r.scenario for r in rows):
        table_rows = []
        for r in (r for r in rows if r.scenario == scenario):
            hw = r.hw_a if r.hw_a == r.hw_b else f"{r.hw_a}/{r.hw_b}"
            ci = f" ({r.ci95[0]:.2f}-{r.ci95[1]:.2f})" if r.ci95 else ""
            n = pairs.get((r.runtime_a, r.runtime_b))
            table_rows.append(
                [
                    f"[{n}] {r.call_id}" if n else f"{r.kind} {r.call_id}",
                    r.size,
                    hw,
                    f"{common.fmt_ns(_low(r.low_a, r.median_a))}"
                    f"/{common.fmt_ns(_low(r.low_b, r.median_b))}",
                    f"{r.ratio:.2f}{ci}",
                    SHORT.get(r.verdict, r.verdict),
                ]
            )
        out += [f"-- {scenario}"]
        headers = ["call", "bytes", "hw", f"A/B {stats.LOW_STATISTIC} ns", "B/A (95% CI)", ""]
        out += common.simple_table(table_rows, headers, width=0)
        out.append("")
    return out


def _upgrade_lines(upgrades, fmt: str) -> list[str]:
    if not upgrades:
        return []
    if fmt != "text":
        # Markdown keeps the blank line: a line right under a table's last
        # row would be read as one more row.
        lines = upgrade.wide(upgrades, fmt)
        return lines if fmt == "markdown" else lines[1:]
    out = ["", "Where the versions differ:"]
    for sentence in upgrade.sentences(upgrades, ascii_only=True):
        out += textwrap.wrap(sentence, 72, initial_indent="- ", subsequent_indent="  ")
    return out + upgrade.narrow(upgrades)
