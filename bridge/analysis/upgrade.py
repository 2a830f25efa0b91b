"""The upgrade view: two versions of one runtime kind on the same call, and
where the difference lives. Pure functions on report records.

"Did the upgrade make our crypto slower?" has a two-part answer. OpenSSL 3
costs more per call than 1.1.1 (fetches, providers, EVP_Q_mac) but not per
byte, so the same upgrade is 2x at 16 B and 1.0x at 16 KiB. The view lines up
new/old per size, fits the cost model (bridge.analysis.fits: ns per call = a + b*bytes)
to each version over the sizes both measured, and says how a and b moved:

    OTP 25.2.3 on OpenSSL 3.0.19 costs 640 ns more per call and the same per
    byte as OTP 23.2.6 on OpenSSL 1.1.1w: 1.45x at 16 B, 1.02x at 16 KiB.

Each size's new/old is the finding the report's table shows for the same two
cells (bridge.analysis.versus within a run, the rows of `bridge compare`
between reports), so a ratio and its significance read the same in a table
and a sentence. The split gets a bootstrap 95% CI from the raw samples (sizes
resampled independently, both lines refitted), and is called more or less
only when the CI clears the same 3% margin `bridge compare` uses; otherwise
it is the same, within noise. Two sizes are enough to split a call into a and
b (the line through two points); one size gives the ratio alone.

Within one run, the runtimes of a kind are compared with the oldest version
(the first named when versions tie, as a --libcrypto copy does); between two
reports (`bridge compare`), the n-th runtime of a kind in each, the first
report being the old side.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from bridge.analysis import fits, quietness, versus
from bridge.catalog.vocab import RuntimeKind
from bridge.report import provenance, schema
from bridge.report.comparison import Row
from bridge.report.findings import Change, Reason, Significance, Statistic, Why, reason
from bridge.report.hw import Hw

MARGIN = 0.03  # as bridge.analysis.compare: a difference must clear 3% to count
RESAMPLES = 400
# Fewer samples give no confidence interval for a median (bridge.stats.median_ci
# returns the whole range below 6 at 95%); a bootstrap of 3 would pretend one.
MIN_SAMPLES = 6
LIBRARY = re.compile(r"\b(OpenSSL|LibreSSL|BoringSSL|AWS-LC)\s+([0-9]+\.[0-9]+\.[0-9]+[a-z]*)")


# -- what a runtime is ------------------------------------------------------------


def _library(text: str) -> str:
    m = LIBRARY.search(text or "")
    return f"{m.group(1)} {m.group(2)}" if m else ""


def _parts(rt: schema.Runtime) -> tuple[str, str, str]:
    """(the runtime's own version, its library's, where that library is from
    when --libcrypto chose it): "OTP 25.2.3", "OpenSSL 3.0.19", ""."""
    d = rt.details
    other = d.libcrypto_dir
    lib = _library(other.version if other is not None else "")
    where = other.dir if other is not None else ""
    if isinstance(d, provenance.ErlangDetails):
        return (f"OTP {d.otp_version or rt.version}", lib or _library(d.crypto_lib), where)
    if isinstance(d, provenance.PythonDetails):
        return rt.version, lib or _library(d.ssl_openssl_version), where
    # `openssl version` says "(Library: ...)" when the CLI runs on another library.
    cli = _library(rt.version)
    lib = lib or _library(rt.version.partition("(Library:")[2]) or cli
    if not lib:
        label = d.label if isinstance(d, provenance.ImportedDetails) else ""
        return label or rt.version, "", where
    return (f"openssl {cli.split()[-1]} CLI" if cli and cli != lib else ""), lib, where


def version_label(rt: schema.Runtime) -> str:
    """What differs between two runtimes of a kind, in words:
    "OTP 25.2.3 on OpenSSL 3.0.19", "Python 3.11.7 on OpenSSL 3.0.19",
    "OpenSSL 3.0.19"; a --libcrypto runtime says where its library is from."""
    head, lib, where = _parts(rt)
    text = f"{head} on {lib}" if head and lib else head or lib
    return f"{text} from {where}" if where else text


def version_key(rt: schema.Runtime) -> tuple:
    """Older first: by the runtime's own version, then its library's (for
    openssl, the library's first); "1.1.1w" after "1.1.1"."""
    head, lib, _ = _parts(rt)
    order = (lib, head) if rt.kind == RuntimeKind.OPENSSL else (head, lib)
    return tuple(_numbers(text) for text in order)


def _numbers(text: str) -> tuple:
    m = re.search(r"([0-9]+(?:\.[0-9]+)*)([a-z]*)", text)
    if not m:
        return ()
    return (*(int(p) for p in m.group(1).split(".")), m.group(2))


# -- building the view ------------------------------------------------------------


def in_report(
    report: schema.Report, diffs: Sequence[schema.Difference] = ()
) -> list[schema.Upgrade]:
    """Every runtime of a kind against the oldest version of that kind in the
    same run, call by call, hw on (hw off when the run has only that); each
    size's ratio as `diffs` (the report's differences) has the same two cells."""
    out: list[schema.Upgrade] = []
    sizes = _InRun(report, diffs)
    for kind in dict.fromkeys(rt.kind for rt in report.runtimes):
        runtimes = [rt for rt in report.runtimes if rt.kind == kind and not rt.masked]
        if len(runtimes) < 2:
            continue
        # sorted() keeps the named order among equal versions.
        old, *others = sorted(runtimes, key=version_key)
        for new in others:
            if version_label(new) == version_label(old):
                continue  # the same installation by another path: not an upgrade
            out += _pairs(_Pair(report, old, report, new, old.id, new.id), sizes)
    return out


def between(
    a: schema.Report, b: schema.Report, labels: tuple[str, str], rows: Sequence[Row] = ()
) -> list[schema.Upgrade]:
    """The n-th runtime of each kind in `a` against the n-th in `b`, where
    their versions differ (what `bridge compare` pairs); each size's ratio as
    the comparison's `rows` have the same two cells."""
    out: list[schema.Upgrade] = []
    unequal = quietness.unequal(quietness.conditions(a), quietness.conditions(b))
    sizes = _Compared(rows)
    for kind in dict.fromkeys(rt.kind for rt in (*a.runtimes, *b.runtimes)):
        olds = [rt for rt in a.runtimes if rt.kind == kind and not rt.masked]
        news = [rt for rt in b.runtimes if rt.kind == kind and not rt.masked]
        for old, new in zip(olds, news, strict=False):
            if version_label(old) == version_label(new):
                continue
            names = (f"{labels[0]}: {old.id}", f"{labels[1]}: {new.id}")
            found = _pairs(_Pair(a, old, b, new, *names), sizes)
            out += [weigh_load(u, unequal) for u in found] if unequal else found
    return out


def weigh_load(u: schema.Upgrade, unequal: Reason) -> schema.Upgrade:
    """Two reports taken on differently loaded machines (quietness.unequal's
    UNEQUAL_LOAD, saying which was busier: A the old side, B the new, "" unsure):
    a "more" of the busier new side, or a "less" of a busier old side, is what
    the load alone can do, so it becomes "unequal load", with the reason."""
    busier = unequal["busier"]

    def weigh(direction: Change) -> Change:
        loaded = {Change.MORE: "B", Change.LESS: "A"}.get(direction)
        if loaded is None or (busier and busier != loaded):
            return direction
        return Change.UNEQUAL_LOAD

    return dataclasses.replace(
        u,
        per_call=weigh(u.per_call),
        per_byte=weigh(u.per_byte),
        reasons=(*u.reasons, unequal),
    )


@dataclass(frozen=True)
class _Pair:
    """Two runtimes of a kind, each in its report, and how they are named."""

    ra: schema.Report
    old: schema.Runtime
    rb: schema.Report
    new: schema.Runtime
    old_name: str
    new_name: str


class _InRun:
    """Each size's new/old within one run: the report's difference of the
    same two cells (either way round), or judged now as versus judges it."""

    def __init__(self, report: schema.Report, diffs: Sequence[schema.Difference]) -> None:
        self.report = report
        self.by = {
            (d.scenario, d.baseline_runtime, d.runtime, d.call_id, d.size, d.hw): d
            for d in diffs
            if d.call_id == d.baseline_call_id and d.against != versus.FASTEST
        }

    def size(self, o: schema.Result, n: schema.Result) -> schema.UpgradeSize:
        key = (o.scenario, o.call_id, o.size, o.hw)
        d = self.by.get((key[0], o.runtime, n.runtime, *key[1:]))
        if d is not None:
            return _step(o, n, d.ratio, d.ci95, d.verdict)
        d = self.by.get((key[0], n.runtime, o.runtime, *key[1:]))
        if d is not None:
            ci = None if d.ci95 is None else (1 / d.ci95[1], 1 / d.ci95[0])
            return _step(o, n, 1 / d.ratio, ci, _flipped(d.verdict))
        d = versus.judge_pair(self.report, o, n)
        return _step(o, n, d.ratio, d.ci95, d.verdict)


class _Compared:
    """Each size's new/old between two reports: the comparison's row of the
    same two cells (B/A of the 10th percentiles)."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.by = {(r.scenario, r.runtime_a, r.runtime_b, r.call_id, r.size): r for r in rows}

    def size(self, o: schema.Result, n: schema.Result) -> schema.UpgradeSize:
        row = self.by.get((o.scenario, o.runtime, n.runtime, o.call_id, o.size))
        if row is None:
            return _step(o, n, n.median() / o.median(), None, None)
        return _step(o, n, row.ratio, row.ci95, row.verdict, row.statistic)


def _step(o, n, ratio, ci, significance, statistic=Statistic.MEDIAN) -> schema.UpgradeSize:
    return schema.UpgradeSize(o.size, o.median(), n.median(), ratio, ci, significance, statistic)


def _flipped(s: Significance) -> Significance:
    return {Significance.FASTER: Significance.SLOWER, Significance.SLOWER: Significance.FASTER}.get(
        s, s
    )


def _pairs(p: _Pair, sizes: _InRun | _Compared) -> list[schema.Upgrade]:
    ra, old, rb, new = p.ra, p.old, p.rb, p.new
    olds = _by_call(ra, old.id)
    news = _by_call(rb, new.id)
    hws = {hw for (_, _, hw) in olds} & {hw for (_, _, hw) in news}
    # As found when both sides have it; else the one state they share.
    hw = Hw.ON if Hw.ON in hws else min(hws, default=None)
    out = []
    for key, by_size in olds.items():
        other = news.get(key)
        if key[2] != hw or not other:
            continue
        common = sorted(set(by_size) & set(other))
        if not common:
            continue
        olds_, news_ = [by_size[s] for s in common], [other[s] for s in common]
        steps = [sizes.size(o, n) for o, n in zip(olds_, news_, strict=True)]
        out.append(compute(olds_, news_, p, steps))
    return out


def _by_call(report: schema.Report, runtime_id: str) -> dict[tuple, dict[int, schema.Result]]:
    out: dict[tuple, dict[int, schema.Result]] = {}
    for r in report.results:
        if r.runtime == runtime_id and r.ok and r.per_op_ns():
            out.setdefault((r.scenario, r.call_id, r.hw), {})[r.size] = r
    return out


def compute(
    olds: Sequence[schema.Result],
    news: Sequence[schema.Result],
    pair: _Pair,
    steps: Sequence[schema.UpgradeSize],
    seed: int = 0,
) -> schema.Upgrade:
    """One call at the same sizes (in order) on two versions, with each
    size's new/old (`steps`) as the report's table has it."""
    head = {
        "scenario": olds[0].scenario,
        "kind": pair.old.kind,
        "call": news[0].call,
        "call_id": olds[0].call_id,
        "hw": olds[0].hw,
        "old": pair.old_name,
        "new": pair.new_name,
        "old_version": version_label(pair.old),
        "new_version": version_label(pair.new),
        "sizes": tuple(steps),
    }
    if len(steps) < 2:
        return schema.Upgrade(**head)
    # A CI of the split needs a spread: imported numbers have no samples, a
    # quick run few.
    fewest = min(len(r.samples) for r in (*olds, *news))
    sampled = fewest >= MIN_SAMPLES
    sizes = [s.size for s in steps]
    ao, bo = fits.theil_sen(sizes, [s.old_ns for s in steps])
    an, bn = fits.theil_sen(sizes, [s.new_ns for s in steps])
    b_ratio = bn / bo if bo > 0 and bn > 0 else None
    da_ci, rb_ci = _bootstrap(olds, news, sizes, seed) if sampled else (None, None)
    # "The same per call" within 3% of the old version's smallest call.
    margin = MARGIN * steps[0].old_ns
    return schema.Upgrade(
        **head,
        old_a_ns=ao,
        old_b_ns_per_byte=bo,
        new_a_ns=an,
        new_b_ns_per_byte=bn,
        delta_a_ns=an - ao,
        delta_a_ci95=da_ci,
        b_ratio=b_ratio,
        b_ratio_ci95=rb_ci,
        per_call=_direction(an - ao, da_ci, -margin, margin),
        per_byte=Change.UNKNOWN
        if b_ratio is None or (sampled and rb_ci is None)
        else _direction(b_ratio, rb_ci, 1 - MARGIN, 1 + MARGIN),
        reasons=() if sampled else (_no_ci(fewest, pair.old.kind),),
    )


def _no_ci(fewest: int, kind: str) -> Reason:
    """Why the split has no CI: no samples (imported), or too few."""
    if fewest == 0:
        return reason(Why.NO_SAMPLES)
    what = "openssl run" if kind == RuntimeKind.OPENSSL else "sample"
    return reason(Why.TOO_FEW_SAMPLES, what=what, have=fewest, need=MIN_SAMPLES)


def _direction(point: float, ci: tuple[float, float] | None, low: float, high: float) -> Change:
    """more | less | same: the CI (or, without samples, the point) against
    the noise band [low, high]."""
    lo, hi = ci if ci else (point, point)
    if lo > high:
        return Change.MORE
    if hi < low:
        return Change.LESS
    return Change.SAME


def _bootstrap(olds, news, sizes, seed):
    """95% CIs of a_new - a_old and b_new / b_old: each size's samples
    resampled, both lines refitted. The ratio's CI is None when b is not
    positive in more than 5% of the refits (a sweep too short or too noisy to
    say anything per byte)."""
    rng = random.Random(seed)
    xs_old = [r.per_op_ns() for r in olds]
    xs_new = [r.per_op_ns() for r in news]
    deltas, ratios = [], []
    for _ in range(RESAMPLES):
        mo = [statistics.median(rng.choices(x, k=len(x))) for x in xs_old]
        mn = [statistics.median(rng.choices(x, k=len(x))) for x in xs_new]
        ao, bo = fits.theil_sen(sizes, mo)
        an, bn = fits.theil_sen(sizes, mn)
        deltas.append(an - ao)
        if bo > 0 and bn > 0:
            ratios.append(bn / bo)
    da = _percentiles(deltas)
    rb = _percentiles(ratios) if len(ratios) >= 0.95 * RESAMPLES else None
    return da, rb


def _percentiles(values: list[float]) -> tuple[float, float]:
    xs = sorted(values)
    return xs[int(0.025 * (len(xs) - 1))], xs[int(math.ceil(0.975 * (len(xs) - 1)))]
