"""The report schema ("bridge.report/1"): every part of a report is a frozen
record, read and written by one codec (bridge.report.codec), and this module
reads and writes whole reports.

Render, compare and plot read these records and nothing else, so a report
written today still renders later. The schema is documented in
docs/reference/report-schema.md and published as report-1.schema.json.
Rules for changing it: adding optional fields keeps version 1; removing or
changing the meaning of a field bumps the version, and `Report.from_json`
keeps reading every older version. Version handling lives in `check_schema`
alone.

Each record writes its keys in the order reports have always had them (its
`json_order` where that is not the field order), so a report read and
written again is the same text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bridge import plain, stats
from bridge.catalog.vocab import RuntimeKind, ScenarioKind
from bridge.errors import UsageError
from bridge.report import levels, provenance, whynot
from bridge.report import tls as tlsrec
from bridge.report.codec import EMPTY, NONE, Json, Record, jf
from bridge.report.context import Environment, RunSettings
from bridge.report.findings import (
    Basis,
    Change,
    Reason,
    Rerun,
    Significance,
    Statistic,
    Verdict,
    reasons_field,
)
from bridge.report.hw import Hw, HwMode
from bridge.report.scenario import ScenarioRun

SCHEMA = "bridge.report/1"
SCHEMA_NAME, SCHEMA_VERSION = SCHEMA.split("/")
SCHEMA_VERSION_INT = int(SCHEMA_VERSION)
MAX_REPORT_BYTES = 256 * 1024 * 1024
# What reading a report may take (bridge.plain.check_json_cost): its text as
# Python holds it beside what json.loads makes of it. With the interpreter,
# the checks and the records, `bridge report` then stays under about 1 GB
# for any file (docs/reference/report-schema.md gives the measurements).
MAX_PARSE_BYTES = 640 << 20


# Omit rules the records share.
def _failed(record: Any, value: Any) -> bool:
    return not record.ok


def _measured(record: Any, value: Any) -> bool:
    return not record.ok or not record.imported


def _untimed(record: Any, value: Any) -> bool:
    return bool(record.unsupported)


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

    @staticmethod
    def texts(keys: Any) -> Any:
        """A list or dict of output keys as JSON ("erlang@25.2.3 macN hw=on")."""
        if isinstance(keys, dict):
            return {k.text(): v for k, v in keys.items()}
        return [k.text() for k in keys]

    @classmethod
    def parse_map(cls, texts: Any) -> dict[OutputKey, str]:
        """A dict keyed by output keys, from JSON (its values are text)."""
        if not isinstance(texts, dict):
            raise TypeError(f"expected an object keyed by outputs, got {type(texts).__name__}")
        return {cls.parse(k): str(v) for k, v in texts.items()}

    @classmethod
    def parse_all(cls, texts: Any) -> tuple[OutputKey, ...]:
        """A list of output keys, from JSON."""
        if not isinstance(texts, list):
            raise TypeError(f"expected a list of output keys, got {type(texts).__name__}")
        return tuple(cls.parse(k) for k in texts)

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


# The keys of a runtime's object that are not its details.
RUNTIME_KEYS = ("id", "kind", "executable", "version", "hw")


def _details(data: Json) -> provenance.Details:
    """A runtime's details from its object: the record of its kind."""
    rest = {k: v for k, v in data.items() if k not in RUNTIME_KEYS}
    return provenance.read(RuntimeKind(data.get("kind")), rest)


@dataclass(frozen=True)
class Runtime(Record):
    """One runtime as it ran: its kind, executable and version, with the
    provenance its kind knows (`details`, bridge.report.provenance); `hw`
    says whether features were masked."""

    id: str
    kind: RuntimeKind
    executable: str
    version: str
    # Spliced into the runtime's object, before "hw". A runtime made in
    # memory may give its details as their JSON object: read as a report's
    # are, so that it writes that object as it was given.
    details: provenance.Details = jf(flat=True, decode=_details, default=None)
    hw: Hw = Hw.ON

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", RuntimeKind(self.kind))
        if not isinstance(self.details, provenance.Provenance):
            object.__setattr__(self, "details", provenance.read(self.kind, self.details or {}))

    @property
    def masked(self) -> bool:
        return self.hw.masked

    @property
    def node(self) -> provenance.NodeInfo | None:
        """A running node measured over distribution (`--node`); None for a
        runtime bridge started itself."""
        return self.details.node if isinstance(self.details, provenance.ErlangDetails) else None

    @property
    def node_host(self) -> str:
        """The host of a running node measured over distribution; "" for a
        runtime bridge started itself."""
        return self.node.host if self.node is not None else ""

    @property
    def imported(self) -> bool:
        """A run pasted into import-speed."""
        return isinstance(self.details, provenance.ImportedDetails)


