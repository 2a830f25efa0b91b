"""TLS cells as a server sees them (the report's `tls` block).

Per cell: handshakes per second (client and server together: the cell's
median time per handshake), the server's CPU per handshake (each sample's
`sample_server_cpu_ns` over its handshakes; the median and its CI, across
processes where a cell's samples came from several), that CPU's share of
the wall time, and what the probe handshake negotiated.

Per runtime, hw state and protocol version of a scenario that has both a
full and a resumed call: what resumption saves, full / resumed, for the
client+server time and for the server's CPU. The two cells are measured in
the same interleaved rounds, so each round gives a ratio of round medians
that a slow spell of the machine moves on both sides alike, and the saving
is the median of those ratios with its CI (bridge.stats.paired_ratio, as the
hardware A/B pairs its twins).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence

from bridge import stats
from bridge.analysis import versus
from bridge.catalog import calls, negotiated
from bridge.catalog.vocab import RuntimeKind, ScenarioKind
from bridge.report import schema
from bridge.report import tls as rec
from bridge.report.scenario import ScenarioRun

Rounds = Callable[[schema.Result], Mapping[int, Sequence[float]] | None]


def block(report: schema.Report, scenarios: Sequence[ScenarioRun]) -> rec.Tls | None:
    """The `tls` block of a report, or None without a TLS cell measured."""
    tls = {sc.name: sc for sc in scenarios if sc.kind == ScenarioKind.TLS}
    results = [r for r in report.results if r.scenario in tls and r.ok and r.samples]
    if not results:
        return None
    kinds = {rt.id: rt.kind for rt in report.runtimes}
    cells = [cell(r, tls[r.scenario], kinds.get(r.runtime, "")) for r in results]
    found = [c for c in cells if c is not None]
    rounds = lambda r: versus.rounds_of(report, r)  # noqa: E731
    savings = tuple(savings_of(results, kinds, rounds))
    return rec.Tls(cells=tuple(found), savings=savings) if found else None


def cell(r: schema.Result, sc: ScenarioRun, kind: str) -> rec.TlsCell | None:
    call = calls.lookup(kind, r.call_id)
    if call is None or call.op not in calls.TLS_OPS:
        return None
    wall = r.median()
    server = server_per_handshake(r)
    median = ci = share = None
    if server:
        median = statistics.median(server)
        ci = stats.hierarchical_median_ci(server) if len(server) >= stats.MIN_CI_SAMPLES else None
        share = median / wall if wall > 0 else None
    return rec.TlsCell(
        scenario=r.scenario,
        runtime=r.runtime,
        call_id=r.call_id,
        hw=r.hw,
        resumed=call.op in calls.TLS_RESUME_OPS,
        key=sc.cert,
        mutual=sc.client_cert,
        wall_ns=wall,
        handshakes_per_s=1e9 / wall if wall > 0 else 0.0,
        server_cpu_ns=median,
        server_cpu_ci95=ci,
        server_share=share,
        negotiated=parsed(bytes.fromhex(r.output_hex)) if r.output_hex else None,
    )


def server_per_handshake(r: schema.Result) -> list[float]:
    """The server's CPU per handshake of each sample that has it (with the
    process of each, as Result.per_op_ns gives them)."""
    n = len(r.samples)
    if len(r.sample_server_cpu_ns) != n:
        return []
    keep = [i for i, ns in enumerate(r.sample_server_cpu_ns) if ns >= 0]
    values = [r.sample_server_cpu_ns[i] / r.loops_of(i) for i in keep]
    if r.procs and len({r.procs[i] for i in keep}) > 1:
        return stats.Samples(values, [r.procs[i] for i in keep])
    return values


def parsed(output: bytes) -> rec.TlsNegotiated | None:
    fields = negotiated.decode(output)
    if fields is None or "protocol" not in fields or "suite" not in fields:
        return None
    return rec.TlsNegotiated(
        protocol=fields["protocol"],
        suite=fields["suite"],
        group=fields.get("group"),
        sigalg=fields.get("sigalg"),
        cert=fields.get("cert", ""),
        resumed=fields.get("resumed") == negotiated.YES,
        client_cert=fields.get("client_cert", ""),
    )


def savings_of(
    results: Sequence[schema.Result], kinds: Mapping[str, str], rounds: Rounds
) -> list[rec.TlsSaving]:
    """One saving per (scenario, runtime, hw, version) with both a full and a
    resumed cell."""
    by: dict[tuple, dict[bool, schema.Result]] = {}
    for r in results:
        call = calls.lookup(kinds.get(r.runtime, ""), r.call_id)
        if call is None or call.op not in calls.TLS_OPS:
            continue
        where = (r.scenario, r.runtime, r.hw, calls.TLS_OPS[call.op])
        by.setdefault(where, {})[call.op in calls.TLS_RESUME_OPS] = r
    out = []
    for (_, _, _, version), pair in by.items():
        if True in pair and False in pair:
            found = saving(pair[False], pair[True], version, rounds, kinds)
            if found is not None:
                out.append(found)
    return out


def saving(
    full: schema.Result,
    resumed: schema.Result,
    version: str,
    rounds: Rounds,
    kinds: Mapping[str, str],
) -> rec.TlsSaving | None:
    """full / resumed from the paired rounds; without rounds to pair (a
    report that does not say how it sampled), the ratio of the medians."""
    a, b = rounds(resumed), rounds(full)
    if a is None or b is None:
        ratio = full.median() / resumed.median() if resumed.median() > 0 else None
        if ratio is None:
            return None
        return _record(full, resumed, version, (ratio, None, 0, 1), None)
    keys = [i for i in sorted(set(a) & set(b)) if a[i] and b[i]]
    procs = _round_processes(resumed, a, kinds.get(resumed.runtime, ""))
    paired = stats.paired_ratio(a, b, procs)
    if paired is not None:
        wall = (paired.ratio, paired.ci95, paired.rounds, paired.processes)
    elif keys:
        ratios = [statistics.median(b[i]) / statistics.median(a[i]) for i in keys]
        wall = (statistics.median(ratios), None, len(keys), 1)
    else:
        return None
    server = _server_pair(full, resumed, (b, a), procs)
    return _record(full, resumed, version, wall, server)


def _record(full, resumed, version, wall, server) -> rec.TlsSaving:
    ratio, ci, n, processes = wall
    return rec.TlsSaving(
        scenario=full.scenario,
        runtime=full.runtime,
        hw=full.hw,
        version=version,
        full_call_id=full.call_id,
        resumed_call_id=resumed.call_id,
        ratio=ratio,
        ci95=ci,
        server_ratio=server[0] if server else None,
        server_ci95=server[1] if server else None,
        rounds=n,
        processes=processes,
        no_ci=rec.NoCi.NONE if ci is not None else rec.NoCi.ROUNDS,
    )


def _server_pair(full, resumed, by_round, procs) -> tuple[float, tuple | None] | None:
    """The paired ratio of the server's CPU per handshake, round by round,
    and its CI; from too few rounds for a CI, their ratios' median alone."""
    b, a = by_round
    sb, sa = _split(full, b), _split(resumed, a)
    if sa is None or sb is None:
        return None
    paired = stats.paired_ratio(sa, sb, procs)
    if paired is not None:
        return paired.ratio, paired.ci95
    keys = sorted(set(sa) & set(sb))
    if not keys:
        return None
    return statistics.median(
        statistics.median(sb[i]) / statistics.median(sa[i]) for i in keys
    ), None


