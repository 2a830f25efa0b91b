"""`bridge env --node`: what each running node uses, and the verdict."""

from __future__ import annotations

import textwrap

from bridge import plain
from bridge.report import provenance, schema

WIDTH = 100


@plain.escaped
def render_nodes(runtimes: list[schema.Runtime], ab: dict[str, str]) -> str:
    out: list[str] = []
    for rt in runtimes:
        out += [*node_lines(rt, ab.get(rt.id, "")), ""]
    return "\n".join(out).rstrip() + "\n"


def node_lines(rt: schema.Runtime, ab: str) -> list[str]:
    d, node = rt.details, rt.node
    if not isinstance(d, provenance.ErlangDetails) or node is None:
        return [rt.id]  # not a running node: bridge env --node lists only those
    lines = [
        f"{node.name or rt.executable}: OTP {d.otp_version}, erts"
        f" {d.erts_version}, {d.emu_flavor or 'emu'}; os pid {node.os_pid};"
        f" {node.code_mode} mode",
    ]
    items = [("crypto", _crypto(d))]
    if d.libcrypto_loaded:
        items.append(("libcrypto mapped", ", ".join(d.libcrypto_loaded)))
    env = d.env
    items.append(
        (
            "environment",
            ", ".join(f"{k}={v}" if v is not None else f"{k} not set" for k, v in env.items()),
        )
    )
    cpu = node.cpu
    if cpu is not None:
        virt = ", virtualized" if cpu.virtualized else ""
        items.append(
            (
                f"host {node.hostname or node.host}",
                f"{cpu.model} ({cpu.arch}{virt}); crypto flags: {' '.join(cpu.flags) or 'none'}",
            )
        )
    items.append(("verdict", node.provenance))
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


def _crypto(d: provenance.ErlangDetails) -> str:
    if not d.crypto_lib:
        return f"{d.crypto_app_version or '?'}, not loaded on the node"
    info = d.crypto_info
    extra = []
    compiled = info.cryptolib_version_compiled
    if compiled:
        extra.append(f"compiled against {compiled}, {info.link_type or '?'} link")
    if d.crypto_fips:
        extra.append(f"crypto:info_fips(): {d.crypto_fips}")
    if info.fips_provider_available is not None:
        available = "yes" if info.fips_provider_available is True else "no"
        extra.append(f"FIPS provider available: {available}")
    tail = f" ({'; '.join(extra)})" if extra else ""
    return f"{d.crypto_app_version}, crypto:info_lib(): {d.crypto_lib}{tail}"
