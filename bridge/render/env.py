"""`bridge env`: the machine, each runtime's provenance, and the masks."""

from __future__ import annotations

from typing import Any

from bridge import model, vocab
from bridge.render import common


def render_env(env: dict[str, Any], runtimes: list[model.Runtime], hw: dict[str, Any]) -> str:
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
    lines.append("")
    for rt in runtimes:
        lines.append(f"{rt.id}: {common.runtime_summary(rt)}")
        loaded = rt.details.get("libcrypto_loaded") or []
        if loaded:
            lines.append(f"  libcrypto loaded: {', '.join(loaded)}")
        if rt.details.get("cpuinfo"):
            lines.append(f"  libcrypto detected: {rt.details['cpuinfo']}")
        if rt.kind == "python":
            lines.append(
                f"  hashlib sha256 type: {rt.details.get('hashlib_sha256_type')},"
                f" hmac: {rt.details.get('hmac_impl')}"
            )
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
    for s in hw.get("skipped", []):
        lines.append(f"skipped {s['runtime']}: {s['reason']}")
    for e in hw.get("errors", []):
        lines.append(f"error: {e['message']}")
    return "\n".join(lines).rstrip() + "\n"
