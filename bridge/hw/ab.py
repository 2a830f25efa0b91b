"""A/B runs: which features to mask for each runtime, and the verdicts.

For every runtime started as found (hw "on"), `plan` decides whether a twin
with the features masked (hw "off") can run, and with which mask. Features
that cannot be tested get their verdict here, without numbers (cpu-lacks,
masked, cannot-test). After the run, `verdict_list` pairs each on-result with
its off-result and asks bridge.hw.verdicts for the answer.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from bridge import stats
from bridge.catalog import calls
from bridge.catalog.scenario import Facts
from bridge.catalog.vocab import COMMAND, RuntimeKind
from bridge.hw import hardware, verdicts, whynot
from bridge.report import provenance, schema
from bridge.report.findings import Basis, Reason, Rerun, Statistic, Verdict, Why, reason
from bridge.report.hw import Hw
from bridge.report.whynot import LibraryBuild, WhyNot


@dataclass
class HwContext:
    """What the A/B experiment can do for one runtime (filled while the run
    starts; `record()` is its frozen form in the report)."""

    runtime_id: str
    library: tuple[str, tuple[int, int, int]] | None
    mask: hardware.Mask | None = None
    untestable: dict[str, verdicts.Judgement] = field(default_factory=dict)  # feature -> verdict
    mask_check: schema.MaskCheck | None = None  # evidence the mask took effect
    # What the runtime's libcrypto says about its build (bridge.system.libbuild),
    # once collected; the arch it runs on, for its capability vector.
    build: LibraryBuild | None = None
    arch: str = ""

    @property
    def mask_failed(self) -> bool:
        return self.mask_check is not None and self.mask_check.ok is False

    def record(self) -> schema.HwExperiment:
        mask = self.mask
        return schema.HwExperiment(
            runtime=self.runtime_id,
            mask=None
            if mask is None
            else schema.MaskUsed(mask.variable, mask.value, mask.features),
            mask_check=self.mask_check,
            untestable={f: v.verdict for f, v in self.untestable.items()},
            why={f: w for f, v in self.untestable.items() if (w := _why(v)) is not None},
            library=self.build,
        )

    @classmethod
    def of(cls, exp: schema.HwExperiment, info: schema.Runtime, arch: str) -> HwContext:
        """The context a report's experiment record holds (`record()` read
        back); `arch` the machine's (the report's environment)."""
        mask = exp.mask
        untestable = {
            f: verdicts.untested(exp.why[f])
            if f in exp.why
            else verdicts.Judgement(Verdict(verdict))
            for f, verdict in exp.untestable.items()
        }
        return cls(
            runtime_id=exp.runtime,
            library=library_of(info),
            mask=None if mask is None else hardware.Mask(mask.variable, mask.value, mask.features),
            untestable=untestable,
            mask_check=exp.mask_check,
            build=exp.library,
            arch=arch,
        )


def _why(v: verdicts.Judgement) -> Reason | WhyNot | None:
    """Why a feature could not be tested: the path's record, or the reason."""
    return v.why if v.why is not None else (v.reasons[0] if v.reasons else None)


def library_of(info: schema.Runtime) -> tuple[str, tuple[int, int, int]] | None:
    """The libcrypto a runtime uses, as (name, version)."""
    if info.kind == RuntimeKind.OPENSSL:
        # The CLI on another library (--libcrypto) says "(Library: ...)": the
        # mask is parsed by the library, not by the CLI.
        return hardware.parse_library(info.version.partition("(Library:")[2] or info.version)
    return hardware.parse_library(info.details.library)


