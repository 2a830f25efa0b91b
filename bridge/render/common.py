"""Pieces shared by the renderers: grouping, number formats, provenance and
problem lines, and the semantics notes."""

from __future__ import annotations

import textwrap
from collections import defaultdict

import tabulate as tabulate_module
from tabulate import tabulate

from bridge import stats
from bridge.analysis import versus
from bridge.catalog import calls, vocab
from bridge.hw.hardware import (
    MASK_VARS,  # the other variables of an `env` record are the user's (--env)
)
from bridge.render import ratios, titles, units
from bridge.report import schema
from bridge.view import words


def title(report: schema.Report) -> str:
    if report.imported_from is not None:
        return f"bridge {report.bridge_version} · imported from {report.imported_from}"
    return f"bridge {report.bridge_version} · {report.created} · seed {report.seed}"


def by_scenario(report: schema.Report) -> dict[str, list[schema.Result]]:
    groups: dict[str, list[schema.Result]] = defaultdict(list)
    for r in report.results:
        groups[r.scenario].append(r)
    return dict(groups)


def scenario_description(report: schema.Report, name: str) -> str:
    """The description, its sizes made to match the sizes actually run (the
    results'), whatever --sizes chose (bridge.render.titles)."""
    sizes = [r.size for r in report.results if r.scenario == name]
    return titles.sized(report.description(name), sizes)


def who(report: schema.Report, runtime_id: str, call: str) -> str:
    """A call named with its runtime kind ("Erlang crypto:hash(...)"), and
    with its runtime ("... on erlang@23.2.6") when the report has several
    runtimes of that kind: otherwise two lines would differ only in numbers."""
    base = _kind_and_call(report, runtime_id, call)
    return f"{base} on {runtime_id}" if _several(report, runtime_id) else base


def explanation(report: schema.Report, v: schema.HwVerdict) -> str:
    """A verdict in one line (bridge.view.words.explanation), naming its
    runtime where the report has several of its kind. A report from before
    the reasons keeps its stored sentence, named the same way."""
    unit = units.unit(report, v.scenario)
    several = unit == units.PER_CALL and len(units.sizes_run(report, v.scenario)) > 1
    said = words.explanation(v, _kind_and_call(report, v.runtime, v.call), unit, several)
    if not _several(report, v.runtime):
        return said
    base = _kind_and_call(report, v.runtime, v.call)
    if said.startswith(base):
        return who(report, v.runtime, v.call) + said[len(base) :]
    return f"{v.runtime}: {said}"


def _kind_and_call(report: schema.Report, runtime_id: str, call: str) -> str:
    return words.who(report.kind_of(runtime_id), call)


def _several(report: schema.Report, runtime_id: str) -> bool:
    return report.kind_of(runtime_id) in versus.several(report)


def several_of_kind(report: schema.Report, runtime_id: str) -> bool:
    """Does the run have another runtime of this one's kind (two OTPs, two
    openssl builds)? Then every sentence about it names it."""
    return _several(report, runtime_id)


def ordered(report: schema.Report, results: list[schema.Result]) -> list[schema.Result]:
    """The same call side by side: by runtime kind, call, size and hw, then
    runtime, so erlang@25 and erlang@27 rows of one call sit together."""

    def first_seen(key) -> dict:
        seen: dict = {}
        for r in results:
            seen.setdefault(key(r), len(seen))
        return seen

    def kind(r: schema.Result) -> str:
        return report.kind_of(r.runtime)

    kinds = first_seen(kind)
    call_ids = first_seen(lambda r: (kind(r), r.call_id))
    # Running nodes (--node) of one host sit together, after this machine's.
    hosts = first_seen(lambda r: _host(report, r.runtime))
    runtimes = first_seen(lambda r: r.runtime)
    return sorted(
        results,
        key=lambda r: (
            kinds[kind(r)],
            call_ids[(kind(r), r.call_id)],
            r.size,
            r.hw.masked,
            hosts[_host(report, r.runtime)],
            runtimes[r.runtime],
        ),
    )


def _host(report: schema.Report, runtime_id: str) -> str:
    rt = report.runtime(runtime_id)
    return rt.node_host if rt is not None else ""


