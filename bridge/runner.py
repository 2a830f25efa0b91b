"""Run a plan: start every runtime, measure every cell in interleaved rounds,
and build the report.

Interleaving: all workers stay up for the whole run, and each cell (one call
of one scenario at one size on one runtime) gets its samples in `rounds`
batches, in turn with the other cells. A slow spell of a shared machine then
lands on every runtime alike and shows in the spread, instead of silently
shifting one runtime's whole number.

Failure policy: a runtime that cannot start is *skipped* (with the reason);
a runtime that dies or hangs is recorded in `errors`, stopped, and the others
carry on; a call that this OTP/OpenSSL lacks becomes an `unsupported`
result. Ctrl-C/SIGTERM stop the run. In every case the samples already taken
stay in the report. Nothing here prints: progress goes through a callback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import hmac
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import bridge
from bridge import ab, calls, ec, environment, fits, hardware, inputs, model, otp, proc, stats
from bridge.errors import OperationError, RuntimeUnavailable, WorkerError
from bridge.runtimes.base import Batch, BatchPlan, Runtime
from bridge.runtimes.erlang import ErlangRuntime
from bridge.runtimes.openssl import OpensslRuntime, check_mask
from bridge.runtimes.python import PythonRuntime
from bridge.scenario import Scenario
from bridge.settings import Settings

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    scenarios: tuple[Scenario, ...]
    settings: Settings
    seed: int
    erl: tuple[str | None, ...] = (None,)  # None: the erl on PATH
    openssl: tuple[str | None, ...] = (None,)
    python: tuple[str | None, ...] = (None,)
    kinds: tuple[str, ...] = calls.RUNTIME_KINDS
    hw: str = "on"  # on | off | both: as found, features masked, or an A/B of the two
    command: tuple[str, ...] = ()
    reproduce: str = ""


@dataclass
class Outcome:
    report: model.Report
    interrupted: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.report.errors)


class _Files:
    """Generated files of file-digest cells, in a private directory that goes
    away with the run; their digests are computed while they are written."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack
        self._dir: str | None = None
        self.references: dict[tuple[str, int], bytes] = {}
        self._made: dict[tuple[str, int], inputs.Inputs] = {}

    def get(self, seed: int, sc: Scenario, size: int) -> inputs.Inputs:
        key = (sc.name, size)
        if key not in self._made:
            if self._dir is None:
                self._dir = self._stack.enter_context(
                    tempfile.TemporaryDirectory(prefix="bridge-files-")
                )
            path, digest = inputs.write_file(seed, sc.name, size, self._dir, sc.digest)
            self.references[key] = digest
            self._made[key] = inputs.Inputs(key=b"", data=b"", path=path, file_size=size)
        return self._made[key]


@dataclass
class _Collected:
    runtimes: list[model.Runtime] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    contexts: dict[str, ab.HwContext] = field(default_factory=dict)
    tc: list[dict] = field(default_factory=list)
    references: dict[tuple[str, int], bytes] = field(default_factory=dict)


@dataclass
class Cell:
    """One call of one scenario at one size on one runtime, filled round by round."""

    runtime: Runtime
    scenario: Scenario
    call: calls.Call
    size: int
    inputs: inputs.Inputs
    api: str = ""
    output: bytes = b""
    samples: list[int] = field(default_factory=list)
    loops: list[int] = field(default_factory=list)
    unsupported: str = ""
    failed: bool = False

    def plan(self, settings: Settings, round_index: int) -> BatchPlan:
        first = not self.loops
        # One call of an openssl process or of a whole-file digest takes a
        # second or so: those cells get the few samples of openssl_runs.
        few = self.runtime.kind == "openssl" or self.scenario.kind == "file-digest"
        count = (
            settings.openssl_runs_in_round(round_index)
            if few
            else settings.samples_in_round(round_index)
        )
        return BatchPlan(
            samples=count,
            warmup_ms=settings.warmup_ms if first else settings.rewarm_ms,
            loops=None if first else self.loops[-1],
        )

    def add(self, batch: Batch) -> None:
        randomised = self.scenario.kind == "sign" and self.call.id.endswith("sign")
        if self.samples and batch.output != self.output and not randomised:
            raise WorkerError(
                f"{self.runtime.id}: {self.call.id} gave different outputs in different rounds",
                runtime=self.runtime.id,
            )
        self.api, self.output = batch.api, batch.output
        self.samples += batch.samples
        self.loops += batch.loops

    def result(self) -> model.Result | None:
        common = dict(
            scenario=self.scenario.name,
            runtime=self.runtime.id,
            call_id=self.call.id,
            semantics=self.call.semantics_for(self.scenario),
            algorithm=self.scenario.algorithm,
            size=self.size,
            hw=self.runtime.hw,
        )
        if self.unsupported:
            return model.Result(
                **common,
                call=self.call.label(self.scenario, ""),
                api="",
                samples=(),
                loops=0,
                output_hex="",
                status="unsupported",
                reason=self.unsupported,
            )
        if not self.samples:
            return None
        return model.Result(
            **common,
            call=self.call.label(self.scenario, self.api),
            api=self.api,
            samples=tuple(self.samples),
            loops=self.loops[0] if len(set(self.loops)) == 1 else tuple(self.loops),
            output_hex=self.output.hex(),
            inputs=self.inputs.to_json(),
        )


