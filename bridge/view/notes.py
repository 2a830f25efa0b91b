"""The notes of a view: what a scenario found beside its answer (the output
check, the set-up cost, the cost of the bytes), the caveats of the run (the
machine, unstable cells, differences between runtimes that change what the
numbers mean), and its problems. A warning appears only where it applies,
and warnings of one kind are one line."""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict

from bridge.catalog import calls
from bridge.catalog.vocab import RuntimeKind, ScenarioKind
from bridge.report import provenance, schema
from bridge.report.findings import Reason
from bridge.view import codes, units, words
from bridge.view.context import Context, count
from bridge.view.model import Note, NoteKind
from bridge.view.names import short_call

# Names of statistics a default view leaves to -v (and the docs).
_JARGON = re.compile(r" \((?:Spearman|Ashman|Theil|TSC|R2|R²)[^()]*\)")


def plain(ctx: Context, text: str) -> str:
    return text if ctx.verbose else _JARGON.sub("", text)


# -- a scenario's findings -------------------------------------------------------------


def outputs(ctx: Context, scenario: str) -> list[Note]:
    """What the output check was: equal to a reference, signatures verified,
    or agreement between runtimes; and what was not checked, by call."""
    report = ctx.report
    checks = [c for c in report.interop if c.scenario == scenario]
    if not checks:
        return []
    if not all(c.match for c in checks):
        bad = sorted({m.text() for c in checks for m in c.mismatched})
        return [
            Note(NoteKind.PROBLEM, f"OUTPUT MISMATCH: {', '.join(bad)} computed different bytes.")
        ]
    checked = {k.runtime for c in checks for k, v in c.outputs.items() if v}
    n = len(checked)
    out = []
    what = "both runtimes" if n == 2 else count(n, "runtime")
    source = checks[0].reference_from
    if n == 0:
        pass
    elif source == codes.FROM_EC:
        out.append(
            f"{_all(what)} made signatures that the driver's own ECDSA verifies,"
            " and verified the driver's."
        )
    elif source == codes.FROM_AGREEMENT:
        out.append(f"{_all(what)} computed the same bytes (no reference: they agree).")
    elif source == codes.FROM_OWN:
        out.append(
            f"{_all(what)} passed the driver's own checks: {_reference(ctx, scenario, checks[0])}."
        )
    elif source.startswith("the first expression"):
        out.append(f"{_all(what)} returned the same bytes as the first expression.")
    else:
        library = (
            "the cryptography package"
            if report.scenario_kind(scenario) == ScenarioKind.CIPHER
            else "Python's standard library"
        )
        out.append(f"{_all(what)} computed the same bytes as {library}.")
    unchecked = _unchecked(ctx, scenario, checks)
    if unchecked:
        out.append(unchecked)
    return [Note(NoteKind.FINDING, t) for t in out]


def _all(what: str) -> str:
    return "Both runtimes" if what == "both runtimes" else f"All {what}"


def _reference(ctx: Context, scenario: str, check: schema.InteropCheck) -> str:
    """The check as stored, less what applies to a runtime that did not run."""
    text = check.reference
    ran = {ctx.report.kind_of(r.runtime) for r in ctx.report.results if r.scenario == scenario}
    if RuntimeKind.OPENSSL not in ran:
        text = re.sub(r"; openssl s_client's report of it is checked too", "", text)
    return text


def _unchecked(ctx: Context, scenario: str, checks: list[schema.InteropCheck]) -> str:
    """The outputs not checked, one clause per reason, each with a count."""
    report = ctx.report
    part = {
        (r.runtime, r.call_id)
        for r in report.results
        if r.scenario == scenario and ctx.match.get(id(r)) == "part"
    }
    reasons = {k: v for c in checks for k, v in c.unchecked_reasons.items()}
    keys = {k for c in checks for k in c.unchecked or () if (k.runtime, k.call_id) not in part}
    by_reason: dict[str, set[str]] = defaultdict(set)
    for k in sorted(keys):
        reason = reasons.get(k, "no output of their own to compare")
        if reason.startswith("not checked: the user call asks for no check"):
            reason = "no --same-output"
        by_reason[reason].add(_call_name(ctx, k.runtime, k.call_id))
    parts = [
        f"{', '.join(sorted(whose)) if len(whose) <= 3 else count(len(whose), 'call')} ({reason})"
        for reason, whose in by_reason.items()
    ]
    text = f"Not checked: {'; '.join(parts)}." if parts else ""
    if part:
        text += (
            " " if text else ""
        ) + "Rows marked part time a part of a call: they make no MAC to check."
    return text


