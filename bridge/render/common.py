"""Pieces shared by the renderers: grouping, number formats, provenance and
problem lines, and the semantics notes."""

from __future__ import annotations

from collections import defaultdict

import tabulate as tabulate_module
from tabulate import tabulate

from bridge import ab, calls, model, stats, verdicts, vocab
from bridge.render import units


def title(report: model.Report) -> str:
    if report.imported_from is not None:
        return f"bridge {report.bridge_version} · imported from {report.imported_from}"
    return f"bridge {report.bridge_version} · {report.created} · seed {report.seed}"


def by_scenario(report: model.Report) -> dict[str, list[model.Result]]:
    groups: dict[str, list[model.Result]] = defaultdict(list)
    for r in report.results:
        groups[r.scenario].append(r)
    return dict(groups)


def scenario_description(report: model.Report, name: str) -> str:
    return report.description(name)


def who(report: model.Report, runtime_id: str, call: str) -> str:
    """A call named with its runtime kind ("Erlang crypto:hash(...)")."""
    kind = report.kind_of(runtime_id)
    return call if kind == "openssl" else f"{vocab.KIND_NAMES.get(kind, kind)} {call}"


def ordered(report: model.Report, results: list[model.Result]) -> list[model.Result]:
    """The same call side by side: by runtime kind, call, size and hw, then
    runtime, so erlang@25 and erlang@27 rows of one call sit together."""

    def first_seen(key) -> dict:
        seen: dict = {}
        for r in results:
            seen.setdefault(key(r), len(seen))
        return seen

    def kind(r: model.Result) -> str:
        return report.kind_of(r.runtime)

    kinds = first_seen(kind)
    call_ids = first_seen(lambda r: (kind(r), r.call_id))
    runtimes = first_seen(lambda r: r.runtime)
    return sorted(
        results,
        key=lambda r: (
            kinds[kind(r)],
            call_ids[(kind(r), r.call_id)],
            r.size,
            r.hw != "on",
            runtimes[r.runtime],
        ),
    )


def versus_first(report: model.Report, results: list[model.Result]) -> dict[int, str]:
    """id(result) -> its median over the first-named runtime of its kind, for
    the same call, size and hw; empty when no kind has two runtimes."""
    firsts: dict[tuple, model.Result] = {}
    out: dict[int, str] = {}
    kinds_seen: dict[str, set[str]] = defaultdict(set)
    for r in results:
        kinds_seen[report.kind_of(r.runtime)].add(r.runtime)
    if all(len(ids) < 2 for ids in kinds_seen.values()):
        return {}
    for r in results:
        kind = report.kind_of(r.runtime)
        if not r.ok or len(kinds_seen[kind]) < 2:
            continue
        first = firsts.setdefault((kind, r.call_id, r.size, r.hw), r)
        out[id(r)] = f"{r.median() / first.median():.2f}×"
    return out


def verdict_lines(report: model.Report, scenario: str) -> list[str]:
    """One line per call and feature. A sweep whose sizes all say `used`
    becomes one line with the slow-down at each size; anything else keeps
    its per-size explanation."""
    groups: dict[tuple[str, str, str], list[model.HwVerdict]] = defaultdict(list)
    for v in report.verdicts:
        if v.scenario == scenario:
            groups[(v.runtime, v.call_id, v.feature)].append(v)
    if not groups:
        return []
    lines = ["", "Hardware verdicts (hw off = the feature masked from process start):"]
    unit = units.unit(report, scenario)
    for vs in groups.values():
        if len(vs) > 1 and all(v.verdict == "used" for v in vs):
            v0 = vs[0]
            head = f"{who(report, v0.runtime, v0.call)} uses {ab.feature_name(v0.feature)}"
            sizes = ", ".join(f"{v.speedup:.2f}× at {units.short(v.size, unit)}" for v in vs)
            lines.append(f"- {head}: slower without it by {sizes}")
        else:
            lines += [f"- {v.explanation}" for v in vs]
    return lines


def size_text(n: int) -> str:
    return verdicts.size_text(n)


def provenance_items(report: model.Report) -> list[str]:
    """Provenance as short items (CPU, OS, each runtime), for markdown and text."""
    env = report.environment
    items = []
    if env:
        virt = ", virtualized" if env.get("virtualized") else ""
        items.append(
            f"CPU: {env.get('cpu_model')} ({env.get('arch')}, {env.get('cpu_count')}"
            f" CPUs{virt}); flags: {' '.join(env.get('cpu_flags', []))}"
        )
        items.append(f"OS: {env.get('os')}, kernel {env.get('kernel')}")
    seen = set()
    for rt in report.runtimes:
        if rt.id in seen:
            continue
        seen.add(rt.id)
        items.append(f"{rt.id}: {runtime_summary(rt)}")
    for exp in report.hardware.experiments or ():
        if exp.mask:
            items.append(f"{exp.runtime} hw off: {exp.mask.variable}={exp.mask.value}")
    return items


