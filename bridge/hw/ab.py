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
from bridge.catalog import calls, vocab
from bridge.catalog.scenario import Scenario
from bridge.hw import hardware, verdicts, whynot
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.report.whynot import LibraryBuild


@dataclass
class HwContext:
    """What the A/B experiment can do for one runtime (filled while the run
    starts; `record()` is its frozen form in the report)."""

    runtime_id: str
    library: tuple[str, tuple[int, int, int]] | None
    mask: hardware.Mask | None = None
    untestable: dict[str, verdicts.Verdict] = field(default_factory=dict)  # feature -> verdict
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
            library=self.build,
        )


def library_of(info: schema.Runtime) -> tuple[str, tuple[int, int, int]] | None:
    """The libcrypto a runtime uses, as (name, version)."""
    d = info.details
    text = {
        "erlang": d.get("crypto_lib", ""),
        "python": d.get("ssl_openssl_version", ""),
        # The CLI on another library (--libcrypto) says "(Library: ...)": the
        # mask is parsed by the library, not by the CLI.
        "openssl": info.version.partition("(Library:")[2] or info.version,
    }.get(info.kind, "")
    return hardware.parse_library(text)


def mask_library(info: schema.Runtime) -> tuple[str, tuple[int, int, int]] | None:
    """The library whose parser the mask string is written for. A Python
    worker can load two: the system's (hashlib, ssl) and the one inside the
    cryptography wheel. The newer generation's string also reads right on
    the older ones of 1.1.1 and later (3.4+ wants ':' fields that 1.1.1-3.3
    ignore, docs/reference/masks.md §2.3), so it is used for both; 1.0.2 stays as it
    is (it cannot mask one feature anyway)."""
    library = library_of(info)
    extra = hardware.parse_library(str(info.details.get("cryptography_openssl_version") or ""))
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
            v = verdicts.decide(None, None, cpu_has=False)
            ctx.untestable[feature] = dataclasses.replace(v, why=whynot.cpu_lacks(feature))
        elif has is None:
            ctx.untestable[feature] = verdicts.decide(None, None, cpu_has=None)
        elif hardware.feature_disabled_by(dict(env), feature, cpu.arch, gen):
            v = verdicts.decide(None, None, already_masked=True)
            why = whynot.env_masks(env, cpu.arch)
            ctx.untestable[feature] = dataclasses.replace(v, why=why)
        else:
            testable.append(feature)
    if testable:
        try:
            ctx.mask = hardware.mask_for(
                tuple(testable), cpu.arch, mask_library(info), armcap_detected
            )
        except hardware.CannotMask as exc:
            for feature in testable:
                ctx.untestable[feature] = verdicts.decide(None, None, cannot_mask=str(exc))
    return ctx


def via_openssl(info: schema.Runtime, call_id: str) -> bool:
    """Does this call reach OpenSSL? Python may hash with built-in code."""
    d = info.details
    call = calls.lookup(info.kind, call_id)
    route = call.route if call else calls.Route.LIBCRYPTO
    if route in (calls.Route.KERNEL, calls.Route.OWN):
        return False  # os.urandom, rand:bytes: no OpenSSL, so no mask reaches them
    if route is calls.Route.HMAC:
        return str(d.get("hmac_impl", "")).startswith("_hashlib")
    if route is calls.Route.HASHLIB:
        return bool(d.get("hashlib_uses_openssl", True))
    lib = library_of(info)
    return lib is None or lib[0] == "OpenSSL"


def _path(info: schema.Runtime, call_id: str) -> str:
    """The implementation a call runs instead of OpenSSL, as the runtime
    named it (Python's built-in hash type, its hmac), or its route."""
    call = calls.lookup(info.kind, call_id)
    route = call.route if call else calls.Route.LIBCRYPTO
    if route is calls.Route.HMAC:  # "none": hmac's own code over hashlib
        impl = str(info.details.get("hmac_impl") or "none")
        return route.value if impl == "none" else impl
    if route is calls.Route.HASHLIB:
        return str(info.details.get("hashlib_sha256_type") or route.value)
    return route.value


