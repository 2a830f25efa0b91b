"""The report schema ("bridge.report/1"): every part of a report is a frozen
record with its own `to_json`/`from_json`, and this module reads and writes
whole reports.

Render, compare and plot read these records and nothing else, so a report
written today still renders later. The schema is documented in
docs/reference/report-schema.md and published as report-1.schema.json.
Rules for changing it: adding optional fields keeps version 1; removing or
changing the meaning of a field bumps the version, and `Report.from_json`
keeps reading every older version. Version handling lives in `check_schema`
alone.

Each record writes its keys in the order reports have always had them, so a
report read and written again is the same text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge import plain, stats
from bridge.errors import UsageError
from bridge.report import levels
from bridge.report.hw import Hw, HwMode

SCHEMA = "bridge.report/1"
SCHEMA_NAME, SCHEMA_VERSION = SCHEMA.split("/")
SCHEMA_VERSION_INT = int(SCHEMA_VERSION)
MAX_REPORT_BYTES = 256 * 1024 * 1024

Json = dict[str, Any]


# -- identities --------------------------------------------------------------


@dataclass(frozen=True, order=True)
class OutputKey:
    """Whose output an interop check lists: a call on a runtime, hw on or off.
    Written "erlang@25.2.3 macN hw=on" in the JSON; parsed in `parse` only."""

    runtime: str
    call_id: str
    hw: Hw

    def text(self) -> str:
        return f"{self.runtime} {self.call_id} hw={self.hw}"

    @classmethod
    def parse(cls, text: str) -> OutputKey:
        head, _, hw = text.rpartition(" hw=")
        runtime, _, call_id = head.partition(" ")
        return cls(runtime, call_id, Hw(hw))


@dataclass(frozen=True)
class CellKey:
    """One cell: a call of a scenario at one size, on one runtime, hw on or off."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw

    @property
    def output(self) -> OutputKey:
        return OutputKey(self.runtime, self.call_id, self.hw)


# -- runtimes and results ----------------------------------------------------


@dataclass(frozen=True)
class Runtime:
    """One runtime as it ran: kind erlang | python | openssl, with provenance.
    `details` holds the kind-specific provenance (free-form by design: each
    kind knows different things); `hw` says whether features were masked."""

    id: str
    kind: str
    executable: str
    version: str
    details: dict[str, Any] = field(default_factory=dict)
    hw: Hw = Hw.ON

    @property
    def masked(self) -> bool:
        return self.hw.masked

    @property
    def node_host(self) -> str:
        """The host of a running node measured over distribution (details
        "node", from `--node`); "" for a runtime bridge started itself."""
        node = self.details.get("node")
        return str(node.get("host", "")) if isinstance(node, dict) else ""

    def to_json(self) -> Json:
        return {
            "id": self.id,
            "kind": self.kind,
            "executable": self.executable,
            "version": self.version,
            **self.details,
            "hw": self.hw,
        }

    @classmethod
    def from_json(cls, d: Json) -> Runtime:
        core = {k: d[k] for k in ("id", "kind", "executable", "version")}
        details = {k: v for k, v in d.items() if k not in core and k != "hw"}
        return cls(**core, details=details, hw=Hw(d.get("hw", "on")))


