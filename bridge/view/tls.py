"""The report's `tls` block in words (bridge.analysis.tls): per TLS cell the
rate and the server's CPU per handshake, per runtime and version what
resuming saves, and what the handshakes negotiated."""

from __future__ import annotations

from bridge import stats
from bridge.catalog import vocab
from bridge.report import schema
from bridge.report import tls as rec
from bridge.report.hw import Hw


def sentences(report: schema.Report, scenario: str) -> list[str]:
    """One sentence per cell (hw on), per saving and per negotiated call."""
    block = report.tls
    if block is None:
        return []
    cells = [c for c in block.cells if c.scenario == scenario and c.hw is Hw.ON]
    out = [_cell(report, c) for c in cells]
    out += [_saving(report, s) for s in block.savings if s.scenario == scenario and s.hw is Hw.ON]
    out += _negotiated(report, cells)
    return out


def _who(report: schema.Report, runtime: str) -> str:
    kind = report.kind_of(runtime)
    several = sum(rt.kind == kind and not rt.masked for rt in report.runtimes) > 1
    name = vocab.KIND_NAMES.get(kind, kind)
    return f"{name} ({runtime})" if several else name


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.2f} ms" if ns >= 1e5 else f"{ns / 1e3:.0f} µs"


def _cell(report: schema.Report, c: rec.TlsCell) -> str:
    head = (
        f"{_who(report, c.runtime)} {c.call_id}: {c.handshakes_per_s:,.0f} handshakes/s,"
        f" client and server ({_ms(c.wall_ns)} each)"
    )
    if c.server_cpu_ns is None:
        return head + "; the server's CPU was not measured."
    ci = c.server_cpu_ci95
    spread = f" (CI {_ms(ci[0])}–{_ms(ci[1])})" if ci else " (no CI)"
    share = f", {c.server_share:.0%} of that time" if c.server_share is not None else ""
    cap = 1e9 / c.server_cpu_ns if c.server_cpu_ns > 0 else 0.0
    return (
        f"{head}; the server's CPU {_ms(c.server_cpu_ns)} per handshake{spread}{share}:"
        f" one server core takes at most {cap:,.0f} handshakes/s."
    )


def _saving(report: schema.Report, s: rec.TlsSaving) -> str:
    """Resumption's saving as full / resumed: "2.00×" reads the same way
    whether resuming saves much, little or (a ratio under 1) nothing."""

    def ci(pair: tuple[float, float] | None) -> str:
        return f" (CI {pair[0]:.2f}–{pair[1]:.2f}×)" if pair else ""

    text = (
        f"{_who(report, s.runtime)} TLS {s.version} ({s.full_call_id} over {s.resumed_call_id}):"
        f" a full handshake takes {s.ratio:.2f}× the time of a resumed one{ci(s.ci95)}"
    )
    if s.server_ratio is not None:
        text += f" and {s.server_ratio:.2f}× its server's CPU{ci(s.server_ci95)}"
    rounds = f"{s.rounds} paired round{'s' if s.rounds != 1 else ''}"
    if s.no_ci is rec.NoCi.ROUNDS:
        return f"{text}; no CI: {rounds}, a CI needs {stats.MIN_CI_SAMPLES}."
    if s.processes > 1:
        rounds += f" of {s.processes} process pairs"
    return f"{text}, from {rounds}."


def _negotiated(report: schema.Report, cells: list[rec.TlsCell]) -> list[str]:
    """Per call: what its handshakes negotiated, where every runtime agrees
    (a disagreement is an output mismatch, said with the problems)."""
    out = []
    for call_id in dict.fromkeys(c.call_id for c in cells):
        seen = [c for c in cells if c.call_id == call_id and c.negotiated is not None]
        said = [c.negotiated for c in seen if c.negotiated is not None]
        common = {(n.protocol, n.suite, n.cert, n.resumed, n.client_cert) for n in said}
        groups = {n.group for n in said if n.group is not None}
        sigs = {n.sigalg for n in said if n.sigalg is not None}
        if len(common) != 1 or len(groups) > 1 or len(sigs) > 1:
            continue
        n = said[0]
        words = [n.protocol, n.suite]
        words += [f"group {g}" if g != "none" else "no key exchange" for g in groups]
        words += [f"signature {g}" if g != "none" else "no signature" for g in sigs]
        words.append(f"server certificate {n.cert} ({_key(seen[0].key)})")
        if n.client_cert != "none":
            words.append(f"client certificate {n.client_cert}, verified by the server")
        words.append("resumed" if n.resumed else "a full handshake")
        quiet = [
            _who(report, c.runtime) for c in seen if c.negotiated and c.negotiated.group is None
        ]
        tail = ""
        if quiet and (groups or sigs):
            tail = f" ({', '.join(quiet)}: neither group nor signature reported)"
        out.append(f"{call_id} negotiated {', '.join(words)} in every runtime{tail}.")
    return out


def _key(name: str) -> str:
    cert = vocab.TLS_CERTS.get(name)
    return cert.text if cert else name
