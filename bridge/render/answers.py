"""The answer a pasted view opens with (Markdown and the text view): one line
per call and runtime, saying what the thread asked: the hardware verdict with
the slow-down masked (hw off over hw on, its 95% CI), the time against the
first-named runtime of its kind (its CI and whether it is a difference), and
the time and ops/s at the largest size. Pure functions over a report.

`cells` pairs each hw-on cell with its masked twin, the row the pasted
table and the plots' ratio panel show (off/on with its CI)."""

from __future__ import annotations

from dataclasses import dataclass

from bridge import stats
from bridge.analysis import interop
from bridge.render import common, ratios, units
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.view import words

# Kinds whose calls move bytes through (a digest, a MAC, a cipher, random
# bytes): MB/s means something there, and nothing on a sign, verify, key
# agreement, key generation or a KDF's iterations.
THROUGHPUT_KINDS = frozenset({"hash", "file-digest", "mac", "cipher", "random"})


def letter(n: int) -> str:
    """a, b, ..., z, aa, ab, ...: how the text view labels its calls, "(a)",
    since [n] is a note on what a row measures in every view."""
    text = ""
    n += 1
    while n:
        n, rem = divmod(n - 1, 26)
        text = chr(ord("a") + rem) + text
    return text


def bytes_flow(report: schema.Report, scenario: str) -> bool:
    kind = report.scenario_kind(scenario)
    unit = units.unit(report, scenario)
    # A report without scenario data (an import) counts bytes, as it always did.
    return unit == units.BYTES and (not kind or kind in THROUGHPUT_KINDS)


@dataclass(frozen=True)
class Cell:
    """One call of one runtime at one size: the machine as found, its masked
    twin, and the twin's slow-down (off/on) with its 95% CI."""

    on: schema.Result | None
    off: schema.Result | None
    verdict: schema.HwVerdict | None

    @property
    def first(self) -> schema.Result:
        r = self.on or self.off
        assert r is not None
        return r

    def off_on(self) -> tuple[float, tuple[float, float] | None] | None:
        """hw off over hw on: the verdict's figure, else computed here."""
        v = self.verdict
        if v is not None and v.speedup is not None:
            return v.speedup, v.speedup_ci95
        on, off = self.on, self.off
        if on is None or off is None or not on.ok or not off.ok:
            return None
        if on.imported or off.imported or len(on.samples) < 2 or len(off.samples) < 2:
            m = on.median()
            return (off.median() / m, None) if m > 0 else None
        ratio, ci = stats.relative_ci(on.per_op_ns(), off.per_op_ns())
        return ratio, ci


def cells(report: schema.Report, results: list[schema.Result]) -> list[Cell]:
    """In the views' order (common.ordered), hw on and off of a call and size
    in one cell."""
    verdict_of = {(v.scenario, v.runtime, v.call_id, v.size): v for v in report.verdicts}
    grouped: dict[tuple, dict[Hw, schema.Result]] = {}
    for r in common.ordered(report, results):
        grouped.setdefault((r.scenario, r.runtime, r.call_id, r.size), {})[r.hw] = r
    return [Cell(by.get(Hw.ON), by.get(Hw.OFF), verdict_of.get(key)) for key, by in grouped.items()]


@dataclass(frozen=True)
class Answer:
    """One call of one runtime: who, the call's label, and what was found."""

    runtime: str
    call: str
    said: str


def answers(report: schema.Report, scenario: str, ascii_only: bool = False) -> list[Answer]:
    """One answer per call and runtime of a scenario."""
    x, dash = ("x", "-") if ascii_only else ("×", "–")
    results = [r for r in report.results if r.scenario == scenario]
    ratio = ratios.Ratios(report)
    unit = units.unit(report, scenario)
    calls: dict[tuple[str, str], list[Cell]] = {}
    for c in cells(report, results):
        calls.setdefault((c.first.runtime, c.first.call), []).append(c)
    out = []
    for (runtime, call), cs in calls.items():
        parts = [_time(cs, unit, x)]
        parts += _verdicts(cs, unit, x, dash)
        parts += _against_first(cs, ratio, unit, x, dash)
        out.append(Answer(runtime, call, "; ".join(p for p in parts if p) + "."))
    return out


def lines(report: schema.Report, scenario: str, ascii_only: bool = False) -> list[str]:
    """The answers as plain lines (the text view)."""
    return [f"{a.runtime} {a.call}: {a.said}" for a in answers(report, scenario, ascii_only)]


