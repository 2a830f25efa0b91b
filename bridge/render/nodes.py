"""`bridge env --node`: what each running node uses, and the verdict."""

from __future__ import annotations

import textwrap

from bridge import plain
from bridge.report import schema

WIDTH = 100


@plain.escaped
def render_nodes(runtimes: list[schema.Runtime], ab: dict[str, str]) -> str:
    out: list[str] = []
    for rt in runtimes:
        out += [*node_lines(rt, ab.get(rt.id, "")), ""]
    return "\n".join(out).rstrip() + "\n"


def node_lines(rt: schema.Runtime, ab: str) -> list[str]:
    d, node = rt.details, rt.details.get("node", {})
    flavor = d.get("emu_flavor") or "emu"
    lines = [
        f"{node.get('name', rt.executable)}: OTP {d.get('otp_version')}, erts"
        f" {d.get('erts_version')}, {flavor}; os pid {node.get('os_pid')};"
        f" {node.get('code_mode')} mode",
    ]
    items = [("crypto", _crypto(rt))]
    mapped = d.get("libcrypto_loaded") or []
    if mapped:
        items.append(("libcrypto mapped", ", ".join(mapped)))
    env = d.get("env") or {}
    items.append(
        (
            "environment",
            ", ".join(f"{k}={v}" if v is not None else f"{k} not set" for k, v in env.items()),
        )
    )
    cpu = node.get("cpu")
    if cpu:
        virt = ", virtualized" if cpu.get("virtualized") else ""
        items.append(
            (
                f"host {node.get('hostname') or node.get('host')}",
                f"{cpu.get('model')} ({cpu.get('arch')}{virt}); crypto flags:"
                f" {' '.join(cpu.get('flags') or []) or 'none'}",
            )
        )
    items.append(("verdict", node.get("provenance", "")))
    if ab:
        items.append(("A/B", ab))
    for label, value in items:
        lines += textwrap.wrap(
            f"{label}: {value}",
            WIDTH,
            initial_indent="  ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    return lines


def _crypto(rt: schema.Runtime) -> str:
    d = rt.details
    if not d.get("crypto_lib"):
        return f"{d.get('crypto_app_version') or '?'}, not loaded on the node"
    info = d.get("crypto_info") or {}
    extra = []
    compiled = info.get("cryptolib_version_compiled")
    if compiled:
        extra.append(f"compiled against {compiled}, {info.get('link_type', '?')} link")
    if d.get("crypto_fips"):
        extra.append(f"crypto:info_fips(): {d['crypto_fips']}")
    if "fips_provider_available" in info:
        available = "yes" if info["fips_provider_available"] is True else "no"
        extra.append(f"FIPS provider available: {available}")
    tail = f" ({'; '.join(extra)})" if extra else ""
    return f"{d.get('crypto_app_version')}, crypto:info_lib(): {d.get('crypto_lib')}{tail}"