def mask_library(info: schema.Runtime) -> tuple[str, tuple[int, int, int]] | None:
    """The library whose parser the mask string is written for. A Python
    worker can load two: the system's (hashlib, ssl) and the one inside the
    cryptography wheel. The newer generation's string also reads right on
    the older ones of 1.1.1 and later (3.4+ wants ':' fields that 1.1.1-3.3
    ignore, docs/reference/masks.md §2.3), so it is used for both; 1.0.2 stays as it
    is (it cannot mask one feature anyway)."""
    library = library_of(info)
    d = info.details
    own = d.cryptography_openssl_version if isinstance(d, provenance.PythonDetails) else None
    extra = hardware.parse_library(own or "")
    if library is None or extra is None or extra[0] != "OpenSSL" or library[0] != "OpenSSL":
        return library
    if min(library[1], extra[1]) < (1, 1, 0):
        return library
    return max(library, extra, key=lambda lib: lib[1])


def plan(
    info: schema.Runtime,
    features: Sequence[str],
    cpu: hardware.Cpu,
    env: Mapping[str, str],
    armcap_detected: int | None,
) -> HwContext:
    library = library_of(info)
    ctx = HwContext(runtime_id=info.id, library=library, arch=cpu.arch)
    gen = hardware.generation(library[1]) if library else "3.0"
    testable = []
    for feature in features:
        has = cpu.has(feature)
        if has is False:
            ctx.untestable[feature] = verdicts.untested(whynot.cpu_lacks(feature))
        elif has is None:
            ctx.untestable[feature] = verdicts.untested(reason(Why.UNKNOWN_FEATURE))
        elif hardware.feature_disabled_by(dict(env), feature, cpu.arch, gen):
            masks = whynot.env_masks(env, cpu.arch)
            ctx.untestable[feature] = (
                verdicts.untested(masks)
                if masks is not None
                else verdicts.Judgement(Verdict.MASKED)  # masked, by no variable bridge knows
            )
        else:
            testable.append(feature)
    if testable:
        try:
            ctx.mask = hardware.mask_for(
                tuple(testable), cpu.arch, mask_library(info), armcap_detected
            )
        except hardware.CannotMask as exc:
            for feature in testable:
                ctx.untestable[feature] = verdicts.untested(exc.reason)
    return ctx


def via_openssl(info: schema.Runtime, call_id: str) -> bool:
    """Does this call reach OpenSSL? Python may hash with built-in code."""
    d = info.details
    call = calls.lookup(info.kind, call_id)
    route = call.route if call else calls.Route.LIBCRYPTO
    if route in (calls.Route.KERNEL, calls.Route.OWN):
        return False  # os.urandom, rand:bytes: no OpenSSL, so no mask reaches them
    if route is calls.Route.HMAC:
        return isinstance(d, provenance.PythonDetails) and d.hmac_impl.startswith("_hashlib")
    if route is calls.Route.HASHLIB:
        return not isinstance(d, provenance.PythonDetails) or d.hashlib_uses_openssl
    lib = library_of(info)
    return lib is None or lib[0] == "OpenSSL"


def _path(info: schema.Runtime, call_id: str) -> str:
    """The implementation a call runs instead of OpenSSL, as the runtime
    named it (Python's built-in hash type, its hmac), or its route."""
    call = calls.lookup(info.kind, call_id)
    route = call.route if call else calls.Route.LIBCRYPTO
    if route is calls.Route.HMAC:  # "none": hmac's own code over hashlib
        d = info.details
        impl = (d.hmac_impl if isinstance(d, provenance.PythonDetails) else "") or "none"
        return route.value if impl == "none" else impl
    if route is calls.Route.HASHLIB:
        d = info.details
        own = d.hashlib_sha256_type if isinstance(d, provenance.PythonDetails) else ""
        return own or route.value
    return route.value


@dataclass(frozen=True)
class Seen:
    """What the run says about its cells beyond their samples.

    `rounds` splits a cell's samples by interleaved round
    (bridge.analysis.versus.rounds_of): a "used" then needs the rounds to
    agree. `busy`: what kept the machine busy during the scenario, when it was
    (bridge.analysis.noise.busy): a "used" then needs a larger gain.
    `sample_ns`, the planned length of one sample (--sample-ms): a twin whose
    samples took twice that even at best waited for a CPU, and gives no
    verdict. `waits`: each cell's share of its sample windows spent waiting
    for a CPU (the report's cpu_time block); a twin at `wait_high` or more ran
    on a busy machine, as `busy` says of the whole run. `reruns`: the options
    that would give more evidence, as the run's settings make them."""

    rounds: Callable[[schema.Result], Mapping[int, Sequence[float]] | None] | None = None
    busy: tuple[Reason, ...] = ()
    sample_ns: float | None = None
    waits: Mapping[schema.CellKey, float] = field(default_factory=dict)
    wait_high: float = 0.05
    reruns: verdicts.Reruns = verdicts.Reruns()


