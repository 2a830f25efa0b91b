"""`bridge env`: the machine, each runtime's provenance, and the masks; the
user's home directory as ~ (bridge.view.home)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bridge import plain
from bridge.catalog import vocab
from bridge.report import provenance, schema
from bridge.view import home
from bridge.view.notes import runtime_summary


@plain.escaped
def render_env(
    env: dict[str, Any],
    runtimes: list[schema.Runtime],
    hw: dict[str, Any],
    quiet: Sequence[str] = (),
    libraries: Mapping[str, str] | None = None,
) -> str:
    """`quiet`: how quiet the machine is, in lines; `libraries`: per runtime,
    what its libcrypto says about its build (bridge.cli.machine words both)."""
    lines = [
        f"CPU: {env.get('cpu_model')} ({env.get('arch')}, {env.get('cpu_count')} CPUs)",
        f"virtualized: {'yes (hypervisor flag)' if env.get('virtualized') else 'no'}",
        f"crypto flags: {' '.join(env.get('cpu_flags', [])) or 'none'}",
    ]
    for feature, present in env.get("features", {}).items():
        name = vocab.FEATURE_NAMES.get(feature, feature)
        lines.append(f"  {name}: {'offered by the CPU' if present else 'not offered'}")
    lines.append(f"OS: {env.get('os')}, kernel {env.get('kernel')}")
    if "cpu_governor" in env:
        lines.append(f"CPU frequency governor: {env['cpu_governor']}")
    if "turbo" in env:
        lines.append(f"turbo/boost: {'on' if env['turbo'] else 'off'}")
    if "smt_siblings" in env:
        groups = "; ".join(",".join(map(str, g)) for g in env["smt_siblings"])
        lines.append(f"SMT siblings: {groups or 'none (one thread per core)'}")
    lines.append("")
    for rt in runtimes:
        lines.append(f"{rt.id}: {runtime_summary(rt)}")
        d = rt.details
        if d.libcrypto_loaded:
            lines.append(f"  libcrypto loaded: {', '.join(d.libcrypto_loaded)}")
        if isinstance(d, provenance.OpensslDetails | provenance.ImportedDetails) and d.cpuinfo:
            lines.append(f"  libcrypto detected: {d.cpuinfo}")
        if isinstance(d, provenance.PythonDetails):
            lines.append(f"  hashlib sha256 type: {d.hashlib_sha256_type}, hmac: {d.hmac_impl}")
    lines.append("")
    for exp in hw.get("experiments", []):
        mask = exp.get("mask")
        if mask:
            check = exp.get("mask_check") or {}
            verified = {
                True: "checked with openssl version -c",
                False: "DID NOT TAKE EFFECT",
                None: check.get("note", "not checked"),
            }[check.get("ok")]
            lines.append(
                f"{exp['runtime']}: masks {'+'.join(mask['features'])} with"
                f" {mask['variable']}={mask['value']} ({verified})"
            )
        for feature, verdict in exp.get("untestable", {}).items():
            lines.append(f"{exp['runtime']}: {feature}: {verdict}")
        if (libraries or {}).get(exp["runtime"]):
            lines.append(f"{exp['runtime']}: {libraries[exp['runtime']]}")
    for s in hw.get("skipped", []):
        lines.append(f"skipped {s['runtime']}: {s['reason']}")
    for e in hw.get("errors", []):
        lines.append(f"error: {e['message']}")
    if quiet:  # how quiet the machine is (bridge.cli.machine words bridge.analysis.quietness)
        lines += ["", *quiet]
    return home.tilde("\n".join(lines).rstrip() + "\n")