def validate(plan: Plan) -> list[otp.Installation | None]:
    """Check explicit --erl paths before anything runs: a typo is a usage
    error (exit 2), not a skipped runtime discovered minutes later."""
    return [otp.locate(e) if e is not None else None for e in plan.erl]


def execute(plan: Plan, progress: Progress | None = None) -> Outcome:
    installations = validate(plan)
    note = progress or (lambda _msg: None)
    got = _Collected()
    cells: list[Cell] = []
    interrupted = False
    cpu = environment.cpu()
    with contextlib.ExitStack() as stack:
        files = _Files(stack)
        got.references = files.references
        try:
            for kind, label, factory in _runtimes(plan, installations):
                on = _start(kind, label, lambda f=factory: f("on", None), stack, got, note)
                if on is None:
                    continue
                if plan.hw != "off":
                    cells += _cells(plan, on, files)
                if plan.hw in ("off", "both"):
                    off = _start_masked(
                        plan, kind, label, factory, got.runtimes[-1], cpu, stack, got, note
                    )
                    if off is not None:
                        cells += _cells(plan, off, files)
            _rounds(plan, cells, got, note)
        except KeyboardInterrupt:
            interrupted = True
            got.errors.append(
                {
                    "runtime": "",
                    "kind": "interrupted",
                    "message": "interrupted: the run was stopped before it finished",
                }
            )
    results = [r for r in (c.result() for c in cells) if r is not None]
    report = _report(plan, got, results)
    if plan.settings.until_stable is not None:
        report = dataclasses.replace(
            report, unstable=tuple(unstable_cells(cells, plan.settings.until_stable))
        )
    return Outcome(report=report, interrupted=interrupted)


Factory = Callable[[str, dict | None], Runtime]  # (hw, mask env) -> runtime


def inspect(plan: Plan, progress: Progress | None = None) -> tuple[dict, list[model.Runtime], dict]:
    """Start each runtime once, without measuring: environment, provenance,
    and the masks an A/B run would use (`bridge env`)."""
    installations = validate(plan)
    note = progress or (lambda _msg: None)
    got = _Collected()
    cpu = environment.cpu()
    armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
    with contextlib.ExitStack() as stack:
        for kind, label, factory in _runtimes(plan, installations):
            if _start(kind, label, lambda f=factory: f("on", None), stack, got, note) is None:
                continue
            info = got.runtimes[-1]
            ctx = ab.plan(info, ab.kinds_features(plan.scenarios, kind), cpu, os.environ, armcap)
            if ctx.mask is not None:
                ctx.mask_check = _mask_evidence(plan, ctx)
            got.contexts[info.id] = ctx
    hw = {
        "experiments": [c.to_json() for c in got.contexts.values()],
        "skipped": got.skipped,
        "errors": got.errors,
    }
    return environment.collect(), got.runtimes, hw


def _runtimes(plan: Plan, installations) -> Iterator[tuple[str, str, Factory]]:
    s = plan.settings
    wanted = {kind for sc in plan.scenarios for kind in sc.calls}
    if "erlang" in plan.kinds and "erlang" in wanted:
        for given, inst in zip(plan.erl, installations, strict=True):
            yield (
                "erlang",
                given or "erl",
                (lambda hw, env, i=inst: ErlangRuntime(i or otp.locate(None), s, hw, env)),
            )
    if "python" in plan.kinds and "python" in wanted:
        for exe in plan.python:
            yield (
                "python",
                exe or "python",
                (lambda hw, env, e=exe: PythonRuntime(s, hw, env, executable=e)),
            )
    if "openssl" in plan.kinds and "openssl" in wanted:
        for exe in plan.openssl:
            yield (
                "openssl",
                exe or "openssl",
                (lambda hw, env, e=exe: OpensslRuntime(s, hw, env, executable=e)),
            )


