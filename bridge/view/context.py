"""What the parts of a view share while one is built: the report, the
detail level, the names, the differences by cell, number formats."""

from __future__ import annotations

from collections import defaultdict

from bridge import stats
from bridge.catalog import calls
from bridge.report import schema
from bridge.view import codes, units, words
from bridge.view.model import Detail
from bridge.view.names import Names

LOW = stats.LOW_STATISTIC  # the low statistic verdicts and comparisons are judged on (p10)


class Context:
    def __init__(self, report: schema.Report, detail: Detail) -> None:
        self.report = report
        self.detail = detail
        self.names = Names(report)
        self.diffs: tuple[schema.Difference, ...] = report.differences or ()
        self._by = {
            (d.against, d.scenario, d.runtime, d.call_id, d.size, d.hw): d for d in self.diffs
        }
        self.match = _match(report)
        self.unstable = {
            (u.scenario, u.runtime, u.call_id, u.size, u.hw): u for u in report.unstable
        }

    @property
    def verbose(self) -> bool:
        return self.detail is Detail.VERBOSE

    @property
    def quiet(self) -> bool:
        return self.detail is Detail.QUIET

    def diff(self, against: str, r: schema.Result) -> schema.Difference | None:
        return self._by.get((against, r.scenario, r.runtime, r.call_id, r.size, r.hw))

    def unit(self, scenario: str) -> str:
        return units.unit(self.report, scenario)

    def results(self, scenario: str) -> list[schema.Result]:
        return ordered(self.report, [r for r in self.report.results if r.scenario == scenario])

    def kind(self, r: schema.Result) -> str:
        return self.report.kind_of(r.runtime)

    def role(self, r: schema.Result) -> str:
        return calls.role(self.kind(r), r.call_id)

    def is_part(self, r: schema.Result) -> bool:
        return calls.is_part(self.kind(r), r.call_id)

    @property
    def rebased(self) -> bool:
        """Was a --baseline chosen: is a runtime compared with one named after it?"""
        order = {rid: i for ids in self.names.several.values() for i, rid in enumerate(ids)}
        return any(
            order.get(d.baseline_runtime, -1) > order.get(d.runtime, -1)
            for d in self.diffs
            if d.against == codes.FIRST
        )


def scenarios(report: schema.Report) -> list[str]:
    """The scenarios measured, in order: per call, then by level only (--concurrency)."""
    names = [r.scenario for r in report.results]
    names += [c.scenario for c in report.concurrency.cells] if report.concurrency else []
    return list(dict.fromkeys(names))


def ordered(report: schema.Report, results: list[schema.Result]) -> list[schema.Result]:
    """The same call side by side: by runtime kind, call, size and hw, then
    runtime, so erlang@25 and erlang@27 rows of one call sit together;
    running nodes of one host together, after this machine's."""

    def first_seen(key) -> dict:
        seen: dict = {}
        for r in results:
            seen.setdefault(key(r), len(seen))
        return seen

    def kind(r: schema.Result) -> str:
        return report.kind_of(r.runtime)

    def host(r: schema.Result) -> str:
        rt = report.runtime(r.runtime)
        return rt.node_host if rt is not None else ""

    kinds = first_seen(kind)
    call_ids = first_seen(lambda r: (kind(r), r.call_id))
    hosts = first_seen(host)
    runtimes = first_seen(lambda r: r.runtime)
    return sorted(
        results,
        key=lambda r: (
            kinds[kind(r)],
            call_ids[(kind(r), r.call_id)],
            r.size,
            r.hw.masked,
            hosts[host(r)],
            runtimes[r.runtime],
        ),
    )


def _match(report: schema.Report) -> dict[int, str]:
    """id(result) -> yes | NO | unchecked | part, from the output checks."""
    out: dict[int, str] = {}
    checks: dict[tuple[str, int], list[schema.InteropCheck]] = defaultdict(list)
    for check in report.interop:
        checks[(check.scenario, check.size)].append(check)
    for r in report.results:
        for check in checks.get((r.scenario, r.size), ()):
            if not r.ok:
                continue
            call = calls.lookup(report.kind_of(r.runtime), r.call_id)
            if call is not None and call.check is calls.Check.PART:
                out[id(r)] = "part"
            elif not r.output_hex:
                out[id(r)] = "unchecked"
            else:
                out[id(r)] = "NO" if r.key.output in check.mismatched else "yes"
    return out


# -- numbers -----------------------------------------------------------------------


def fmt_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:,.2f} ms"
    if ns >= 100:
        return f"{ns:,.0f} ns"
    return f"{ns:,.1f} ns"


def si(x: float) -> str:
    """1.23 M, 456.78 k."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:,.2f} {unit}"
    return f"{x:,.1f}"


def si3(x: float) -> str:
    """Three significant figures: 741k, 2.06M, 79.2k."""
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{prefix}"
    return f"{x:.3g}"


def ci(lo: float, hi: float, marks: tuple[float, ...] = ()) -> str:
    """'CI 1.13–1.26'; a bound that would print as one of `marks` (a
    verdict's margin) gets more decimals (words.ci_text)."""
    return words.ci_text(lo, hi, marks)


def count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