def _call_name(ctx: Context, runtime: str, call_id: str) -> str:
    for r in ctx.report.results:
        if r.runtime == runtime and r.call_id == call_id:
            return r.call if call_id.startswith(calls.USER_PREFIX) else f"{runtime} {call_id}"
    return f"{runtime} {call_id}"


def setup_costs(ctx: Context, scenario: str) -> list[Note]:
    """How much of a call is set-up, and what it costs with the set-up done once."""
    groups: dict[tuple[str, str], list[schema.Decomposition]] = defaultdict(list)
    for d in ctx.report.decompositions:
        if d.scenario == scenario:
            groups[(d.runtime, d.call_id)].append(d)
    unit = ctx.unit(scenario)
    return [
        Note(NoteKind.FINDING, _setup(ctx, sorted(ds, key=lambda d: d.size), unit))
        for ds in groups.values()
    ]


def _setup(ctx: Context, ds: list[schema.Decomposition], unit: str) -> str:
    d0 = ds[0]
    who = ctx.names.who(d0.runtime, d0.call, d0.call_id)
    split = [d for d in ds if d.setup_ns is not None]
    if not split:
        why = words.reasons(d0.reasons) if d0.reasons else d0.note or ""
        return f"{who}: {d0.setup} cannot be timed apart here ({why})."
    several = len(split) > 1

    def at(d: schema.Decomposition) -> str:
        return f" {words.at(d.size, unit, brief=True)}" if several else ""

    parts = []
    for d in split:
        lo = d.setup_ci95[0] if d.setup_ci95 else d.setup_ns
        if d.setup_ns <= 0 or lo <= 0:
            parts.append(f"nothing measurable of {_us(d.total_ns)}{at(d)}")
            continue
        share = "" if d.share is None else f" ({d.share:.0%})" if d.share >= 0.01 else " (<1%)"
        parts.append(f"~{_us(d.setup_ns)} of {_us(d.total_ns)}{share}{at(d)}")
    text = f"Set-up: {who} spends {'; '.join(parts)} {d0.setup}"
    if d0.method != codes.BY_DIFFERENCE:
        return text + " (timed alone)."

    def per_size(values: list[tuple[schema.Decomposition, float | None]]) -> str:
        figures = ", ".join(_us(v) for _, v in values)
        listed = ", ".join(units.short(d.size, unit) for d, _ in values)
        return figures + (f" at {listed}" if several else "")

    text += f"; done once, {d0.prepared} takes {per_size([(d, d.prepared_ns) for d in split])}"
    if d0.prepared.endswith("on the same libcrypto"):
        text += " (so the difference also counts the call's other per-call work)"
    alone = [(d, d.alone_ns) for d in split if d.alone_ns is not None]
    if alone:
        text += f"; {d0.alone} alone takes {per_size(alone)}"
    return text + "."


def _us(ns: float | None) -> str:
    if ns is None:
        return "?"
    us = ns / 1000
    if abs(us) >= 100:
        return f"{us:,.0f} µs"
    return f"{us:.1f} µs" if abs(us) >= 10 else f"{us:.2f} µs"


def cost(ctx: Context, scenario: str) -> list[Note]:
    """-v: cycles per byte and the share of the machine's best."""
    if not ctx.verbose:
        return []
    return [Note(NoteKind.FINDING, t) for t in words.cost_lines(ctx.report.cpu_time, scenario)]


# -- the run's caveats -----------------------------------------------------------------


