"""The opening sentences of the markdown and text views: what a reader of a
mailing-list answer wants before the tables."""

from __future__ import annotations

from collections import defaultdict

from bridge.analysis import interop, versus
from bridge.catalog import calls
from bridge.render import common, concurrency, ratios, units, upgrade
from bridge.render import decompose as decomposition
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.view import words


def sentences(report: schema.Report, ascii_only: bool = False) -> list[str]:
    x = "x" if ascii_only else "×"
    dash = "-" if ascii_only else "–"
    ratio = ratios.Ratios(report)
    out: list[str] = []
    for scenario, results in common.by_scenario(report).items():
        # A set-up timed alone is not a way to do the operation: not "fastest".
        work = [r for r in results if calls.role(report.kind_of(r.runtime), r.call_id) != "setup"]
        unit = units.unit(report, scenario)
        out += _speed_sentence(scenario, work, ratio, x, dash, unit)
        out += _version_sentences(report, scenario, results, ratio, x, dash)
        out += upgrade.sentences(upgrade.of(report, scenario), ascii_only)
        out += _verdict_sentences(report, scenario, x)
        out += decomposition.sentences(report, scenario)
        out += _interop_sentence(report, scenario)
    out += concurrency.sentences(report, ascii_only)
    out += ratios.resolution_warning(report, ratio.diffs)
    for e in report.errors:
        out.append(f"Problem: {e.message}")
    return out


def _speed_sentence(
    scenario: str,
    results: list[schema.Result],
    ratio: ratios.Ratios,
    x: str,
    dash: str,
    unit: str = units.BYTES,
) -> list[str]:
    """The fastest at the largest size, per comparison group (sign and verify,
    key generation, whole processes each apart: versus.group), but only when
    the others are significantly slower: a winner inside the noise is not
    named."""
    report = ratio.report
    ok = [
        r
        for r in results
        if r.ok and not r.hw.masked and not calls.is_part(report.kind_of(r.runtime), r.call_id)
    ]
    if not ok:
        return []
    size = max(r.size for r in ok)
    groups: dict[str, list[schema.Result]] = defaultdict(list)
    for r in ok:
        if r.size == size:
            groups[versus.group(report, r)].append(r)
    out = []
    for name, rows in groups.items():
        if len(rows) < 2:
            continue  # nothing to compare it with
        label = f" ({words.GROUP_WORDS.get(name, name)})" if name else ""
        at = units.at(report, scenario, size)
        where = f"{scenario}{label} {at}" if size or unit == units.PER_CALL else scenario + label
        out += _group_sentence(where, sorted(rows, key=lambda r: r.median()), ratio, x, dash)
    return out


def _group_sentence(
    where: str, at_size: list[schema.Result], ratio: ratios.Ratios, x: str, dash: str
) -> list[str]:
    best, others = at_size[0], at_size[1:]

    def verdict(r: schema.Result) -> str | None:
        d = ratio.get(ratios.FASTEST, r)
        return d.verdict if d else None

    noise = [r for r in others if verdict(r) == "within noise"]
    open_ = [r for r in others if verdict(r) in (versus.UNRESOLVED, versus.UNKNOWN)]
    if noise:
        level = [best, *noise]
        names = ", ".join(f"{r.call} on {r.runtime}" for r in level[:4])
        names += f" and {len(level) - 4} more" if len(level) > 4 else ""
        low = common.fmt_ns(best.median())
        drift = any(versus.is_drift(d) for r in noise if (d := ratio.get(ratios.FASTEST, r)))
        why = "; the interleaved rounds disagree: drift" if drift else ""
        head = f"{where}: no clear fastest: {names} are within noise of each other"
        parts = [f"{head} ({low}{dash}{_ns(level[-1].median())} per call{why})"]
    else:
        lead = f"{best.call} on {best.runtime} ({_ns(best.median())} per call)"
        if open_:
            posted = all(verdict(r) == versus.UNKNOWN for r in open_)
            why = "as posted, no samples to tell" if posted else "too few rounds to tell"
            parts = [f"{where}: lowest median: {lead}, not called the fastest ({why})"]
        else:
            parts = [f"{where}: fastest is {lead}"]
    for r in [r for r in others if r not in noise][:3]:
        d = ratio.get(ratios.FASTEST, r)
        parts.append(f"{r.call} on {r.runtime} takes {words.difference(d, x, dash)}" if d else "")
    sentence = "; ".join(p for p in parts if p) + "."
    if len({r.semantics for r in at_size}) > 1:
        sentence += " The rows do not all include the same work (see the notes under the table)."
    return [sentence]


