"""The upgrade view: two versions of one runtime kind on the same call, and
where the difference lives. Pure functions on report records.

"Did the upgrade make our crypto slower?" has a two-part answer. OpenSSL 3
costs more per call than 1.1.1 (fetches, providers, EVP_Q_mac) but not per
byte, so the same upgrade is 2x at 16 B and 1.0x at 16 KiB. The view lines up
new/old per size, fits the cost model (bridge.analysis.fits: ns per call = a + b*bytes)
to each version over the sizes both measured, and says how a and b moved:

    OTP 25.2.3 on OpenSSL 3.0.19 costs 640 ns more per call and the same per
    byte as OTP 23.2.6 on OpenSSL 1.1.1w: 1.45x at 16 B, 1.02x at 16 KiB.

Each difference gets a bootstrap 95% CI from the raw samples (sizes resampled
independently, both lines refitted), and is called more or less only when the
CI clears the same 3% margin `bridge compare` uses; otherwise it is the same,
within noise. Two sizes are enough to split a call into a and b (the line
through two points); one size gives the ratio alone.

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

from bridge import stats
from bridge.analysis import fits, quietness
from bridge.hw import verdicts
from bridge.report import schema
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
    other = d.get("libcrypto_dir") or {}
    lib = _library(other.get("version", ""))
    where = str(other.get("dir", ""))
    if rt.kind == "erlang":
        return (
            f"OTP {d.get('otp_version') or rt.version}",
            lib or _library(d.get("crypto_lib")),
            where,
        )
    if rt.kind == "python":
        return rt.version, lib or _library(d.get("ssl_openssl_version", "")), where
    # `openssl version` says "(Library: ...)" when the CLI runs on another library.
    cli = _library(rt.version)
    lib = lib or _library(rt.version.partition("(Library:")[2]) or cli
    if not lib:
        return str(d.get("label") or rt.version), "", where
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
    order = (lib, head) if rt.kind == "openssl" else (head, lib)
    return tuple(_numbers(text) for text in order)


def _numbers(text: str) -> tuple:
    m = re.search(r"([0-9]+(?:\.[0-9]+)*)([a-z]*)", text)
    if not m:
        return ()
    return (*(int(p) for p in m.group(1).split(".")), m.group(2))


# -- building the view ------------------------------------------------------------


def in_report(report: schema.Report) -> list[schema.Upgrade]:
    """Every runtime of a kind against the oldest version of that kind in the
    same run, call by call, hw on (hw off when the run has only that)."""
    out: list[schema.Upgrade] = []
    for kind in dict.fromkeys(rt.kind for rt in report.runtimes):
        runtimes = [rt for rt in report.runtimes if rt.kind == kind and not rt.masked]
        if len(runtimes) < 2:
            continue
        # sorted() keeps the named order among equal versions.
        old, *others = sorted(runtimes, key=version_key)
        for new in others:
            if version_label(new) == version_label(old):
                continue  # the same installation by another path: not an upgrade
            out += _pairs(report, old, report, new, old.id, new.id)
    return out


def between(a: schema.Report, b: schema.Report, label_a: str, label_b: str) -> list[schema.Upgrade]:
    """The n-th runtime of each kind in `a` against the n-th in `b`, where
    their versions differ (what `bridge compare` pairs)."""
    out: list[schema.Upgrade] = []
    load = _unequal_load(a, b)
    for kind in dict.fromkeys(rt.kind for rt in (*a.runtimes, *b.runtimes)):
        olds = [rt for rt in a.runtimes if rt.kind == kind and not rt.masked]
        news = [rt for rt in b.runtimes if rt.kind == kind and not rt.masked]
        for old, new in zip(olds, news, strict=False):
            if version_label(old) == version_label(new):
                continue
            found = _pairs(a, old, b, new, f"{label_a}: {old.id}", f"{label_b}: {new.id}")
            out += [weigh_load(u, *load) for u in found] if load[0] else found
    return out


def _unequal_load(a: schema.Report, b: schema.Report) -> tuple[str, int | None]:
    return quietness.unequal(quietness.conditions(a), quietness.conditions(b))


def weigh_load(u: schema.Upgrade, text: str, busier: int | None) -> schema.Upgrade:
    """Two reports taken on differently loaded machines (bridge.analysis.quietness.unequal;
    busier: 0 the old side, 1 the new, None unsure): a "more" of the busier
    new side, or a "less" of a busier old side, is what the load alone can
    do, so it becomes "unequal load"; the note says what differed."""

    def weigh(direction: str) -> str:
        loaded = {"more": 1, "less": 0}.get(direction)
        if loaded is None or (busier is not None and busier != loaded):
            return direction
        return UNEQUAL

    return dataclasses.replace(
        u,
        per_call=weigh(u.per_call),
        per_byte=weigh(u.per_byte),
        note=f"the machines differed ({text})",
    )


UNEQUAL = "unequal load"


def _pairs(ra, old, rb, new, old_name, new_name) -> list[schema.Upgrade]:
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
        out.append(
            compute(
                [by_size[s] for s in common],
                [other[s] for s in common],
                kind=old.kind,
                old_name=old_name,
                new_name=new_name,
                old_version=version_label(old),
                new_version=version_label(new),
            )
        )
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
    *,
    kind: str,
    old_name: str,
    new_name: str,
    old_version: str,
    new_version: str,
    seed: int = 0,
) -> schema.Upgrade:
    """One call at the same sizes (in order) on two versions."""
    # A CI needs a spread: imported numbers have no samples, a quick run few.
    sampled = all(len(r.samples) >= MIN_SAMPLES for r in (*olds, *news))
    steps = []
    for o, n in zip(olds, news, strict=True):
        mo, mn = o.median(), n.median()
        if sampled:
            ratio, ci = stats.relative_ci(o.per_op_ns(), n.per_op_ns(), resamples=1000, seed=seed)
        else:
            ratio, ci = mn / mo, None
        steps.append(schema.UpgradeSize(o.size, mo, mn, ratio, ci))
    view = schema.Upgrade(
        scenario=olds[0].scenario,
        kind=kind,
        call=news[0].call,
        call_id=olds[0].call_id,
        hw=olds[0].hw,
        old=old_name,
        new=new_name,
        old_version=old_version,
        new_version=new_version,
        sizes=tuple(steps),
    )
    if len(steps) < 2:
        return view
    sizes = [s.size for s in steps]
    ao, bo = fits.theil_sen(sizes, [s.old_ns for s in steps])
    an, bn = fits.theil_sen(sizes, [s.new_ns for s in steps])
    b_ratio = bn / bo if bo > 0 and bn > 0 else None
    da_ci, rb_ci = _bootstrap(olds, news, sizes, seed) if sampled else (None, None)
    # "The same per call" within 3% of the old version's smallest call.
    margin = MARGIN * steps[0].old_ns
    return schema.Upgrade(
        **{
            **view.__dict__,
            "old_a_ns": ao,
            "old_b_ns_per_byte": bo,
            "new_a_ns": an,
            "new_b_ns_per_byte": bn,
            "delta_a_ns": an - ao,
            "delta_a_ci95": da_ci,
            "b_ratio": b_ratio,
            "b_ratio_ci95": rb_ci,
            "per_call": _direction(an - ao, da_ci, -margin, margin),
            "per_byte": "unknown"
            if b_ratio is None or (sampled and rb_ci is None)
            else _direction(b_ratio, rb_ci, 1 - MARGIN, 1 + MARGIN),
        }
    )


def _direction(point: float, ci: tuple[float, float] | None, low: float, high: float) -> str:
    """more | less | same: the CI (or, without samples, the point) against
    the noise band [low, high]."""
    lo, hi = ci if ci else (point, point)
    if lo > high:
        return "more"
    if hi < low:
        return "less"
    return "same"


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


# -- in words ----------------------------------------------------------------------


# Said once per view (bridge.render.upgrade), and only for byte-oriented
# scenarios: a fixed-size operation has no per-byte part to split off.
SPLIT_HINT = (
    "Give --sizes 16,16384 to split a difference between versions into per call and per byte."
)


def size_text(n: int, unit: str = verdicts.BYTES) -> str:
    return verdicts.short(n, unit)


def who(u: schema.Upgrade) -> str:
    names = {"erlang": "Erlang", "python": "Python"}
    return f"{names[u.kind]} {u.call}" if u.kind in names else u.call


def sides(u: schema.Upgrade) -> tuple[str, str]:
    """(new, old) in words: the versions, or the runtime ids where the
    versions read the same (a --libcrypto copy of the same release)."""
    if u.new_version == u.old_version:
        return u.new, u.old
    return u.new_version, u.old_version


def sentence(u: schema.Upgrade, x: str = "×", unit: str = verdicts.BYTES) -> str:
    """One call's upgrade in words; `unit` what the scenario's sizes count
    (a fixed-size operation's ratio is per call)."""
    new, old = sides(u)
    ends = [u.sizes[0], u.sizes[-1]] if len(u.sizes) > 1 else [u.sizes[0]]
    several = len(u.sizes) > 1
    ratios = ", ".join(
        f"{s.ratio:.2f}{x} {verdicts.at(s.size, unit, several, brief=True)}" for s in ends
    )
    if u.delta_a_ns is None:
        one = " (one size)" if unit == verdicts.BYTES else ""
        return f"{who(u)}: {new} against {old}: {ratios}{one}."
    da = abs(u.delta_a_ns)
    ci = (
        f"95% CI {_signed(u.delta_a_ci95[0])} to {_signed(u.delta_a_ci95[1])}"
        if u.delta_a_ci95
        else ""
    )
    more_or_less = "more" if u.delta_a_ns >= 0 else "less"
    per_call = {
        "more": f"{_ns(da)} ns more per call" + (f" ({ci})" if ci else ""),
        "less": f"{_ns(da)} ns less per call" + (f" ({ci})" if ci else ""),
        UNEQUAL: f"{_ns(da)} ns {more_or_less} per call (which the unequal load can explain)",
        "same": f"the same per call within noise ({_signed(u.delta_a_ns)} ns"
        + (f", {ci})" if ci else ")"),
    }[u.per_call]
    rb = u.b_ratio or 0.0
    per_byte = {
        "more": f"{(rb - 1) * 100:.0f}% more per byte ({rb:.2f}{x})",
        "less": f"{(1 - rb) * 100:.0f}% less per byte ({rb:.2f}{x})",
        "same": f"the same per byte ({rb:.2f}{x})",
        "unknown": "an amount per byte the sizes cannot tell",
        UNEQUAL: f"{rb:.2f}{x} per byte (which the unequal load can explain)",
    }[u.per_byte]
    link = "as" if u.per_byte == "same" else "than"
    unknown = "" if u.delta_a_ci95 else " Too few samples for a CI: significance unknown."
    if u.note:
        unknown += f" Not significant on that basis: {u.note}."
    return f"{who(u)}: {new} costs {per_call} and {per_byte} {link} {old}: {ratios}.{unknown}"


def _ns(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.1f}"


def _signed(value: float) -> str:
    return ("+" if value >= 0 else "-") + _ns(abs(value))
