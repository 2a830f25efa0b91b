"""What every view says about noise: cells whose CI missed the run's target
(marked unstable), and the machine's noise warnings (bridge.analysis.noise), with the
figures behind them."""

from __future__ import annotations

from collections import defaultdict

from bridge.render import units
from bridge.report import schema
from bridge.view import words


def target(report: schema.Report) -> float | None:
    s = report.settings
    return s.get("until_stable") or s.get("ci_target")


def unstable_lines(report: schema.Report) -> list[str]:
    """One paragraph: the cells by runtime, call, scenario (where the run has
    several) and hw, each with its CI and where it is (units.at)."""
    if not report.unstable:
        return []
    goal = target(report)
    named = len(units.scenarios_run(report)) > 1
    groups: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for u in report.unstable:
        where = units.at(report, u.scenario, u.size, brief=True)
        groups[(u.runtime, u.call_id, u.scenario if named else "", u.hw)].append(
            f"±{u.ci_halfwidth * 100:.1f}% {where}"
        )
    cells = "; ".join(
        f"{rt} {call}{f' ({sc})' if sc else ''} hw {hw}: {', '.join(v)}"
        for (rt, call, sc, hw), v in groups.items()
    )
    head = "Unstable (95% CI wider than " + (f"±{goal * 100:g}%" if goal else "the target") + ")"
    return [f"{head}: {cells}. Rerun with --until-stable to sample them until they are stable."]


def machine_line(n: schema.Noise) -> str:
    """The figures, warned about or not: load, steal, others' CPU."""
    parts = [f"{n.seconds:.1f} s"]
    if n.load_before is not None and n.load_after is not None:
        parts.append(f"load average {n.load_before[0]:.2f} before, {n.load_after[0]:.2f} after")
    if n.others_cpus is not None:
        parts.append(f"other processes {n.others_cpus:.2f} CPUs, bridge {n.bridge_cpus:.2f}")
    if n.steal is not None:
        parts.append(f"steal {n.steal:.1%}")
    return "During the run: " + ", ".join(parts) + "."


def lines(report: schema.Report) -> list[str]:
    """Paragraphs (one string each), for every view to lay out its own way."""
    out = unstable_lines(report)
    if report.noise is not None:
        out.append(machine_line(report.noise))
        out += [f"Warning: {w}." for w in warning_lines(report)]
        advice = words.noise_advice(report.noise)
        if advice:
            out.append(f"Advice: {advice}.")
    out += cost_lines(report)
    return out


def warning_lines(report: schema.Report, verbose: bool = False) -> list[str]:
    """What the machine and the cells did (bridge.view.words.noise_lines), and
    the sizes off their cost line in reports from before those were findings."""
    if report.noise is None:
        return []
    return words.noise_lines(report.noise, verbose) + words.fit_lines(report.fits)


def cost_lines(report: schema.Report) -> list[str]:
    """Cycles per byte and the share of the machine's best (bridge.analysis.cputime)."""
    return words.cost_lines(report.cpu_time)