def _verdict_sentences(report: schema.Report, scenario: str, x: str) -> list[str]:
    groups: dict[tuple[str, str, str], list[schema.HwVerdict]] = defaultdict(list)
    for v in report.verdicts:
        if v.scenario == scenario:
            groups[(v.runtime, v.call, v.feature)].append(v)
    out, small_sizes = [], set()
    unit = units.unit(report, scenario)
    for (runtime, call, feature), vs in groups.items():
        name = words.feature_short(feature)
        who = common.who(report, runtime, call)
        used = [v for v in vs if v.verdict == "used"]
        if used:
            sizes = ", ".join(
                f"{v.speedup:.1f}{x} {units.at(report, scenario, v.size)}" for v in used
            )
            out.append(f"{who} uses {name}: faster with them by {sizes}.")
            if unit == units.BYTES:  # fixed cost diluting the gain: a matter of message size
                small_sizes |= {v.size for v in used if (v.speedup or 0) < 1.5}
        out += [common.explanation(report, v) + "." for v in vs if v.verdict != "used"]
    if small_sizes:
        where = ", ".join(units.size_text(n, unit) for n in sorted(small_sizes))
        out.append(
            f"At {where} most of each call is fixed cost (set-up, call overhead),"
            " which the hardware does not speed up."
        )
    return out


def _version_sentences(
    report: schema.Report,
    scenario: str,
    results: list[schema.Result],
    ratio: ratios.Ratios,
    x: str,
    dash: str,
) -> list[str]:
    """Each runtime against the first-named of its kind (or the --baseline),
    call by call, at every size: the ratio of times, its CI and whether it is
    a difference; in a version matrix, also against its neighbour (the
    runtime named before it)."""
    groups: dict[tuple[str, str, Hw], list[schema.Difference]] = defaultdict(list)
    near: dict[tuple, schema.Difference] = {}
    for r in results:
        d = ratio.get(ratios.FIRST, r)
        if d is not None:
            groups[(d.baseline_runtime, r.call, r.hw)].append(d)
            n = ratio.get(versus.NEIGHBOUR, r)
            if n is not None and n.baseline_runtime != d.baseline_runtime:
                near[(d.runtime, d.call_id, d.size, d.hw)] = n
    out = []
    for (first, call, hw), ds in groups.items():
        hw_text = f" (hw {hw})" if any(r.hw.masked for r in results) else ""
        per_size = []
        for size in sorted({d.size for d in ds}):
            each = []
            for d in (d for d in ds if d.size == size):
                text = f"{d.runtime} {words.difference(d, x, dash)}"
                n = near.get((d.runtime, d.call_id, d.size, d.hw))
                if n is not None:
                    text += f", against {n.baseline_runtime} {words.difference(n, x, dash)}"
                each.append(text)
            at = units.at(report, scenario, size)
            # Per call, the title says so; size 0: a pasted line with no size.
            at = "" if at == units.PER_CALL or not size else f"{at}, "
            per_size.append(at + (", and " if near else " and ").join(each))
        what = common.who(report, first, call).removesuffix(f" on {first}")
        out.append(f"{what}{hw_text}, time relative to {first}: " + "; ".join(per_size) + ".")
    return out


def interop_sentences(report: schema.Report, scenario: str) -> list[str]:
    """What the output check was, for the views that have no column for it."""
    return _interop_sentence(report, scenario)