def _at(size: int, unit: str) -> str:
    return f" at {units.short(size, unit)}" if size else ""


def _time(cs: list[Cell], unit: str, x: str) -> str:
    ok = [c.first for c in cs if c.first.ok]
    if not ok:
        reasons = {c.first.reason for c in cs if not c.first.ok}
        return "unsupported (" + "; ".join(sorted(reasons)) + ")"
    r = max(ok, key=lambda r: r.size)
    s = r.summary()
    ops = 1e9 / s.median if s.median > 0 else 0.0
    hw = " (hw off)" if r.hw.masked else ""
    return f"{per_op(s.median)}, {si3(ops)} ops/s{_at(r.size, unit)}{hw}"


def si3(x: float) -> str:
    """Three significant figures: 741k, 2.06M, 79.2k (a column 5 wide)."""
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{prefix}"
    return f"{x:.3g}"


def per_op(ns: float) -> str:
    """A time per call with its unit: 265,993 ns/op, 1.16 ms/op."""
    return f"{ns / 1e6:,.2f} ms/op" if ns >= 1e6 else f"{common.fmt_ns(ns)} ns/op"


def _verdicts(cs: list[Cell], unit: str, x: str, dash: str) -> list[str]:
    """The hardware verdicts, by what they say: used at these sizes with the
    slow-down masked; inconclusive at those; and so on."""
    groups: dict[tuple[str, str], list[schema.HwVerdict]] = {}
    for c in cs:
        if c.verdict is not None:
            v = c.verdict
            groups.setdefault((v.feature, v.verdict), []).append(v)
    out = []
    for (feature, word), vs in groups.items():
        name = words.feature_short(feature)
        figures = ", ".join(_figure(v, unit, x, dash) for v in vs)
        masked = f"masked takes {figures}" if any(v.speedup is not None for v in vs) else ""
        # Why the path does not use it, once for the sizes that share a reason.
        why = "; ".join(dict.fromkeys(w for v in vs if (w := words.verdict_reason(v, unit, x))))
        if word == "used":
            out.append(f"uses {name}: {masked}")
        elif word == "not-used":
            out.append(f"does not use {name}: {masked}" + (f"; {why}" if why else ""))
        else:
            said = "; ".join(p for p in (masked, why) if p)
            out.append(f"{name}: {word}" + (f": {said}" if said else ""))
    return out


def _figure(v: schema.HwVerdict, unit: str, x: str, dash: str) -> str:
    if v.speedup is None:
        return _at(v.size, unit).strip()
    ci = f" (CI {v.speedup_ci95[0]:.2f}{dash}{v.speedup_ci95[1]:.2f})" if v.speedup_ci95 else ""
    return f"{v.speedup:.2f}{x}{ci}{_at(v.size, unit)}"


def _against_first(cs: list[Cell], ratio: ratios.Ratios, unit: str, x: str, dash: str) -> list[str]:
    """The time against the first-named runtime of the kind (hw on)."""
    ds = [d for c in cs if c.on is not None and (d := ratio.get(ratios.FIRST, c.on))]
    if not ds:
        return []
    base = ds[0].baseline_runtime
    each = ", ".join(f"{words.difference(d, x, dash)}{_at(d.size, unit)}" for d in ds)
    return [f"time against {base}: {each}"]


def outputs_line(report: schema.Report, scenario: str) -> str:
    """Did the runtimes compute the same bytes? One short line."""
    checks = [c for c in report.interop if c.scenario == scenario]
    if not checks:
        return ""
    if not all(c.match for c in checks):
        bad = sorted({m.text() for c in checks for m in c.mismatched})
        return f"OUTPUT MISMATCH: {', '.join(bad)} computed different bytes."
    checked = {k.runtime for c in checks for k, v in c.outputs.items() if v}
    unchecked = {k.runtime for c in checks for k in c.unchecked or ()} - checked
    n = len(checked)
    if not n:
        return ""
    if checks[0].reference_from == interop.FROM_EC:
        head = f"Outputs: the signatures of {n} runtime{'s' * (n != 1)} verify"
    else:
        head = f"Outputs: {n} runtime{'s' * (n != 1)} checked, all equal"
    tail = f" ({len(unchecked)} not checkable: see the ok column)" if unchecked else ""
    return head + tail + "."