@dataclass(frozen=True)
class _OnCpu:
    """A verdict's evidence on CPU time per call (_on_cpu), and the unmasked
    cell's processes' gap by CPU time (None: one process)."""

    evidence: verdicts.Evidence
    aa: float | None


@dataclass(frozen=True)
class _Found:
    """One verdict as verdict_list first decides it."""

    sc: Facts
    r: schema.Result
    feature: str
    v: verdicts.Judgement
    cpu: _OnCpu | None = None  # how it was judged on CPU time, when it was


def verdict_list(
    scenarios: Sequence[Facts],
    results: Sequence[schema.Result],
    runtimes: Sequence[schema.Runtime],
    contexts: Mapping[str, HwContext],
    seen: Seen = Seen(),
) -> list[schema.HwVerdict]:
    """A verdict per hw-on cell and feature of the scenarios, with its reasons."""
    on_info = {rt.id: rt for rt in runtimes if not rt.masked}
    by_key = {r.key: r for r in results}
    found = []
    for sc in scenarios:
        for r in results:
            if r.scenario != sc.name or r.hw.masked or not r.ok:
                continue
            ctx, info = contexts.get(r.runtime), on_info.get(r.runtime)
            if ctx is None or info is None:
                continue
            off = by_key.get(_off(r.key))
            for feature in _verdict_features(sc.features, ctx):
                evidence = _evidence(sc, r, off, info, seen)
                cpu = (
                    _on_cpu(evidence, r, off, _paired_rounds(seen.rounds, r, off), info)
                    if _cpu_is_the_calls(sc, info)
                    else None
                )
                v = _decide(ctx, info, r.call_id, cpu.evidence if cpu else evidence, feature)
                found.append(_Found(sc, r, feature, v, cpu))
    gaps = _twin_gaps(found)
    found = [
        dataclasses.replace(f, v=verdicts.against_twin_gap(f.v, *gaps[f.r.runtime]))
        if f.r.runtime in gaps
        else f
        for f in found
    ]
    out = []
    for f in found:
        ctx = contexts[f.r.runtime]
        build = ctx.build if _on_mapped(f.r) else None
        v = _by_library(f.v, build)
        if v.verdict is Verdict.NOT_USED and v.why is None:
            used, largest = _other_sizes(found, f)
            why = whynot.not_used(build, f.feature, ctx.arch, f.r.size, used, largest)
            v = dataclasses.replace(v, why=why)
        elif v.verdict is Verdict.INCONCLUSIVE and v.why is None and v.ci95 is not None:
            used, _ = _other_sizes(found, f)
            small = whynot.too_small(f.r.size, used)
            # Only where no gain showed at this size (the CI reaches into the
            # margin) and less than the larger size's could be there.
            if small is not None and v.ci95[0] <= 1 + verdicts.MARGIN and v.ci95[1] < small.speedup:
                v = dataclasses.replace(v, why=small)
        if v.verdict is Verdict.USED:
            v = _fixed_cost(v, f.sc, _best_speedup(results, by_key, f.r), f.r.size)
        if v.basis is Basis.CPU and v.speedup is not None:
            v = _said_on_cpu(v, f.cpu)
        out.append(_record(f.sc, f.r, f.feature, v))
    return out


# Verdicts decided before anything is measured: what the library has does not change them.
_UNTESTED = (Verdict.CPU_LACKS, Verdict.MASKED, Verdict.NOT_OPENSSL)