def verdict_list(
    scenarios: Sequence[Scenario],
    results: Sequence[schema.Result],
    runtimes: Sequence[schema.Runtime],
    contexts: Mapping[str, HwContext],
    *,
    rounds: Callable[[schema.Result], Mapping[int, Sequence[float]] | None] | None = None,
    busy: str = "",
    sample_ns: float | None = None,
    waits: Mapping[schema.CellKey, float] | None = None,
    wait_high: float = 0.05,
) -> list[schema.HwVerdict]:
    """`rounds` splits a cell's samples by interleaved round
    (bridge.analysis.versus.rounds_of): a "used" then needs the rounds to agree.
    `busy` says what kept the machine busy during the run, when it was
    (bridge.analysis.quietness.busy): a "used" then needs a larger gain.
    `sample_ns`, the planned length of one sample (--sample-ms): a twin whose
    samples took twice that even at best waited for a CPU, and gives no verdict.
    `waits`: each cell's share of its sample windows spent waiting for a CPU
    (the report's cpu_time block); a twin at `wait_high` or more ran on a busy
    machine, as `busy` says of the whole run."""
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
                stretched = _stretched(r, off, sample_ns) if sc.kind != "file-digest" else ""
                paired = _paired_rounds(rounds, r, off)
                paired, left_out, usual, apart = _rounds_that_ran(r, off, paired, wait_high)
                unlike = ""
                if usual is None:  # judged whole: by the cells' wait shares
                    waited = _waited(r, off, waits or {}, wait_high)
                else:  # paired rounds: by how much, and how alike, the rounds kept waited
                    waited, unlike = _waited_rounds(usual, apart)
                seen = (paired, busy or waited, stretched, unlike)
                v = _decide(ctx, info, r, off, feature, seen)
                if v.verdict == "used" and (busy or waited):
                    v = _on_cpu_time(v, (r, off), _paired_rounds(rounds, r, off), paired, info)
                if left_out and v.speedup is not None and v.statistic == stats.PAIRED_STATISTIC:
                    total = left_out + len(paired[0])
                    v = dataclasses.replace(
                        v,
                        note=f"{left_out} of {total} rounds left out: a twin waited for a CPU in"
                        " them, more than in its other rounds",
                    )
                found.append((sc, r, feature, info, v))
    gaps = _twin_gaps(found)
    found = [
        (sc, r, feature, info, verdicts.against_twin_gap(v, *gaps[r.runtime]))
        if r.runtime in gaps
        else (sc, r, feature, info, v)
        for sc, r, feature, info, v in found
    ]
    out = []
    for sc, r, feature, info, v in found:
        build = contexts[r.runtime].build if _on_mapped(r) else None
        v = _by_library(v, build)
        if v.verdict == "not-used" and v.why is None:
            used, largest = _other_sizes(found, sc, r, feature)
            why = whynot.not_used(build, feature, contexts[r.runtime].arch, r.size, used, largest)
            v = dataclasses.replace(v, why=why)
        elif v.verdict == "inconclusive" and v.why is None and v.ci95 is not None:
            used, _ = _other_sizes(found, sc, r, feature)
            why = whynot.too_small(r.size, used)
            # Only where no gain showed at this size (the CI reaches into the
            # margin) and less than the larger size's could be there.
            if why is not None and v.ci95[0] <= 1 + verdicts.MARGIN and v.ci95[1] < why.speedup:
                v = dataclasses.replace(v, why=why)
        best = _best_speedup(results, by_key, r) if v.verdict == "used" else None
        out.append(
            schema.HwVerdict(
                scenario=sc.name,
                runtime=r.runtime,
                call=r.call,
                call_id=r.call_id,
                feature=feature,
                size=r.size,
                verdict=v.verdict,
                speedup=v.speedup,
                speedup_ci95=v.ci95,
                statistic=(v.statistic or stats.LOW_STATISTIC) if v.speedup is not None else "",
                explanation=verdicts.explain(
                    v,
                    who=who(info, r.call),
                    feature=feature_name(feature),
                    size=r.size,
                    best=best,
                    larger_example=_larger_example(sc),
                    unit=sc.size_unit,
                ),
                why=v.why,
            )
        )
    return out


