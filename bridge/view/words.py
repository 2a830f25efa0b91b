"""The one place that words what analysis found (bridge.report.findings):
each reason as one short clause, with what to do where it withholds a
verdict; a hardware verdict's phrase and figure; a difference's significance;
an upgrade line; the noise and machine caveats; sizes.

Pure functions of records: every format words a finding the same way, and a
stored sentence (reports from before the reasons) is shown only where a
finding has no reason codes. Statistical names (Ashman's D, Spearman's z,
"twins", the report's own keys) are said only `verbose`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from bridge.catalog import vocab
from bridge.catalog.vocab import RuntimeKind
from bridge.report import schema, whynot
from bridge.report.findings import (
    Change,
    Reason,
    Rerun,
    Significance,
    Verdict,
    Why,
)
from bridge.report.whynot import Clue, Sign, Source, WhyNot
from bridge.view import home

BYTES, ITERATIONS, PER_CALL = "bytes", "iterations", "per call"

# -- sizes ----------------------------------------------------------------------


def size_text(n: int, unit: str = BYTES) -> str:
    """16 bytes, 1 KiB, 64 MiB: the unit a reader would say. Sizes that are
    not bytes are counted: 1,024 iterations. A fixed-size operation's size is
    the message it signs: a 64-byte message."""
    if unit == PER_CALL:
        return f"{n}-byte message"
    if unit != BYTES:
        return f"{n:,} {unit}"
    for name, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {name}"
    return f"{n} bytes"


def short(n: int, unit: str = BYTES) -> str:
    """The form lists of sizes use: 16 B, 1 KiB; 1,024 iterations."""
    text = size_text(n, unit)
    return text.replace(" bytes", " B") if unit == BYTES else text


def at(n: int, unit: str = BYTES, several: bool = False, brief: bool = False) -> str:
    """Where a cell is, for a sentence: "at 16 KiB", "at 1,024 iterations"
    ("at 16 B" `brief`, for lists); a fixed-size operation is timed "per
    call" (naming its message only when the scenario ran several: "per
    call, 64-byte message")."""
    if unit == PER_CALL:
        return f"per call, {size_text(n, unit)}" if several else "per call"
    return f"at {short(n, unit) if brief else size_text(n, unit)}"


# -- names ----------------------------------------------------------------------


def feature(name: str) -> str:
    """A feature as a reader knows it ("SHA extensions (SHA-NI / ARMv8 SHA)");
    features masked together ("aes+pclmul") as one, saying so."""
    parts = [vocab.FEATURE_NAMES.get(f, f) for f in name.split("+")]
    if len(parts) == 1:
        return parts[0]
    return " and ".join(p.split(" (")[0] for p in parts) + " (masked together)"


def who(kind: str, call: str) -> str:
    """A call named with its runtime kind: "Erlang crypto:hash(...)"; an
    openssl call already reads "openssl speed ..."."""
    return call if kind == RuntimeKind.OPENSSL else f"{vocab.KIND_NAMES.get(kind, kind)} {call}"


def _plural(n: int, what: str) -> str:
    if n == 1:
        return f"{n} {what}"
    return f"{n} {what}es" if what.endswith("s") else f"{n} {what}s"


def _cell(p: Mapping[str, Any]) -> str:
    """A cell named in a finding: "erlang@25.2.3 macN at 16 B (hw on)"."""
    return f"{p['runtime']} {p['call_id']} {at(p['size'], p['unit'], brief=True)} (hw {p['hw']})"


def _calls(calls: Iterable[Sequence[Any]]) -> str:
    return "; ".join(f"{rt} {cid} (hw {', '.join(hws)})" for rt, cid, hws in calls)


def _busiest(procs: Iterable[Sequence[Any]], brackets: bool = False) -> str:
    if brackets:
        return ", ".join(f"{name} (pid {pid}, {cpu:.0%})" for name, pid, cpu in procs)
    return ", ".join(f"{name} pid {pid} {cpu:.0%}" for name, pid, cpu in procs)


# -- reasons ----------------------------------------------------------------------

QUIETER = "rerun on a quieter machine"
NOISY_ADVICE = (
    "run again on a quieter machine, pin bridge to its quietest CPU (taskset -c N"
    " crypto-bridge run ...; crypto-bridge env measures each CPU), or add --until-stable"
)


def _needs(p: Mapping[str, Any]) -> str:
    return f"a verdict needs its CI above {p['needs']:.2f}×"


def _two_speeds(p: Mapping[str, Any]) -> str:
    run, other = ("unmasked", "masked") if p["side"] == "on" else ("masked", "unmasked")
    return (
        f"the machine ran at two speeds ({run} run: {p['low_share']:.0%} of the samples near"
        f" {p['low_ns']:,.0f} ns, the rest near {p['high_ns']:,.0f} ns) and the {other} run's"
        " samples sit at the slow one: the ratio is the machine's, not the feature's"
    )


def _fixed_cost(p: Mapping[str, Any], v: bool) -> str:
    text = (
        "at this size most of a call is fixed cost (set-up, call overhead),"
        " which the feature does not speed up"
    )
    if p["best_size"]:
        text += f"; the gain shows at {size_text(p['best_size'])}: {p['best_speedup']:.2f}×"
    elif p["example"] is not None:
        example = f" (e.g. {p['example']})" if p["example"] else ""
        text += f"; it shows on larger messages{example}"
    return text


def _twin_gap(p: Mapping[str, Any], v: bool) -> str:
    where = f"{p['call_id']} in {p['scenario']} {at(p['size'], p['unit'])}"
    runs = "twins" if v else "two processes"
    return (
        f"the same {runs} ran the masked side at least {p['gap']:.2f}× faster elsewhere"
        f" ({where}), which no mask can cause: they differ by that much for another reason"
    )


def _others_busy(p: Mapping[str, Any], v: bool) -> str:
    text = f"other processes used {p['others_cpus']:.1f} of {p['cpus']} CPUs during the run"
    if p["load"] is not None:
        text += f" (load average {p['load']:.1f})"
    if p["busy_count"]:
        shares = ", ".join(f"{cpu:.0%}" for cpu in p["shares"])
        text += f"; {p['busy_count']} of them over 10% of a CPU, the busiest at {shares}"
    return text + ": they share the CPUs and caches with the measurement"