def caveats(ctx: Context) -> list[Note]:
    """Nothing under -q; otherwise what limits the numbers, each kind once."""
    if ctx.quiet:
        return []
    out = runtime_warnings(ctx) + unmarked_unstable(ctx) + sizes_hint(ctx)
    out += concurrency_warnings(ctx)
    n = ctx.report.noise
    if n is not None:
        n = _expressions_named(ctx, n)
        # What the machine and the cells did (bridge.view.words; a report from
        # before the findings: its stored warnings, their statistics' names
        # left to -v).
        warned = [plain(ctx, w) for w in words.noise_lines(n, ctx.verbose)]
        if ctx.verbose or not warned:
            out.append(Note(NoteKind.CAVEAT, machine_line(n)))
        out += [Note(NoteKind.WARNING, _sentence(w)) for w in warned]
        advice = words.noise_advice(n)
        if advice:
            out.append(Note(NoteKind.ADVICE, _sentence(advice)))
    return out


def _expressions_named(ctx: Context, n: schema.Noise) -> schema.Noise:
    """The noise findings with each of the user's expressions named as the
    table names it (its label, or the expression where short), not by its
    call id (expr:83f2aa0a), which `bridge time` shows nowhere else."""
    named = {
        r.call_id: short_call(r)
        for r in ctx.report.results
        if r.call_id.startswith(calls.USER_PREFIX)
    }
    if not named:
        return n

    def cell(params: dict) -> dict:
        cid = params.get("call_id")
        return {**params, "call_id": named.get(cid, cid)} if isinstance(cid, str) else params

    def renamed(r: Reason) -> Reason:
        params = cell(dict(r.params))
        if isinstance(params.get("calls"), list | tuple):
            params["calls"] = [
                [c[0], named.get(c[1], c[1]), *c[2:]] if isinstance(c, list | tuple) else c
                for c in params["calls"]
            ]
        if isinstance(params.get("cells"), list | tuple):
            params["cells"] = [cell(dict(c)) if isinstance(c, dict) else c for c in params["cells"]]
        return Reason(r.why, params)

    return dataclasses.replace(n, findings=tuple(renamed(r) for r in n.findings))


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def sizes_hint(ctx: Context) -> list[Note]:
    """Once per view, where it would work: two versions of a bytes scenario
    measured at one size, so no cost model splits their difference."""
    if any(
        u.delta_a_ns is None and ctx.unit(u.scenario) == units.BYTES for u in ctx.report.upgrades
    ):
        return [Note(NoteKind.ADVICE, words.SPLIT_HINT)]
    return []


def machine_line(n: schema.Noise) -> str:
    parts = [f"{n.seconds:.1f} s"]
    if n.load_before is not None and n.load_after is not None:
        parts.append(f"load average {n.load_before[0]:.2f} before, {n.load_after[0]:.2f} after")
    if n.others_cpus is not None:
        parts.append(f"other processes {n.others_cpus:.2f} CPUs, bridge {n.bridge_cpus:.2f}")
    if n.steal is not None:
        parts.append(f"steal {n.steal:.1%}")
    return "During the run: " + ", ".join(parts) + "."


def runtime_warnings(ctx: Context) -> list[Note]:
    """Differences between runtimes that change what the numbers mean."""
    report = ctx.report
    seen: dict[str, str] = {}
    for rt in report.runtimes:
        for path in rt.details.libcrypto_loaded:
            seen.setdefault(path, rt.id)
    out = []
    if len(seen) > 1:
        where = ", ".join(f"{rid}: {path}" for path, rid in seen.items())
        out.append(f"The runtimes load different libcrypto files ({where}).")
    cryptography = uses_cryptography(report)
    for rt in report.runtimes:
        d = rt.details
        if not isinstance(d, provenance.PythonDetails):
            continue
        if not d.hashlib_uses_openssl:
            out.append(f"{rt.id} hashlib uses its built-in code, not OpenSSL.")
        own = d.cryptography_openssl_version
        system = d.ssl_openssl_version
        if (
            rt.id in cryptography
            and not rt.masked
            and own
            and own.split()[:2] != system.split()[:2]
        ):
            out.append(
                f"{rt.id} runs its cryptography rows on the {own} inside the cryptography"
                f" package, not on the system's {system}."
            )
    return [Note(NoteKind.WARNING, t) for t in out]


# Python calls on libcrypto through the ssl module, not the cryptography package.
_SSL_MODULE_OPS = frozenset({"rand_bytes", "tls_handshake", "tls"})