def _interop_sentence(report: schema.Report, scenario: str) -> list[str]:
    """Say what the check was: equal to a reference, signatures verified, or
    agreement between runtimes; and which outputs were not checked at all."""
    checks = [c for c in report.interop if c.scenario == scenario]
    if not checks:
        return []
    if not all(c.match for c in checks):
        bad = sorted({m.text() for c in checks for m in c.mismatched})
        return [f"OUTPUT MISMATCH: {', '.join(bad)} computed different bytes."]
    kinds = {rt.id: rt.kind for rt in report.runtimes}
    part = {
        (r.runtime, r.call_id)
        for r in report.results
        if r.scenario == scenario and _is_part(kinds, r)
    }
    unchecked = sorted(
        {k.runtime for c in checks for k in c.unchecked or () if (k.runtime, k.call_id) not in part}
    )
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
    if part:
        out.append("Rows marked part time a part of a call: they make no MAC to check.")
    return out


def _is_part(kinds: dict[str, str], r: schema.Result) -> bool:
    call = calls.lookup(kinds.get(r.runtime, ""), r.call_id)
    return call is not None and call.check is calls.Check.PART


def _ns(value: float) -> str:
    """A per-call time with its unit: fmt_ns writes its own unit from a
    millisecond up (PBKDF2 calls), and plain nanoseconds below."""
    return common.fmt_ns(value) + ("" if value >= 1e6 else " ns")


# -- the answer: the opening of a scenario in every view -----------------------


def answer(
    report: schema.Report, scenario: str, x: str = "×", dash: str = "–"
) -> tuple[str, list[str]]:
    """A heading and one sentence per call and runtime: the hardware verdict
    with its CI where the run has an A/B, else each row's time against the
    fastest row doing the same work (sign and verify apart), with its CI.
    Names are short (Erlang crypto:macN); the tables name the calls in full."""
    vs = [v for v in report.verdicts if v.scenario == scenario]
    if vs:
        return _verdict_answer(report, scenario, vs, x, dash)
    return _comparison_answer(report, scenario, x, dash)


def _verdict_answer(report, scenario, vs, x, dash) -> tuple[str, list[str]]:
    unit = units.unit(report, scenario)
    features = list(dict.fromkeys(v.feature for v in vs))
    groups: dict[tuple[str, str, str], list[schema.HwVerdict]] = defaultdict(list)
    for v in vs:
        groups[(v.runtime, v.call_id, v.feature)].append(v)
    sizes = {r.size for r in report.results if r.scenario == scenario}
    if len(features) == 1:
        head = f"Answer: hw off = {words.feature(features[0])} masked from process start"
    else:
        head = "Answer: hw off = the feature masked from process start"
    lines, said = [], set()
    for (runtime, call_id, feature), group in groups.items():
        group = sorted(group, key=lambda v: v.size)
        top = group[-1]
        row = _row_of(report, scenario, runtime, call_id)
        who = common.short_who(report, runtime, row) if row else f"{runtime} {call_id}"
        name = words.feature_short(feature)
        at = f" at {units.short(top.size, unit)}" if len(sizes) > 1 else ""
        line = who + _verdict_phrase(top, name, x, dash, at, len(features) == 1, unit=unit)
        rest = [v for v in group[:-1] if v.speedup is not None]
        if rest:
            others = ", ".join(
                f"{v.speedup:.2f}{x} at {units.short(v.size, unit)}" + _other_why(v, top)
                for v in rest
            )
            line += f"; {others}"
        if top.why is not None and top.speedup is not None:  # after every size's figure
            line += f"; {_said_once(top.why, said, unit, x)}"
        lines.append(line)
    return head + ":", lines


def _said_once(why, said: set, unit: str, x: str) -> str:
    """A reason in full the first time an answer gives it (four rows on one
    library without assembler), then briefly."""
    full = words.why_not(why, unit, x)
    if full in said:
        return f"{words.why_not(why, brief=True)}, as above"
    said.add(full)
    return full


def _other_why(v: schema.HwVerdict, top: schema.HwVerdict) -> str:
    """ " (too small to show)": a smaller size's reason, briefly, where it is
    not the one the line already gives."""
    if v.why is None or (top.why is not None and top.why.reason is v.why.reason):
        return ""
    return f" ({words.why_not(v.why, brief=True)})"


