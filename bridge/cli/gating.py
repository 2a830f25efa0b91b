"""compare's gate on the command line: --fail-if-slower PCT, --fail-if-faster
PCT, what the gate found in words (one line per cell on stderr, then the
outcome) and its exit status (bridge.errors.ExitStatus.GATE). The decision
is bridge.analysis.gate's."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import click

from bridge import plain
from bridge.analysis import compare, gate
from bridge.analysis.gate import Direction, Finding, Gate, Outcome, Threshold, Unsure
from bridge.errors import ExitStatus
from bridge.view import words

PREFIX = "bridge: gate: "


class Percent(click.ParamType):
    """A threshold in percent: a number from 0 to 1000, a trailing % allowed
    (5 or 5%); not negative, nan or inf."""

    name = "PCT"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        text = str(value).strip()
        number = text.removesuffix("%").strip()
        if not plain.DECIMAL.fullmatch(number):
            self.fail(f"{plain.visible(text)!r} is not a number (e.g. 5 for 5%)", param, ctx)
        if number.startswith("-"):
            self.fail(f"{plain.visible(text)}: the threshold cannot be negative", param, ctx)
        try:
            return gate.check_pct(float(number))
        except ValueError:
            self.fail(
                f"{plain.visible(text)}: a percentage from 0 to {gate.MAX_PCT:g}"
                f" ({gate.MAX_PCT:g} is {1 + gate.MAX_PCT / 100:g}x)",
                param,
                ctx,
            )


def gate_options(command: Callable) -> Callable:
    """--fail-if-slower PCT and --fail-if-faster PCT (with either, -q is the
    gate's lines alone: bridge.cli.reports.compare)."""
    command = click.option(
        "--fail-if-faster",
        "fail_faster",
        type=Percent(),
        metavar="PCT",
        help="Exit with status 3 when a cell is significantly faster by more than PCT%"
        " (A/B over 1 + PCT/100, judged on the CI's near end): for a change that should"
        " not matter.",
    )(command)
    return click.option(
        "--fail-if-slower",
        "fail_slower",
        type=Percent(),
        metavar="PCT",
        help="Exit with status 3 when a cell is significantly slower by more than PCT%"
        " (B/A over 1 + PCT/100, judged on the 95% CI's near end), naming each such"
        " cell on stderr. 0 to 1000.",
    )(command)


def thresholds(slower: float | None, faster: float | None) -> list[Threshold]:
    found = [(Direction.SLOWER, slower), (Direction.FASTER, faster)]
    return [Threshold(d, pct) for d, pct in found if pct is not None]


def report(g: Gate, labels: Sequence[str]) -> ExitStatus:
    """Say what the gate found on stderr, one line a cell, the outcome last;
    the exit status. Nothing lined up is an error (status 1): a gate that
    judged nothing has not passed."""
    several = len(g.lined_up) > 1
    for f in g.tripped:
        where = _which(f.other, labels, several)
        _say(f"{_past(f.threshold)}: {_row(f.row)}: {_ratio(f.row)}{where}")
    for f in g.unsure:
        said = f"not counted, {_unsure(f)}: {_row(f.row)}: {_ratio(f.row)}"
        _say(said + _which(f.other, labels, several))
    for i, u in g.one_sided:
        where = labels[0] if u.side == 0 else labels[i]
        cell = _cell(u.scenario, u.kind, u.call_id or u.call, u.size, str(u.hw))
        _say(f"only in {where}: {cell} (not judged){_which(i, labels, several)}")
    what = " or ".join(_past(t) for t in g.thresholds)
    counts = _counts(g)
    if g.outcome is Outcome.FAILED:
        n = len(g.tripped)
        cells = "cell" if n == 1 else "cells"
        _say(f"failed: {n} {cells} {what} ({counts}); exit status {int(ExitStatus.GATE)}")
        return ExitStatus.GATE
    if g.outcome is Outcome.NOTHING:
        empty = ", ".join(labels[i] for i in g.empty)
        said = (
            f"bridge: error: gate: no cell of {empty} lines up with {labels[0]} (different"
            " scenarios, calls, sizes or runtime kinds): nothing to judge, so the gate cannot pass"
        )
        click.echo(plain.printable(said), err=True)
        return ExitStatus.RUN_FAILED
    _say(f"passed: no cell significantly {what} ({counts})")
    return ExitStatus.OK


def _say(line: str) -> None:
    click.echo(plain.printable(PREFIX + line), err=True)


def _past(t: Threshold) -> str:
    return f"{t.direction.value} by more than {t.pct:g}%"


def _counts(g: Gate) -> str:
    lined = sum(n for _, n in g.lined_up)
    parts = [f"{lined} {'cell' if lined == 1 else 'cells'} lined up"]
    if g.unsure:
        parts.append(f"{len(g.unsure)} past it but not counted")
    if g.one_sided:
        parts.append(f"{len(g.one_sided)} only in one report")
    return ", ".join(parts)


def _which(other: int, labels: Sequence[str], several: bool) -> str:
    return f", {labels[other]} against {labels[0]}" if several else ""


def _cell(scenario: str, kind: str, call: str, size: int, hw: str, runtimes: str = "") -> str:
    return f"{scenario} {kind} {call}, size {size}, hw {hw}{runtimes}"


def _row(r: compare.Row) -> str:
    hw = str(r.hw_a) if r.hw_a == r.hw_b else f"{r.hw_a}/{r.hw_b}"
    runtimes = "" if r.runtime_a == r.runtime_b else f" ({r.runtime_a} -> {r.runtime_b})"
    return _cell(r.scenario, r.kind, r.call_id or r.call, r.size, hw, runtimes)


def _ratio(r: compare.Row) -> str:
    ci = f"95% CI {r.ci95[0]:.2f}-{r.ci95[1]:.2f}" if r.ci95 else "no CI"
    return f"B/A {r.ratio:.2f}x ({ci})"


def _unsure(f: Finding) -> str:
    if f.unsure is Unsure.NEAR_END:
        return f"its CI reaches {f.near:.2f}x, within the gate"
    if f.unsure is Unsure.FEW_SAMPLES and f.row.reasons:
        # (Row had no `note`: a FEW_SAMPLES finding raised AttributeError.)
        return f"too few samples ({words.reasons(f.row.reasons)})"
    return {
        Unsure.WITHIN_NOISE: "within noise",
        Unsure.FEW_SAMPLES: "too few samples for a CI",
        Unsure.NO_SAMPLES: "no samples (imported numbers)",
        Unsure.UNEQUAL_LOAD: (
            "unequal load (the machines differed: load alone can make it, and CPU time"
            " could not settle it)"
        ),
    }[f.unsure]  # type: ignore[index]