@dataclass(frozen=True)
class Result:
    """One cell: a scenario's call on one runtime, at one size and hw state.

    `samples` are raw sample durations in ns; sample i covered `loops` calls
    (or `loops[i]` calls, when runs differ in length, as openssl speed runs do).
    """

    scenario: str
    runtime: str
    call: str  # as the user would write it, e.g. "crypto:macN(hmac, sha, Key, Data, 10)"
    call_id: str  # stable name for matching across reports, e.g. "macN"
    api: str  # the function actually used, e.g. "crypto:macN/5"
    semantics: str  # what one operation includes, e.g. "one-shot: key set up on every call"
    algorithm: str
    size: int
    hw: Hw  # on = the machine as found
    samples: tuple[int, ...]
    loops: int | tuple[int, ...]
    output_hex: str
    inputs: dict[str, str] | None = None
    status: str = "ok"  # ok | unsupported
    reason: str = ""
    # Imported numbers (bridge import-speed) have no samples: one value as posted.
    source: str = "measured"  # measured | imported
    point_ns: float | None = None
    source_line: int | None = None

    @property
    def key(self) -> CellKey:
        return CellKey(self.scenario, self.runtime, self.call_id, self.size, self.hw)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def imported(self) -> bool:
        return self.source == "imported"

    def per_op_ns(self) -> list[float]:
        if not self.samples and self.point_ns is not None:
            return [self.point_ns]
        if isinstance(self.loops, int):
            return [s / self.loops for s in self.samples]
        return [s / n for s, n in zip(self.samples, self.loops, strict=True)]

    def summary(self) -> stats.Summary:
        return stats.summarize(self.per_op_ns())

    def median(self) -> float:
        return self.summary().median

    def to_json(self) -> Json:
        d: Json = {
            "scenario": self.scenario,
            "runtime": self.runtime,
            "call": self.call,
            "call_id": self.call_id,
            "api": self.api,
            "semantics": self.semantics,
            "algorithm": self.algorithm,
            "size": self.size,
            "hw": self.hw,
            "status": self.status,
        }
        if self.status != "ok":
            d["reason"] = self.reason
            return d
        s = self.summary()
        ops = 1e9 / s.median if s.median > 0 else 0.0
        if self.imported:
            d["source"] = "imported"
            d["source_line"] = self.source_line
        d.update(
            ns_per_op={
                "median": s.median,
                "ci95": [s.ci95[0], s.ci95[1]] if self.samples else None,
                "mean": s.mean,
                "stdev": s.stdev if self.samples else None,
                "min": s.min,
            },
            ops_per_s=ops,
            bytes_per_s=ops * self.size,
            loops=self.loops if isinstance(self.loops, int) else list(self.loops),
            samples=list(self.samples),
            output_hex=self.output_hex,
        )
        if self.inputs:
            d["inputs"] = self.inputs
        return d

    @classmethod
    def from_json(cls, d: Json) -> Result:
        loops = d.get("loops", 1)
        imported = d.get("source") == "imported"
        return cls(
            scenario=d["scenario"],
            runtime=d["runtime"],
            call=d["call"],
            call_id=d.get("call_id", d["call"]),
            api=d.get("api", ""),
            semantics=d.get("semantics", ""),
            algorithm=d.get("algorithm", ""),
            size=int(d["size"]),
            hw=Hw(d.get("hw", "on")),
            samples=tuple(int(s) for s in d.get("samples", ())),
            loops=loops if isinstance(loops, int) else tuple(int(n) for n in loops),
            output_hex=d.get("output_hex", ""),
            inputs=d.get("inputs"),
            status=d.get("status", "ok"),
            reason=d.get("reason", ""),
            source=d.get("source", "measured"),
            point_ns=float(d["ns_per_op"]["median"]) if imported else None,
            source_line=d.get("source_line"),
        )


# -- checks, verdicts, fits --------------------------------------------------


@dataclass(frozen=True)
class InteropCheck:
    """Per scenario and size: each runtime's output against the reference.
    Outputs a runtime cannot give independently are listed as unchecked."""

    scenario: str
    size: int
    reference: str
    reference_from: str
    outputs: dict[OutputKey, str]
    match: bool
    mismatched: tuple[OutputKey, ...] = ()
    unchecked: tuple[OutputKey, ...] | None = ()  # None: a report from before the field
    # Why an output is not checked, for calls that declare it (optional:
    # written only when there is one).
    unchecked_reasons: dict[OutputKey, str] = field(default_factory=dict)

    def to_json(self) -> Json:
        d: Json = {
            "scenario": self.scenario,
            "size": self.size,
            "reference": self.reference,
            "reference_from": self.reference_from,
            "outputs": {k.text(): v for k, v in self.outputs.items()},
        }
        if self.unchecked is not None:
            d["unchecked"] = [k.text() for k in self.unchecked]
        if self.unchecked_reasons:
            d["unchecked_reasons"] = {k.text(): v for k, v in self.unchecked_reasons.items()}
        d["match"] = self.match
        d["mismatched"] = [k.text() for k in self.mismatched]
        return d

    @classmethod
    def from_json(cls, d: Json) -> InteropCheck:
        unchecked = d.get("unchecked")
        return cls(
            scenario=d["scenario"],
            size=int(d["size"]),
            reference=d["reference"],
            reference_from=d.get("reference_from", ""),
            outputs={OutputKey.parse(k): v for k, v in d["outputs"].items()},
            match=bool(d["match"]),
            mismatched=tuple(OutputKey.parse(k) for k in d.get("mismatched", ())),
            unchecked=None if unchecked is None else tuple(OutputKey.parse(k) for k in unchecked),
            unchecked_reasons={
                OutputKey.parse(k): str(v) for k, v in d.get("unchecked_reasons", {}).items()
            },
        )