def uses_cryptography(report: schema.Report) -> set[str]:
    """The Python runtimes with rows that run on the cryptography package
    (and so on its own OpenSSL): only those earn its warning."""
    out = set()
    for r in report.results:
        if report.kind_of(r.runtime) != RuntimeKind.PYTHON or r.call_id.startswith(
            calls.USER_PREFIX
        ):
            continue
        call = calls.lookup(RuntimeKind.PYTHON, r.call_id)
        if (
            call
            and call.route is calls.Route.LIBCRYPTO
            and call.op not in _SSL_MODULE_OPS
            and not call.op.startswith("tls")
        ):
            out.add(r.runtime)
    return out


def unmarked_unstable(ctx: Context) -> list[Note]:
    """Unstable cells without a row to mark (none in a report bridge wrote)."""
    rows = {(r.scenario, r.runtime, r.call_id, r.size, r.hw) for r in ctx.report.results if r.ok}
    rest = [
        u
        for u in ctx.report.unstable
        if (u.scenario, u.runtime, u.call_id, u.size, u.hw) not in rows
    ]
    if not rest:
        return []
    cells = "; ".join(
        f"{u.runtime} {u.call_id} {units.at(ctx.report, u.scenario, u.size, brief=True)}"
        f" hw {u.hw}: ±{u.ci_halfwidth * 100:.1f}%"
        for u in rest
    )
    return [Note(NoteKind.CAVEAT, f"Unstable (95% CI wider than the target): {cells}.")]


_AUTOGROUP = "linux autogroup is on"


def concurrency_warnings(ctx: Context) -> list[Note]:
    """The level run's warnings, where they apply: the autogroup note only
    when Python worker processes ran."""
    c = ctx.report.concurrency
    if c is None:
        return []
    python_procs = any(
        ctx.report.kind_of(cell.runtime) == RuntimeKind.PYTHON and cell.mode == "processes"
        for cell in c.cells
    )
    out = []
    for w in words.concurrency_lines(c, ctx.verbose):
        # A report from before the findings said autogroup of every run.
        if not c.findings and w.lower().startswith(_AUTOGROUP) and not python_procs:
            continue
        out.append(Note(NoteKind.WARNING, _sentence(w)))
    return out


# -- problems, provenance --------------------------------------------------------------


def problems(ctx: Context) -> list[Note]:
    said = [Note(NoteKind.PROBLEM, words.skipped(s)) for s in ctx.report.skipped]
    return said + [
        Note(NoteKind.PROBLEM, words.error(e), lines=words.stderr_lines(e))
        for e in ctx.report.errors
    ]


def title(report: schema.Report) -> str:
    if report.imported_from is not None:
        return f"bridge {report.bridge_version} · imported from {report.imported_from}"
    return f"bridge {report.bridge_version} · {report.created} · seed {report.seed}"


def brief_provenance(report: schema.Report) -> str:
    """bridge, the machine, each runtime with its libcrypto, in one paragraph."""
    head = title(report)
    env = report.environment
    if env.described:
        virt = ", virtualized" if env.virtualized else ""
        flags = " ".join(env.cpu_flags) or "none"
        head += (
            f" · {_or(env.cpu_model, 'unknown CPU')} ({_or(env.arch, '?')},"
            f" {_or(env.cpu_count, '?')} CPUs{virt}); crypto flags: {flags}"
        )
    if report.imported_from is not None:
        pasted = [f"{rt.id}: {runtime_summary(rt)}" for rt in report.runtimes]
        return head + (f"; {'; '.join(pasted)}." if pasted else "")
    runtimes = []
    for rt in report.runtimes:
        if rt.masked:
            continue
        lib = _libcrypto_of(rt)
        runtimes.append(rt.id + (f" ({lib})" if lib else ""))
    return head + (f"; {', '.join(runtimes)}." if runtimes else "")


def _or(value: object, absent: str) -> object:
    """A machine fact, or what to say where the report has none."""
    return absent if value is None else value