def verdict_lines(report: schema.Report, scenario: str) -> list[str]:
    """One line per call and feature. A sweep whose sizes all say `used`
    becomes one line with the slow-down at each size; anything else keeps
    its per-size explanation."""
    groups: dict[tuple[str, str, str], list[schema.HwVerdict]] = defaultdict(list)
    for v in report.verdicts:
        if v.scenario == scenario:
            groups[(v.runtime, v.call_id, v.feature)].append(v)
    if not groups:
        return []
    lines = ["", "Hardware verdicts (hw off = the feature masked from process start):"]
    for vs in groups.values():
        if len(vs) > 1 and all(v.verdict == "used" for v in vs):
            v0 = vs[0]
            head = f"{who(report, v0.runtime, v0.call)} uses {words.feature(v0.feature)}"
            sizes = ", ".join(
                f"{v.speedup:.2f}× {units.at(report, scenario, v.size, brief=True)}" for v in vs
            )
            lines.append(f"- {head}: slower without it by {sizes}")
        else:
            lines += [f"- {explanation(report, v)}" for v in vs]
    return lines


def size_text(n: int, unit: str = units.BYTES) -> str:
    return words.size_text(n, unit)


def provenance_items(report: schema.Report) -> list[str]:
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
        items.append(f"{rt.id}: {runtime_summary(rt)}{given_summary(rt)}")
    for exp in report.hardware.experiments or ():
        if exp.mask:
            items.append(f"{exp.runtime} hw off: {exp.mask.variable}={exp.mask.value}")
    return items


def warning_lines(report: schema.Report, resolution: bool = True) -> list[str]:
    """Differences between runtimes that change what the numbers mean; with
    `resolution`, the differences between runtimes that could not be told
    (for a view that shows them)."""
    seen: dict[str, str] = {}
    for rt in report.runtimes:
        for path in rt.details.get("libcrypto_loaded", []):
            seen.setdefault(path, rt.id)
    lines = []
    cryptography = _uses_cryptography(report)
    if len(seen) > 1:
        where = ", ".join(f"{rid}: {path}" for path, rid in seen.items())
        lines.append(f"warning: runtimes load different libcrypto files ({where})")
    for rt in report.runtimes:
        if rt.kind == "python" and rt.details.get("hashlib_uses_openssl") is False:
            lines.append(f"warning: {rt.id} hashlib uses its built-in code, not OpenSSL")
        own = rt.details.get("cryptography_openssl_version")
        system = str(rt.details.get("ssl_openssl_version", ""))
        if (
            rt.id in cryptography
            and not rt.masked
            and own
            and own.split()[:2] != system.split()[:2]
        ):
            lines.append(
                f"warning: {rt.id} runs its cryptography rows (ciphers, signatures, key"
                f" agreement) on the {own} inside the cryptography package, not on the"
                f" system's {rt.details.get('ssl_openssl_version')}"
            )
    if resolution:
        lines += [f"warning: {w}" for w in ratios.resolution_warning(report, versus.of(report))]
    return [""] + lines if lines else []


# Python calls on libcrypto through the ssl module, not the cryptography package.
_SSL_MODULE_OPS = frozenset({"rand_bytes"})


def _uses_cryptography(report: schema.Report) -> set[str]:
    """The Python runtimes with rows that run on the cryptography package
    (and so on its own OpenSSL): only those earn its warning."""
    out = set()
    for r in report.results:
        # A user's expression (bridge time) says nothing of what it calls.
        if report.kind_of(r.runtime) != "python" or r.call_id.startswith(calls.USER_PREFIX):
            continue
        call = calls.lookup("python", r.call_id)
        if call and call.route is calls.Route.LIBCRYPTO and call.op not in _SSL_MODULE_OPS:
            out.add(r.runtime)
    return out


def compare_key(report: schema.Report, r: schema.Result) -> tuple[int, str, str]:
    """Rows that "× fastest" compares: same size and hw; sign and verify apart."""
    return (r.size, r.hw, calls.role(report.kind_of(r.runtime), r.call_id))


class Fastest:
    """The fastest median per comparable group of rows (see compare_key)."""

    def __init__(self, report: schema.Report, results: list[schema.Result]) -> None:
        self.report = report
        self.best: dict[tuple[int, str, str], float] = {}
        for r in results:
            # A pasted line can say 0 operations; a part of a call does not compete.
            if r.ok and r.median() > 0 and not calls.is_part(report.kind_of(r.runtime), r.call_id):
                m, key = r.median(), compare_key(report, r)
                self.best[key] = min(self.best.get(key, m), m)

    def ratio(self, r: schema.Result) -> float | None:
        if calls.is_part(self.report.kind_of(r.runtime), r.call_id):
            return None
        best = self.best.get(compare_key(self.report, r))
        return r.median() / best if best and r.median() > 0 else None


def fastest(report: schema.Report, results: list[schema.Result]) -> Fastest:
    return Fastest(report, results)