@dataclass(frozen=True)
class Result(Record):
    """One cell: a scenario's call on one runtime, at one size and hw state.

    `samples` are raw sample durations in ns; sample i covered `loops` calls
    (or `loops[i]` calls, when runs differ in length, as openssl speed runs do).
    `procs[i]` is the worker process (numbered from 0 per runtime) that took
    sample i, when a cell's samples came from more than one (absent in
    reports from before, and for one process): the CI then covers the
    variation between processes (bridge.stats.hierarchical_median_ci).
    """

    scenario: str
    runtime: str
    call: str  # as the user would write it, e.g. "crypto:macN(hmac, sha, Key, Data, 10)"
    call_id: str = jf(missing="")  # stable name for matching across reports, e.g. "macN"
    api: str = jf(missing="")  # the function actually used, e.g. "crypto:macN/5"
    # what one operation includes, e.g. "one-shot: key set up on every call"
    semantics: str = jf(missing="")
    algorithm: str = jf(missing="")
    size: int
    hw: Hw = jf(missing=Hw.ON)  # on = the machine as found
    samples: tuple[int, ...] = jf(omit=_failed, missing=())
    loops: int | tuple[int, ...] = jf(omit=_failed, missing=1)
    output_hex: str = jf(omit=_failed, missing="")
    inputs: dict[str, Any] | None = jf(omit=lambda r, v: not r.ok or not v, default=None)
    status: str = "ok"  # ok | unsupported
    reason: str = jf(omit=lambda r, v: r.ok, default="")
    # Imported numbers (bridge import-speed) have no samples: one value as posted
    # (read back from the written median).
    source: str = jf(omit=_measured, default="measured")  # measured | imported
    point_ns: float | None = jf(write=False, default=None)
    source_line: int | None = jf(omit=_measured, default=None)
    # Per sample, parallel to `samples` (absent: not recorded; -1: unknown):
    # the CPU the measuring thread ran on, its CPU ns and run-queue wait ns
    # over the window (/proc/PID/task/TID/schedstat; openssl: the child's
    # user+system CPU from its rusage, and its wall time less that), and
    # openssl's user CPU ns alone (the rate `openssl speed` prints without
    # -elapsed). See bridge.analysis.cputime.
    sample_cpus: tuple[int, ...] = jf(omit=EMPTY, default=())
    sample_cpu_ns: tuple[int, ...] = jf(omit=EMPTY, default=())
    sample_wait_ns: tuple[int, ...] = jf(omit=EMPTY, default=())
    sample_user_ns: tuple[int, ...] = jf(omit=EMPTY, default=())
    # A TLS cell's server, per sample: its CPU ns over the window, for the
    # sample's `loops` handshakes (bridge.analysis.tls).
    sample_server_cpu_ns: tuple[int, ...] = jf(omit=EMPTY, default=())
    # The process of each sample, when they came from more than one.
    procs: tuple[int, ...] = jf(omit=EMPTY, default=())

    json_derived_keys: ClassVar[tuple[str, ...]] = ("ns_per_op", "ops_per_s", "bytes_per_s")
    json_order: ClassVar[tuple[str, ...]] = (
        *("scenario", "runtime", "call", "call_id", "api", "semantics", "algorithm"),
        *("size", "hw", "status", "reason", "source", "source_line"),
        *("ns_per_op", "ops_per_s", "bytes_per_s", "loops", "samples", "procs"),
        *("output_hex", "inputs"),
    )

    @property
    def key(self) -> CellKey:
        return CellKey(self.scenario, self.runtime, self.call_id, self.size, self.hw)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def loops_of(self, i: int) -> int:
        return self.loops if isinstance(self.loops, int) else self.loops[i]

    @property
    def imported(self) -> bool:
        return self.source == "imported"

    def per_op_ns(self) -> list[float]:
        """Per-call times; with the process of each (stats.Samples) when the
        samples came from more than one, so every CI built on them covers
        the variation between processes."""
        if not self.samples and self.point_ns is not None:
            return [self.point_ns]
        if isinstance(self.loops, int):
            values = [s / self.loops for s in self.samples]
        else:
            values = [s / n for s, n in zip(self.samples, self.loops, strict=True)]
        if self.procs and len(set(self.procs)) > 1:
            return stats.Samples(values, self.procs)
        return values

    def process_split(self) -> stats.ProcessSplit | None:
        """How the samples split between processes (None: one process)."""
        return stats.process_split(self.per_op_ns()) if self.ok else None

    def summary(self) -> stats.Summary:
        return stats.summarize(self.per_op_ns())

    def median(self) -> float:
        return self.summary().median

    def json_derived(self) -> Json:
        """The figures readers of the JSON want, from the samples."""
        if not self.ok:
            return {}
        s = self.summary()
        ops = 1e9 / s.median if s.median > 0 else 0.0
        ns_per_op = {
            "median": s.median,
            "ci95": [s.ci95[0], s.ci95[1]] if self.samples else None,
            "mean": s.mean,
            "stdev": s.stdev if self.samples else None,
            "min": s.min,
        }
        split = self.process_split()
        if split is not None:
            ns_per_op.update(processes=split.processes, between_process_share=split.share)
        return {"ns_per_op": ns_per_op, "ops_per_s": ops, "bytes_per_s": ops * self.size}

    @classmethod
    def json_read(cls, d: Json) -> Json:
        imported = d.get("source") == "imported"
        return {
            "call_id": d.get("call_id", d["call"]),
            "point_ns": float(d["ns_per_op"]["median"]) if imported else None,
        }