@dataclass(frozen=True)
class HwVerdict:
    """Does a runtime's call use a hardware feature (see bridge.hw.verdicts)?"""

    scenario: str
    runtime: str
    call: str
    call_id: str
    feature: str  # one feature, or several masked together: "aes+pclmul"
    size: int
    verdict: str
    speedup: float | None
    speedup_ci95: tuple[float, float] | None
    explanation: str

    def to_json(self) -> Json:
        return {
            "scenario": self.scenario,
            "runtime": self.runtime,
            "call": self.call,
            "call_id": self.call_id,
            "feature": self.feature,
            "size": self.size,
            "verdict": self.verdict,
            "speedup": self.speedup,
            "speedup_ci95": list(self.speedup_ci95) if self.speedup_ci95 else None,
            "explanation": self.explanation,
        }

    @classmethod
    def from_json(cls, d: Json) -> HwVerdict:
        ci = d.get("speedup_ci95")
        return cls(
            scenario=d["scenario"],
            runtime=d["runtime"],
            call=d["call"],
            call_id=d["call_id"],
            feature=d["feature"],
            size=int(d["size"]),
            verdict=d["verdict"],
            speedup=d.get("speedup"),
            speedup_ci95=(ci[0], ci[1]) if ci else None,
            explanation=d.get("explanation", ""),
        )


@dataclass(frozen=True)
class CostFit:
    """The cost model of one call over a sweep: ns per call = a + b * bytes."""

    scenario: str
    runtime: str
    call: str
    call_id: str
    hw: Hw
    a_ns: float
    b_ns_per_byte: float
    gb_per_s: float | None
    r2: float
    max_rel_residual: float
    sizes: tuple[int, ...]

    def to_json(self) -> Json:
        return {
            "scenario": self.scenario,
            "runtime": self.runtime,
            "call": self.call,
            "call_id": self.call_id,
            "hw": self.hw,
            "a_ns": self.a_ns,
            "b_ns_per_byte": self.b_ns_per_byte,
            "gb_per_s": self.gb_per_s,
            "r2": self.r2,
            "max_rel_residual": self.max_rel_residual,
            "sizes": list(self.sizes),
        }

    @classmethod
    def from_json(cls, d: Json) -> CostFit:
        return cls(**{**d, "hw": Hw(d["hw"]), "sizes": tuple(d["sizes"])})


@dataclass(frozen=True)
class TcFigure:
    """--method tc: the thread's timer:tc harness on one Erlang cell, beside
    bridge's own median; or why this call cannot be timed that way."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw
    call: str = ""
    bridge_median_ns: float = 0.0
    api: str = ""
    n: int = 0
    min_us: int = 0
    max_us: int = 0
    median_us: int = 0
    avg_us: int = 0
    zero_us_calls: int = 0
    unsupported: str = ""

    def to_json(self) -> Json:
        head: Json = {"scenario": self.scenario, "runtime": self.runtime}
        tail: Json = {"call_id": self.call_id, "size": self.size, "hw": self.hw}
        if self.unsupported:
            return {**head, **tail, "unsupported": self.unsupported}
        return {
            **head,
            "call": self.call,
            **tail,
            "bridge_median_ns": self.bridge_median_ns,
            "api": self.api,
            "n": self.n,
            "min_us": self.min_us,
            "max_us": self.max_us,
            "median_us": self.median_us,
            "avg_us": self.avg_us,
            "zero_us_calls": self.zero_us_calls,
        }

    @classmethod
    def from_json(cls, d: Json) -> TcFigure:
        return cls(**{**d, "hw": Hw(d["hw"])})


@dataclass(frozen=True)
class Decomposition:
    """What share of a call is set-up (importing a key, keying an AEAD
    context), and what the call costs with the set-up done once
    (bridge.analysis.decompose). `method`: "by difference" (the whole call minus a
    prepared call) or "timed alone" (a call that does only the set-up, when
    there is no prepared call); `alone_ns` is the set-up alone whenever a
    runtime can time it. Without numbers, `note` says why it cannot be split."""

    scenario: str
    runtime: str
    call_id: str
    call: str
    size: int
    setup: str  # what the set-up is, e.g. "importing the key"
    method: str = ""
    total_ns: float | None = None
    setup_ns: float | None = None
    setup_ci95: tuple[float, float] | None = None
    prepared: str = ""  # the call that does the work without the set-up
    prepared_ns: float | None = None
    alone: str = ""  # the call that does only the set-up
    alone_ns: float | None = None
    note: str = ""

    @property
    def share(self) -> float | None:
        if self.setup_ns is None or not self.total_ns:
            return None
        return self.setup_ns / self.total_ns

    def to_json(self) -> Json:
        d = dict(self.__dict__)
        d["setup_ci95"] = list(self.setup_ci95) if self.setup_ci95 else None
        return d

    @classmethod
    def from_json(cls, d: Json) -> Decomposition:
        ci = d.get("setup_ci95")
        return cls(**{**d, "setup_ci95": (ci[0], ci[1]) if ci else None})


@dataclass(frozen=True)
class UnstableCell:
    """A cell whose 95% CI stayed wider than the target: --until-stable's, or
    the run's own (settings.ci_target: ±2%, ±5% with --quick)."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw
    ci_halfwidth: float

    def to_json(self) -> Json:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: Json) -> UnstableCell:
        return cls(**{**d, "hw": Hw(d["hw"])})


