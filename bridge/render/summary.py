"""The opening sentences of the markdown and text views: what a reader of a
mailing-list answer wants before the tables."""

from __future__ import annotations

from collections import defaultdict

from bridge import ab, calls, interop, model
from bridge.render import common, units
from bridge.render import decompose as decomposition


def sentences(report: model.Report, ascii_only: bool = False) -> list[str]:
    x = "x" if ascii_only else "×"
    out: list[str] = []
    for scenario, results in common.by_scenario(report).items():
        # A set-up timed alone is not a way to do the operation: not "fastest".
        work = [r for r in results if calls.role(report.kind_of(r.runtime), r.call_id) != "setup"]
        out += _speed_sentence(scenario, work, x, units.unit(report, scenario))
        out += _verdict_sentences(report, scenario, x)
        out += decomposition.sentences(report, scenario)
        out += _interop_sentence(report, scenario)
    for e in report.errors:
        out.append(f"Problem: {e.message}")
    return out


def _speed_sentence(
    scenario: str, results: list[model.Result], x: str, unit: str = units.BYTES
) -> list[str]:
    ok = [r for r in results if r.ok and r.hw == "on"]
    if not ok:
        return []
    size = max(r.size for r in ok)
    at_size = sorted((r for r in ok if r.size == size), key=lambda r: r.median())
    best = at_size[0]
    parts = [
        f"{scenario} at {units.size_text(size, unit)}: fastest is {best.call} on {best.runtime}"
        # fmt_ns writes its own unit from a millisecond up (PBKDF2 calls).
        f" ({common.fmt_ns(best.median())}{'' if best.median() >= 1e6 else ' ns'} per call)"
    ]
    for r in at_size[1:4]:
        parts.append(f"{r.call} on {r.runtime} takes {r.median() / best.median():.2f}{x}")
    sentence = "; ".join(parts) + "."
    if len({r.semantics for r in at_size}) > 1:
        sentence += " The rows do not all include the same work (see the notes under the table)."
    return [sentence]


def _verdict_sentences(report: model.Report, scenario: str, x: str) -> list[str]:
    groups: dict[tuple[str, str, str], list[model.HwVerdict]] = defaultdict(list)
    for v in report.verdicts:
        if v.scenario == scenario:
            groups[(v.runtime, v.call, v.feature)].append(v)
    out, small_sizes = [], set()
    unit = units.unit(report, scenario)
    for (runtime, call, feature), vs in groups.items():
        name = ab.feature_name(feature).split(" (")[0]
        who = common.who(report, runtime, call)
        used = [v for v in vs if v.verdict == "used"]
        if used:
            sizes = ", ".join(
                f"{v.speedup:.1f}{x} at {units.size_text(v.size, unit)}" for v in used
            )
            out.append(f"{who} uses {name}: faster with them by {sizes}.")
            small_sizes |= {v.size for v in used if (v.speedup or 0) < 1.5}
        out += [v.explanation + "." for v in vs if v.verdict != "used"]
    if small_sizes:
        where = ", ".join(units.size_text(n, unit) for n in sorted(small_sizes))
        out.append(
            f"At {where} most of each call is fixed cost (set-up, call overhead),"
            " which the hardware does not speed up."
        )
    return out


def _interop_sentence(report: model.Report, scenario: str) -> list[str]:
    """Say what the check was: equal to a reference, signatures verified, or
    agreement between runtimes; and which outputs were not checked at all."""
    checks = [c for c in report.interop if c.scenario == scenario]
    if not checks:
        return []
    if not all(c.match for c in checks):
        bad = sorted({m.text() for c in checks for m in c.mismatched})
        return [f"OUTPUT MISMATCH: {', '.join(bad)} computed different bytes."]
    unchecked = sorted({k.runtime for c in checks for k in c.unchecked or ()})
    checked = {k.runtime for c in checks for k, v in c.outputs.items() if v}
    out = []
    n = len(checked)
    runtimes = "runtime" if n == 1 else "runtimes"
    source = checks[0].reference_from
    if n == 0:
        pass
    elif source == interop.FROM_EC:
        out.append(
            f"All {n} {runtimes} made signatures that the driver's own ECDSA verifies,"
            " and their verify calls accepted the driver's signature."
        )
    elif source == interop.FROM_AGREEMENT:
        out.append(f"All {n} {runtimes} computed the same bytes (no reference: they agree).")
    elif source == interop.FROM_OWN:
        out.append(f"All {n} {runtimes} passed the driver's own checks: {checks[0].reference}.")
    else:  # a reference computed in the driver (older reports word it differently)
        cipher = report.scenario_kind(scenario) == "cipher"
        library = "the cryptography package" if cipher else "Python's standard library"
        out.append(f"All {n} {runtimes} computed the same bytes as {library}.")
    reasons = {k: v for c in checks for k, v in c.unchecked_reasons.items()}
    if reasons:
        said = sorted({f"{k.runtime} {k.call_id} ({v})" for k, v in reasons.items()})
        out.append(f"Not checked: {'; '.join(said)}.")
        unchecked = sorted(
            {k.runtime for c in checks for k in c.unchecked or () if k not in reasons}
        )
    if unchecked:
        out.append(f"Not checked (no output of their own to compare): {', '.join(unchecked)}.")
    return out
