"""`bridge list` and `bridge show` as text: the scenarios grouped by kind, and
one scenario's calls per runtime with what each one measures, how its output
is checked, and which release it needs. Reads scenario files and the call
table; prints nothing itself (cli.py echoes)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tabulate import tabulate

from bridge import plain
from bridge.catalog import calls, scenario, vocab
from bridge.errors import UsageError

KIND_TITLES = {
    "hash": "digests",
    "file-digest": "file digests",
    "mac": "MACs",
    "cipher": "ciphers and AEAD",
    "sign": "ECDSA signatures",
    "eddsa": "EdDSA signatures",
    "rsa": "RSA signatures",
    "agreement": "key agreement",
    "tls": "TLS handshakes",
    "kdf": "key derivation",
    "random": "random bytes",
}

CHECKS = {
    calls.Check.REFERENCE: "equal to the driver's reference",
    calls.Check.SIGNATURE: "a fresh signature, verified by the driver",
    calls.Check.ACCEPTS: "must accept the driver's signature",
    calls.Check.PART: "not checked: a part, no MAC: timed to take a call's cost apart",
    calls.Check.DISTINCT: "two outputs: the length asked for, and different",
    calls.Check.AGREEMENT: "a fresh key pair: the driver derives the same secret",
    calls.Check.NEGOTIATED: (
        "what was negotiated (protocol, suite, group, signature, certificates, resumed),"
        " each as every side was given"
    ),
}


@plain.escaped
def list_text(dirs: tuple[Path, ...] = (), width: int | None = None) -> str:
    """Every scenario, under a heading per kind (in scenario.KINDS order);
    files that do not load are listed last, with the reason. Within
    `width` (None: each on one line), a description wrapped under itself."""
    groups: dict[str, list[list[str]]] = {kind: [] for kind in scenario.KINDS}
    invalid = []
    for name in scenario.available(dirs):
        try:
            sc = scenario.load(name, dirs)
        except UsageError as exc:
            invalid.append([name, exc.one_line()])
            continue
        groups[sc.kind].append([name, sc.description])
    out: list[str] = []
    for kind, rows in groups.items():
        if rows:
            head = f"{kind}: {KIND_TITLES.get(kind, kind)}"
            out += [head, *_table(rows, width), *_opt_ins(kind, width), ""]
    if invalid:
        out += ["INVALID", *_table(invalid, width), ""]
    return "\n".join(out)


def _opt_ins(kind: str, width: int | None = None) -> list[str]:
    """The alternatives no built-in scenario runs, for `--with`."""
    ids = [f"{r}:{c}" for r in calls.RUNTIME_KINDS for c in calls.opt_ins(r, kind)]
    if not ids:
        return []
    said = f"opt-in calls (crypto-bridge run SCENARIO --with CALL): {', '.join(ids)}"
    return _wrapped("  ", said, width)


def list_data(dirs: tuple[Path, ...] = ()) -> list[dict]:
    """`bridge list --format json`: each scenario with its kind and file;
    one that does not load has its reason instead."""
    out: list[dict] = []
    for name in scenario.available(dirs):
        try:
            sc = scenario.load(name, dirs)
        except UsageError as exc:
            out.append({"name": name, "problem": exc.one_line()})
            continue
        out.append(
            {
                "name": name,
                "kind": sc.kind,
                "description": sc.description,
                "file": str(scenario.find(name, dirs)),
            }
        )
    return out


def show_data(name: str, dirs: tuple[Path, ...] = ()) -> dict:
    """`bridge show --format json`: what show prints, as data."""
    path = scenario.find(name, dirs)
    sc = scenario.load(name, dirs)
    return {
        "name": sc.name,
        "file": str(path),
        "kind": sc.kind,
        "algorithm": sc.algorithm,
        "description": sc.description,
        "sizes": list(sc.sizes),
        "size_unit": sc.size_unit,
        "features": list(sc.features),
        "calls": {
            runtime: [
                {
                    "id": cid,
                    "label": calls.CALLS[runtime, cid].label(sc, ""),
                    "measures": calls.CALLS[runtime, cid].semantics_for(sc),
                    "output": _check_text(calls.CALLS[runtime, cid]),
                    "needs": calls.CALLS[runtime, cid].requires or None,
                }
                for cid in ids
            ]
            for runtime, ids in sc.calls.items()
        },
        "text": path.read_text(),
    }


def _check_text(call: calls.Call) -> str:
    return f"not checked ({call.unchecked})" if call.unchecked else CHECKS[call.check]


def _table(rows: list[list[str]], width: int | None = None) -> list[str]:
    """Name and description, two columns; a description too long for
    `width` goes on under itself."""
    if width is None:
        text = tabulate(rows, tablefmt="plain", disable_numparse=True)
        return ["  " + line for line in text.splitlines()]
    name_width = max(len(name) for name, _ in rows)
    out: list[str] = []
    for name, text in rows:
        out += _wrapped(f"  {name:<{name_width}}  ", text, width)
    return out


def _wrapped(lead: str, text: str, width: int | None) -> list[str]:
    """`text` after `lead`, its further lines under its first, within `width`."""
    if width is None:
        return [lead + text]
    room = max(width - len(lead), 24)
    lines = textwrap.wrap(text, room, break_on_hyphens=False) or [""]
    return [lead + lines[0], *(" " * len(lead) + line for line in lines[1:])]


def show_text(name: str, dirs: tuple[Path, ...] = (), width: int | None = None) -> str:
    """Where the file is, what it measures, each call per runtime, then the
    file itself; the description lines start with '#', so the whole output
    is still a valid scenario file. `width` (None: each on one line): a
    description line too long goes on under itself, still a comment. The
    file is shown as it is (the built-in ones fit in 80 columns)."""
    path = scenario.find(name, dirs)
    sc = scenario.load(name, dirs)
    unit = {"bytes": "", "per call": " bytes, timed per call"}.get(sc.size_unit, f" {sc.size_unit}")
    features = ", ".join(f"{f} ({vocab.FEATURE_NAMES.get(f, f)})" for f in sc.features)
    out = [
        f"# {path}",
        f"# kind {sc.kind} ({KIND_TITLES.get(sc.kind, sc.kind)}): {sc.algorithm},"
        f" sizes {', '.join(map(str, sc.sizes))}{unit}",
        f"# hardware features for the A/B: {features or 'none'}",
        *_tls_lines(sc),
    ]
    for runtime, ids in sc.calls.items():
        out += ["#", f"# {runtime}:"]
        for cid in ids:
            out += [f"#   {line}" for line in _call_lines(calls.CALLS[runtime, cid], sc)]
    for runtime in calls.RUNTIME_KINDS:
        extra = [c for c in calls.opt_ins(runtime, sc.kind) if c not in sc.calls.get(runtime, ())]
        if extra:
            out += [
                "#",
                f"# {runtime}, opt-in (crypto-bridge run {sc.name} --with {runtime}:CALL):",
            ]
            for cid in extra:
                out += [f"#   {line}" for line in _call_lines(calls.CALLS[runtime, cid], sc)]
    # Escaped like any view; the file keeps its tabs, shown as it is.
    out = [folded for line in out for folded in _comment(line, width)]
    head = plain.printable("\n".join(out) + "\n", keep_newlines=True)
    return head + plain.printable(path.read_text(), keep_newlines=True, keep_tabs=True)


def _comment(line: str, width: int | None) -> list[str]:
    """A '#' line within `width`: its further lines two spaces under its
    text, each a comment too. A word longer than the line (a path) stays
    whole."""
    body = line[1:].lstrip(" ")
    if width is None or len(line) <= width or not body:
        return [line]
    lead = line[: len(line) - len(body)]
    room = max(width - len(lead) - 2, 24)
    lines = textwrap.wrap(body, room, break_on_hyphens=False, break_long_words=False)
    return [lead + lines[0], *(lead + "  " + rest for rest in lines[1:])]


def _tls_lines(sc: scenario.Scenario) -> list[str]:
    """What a TLS scenario's servers are given: the group, the certificate,
    whether the client presents one, whether sessions are kept."""
    if not isinstance(sc, scenario.TlsScenario):
        return []
    client = vocab.TLS_CERTS[vocab.TLS_CLIENT_CERT].text
    parts = [
        f"ECDHE over {sc.group}",
        f"a {sc.cert_spec.text} server certificate",
        f"mutual TLS (an {client} client certificate, required and verified)"
        if sc.client_cert
        else "no client certificate",
    ]
    if sc.resumption:
        parts.append("servers issue TLS 1.3 tickets and keep TLS 1.2 sessions")
    return [f"# TLS: {', '.join(parts)}; the server's CPU per handshake is measured"]


def _call_lines(call: calls.Call, sc: scenario.Scenario) -> list[str]:
    lines = [f"{call.id}: {call.label(sc, '')}", f"  measures: {call.semantics_for(sc)}"]
    lines.append(f"  output: {_check_text(call)}")
    if call.requires:
        lines.append(f"  needs: {call.requires} (older releases give an unsupported result)")
    return lines