def _by_library(v: verdicts.Judgement, build: LibraryBuild | None) -> verdicts.Judgement:
    """A verdict on a library that has no assembler, or no capability
    vector, is not-used whatever its twins measured: no mask can change what
    it runs, so a gap between them is the two processes' (the figures stay,
    for what they show; the reasons a measured verdict had go with it)."""
    if v.verdict in _UNTESTED:
        return v
    found = whynot.library(build)
    if found is None:
        return v
    return dataclasses.replace(v, verdict=Verdict.NOT_USED, why=found, reasons=(), rerun=None)


def _on_mapped(r: schema.Result) -> bool:
    """Does the call run on the libcrypto its process maps? Not Python's
    calls through the cryptography package (their api, as the worker names
    it, says so), whose wheel links an OpenSSL of its own."""
    return not r.api.startswith("cryptography ")


def _other_sizes(found: Sequence[_Found], f: _Found) -> tuple[list[tuple[int, float]], int]:
    """(size, speedup) of each `used` verdict of the same call and feature
    in the run, and the largest size it was judged at."""
    key = (f.sc.name, f.r.runtime, f.r.call_id, f.feature)
    same = [
        (g.r.size, g.v) for g in found if (g.sc.name, g.r.runtime, g.r.call_id, g.feature) == key
    ]
    used = [(n, v.speedup) for n, v in same if v.verdict is Verdict.USED and v.speedup]
    return used, max(n for n, _ in same)


def _record(sc: Facts, r: schema.Result, feature: str, v: verdicts.Judgement) -> schema.HwVerdict:
    measured = v.speedup is not None
    return schema.HwVerdict(
        scenario=sc.name,
        runtime=r.runtime,
        call=r.call,
        call_id=r.call_id,
        feature=feature,
        size=r.size,
        verdict=v.verdict,
        speedup=v.speedup,
        speedup_ci95=v.ci95,
        statistic=(v.statistic or Statistic.LOW) if measured else Statistic.MEDIAN,
        reasons=v.reasons,
        rerun=v.rerun,
        margin=v.margin,
        basis=v.basis if measured else None,
        why=v.why,
    )


def _evidence(
    sc: Facts, r: schema.Result, off: schema.Result | None, info: schema.Runtime, seen: Seen
) -> verdicts.Evidence | None:
    """What the verdict of a cell and its masked twin is judged on; None
    when the twin has no measurement."""
    if off is None or not off.ok:
        return None
    stretched = _stretched(r, off, seen.sample_ns) if sc.kind != "file-digest" else None
    paired = _paired_rounds(seen.rounds, r, off)
    paired, left_out, usual, apart = _rounds_that_ran(r, off, paired, seen.wait_high)
    unlike = None
    if usual is None:  # judged whole: by the cells' wait shares
        waited = _waited(r, off, seen.waits, seen.wait_high)
    else:  # paired rounds: by how much, and how alike, the rounds kept waited
        waited, unlike = _waited_rounds(usual, apart)
    openssl = info.kind == RuntimeKind.OPENSSL
    reruns = seen.reruns
    if openssl:
        reruns = verdicts.Reruns(f"--openssl-runs {stats.MIN_CI_SAMPLES}", *_rest(reruns))
    return verdicts.Evidence(
        on=r.per_op_ns(),
        off=off.per_op_ns(),
        rounds=paired,
        processes=_round_processes(info, r, paired[0]) if paired else None,
        what="openssl run" if openssl else "sample",
        busy=seen.busy or waited,
        unlike=unlike,
        stretched=stretched,
        reruns=reruns,
        left_out=(left_out, left_out + len(paired[0])) if left_out and paired else None,
    )


def _rest(reruns: verdicts.Reruns) -> tuple[str, str]:
    return reruns.processes, reruns.rounds


