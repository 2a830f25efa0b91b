"""`bridge env`: the machine, each runtime's provenance, and the masks; the
user's home directory as ~ (bridge.view.home)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bridge import plain
from bridge.catalog import vocab
from bridge.report import provenance, schema
from bridge.report.envinfo import EnvDescription
from bridge.view import home
from bridge.view.notes import runtime_summary


@plain.escaped
def render_env(
    described: EnvDescription,
    quiet: Sequence[str] = (),
    libraries: Mapping[str, str] | None = None,
) -> str:
    """`quiet`: how quiet the machine is, in lines; `libraries`: per runtime,
    what its libcrypto says about its build (bridge.cli.machine words both)."""
    env = described.environment
    lines = [
        f"CPU: {env.cpu_model} ({env.arch}, {env.cpu_count} CPUs)",
        f"virtualized: {'yes (hypervisor flag)' if env.virtualized else 'no'}",
        f"crypto flags: {' '.join(env.cpu_flags) or 'none'}",
    ]
    for feature, present in env.features.items():
        name = vocab.FEATURE_NAMES.get(feature, feature)
        lines.append(f"  {name}: {'offered by the CPU' if present else 'not offered'}")
    lines.append(f"OS: {env.os}, kernel {env.kernel}")
    if env.cpu_governor is not None:
        lines.append(f"CPU frequency governor: {env.cpu_governor}")
    if env.turbo is not None:
        lines.append(f"turbo/boost: {'on' if env.turbo else 'off'}")
    if env.smt_siblings is not None:
        groups = "; ".join(",".join(map(str, g)) for g in env.smt_siblings)
        lines.append(f"SMT siblings: {groups or 'none (one thread per core)'}")
    lines.append("")
    for rt in described.runtimes:
        lines.append(f"{rt.id}: {runtime_summary(rt)}")
        d = rt.details
        if d.libcrypto_loaded:
            lines.append(f"  libcrypto loaded: {', '.join(d.libcrypto_loaded)}")
        if isinstance(d, provenance.OpensslDetails | provenance.ImportedDetails) and d.cpuinfo:
            lines.append(f"  libcrypto detected: {d.cpuinfo}")
        if isinstance(d, provenance.PythonDetails):
            lines.append(f"  hashlib sha256 type: {d.hashlib_sha256_type}, hmac: {d.hmac_impl}")
    lines.append("")
    hw = described.hardware
    for exp in hw.experiments:
        if exp.mask is not None:
            lines.append(
                f"{exp.runtime}: masks {'+'.join(exp.mask.features)} with"
                f" {exp.mask.variable}={exp.mask.value} ({_checked(exp.mask_check)})"
            )
        for feature, verdict in exp.untestable.items():
            lines.append(f"{exp.runtime}: {feature}: {verdict}")
        if (libraries or {}).get(exp.runtime):
            lines.append(f"{exp.runtime}: {libraries[exp.runtime]}")
    for s in hw.skipped:
        lines.append(f"skipped {s.runtime}: {s.reason}")
    for e in hw.errors:
        lines.append(f"error: {e.message}")
    if quiet:  # how quiet the machine is (bridge.cli.machine words bridge.analysis.quietness)
        lines += ["", *quiet]
    return home.tilde("\n".join(lines).rstrip() + "\n")


def _checked(check: schema.MaskCheck | None) -> str:
    """Whether the mask was seen to take effect."""
    if check is None or check.ok is None:
        return check.note if check is not None and check.note is not None else "not checked"
    return "checked with openssl version -c" if check.ok else "DID NOT TAKE EFFECT"