def warning_lines(report: model.Report) -> list[str]:
    """Differences between runtimes that change what the numbers mean."""
    seen: dict[str, str] = {}
    for rt in report.runtimes:
        for path in rt.details.get("libcrypto_loaded", []):
            seen.setdefault(path, rt.id)
    lines = []
    if len(seen) > 1:
        where = ", ".join(f"{rid}: {path}" for path, rid in seen.items())
        lines.append(f"warning: runtimes load different libcrypto files ({where})")
    for rt in report.runtimes:
        if rt.kind == "python" and rt.details.get("hashlib_uses_openssl") is False:
            lines.append(f"warning: {rt.id} hashlib uses its built-in code, not OpenSSL")
        own = rt.details.get("cryptography_openssl_version")
        system = str(rt.details.get("ssl_openssl_version", ""))
        if rt.kind == "python" and not rt.masked and own and own.split()[:2] != system.split()[:2]:
            lines.append(
                f"warning: {rt.id} runs its cryptography rows (ciphers, signatures, key"
                f" agreement) on the {own} inside the cryptography package, not on the"
                f" system's {rt.details.get('ssl_openssl_version')}"
            )
    return [""] + lines if lines else []


def compare_key(report: model.Report, r: model.Result) -> tuple[int, str, str]:
    """Rows that "× fastest" compares: same size and hw; sign and verify apart."""
    return (r.size, r.hw, calls.role(report.kind_of(r.runtime), r.call_id))


class Fastest:
    """The fastest median per comparable group of rows (see compare_key)."""

    def __init__(self, report: model.Report, results: list[model.Result]) -> None:
        self.report = report
        self.best: dict[tuple[int, str, str], float] = {}
        for r in results:
            if r.ok:
                m, key = r.median(), compare_key(report, r)
                self.best[key] = min(self.best.get(key, m), m)

    def ratio(self, r: model.Result) -> float:
        return r.median() / self.best[compare_key(self.report, r)]


def fastest(report: model.Report, results: list[model.Result]) -> Fastest:
    return Fastest(report, results)


def match_by_result(report: model.Report) -> dict[int, str]:
    """id(result) -> 'yes' | 'NO' | 'unchecked', from the interop checks."""
    out = {}
    for check in report.interop:
        for r in report.results:
            if r.scenario == check.scenario and r.size == check.size and r.ok:
                if not r.output_hex:
                    out[id(r)] = "unchecked"
                else:
                    out[id(r)] = "NO" if r.key.output in check.mismatched else "yes"
    return out


def unsupported(results: list[model.Result]) -> tuple[dict[int, str], list[str]]:
    """A short mark per unsupported cell (id(result) -> "u1") and the notes
    that go under the table: a long reason cannot widen the table."""
    notes: dict[str, str] = {}
    marks = {}
    for r in results:
        if not r.ok:
            marks[id(r)] = notes.setdefault(f"{r.runtime}: {r.reason}", f"u{len(notes) + 1}")
    return marks, [f"[{mark}] unsupported on {text}" for text, mark in notes.items()]


def cells(
    r: model.Result, fastest: Fastest, match: dict, x: str = "×", unit: str = units.BYTES
) -> dict[str, str]:
    """The figures every renderer shows for an ok result, formatted once.
    MB/s only where sizes are bytes."""
    s = r.summary()
    ops = 1e9 / s.median
    return {
        "ns_ci": ns_with_ci(s, imported=r.imported),
        "median": fmt_ns(s.median),
        "ops": si(ops),
        "mbs": f"{ops * r.size / 1e6:,.1f}" if unit == units.BYTES else "–",
        "rel": f"{fastest.ratio(r):.2f}{x}",
        "ok": match.get(id(r), "–"),
    }


def ns_with_ci(s: stats.Summary, imported: bool = False) -> str:
    if imported:
        return f"{fmt_ns(s.median)} (as posted)"
    lo, hi = s.ci95
    return f"{fmt_ns(s.median)} ({fmt_ns(lo)}–{fmt_ns(hi)})"


def fmt_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:,.2f}ms"
    if ns >= 100:
        return f"{ns:,.0f}"
    return f"{ns:,.1f}"


def si(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:,.2f} {unit}"
    return f"{x:,.1f}"


def semantics_marks(results: list[model.Result]) -> dict[str, int]:
    marks: dict[str, int] = {}
    for r in results:
        marks.setdefault(r.semantics, len(marks) + 1)
    return marks


def semantics_warning(results: list[model.Result]) -> list[str]:
    """Say it beside the numbers when a table mixes per-call key setup with a
    reused key: the ratio between such rows is not a speed difference."""
    kinds = {r.semantics for r in results if r.ok}
    if calls.ONE_SHOT_MAC in kinds and (calls.SPEED_HMAC in kinds or calls.REUSED_KEY in kinds):
        return [
            "Not like for like: openssl speed -hmac (and hmac.new(key).copy()) set the key"
            " up once, while crypto:macN and hmac.digest set it up on every call. Compare"
            " one-shot rows with each other, and reused-key rows with each other."
        ]
    return []