def _fixed_cost(
    v: verdicts.Judgement, sc: Facts, best: tuple[int, float] | None, size: int
) -> verdicts.Judgement:
    """A "used" whose gain is small at a byte size: mostly fixed per-call
    cost (set-up, call overhead), which the feature does not speed up; where
    the gain shows instead (`best`: the size of this call's largest speedup
    in the scenario), or a command that would show it."""
    if v.speedup is None or v.speedup >= verdicts.SMALL_SPEEDUP or sc.size_unit != verdicts.BYTES:
        return v
    shows = best is not None and best[0] != size and best[1] >= verdicts.SMALL_SPEEDUP
    # Larger messages would show it where no other size of the call did
    # (example: a command that runs them, or ""); None: another size did
    # run, and showed no more.
    larger = not best or best[0] == size
    example = _larger_example(sc) if larger else None
    why = reason(
        Why.FIXED_COST,
        speedup=v.speedup,
        best_size=best[0] if shows and best else 0,
        best_speedup=round(best[1], 4) if shows and best else 0.0,
        example=example,
    )
    return dataclasses.replace(v, reasons=(*v.reasons, why))


def _twin_gaps(found: Sequence[_Found]) -> dict[str, tuple[float, Reason]]:
    """Per runtime, the largest gap its two twins showed that no mask can
    cause: a masked run faster, its CI clear of the noise margin (1/ the CI's
    upper end), and where (a TWIN_GAP reason naming the cell)."""
    gaps: dict[str, tuple[float, Reason]] = {}
    for f in found:
        v = f.v
        if not v.masked_faster or v.ci95 is None or v.ci95[1] <= 0:
            continue
        gap = 1 / v.ci95[1]
        if gap > gaps.get(f.r.runtime, (0.0, None))[0]:
            where = reason(
                Why.TWIN_GAP,
                gap=round(gap, 4),
                scenario=f.sc.name,
                call_id=f.r.call_id,
                size=f.r.size,
                unit=f.sc.size_unit,
            )
            gaps[f.r.runtime] = (gap, where)
    return gaps


def _off(key: schema.CellKey) -> schema.CellKey:
    return schema.CellKey(key.scenario, key.runtime, key.call_id, key.size, Hw.OFF)


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


def _cpu_rounds(
    r: schema.Result, by_round: Mapping[int, Sequence[float]]
) -> dict[int, list[float]] | None:
    """The cell's CPU ns per call by round (stats.round_cpu)."""
    loops = [r.loops_of(j) for j in range(len(r.samples))]
    return stats.round_cpu(r.sample_cpu_ns, loops, by_round)


def _on_cpu(
    evidence: verdicts.Evidence | None,
    on: schema.Result,
    off: schema.Result | None,
    rounds,
    info: schema.Runtime,
) -> _OnCpu | None:
    """The evidence on CPU time per call, over the same paired rounds, for
    twins that waited for a CPU (evidence.busy); None where they did not, or
    where a twin has no CPU time or too few rounds of it: wall time then.

    Waiting stretches a twin's wall time, not the CPU time its calls took:
    beside two CPU hogs (load 13-16) Python's SHA-512 and ChaCha20 controls
    read 3.7-5.7x slower masked by wall time, 0.9-1.3x by CPU time. Sharing a
    CPU moves CPU time too, less and unlike for two processes, so the margin
    a "used" must clear is derived from the run (_process_gap, with
    verdicts.CPU_FLOOR at least).

    Every paired round counts, also those _rounds_that_ran leaves out of the
    wall-time verdict for having waited: a wait is not in CPU time. Beside
    two hogs, leaving them out cut --quick's 12 rounds to 4-9 for Erlang's
    HMAC-SHA1 and its CI low end down to 0.75 (the CI of 4-9 ratios is
    nearly their range); all 12 gave 0.99-1.22, while the SHA-512 and
    ChaCha20 controls' low ends stayed at 1.04 or under (331 cells;
    docs/findings/busy-machine.md)."""
    if evidence is None or not evidence.busy or evidence.rounds is None:
        return None
    if off is None or rounds is None:
        return None
    a, b = _cpu_rounds(on, rounds[0]), _cpu_rounds(off, rounds[1])
    if a is None or b is None:
        return None
    both = [i for i in a if i in b]
    if len(both) < stats.MIN_CI_SAMPLES:
        return None
    procs = _round_processes(info, on, rounds[0])
    a = {i: a[i] for i in both}
    aa = _process_gap(a, procs)
    cpu = dataclasses.replace(
        evidence,
        on=[x for i in both for x in a[i]],
        off=[x for i in both for x in b[i]],
        rounds=(a, {i: b[i] for i in both}),
        processes=procs,
        busy=(),
        stretched=None,  # a stretched window is wall time; its CPU time is the call's
        left_out=None,
        used_margin=max(verdicts.CPU_FLOOR, (aa - 1) if aa else 0.0),
        basis=Basis.CPU,
    )
    return _OnCpu(cpu, aa)