def _start_masked(plan, kind, label, factory, info, cpu, stack, got, note) -> Runtime | None:
    """The twin of a runtime with the scenario's features masked from process
    start, when the experiment can be made (see bridge.ab)."""
    features = ab.kinds_features(plan.scenarios, kind)
    if not features:
        return None
    armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
    ctx = ab.plan(info, features, cpu, os.environ, armcap)
    got.contexts[info.id] = ctx
    if ctx.mask is None:
        return None
    ctx.mask_check = _mask_evidence(plan, ctx)
    if ctx.mask_check.get("ok") is False:
        return None  # the verdict says the mask did not take effect
    masked_label = f"{label} ({ctx.mask.variable}={ctx.mask.value})"
    return _start(
        kind,
        masked_label,
        lambda: factory("off", ctx.mask.env()),
        stack,
        got,
        note,
        same_id=info.id,
    )


def _mask_evidence(plan: Plan, ctx: ab.HwContext) -> dict:
    """Check the mask string with an openssl CLI of the same generation."""
    cli = next((o for o in plan.openssl if o), None) or shutil.which("openssl")
    if cli is None or ctx.library is None:
        return {"ok": None, "note": "no openssl CLI to check the mask with"}
    try:
        version = proc.run([cli, "version"], timeout=15).stdout.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return {"ok": None, "note": f"could not run {cli}"}
    cli_lib = hardware.parse_library(version)
    if cli_lib is None or hardware.generation(cli_lib[1]) != hardware.generation(ctx.library[1]):
        return {"ok": None, "note": f"{cli} is not of the same OpenSSL generation"}
    return check_mask(cli, ctx.mask, dict(os.environ))


def _start(kind, label, factory, stack, got, note, same_id: str | None = None) -> Runtime | None:
    """Start a runtime (factory() -> Runtime); record it, or why it is skipped.
    Ids are unique among runtimes as found (two installations of OTP 25.2.3
    become erlang@25.2.3 and erlang@25.2.3#2); a masked twin shares its
    partner's id, which is how results and verdicts pair them."""
    note(f"starting {label}")
    try:
        runtime = factory()
        info = runtime.__enter__()
    except RuntimeUnavailable as exc:
        got.skipped.append({"runtime": label, "kind": kind, "reason": exc.one_line()})
        return None
    except WorkerError as exc:
        got.errors.append(_worker_error(exc, label))
        return None
    stack.push(runtime.__exit__)
    taken = {rt.id for rt in got.runtimes if rt.details.get("hw", "on") == "on"}
    wanted = same_id or _unique(info.id, taken)
    if wanted != info.id:
        info = dataclasses.replace(info, id=wanted)
        runtime.rename(wanted)
    got.runtimes.append(info)
    return runtime


def _unique(rid: str, taken: set[str]) -> str:
    n, candidate = 1, rid
    while candidate in taken:
        n += 1
        candidate = f"{rid}#{n}"
    return candidate


def _cells(plan: Plan, runtime: Runtime, files: _Files) -> list[Cell]:
    return [
        Cell(
            runtime,
            sc,
            calls.CALLS[runtime.kind, cid],
            size,
            files.get(plan.seed, sc, size)
            if sc.kind == "file-digest"
            else inputs.for_scenario(plan.seed, sc, size),
        )
        for sc in plan.scenarios
        for cid in sc.calls.get(runtime.kind, ())
        for size in sc.sizes
    ]


def _rounds(plan: Plan, cells: list[Cell], got: _Collected, note: Progress) -> None:
    dead: set[int] = set()  # id() of runtimes that died
    started = time.monotonic()
    rounds = plan.settings.rounds
    for r in range(rounds):
        _round(plan, cells, cells, r, f"round {r + 1}/{rounds}", dead, got, note)
    if plan.settings.tc_calls:
        _thread_method(plan, cells, dead, got, note)
    target = plan.settings.until_stable
    extra = 0
    while target is not None:
        unstable = [c for c in cells if _unstable(c, target) and id(c.runtime) not in dead]
        if not unstable or time.monotonic() - started > plan.settings.max_seconds:
            break
        extra += 1
        # An extra round is a first-round-sized batch (or one openssl run).
        _round(
            plan,
            cells,
            unstable,
            0,
            f"extra round {extra} ({len(unstable)} unstable)",
            dead,
            got,
            note,
        )