# Verdicts decided before anything is measured: what the library has does not change them.
_UNTESTED = ("cpu-lacks", "masked", "not-openssl")


def _by_library(v: verdicts.Verdict, build: LibraryBuild | None) -> verdicts.Verdict:
    """A verdict on a library that has no assembler, or no capability
    vector, is not-used whatever its twins measured: no mask can change what
    it runs, so a gap between them is the two processes' (the figures stay,
    for what they show)."""
    if v.verdict in _UNTESTED:
        return v
    found = whynot.library(build)
    if found is None:
        return v
    return dataclasses.replace(v, verdict="not-used", masked_faster=False, why=found)


def _on_mapped(r: schema.Result) -> bool:
    """Does the call run on the libcrypto its process maps? Not Python's
    calls through the cryptography package (their api, as the worker names
    it, says so), whose wheel links an OpenSSL of its own."""
    return not r.api.startswith("cryptography ")


def _other_sizes(found, sc: Scenario, r: schema.Result, feature: str):
    """(size, speedup) of each `used` verdict of the same call and feature
    in the run, and the largest size it was judged at."""
    same = [
        (r2.size, v2)
        for sc2, r2, f2, _, v2 in found
        if (sc2.name, r2.runtime, r2.call_id, f2) == (sc.name, r.runtime, r.call_id, feature)
    ]
    used = [(n, v2.speedup) for n, v2 in same if v2.verdict == "used" and v2.speedup]
    return used, max(n for n, _ in same)


def _twin_gaps(found) -> dict[str, tuple[float, str]]:
    """Per runtime, the largest gap its two twins showed that no mask can
    cause: a masked run faster, its CI clear of the noise margin (1/ the CI's
    upper end), and where ("sha512 at 8 KiB")."""
    gaps: dict[str, tuple[float, str]] = {}
    for sc, r, _, _, v in found:
        if not v.masked_faster or v.ci95 is None or v.ci95[1] <= 0:
            continue
        gap = 1 / v.ci95[1]
        if gap > gaps.get(r.runtime, (0.0, ""))[0]:
            where = f"{r.call_id} in {sc.name} at {verdicts.size_text(r.size, sc.size_unit)}"
            gaps[r.runtime] = (gap, where)
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


def feature_name(feature: str) -> str:
    parts = [vocab.FEATURE_NAMES.get(f, f) for f in feature.split("+")]
    if len(parts) == 1:
        return parts[0]
    return " and ".join(p.split(" (")[0] for p in parts) + " (masked together)"


def _paired_rounds(rounds, on, off):
    if rounds is None or off is None:
        return None
    a, b = rounds(on), rounds(off)
    return None if a is None or b is None else (a, b)


def _round_waits(r: schema.Result, by_round: Mapping[int, Sequence[float]]) -> dict[int, float]:
    """Per round, the share of its sample windows the cell spent waiting for
    a CPU (sample_wait_ns over the window), where the report has it."""
    n = len(r.samples)
    if len(r.sample_wait_ns) != n:
        return {}
    out = {}
    for i, span in _round_spans(by_round, n):
        pairs = [(r.sample_wait_ns[j], max(r.sample_wait_ns[j], r.samples[j])) for j in span]
        pairs = [(w, t) for w, t in pairs if w >= 0 and t > 0]
        if pairs:
            out[i] = sum(w for w, _ in pairs) / sum(t for _, t in pairs)
    return out