# -- checks, verdicts, fits --------------------------------------------------


# The per-sample arrays of a Result, parallel to its samples.
PROBED = (
    *("sample_cpus", "sample_cpu_ns", "sample_wait_ns", "sample_user_ns"),
    "sample_server_cpu_ns",
)


def merge_probed(
    acc: dict[str, list[int]] | None, new: dict[str, list[int]], had: int, n: int
) -> dict[str, list[int]] | None:
    """A cell's per-sample arrays (`acc`, over its first `had` samples) with
    one more batch of `n` samples: an array every batch had, as long as its
    samples, is kept; otherwise the cell has none (None), so that the arrays
    stay parallel to the samples."""
    if acc is None or any(len(v) != n for v in new.values()):
        return None
    if had == 0:
        return {k: list(v) for k, v in new.items()}
    if set(new) != set(acc):
        return None
    return {k: acc[k] + list(v) for k, v in new.items()}


def probed_fields(acc: dict[str, list[int]] | None) -> dict[str, tuple[int, ...]]:
    """The Result's keyword arguments for a cell's per-sample arrays."""
    if not acc:
        return {}
    return {k: tuple(v) for k, v in acc.items() if k in PROBED and v}


@dataclass(frozen=True)
class InteropCheck(Record):
    """Per scenario and size: each runtime's output against the reference.
    Outputs a runtime cannot give independently are listed as unchecked."""

    scenario: str
    size: int
    reference: str
    reference_from: str = jf(missing="")
    outputs: dict[OutputKey, str] = jf(encode=OutputKey.texts, decode=OutputKey.parse_map)
    match: bool
    mismatched: tuple[OutputKey, ...] = jf(
        encode=OutputKey.texts, decode=OutputKey.parse_all, default=()
    )
    # None: a report from before the field
    unchecked: tuple[OutputKey, ...] | None = jf(
        omit=NONE, missing=None, encode=OutputKey.texts, decode=OutputKey.parse_all, default=()
    )
    # Why an output is not checked, for calls that declare it (optional:
    # written only when there is one).
    unchecked_reasons: dict[OutputKey, str] = jf(
        omit=EMPTY, encode=OutputKey.texts, decode=OutputKey.parse_map, default_factory=dict
    )

    json_order: ClassVar[tuple[str, ...]] = (
        *("scenario", "size", "reference", "reference_from", "outputs"),
        *("unchecked", "unchecked_reasons", "match", "mismatched"),
    )