@dataclass(frozen=True)
class UpgradeSize:
    """One message size in an upgrade view: both medians and new/old."""

    size: int
    old_ns: float
    new_ns: float
    ratio: float
    ratio_ci95: tuple[float, float] | None  # None: no samples (imported numbers)

    def to_json(self) -> Json:
        ci = self.ratio_ci95
        return {**self.__dict__, "ratio_ci95": list(ci) if ci else None}

    @classmethod
    def from_json(cls, d: Json) -> UpgradeSize:
        ci = d.get("ratio_ci95")
        return cls(**{**d, "ratio_ci95": (ci[0], ci[1]) if ci else None})


@dataclass(frozen=True)
class Upgrade:
    """Two versions of one runtime kind on the same call (bridge.analysis.upgrade):
    new/old per size, and the cost model of each (ns per call = a + b*bytes)
    to say whether the difference is per call or per byte. `per_call` and
    `per_byte` are more | less | same | unknown; `same` means within noise."""

    scenario: str
    kind: str
    call: str
    call_id: str
    hw: Hw
    old: str  # runtime id ("label: id" in a comparison of reports)
    new: str
    old_version: str  # e.g. "OTP 23.2.6 on OpenSSL 1.1.1w"
    new_version: str
    sizes: tuple[UpgradeSize, ...]
    old_a_ns: float | None = None
    old_b_ns_per_byte: float | None = None
    new_a_ns: float | None = None
    new_b_ns_per_byte: float | None = None
    delta_a_ns: float | None = None
    delta_a_ci95: tuple[float, float] | None = None
    b_ratio: float | None = None
    b_ratio_ci95: tuple[float, float] | None = None
    per_call: str = "unknown"
    per_byte: str = "unknown"

    def to_json(self) -> Json:
        d = dict(self.__dict__)
        d["sizes"] = [s.to_json() for s in self.sizes]
        for name in ("delta_a_ci95", "b_ratio_ci95"):
            d[name] = list(d[name]) if d[name] else None
        return d

    @classmethod
    def from_json(cls, d: Json) -> Upgrade:
        pairs = {
            name: (d[name][0], d[name][1]) if d.get(name) else None
            for name in ("delta_a_ci95", "b_ratio_ci95")
        }
        sizes = tuple(UpgradeSize.from_json(s) for s in d["sizes"])
        return cls(**{**d, **pairs, "hw": Hw(d["hw"]), "sizes": sizes})