def _verdict_phrase(
    v: schema.HwVerdict, name: str, x: str, dash: str, at: str, named: bool, *, unit: str
) -> str:
    """' uses SHA extensions: 1.26× slower without (CI 1.1–1.4)', and the
    like for the other verdicts (the feature left to the heading when it
    `named` the only one), and why a path does not use it when that is
    all it says; the CI of one openssl run each is none."""
    of = ":" if named else f", {name}:"
    if v.speedup is None:  # the reason replaces the stored one; with figures, the line ends with it
        what = words.verdict_reason(v, unit, x)
        return f"{of} {v.verdict}" + (f": {what}" if what else "")
    ci = v.speedup_ci95
    if ci is None or abs(ci[1] - ci[0]) < 1e-9:
        spread = "one run each, no CI"
    else:
        spread = f"CI {ci[0]:.2f}{dash}{ci[1]:.2f}"
    ratio = f"{v.speedup:.2f}{x}"
    if v.verdict == "used":
        return f" uses {name}: {ratio} slower without{at} ({spread})"
    if v.verdict == "not-used":
        noise = ", within noise" if words.within_noise(v.speedup_ci95) else ""
        return f" does not use {name}: {ratio}{at}{noise} ({spread})"
    why = words.verdict_reason(v, unit, x) if v.verdict == "inconclusive" else ""
    return f"{of} {v.verdict}, {ratio} without{at} ({spread})" + (f": {why}" if why else "")


def _row_of(report, scenario, runtime, call_id) -> schema.Result | None:
    for r in report.results:
        if r.scenario == scenario and r.runtime == runtime and r.call_id == call_id:
            return r
    return None


def _comparison_answer(report, scenario, x, dash) -> tuple[str, list[str]]:
    """Each row at the largest size (hw on) against the fastest doing the
    same work: set-ups and parts of calls are left to the table."""
    ratio = ratios.Ratios(report)
    rows = [
        r
        for r in report.results
        if r.scenario == scenario
        and r.ok
        and not r.hw.masked
        and not calls.is_part(report.kind_of(r.runtime), r.call_id)
        and calls.role(report.kind_of(r.runtime), r.call_id) != "setup"
    ]
    if not rows:
        return "", []
    size = max(r.size for r in rows)
    rows = [r for r in rows if r.size == size]
    roles = {calls.role(report.kind_of(r.runtime), r.call_id) for r in rows}
    unit = units.unit(report, scenario)
    swept = len({r.size for r in report.results if r.scenario == scenario}) > 1
    where = f" at {units.short(size, unit)}" if size and swept else ""
    apart = " (sign and verify apart)" if len(roles) > 1 else ""
    # Two OTPs (or openssl builds): each against the first named of its kind.
    versions = any(ratio.get(ratios.FIRST, r) for r in rows)
    against = "the first named of its kind" if versions else "the fastest"
    head = f"Answer: time per call{where} against {against}{apart}"

    def key(r: schema.Result):
        role = calls.role(report.kind_of(r.runtime), r.call_id)
        return (sorted(roles).index(role), r.median())

    lines = []
    for r in sorted(rows, key=key):
        who = common.short_who(report, r.runtime, r)
        role = calls.role(report.kind_of(r.runtime), r.call_id)
        took = _ns(r.median())
        first = ratio.get(ratios.FIRST, r)
        if first is not None:
            said = words.difference(first, x, dash)
            times = f"{first.ratio:.2f}{x}"
            lines.append(f"{who}: {took}, {times} {first.baseline_runtime}{said[len(times) :]}")
            continue
        if versions and report.kind_of(r.runtime) in ratio.kinds:
            lines.append(f"{who}: {took} (the first named)")
            continue
        d = ratio.get(ratios.FASTEST, r)
        if d is None:
            best = f"fastest {role}" if role else "fastest"
            lines.append(f"{who}: {took}, the {best}" if len(rows) > 1 else f"{who}: {took}")
            continue
        # The fastest is the line above (rows sorted by role, then time).
        said = words.difference(d, x, dash)
        times = f"{d.ratio:.2f}{x}"
        lines.append(f"{who}: {took}, {times} the fastest{said[len(times) :]}")
    return head + ":", lines