@dataclass(frozen=True)
class HwVerdict(Record):
    """Does a runtime's call use a hardware feature (see bridge.hw.verdicts)?
    `reasons` say why, as codes with their parameters (bridge.report.findings):
    why a verdict was withheld, what a small gain is, what was left out;
    `rerun` what would settle an inconclusive one; `margin` the CI's low end
    a "used" needed to clear. Reports from before the reasons hold a
    sentence instead (`explanation`), which new reports do not write."""

    scenario: str
    runtime: str
    call: str
    call_id: str
    feature: str  # one feature, or several masked together: "aes+pclmul"
    size: int
    verdict: Verdict
    speedup: float | None = jf(missing=None)
    speedup_ci95: tuple[float, float] | None = jf(missing=None)
    explanation: str | None = jf(omit=NONE, default=None)
    # What speedup is a ratio of: "paired" (the median of the interleaved
    # rounds' ratios of round medians), or the cells' low statistic (p10)
    # where the report does not say how it sampled; "": a report from before
    # either, whose speedups are ratios of medians.
    statistic: Statistic = jf(omit=EMPTY, default=Statistic.MEDIAN)
    # Why the path is not using the feature (not-used, masked, cpu-lacks,
    # not-openssl), as a code with its parameters (bridge.hw.whynot).
    why: whynot.WhyNot | None = jf(omit=NONE, default=None, decode=whynot.decode)
    reasons: tuple[Reason, ...] = reasons_field()
    rerun: Rerun | None = jf(omit=NONE, default=None)
    margin: float | None = jf(omit=NONE, default=None)
    basis: Basis | None = jf(omit=NONE, default=None)  # what it was judged on


@dataclass(frozen=True)
class CostFit(Record):
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
    # Sizes whose per-unit cost is off the line by more than
    # bridge.analysis.fits.PLAUSIBLE (30%), in words (reports from before
    # `off_line`): a linear cost cannot do that.
    implausible: tuple[str, ...] = jf(omit=EMPTY, default=())
    off_line: tuple[OffLine, ...] = jf(omit=EMPTY, default=())


@dataclass(frozen=True)
class OffLine(Record):
    """A size of a cost fit whose per-unit cost strays from the line's:
    `per_unit_ns` is (median - a) / size, `ratio` that over b."""

    size: int
    per_unit_ns: float
    ratio: float


@dataclass(frozen=True)
class TcFigure(Record):
    """--method tc: the thread's timer:tc harness on one Erlang cell, beside
    bridge's own median; or why this call cannot be timed that way."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw
    # The figures: not written for a call timer:tc cannot time.
    call: str = jf(omit=_untimed, default="")
    bridge_median_ns: float = jf(omit=_untimed, default=0.0)
    api: str = jf(omit=_untimed, default="")
    n: int = jf(omit=_untimed, default=0)
    min_us: int = jf(omit=_untimed, default=0)
    max_us: int = jf(omit=_untimed, default=0)
    median_us: int = jf(omit=_untimed, default=0)
    avg_us: int = jf(omit=_untimed, default=0)
    zero_us_calls: int = jf(omit=_untimed, default=0)
    unsupported: str = jf(omit=EMPTY, default="")

    json_order: ClassVar[tuple[str, ...]] = ("scenario", "runtime", "call")


@dataclass(frozen=True)
class Decomposition(Record):
    """What share of a call is set-up (importing a key, keying an AEAD
    context), and what the call costs with the set-up done once
    (bridge.analysis.decompose). `method`: "by difference" (the whole call minus a
    prepared call) or "timed alone" (a call that does only the set-up, when
    there is no prepared call); `alone_ns` is the set-up alone whenever a
    runtime can time it. Without numbers, `reasons` say why it cannot be split
    (reports from before them: `note`, in words)."""

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
    note: str | None = jf(omit=NONE, default=None)
    reasons: tuple[Reason, ...] = reasons_field()

    @property
    def share(self) -> float | None:
        if self.setup_ns is None or not self.total_ns:
            return None
        return self.setup_ns / self.total_ns


@dataclass(frozen=True)
class UnstableCell(Record):
    """A cell whose 95% CI stayed wider than the target: --until-stable's, or
    the run's own (settings.ci_target: ±2%, ±5% with --quick)."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw
    ci_halfwidth: float


@dataclass(frozen=True)
class UpgradeSize(Record):
    """One message size in an upgrade view: both medians and new/old."""

    size: int
    old_ns: float
    new_ns: float
    ratio: float
    ratio_ci95: tuple[float, float] | None = jf(missing=None)  # None: no samples (imported)
    # Whether new differs from old at this size, judged as the report's table
    # judges the same two cells (bridge.analysis.versus, compare).
    significance: Significance | None = jf(omit=NONE, default=None)
    # What the ratio is of: the medians (within a run), the 10th percentiles
    # (bridge compare's rows).
    statistic: Statistic = jf(omit=EMPTY, default=Statistic.MEDIAN)