def _round_spans(by_round: Mapping[int, Sequence[float]], n: int):
    """(round, the indices of its samples in the cell) for each round, in
    order: bridge.analysis.versus.rounds_of cuts a cell's samples into its
    rounds one after another, so round i's start is the sizes before it."""
    pos = 0
    for i in sorted(by_round):
        yield i, range(pos, min(pos + len(by_round[i]), n))
        pos += len(by_round[i])


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
# pairs); WAITED_APART_BUSY apart, the busy machine's 2x. A real gain clears
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


def _waited_rounds(usual: float, apart: float) -> tuple[str, str]:
    """(busy, unlike): what the kept rounds' waits say, for the busy
    machine's rule and for a "used" that needs more (verdicts.decide)."""
    if usual >= PAIRED_WAIT_BUSY:
        return f"a twin waited for a CPU {usual:.0%} of its sample time in a usual round", ""
    gap = f"the twins' waits for a CPU were {apart * 100:.0f} points apart in a usual round"
    if apart >= WAITED_APART_BUSY:
        return gap, ""
    return "", gap if apart >= WAITED_APART else ""


def _waited(on, off, waits: Mapping[schema.CellKey, float], high: float) -> str:
    """What the twins' wait shares say, when one of them waited `high` or more."""
    shares = [waits[r.key] for r in (on, off) if r is not None and r.key in waits]
    worst = max(shares, default=0.0)
    return f"a twin waited for a CPU {worst:.0%} of its sample time" if worst >= high else ""


# A sample that took this many times its planned length, even the shortest
# of a cell's (its 10th percentile), was stretched by waiting for a CPU: on
# this project's guest at load 11, a masked Python twin's samples of a 5-ms
# plan took 17-60 ms, and its SHA-512 read 3.8x "slower"; every other cell of
# five such runs stayed under 1.3x its plan.
STRETCHED = 2.0


def _stretched(on, off, sample_ns: float | None) -> str:
    """ "" unless a twin's samples took STRETCHED times their plan even at best."""
    if not sample_ns or off is None or not on.samples or not off.samples:
        return ""
    if on.runtime.startswith("openssl") or off.runtime.startswith("openssl"):
        return ""  # an openssl run lasts its -seconds whatever the machine does
    for name, r in (("unmasked", on), ("masked", off)):
        stretch = stats.low(r.samples) / sample_ns
        if stretch >= STRETCHED:
            return (
                f"the {name} run's samples took {stretch:.1f}× their planned"
                f" {sample_ns / 1e6:g} ms even at best: it waited for a CPU, so its time per"
                " call is not the call's cost; rerun on a quieter machine"
            )
    return ""


def _cpu_rounds(
    r: schema.Result, by_round: Mapping[int, Sequence[float]]
) -> dict[int, list[float]] | None:
    """The cell's CPU ns per call by round, its samples cut into rounds as
    their wall times are; samples whose CPU time was not read are left out.
    None: the cell has no CPU time."""
    n = len(r.samples)
    if len(r.sample_cpu_ns) != n:
        return None
    out = {}
    for i, span in _round_spans(by_round, n):
        values = [r.sample_cpu_ns[j] / r.loops_of(j) for j in span if r.sample_cpu_ns[j] > 0]
        if values:
            out[i] = values
    return out