@dataclass(frozen=True)
class Difference:
    """One runtime's median against another's in the same run, with its
    significance (bridge.analysis.versus): against the first-named runtime of its kind
    (same call, size, hw), or against the fastest row of its table.

    ratio = median(runtime) / median(baseline), with a bootstrap 95% CI from
    the raw samples, as `bridge compare` computes it. verdict: faster | slower
    (the CI clears the noise margin and the interleaved rounds agree) | within
    noise | unresolved (too few rounds to tell a difference from drift) |
    unknown (no samples)."""

    scenario: str
    size: int
    hw: Hw
    against: str  # first-named | fastest
    runtime: str
    call_id: str
    baseline_runtime: str
    baseline_call_id: str
    ratio: float
    ci95: tuple[float, float] | None
    verdict: str
    rounds: int | None = None  # rounds with samples on both sides
    note: str = ""

    @property
    def significant(self) -> bool:
        return self.verdict in ("faster", "slower")

    def to_json(self) -> Json:
        d: Json = {
            "scenario": self.scenario,
            "size": self.size,
            "hw": self.hw,
            "against": self.against,
            "runtime": self.runtime,
            "call_id": self.call_id,
            "baseline_runtime": self.baseline_runtime,
            "baseline_call_id": self.baseline_call_id,
            "ratio": self.ratio,
            "ci95": list(self.ci95) if self.ci95 else None,
            "verdict": self.verdict,
            "rounds": self.rounds,
        }
        if self.note:
            d["note"] = self.note
        return d

    @classmethod
    def from_json(cls, d: Json) -> Difference:
        ci = d.get("ci95")
        return cls(
            **{k: d[k] for k in ("scenario", "size", "against", "runtime", "call_id")},
            hw=Hw(d["hw"]),
            baseline_runtime=d["baseline_runtime"],
            baseline_call_id=d["baseline_call_id"],
            ratio=float(d["ratio"]),
            ci95=(ci[0], ci[1]) if ci else None,
            verdict=d["verdict"],
            rounds=d.get("rounds"),
            note=d.get("note", ""),
        )


# -- noise -------------------------------------------------------------------


