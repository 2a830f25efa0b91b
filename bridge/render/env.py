"""`bridge env`: the machine, each runtime's provenance, and the masks; and
the environment block of the pasted views (`paste_items`). Both show the
user's home directory as ~ (bridge.render.home)."""

from __future__ import annotations

from typing import Any

from bridge import plain
from bridge.analysis import quietness
from bridge.analysis.quietness import Quietness
from bridge.catalog import vocab
from bridge.hw import whynot as hw_whynot
from bridge.render import common
from bridge.report import schema
from bridge.report.whynot import LibraryBuild, Sign
from bridge.view import home, words


@plain.escaped
def render_env(
    env: dict[str, Any],
    runtimes: list[schema.Runtime],
    hw: dict[str, Any],
    quiet: Quietness | None = None,
) -> str:
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
        if exp.get("library"):
            lines.append(f"{exp['runtime']}: {_library(LibraryBuild.from_json(exp['library']))}")
    for s in hw.get("skipped", []):
        lines.append(f"skipped {s['runtime']}: {s['reason']}")
    for e in hw.get("errors", []):
        lines.append(f"error: {e['message']}")
    if quiet is not None:
        lines += ["", *quietness_lines(quiet)]
    return home.tilde("\n".join(lines).rstrip() + "\n")


def _library(build: LibraryBuild) -> str:
    """What a runtime's libcrypto says about its build: why no mask can
    change what it runs, or what says it has assembler."""
    found = hw_whynot.library(build)
    if found is not None:
        return words.why_not(found)
    said = []
    for sign, shown in (
        (Sign.ASM_CODE, "{} assembler modules in its file"),
        (Sign.ASM_FLAG, "{} on its compiler line"),
        (Sign.CAPVECTOR, "capability vector {}"),
    ):
        said += [shown.format(c.text) for c in build.has(sign)[:1]]
    return f"{build.file or 'libcrypto'}: {', '.join(said) or 'nothing could be read'}"


def paste_items(report: schema.Report) -> list[str]:
    """The environment of a pasted view as short items: CPU, OS, each runtime
    once, and the masks, one item per mask with the runtimes it was given to
    (six runtimes masked alike are one line, not six)."""
    env = report.environment
    items = []
    if env:
        virt = ", virtualized" if env.get("virtualized") else ""
        flags = " ".join(env.get("cpu_flags", [])) or "none"
        items.append(
            f"CPU: {env.get('cpu_model')} ({env.get('arch')}, {env.get('cpu_count')}"
            f" CPUs{virt}); crypto flags: {flags}"
        )
        items.append(f"OS: {env.get('os')}, kernel {env.get('kernel')}")
    seen = set()
    for rt in report.runtimes:
        if rt.id not in seen:
            seen.add(rt.id)
            items.append(f"{rt.id}: {common.runtime_summary(rt)}{common.given_summary(rt)}")
    masks: dict[tuple[str, str], list[str]] = {}
    for exp in report.hardware.experiments or ():
        if exp.mask:
            masks.setdefault((exp.mask.variable, exp.mask.value), []).append(exp.runtime)
    for (variable, value), ids in masks.items():
        who = "every runtime" if len(ids) > 1 and set(ids) == seen else ", ".join(ids)
        items.append(f"hw off: {variable}={value} ({who})")
    return [home.tilde(i) for i in items]


def quietness_lines(q: Quietness) -> list[str]:
    ms = quietness.SAMPLE_S * 1000
    lines = [f"Quietness ({q.seconds:g} s of a fixed {ms:g} ms loop, back to back):"]
    for c in q.cpus:
        where = f"CPU {c.cpu}" if c.cpu is not None else "any CPU"
        lines.append(
            f"  {where}: CV {c.cv:.1%}, robust CV {c.robust_cv:.1%},"
            f" {c.slow:.0%} of {c.samples} samples over 5% slow, worst {c.worst:.2f}x the median"
        )
    u = q.usage
    if u is not None and u.others_cpus is not None:
        load = f"load average {u.load_after[0]:.2f}, " if u.load_after else ""
        lines.append(
            f"  meanwhile: {load}other processes {u.others_cpus:.2f} CPUs, steal {u.steal or 0:.1%}"
        )
    lines.append(f"verdict: {q.verdict}")
    lines += [f"- {words.reason(a)}" for a in q.advice]
    return lines