def _cells_two_speeds(p: Mapping[str, Any], v: bool) -> str:
    figures = (
        f": a fast and a slow level {p['gap_lo']:.2f}-{p['gap_hi']:.2f}× apart, the fast one"
        f" {p['fast_lo']:.0%}-{p['fast_hi']:.0%} of the samples"
        if p["gap_hi"]
        else ""
    )
    drift = ""
    if p["drifting"]:
        z = f" (Spearman |z| {p['z_lo']:.1f}-{p['z_hi']:.1f})" if v else ""
        drift = f"; in {p['drifting']} cells the level also drifted within the run{z}"
    runs = "the twins" if v else "the masked and unmasked runs"
    return (
        f"two speeds in {p['cells']} cells ({_calls(p['calls'])}){figures}{drift}: the host (a busy"
        " sibling thread or a frequency state), not the code; the median of such a cell"
        " depends on the share of its samples each level caught, and a rerun can land"
        f" elsewhere; hardware verdicts compare {runs} round by round, at the same speed"
    )


def _cell_two_speeds(p: Mapping[str, Any], v: bool) -> str:
    ratio = p["high_ns"] / p["low_ns"] if p["low_ns"] else 0.0
    text = (
        f"{_cell(p)}: two speeds: {p['low_share']:.0%} of the samples near {p['low_ns']:,.0f} ns,"
        f" {1 - p['low_share']:.0%} near {p['high_ns']:,.0f} ns ({ratio:.2f}×)"
    )
    return text + (f" (Ashman's D {p['d']:.1f})" if v else "")


def _cell_by_process(p: Mapping[str, Any], v: bool) -> str:
    count = _COUNTS.get(p["processes"], str(p["processes"]))
    return (
        f"{_cell(p)}: this cell depends on the process: {p['spread']:.1%} between {count}"
        f" processes ({p['share']:.0%} of its median's variance; the CI covers it,"
        " --processes N spreads it over more)"
    )


_COUNTS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def _cell_by_cpu(p: Mapping[str, Any], v: bool) -> str:
    cpus = ", ".join(f"CPU {cpu} {ns:,.0f} ns ({n})" for cpu, ns, n in p["cpus"])
    return f"{_cell(p)}: samples differ by CPU: {cpus}"


def _implausible(p: Mapping[str, Any], v: bool) -> str:
    unit = p["unit"]
    one = unit[:-1] if unit.endswith("s") else unit
    cell = f"{p['runtime']} {p['call_id']} (hw {p['hw']}) at {p['size']:,} {unit}"
    return (
        f"{cell}: {_ns3(p['per_unit'])} ns per {one}, {p['ratio']:.2f}× the line's"
        f" {_ns3(p['b'])}: not a linear cost; load or a frequency step moved this cell"
    )


def _span(lo: float, hi: float) -> str:
    """Two shares as a range, or one where they read the same: "68%-76%", "77%"."""
    return f"{lo:.0%}" if f"{lo:.0%}" == f"{hi:.0%}" else f"{lo:.0%}-{hi:.0%}"