def _libcrypto_of(rt: schema.Runtime) -> str:
    lib = rt.details.library if rt.kind != RuntimeKind.OPENSSL else ""
    if not lib:
        return ""
    words = str(lib).split()
    return " ".join(words[:2]) if words[:1] == ["OpenSSL"] else str(lib)


def environment(report: schema.Report) -> list[str]:
    """The machine, each runtime once, and the masks (one item per mask)."""
    env = report.environment
    items = []
    if env.described:
        virt = ", virtualized" if env.virtualized else ""
        flags = " ".join(env.cpu_flags) or "none"
        items.append(
            f"CPU: {env.cpu_model} ({env.arch}, {env.cpu_count} CPUs{virt}); crypto flags: {flags}"
        )
        items.append(f"OS: {env.os}, kernel {env.kernel}")
    seen: set[str] = set()
    for rt in report.runtimes:
        if rt.id not in seen:
            seen.add(rt.id)
            items.append(f"{rt.id}: {runtime_summary(rt)}{given_summary(rt)}")
    masks: dict[tuple[str, str], list[str]] = {}
    for exp in report.hardware.experiments or ():
        if exp.mask:
            masks.setdefault((exp.mask.variable, exp.mask.value), []).append(exp.runtime)
    for (variable, value), ids in masks.items():
        who = "every runtime" if len(ids) > 1 and set(ids) == seen else ", ".join(ids)
        items.append(f"hw off: {variable}={value} ({who})")
    return items


def given_summary(rt: schema.Runtime) -> str:
    """What the user gave one runtime (--env, --libcrypto)."""
    text = "".join(f"; {k}={v}" for k, v in rt.details.given_env.items())
    other = rt.details.libcrypto_dir
    if other is not None:
        text += f"; libcrypto {other.file} ({other.version}), mapped as"
        text += f" {', '.join(other.maps or ['?'])}"
    return text


def runtime_summary(rt: schema.Runtime) -> str:
    d = rt.details
    if isinstance(d, provenance.ErlangDetails):
        return (
            f"OTP {d.otp_version}, erts {d.erts_version}, {d.emu_flavor},"
            f" crypto {d.crypto_app_version}, crypto:info_lib(): {d.crypto_lib}"
        ) + _node_summary(d.node)
    if isinstance(d, provenance.PythonDetails):
        impl = "OpenSSL" if d.hashlib_uses_openssl else "built-in (not OpenSSL)"
        own = d.cryptography_openssl_version
        return f"{rt.version} ({rt.executable}), ssl: {d.ssl_openssl_version}, hashlib: {impl}" + (
            f", cryptography: {own}" if own else ""
        )
    if isinstance(d, provenance.ImportedDetails):
        return d.label or rt.version
    if rt.kind == RuntimeKind.OPENSSL:
        return f"{rt.version} ({rt.executable})"
    return rt.version


def _node_summary(node: provenance.NodeInfo | None) -> str:
    """A running node's own host and what bridge did there."""
    if node is None:
        return ""
    cpu = node.cpu
    virt = ", virtualized" if cpu is not None and cpu.virtualized else ""
    host = node.hostname or node.host
    text = f"; running node {node.name} (os pid {node.os_pid}) on host {host}"
    if cpu is not None:
        flags = " ".join(cpu.flags) or "none"
        text += f": {cpu.model} ({cpu.arch}{virt}), crypto flags: {flags}"
    agent = node.agent
    if agent is not None:
        text += (
            f"; measured by bridge's agent (built by {agent.compiled_by}) at most"
            f" {float(agent.max_load):.0%} of one scheduler busy"
        )
    if node.provenance:
        text += f"; {node.provenance}"
    return text


def verdict_details(ctx: Context, scenario: str) -> list[Note]:
    """-v: each hardware verdict in full, one line per call and size (a
    report from before the reasons: as hw stored it)."""
    if not ctx.verbose:
        return []
    unit = ctx.unit(scenario)
    several = unit == units.PER_CALL and len(units.sizes_run(ctx.report, scenario)) > 1
    return [
        Note(
            NoteKind.FINDING,
            words.explanation(v, words.who(ctx.report.kind_of(v.runtime), v.call), unit, several),
        )
        for v in ctx.report.verdicts
        if v.scenario == scenario
    ]