def _thread_method(plan: Plan, cells: list[Cell], dead: set[int], got, note) -> None:
    """--method tc: the thread's timer:tc harness on each Erlang cell."""
    n = plan.settings.tc_calls
    for cell in cells:
        if cell.runtime.kind != "erlang" or id(cell.runtime) in dead or not cell.samples:
            continue
        note(f"timer:tc x {n} [{cell.runtime.id}] {cell.call.id} {cell.size} B")
        try:
            reply = cell.runtime.tc(cell.scenario, cell.call, cell.inputs, n)
        except OperationError as exc:
            got.tc.append(
                {
                    "scenario": cell.scenario.name,
                    "runtime": cell.runtime.id,
                    "call_id": cell.call.id,
                    "size": cell.size,
                    "hw": cell.runtime.hw,
                    "unsupported": exc.message,
                }
            )
            continue
        except WorkerError as exc:
            got.errors.append(_worker_error(exc, cell.runtime.id))
            dead.add(id(cell.runtime))
            continue
        per_op = [s / n for s, n in zip(cell.samples, cell.loops, strict=True)]
        got.tc.append(
            {
                "scenario": cell.scenario.name,
                "runtime": cell.runtime.id,
                "call": cell.call.label(cell.scenario, cell.api),
                "call_id": cell.call.id,
                "size": cell.size,
                "hw": cell.runtime.hw,
                "bridge_median_ns": stats.summarize(per_op).median,
                **reply,
            }
        )


def _unstable(cell: Cell, target: float) -> bool:
    if cell.unsupported or cell.failed or not cell.samples:
        return False
    per_op = [s / n for s, n in zip(cell.samples, cell.loops, strict=True)]
    return stats.summarize(per_op).ci_halfwidth_rel > target


def unstable_cells(cells: list[Cell], target: float | None) -> list[dict]:
    if target is None:
        return []
    out = []
    for c in cells:
        if _unstable(c, target):
            per_op = [s / n for s, n in zip(c.samples, c.loops, strict=True)]
            out.append(
                {
                    "scenario": c.scenario.name,
                    "runtime": c.runtime.id,
                    "call_id": c.call.id,
                    "size": c.size,
                    "hw": c.runtime.hw,
                    "ci_halfwidth": stats.summarize(per_op).ci_halfwidth_rel,
                }
            )
    return out


def _round(plan, all_cells, cells, r, label, dead, got, note) -> None:
    """One batch for each of `cells`; a failure is recorded and stops that
    cell (a call error) or that runtime (a worker error)."""
    for cell in cells:
        if id(cell.runtime) in dead or cell.unsupported or cell.failed:
            continue
        batch_plan = cell.plan(plan.settings, r)
        if batch_plan.samples == 0:
            continue
        note(
            f"{label} [{cell.runtime.id}] {cell.scenario.name}"
            f" {cell.call.id} {cell.size} B ({all_cells.index(cell) + 1}/{len(all_cells)})"
        )
        try:
            cell.add(cell.runtime.bench(cell.scenario, cell.call, cell.inputs, batch_plan))
        except OperationError as exc:
            if exc.kind == "unsupported":
                cell.unsupported = exc.message
                continue
            cell.failed = True
            message = f"{cell.runtime.id}: {cell.call.id} at {cell.size} B failed: {exc.message}"
            got.errors.append({"runtime": cell.runtime.id, "kind": "call", "message": message})
        except WorkerError as exc:
            # Gone or out of step: stop it now; its samples so far are kept.
            got.errors.append(_worker_error(exc, cell.runtime.id))
            dead.add(id(cell.runtime))
            cell.runtime.__exit__(None, None, None)


def _worker_error(exc: WorkerError, label: str) -> dict:
    return {
        "runtime": exc.runtime or label,
        "kind": "worker",
        "message": exc.one_line(),
        "stderr_tail": exc.stderr_tail,
    }


def expected_output(sc: Scenario, data: inputs.Inputs) -> bytes | None:
    """The reference bytes, computed in the driver by Python's standard library
    (and `cryptography` for ciphers, when it is installed); None without one."""
    if sc.kind == "mac":
        mac = hmac.digest(data.key, data.data, sc.digest)
        return mac[: sc.mac_bytes] if sc.mac_bytes else mac
    if sc.kind == "cipher":
        return _cipher_reference(sc.cipher, data)
    return hashlib.new(sc.digest.replace("-", "_"), data.data).digest()


