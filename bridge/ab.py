"""A/B runs: which features to mask for each runtime, and the verdicts.

For every runtime started as found (hw "on"), `plan` decides whether a twin
with the features masked (hw "off") can run, and with which mask. Features
that cannot be tested get their verdict here, without numbers (cpu-lacks,
masked, cannot-test). After the run, `verdicts` pairs each on-result with its
off-result and asks bridge.verdicts for the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bridge import hardware, model, verdicts
from bridge.scenario import Scenario


@dataclass
class HwContext:
    """What the A/B experiment can do for one runtime."""

    runtime_id: str
    library: tuple[str, tuple[int, int, int]] | None
    mask: hardware.Mask | None = None
    untestable: dict[str, verdicts.Verdict] = field(default_factory=dict)  # feature -> verdict
    mask_check: dict[str, Any] | None = None  # evidence the mask took effect

    def to_json(self) -> dict[str, Any]:
        return {
            "runtime": self.runtime_id,
            "mask": None
            if self.mask is None
            else {
                "variable": self.mask.variable,
                "value": self.mask.value,
                "features": list(self.mask.features),
            },
            "mask_check": self.mask_check,
            "untestable": {f: v.verdict for f, v in self.untestable.items()},
        }


def library_of(info: model.Runtime) -> tuple[str, tuple[int, int, int]] | None:
    """The libcrypto a runtime uses, as (name, version)."""
    d = info.details
    text = {
        "erlang": d.get("crypto_lib", ""),
        "python": d.get("ssl_openssl_version", ""),
        "openssl": info.version,
    }.get(info.kind, "")
    return hardware.parse_library(text)


def plan(
    info: model.Runtime,
    features: Sequence[str],
    cpu: hardware.Cpu,
    env: Mapping[str, str],
    armcap_detected: int | None,
) -> HwContext:
    library = library_of(info)
    ctx = HwContext(runtime_id=info.id, library=library)
    gen = hardware.generation(library[1]) if library else "3.0"
    testable = []
    for feature in features:
        has = cpu.has(feature)
        if has is False:
            ctx.untestable[feature] = verdicts.decide(None, None, cpu_has=False)
        elif has is None:
            ctx.untestable[feature] = verdicts.decide(None, None, cpu_has=None)
        elif hardware.feature_disabled_by(dict(env), feature, cpu.arch, gen):
            ctx.untestable[feature] = verdicts.decide(None, None, already_masked=True)
        else:
            testable.append(feature)
    if testable:
        try:
            ctx.mask = hardware.mask_for(tuple(testable), cpu.arch, library, armcap_detected)
        except hardware.CannotMask as exc:
            for feature in testable:
                ctx.untestable[feature] = verdicts.decide(None, None, cannot_mask=str(exc))
    return ctx


def via_openssl(info: model.Runtime, call_id: str) -> bool:
    """Does this call reach OpenSSL? Python may hash with built-in code."""
    d = info.details
    if info.kind == "python":
        if call_id.startswith("hmac"):
            return str(d.get("hmac_impl", "")).startswith("_hashlib")
        return bool(d.get("hashlib_uses_openssl", True))
    lib = library_of(info)
    return lib is None or lib[0] == "OpenSSL"


def verdict_list(
    scenarios: Sequence[Scenario],
    results: Sequence[model.Result],
    runtimes: Sequence[model.Runtime],
    contexts: Mapping[str, HwContext],
) -> list[dict[str, Any]]:
    on_info = {rt.id: rt for rt in runtimes if rt.details.get("hw", "on") == "on"}
    by_key = {(r.scenario, r.runtime, r.call_id, r.size, r.hw): r for r in results}
    out = []
    for sc in scenarios:
        for r in results:
            if r.scenario != sc.name or r.hw != "on" or r.status != "ok":
                continue
            ctx, info = contexts.get(r.runtime), on_info.get(r.runtime)
            if ctx is None or info is None:
                continue
            off = by_key.get((r.scenario, r.runtime, r.call_id, r.size, "off"))
            for feature in _verdict_features(sc.features, ctx):
                v = _decide(ctx, info, r, off, feature)
                best = _best_speedup(results, by_key, r) if v.verdict == "used" else None
                who = _who(info, r)
                out.append(
                    {
                        "scenario": sc.name,
                        "runtime": r.runtime,
                        "call": r.call,
                        "call_id": r.call_id,
                        "feature": feature,
                        "size": r.size,
                        "verdict": v.verdict,
                        "speedup": v.speedup,
                        "speedup_ci95": list(v.ci95) if v.ci95 else None,
                        "explanation": verdicts.explain(
                            v,
                            who=who,
                            feature=hardware.FEATURE_NAMES.get(feature, feature),
                            size=r.size,
                            best=best,
                        ),
                    }
                )
    return out


def _verdict_features(features: Sequence[str], ctx: HwContext) -> list[str]:
    """One verdict per experiment: features masked together (AES-NI with
    PCLMULQDQ for GCM) share one masked run, so they get one verdict, named
    "aes+pclmul"; untestable features keep their own."""
    out = [f for f in features if f in ctx.untestable]
    if ctx.mask is not None:
        together = [f for f in features if f in ctx.mask.features]
        if together:
            out.append("+".join(together))
    return out


def feature_name(feature: str) -> str:
    parts = [hardware.FEATURE_NAMES.get(f, f) for f in feature.split("+")]
    if len(parts) == 1:
        return parts[0]
    return " and ".join(p.split(" (")[0] for p in parts) + " (masked together)"


def _decide(ctx, info, on, off, feature) -> verdicts.Verdict:
    if feature in ctx.untestable:
        return ctx.untestable[feature]
    if not via_openssl(info, on.call_id):
        return verdicts.decide(None, None, via_openssl=False)
    if ctx.mask_check is not None and ctx.mask_check.get("ok") is False:
        return verdicts.decide(None, None, cannot_mask="the mask did not take effect")
    if off is None or off.status != "ok":
        return verdicts.decide(None, None, cannot_mask="the masked run has no measurement")
    return verdicts.decide(on.per_op_ns(), off.per_op_ns())


def _best_speedup(results, by_key, r) -> tuple[int, float] | None:
    """(size, speedup) of the largest off/on ratio of this call in its scenario."""
    best = None
    for other in results:
        if (other.scenario, other.runtime, other.call_id, other.hw) != (
            r.scenario,
            r.runtime,
            r.call_id,
            "on",
        ) or other.status != "ok":
            continue
        off = by_key.get((other.scenario, other.runtime, other.call_id, other.size, "off"))
        if off is None or off.status != "ok":
            continue
        ratio = off.summary().median / other.summary().median
        if best is None or ratio > best[1]:
            best = (other.size, ratio)
    return best


def _who(info: model.Runtime, r: model.Result) -> str:
    if info.kind == "openssl":
        return r.call  # already reads "openssl speed ..."
    name = {"erlang": "Erlang", "python": "Python"}.get(info.kind, info.kind)
    return f"{name} {r.call}"


def kinds_features(scenarios: Sequence[Scenario], kind: str) -> tuple[str, ...]:
    """Features relevant to a runtime kind: those of the scenarios it runs."""
    seen: list[str] = []
    for sc in scenarios:
        if kind in sc.calls:
            seen += [f for f in sc.features if f not in seen]
    return tuple(seen)