def match_by_result(report: schema.Report) -> dict[int, str]:
    """id(result) -> 'yes' | 'NO' | 'unchecked' | 'part' (a part of a call,
    whose output is no MAC), from the interop checks."""
    out = {}
    for check in report.interop:
        for r in report.results:
            if r.scenario == check.scenario and r.size == check.size and r.ok:
                call = calls.lookup(report.kind_of(r.runtime), r.call_id)
                if call is not None and call.check is calls.Check.PART:
                    out[id(r)] = "part"
                elif not r.output_hex:
                    out[id(r)] = "unchecked"
                else:
                    out[id(r)] = "NO" if r.key.output in check.mismatched else "yes"
    return out


def unsupported(results: list[schema.Result]) -> tuple[dict[int, str], list[str]]:
    """A short mark per unsupported cell (id(result) -> "u1") and the notes
    that go under the table: a long reason cannot widen the table."""
    notes: dict[str, str] = {}
    marks = {}
    for r in results:
        if not r.ok:
            marks[id(r)] = notes.setdefault(f"{r.runtime}: {r.reason}", f"u{len(notes) + 1}")
    return marks, [f"[{mark}] unsupported on {text}" for text, mark in notes.items()]


LOW = stats.LOW_STATISTIC  # the column's name: p10, the 10th percentile


def cells(
    r: schema.Result,
    fastest: Fastest,
    match: dict,
    x: str = "×",
    unit: str = units.BYTES,
    scale: units.TimeScale | None = None,
) -> dict[str, str]:
    """The figures every renderer shows for an ok result, formatted once.
    MB/s only where sizes are bytes; times in the column's `scale` (one unit
    per column: units.scale_of) where the view gives one."""
    s = r.summary()
    ops = 1e9 / s.median if s.median > 0 else 0.0
    rel = fastest.ratio(r)
    return {
        "ns_ci": ns_with_ci(s, imported=r.imported, scale=scale),
        "median": scale.fmt(s.median) if scale else fmt_ns(s.median),
        "min": scale.fmt(s.min) if scale else fmt_ns(s.min),
        # The low statistic verdicts and comparisons are judged on (stats.low),
        # shown beside the median under its name (LOW).
        "low": (scale.fmt if scale else fmt_ns)(stats.low(r.per_op_ns())) if r.samples else "–",
        "ops": si(ops),
        "mbs": f"{ops * r.size / 1e6:,.1f}" if units.throughput(unit) and r.size else "–",
        "rel": "–" if rel is None else f"{rel:.2f}{x}",
        "ok": match.get(id(r), "–"),
    }


def ns_with_ci(
    s: stats.Summary, imported: bool = False, scale: units.TimeScale | None = None
) -> str:
    fmt = scale.fmt if scale else fmt_ns
    if imported:
        return f"{fmt(s.median)} (as posted)"
    if s.n == 1:  # e.g. one openssl run (--quick): a figure without a spread
        return f"{fmt(s.median)} (1 sample, no CI)"
    lo, hi = s.ci95
    return f"{fmt(s.median)} ({fmt(lo)}–{fmt(hi)})"


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


def semantics_marks(results: list[schema.Result]) -> dict[str, int]:
    marks: dict[str, int] = {}
    for r in results:
        marks.setdefault(r.semantics, len(marks) + 1)
    return marks


def semantics_warning(results: list[schema.Result], short: bool = False) -> list[str]:
    """Say it beside the numbers when a table mixes per-call key setup with a
    reused key: the ratio between such rows is not a speed difference."""
    kinds = {r.semantics for r in results if r.ok}
    if calls.ONE_SHOT_MAC in kinds and (calls.SPEED_HMAC in kinds or calls.REUSED_KEY in kinds):
        if short:  # the terminal's legend says which rows are one-shot
            return [
                "Not like for like: openssl speed -hmac and hmac.new(key).copy() set the key up"
                " once, crypto:macN and hmac.digest on every call."
            ]
        return [
            "Not like for like: openssl speed -hmac (and hmac.new(key).copy()) set the key"
            " up once, while crypto:macN and hmac.digest set it up on every call. Compare"
            " one-shot rows with each other, and reused-key rows with each other."
        ]
    return []


def provenance_lines(report: schema.Report) -> list[str]:
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
            lines.append(f"{rt.id}: {runtime_summary(rt)}{given_summary(rt)}")
    return lines


def given_summary(rt: schema.Runtime) -> str:
    """What the user gave one runtime (--env, --libcrypto), and the proof
    that a --libcrypto library was the one loaded."""
    given = {k: v for k, v in (rt.details.get("env") or {}).items() if k not in MASK_VARS}
    text = "".join(f"; {k}={v}" for k, v in given.items())
    other = rt.details.get("libcrypto_dir")
    if other:
        text += f"; libcrypto {other.get('file')} ({other.get('version')}), mapped as"
        text += f" {', '.join(other.get('maps') or ['?'])}"
    return text