def _cipher_reference(cipher: str, data: inputs.Inputs) -> bytes | None:
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        return None
    if cipher.endswith("gcm"):
        return AESGCM(data.key).encrypt(data.iv, data.data, None)
    enc = Cipher(algorithms.AES(data.key), modes.CBC(data.iv)).encryptor()
    return enc.update(data.data) + enc.finalize()


def interop(plan: Plan, results: list[model.Result], references: dict | None = None) -> list[dict]:
    """Per scenario and size: does every runtime's output match the reference?
    Outputs a runtime cannot give independently (openssl enc has no AEAD) are
    listed as unchecked; without a reference, the runtimes must agree."""
    checks = []
    for sc in plan.scenarios:
        for size in sc.sizes:
            cell = [
                r for r in results if r.scenario == sc.name and r.size == size and r.status == "ok"
            ]
            if not cell:
                continue
            if sc.kind == "sign":
                checks.append(_signature_check(plan, sc, size, cell))
                continue
            if sc.kind == "file-digest":
                expected = (references or {}).get((sc.name, size))
            else:
                expected = expected_output(sc, inputs.for_scenario(plan.seed, sc, size))
            outputs = {f"{r.runtime} {r.call_id} hw={r.hw}": r.output_hex for r in cell}
            checked = {k: v for k, v in outputs.items() if v}
            reference = expected.hex() if expected is not None else next(iter(checked.values()), "")
            mismatched = sorted(k for k, v in checked.items() if v != reference)
            checks.append(
                {
                    "scenario": sc.name,
                    "size": size,
                    "reference": reference,
                    "reference_from": "the driver (Python standard library / cryptography)"
                    if expected is not None
                    else "agreement between the runtimes (no reference here)",
                    "outputs": outputs,
                    "unchecked": sorted(k for k, v in outputs.items() if not v),
                    "match": not mismatched,
                    "mismatched": mismatched,
                }
            )
    return checks


def _signature_check(plan: Plan, sc: Scenario, size: int, cell: list[model.Result]) -> dict:
    """ECDSA signatures are randomised: instead of equal bytes, every signature
    a runtime made must verify in the driver's own ECDSA (bridge.ec), and every
    verify call must have accepted the driver's signature."""
    data = inputs.for_scenario(plan.seed, sc, size)
    outputs = {f"{r.runtime} {r.call_id} hw={r.hw}": r.output_hex for r in cell}
    bad = []
    for r in cell:
        name = f"{r.runtime} {r.call_id} hw={r.hw}"
        if not r.output_hex:
            continue
        if r.call_id.endswith("verify"):
            if r.output_hex != "01":
                bad.append(name)
        elif not ec.verify(sc.curve, data.pub, sc.digest, data.data, bytes.fromhex(r.output_hex)):
            bad.append(name)
    return {
        "scenario": sc.name,
        "size": size,
        "reference": "signatures verified by the driver's ECDSA; verify calls must accept"
        " the driver's signature",
        "reference_from": "the driver (bridge.ec, pure Python ECDSA)",
        "outputs": outputs,
        "unchecked": sorted(k for k, v in outputs.items() if not v),
        "match": not bad,
        "mismatched": sorted(bad),
    }


def _report(plan: Plan, got: _Collected, results: list[model.Result]) -> model.Report:
    checks = interop(plan, results, got.references)
    errors = list(got.errors)
    for check in checks:
        if not check["match"]:
            errors.append(
                {
                    "runtime": ", ".join(check["mismatched"]),
                    "kind": "mismatch",
                    "message": f"{check['scenario']} at {check['size']} B: output differs"
                    f" from the reference in {', '.join(check['mismatched'])}",
                }
            )
    return model.Report(
        bridge_version=bridge.__version__,
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        command=list(plan.command),
        reproduce=plan.reproduce,
        settings={**plan.settings.to_json(), "seed": plan.seed},
        scenarios=tuple(sc.to_json() for sc in plan.scenarios),
        environment=environment.collect(),
        runtimes=tuple(got.runtimes),
        results=tuple(results),
        verdicts=tuple(ab.verdict_list(plan.scenarios, results, got.runtimes, got.contexts)),
        fits=tuple(fits.fits_for(results)),
        tc=tuple(got.tc),
        hardware={
            "hw": plan.hw,
            "experiments": [c.to_json() for c in got.contexts.values()],
        },
        interop=tuple(checks),
        errors=tuple(errors),
        skipped=tuple(got.skipped),
    )