def _split(
    r: schema.Result, by_round: Mapping[int, Sequence[float]]
) -> dict[int, list[float]] | None:
    """The server's CPU per handshake of a cell, cut into the rounds its
    samples were cut into (versus.rounds_of takes them in order)."""
    n = len(r.samples)
    if len(r.sample_server_cpu_ns) != n:
        return None
    out, pos = {}, 0
    for i in sorted(by_round):
        span = range(pos, min(pos + len(by_round[i]), n))
        pos += len(by_round[i])
        values = [r.sample_server_cpu_ns[j] / r.loops_of(j) for j in span]
        values = [v for v in values if v > 0]
        if values:
            out[i] = values
    return out


def _round_processes(
    r: schema.Result, by_round: Mapping[int, Sequence[float]], kind: str
) -> dict[int, int] | None:
    """The process of each round, where a cell's rounds came from several
    (round i from process i mod N, the same for both cells of a pair:
    bridge.measure.session); None for one. An openssl run is a process of
    its own, and its round ratios are taken as one group."""
    if kind == RuntimeKind.OPENSSL or not r.procs or len(set(r.procs)) < 2:
        return None
    out, pos = {}, 0
    for i in sorted(by_round):
        if pos < len(r.procs):
            out[i] = r.procs[pos]
        pos += len(by_round[i])
    return out
