"""`× first named` and `× fastest` as the views print them: the ratio, its
95% bootstrap CI and whether the difference is real (bridge.analysis.versus).

    2.35× (2.20–2.51) sig    the CI clears ±3% and the rounds agree
    1.06× (1.01–1.08) noise  it does not (or the rounds disagree: drift)
    1.66× ?                  too few rounds to tell a difference from drift
    0.48×                    as posted (imported numbers have no samples)
    1.00×                    the baseline itself
"""

from __future__ import annotations

from bridge.analysis import versus
from bridge.catalog import calls
from bridge.report import schema
from bridge.report.findings import Significance

FIRST, FASTEST = versus.FIRST, versus.FASTEST
WORDS = {
    "faster": "sig",
    "slower": "sig",
    "within noise": "noise",
    versus.UNRESOLVED: "?",
    "too few samples": "?",
}


class Ratios:
    def __init__(self, report: schema.Report) -> None:
        self.report = report
        self.diffs = versus.of(report)
        self.by = versus.index(self.diffs)
        self.kinds = versus.several(report)

    @property
    def shows_first(self) -> bool:
        """Is there a `× first named` column: does a kind have several runtimes?"""
        return bool(self.kinds)

    @property
    def rebased(self) -> bool:
        """Was a --baseline chosen: is some runtime compared with another than
        the first named of its kind?"""
        order = {rid: i for ids in self.kinds.values() for i, rid in enumerate(ids)}
        # Without one, a row's baseline is always named before it.
        return any(
            order.get(d.baseline_runtime, -1) > order.get(d.runtime, -1)
            for d in self.diffs
            if d.against == FIRST
        )

    def first_heading(self, x: str = "×") -> str:
        """The column's heading: `× first named`, or `× baseline` (--baseline)."""
        return f"{x} baseline" if self.rebased else f"{x} first named"

    def get(self, against: str, r: schema.Result) -> schema.Difference | None:
        return self.by.get(versus.key_of(against, r))

    def cell(self, against: str, r: schema.Result, x: str = "×", dash: str = "–") -> str:
        if not r.ok:
            return ""
        d = self.get(against, r)
        if d is None and r.median() <= 0:
            return ""  # no time to make a ratio of (a pasted line with 0 operations)
        kind = self.report.kind_of(r.runtime)
        if d is None and against == FASTEST and calls.is_part(kind, r.call_id):
            return ""  # a part of a call is not compared with whole calls
        if d is None:
            baseline = against == FASTEST or kind in self.kinds
            return f"1.00{x}" if baseline else ""
        return text(d, x, dash)

    def legend(self, results: list[schema.Result], x: str = "×") -> list[str]:
        """What the marks mean, for the marks these rows show."""
        shown = [d for r in results for a in (FIRST, FASTEST) if (d := self.get(a, r))]
        words = {WORDS.get(d.verdict, "") for d in shown} - {""}
        if not words:
            return []
        margin = f"{versus.MARGIN * 100:.0f}%"
        parts = [
            f"{x} fastest, {self.first_heading(x)}: this row's median over the other's (95% CI)"
        ]
        if "sig" in words:
            parts.append(f"sig = the CI clears ±{margin} and the rounds agree")
        if "noise" in words:
            parts.append("noise = within the noise")
        if "?" in words:
            parts.append(f"? = fewer than {versus.MIN_ROUNDS} rounds: drift cannot be told apart")
        return ["; ".join(parts) + "."]


def text(d: schema.Difference, x: str = "×", dash: str = "–") -> str:
    head = f"{d.ratio:.2f}{x}"
    if d.ci95 is None and d.verdict != Significance.FEW:
        return head  # as posted: no samples, no CI
    word = WORDS.get(d.verdict, d.verdict)
    if d.verdict == Significance.FEW:
        return f"{head} ?"
    if word == "?":
        return f"{head} ?"
    return f"{head} ({d.ci95[0]:.2f}{dash}{d.ci95[1]:.2f}) {word}"


def resolution_warning(report: schema.Report, diffs) -> list[str]:
    """Say so when the settings were too short to tell differences between
    runtimes from drift, rather than letting drift look significant."""
    diffs = [d for d in diffs if d.against != versus.NEIGHBOUR]  # said with its first named
    short = [d for d in diffs if d.verdict == versus.UNRESOLVED]
    drift = [d for d in diffs if versus.is_drift(d)]
    if not short and not drift:
        return []
    s = report.settings
    out = []
    if short:
        rounds, runs = s.get("rounds"), s.get("openssl_runs")
        took = f"{_count(rounds, 'round')} per cell, {_count(runs, 'openssl run')}"
        if s.get("quick"):
            how, fix = f"--quick measures {took}", "rerun without --quick"
        else:
            how, fix = f"this run measured {took}", "rerun with more --rounds and --openssl-runs"
        out.append(
            f"{_count(len(short), 'difference')} between runtimes cannot be resolved (?): {how},"
            f" and telling a difference from drift needs samples in {versus.MIN_ROUNDS} rounds"
            f" on both sides; {fix}."
        )
    if drift:
        out.append(
            f"{_count(len(drift), 'difference')} whose CI clears the margin, called within noise:"
            " the interleaved rounds disagree on them (drift)."
        )
    return out


def _count(n, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
