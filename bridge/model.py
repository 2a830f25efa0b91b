"""Results and reports, and their versioned JSON form (schema "bridge.report/1").

Render, compare and plot read this form and nothing else, so a report written
today still renders later. The schema is documented in README.md ("The JSON
report"). Rules for changing it: adding optional fields keeps version 1;
removing or changing the meaning of a field bumps the version, and
`Report.from_json` keeps reading every older version.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge import stats
from bridge.errors import BridgeError, UsageError

SCHEMA = "bridge.report/1"
SCHEMA_NAME, SCHEMA_VERSION = SCHEMA.split("/")
SCHEMA_VERSION_INT = int(SCHEMA_VERSION)
MAX_REPORT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Runtime:
    """One runtime as it ran: kind erlang | python | openssl, with provenance."""

    id: str
    kind: str
    executable: str
    version: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "executable": self.executable,
            "version": self.version,
            **self.details,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Runtime:
        core = {k: d[k] for k in ("id", "kind", "executable", "version")}
        details = {k: v for k, v in d.items() if k not in core}
        return cls(**core, details=details)


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
    hw: str  # "on" = the machine as found
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

    def per_op_ns(self) -> list[float]:
        if not self.samples and self.point_ns is not None:
            return [self.point_ns]
        if isinstance(self.loops, int):
            return [s / self.loops for s in self.samples]
        return [s / n for s, n in zip(self.samples, self.loops, strict=True)]

    def summary(self) -> stats.Summary:
        return stats.summarize(self.per_op_ns())

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
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
        if self.source == "imported":
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
    def from_json(cls, d: dict[str, Any]) -> Result:
        loops = d.get("loops", 1)
        return cls(
            scenario=d["scenario"],
            runtime=d["runtime"],
            call=d["call"],
            call_id=d.get("call_id", d["call"]),
            api=d.get("api", ""),
            semantics=d.get("semantics", ""),
            algorithm=d.get("algorithm", ""),
            size=int(d["size"]),
            hw=d.get("hw", "on"),
            samples=tuple(int(s) for s in d.get("samples", ())),
            loops=loops if isinstance(loops, int) else tuple(int(n) for n in loops),
            output_hex=d.get("output_hex", ""),
            inputs=d.get("inputs"),
            status=d.get("status", "ok"),
            reason=d.get("reason", ""),
            source=d.get("source", "measured"),
            point_ns=_point(d),
            source_line=d.get("source_line"),
        )


def _point(d: dict[str, Any]) -> float | None:
    if d.get("source") != "imported":
        return None
    return float(d["ns_per_op"]["median"])


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
    interop: tuple[dict[str, Any], ...] = ()
    errors: tuple[dict[str, Any], ...] = ()
    skipped: tuple[dict[str, Any], ...] = ()
    scenarios: tuple[dict[str, Any], ...] = ()  # what was run, for replay and rendering
    verdicts: tuple[dict[str, Any], ...] = ()  # hardware verdicts (bridge.ab)
    hardware: dict[str, Any] = field(default_factory=dict)  # the masks used and their checks
    unstable: tuple[dict[str, Any], ...] = ()  # --until-stable cells that missed the target
    fits: tuple[dict[str, Any], ...] = ()  # cost model per sweep (bridge.fits)
    tc: tuple[dict[str, Any], ...] = ()  # --method tc: the thread's timer:tc figures
    schema: str = SCHEMA

    def runtime(self, runtime_id: str) -> Runtime | None:
        return next((r for r in self.runtimes if r.id == runtime_id), None)

    def to_json(self) -> dict[str, Any]:
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
            "interop": list(self.interop),
            "verdicts": list(self.verdicts),
            "hardware": self.hardware,
            "unstable": list(self.unstable),
            "fits": list(self.fits),
            "tc": list(self.tc),
            "errors": list(self.errors),
            "skipped": list(self.skipped),
        }

    @classmethod
    def from_json(cls, d: Any, source: str = "report") -> Report:
        if not isinstance(d, dict):
            raise UsageError(f"{source}: not a bridge report (the top level is not an object)")
        check_schema(d.get("schema"), source)
        try:
            return cls(
                schema=SCHEMA,
                bridge_version=str(d.get("bridge_version", "")),
                created=str(d.get("created", "")),
                command=list(d.get("command", [])),
                reproduce=str(d.get("reproduce", "")),
                settings=dict(d.get("settings", {})),
                scenarios=tuple(d.get("scenarios", ())),
                environment=dict(d.get("environment", {})),
                runtimes=tuple(Runtime.from_json(r) for r in d["runtimes"]),
                results=tuple(Result.from_json(r) for r in d["results"]),
                interop=tuple(d.get("interop", ())),
                verdicts=tuple(d.get("verdicts", ())),
                hardware=dict(d.get("hardware", {})),
                unstable=tuple(d.get("unstable", ())),
                fits=tuple(d.get("fits", ())),
                tc=tuple(d.get("tc", ())),
                errors=tuple(d.get("errors", ())),
                skipped=tuple(d.get("skipped", ())),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UsageError(f"{source}: malformed bridge report ({_describe(exc)})") from None


def check_schema(schema: Any, source: str) -> None:
    if not isinstance(schema, str) or "/" not in schema:
        raise UsageError(f"{source}: not a bridge report (no 'schema' field)")
    name, _, version = schema.partition("/")
    if name != SCHEMA_NAME or not version.isdigit():
        raise UsageError(f"{source}: unknown schema {schema!r}, expected {SCHEMA}")
    if int(version) > SCHEMA_VERSION_INT:
        raise UsageError(
            f"{source}: written by a newer bridge (schema {schema});"
            f" this bridge reads up to {SCHEMA}",
            hint="upgrade bridge",
        )


def _describe(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return str(exc) or type(exc).__name__


def load(path: str | Path) -> Report:
    p = Path(path)
    try:
        if p.stat().st_size > MAX_REPORT_BYTES:
            raise UsageError(f"{p}: larger than {MAX_REPORT_BYTES // 2**20} MiB, not a report")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{p}: is a directory, not a report") from None
    except UnicodeDecodeError:
        raise UsageError(f"{p}: not a bridge report (binary data, not JSON)") from None
    except OSError as exc:
        raise UsageError(f"{p}: cannot read ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return Report.from_json(data, source=str(p))


def dumps(report: Report) -> str:
    return json.dumps(report.to_json(), indent=1) + "\n"


def write_atomic(path: str | Path, text: str) -> None:
    """Write text so that `path` is never seen half-written: a private
    temporary file in the same directory, fsync, then rename over."""
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise UsageError(f"{p}: cannot write there ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it 0600; a report is for sharing
        os.replace(tmp, p)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise BridgeError(f"{p}: cannot write ({exc.strerror})") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def results_for(report: Report, scenario: str, size: int) -> Sequence[Result]:
    return [r for r in report.results if r.scenario == scenario and r.size == size]