def _process_gap(
    by_round: Mapping[int, Sequence[float]], processes: Mapping[int, int] | None
) -> float | None:
    """The unmasked cell's processes against each other by CPU time (an A/A
    ratio): the slowest process's median CPU ns per call over the fastest's,
    each of its rounds' medians; None with fewer than two processes of at
    least two rounds each."""
    if not processes:
        return None
    per: dict[int, list[float]] = {}
    for i, values in by_round.items():
        if i in processes and values:
            per.setdefault(processes[i], []).append(statistics.median(values))
    levels = [statistics.median(v) for v in per.values() if len(v) >= 2]
    if len(levels) < 2 or min(levels) <= 0:
        return None
    return max(levels) / min(levels)


def _cpu_is_the_calls(sc: Facts, info: schema.Runtime) -> bool:
    """Does the cell's CPU time hold its call's work? Not an Erlang TLS
    handshake: the connection's processes run on other schedulers than the
    measuring one, whose CPU time alone the node reads."""
    return not (info.kind == "erlang" and sc.kind == "tls")


def _said_on_cpu(v: verdicts.Judgement, cpu: _OnCpu | None) -> verdicts.Judgement:
    """A verdict judged on CPU time says so first (CPU_BASIS): the margin it
    needed and what that came from. What kept the machine busy is the
    noise block's to say (its warnings name it), not each verdict's."""
    if cpu is None:
        return v
    floor = round(1 + verdicts.CPU_FLOOR, 4)
    needs = v.margin if v.margin is not None else floor
    aa = None if cpu.aa is None else round(cpu.aa, 4)
    basis = reason(Why.CPU_BASIS, aa=aa, floor=floor, needs=needs)
    return dataclasses.replace(v, reasons=(basis, *v.reasons), rerun=_settle(v, cpu))


def _settle(v: verdicts.Judgement, cpu: _OnCpu) -> Rerun | None:
    """What would settle a verdict judged on CPU time that the CI left
    open (WITHIN_NOISE): the rounds that would lift its low end above the
    margin, where the ratio is above it; otherwise its own rerun."""
    rounds = cpu.evidence.rounds
    if v.rerun is None or v.rerun.why is not Why.WITHIN_NOISE or v.ci95 is None or not rounds:
        return v.rerun
    if v.margin is None or v.speedup is None:
        return v.rerun
    k = len(set(rounds[0]) & set(rounds[1]))
    more = verdicts.rounds_to_settle(v.speedup, v.ci95[0], v.margin, k, cpu.evidence.reruns)
    return v.rerun if more is None else Rerun(more, Why.WITHIN_NOISE)


def _paired_rounds(rounds, on, off):
    if rounds is None or off is None:
        return None
    a, b = rounds(on), rounds(off)
    return None if a is None or b is None else (a, b)


def _round_waits(r: schema.Result, by_round: Mapping[int, Sequence[float]]) -> dict[int, float]:
    """Per round, the cell's share of its windows spent waiting for a CPU (stats.round_waits)."""
    return stats.round_waits(r.samples, r.sample_wait_ns, by_round)


