"""`bridge import-speed`: pasted `openssl speed` output as a bridge report.

Each run found becomes a runtime of kind openssl (labelled with its version
line, its heading and its position) and each number a result with `size`,
`bytes_per_s` and `ops_per_s`, as posted. Imported results have no samples, so
anything comparing them says that significance is unknown.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import bridge
from bridge import import_levels, model, speedparse
from bridge.errors import UsageError

IMPORTED = "as posted: one number from openssl speed output, no samples"


def read_document(path: str, stdin_text: str | None = None) -> tuple[str, str]:
    """(text, name) of FILE or '-'. Refuses binary and oversized input."""
    if path == "-":
        return stdin_text or "", "<stdin>"
    p = Path(path)
    try:
        if p.is_dir():
            raise UsageError(f"{path}: is a directory")
        if p.stat().st_size > speedparse.MAX_INPUT:
            raise UsageError(f"{path}: larger than {speedparse.MAX_INPUT // 2**20} MiB")
        raw = p.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
    if b"\0" in raw:
        raise UsageError(f"{path}: binary data, not openssl speed output")
    return raw.decode("utf-8", "replace"), path


def to_report(text: str, name: str, command: list[str]) -> tuple[model.Report, list[str]]:
    try:
        parsed = speedparse.parse(text)
    except ValueError as exc:
        raise UsageError(f"{name}: {exc}") from None
    if not parsed.runs:
        raise UsageError(f"{name}: nothing recognisable as openssl speed output")
    runtimes, results, cells = [], [], []
    for run in parsed.runs:
        rid = f"openssl#{run.index}"
        runtimes.append(
            model.Runtime(
                id=rid,
                kind="openssl",
                executable="",
                version=run.version or "unknown (no version line in the paste)",
                details={
                    "imported": True,
                    "label": run.label(),
                    "line": run.line,
                    "command": run.command,
                    "heading": run.context,
                    "built_on": run.built_on,
                    "options": run.options,
                    "compiler": run.compiler,
                    "cpuinfo": run.cpuinfo,
                    **({"multi": run.multi} if run.multi else {}),
                },
                hw="on",
            )
        )
        if run.multi:
            cells += import_levels.cells(run, rid, parsed.runs, _call)
        else:
            results += [_result(run, rid, e) for e in run.entries]
    report = model.Report(
        bridge_version=bridge.__version__,
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        command=command,
        reproduce="",
        settings={"imported_from": name},
        environment={},
        runtimes=tuple(runtimes),
        results=tuple(results),
        skipped=tuple(model.Skipped("", "import", w) for w in parsed.warnings),
        scenarios=tuple(
            {"name": a, "description": f"imported from {name}"}
            for a in dict.fromkeys([*(r.scenario for r in results), *(c.scenario for c in cells)])
        ),
        concurrency=import_levels.block(cells),
    )
    return report, parsed.warnings


def _call(run: speedparse.Run, e: speedparse.Entry) -> tuple[str, str]:
    """(call id, call as written) of an imported number."""
    if e.operation:
        return f"speed-{e.operation}", f"openssl speed {e.text} ({e.operation})"
    if e.algorithm.startswith("hmac-"):
        return "speed", f"openssl speed hmac ({e.text})"
    # 3.x times every path through EVP; 1.x only with -evp.
    v = run.version_tuple
    evp = run.evp or (v is not None and v >= (3, 0, 0))
    return ("speed-evp" if evp else "speed"), f"openssl speed {'-evp ' if evp else ''}{e.text}"


def _result(run: speedparse.Run, rid: str, e: speedparse.Entry) -> model.Result:
    call_id, call = _call(run, e)
    return model.Result(
        scenario=e.algorithm,
        runtime=rid,
        call=call,
        call_id=call_id,
        api=f"openssl speed ({e.source})",
        semantics=IMPORTED,
        algorithm=e.algorithm,
        size=e.size,
        hw="on",
        samples=(),
        loops=0,
        output_hex="",
        source="imported",
        point_ns=1e9 / e.ops_per_s if e.ops_per_s > 0 else 0.0,
        source_line=e.line,
    )