@dataclass(frozen=True)
class Upgrade(Record):
    """Two versions of one runtime kind on the same call (bridge.analysis.upgrade):
    new/old per size, and the cost model of each (ns per call = a + b*bytes)
    to say whether the difference is per call or per byte. `per_call` and
    `per_byte` are more | less | same | unknown | unequal load; `same` means
    within noise. `reasons` say why the split has no CI, or why the load can
    explain it (reports from before them: `note`, in words)."""

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
    per_call: Change = Change.UNKNOWN
    per_byte: Change = Change.UNKNOWN
    # Two reports on differently loaded machines (bridge.analysis.compare):
    # what differed; per_call/per_byte then say "unequal load" where the load
    # alone can make the difference.
    note: str = jf(omit=EMPTY, default="")
    reasons: tuple[Reason, ...] = reasons_field()


@dataclass(frozen=True)
class Difference(Record):
    """One runtime's median against another's in the same run, with its
    significance (bridge.analysis.versus): against the first-named runtime of its kind
    (same call, size, hw), or against the fastest row of its table.

    ratio: with the interleaved rounds, the median over the rounds both cells
    have of median(runtime) / median(baseline) in that round, with the
    hierarchical 95% CI (bridge.stats.paired_ratio); without them (a report
    that does not say how it sampled), the ratio of the cells' medians with a
    bootstrap 95% CI from the raw samples, as `bridge compare` computes it.
    verdict: faster | slower (the CI clears the noise margin and the rounds
    agree) | within noise | unresolved (too few rounds to tell a difference
    from drift) | unknown (no samples)."""

    scenario: str
    size: int
    hw: Hw
    against: str  # first-named (or the --baseline of its kind) | fastest | neighbour
    runtime: str
    call_id: str
    baseline_runtime: str
    baseline_call_id: str
    ratio: float
    ci95: tuple[float, float] | None
    verdict: Significance
    rounds: int | None = None  # rounds with samples on both sides
    note: str = jf(omit=EMPTY, default="")  # reports from before `reasons`: in words
    reasons: tuple[Reason, ...] = reasons_field()
    # What the paired rounds were judged on: CPU time per call where a cell
    # waited for a CPU, else wall time; None in reports from before it and
    # where no rounds were paired.
    basis: Basis | None = jf(omit=NONE, default=None)

    @property
    def significant(self) -> bool:
        return self.verdict in (Significance.FASTER, Significance.SLOWER)


# -- noise -------------------------------------------------------------------


@dataclass(frozen=True)
class CellShape(Record):
    """A cell whose samples are bimodal or drift (bridge.analysis.stability names the
    tests), or whose figure depends on its worker process (bridge.analysis.noise);
    `statistic` is Ashman's D, Spearman's z, or the between-process share.
    Reports from before the figures below say them in words (`detail`)."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw
    shape: str  # bimodal | drift | process
    statistic: float
    detail: str | None = jf(omit=NONE, default=None)
    # bimodal: the two clusters, lower first (bridge.stats.clusters).
    clusters: tuple[SampleCluster, ...] = jf(omit=EMPTY, default=())
    # drift: how far the level moved from the first third of the samples to the last.
    shift: float | None = jf(omit=NONE, default=None)
    # process: how far apart the processes' medians are, and how many there were.
    spread: float | None = jf(omit=NONE, default=None)
    processes: int | None = jf(omit=NONE, default=None)


@dataclass(frozen=True)
class SampleCluster(Record):
    """One speed of a two-speed cell: its share of the samples and its level
    (the median per-call time of its samples, ns)."""

    share: float
    ns: float
    n: int


@dataclass(frozen=True)
class BusyProcess(Record):
    """Another process that used a CPU during the run, by pid and name, as
    reports before `busy_others` kept it (`noise.busy_processes`): read and
    written back as it was, never made by a run. `cpu` is its average share
    of one CPU."""

    pid: int
    name: str
    cpu: float


@dataclass(frozen=True)
class BusyOthers(Record):
    """Other users' and programs' processes that used at least a tenth of a
    CPU during the run: how many, and each one's average share of one CPU,
    busiest first (at most five). Not their names or pids: reports are
    shared, and those are other people's."""

    count: int
    cpu: tuple[float, ...] = ()