def _rounds_that_ran(on, off, paired, high: float):
    """The twins' paired rounds without those in which either twin waited for
    a CPU notably more than in its other rounds (`high` of its windows or
    more, and twice its usual round), such as the first round, in which the
    spare processes start: those samples are not the call's cost. Returns
    (rounds, left out, the kept rounds' usual wait share, the larger twin's,
    and how far apart the twins' waits are in a usual kept round); (paired,
    None, None, None) when the rounds cannot be told apart by their waits,
    or too few would be left: the cells are then judged whole, by their wait
    shares."""
    if paired is None or off is None:
        return paired, None, None, None
    a, b = paired
    wa, wb = _round_waits(on, a), _round_waits(off, b)
    both = [i for i in a if i in b]
    if not wa or not wb or not all(i in wa and i in wb for i in both):
        return paired, None, None, None

    def ran(w):  # the rounds of one twin that did not wait much more than usual
        usual = statistics.median(w[i] for i in both)
        return {i for i in both if w[i] < high or w[i] < 2 * usual}

    ran_a, ran_b = ran(wa), ran(wb)
    keep = [i for i in both if i in ran_a and i in ran_b]
    if len(keep) < stats.MIN_CI_SAMPLES:
        return paired, None, None, None
    kept_usual = max(statistics.median(w[i] for i in keep) for w in (wa, wb))
    apart = statistics.median(abs(wa[i] - wb[i]) for i in keep)
    kept = ({i: a[i] for i in keep}, {i: b[i] for i in keep})
    return kept, len(both) - len(keep), kept_usual, apart


# Twins that waited unlike: what kept one twin off its CPU also slows it on
# it (the cache it finds, a busy SMT sibling), so their ratio moves with the
# gap between their wait shares. In 32 control runs with two processes a side
# on the project's 2-vCPU EPYC guest (SHA-512 and ChaCha20, which no mask can
# change; 16 with every process kept pinned between batches), Erlang cells
# by that gap in a usual kept round (the masked twin waited more in nearly
# all):
#   under 3 points  280 cells  speedup up to 1.12x, CI low end up to 1.01
#   3-10 points      62 cells  up to 1.12x, CI low end up to 1.07
#   10-20 points     22 cells  up to 1.20x, CI low end up to 1.11
#   20 or more       20 cells  up to 1.60x, CI low end up to 1.31
# by CPU time as well as by wall time. Twins WAITED_APART apart need a CI
# above 1.10x for a "used" (verdicts.ONE_PAIR_MARGIN, as with few process
# pairs); WAITED_APART_BUSY apart, the busy machine's rule (CPU time per
# call against a margin from the run, verdicts.CPU_FLOOR). A real gain clears
# the first: Erlang's HMAC-SHA1 at 1000 B, 1.23x (CI 1.19-1.30), twins at 7%
# and 3% (a node's own threads; they differ from node to node).
WAITED_APART = 0.03
WAITED_APART_BUSY = 0.10


# Paired rounds compare twins that waited alike: a steady wait a few percent
# of each window (an Erlang node's own threads on the pinned CPU: 5-9% on an
# idle 2-vCPU guest) moves both sides of a round. Past this, other processes
# held the CPU for a good part of every round, and the twins, two processes,
# need not have been slowed alike: the busy machine's rule applies.
PAIRED_WAIT_BUSY = 0.15


def _waited_rounds(usual: float, apart: float) -> tuple[tuple[Reason, ...], Reason | None]:
    """(busy, unlike): what the kept rounds' waits say, for the busy
    machine's rule and for a "used" that needs more (verdicts.decide)."""
    needs = round(verdicts.BUSY_NEEDS, 4)
    if usual >= PAIRED_WAIT_BUSY:
        return (reason(Why.TWIN_WAITED, share=round(usual, 4), needs=needs),), None
    points = round(apart * 100, 1)
    if apart >= WAITED_APART_BUSY:
        return (reason(Why.TWINS_WAITED_APART, points=points, needs=needs),), None
    if apart >= WAITED_APART:
        more = round(1 + verdicts.MARGIN + verdicts.ONE_PAIR_MARGIN, 4)
        return (), reason(Why.TWINS_WAITED_APART, points=points, needs=more)
    return (), None