def _ns3(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _unequal(p: Mapping[str, Any], v: bool) -> str:
    busier = p["busier"]
    who_ = f"{busier} ran on a busier machine" if busier else "the machines were busy, unequally"
    return f"{who_}: the load alone can make this difference"


# -- judged on CPU time (issue 35) ----------------------------------------------
# One clause for every figure judged on CPU time per call instead of wall time
# (a hardware verdict, a difference between runtimes): what switches it is a
# run that waited for a CPU, which a quiet machine's Erlang node can do too,
# so it does not say the machine was busy. Between reports taken under
# unequal load (compare), the cause is the busier report instead.
JUDGED_ON_CPU = "judged on CPU time: a run waited for a CPU"


def _cpu_basis(p: Mapping[str, Any], v: bool) -> str:
    """Why a verdict's figures are CPU time, and the margin it needed: the
    gap of the unmasked call's own processes where that set it."""
    waits = " (a wait stretches wall time, not CPU time)" if v else ""
    own = ""
    if p["aa"] is not None and p["aa"] > p["floor"]:
        own = f"; the call's own processes read {p['aa']:.2f}× apart"
    return f"{JUDGED_ON_CPU}{waits}{own}: {_needs(p)}"


def _load_cpu(p: Mapping[str, Any]) -> str:
    busier = p["busier"]
    who_ = f"{busier} ran on a busier machine" if busier else "the machines were busy, unequally"
    return f"judged on CPU time: {who_}"


def on_cpu_time(v: schema.HwVerdict) -> str:
    """The reason clause of a verdict judged on CPU time that withheld
    nothing (a `used`, a `not-used`): "" for one judged on wall time."""
    basis = next((r for r in v.reasons if r.why is Why.CPU_BASIS), None)
    if basis is None:
        return ""
    if v.verdict is Verdict.USED:  # the margin it cleared, briefly
        return f"{JUDGED_ON_CPU} (CI above {basis['needs']:.2f}×)"
    return _cpu_basis(basis.params, False)


# Why -> (its clause, from the parameters and `verbose`; what to do, "" for nothing).
_Words = Callable[[Mapping[str, Any], bool], str]
WORDS: dict[Why, tuple[_Words, str]] = {
    Why.BUSY_MACHINE: (
        lambda p, v: (
            f"the machine was busy (other processes used {p['others_cpus']:.1f} of"
            f" {p['cpus']} CPUs): {_needs(p)}"
        ),
        QUIETER,
    ),
    Why.BUSY_HOST: (
        lambda p, v: (
            f"the host was busy (the hypervisor gave {p['steal']:.0%} of the CPU time to"
            f" other guests{' (steal)' if v else ''}): {_needs(p)}"
        ),
        QUIETER,
    ),
    Why.TWIN_WAITED: (
        lambda p, v: (
            f"{'a twin' if v else 'a run'} waited for a CPU {p['share']:.0%} of its"
            f" sample time: {_needs(p)}"
        ),
        QUIETER,
    ),
    Why.TWINS_WAITED_APART: (
        lambda p, v: (
            f"the {'twins' if v else 'masked and unmasked runs'} waited for a CPU"
            f" {p['points']:.0f} points apart, which can move the ratio by itself: {_needs(p)}"
        ),
        QUIETER,
    ),
    Why.FEW_PROCESS_PAIRS: (
        lambda p, v: (
            f"with {_plural(p['pairs'], 'process')} a side the CI cannot see how much"
            f" two processes of one call differ: {_needs(p)}"
        ),
        "rerun with more processes",
    ),
    Why.ROUNDS_DISAGREE: (
        lambda p, v: (
            f"only {p['agree']} of {p['rounds']} interleaved rounds agree: the"
            " machine's speed moved during the run"
        ),
        QUIETER,
    ),
    Why.TWO_SPEEDS: (lambda p, v: _two_speeds(p), QUIETER),
    Why.TOO_FEW_SAMPLES: (
        lambda p, v: f"{_plural(p['have'], p['what'])} a side: a CI needs {p['need']}",
        "rerun with more samples",
    ),
    # The CI itself stands beside the verdict (its figure).
    Why.WITHIN_NOISE: (
        lambda p, v: f"the CI reaches both sides of the {p['margin']:.2f}× a verdict needs",
        "rerun with more rounds",
    ),
    Why.MASKED_FASTER: (
        lambda p, v: (
            f"the masked run was faster ({p['ratio']:.2f}×, CI {p['lo']:.2f}–"
            f"{p['hi']:.2f}), which no mask can cause: the machine's speed changed between the"
            " two runs"
        ),
        QUIETER,
    ),
    Why.SAMPLES_EQUAL: (
        lambda p, v: "the samples of a side are all equal, so there is no CI",
        "rerun with more samples",
    ),
    Why.WAITED: (
        lambda p, v: (
            f"the {'unmasked' if p['side'] == 'on' else 'masked'} run's samples took"
            f" {p['stretch']:.1f}× their planned {p['sample_ms']:g} ms even at best: it waited for"
            " a CPU, so its time per call is not the call's cost"
        ),
        QUIETER,
    ),
    Why.TWIN_GAP: (_twin_gap, QUIETER),
    Why.CPU_SHORT: (
        lambda p, v: (
            f"a twin waited for a CPU, and by CPU time per call the masked run is"
            f" {p['cpu']:.2f}× (CI {p['cpu_lo']:.2f}–{p['cpu_hi']:.2f}), short of the"
            f" {p['needs']:.2f}× a busy machine needs: the wall-time gain is the wait's"
        ),
        QUIETER,
    ),
    # -- judged on CPU time (issue 35) --
    Why.CPU_BASIS: (lambda p, v: _cpu_basis(p, v), ""),
    Why.LOAD_CPU: (lambda p, v: _load_cpu(p), ""),
    Why.FIXED_COST: (_fixed_cost, ""),
    Why.ROUNDS_LEFT_OUT: (
        lambda p, v: (
            f"{p['left_out']} of {p['rounds']} rounds left out: a run waited for a CPU"
            " in them, more than in its other rounds"
        ),
        "",
    ),
    Why.UNKNOWN_FEATURE: (lambda p, v: "bridge does not know this feature on this CPU", ""),
    Why.MASK_NO_EFFECT: (lambda p, v: "the mask did not take effect", ""),
    Why.NO_MEASUREMENT: (lambda p, v: "a side of the comparison has no measurement", ""),
    Why.LIBRARY_UNKNOWN: (
        lambda p, v: "the crypto library's version is unknown, so no mask can be written for it",
        "",
    ),
    Why.FOREIGN_LIBRARY: (
        lambda p, v: f"{p['library']} does not read OpenSSL's capability variables the same way",
        "",
    ),
    Why.OLD_LEAF7: (
        lambda p, v: (
            f"OpenSSL {p['version']} reads only EBX of CPUID leaf 7, so"
            f" {', '.join(p['features'])} cannot be masked"
        ),
        "",
    ),
    Why.ZEROES_LEAF7: (
        lambda p, v: (
            "OpenSSL 1.0.2 zeroes every leaf-7 feature (AVX2, SHA, BMI...) whenever"
            " OPENSSL_ia32cap is set, so one feature cannot be switched off alone"
        ),
        "",
    ),
    Why.ARMCAP_UNKNOWN: (
        lambda p, v: "OPENSSL_armcap replaces the detected value, which is unknown here",
        "",
    ),
    Why.NO_MASK_FOR_ARCH: (lambda p, v: f"no capability mask is known for {p['arch']}", ""),
    Why.NO_MASK_BIT: (
        lambda p, v: f"no {p['variable']} bit for {', '.join(p['features'])}",
        "",
    ),
    Why.FEW_ROUNDS: (
        lambda p, v: (
            f"{_plural(p['rounds'], 'round')} with samples on both sides: telling a"
            f" difference from drift needs {p['need']}"
        ),
        "rerun with more rounds",
    ),
    Why.NO_SAMPLES: (lambda p, v: "as posted: no samples to tell", ""),
    Why.UNEQUAL_LOAD: (_unequal, "rerun both on equally quiet machines"),
    Why.OTHERS_BUSY: (_others_busy, ""),
    Why.STEAL: (
        lambda p, v: (
            f"the hypervisor gave {p['steal']:.0%} of this machine's CPU time to other"
            " guests (steal): numbers are slower and spread wider than on a quiet host; pinning"
            " does not help against that"
        ),
        "",
    ),
    Why.GOVERNOR: (
        lambda p, v: (
            f"CPU frequency governor '{p['governor']}': the clock changes with load, so"
            " the numbers can drift; 'performance' holds it steady"
        ),
        "",
    ),
    Why.SMT: (
        lambda p, v: (
            "SMT: CPUs "
            + "; ".join(",".join(map(str, g)) for g in p["siblings"])
            + " share a core, so a busy process on a sibling slows the measured runtime"
        ),
        "",
    ),
    Why.CELL_TWO_SPEEDS: (_cell_two_speeds, ""),
    Why.CELL_DRIFT: (
        lambda p, v: (
            f"{_cell(p)}: drifting samples: the level moved {p['shift']:+.1%} from the"
            " first third of the samples to the last"
            + (f" (Spearman z {p['z']:+.1f})" if v else "")
        ),
        "",
    ),
    Why.CELL_BY_PROCESS: (_cell_by_process, ""),
    Why.CELLS_TWO_SPEEDS: (_cells_two_speeds, ""),
    Why.CELLS_DRIFT: (
        lambda p, v: (
            f"drifting samples in {p['cells']} cells ({_calls(p['calls'])}): the level"
            " moved between the first and the last third of the samples"
            + (f" (Spearman |z| {p['z_lo']:.1f}-{p['z_hi']:.1f})" if v else "")
        ),
        "",
    ),
    Why.CELLS_BY_PROCESS: (
        lambda p, v: (
            f"{p['cells']} cells depend on the process ({_calls(p['calls'])}): the CI"
            " covers it" + ("; see noise.cells in the report" if v else "")
        ),
        "",
    ),
    Why.CELL_WAITED: (
        lambda p, v: (
            f"{_cell(p)} waited for a CPU {p['share']:.0%} of its sample windows:"
            " another process held the CPU, so its wall figure is not the cost of the call"
            " (its CPU time per call is in the report)"
        ),
        "",
    ),
    Why.CELLS_WAITED: (
        lambda p, v: (
            f"{p['runtime']} waited for a CPU {_span(p['lo'], p['hi'])} of its sample"
            f" windows in {p['cells']} cells: another process held the CPU, so those wall figures"
            " are not the cost of the calls (their CPU time per call is in the report)"
        ),
        "",
    ),
    Why.CELL_BY_CPU: (_cell_by_cpu, ""),
    Why.IMPLAUSIBLE_COST: (_implausible, ""),
    Why.NOISY_RUN: (lambda p, v: NOISY_ADVICE, ""),
    Why.OVERSUBSCRIBED: (
        lambda p, v: (
            f"level {', '.join(map(str, p['levels']))} exceeds the {p['cpus']} CPUs"
            " bridge may use: those cells are oversubscribed (the workers take turns on the CPUs,"
            " so they cannot scale)"
        ),
        "",
    ),
    Why.SMT_LEVELS: (
        lambda p, v: (
            f"{p['siblings']} hardware threads share each core (SMT): a level above"
            f" the {p['cores']} physical cores shares execution units"
        ),
        "",
    ),
    Why.SCHEDULERS_OVER: (
        lambda p, v: f"--schedulers {p['schedulers']} is more than the {p['cpus']} CPUs",
        "",
    ),
    Why.BUSY_START: (
        lambda p, v: (
            f"the machine was busy: load average {p['load']:.2f} on {p['cpus']} CPUs"
            " when the run started; other work competes with every level"
        ),
        "",
    ),
    Why.AUTOGROUP: (
        lambda p, v: (
            "Linux autogroup is on, and on a busy machine it shares the CPU between"
            " sessions before processes: each Python worker process runs in a session of its own"
            " and gets a share of its own, while an Erlang node's schedulers, Python's threads"
            " and openssl -multi's children share one. Scaling is then not like for like across"
            " modes; compare them on an idle machine"
        ),
        "",
    ),
    Why.WINDOWS_DROPPED: (
        lambda p, v: (
            f"{p['runtime']} {p['call_id']} ({p['mode']}) at {p['size']} B, level"
            f" {p['level']}: {p['dropped']} of {p['windows']} windows dropped (a worker missed a"
            " whole window)"
        ),
        "",
    ),
    Why.OTHER_LIBRARY: (
        lambda p, v: (
            f"{p['runtime']} uses {p['theirs'] or 'an unknown library'}, not this"
            f" runtime's {p['ours'] or 'unknown library'}: no prepared call on the same library"
            " to subtract"
        ),
        "",
    ),
    Why.UNSUPPORTED: (lambda p, v: str(p["reason"]), ""),
    Why.NOTHING_TO_SUBTRACT: (lambda p, v: "no call to set it against", ""),
    Why.QUIET_ENOUGH: (
        lambda p, v: "quiet enough: the default run should give CIs within ±2%",
        "",
    ),
    Why.PIN_CPU: (
        lambda p, v: (
            f"pin bridge to CPU {p['cpu']}, the quietest here: taskset -c {p['cpu']}"
            " crypto-bridge run ... (the workers inherit it)"
        ),
        "",
    ),
    Why.UNTIL_STABLE: (
        lambda p, v: (
            "add --until-stable: bridge keeps sampling each cell until its 95% CI is"
            " within ±2% (or --max-time passes), and marks the cells that never get there"
        ),
        "",
    ),
    Why.BUSY_MEANWHILE: (
        lambda p, v: f"busy meanwhile: {_busiest(p['busiest'], brackets=True)}",
        "",
    ),
}


def clause(r: Reason, verbose: bool = False) -> str:
    """What a reason says, without what to do."""
    if r.why in _WHY_NOT:  # a path's record, as a Reason
        return why_not(whynot.KINDS[r.why](**r.params))
    words, _ = WORDS[r.why]
    return words(r.params, verbose)


def reason(r: Reason, verbose: bool = False) -> str:
    """One short clause: the reason and, where it withholds a verdict, what
    to do: "the machine was busy (...): a verdict needs its CI above 2.00×;
    rerun on a quieter machine"."""
    todo = _todo(r)
    text = clause(r, verbose)
    return f"{text}; {todo}" if todo else text


def rerun(x: Rerun) -> str:
    """What to do, from a Rerun: "rerun without --quick", "rerun with
    --openssl-runs 3", "rerun on a quieter machine"."""
    if not x.option:
        return QUIETER
    if x.option.startswith("without "):
        return f"rerun {x.option}"
    return f"rerun with {x.option}"


def reasons(rs: Sequence[Reason], todo: Rerun | None = None, verbose: bool = False) -> str:
    """Several reasons in one clause, then what to do once: the Rerun's
    when there is one, else the first reason's that says what to do."""
    if not rs:
        return rerun(todo) if todo is not None else ""
    said = "; ".join(clause(r, verbose) for r in rs)
    if todo is not None:
        return f"{said}; {rerun(todo)}"
    advice = next((a for r in rs if (a := _todo(r))), "")
    return f"{said}; {advice}" if advice else said


def _todo(r: Reason) -> str:
    """What a reason says to do, "" for nothing (a path's record says it itself)."""
    if r.why is Why.TOO_FEW_SAMPLES and r["what"] == "openssl run":
        return f"rerun with --openssl-runs {r['need']}"
    return WORDS[r.why][1] if r.why in WORDS else ""


# -- why a path does not use the hardware (bridge.report.whynot) -----------------

_FROM = {
    Source.VERSION_A: "openssl version -a",
    Source.LIBRARY: "OpenSSL_version()",
    Source.FILE: "its file",
    Source.CPUINFO: "/proc/cpuinfo",
}
# Python's own paths, named by their route when no type was reported.
_ROUTES = {
    "hashlib": "hashlib's built-in code",
    "hmac": "Python's hmac over hashlib",
    "kernel": "the kernel's generator",
    "own": "the runtime's own code",
}
# The reasons in a few words, where a line already names the call and size.
_BRIEF = {
    Why.CPU_LACKS: "the CPU lacks it",
    Why.ENV_MASKS: "masked by the environment",
    Why.NO_ASM: "a library without assembler",
    Why.NO_CAPVECTOR: "a library without a capability vector",
    Why.BYPASSES_EVP: "a path around OpenSSL",
    Why.TOO_SMALL: "too small to show",
    Why.NONE_FOUND: "no reason found",
}


def why_not(why: WhyNot, unit: str = BYTES, x: str = "×", brief: bool = False) -> str:
    """Why a path does not use the feature, and what to do next, as a clause:
    "... does not use X: 1.00×; <this>". `x`: the times sign ("x" where the
    view is ASCII); `brief`: the reason in a few words, nothing to do."""
    if brief:
        return _BRIEF[why.reason]
    return _WHY_NOT[why.reason](why.params(), unit, x)


def _library_name(library: str) -> str:
    # The home directory as ~, as bridge env shows it: a pasted line need not name the user.
    return home.tilde(library) if library else "the libcrypto"


def _short_version(version: str) -> str:
    """OpenSSL 3.5.7, without the date."""
    return " ".join(version.split()[:2])


def _evidence(clues: Sequence[Clue]) -> str:
    """What the clues say, each once, with the sources that said it:
    "CPUINFO: N/A from openssl version -a and OpenSSL_version()"."""
    said: dict[str, list[str]] = {}
    for c in clues:
        if c.sign is Sign.NO_ASM_CODE:
            what = "no assembler module in its file"
        elif c.sign is Sign.NO_ASM_DEFINE:
            what = "no assembler module on its compiler line"
        else:
            what = c.text
        sources = said.setdefault(what, [])
        if c.source is not Source.FILE:
            sources.append(_FROM[c.source])
    return "; ".join(
        f"{what} from {' and '.join(dict.fromkeys(sources))}" if sources else what
        for what, sources in said.items()
    )


def _cpu_lacks(p: Mapping[str, Any]) -> str:
    if p["seen_by"] is Source.CPUINFO:
        return "the CPU does not offer it (/proc/cpuinfo lists no such flag)"
    return (
        "the library does not detect it on this CPU (its capability vector, read"
        f" with no mask set, lacks it: {_FROM[p['seen_by']]})"
    )


_WhyNotWords = Callable[[Mapping[str, Any], str, str], str]
_WHY_NOT: dict[Why, _WhyNotWords] = {
    Why.CPU_LACKS: lambda p, unit, x: _cpu_lacks(p),
    Why.ENV_MASKS: lambda p, unit, x: (
        f"{p['variable']}={p['value']} was set before bridge"
        " started and masks it; unset it to measure the hardware"
    ),
    Why.NO_ASM: lambda p, unit, x: (
        f"{_library_name(p['library'])} ({_short_version(p['version'])}) was built"
        f" without assembler ({_evidence(p['evidence'])}):"
        " it runs C code whatever the CPU offers; a build with assembler, as distributions ship,"
        " would use it"
    ),
    Why.NO_CAPVECTOR: lambda p, unit, x: (
        f"{_library_name(p['library'])}"
        f" ({_short_version(p['version'])}) has no capability vector ({_evidence(p['evidence'])}):"
        " it cannot detect CPU features"
    ),
    Why.BYPASSES_EVP: lambda p, unit, x: (
        f"the call runs {_ROUTES.get(p['api'], p['api'])}, which does not reach OpenSSL's assembler"
    ),
    Why.TOO_SMALL: lambda p, unit, x: (
        f"at {size_text(p['size'], unit)} the feature's share of"
        f" a call is too small to show; at {size_text(p['shows_at'], unit)} masking it is"
        f" {p['speedup']:.2f}{x} slower"
    ),
    Why.NONE_FOUND: lambda p, unit, x: (
        "no reason found: the library has assembler and"
        f" detects the feature, and no size up to {size_text(p['largest'], unit)} showed it; try"
        " a larger --sizes, or a call that goes through EVP"
    ),
}


# -- hardware verdicts ---------------------------------------------------------


def bound(b: float, marks: Iterable[float] = ()) -> str:
    """A CI's bound to 2 decimals, or as many more (up to 4) as keep it
    from reading as a mark printed beside it (a verdict's margin, at 2
    decimals): a CI from 1.047 beside "the 1.05× a verdict needs" reads
    "1.047", not "1.05", which would contradict the words."""
    shown = [(float(f"{m:.2f}"), m) for m in marks]

    def reads_as_a_mark(text: str) -> bool:
        return any(float(text) == printed and b != m for printed, m in shown)

    d = 2
    while d < 4 and reads_as_a_mark(f"{b:.{d}f}"):
        d += 1
    return f"{b:.{d}f}"


def ci_text(lo: float, hi: float, marks: Iterable[float] = (), dash: str = "–") -> str:
    """'CI 1.13–1.26', each bound kept off the marks (bound)."""
    marks = tuple(marks)
    return f"CI {bound(lo, marks)}{dash}{bound(hi, marks)}"


def verdict_marks(v: schema.HwVerdict) -> tuple[float, ...]:
    """The figures a verdict's words print beside its CI: its margin."""
    return (v.margin,) if v.margin is not None else ()


def margins(rs: Iterable[Reason]) -> tuple[float, ...]:
    """The margins a difference's reasons print beside its CI."""
    return tuple(m for r in rs if (m := _needs_of(r)) is not None)


def verdict_figure(v: schema.HwVerdict, unit: str = BYTES, x: str = "×", dash: str = "–") -> str:
    """The slow-down masked with its CI: "1.18× slower without it (CI
    1.13–1.26)"; "" for a verdict without numbers."""
    if v.speedup is None:
        return ""
    c = v.speedup_ci95
    ci = f" ({ci_text(c[0], c[1], verdict_marks(v), dash)})" if c else ""
    if v.speedup >= 1:
        return f"{v.speedup:.2f}{x} slower without it{ci}"
    return f"{v.speedup:.2f}{x} without it, faster{ci}"


def verdict_reason(
    v: schema.HwVerdict, unit: str = BYTES, x: str = "×", verbose: bool = False
) -> str:
    """Why, in one clause with what to do: why the path does not use the
    feature (`why`) and the reasons; a report from before them, its stored
    sentence's part after the verdict."""
    said = [why_not(v.why, unit, x)] if v.why is not None else []
    if v.reasons:
        said.append(reasons(v.reasons, v.rerun, verbose))
    if said:
        return "; ".join(said)
    if v.explanation and v.verdict not in (Verdict.USED, Verdict.NOT_USED):
        # "Erlang crypto:hash(...), SHA: inconclusive at 1 KiB: <why>"
        rest = v.explanation.split(str(v.verdict), 1)[-1].lstrip(": ")
        if rest.startswith(("at ", "per call")):
            rest = rest.partition(": ")[2]
        return rest.strip()
    return ""


def explanation(v: schema.HwVerdict, name: str, unit: str = BYTES, several: bool = False) -> str:
    """One line a mailing-list reader understands: `name` is the call with its
    runtime ("Erlang crypto:hash(...)"), `unit` what the sizes count. A
    report from before the reasons: its stored sentence."""
    if not v.reasons and v.explanation:  # a report from before the reasons
        return _stored(v, unit)
    where = at(v.size, unit, several)
    full = feature(v.feature)
    why = verdict_reason(v, unit)
    if v.verdict == Verdict.USED:
        text = f"{name} uses {full}: {v.speedup:.2f}× slower without it {where}"
        return f"{text}; {why}" if why else text
    if v.verdict == Verdict.NOT_USED:
        if v.speedup is None:
            text = f"{name} does not use {full} {where}"
        else:
            noise = ", within noise" if within_noise(v.speedup_ci95) else ""
            text = f"{name} does not use {full}: {v.speedup:.2f}× {where}{noise}"
        return f"{text}; {why}" if why else text
    if v.verdict == Verdict.INCONCLUSIVE:
        figure = verdict_figure(v, unit)
        figure = f"{figure}; " if figure else ""
        return f"{name}, {full}: inconclusive {where}: {figure}{why}"
    return f"{name}, {full}: {str(v.verdict)}: {why}"


# A speedup this close to 1 either way is noise (bridge.hw.verdicts.MARGIN).
NOISE_BAND = 0.05


def within_noise(ci95: tuple[float, float] | None) -> bool:
    """Does a speedup's CI lie inside the noise band? A not-used decided by
    the library (bridge.hw.whynot) keeps figures that need not."""
    return ci95 is not None and ci95[0] >= 1 - NOISE_BAND and ci95[1] <= 1 + NOISE_BAND


def _stored(v: schema.HwVerdict, unit: str) -> str:
    """A stored sentence, with why the path does not use the feature where
    the verdict says (it replaces the stored reason of a verdict without
    numbers)."""
    text = v.explanation or ""
    if v.why is None:
        return text
    said = why_not(v.why, unit)
    head, sep, _ = text.partition(f": {str(v.verdict)}: ")
    if v.speedup is None and sep:
        return f"{head}{sep}{said}"
    return f"{text}; {said}"


# -- differences ----------------------------------------------------------------

# -- comparisons judged on paired rounds' CPU time (issue 35, i35-pair) --------
# A difference whose rounds were judged on CPU time per call (Difference.basis)
# says so in its reason clause (JUDGED_ON_CPU, as a hardware verdict does).


def _on_cpu(d: Any, said: tuple[str, str]) -> tuple[str, str]:
    """`said` (a difference's reason and what to do) with its basis first,
    where it was judged on CPU time."""
    if getattr(d, "basis", None) != "cpu":
        return said
    reason, todo = said
    return (f"{JUDGED_ON_CPU}; {reason}" if reason else JUDGED_ON_CPU), todo


# -- the upgrade view -----------------------------------------------------------


def upgrade_sides(u: schema.Upgrade) -> tuple[str, str]:
    """(new, old) in words: the versions, or the runtime ids where the
    versions read the same (a --libcrypto copy of the same release)."""
    if u.new_version == u.old_version:
        return u.new, u.old
    return u.new_version, u.old_version


def _per_call(u: schema.Upgrade) -> str:
    da = abs(u.delta_a_ns or 0.0)
    ci = (
        f" (95% CI {_signed(u.delta_a_ci95[0])} to {_signed(u.delta_a_ci95[1])})"
        if u.delta_a_ci95
        else ""
    )
    more_or_less = "more" if (u.delta_a_ns or 0.0) >= 0 else "less"
    return {
        Change.MORE: f"{_ns(da)} ns more per call{ci}",
        Change.LESS: f"{_ns(da)} ns less per call{ci}",
        Change.UNEQUAL_LOAD: f"{_ns(da)} ns {more_or_less} per call (which the unequal load can"
        " explain)",
        Change.SAME: f"the same per call within noise ({_signed(u.delta_a_ns or 0.0)} ns"
        + (f", {ci.strip(' ()')})" if ci else ")"),
        Change.UNKNOWN: "an amount per call the sizes cannot tell",
    }[u.per_call]


def _per_byte(u: schema.Upgrade, x: str) -> str:
    rb = u.b_ratio or 0.0
    return {
        Change.MORE: f"{(rb - 1) * 100:.0f}% more per byte ({rb:.2f}{x})",
        Change.LESS: f"{(1 - rb) * 100:.0f}% less per byte ({rb:.2f}{x})",
        Change.SAME: f"the same per byte ({rb:.2f}{x})",
        Change.UNKNOWN: "an amount per byte the sizes cannot tell",
        Change.UNEQUAL_LOAD: f"{rb:.2f}{x} per byte (which the unequal load can explain)",
    }[u.per_byte]


def _ns(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.1f}"


def _signed(value: float) -> str:
    return ("+" if value >= 0 else "-") + _ns(abs(value))


# Said once per view, and only for byte-oriented scenarios: a fixed-size
# operation has no per-byte part to split off.
SPLIT_HINT = (
    "Give --sizes 16,16384 to split a difference between versions into per call and per byte."
)


# -- the machine ----------------------------------------------------------------


def noise_lines(block: schema.Noise, verbose: bool = False) -> list[str]:
    """What the machine and the cells did, one line each, without what to
    do (`noise_advice`); a report from before the findings: its warnings."""
    if not block.findings:
        return list(block.warnings or ())
    said = [r for r in block.findings if r.why is not Why.NOISY_RUN]
    if verbose:
        return [clause(r, verbose) for r in said]
    # Warnings of one kind about several cells are one line with a count.
    out: list[str] = []
    for r in said:
        kind = [x for x in said if x.why is r.why]
        if r.why not in _CELL_KINDS or len(kind) == 1:
            out.append(clause(r, verbose))
        elif r is kind[0]:
            cells = ", ".join(_cell(x.params) for x in kind[:3])
            more = f" and {len(kind) - 3} more" if len(kind) > 3 else ""
            out.append(f"{_CELL_KINDS[r.why]} in {len(kind)} cells ({cells}{more}); -v says each")
    return out


# A finding about one cell, said of several at once (noise_lines).
_CELL_KINDS = {
    Why.CELL_BY_CPU: "samples differ by CPU",
    Why.CELL_TWO_SPEEDS: "two speeds",
    Why.CELL_DRIFT: "drifting samples",
    Why.CELL_BY_PROCESS: "the figure depends on the process",
    Why.CELL_WAITED: "waited for a CPU a share of the sample windows",
    Why.IMPLAUSIBLE_COST: "a cost off its fit's line",
}


def concurrency_lines(block: Any, verbose: bool = False) -> list[str]:
    """What a reader must see of the levels (bridge.report.levels.Concurrency),
    one line each; a report from before the findings: its warnings."""
    if not block.findings:
        return list(block.warnings or ())
    return [clause(r, verbose) for r in block.findings]


def schedulers_set(n: int) -> str:
    """--schedulers N, said beside what the Erlang processes share: a level's
    scaling is bounded by the schedulers the node had."""
    return f"the node started with +S {n}:{n} (--schedulers {n})"


def noise_advice(block: schema.Noise) -> str:
    """What to do about a noisy run, "" when it was not."""
    if not block.findings:
        return block.advice or ""
    return NOISY_ADVICE if any(r.why is Why.NOISY_RUN for r in block.findings) else ""


def fit_lines(fits: Sequence[schema.CostFit]) -> list[str]:
    """The sizes off their fit's line in reports from before the figures
    (their words); newer reports say them among the noise findings."""
    return [text for f in fits if not f.off_line for text in f.implausible]


def conditions(c: Any) -> str:
    """What a report recorded of its machine (bridge.report.comparison.Conditions)."""
    parts = []
    if c.load is not None:
        parts.append(f"load {c.load:.1f}")
    if c.others_cpus is not None:
        parts.append(f"other processes {c.others_cpus:.1f} CPUs")
    if c.steal is not None:
        parts.append(f"steal {c.steal:.0%}")
    if c.wait is not None:
        parts.append(f"waiting for a CPU {c.wait:.0%}")
    return ", ".join(parts) or "nothing recorded"


def cost_lines(
    block: schema.CpuTime | None, scenario: str | None = None, x: str = "×"
) -> list[str]:
    """The cost paragraph: per byte-oriented cell (hw as found), cycles per
    byte and the share of the machine's best, and CPU time where it differs
    from wall time. One paragraph per scenario (`scenario`'s alone if given)."""
    if block is None:
        return []
    out = []
    scenarios: dict[str, list[schema.CellCost]] = {}
    for c in block.cells:
        if scenario is not None and c.scenario != scenario:
            continue
        if not c.hw.masked and (c.cycles_per_byte is not None or c.of_best is not None):
            scenarios.setdefault(c.scenario, []).append(c)
    for name, cells in scenarios.items():
        parts = []
        for c in cells:
            bits = []
            if c.cycles_per_byte is not None:
                bits.append(f"{c.cycles_per_byte:.2f} cycles/B")
            if c.user_ns is not None and block.tsc_hz and c.size:
                # What `openssl speed` prints without -elapsed: its user CPU time.
                bits.append(f"(user CPU {c.user_ns * block.tsc_hz / 1e9 / c.size:.2f})")
            if c.of_best is not None:
                bits.append(f"{c.of_best:.2f}{x} the best")
            parts.append(f"{c.runtime} {c.call_id} {c.size} B {' '.join(bits)}")
        limits = ", ".join(
            f"{lim.algorithm} {lim.bytes_per_s / 1e6:,.0f} MB/s" for lim in block.limits
        )
        rate = (
            f"TSC {block.tsc_hz / 1e9:.3f} GHz ({block.tsc_source})" if block.tsc_hz else "no TSC"
        )
        best = f"; the best: openssl speed -evp at 16 KiB, {limits}" if limits else ""
        out.append(f"Cost of {name} ({rate}{best}): " + "; ".join(parts) + ".")
    return out


def warning_lines(report: schema.Report, verbose: bool = False) -> list[str]:
    """What the machine, the cells and the fits said (noise_lines, fit_lines):
    the warnings printed beside JSON, which has no prose."""
    if report.noise is None:
        return []
    return noise_lines(report.noise, verbose) + fit_lines(report.fits)


def library(build: Any, found: WhyNot | None) -> str:
    """What a runtime's libcrypto says about its build (bridge env): why no
    mask can change what it runs (`found`, bridge.hw.whynot.library), or
    what says it has assembler."""
    if found is not None:
        return why_not(found)
    said = []
    for sign, shown in (
        (Sign.ASM_CODE, "{} assembler modules in its file"),
        (Sign.ASM_FLAG, "{} on its compiler line"),
        (Sign.CAPVECTOR, "capability vector {}"),
    ):
        said += [shown.format(c.text) for c in build.has(sign)[:1]]
    return f"{build.file or 'libcrypto'}: {', '.join(said) or 'nothing could be read'}"


# -- an answer line's reason and what to do, apart ------------------------------
# An answer line (bridge.view.model.AnswerLine) shows why a verdict was
# withheld and what would settle it in two places: these give the two.


def verdict_why(v: schema.HwVerdict, unit: str = BYTES, verbose: bool = False) -> tuple[str, str]:
    """A hardware verdict's reason and rerun: why the path does not use the
    feature, else its reasons and the Rerun that would settle it; a report
    from before the reasons, the tail of its stored sentence."""
    if v.why is not None:
        return why_not(v.why, unit), ""
    if v.reasons or v.rerun is not None:
        # What was left out is said in full (-v, explanation), not as a reason.
        rs = [r for r in v.reasons if verbose or r.why is not Why.ROUNDS_LEFT_OUT]
        said = "; ".join(_needs_once([clause(r, verbose) for r in rs], rs))
        if v.rerun is not None:
            return said, rerun(v.rerun)
        return said, next((a for r in rs if (a := _todo(r))), "")
    if v.verdict in (Verdict.USED, Verdict.NOT_USED):
        return "", ""
    return _stored_why(v)


def _needs_of(r: Reason) -> float | None:
    """The CI a reason says a verdict needs: its `needs`, or the margin a
    CI within noise reached both sides of (judged on CPU time: the same)."""
    if "needs" in r.params:
        return r["needs"]
    return r["margin"] if r.why is Why.WITHIN_NOISE else None


def _needs_once(said: list[str], rs: Sequence[Reason]) -> list[str]:
    """Reasons that need the same margin say it once, after the last of them:
    "the machine was busy (...); the host was busy (...): a verdict needs its
    CI above 2.00×"."""
    out = list(said)
    for i, r in enumerate(rs):
        tail = f": {_needs(r.params)}" if "needs" in r.params else ""
        later = any(_needs_of(x) == r["needs"] for x in rs[i + 1 :] if _needs_of(x) is not None)
        if tail and later and out[i].endswith(tail):
            out[i] = out[i].removesuffix(tail)
    return out


# A stored sentence's parts the answer line shows elsewhere: the figure, where
# the cell is, what rounds were left out.
_FIGURE = re.compile(r"^\d[\d.,]*× (?:slower|faster) masked(?: \([^)]*\))?,? (?:but )?")
_WHERE = re.compile(r"^ (?:at [^:]*|per call[^:]*)")
_LEFT_OUT = re.compile(
    r" \((?:\d+ of \d+ rounds? left out|the twins)[^()]*(?:\([^()]*\)[^()]*)*\)$"
)


def _stored_why(v: schema.HwVerdict) -> tuple[str, str]:
    """The reason and rerun in a report from before the reasons: the part of
    its sentence after the verdict ("..., SHA: inconclusive at 1 KiB: <why>;
    rerun ...")."""
    text = v.explanation or ""
    head = f": {v.verdict}"
    i = text.find(head)
    if i < 0:
        return _split_rerun(text)
    rest = _WHERE.sub("", text[i + len(head) :], count=1)
    rest = rest.removeprefix(": ").removeprefix(":")
    rest = _LEFT_OUT.sub("", rest.strip())
    return _split_rerun(_FIGURE.sub("", rest))


def _split_rerun(text: str) -> tuple[str, str]:
    text = text.strip().rstrip(".")
    for sep in ("; rerun ", ": rerun "):
        if sep in text:
            said, todo = text.split(sep, 1)
            return said.strip(), "rerun " + todo.strip()
    if text.endswith(", or a quieter machine"):
        return text.removesuffix(", or a quieter machine"), QUIETER
    if f"; {QUIETER}" in text:
        return text.replace(f"; {QUIETER}", ""), QUIETER
    return text, ""


def difference_why(d: Any, quick: bool = False) -> tuple[str, str]:
    """Why a difference between two cells (a schema.Difference, or a row of
    bridge compare) is not called, or what makes its CI lopsided, and what
    to do: a run too short (`quick`: the run was --quick, which is what to
    drop) is rerun longer; first, where it was judged on CPU time, that. A
    report from before the reasons: from its verdict and note."""
    return _on_cpu(d, _difference_why(d, quick))


def _difference_why(d: Any, quick: bool) -> tuple[str, str]:
    rs = tuple(getattr(d, "reasons", ()))
    if any(r.why is Why.FEW_ROUNDS for r in rs) or (d.verdict == Significance.UNRESOLVED):
        todo = "rerun without --quick" if quick else "rerun with more --rounds"
        if rs:
            return "; ".join(clause(r) for r in rs), todo
        return "fewer than 3 rounds on both sides", todo
    if rs:
        return "; ".join(clause(r) for r in rs), next((a for r in rs if (a := _todo(r))), "")
    note = getattr(d, "note", "") or ""
    if d.verdict == Significance.UNKNOWN or d.ci95 is None:
        return (note or "as posted: no samples"), ""
    if note.endswith(": drift"):
        return "the interleaved rounds disagree (drift)", QUIETER
    return note, ""


def is_drift(d: Any) -> bool:
    """A difference whose CI clears the margin, called within noise because
    the interleaved rounds disagree (a report from before the reasons says so
    at the end of its note)."""
    if any(r.why is Why.ROUNDS_DISAGREE for r in getattr(d, "reasons", ())):
        return True
    return (getattr(d, "note", "") or "").endswith(": drift")


def upgrade_split(u: schema.Upgrade, name: str, x: str = "×") -> str:
    """Where a difference between two versions lives, per call and per byte
    (the cost model's a and b), with why the split has no CI or why the load
    can explain it: "Erlang crypto:hash: 25.2.3 costs 120 ns more per call
    (95% CI +80 to +160) and the same per byte (1.00×) against 23.2.6."""
    new, old = upgrade_sides(u)
    text = f"{name}: {new} costs {_per_call(u)} and {_per_byte(u, x)} against {old}"
    why = "; ".join(clause(r) for r in u.reasons if r.why is not Why.UNEQUAL_LOAD)
    if why:
        text += f" (the split has no CI: {why})"
    unequal = next((r for r in u.reasons if r.why is Why.UNEQUAL_LOAD), None)
    if unequal is not None:
        text += ". " + clause(unequal)[:1].upper() + clause(unequal)[1:]
    elif not u.reasons and u.note:  # a report from before the reasons
        text += f". Not significant on that basis: {u.note}"
    return text + "."


# -- problems ----------------------------------------------------------------

# The last lines a failed process wrote on stderr: a worker's own message or
# openssl's complaint is often the only place that says why it failed.
STDERR_LINES = 8


def skipped(s: schema.Skipped) -> str:
    asked = f" (asked for with {s.requested})" if s.requested else ""
    return f"Skipped {s.runtime}{asked}: {s.reason}"


def error(e: schema.RunError) -> str:
    """The error, and where its process's own last words follow (stderr_lines)."""
    return f"Error: {e.message}" + (". Its stderr ended:" if stderr_lines(e) else "")


def stderr_lines(e: schema.RunError) -> tuple[str, ...]:
    """A failed process's last lines on stderr, each as it wrote it (a
    traceback or openssl's complaint reads as lines, not joined into one)."""
    lines = [t.rstrip() for t in (e.stderr_tail or "").splitlines() if t.strip()]
    return tuple(lines[-STDERR_LINES:])


# -- pictures and the HTML page (issue 37: bridge.view.chart, bridge.render.html) --

CHART_TIME = "Time per call, ns (median, 95% CI)"
CHART_OFF_ON = "Masked over as found: hw off / hw on (95% CI; above 1, the feature helps)"
CHART_FIRST = "Each runtime over the first named of its kind (95% CI; below 1, faster)"
CHART_BASELINE = "Each runtime over the --baseline of its kind (95% CI; below 1, faster)"
CHART_COMPARED = "B/A: the time of {} over {} (95% CI; below 1, faster)"
# The headings the HTML page gives the parts the other writers set apart by layout.
PAGE_WHERE = "Where it ran"
PAGE_CAVEATS = "Caveats"
PAGE_PROBLEMS = "Problems"
PAGE_REPRODUCE = "Measure it again"
PAGE_CHARTS = "Pictures"
PAGE_REPLAY = (
    "The same run from its JSON report (-o or --export-json FILE), asking before it runs"
    " anything the report names: crypto-bridge run --replay FILE"
)


def series_label(runtime: str, call: str, hw: str = "", masked: bool = False) -> str:
    """A series' name in a picture's legend: 'erlang@25.2.3 crypto:macN, hw off'."""
    return f"{runtime} {call}" + (f", hw {hw}" if masked and hw else "")


# -- a table's marks and a table that mixes key set-ups (i34-rest) ---------------


def drift_mark(margin: float) -> str:
    """What a table's "drift" means, beside "sig = the CI clears ±3% ..."."""
    return f"drift = the CI clears ±{margin:.0%} but the rounds disagree: not a difference"


# The calls of a MAC table by how they set the key up, as a reader knows them.
KEY_CALLS = {
    "speed": "openssl speed -hmac",
    "hmac.new+copy": "hmac.new(key).copy()",
    "hmac.digest": "hmac.digest",
}


def not_like_for_like(once: Sequence[str], every: Sequence[str]) -> str:
    """A table whose calls set a MAC's key up once (`once`) and on every
    call (`every`), each named as the table's rows are: the ratio between
    them is not a speed difference."""
    verb = "sets" if len(once) == 1 else "set"
    return f"Not like for like: {_and(once)} {verb} the key up once, {_and(every)} on every call."


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