@dataclass(frozen=True)
class Noise(Record):
    """The machine during the run (bridge.analysis.noise): load, the CPU time that
    went elsewhere, how many other processes were busy and their shares (not
    who they were), cells with bimodal or drifting samples, and what these
    say (`findings`: reasons with their figures; reports from before them:
    `warnings` and `advice`, in words). Shares are of all CPU time, over
    `seconds`; `*_cpus` are average numbers of CPUs. None: not measurable
    here. `windows`: the machine from the run's start to the end of each
    scenario, which that scenario's verdicts go by."""

    seconds: float = jf(missing=0.0)
    cpus: int | None = None
    load_before: tuple[float, ...] | None = None
    load_after: tuple[float, ...] | None = None
    busy: float | None = None
    steal: float | None = None
    iowait: float | None = None
    bridge_cpus: float | None = None
    others_cpus: float | None = None
    # Reports before busy_others only (None: not in the report, not written).
    busy_processes: tuple[BusyProcess, ...] | None = jf(omit=NONE, default=None)
    cells: tuple[CellShape, ...] = ()
    driver_cpus: float | None = None
    warnings: tuple[str, ...] | None = jf(omit=NONE, default=None)
    advice: str | None = jf(omit=NONE, default=None)
    findings: tuple[Reason, ...] = reasons_field()
    windows: tuple[NoiseWindow, ...] = jf(omit=EMPTY, default=())
    busy_others: BusyOthers | None = jf(omit=NONE, default=None)

    json_order: ClassVar[tuple[str, ...]] = (
        *("seconds", "cpus", "load_before", "load_after", "busy", "steal", "iowait"),
        *("bridge_cpus", "driver_cpus", "others_cpus", "busy_processes", "busy_others", "cells"),
    )

    def window(self, scenario: str) -> NoiseWindow | None:
        return next((w for w in self.windows if w.scenario == scenario), None)


@dataclass(frozen=True)
class NoiseWindow(Record):
    """The machine from the run's start to the end of one scenario: what its
    hardware verdicts go by, so that they are what was printed as it ended."""

    scenario: str
    seconds: float
    others_cpus: float | None = None
    steal: float | None = None
    load: float | None = None  # the 1-minute load average at its end


# -- problems ----------------------------------------------------------------


@dataclass(frozen=True)
class RunError(Record):
    """What failed: kind worker (died, hung, broke the protocol; with the tail
    of its stderr) | call | mismatch | interrupted."""

    runtime: str = jf(missing="")
    kind: str = jf(missing="")
    message: str = jf()
    stderr_tail: str | None = jf(omit=NONE, default=None)


@dataclass(frozen=True)
class Skipped(Record):
    """A runtime that could not run here, and why. `requested` names the
    option that asked for it (--erl, --python, --openssl); "" for a runtime
    bridge chose itself (the one on PATH)."""

    runtime: str = jf(missing="")
    kind: str = jf(missing="")
    reason: str = jf()
    requested: str = jf(omit=EMPTY, default="")


# -- the hardware experiment -------------------------------------------------


@dataclass(frozen=True)
class MaskCheck(Record):
    """Evidence that a mask string does what bridge means (`openssl version -c`).
    ok None: not checked, and `note` says why."""

    ok: bool | None = jf(missing=None)
    by: str | None = jf(omit=NONE, default=None)
    note: str | None = jf(omit=NONE, default=None)
    detected: str | None = jf(omit=NONE, default=None)
    masked: str | None = jf(omit=NONE, default=None)

    json_order: ClassVar[tuple[str, ...]] = ("by", "ok")


@dataclass(frozen=True)
class MaskUsed(Record):
    variable: str  # OPENSSL_ia32cap | OPENSSL_armcap
    value: str
    features: tuple[str, ...]


def _untestable_why(data: Any) -> dict[str, Reason | whynot.WhyNot]:
    """An experiment's `why`: per feature, a path's record (keyed by
    "reason") or a reason (keyed by "why")."""
    if not isinstance(data, dict):
        raise TypeError("expected an object")
    return {
        str(f): Reason.from_json(v) if isinstance(v, dict) and "why" in v else whynot.decode(v)
        for f, v in data.items()
    }


@dataclass(frozen=True)
class HwExperiment(Record):
    """What the A/B experiment could do for one runtime: the mask of its
    masked twin, the evidence for it, and the features it could not test."""

    runtime: str
    mask: MaskUsed | None = jf(missing=None, decode=lambda v: MaskUsed.from_json(v) if v else None)
    mask_check: MaskCheck | None = jf(missing=None)
    # feature -> verdict (cpu-lacks, masked, cannot-test), and why: the path's
    # record (bridge.report.whynot) or the reason no mask can test it.
    untestable: dict[str, Verdict] = jf(missing={})
    # What the runtime's libcrypto says about its build (bridge.system.libbuild).
    library: whynot.LibraryBuild | None = jf(omit=NONE, default=None)
    why: dict[str, Reason | whynot.WhyNot] = jf(
        omit=EMPTY, default_factory=dict, decode=_untestable_why
    )