def _waited(
    on: schema.Result, off: schema.Result | None, waits: Mapping[schema.CellKey, float], high: float
) -> tuple[Reason, ...]:
    """What the twins' wait shares say, when one of them waited `high` or more."""
    shares = [waits[r.key] for r in (on, off) if r is not None and r.key in waits]
    worst = max(shares, default=0.0)
    if worst < high:
        return ()
    return (reason(Why.TWIN_WAITED, share=round(worst, 4), needs=round(verdicts.BUSY_NEEDS, 4)),)


# A sample that took this many times its planned length, even the shortest
# of a cell's (its 10th percentile), was stretched by waiting for a CPU: on
# this project's guest at load 11, a masked Python twin's samples of a 5-ms
# plan took 17-60 ms, and its SHA-512 read 3.8x "slower"; every other cell of
# five such runs stayed under 1.3x its plan.
STRETCHED = 2.0


def _stretched(
    on: schema.Result, off: schema.Result | None, sample_ns: float | None
) -> Reason | None:
    """None unless a twin's samples took STRETCHED times their plan even at best."""
    if not sample_ns or off is None or not on.samples or not off.samples:
        return None
    if on.runtime.startswith("openssl") or off.runtime.startswith("openssl"):
        return None  # an openssl run lasts its -seconds whatever the machine does
    for side, r in ((Hw.ON, on), (Hw.OFF, off)):
        stretch = stats.low(r.samples) / sample_ns
        if stretch >= STRETCHED:
            return reason(
                Why.WAITED, side=side.value, stretch=round(stretch, 3), sample_ms=sample_ns / 1e6
            )
    return None


def _decide(
    ctx: HwContext,
    info: schema.Runtime,
    call_id: str,
    evidence: verdicts.Evidence | None,
    feature: str,
) -> verdicts.Judgement:
    if feature in ctx.untestable:
        return ctx.untestable[feature]
    if not via_openssl(info, call_id):
        return verdicts.untested(whynot.bypasses(_path(info, call_id)))
    if ctx.mask_failed:
        return verdicts.untested(reason(Why.MASK_NO_EFFECT))
    if evidence is None:
        return verdicts.untested(reason(Why.NO_MEASUREMENT))
    return verdicts.decide(evidence)


def _round_processes(
    info: schema.Runtime, r: schema.Result, by_round: Mapping[int, Sequence[float]]
) -> dict[int, int] | None:
    """The process pair of each round: round i's samples came from process
    i mod N of each twin (bridge.measure.session), which the cell's `procs`
    record; every openssl run is a process of its own. None: one pair."""
    if info.kind == RuntimeKind.OPENSSL:
        return {i: i for i in by_round}
    return stats.round_processes(r.procs, by_round)


def _best_speedup(results, by_key, r) -> tuple[int, float] | None:
    """(size, speedup) of the largest off/on ratio (of the low statistic, as
    the verdicts) of this call in its scenario."""
    best = None
    for other in results:
        same = (other.scenario, other.runtime, other.call_id) == (r.scenario, r.runtime, r.call_id)
        if not same or other.hw.masked or not other.ok:
            continue
        off = by_key.get(_off(other.key))
        if off is None or not off.ok:
            continue
        ratio = stats.low(off.per_op_ns()) / stats.low(other.per_op_ns())
        if best is None or ratio > best[1]:
            best = (other.size, ratio)
    return best


# Where a feature's gain shows when a call is mostly fixed cost: a sweep of
# large messages of the same primitive.
_LARGER = {"sha": f"{COMMAND} run sha1", "aes": f"{COMMAND} run aes-128-cbc"}


def _larger_example(sc: Facts) -> str:
    for feature in sc.features:
        if feature in _LARGER:
            return _LARGER[feature]
    return ""


def kinds_features(scenarios: Sequence[Facts], kind: str) -> tuple[str, ...]:
    """Features relevant to a runtime kind: those of the scenarios it runs."""
    seen: list[str] = []
    for sc in scenarios:
        if kind in sc.calls:
            seen += [f for f in sc.features if f not in seen]
    return tuple(seen)