def runtime_summary(rt: schema.Runtime) -> str:
    d = rt.details
    if rt.kind == "erlang":
        return (
            f"OTP {d.get('otp_version')}, erts {d.get('erts_version')}, {d.get('emu_flavor')},"
            f" crypto {d.get('crypto_app_version')}, crypto:info_lib(): {d.get('crypto_lib')}"
        ) + _node_summary(d.get("node"))
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


def _node_summary(node) -> str:
    """A running node's own host and what bridge did there: the report's
    environment block describes bridge's machine, not the node's."""
    if not isinstance(node, dict):
        return ""
    cpu = node.get("cpu") or {}
    virt = ", virtualized" if cpu.get("virtualized") else ""
    host = node.get("hostname") or node.get("host")
    text = f"; running node {node.get('name')} (os pid {node.get('os_pid')}) on host {host}"
    if cpu:
        flags = " ".join(cpu.get("flags") or []) or "none"
        text += f": {cpu.get('model')} ({cpu.get('arch')}{virt}), crypto flags: {flags}"
    agent = node.get("agent")
    if isinstance(agent, dict):
        text += (
            f"; measured by bridge's agent (built by {agent.get('compiled_by')}) at most"
            f" {float(agent.get('max_load', 1)):.0%} of one scheduler busy"
        )
    if node.get("provenance"):
        text += f"; {node['provenance']}"
    return text


def problem_lines(report: schema.Report, unstable: bool = True) -> list[str]:
    """Skipped runtimes, (unstable cells,) run errors. The terminal view lists
    the unstable cells once, as marks in its tables: `unstable=False`."""
    lines = []
    for s in report.skipped:
        asked = f" (asked for with {s.requested})" if s.requested else ""
        lines.append(f"skipped {s.runtime}{asked}: {s.reason}")
    for u in report.unstable if unstable else ():
        where = units.cell(report, u.scenario, u.runtime, u.call_id, u.size)
        lines.append(
            f"not stable: {where} (hw {u.hw}):"
            f" 95% CI ±{u.ci_halfwidth * 100:.1f}%, wider than the run's target"
        )
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
    report: schema.Report, scenario: str, short: bool = False, width: int | None = None
) -> list[str]:
    """The cost model under a sweep's table (short: call ids, for 72 columns)."""
    fs = [f for f in report.fits if f.scenario == scenario]
    if not fs:
        return []
    # Several runtimes of a kind (two OTPs): each row names its runtime.
    named = any(report.kind_of(f.runtime) in versus.several(report) for f in fs)
    # What b is per: a byte, or (PBKDF2) an iteration, where no GB/s applies.
    per = "iteration" if units.unit(report, scenario) == units.ITERATIONS else "byte"
    rows = []
    for f in fs:
        kind = report.kind_of(f.runtime)
        name = f.call_id if short else f.call
        name = name if name.startswith(kind) else f"{kind} {name}"
        gbs = f"{f.gb_per_s:.2f}" if f.gb_per_s else "-"
        rate = [gbs] if per == "byte" else []
        head = [f.runtime, f.call_id if short else f.call] if named else [name]
        rows.append([*head, f.hw, f"{f.a_ns:,.0f}", f"{f.b_ns_per_byte:.3f}", *rate, f"{f.r2:.3f}"])
    headers = [*(["runtime"] if named else []), "call", "hw", "a ns/call", f"b ns/{per}"]
    headers += ["1/b GB/s"] if per == "byte" else []
    headers += ["R2" if short else "R²"]  # short: ASCII, R² would widen to R^2
    return [
        "",
        f"Cost model: ns per call = a + b·{per}s (Theil-Sen over the sizes):",
        *simple_table(rows, headers, width),
    ]


def tc_lines(report: schema.Report, scenario: str) -> list[str]:
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
    note = (
        "timer:tc rounds each call to a whole microsecond: a call of 2-4 us reads as 2, 3 or"
        " 4, so differences under a microsecond, and any 25% change at this size, are"
        " below what it can show. bridge times loops of calls in nanoseconds instead."
    )
    # The table as it is (a wrapped table row is no row), the prose wrapped.
    return [
        "",
        "The thread's method (timer:tc per call, whole microseconds):",
        *table.splitlines(),
        *textwrap.wrap(note, 100),
    ]


# -- layout for a width (the terminal view) ------------------------------------

DEFAULT_WIDTH = 80  # when no width is known (not a terminal, no COLUMNS)
MIN_WIDTH = 40  # narrower than this, lines are laid out as at 40