@dataclass(frozen=True)
class CellShape:
    """A cell whose samples are bimodal or drift (bridge.analysis.stability names the
    tests); `statistic` is Ashman's D or Spearman's z."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw
    shape: str  # bimodal | drift
    statistic: float
    detail: str

    def to_json(self) -> Json:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: Json) -> CellShape:
        return cls(**{**d, "hw": Hw(d["hw"])})


@dataclass(frozen=True)
class BusyProcess:
    """Another process that used a CPU during the run: `cpu` is its average
    share of one CPU."""

    pid: int
    name: str
    cpu: float

    def to_json(self) -> Json:
        return {"pid": self.pid, "name": self.name, "cpu": self.cpu}

    @classmethod
    def from_json(cls, d: Json) -> BusyProcess:
        return cls(int(d["pid"]), str(d["name"]), float(d["cpu"]))


@dataclass(frozen=True)
class Noise:
    """The machine during the run (bridge.analysis.noise): load, the CPU time that
    went elsewhere, other busy processes, cells with bimodal or drifting
    samples, and the warnings these gave. Shares are of all CPU time, over
    `seconds`; `*_cpus` are average numbers of CPUs. None: not measurable here."""

    seconds: float
    cpus: int | None = None
    load_before: tuple[float, ...] | None = None
    load_after: tuple[float, ...] | None = None
    busy: float | None = None
    steal: float | None = None
    iowait: float | None = None
    bridge_cpus: float | None = None
    others_cpus: float | None = None
    busy_processes: tuple[BusyProcess, ...] = ()
    cells: tuple[CellShape, ...] = ()
    driver_cpus: float | None = None
    warnings: tuple[str, ...] = ()
    advice: str = ""

    def to_json(self) -> Json:
        return {
            "seconds": self.seconds,
            "cpus": self.cpus,
            "load_before": None if self.load_before is None else list(self.load_before),
            "load_after": None if self.load_after is None else list(self.load_after),
            "busy": self.busy,
            "steal": self.steal,
            "iowait": self.iowait,
            "bridge_cpus": self.bridge_cpus,
            "driver_cpus": self.driver_cpus,
            "others_cpus": self.others_cpus,
            "busy_processes": [p.to_json() for p in self.busy_processes],
            "cells": [c.to_json() for c in self.cells],
            "warnings": list(self.warnings),
            "advice": self.advice,
        }

    @classmethod
    def from_json(cls, d: Json) -> Noise:
        def triple(key: str) -> tuple[float, ...] | None:
            v = d.get(key)
            return None if v is None else tuple(float(x) for x in v)

        return cls(
            seconds=float(d.get("seconds", 0.0)),
            cpus=d.get("cpus"),
            load_before=triple("load_before"),
            load_after=triple("load_after"),
            busy=d.get("busy"),
            steal=d.get("steal"),
            iowait=d.get("iowait"),
            bridge_cpus=d.get("bridge_cpus"),
            driver_cpus=d.get("driver_cpus"),
            others_cpus=d.get("others_cpus"),
            busy_processes=tuple(BusyProcess.from_json(p) for p in d.get("busy_processes", ())),
            cells=tuple(CellShape.from_json(c) for c in d.get("cells", ())),
            warnings=tuple(str(w) for w in d.get("warnings", ())),
            advice=str(d.get("advice", "")),
        )


# -- problems ----------------------------------------------------------------


@dataclass(frozen=True)
class RunError:
    """What failed: kind worker (died, hung, broke the protocol; with the tail
    of its stderr) | call | mismatch | interrupted."""

    runtime: str
    kind: str
    message: str
    stderr_tail: str | None = None

    def to_json(self) -> Json:
        d: Json = {"runtime": self.runtime, "kind": self.kind, "message": self.message}
        if self.stderr_tail is not None:
            d["stderr_tail"] = self.stderr_tail
        return d

    @classmethod
    def from_json(cls, d: Json) -> RunError:
        return cls(d.get("runtime", ""), d.get("kind", ""), d["message"], d.get("stderr_tail"))


@dataclass(frozen=True)
class Skipped:
    """A runtime that could not run here, and why. `requested` names the
    option that asked for it (--erl, --python, --openssl); "" for a runtime
    bridge chose itself (the one on PATH)."""

    runtime: str
    kind: str
    reason: str
    requested: str = ""

    def to_json(self) -> Json:
        d: Json = {"runtime": self.runtime, "kind": self.kind, "reason": self.reason}
        if self.requested:
            d["requested"] = self.requested
        return d

    @classmethod
    def from_json(cls, d: Json) -> Skipped:
        return cls(d.get("runtime", ""), d.get("kind", ""), d["reason"], d.get("requested", ""))


# -- the hardware experiment -------------------------------------------------


@dataclass(frozen=True)
class MaskCheck:
    """Evidence that a mask string does what bridge means (`openssl version -c`).
    ok None: not checked, and `note` says why."""

    ok: bool | None
    by: str | None = None
    note: str | None = None
    detected: str | None = None
    masked: str | None = None

    def to_json(self) -> Json:
        d: Json = {} if self.by is None else {"by": self.by}
        d["ok"] = self.ok
        for name in ("note", "detected", "masked"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        return d

    @classmethod
    def from_json(cls, d: Json) -> MaskCheck:
        return cls(
            ok=d.get("ok"),
            by=d.get("by"),
            note=d.get("note"),
            detected=d.get("detected"),
            masked=d.get("masked"),
        )


@dataclass(frozen=True)
class MaskUsed:
    variable: str  # OPENSSL_ia32cap | OPENSSL_armcap
    value: str
    features: tuple[str, ...]

    def to_json(self) -> Json:
        return {"variable": self.variable, "value": self.value, "features": list(self.features)}

    @classmethod
    def from_json(cls, d: Json) -> MaskUsed:
        return cls(d["variable"], d["value"], tuple(d["features"]))


@dataclass(frozen=True)
class HwExperiment:
    """What the A/B experiment could do for one runtime: the mask of its
    masked twin, the evidence for it, and the features it could not test."""

    runtime: str
    mask: MaskUsed | None
    mask_check: MaskCheck | None
    untestable: dict[str, str]  # feature -> verdict (cpu-lacks, masked, cannot-test)

    def to_json(self) -> Json:
        return {
            "runtime": self.runtime,
            "mask": None if self.mask is None else self.mask.to_json(),
            "mask_check": None if self.mask_check is None else self.mask_check.to_json(),
            "untestable": dict(self.untestable),
        }

    @classmethod
    def from_json(cls, d: Json) -> HwExperiment:
        mask, check = d.get("mask"), d.get("mask_check")
        return cls(
            runtime=d["runtime"],
            mask=MaskUsed.from_json(mask) if mask else None,
            mask_check=MaskCheck.from_json(check) if check is not None else None,
            untestable=dict(d.get("untestable", {})),
        )


@dataclass(frozen=True)
class Hardware:
    """The report's `hardware` block: the hw mode and one experiment per
    runtime. Imported reports have none (an empty block)."""

    hw: HwMode | None = None
    experiments: tuple[HwExperiment, ...] | None = None

    def to_json(self) -> Json:
        d: Json = {}
        if self.hw is not None:
            d["hw"] = self.hw
        if self.experiments is not None:
            d["experiments"] = [e.to_json() for e in self.experiments]
        return d

    @classmethod
    def from_json(cls, d: Json) -> Hardware:
        exps = d.get("experiments")
        return cls(
            hw=None if d.get("hw") is None else HwMode(d["hw"]),
            experiments=None if exps is None else tuple(HwExperiment.from_json(e) for e in exps),
        )

    def experiment(self, runtime_id: str) -> HwExperiment | None:
        return next((e for e in self.experiments or () if e.runtime == runtime_id), None)


# -- the report --------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    bridge_version: str
    created: str
    command: list[str]
    reproduce: str
    settings: dict[str, Any]
    environment: dict[str, Any]
    runtimes: tuple[Runtime, ...]
    results: tuple[Result, ...]
    interop: tuple[InteropCheck, ...] = ()
    errors: tuple[RunError, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    # What was run, as scenario data (bridge.catalog.scenario parses it for --replay).
    scenarios: tuple[dict[str, Any], ...] = ()
    verdicts: tuple[HwVerdict, ...] = ()
    hardware: Hardware = field(default_factory=Hardware)
    unstable: tuple[UnstableCell, ...] = ()
    fits: tuple[CostFit, ...] = ()
    tc: tuple[TcFigure, ...] = ()
    # None: a report from before the section (renderers compute it then).
    differences: tuple[Difference, ...] | None = None
    # Written only when there is one, so earlier reports re-serialise as they were.
    upgrades: tuple[Upgrade, ...] = ()
    # --concurrency: level cells and scaling (bridge.report.levels); absent otherwise.
    concurrency: levels.Concurrency | None = None
    # Optional (written only when there are any): reports from before it and
    # runs without set-up rows re-serialise unchanged.
    decompositions: tuple[Decomposition, ...] = ()
    # Added later: absent from older reports, and then not written back.
    noise: Noise | None = None
    schema: str = SCHEMA

    def runtime(self, runtime_id: str) -> Runtime | None:
        return next((r for r in self.runtimes if r.id == runtime_id), None)

    def kind_of(self, runtime_id: str) -> str:
        """The kind of a runtime named in a result. Every result's runtime is
        in `runtimes`; the id's prefix is only a fallback for hand-made files."""
        rt = self.runtime(runtime_id)
        return rt.kind if rt else runtime_id.split("@")[0].split("#")[0]

    def description(self, scenario: str) -> str:
        return str(self._scenario_data(scenario).get("description", ""))

    def scenario_kind(self, scenario: str) -> str:
        return str(self._scenario_data(scenario).get("kind", ""))

    def _scenario_data(self, name: str) -> dict[str, Any]:
        return next((sc for sc in self.scenarios if sc.get("name") == name), {})

    @property
    def seed(self) -> Any:
        return self.settings.get("seed")

    @property
    def imported_from(self) -> str | None:
        return self.settings.get("imported_from")

    def to_json(self) -> Json:
        d = self._to_json()
        # Optional sections, written only when there is one, so earlier
        # reports re-serialise as they were.
        if self.upgrades:
            d["upgrades"] = [u.to_json() for u in self.upgrades]
        if self.concurrency is not None:
            d["concurrency"] = self.concurrency.to_json()
        if self.decompositions:
            d["decompositions"] = [x.to_json() for x in self.decompositions]
        return d

    def _to_json(self) -> Json:
        return {
            "schema": self.schema,
            "bridge_version": self.bridge_version,
            "created": self.created,
            "command": list(self.command),
            "reproduce": self.reproduce,
            "settings": self.settings,
            "scenarios": list(self.scenarios),
            "environment": self.environment,
            "runtimes": [r.to_json() for r in self.runtimes],
            "results": [r.to_json() for r in self.results],
            "interop": [c.to_json() for c in self.interop],
            "verdicts": [v.to_json() for v in self.verdicts],
            "hardware": self.hardware.to_json(),
            "unstable": [u.to_json() for u in self.unstable],
            "fits": [f.to_json() for f in self.fits],
            "tc": [t.to_json() for t in self.tc],
            **(
                {}
                if self.differences is None
                else {"differences": [x.to_json() for x in self.differences]}
            ),
            "errors": [e.to_json() for e in self.errors],
            "skipped": [s.to_json() for s in self.skipped],
            **({} if self.noise is None else {"noise": self.noise.to_json()}),
        }

    @classmethod
    def from_json(cls, d: Any, source: str = "report") -> Report:
        if not isinstance(d, dict):
            raise UsageError(f"{source}: not a bridge report (the top level is not an object)")
        check_schema(d.get("schema"), source)

        def each(name: str, record: Any) -> tuple:
            return tuple(record.from_json(x) for x in d.get(name, ()))

        try:
            return cls(
                schema=SCHEMA,
                bridge_version=str(d.get("bridge_version", "")),
                created=str(d.get("created", "")),
                command=list(d.get("command", [])),
                reproduce=str(d.get("reproduce", "")),
                settings=dict(d.get("settings", {})),
                scenarios=tuple(dict(s) for s in d.get("scenarios", ())),
                environment=dict(d.get("environment", {})),
                runtimes=tuple(Runtime.from_json(r) for r in d["runtimes"]),
                results=tuple(Result.from_json(r) for r in d["results"]),
                interop=each("interop", InteropCheck),
                verdicts=each("verdicts", HwVerdict),
                hardware=Hardware.from_json(dict(d.get("hardware", {}))),
                unstable=each("unstable", UnstableCell),
                fits=each("fits", CostFit),
                tc=each("tc", TcFigure),
                upgrades=each("upgrades", Upgrade),
                differences=None if "differences" not in d else each("differences", Difference),
                errors=each("errors", RunError),
                skipped=each("skipped", Skipped),
                concurrency=(
                    levels.Concurrency.from_json(d["concurrency"])
                    if d.get("concurrency") is not None
                    else None
                ),
                decompositions=each("decompositions", Decomposition),
                noise=Noise.from_json(d["noise"]) if d.get("noise") is not None else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UsageError(f"{source}: malformed bridge report ({_describe(exc)})") from None


def check_schema(schema: Any, source: str) -> None:
    if not isinstance(schema, str) or "/" not in schema:
        raise UsageError(f"{source}: not a bridge report (no 'schema' field)")
    name, _, version = schema.partition("/")
    number = plain.whole_number(version)
    if name != SCHEMA_NAME or number is None:
        raise UsageError(f"{source}: unknown schema {schema!r}, expected {SCHEMA}")
    if number > SCHEMA_VERSION_INT:
        raise UsageError(
            f"{source}: written by a newer bridge (schema {schema});"
            f" this bridge reads up to {SCHEMA}",
            hint="upgrade bridge",
        )


def _describe(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return str(exc) or type(exc).__name__


# -- files -------------------------------------------------------------------


def load(path: str | Path) -> Report:
    """Read, bound, parse and validate a report (bridge.report.check) before
    anything renders it: a report is someone else's data."""
    from bridge import plain
    from bridge.report import check as reportcheck

    p = Path(path)
    raw = plain.read_bytes(p, MAX_REPORT_BYTES, "not a report")
    try:
        text = plain.decode(raw, str(p), "not a report")
    except UsageError:
        raise UsageError(f"{p}: not a bridge report (binary data, not JSON)") from None
    plain.check_json_depth(text, str(p))
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{p}: not JSON ({exc.msg} at line {exc.lineno})", hint=_hint(p, text)
        ) from None
    except ValueError as exc:  # an integer of thousands of digits, NaN
        raise UsageError(f"{p}: not a bridge report ({exc})") from None
    if isinstance(data, dict):
        check_schema(data.get("schema"), str(p))
        reportcheck.check(data, str(p))
    return Report.from_json(data, source=str(p))


def _no_constant(name: str) -> Any:
    """json.loads reads NaN and Infinity, which JSON does not have."""
    raise ValueError(f"{name} is not a JSON number")


# What `openssl speed` prints (human and -mr), to point a pasted run at import-speed.
SPEED_OUTPUT = re.compile(r"^\s*(?:>\s*)*(?:Doing \S|\+DT:|\+F\d*:|type\s+16 bytes)", re.MULTILINE)


def _hint(path: Path, text: str) -> str:
    if SPEED_OUTPUT.search(text[: 1 << 20]):
        return f"this is openssl speed output: bridge import-speed {path} makes a report of it"
    return (
        "a report is the JSON that bridge run -o writes; for pasted openssl speed output"
        " use bridge import-speed FILE"
    )


def dumps(report: Report) -> str:
    return json.dumps(report.to_json(), indent=1) + "\n"
