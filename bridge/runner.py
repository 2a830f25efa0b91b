"""Run a plan: every runtime, every scenario call, every size; build the report.

Failure policy: a runtime that cannot start is *skipped* (with the reason);
a runtime that dies or hangs mid-run is recorded in `errors` and the others
carry on; a call that this OTP/OpenSSL lacks becomes an `unsupported` result.
Ctrl-C/SIGTERM stop the run, but everything measured so far stays in the
report. Nothing here prints: progress goes through a callback.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import bridge
from bridge import calls, environment, inputs, model, otp
from bridge.errors import BridgeError, OperationError, RuntimeUnavailable, WorkerError
from bridge.runtimes.base import Runtime
from bridge.runtimes.erlang import ErlangRuntime
from bridge.runtimes.openssl import OpensslRuntime
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
    command: tuple[str, ...] = ()
    reproduce: str = ""


@dataclass
class Outcome:
    report: model.Report
    interrupted: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.report.errors)


@dataclass
class _Collected:
    runtimes: list[model.Runtime] = field(default_factory=list)
    results: list[model.Result] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)


def validate(plan: Plan) -> list[otp.Installation | None]:
    """Check explicit --erl paths before anything runs: a typo is a usage
    error (exit 2), not a skipped runtime discovered minutes later."""
    return [otp.locate(e) if e is not None else None for e in plan.erl]


def execute(plan: Plan, progress: Progress | None = None) -> Outcome:
    installations = validate(plan)
    note = progress or (lambda _msg: None)
    got = _Collected()
    interrupted = False
    try:
        for kind, label, factory in _runtimes(plan, installations):
            _run_runtime(plan, kind, label, factory, got, note)
    except KeyboardInterrupt:
        interrupted = True
        got.errors.append(
            {
                "runtime": "",
                "kind": "interrupted",
                "message": "interrupted: the run was stopped before it finished",
            }
        )
    return Outcome(report=_report(plan, got), interrupted=interrupted)


def _runtimes(plan: Plan, installations) -> Iterator[tuple[str, str, Callable[[], Runtime]]]:
    s = plan.settings
    if "erlang" in plan.kinds:
        for given, inst in zip(plan.erl, installations, strict=True):
            label = given or "erl"
            yield "erlang", label, (lambda inst=inst: ErlangRuntime(inst or otp.locate(None), s))
    if "python" in plan.kinds:
        for exe in plan.python:
            yield "python", exe or "python", (lambda exe=exe: PythonRuntime(s, executable=exe))
    if "openssl" in plan.kinds:
        for exe in plan.openssl:
            yield "openssl", exe or "openssl", (lambda exe=exe: OpensslRuntime(s, executable=exe))


def _run_runtime(plan, kind, label, factory, got: _Collected, note: Progress) -> None:
    cells = [
        (sc, calls.CALLS[kind, cid], size)
        for sc in plan.scenarios
        for cid in sc.calls.get(kind, ())
        for size in sc.sizes
    ]
    if not cells:
        return
    runtime = None
    try:
        runtime = factory()
        note(f"starting {label}")
        with runtime as info:
            got.runtimes.append(info)
            for i, (sc, call, size) in enumerate(cells, 1):
                note(f"[{info.id}] {sc.name} {call.id} {size} B ({i}/{len(cells)})")
                got.results.append(_measure(runtime, sc, call, size, plan.seed, got))
    except RuntimeUnavailable as exc:
        got.skipped.append({"runtime": label, "kind": kind, "reason": exc.one_line()})
    except WorkerError as exc:
        got.errors.append(
            {
                "runtime": exc.runtime or label,
                "kind": "worker",
                "message": exc.one_line(),
                "stderr_tail": exc.stderr_tail,
            }
        )
    except BridgeError as exc:
        got.errors.append(
            {"runtime": getattr(runtime, "id", label), "kind": "runtime", "message": exc.one_line()}
        )


def _measure(runtime: Runtime, sc: Scenario, call, size: int, seed: int, got) -> model.Result:
    data = inputs.make(seed, sc.name, sc.key_bytes, size)
    try:
        return runtime.measure(sc, call, size, data)
    except OperationError as exc:
        if exc.kind == "unsupported":
            return runtime.unsupported(sc, call, size, exc.message)
        raise WorkerError(
            f"{runtime.id}: {call.id} at {size} B failed: {exc.message}", runtime=runtime.id
        ) from None


def expected_output(sc: Scenario, data: inputs.Inputs) -> bytes:
    """The reference bytes, computed in the driver by Python's standard library."""
    if sc.kind == "mac":
        mac = hmac.digest(data.key, data.data, sc.digest)
        return mac[: sc.mac_bytes] if sc.mac_bytes else mac
    return hashlib.new(sc.digest.replace("-", "_"), data.data).digest()


def interop(plan: Plan, results: list[model.Result]) -> list[dict]:
    checks = []
    for sc in plan.scenarios:
        for size in sc.sizes:
            cell = [
                r for r in results if r.scenario == sc.name and r.size == size and r.status == "ok"
            ]
            if not cell:
                continue
            reference = expected_output(
                sc, inputs.make(plan.seed, sc.name, sc.key_bytes, size)
            ).hex()
            outputs = {f"{r.runtime} {r.call_id} hw={r.hw}": r.output_hex for r in cell}
            checks.append(
                {
                    "scenario": sc.name,
                    "size": size,
                    "reference": reference,
                    "reference_from": "Python standard library in the driver (hmac/hashlib)",
                    "outputs": outputs,
                    "match": all(v == reference for v in outputs.values()),
                    "mismatched": sorted(k for k, v in outputs.items() if v != reference),
                }
            )
    return checks


def _report(plan: Plan, got: _Collected) -> model.Report:
    checks = interop(plan, got.results)
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
        results=tuple(got.results),
        interop=tuple(checks),
        errors=tuple(errors),
        skipped=tuple(got.skipped),
    )