def wrap(text: str, width: int, indent: str = "  ", first: str = "") -> list[str]:
    """A paragraph wrapped to `width`, its later lines indented; only a
    word longer than the width (a path) is broken."""
    return textwrap.wrap(
        text,
        max(width, MIN_WIDTH),
        initial_indent=first,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    ) or [""]


class Column:
    """One column of a fitted table: its header, its cells, a shorter form
    of the cells (or None), whether it is right-aligned, and when it may go
    (`drop`: lower goes first; None: never)."""

    def __init__(self, header: str, cells: list[str], right: bool = False, drop=None, short=None):
        self.header, self.cells, self.right, self.drop = header, cells, right, drop
        self.short: list[str] | None = short

    def width(self) -> int:
        return max([len(self.header), *map(len, self.cells)])


def layout(columns: list[Column], gap: str = "  ") -> list[str]:
    """The columns as a header, a rule and rows (tabulate's "simple" style
    without its header padding)."""
    widths = [c.width() for c in columns]

    def line(values: list[str]) -> str:
        parts = [
            v.rjust(w) if c.right else v.ljust(w)
            for v, w, c in zip(values, widths, columns, strict=True)
        ]
        return gap.join(parts).rstrip()

    rows = [line([c.header for c in columns]), gap.join("-" * w for w in widths)]
    n = len(columns[0].cells) if columns else 0
    rows += [line([c.cells[i] for c in columns]) for i in range(n)]
    return rows


def fit(columns: list[Column], width: int, gap: str = "  ") -> list[Column]:
    """Columns that fit `width`: first every column whole; then, while the
    table is too wide, the shorter forms of the cells, then the columns by
    their `drop` order. The columns that may not go stay, however wide."""

    def total(cs: list[Column]) -> int:
        return sum(c.width() for c in cs) + len(gap) * max(len(cs) - 1, 0)

    cs = list(columns)
    if total(cs) <= width:
        return cs
    for c in cs:
        if c.short is not None:
            c.cells, c.short = c.short, None
    for c in sorted((c for c in columns if c.drop is not None), key=lambda c: c.drop):
        if total(cs) <= width:
            break
        cs.remove(c)
    return cs


def short_call(r: schema.Result) -> str:
    """A call as a table names it in a narrow view: its id (macN,
    hmac.digest, speed-sign), with an Erlang call's module
    ("crypto:macN") where its label has one."""
    if r.call_id.startswith(calls.USER_PREFIX) and len(r.call) <= 32:
        return r.call  # a user's expression (bridge time) reads better than its id
    head = r.call.split("(")[0]
    return head if head.endswith(f":{r.call_id}") else r.call_id


def short_who(report: schema.Report, runtime_id: str, r: schema.Result) -> str:
    """'Erlang crypto:macN', '... on erlang@25.2.3' when the report has
    several runtimes of that kind."""
    kind = report.kind_of(runtime_id)
    base = f"{vocab.KIND_NAMES.get(kind, kind)} {short_call(r)}"
    return f"{base} on {runtime_id}" if _several(report, runtime_id) else base


def brief_provenance(report: schema.Report) -> list[str]:
    """Provenance in two or three paragraphs: bridge, the machine, each
    runtime with its libcrypto (--verbose has the full lines)."""
    head = title(report)
    env = report.environment
    if env:
        virt = ", virtualized" if env.get("virtualized") else ""
        flags = " ".join(env.get("cpu_flags", [])) or "none"
        head += (
            f" · {env.get('cpu_model', 'unknown CPU')} ({env.get('arch', '?')},"
            f" {env.get('cpu_count', '?')} CPUs{virt}); crypto flags: {flags}"
        )
    if report.imported_from is not None:
        # Pasted runs are told apart only by what the paste said of each.
        pasted = [f"{rt.id}: {runtime_summary(rt)}" for rt in report.runtimes]
        return [head + (f"; {'; '.join(pasted)}." if pasted else "")]
    runtimes = []
    for rt in report.runtimes:
        if rt.masked:
            continue
        lib = _libcrypto_of(rt)
        runtimes.append(f"{rt.id}" + (f" ({lib})" if lib else ""))
    return [head + (f"; {', '.join(runtimes)}." if runtimes else "")]


def _libcrypto_of(rt: schema.Runtime) -> str:
    d = rt.details
    lib = {"erlang": d.get("crypto_lib"), "python": d.get("ssl_openssl_version")}.get(rt.kind)
    if not lib:
        return ""
    words = str(lib).split()
    text = " ".join(words[:2]) if words[:1] == ["OpenSSL"] else str(lib)
    return text