def _on_cpu_time(v: verdicts.Verdict, twins, rounds, kept, info) -> verdicts.Verdict:
    """A "used" from twins that waited for a CPU (its wall-time CI cleared
    the busy machine's 2x), asked of CPU time per call too, over the same
    paired rounds: where that does not clear 2x as well, the verdict is
    inconclusive. Waiting stretches a twin's wall time; sharing a CPU with
    other work also stretches its CPU time, less. Beside two CPU hogs (load
    13-16) Python's SHA-512 and ChaCha20 controls read 3.7-5.7x slower
    masked by wall time (CI low ends 2.1-4.7), the masked twin waiting
    36-80% of its windows; by CPU time 0.9-1.3x (low ends 0.55-1.11), and an
    Erlang ChaCha20 cell 3.3x (low end 1.92). Real gains in the same
    conditions: SHA-256 at 8 and 16 KiB, 3.3-4.2x by CPU time (low ends
    2.84-3.74). A cell without CPU time, or too few rounds of it, keeps its
    verdict."""
    on, off = twins
    if rounds is None or kept is None:
        return v
    a, b = _cpu_rounds(on, rounds[0]), _cpu_rounds(off, rounds[1])
    if a is None or b is None:
        return v
    keep = set(kept[0]) & set(kept[1])
    a, b = ({i: x for i, x in side.items() if i in keep} for side in (a, b))
    cpu = stats.paired_ratio(a, b, _round_processes(info, on, rounds[0]))
    if cpu is None or cpu.ci95[0] > 1 + verdicts.BUSY_MARGIN:
        return v
    lo, hi = v.ci95 or (v.speedup, v.speedup)
    return dataclasses.replace(
        v,
        verdict="inconclusive",
        reason=f"{v.speedup:.2f}× slower masked (CI {lo:.2f}–{hi:.2f}), but a twin waited for"
        f" a CPU, and by CPU time per call it is {cpu.ratio:.2f}× (CI {cpu.ci95[0]:.2f}–"
        f"{cpu.ci95[1]:.2f}), short of the {1 + verdicts.BUSY_MARGIN:.0f}× a busy machine"
        " needs; rerun on a quieter machine",
    )


def _decide(ctx, info, on, off, feature, seen=(None, "", "", "")) -> verdicts.Verdict:
    rounds, busy, stretched, unlike = seen
    if feature in ctx.untestable:
        return ctx.untestable[feature]
    if not via_openssl(info, on.call_id):
        v = verdicts.decide(None, None, via_openssl=False)
        return dataclasses.replace(v, why=whynot.bypasses(_path(info, on.call_id)))
    if ctx.mask_failed:
        return verdicts.decide(None, None, cannot_mask="the mask did not take effect")
    if off is None or not off.ok:
        return verdicts.decide(None, None, cannot_mask="the masked run has no measurement")
    return verdicts.decide(
        on.per_op_ns(),
        off.per_op_ns(),
        evidence=_evidence(info),
        rounds=rounds,
        busy=busy,
        stretched=stretched,
        processes=_round_processes(info, on, rounds[0]) if rounds else None,
        unlike=unlike,
    )


def _round_processes(
    info: schema.Runtime, r: schema.Result, by_round: Mapping[int, Sequence[float]]
) -> dict[int, int] | None:
    """The process pair of each round: round i's samples came from process
    i mod N of each twin (bridge.measure.session), which the cell's `procs`
    record; every openssl run is a process of its own. None: one pair."""
    if info.kind == "openssl":
        return {i: i for i in by_round}
    if not r.procs:
        return None
    return {i: r.procs[span[0]] for i, span in _round_spans(by_round, len(r.procs)) if span}


def _evidence(info: schema.Runtime) -> tuple[str, str]:
    """What one sample of this runtime is, and the option that takes more."""
    if info.kind == "openssl":
        return "openssl run", f"--openssl-runs {stats.MIN_CI_SAMPLES}"
    return "sample", "--samples 6"


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
_LARGER = {"sha": "bridge run sha1", "aes": "bridge run aes-128-cbc"}


def _larger_example(sc: Scenario) -> str:
    for feature in sc.features:
        if feature in _LARGER:
            return _LARGER[feature]
    return ""


def who(info: schema.Runtime, call: str) -> str:
    """A call named with its runtime kind: "Erlang crypto:hash(...)". openssl
    calls already read "openssl speed ..."."""
    if info.kind == "openssl":
        return call
    return f"{vocab.KIND_NAMES.get(info.kind, info.kind)} {call}"


def kinds_features(scenarios: Sequence[Scenario], kind: str) -> tuple[str, ...]:
    """Features relevant to a runtime kind: those of the scenarios it runs."""
    seen: list[str] = []
    for sc in scenarios:
        if kind in sc.calls:
            seen += [f for f in sc.features if f not in seen]
    return tuple(seen)