@dataclass(frozen=True)
class Hardware(Record):
    """The report's `hardware` block: the hw mode and one experiment per
    runtime. Imported reports have none (an empty block)."""

    hw: HwMode | None = jf(omit=NONE, default=None)  # the run's mode
    experiments: tuple[HwExperiment, ...] | None = jf(omit=NONE, default=None)

    def experiment(self, runtime_id: str) -> HwExperiment | None:
        return next((e for e in self.experiments or () if e.runtime == runtime_id), None)


# -- CPU time, cycles and the machine's limit (bridge.analysis.cputime) -------


@dataclass(frozen=True)
class Limit(Record):
    """The machine's own best for an algorithm: `openssl speed -evp ALG
    -bytes 16384 -elapsed`, hw as found (bridge.measure.limits)."""

    algorithm: str
    bytes_per_s: float
    source: str = ""


@dataclass(frozen=True)
class CpuFigure(Record):
    """A cell's samples taken on one CPU: how many, and their median wall ns per call."""

    cpu: int
    samples: int
    median_ns: float


@dataclass(frozen=True)
class CellCost(Record):
    """One cell's wall time beside its CPU time, from its per-sample arrays.
    `wait_share`: of the sample windows' wall time, the share spent waiting
    for a CPU; `flag` "waited": high enough that the wall figure is not the
    cost of the call. `cycles_per_byte` at the TSC's rate; `of_best`: the
    cell's bytes/s over the machine's best for its algorithm (1.0 = the limit)."""

    scenario: str
    runtime: str
    call_id: str
    size: int
    hw: Hw = jf(missing=Hw.ON)
    wall_ns: float = 0.0
    cpu_ns: float | None = None
    wait_share: float | None = None
    user_ns: float | None = jf(omit=NONE, default=None)
    cycles_per_byte: float | None = jf(omit=NONE, default=None)
    cpu_cycles_per_byte: float | None = jf(omit=NONE, default=None)
    of_best: float | None = jf(omit=NONE, default=None)
    by_cpu: tuple[CpuFigure, ...] = jf(omit=EMPTY, default=())
    flag: str = jf(omit=EMPTY, default="")


@dataclass(frozen=True)
class CpuTime(Record):
    """What the run's cells cost in CPU time and cycles (bridge.analysis.cputime)."""

    tsc_hz: float | None = None
    tsc_source: str = ""
    wait_share_high: float = 0.05
    limits: tuple[Limit, ...] = ()
    cells: tuple[CellCost, ...] = ()


# -- the report --------------------------------------------------------------