def provenance_lines(report: model.Report) -> list[str]:
    env = report.environment
    if not env:  # an imported report: the runs say what they know
        return [f"{rt.id}: {runtime_summary(rt)}" for rt in report.runtimes]
    cpu = env.get("cpu_model", "unknown CPU")
    virt = ", virtualized" if env.get("virtualized") else ""
    lines = [
        f"CPU: {cpu} ({env.get('arch', '?')}, {env.get('cpu_count', '?')} CPUs{virt});"
        f" crypto flags: {' '.join(env.get('cpu_flags', [])) or 'none'}",
        f"OS: {env.get('os', '?')}, kernel {env.get('kernel', '?')}",
    ]
    for rt in report.runtimes:
        if not rt.masked:  # a masked twin has the same provenance
            lines.append(f"{rt.id}: {runtime_summary(rt)}")
    return lines


def runtime_summary(rt: model.Runtime) -> str:
    d = rt.details
    if rt.kind == "erlang":
        return (
            f"OTP {d.get('otp_version')}, erts {d.get('erts_version')}, {d.get('emu_flavor')},"
            f" crypto {d.get('crypto_app_version')}, crypto:info_lib(): {d.get('crypto_lib')}"
        )
    if rt.kind == "python":
        impl = "OpenSSL" if d.get("hashlib_uses_openssl") else "built-in (not OpenSSL)"
        own = d.get("cryptography_openssl_version")
        return (
            f"{rt.version} ({rt.executable}), ssl: {d.get('ssl_openssl_version')}, hashlib: {impl}"
            + (f", cryptography: {own}" if own else "")
        )
    if rt.kind == "openssl" and d.get("imported"):
        return d.get("label", rt.version)
    if rt.kind == "openssl":
        return f"{rt.version} ({rt.executable})"
    return rt.version


def problem_lines(report: model.Report) -> list[str]:
    lines = []
    for s in report.skipped:
        lines.append(f"skipped {s.runtime}: {s.reason}")
    for e in report.errors:
        lines.append(f"error: {e.message}")
        tail = (e.stderr_tail or "").strip()
        if tail:
            lines += ["  stderr tail:"] + [f"  | {t}" for t in tail.splitlines()[-8:]]
    return [""] + lines if lines else []


def simple_table(rows, headers, width: int | None = None, **kw) -> list[str]:
    """tabulate's "simple" table; when `width` is given and the table is wider,
    drop the padding tabulate adds around each header (MIN_PADDING), which
    costs two columns each that a 72-column email line does not have."""
    lines = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, **kw)
    if width is None or max(map(len, lines.splitlines()), default=0) <= width:
        return lines.splitlines()
    saved = tabulate_module.MIN_PADDING
    tabulate_module.MIN_PADDING = 0
    try:
        return tabulate(
            rows, headers=headers, tablefmt="simple", disable_numparse=True, **kw
        ).splitlines()
    finally:
        tabulate_module.MIN_PADDING = saved


def fit_lines(
    report: model.Report, scenario: str, short: bool = False, width: int | None = None
) -> list[str]:
    """The cost model under a sweep's table (short: call ids, for 72 columns)."""
    fs = [f for f in report.fits if f.scenario == scenario]
    if not fs:
        return []
    rows = []
    for f in fs:
        kind = report.kind_of(f.runtime)
        name = f.call_id if short else f.call
        name = name if name.startswith(kind) else f"{kind} {name}"
        gbs = f"{f.gb_per_s:.2f}" if f.gb_per_s else "-"
        rows.append([name, f.hw, f"{f.a_ns:,.0f}", f"{f.b_ns_per_byte:.3f}", gbs, f"{f.r2:.3f}"])
    headers = ["call", "hw", "a ns/call", "b ns/byte", "1/b GB/s", "R²"]
    return [
        "",
        "Cost model: ns per call = a + b·bytes (Theil-Sen over the sizes):",
        *simple_table(rows, headers, width),
    ]


def tc_lines(report: model.Report, scenario: str) -> list[str]:
    """--method tc beside bridge's own figure: what timer:tc could resolve."""
    rows = []
    for t in report.tc:
        if t.scenario != scenario or t.unsupported:
            continue
        rows.append(
            [
                t.runtime,
                t.call_id,
                t.size,
                t.hw,
                t.n,
                f"{t.min_us} - {t.max_us}",
                t.median_us,
                t.avg_us,
                f"{t.zero_us_calls / (t.n - 1):.0%}",
                f"{t.bridge_median_ns / 1000:.3f}",
            ]
        )
    if not rows:
        return []
    table = tabulate(
        rows,
        headers=[
            "runtime",
            "call",
            "bytes",
            "hw",
            "calls",
            "Range us",
            "Median us",
            "Average us",
            "0 us",
            "bridge us",
        ],
        tablefmt="simple",
        disable_numparse=True,
    )
    return [
        "",
        "The thread's method (timer:tc per call, whole microseconds):",
        *table.splitlines(),
        "timer:tc rounds each call to a whole microsecond: a call of 2-4 us reads as 2, 3 or"
        " 4, so differences under a microsecond, and any 25% change at this size, are"
        " below what it can show. bridge times loops of calls in nanoseconds instead.",
    ]