@dataclass(frozen=True)
class Report(Record):
    bridge_version: str = jf(missing="")
    created: str = jf(missing="")
    command: list[str] = jf(missing=[])
    reproduce: str = jf(missing="")
    # A report without them (hand-made) reads as one with them empty.
    settings: RunSettings = jf(missing=RunSettings.from_json({}))
    environment: Environment = jf(missing=Environment.from_json({}))
    runtimes: tuple[Runtime, ...] = jf()
    results: tuple[Result, ...] = jf()
    interop: tuple[InteropCheck, ...] = ()
    errors: tuple[RunError, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    # What was run (bridge.catalog.scenario parses each again for --replay).
    scenarios: tuple[ScenarioRun, ...] = ()
    verdicts: tuple[HwVerdict, ...] = ()
    hardware: Hardware = field(default_factory=Hardware)
    unstable: tuple[UnstableCell, ...] = ()
    fits: tuple[CostFit, ...] = ()
    tc: tuple[TcFigure, ...] = ()
    # None: a report from before the section (renderers compute it then).
    differences: tuple[Difference, ...] | None = jf(omit=NONE, default=None)
    # Optional sections, written only when there is one, so earlier reports
    # re-serialise as they were.
    upgrades: tuple[Upgrade, ...] = jf(omit=EMPTY, default=())
    # --concurrency: level cells and scaling (bridge.report.levels); absent otherwise.
    concurrency: levels.Concurrency | None = jf(omit=NONE, default=None)
    decompositions: tuple[Decomposition, ...] = jf(omit=EMPTY, default=())
    # Added later: absent from older reports, and then not written back.
    noise: Noise | None = jf(omit=NONE, default=None)
    cpu_time: CpuTime | None = jf(omit=NONE, default=None)
    # TLS cells as a server sees them (bridge.analysis.tls); absent without one.
    tls: tlsrec.Tls | None = jf(omit=NONE, default=None)
    schema: str = SCHEMA

    json_order: ClassVar[tuple[str, ...]] = (
        *("schema", "bridge_version", "created", "command", "reproduce", "settings"),
        *("scenarios", "environment", "runtimes", "results", "interop", "verdicts"),
        *("hardware", "unstable", "fits", "tc", "differences", "errors", "skipped", "noise"),
    )

    def runtime(self, runtime_id: str) -> Runtime | None:
        return next((r for r in self.runtimes if r.id == runtime_id), None)

    def kind_of(self, runtime_id: str) -> RuntimeKind:
        """The kind of a runtime named in a result. Every result's runtime is
        in `runtimes` (bridge.report.check); the id's prefix is only a
        fallback for reports made in memory (a ValueError if it is none)."""
        rt = self.runtime(runtime_id)
        return rt.kind if rt else RuntimeKind(runtime_id.split("@")[0].split("#")[0])

    def several(self) -> dict[RuntimeKind, list[str]]:
        """Runtime ids per kind, in the order named, for the kinds with more
        than one (the versions a run compares)."""
        ids: dict[RuntimeKind, list[str]] = {}
        for rt in self.runtimes:
            ids.setdefault(rt.kind, [])
            if rt.id not in ids[rt.kind]:
                ids[rt.kind].append(rt.id)
        for r in self.results:  # a hand-made report may name runtimes it does not list
            kind = self.kind_of(r.runtime)
            if r.runtime not in ids.setdefault(kind, []):
                ids[kind].append(r.runtime)
        return {k: v for k, v in ids.items() if len(v) > 1}

    def scenario(self, name: str) -> ScenarioRun | None:
        """The scenario of this name (None: the report does not describe it)."""
        return next((sc for sc in self.scenarios if sc.name == name), None)

    def description(self, scenario: str) -> str:
        sc = self.scenario(scenario)
        return sc.description if sc is not None else ""

    def scenario_kind(self, scenario: str) -> ScenarioKind | None:
        sc = self.scenario(scenario)
        return sc.kind if sc is not None else None

    def __post_init__(self) -> None:
        # Made in memory from their JSON objects (a run's, an import's): read
        # as a report's are, so that they write those objects as given.
        if not isinstance(self.settings, RunSettings):
            object.__setattr__(self, "settings", RunSettings.from_json(dict(self.settings)))
        if not isinstance(self.environment, Environment):
            object.__setattr__(self, "environment", Environment.from_json(dict(self.environment)))
        if not all(isinstance(sc, ScenarioRun) for sc in self.scenarios):
            object.__setattr__(self, "scenarios", tuple(map(ScenarioRun.read, self.scenarios)))

    @property
    def seed(self) -> int | None:
        return self.settings.seed

    @property
    def imported_from(self) -> str | None:
        return self.settings.imported_from

    @classmethod
    def json_read(cls, d: Json) -> Json:
        return {"schema": SCHEMA}  # check_schema has read the version

    @classmethod
    def from_json(cls, d: Any, source: str = "report") -> Report:
        """A report from its JSON: check_schema says which versions are read;
        anything malformed is one UsageError line."""
        if not isinstance(d, dict):
            raise UsageError(f"{source}: not a bridge report (the top level is not an object)")
        check_schema(d.get("schema"), source)

        try:
            return super().from_json(d)
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
    # Bounded in memory before it is decoded (bridge.plain.json_shape): the
    # text as Python holds it (one emoji: 4 bytes a character) and what
    # json.loads would make of it.
    try:
        plain.check_json_cost(raw, str(p), MAX_PARSE_BYTES, reportcheck.MAX_ITEMS)
    except plain.TooLarge as exc:
        raise UsageError(f"{exc.message}; not a report bridge reads") from None
    try:
        text = plain.decode(raw, str(p), "not a report")
    except UsageError:
        raise UsageError(f"{p}: not a bridge report (binary data, not JSON)") from None
    del raw
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{p}: not JSON ({exc.msg} at line {exc.lineno})", hint=_hint(p, text)
        ) from None
    except ValueError as exc:  # an integer of thousands of digits, NaN
        raise UsageError(f"{p}: not a bridge report ({exc})") from None
    del text
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
        return (
            f"this is openssl speed output: crypto-bridge import-speed {path} makes a report of it"
        )
    return (
        "a report is the JSON that crypto-bridge run -o writes; for pasted openssl speed output"
        " use crypto-bridge import-speed FILE"
    )


def dumps(report: Report) -> str:
    return json.dumps(report.to_json(), indent=1) + "\n"
