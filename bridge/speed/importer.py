"""`bridge import-speed`: pasted `openssl speed` output as a bridge report.

Each run found becomes a runtime of kind openssl (labelled with its version
line, its heading and its position) and each number a result with `size`,
`bytes_per_s` and `ops_per_s`, as posted. Imported results have no samples, so
anything comparing them says that significance is unknown.
"""

from __future__ import annotations

import datetime
from typing import BinaryIO

import bridge
from bridge import plain
from bridge.analysis import findings, versus
from bridge.errors import UsageError
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.speed import multi, parse

IMPORTED = "as posted: one number from openssl speed output, no samples"


def read_document(path: str, stdin: BinaryIO | None = None) -> tuple[str, str]:
    """(text, name) of FILE or '-' (read from `stdin`, a binary stream).
    Refuses devices, FIFOs, binary and oversized input, reading no more than
    the limit plus one byte."""
    what = "not openssl speed output"
    if path == "-":
        name = "<stdin>"
        raw = plain.read_stream(stdin, parse.MAX_INPUT, name, what) if stdin else b""
    else:
        name = path
        raw = plain.read_bytes(path, parse.MAX_INPUT, what)
    if b"\0" in raw:
        raise UsageError(f"{name}: binary data, {what}")
    # Pasted text is often re-encoded on the way (mail, forums): a stray
    # byte is replaced, not refused; the parser finds the numbers or says so.
    return raw.decode("utf-8", "replace"), name


def to_report(text: str, name: str, command: list[str]) -> tuple[schema.Report, list[str]]:
    try:
        parsed = parse.parse(text)
    except ValueError as exc:
        raise UsageError(f"{name}: {exc}") from None
    if not parsed.runs:
        if parsed.warnings:  # numbers were there, and none of them could be used
            more = len(parsed.warnings) - 1
            raise UsageError(
                f"{name}: no usable measurement: {parsed.warnings[0]}"
                + (f" (and {more} more)" if more else "")
            )
        raise UsageError(f"{name}: nothing recognisable as openssl speed output")
    runtimes, results, cells = [], [], []
    for run in parsed.runs:
        rid = f"openssl#{run.index}"
        runtimes.append(
            schema.Runtime(
                id=rid,
                kind="openssl",
                executable="",
                version=run.version or _unknown_version(run),
                details={
                    "imported": True,
                    "label": run.label().replace("version not shown", _unknown_version(run)),
                    "line": run.line,
                    "command": run.command,
                    "heading": run.context,
                    "built_on": run.built_on,
                    "options": run.options,
                    "compiler": run.compiler,
                    "cpuinfo": run.cpuinfo,
                    **({"multi": run.multi} if run.multi else {}),
                },
                hw=Hw.ON,
            )
        )
        if run.multi:
            cells += multi.cells(run, rid, parsed.runs, _call)
        else:
            results += [_result(run, rid, e) for e in run.entries]
    made = schema.Report(
        bridge_version=bridge.__version__,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command=command,
        reproduce="",
        settings={"imported_from": name},
        environment={},
        runtimes=tuple(runtimes),
        results=tuple(results),
        skipped=tuple(schema.Skipped("", "import", w) for w in parsed.warnings),
        scenarios=tuple(
            {"name": a, "description": f"imported from {name}"}
            for a in dict.fromkeys([*(r.scenario for r in results), *(c.scenario for c in cells)])
        ),
        concurrency=multi.block(cells),
    )
    # Its one finding, × first named between the runs (as posted: no samples,
    # no significance), and the report constructed once with it. Pasted
    # numbers hold no samples, machine or experiment for the others.
    found = findings.Findings(differences=versus.differences(made), concurrency=made.concurrency)
    return findings.report(made, found), parsed.warnings


def _unknown_version(run: parse.Run) -> str:
    generation, _ = _path(run)
    if generation:
        return f"OpenSSL {generation}.x (no version line; told by its -mr record numbering)"
    return "unknown (no version line in the paste)"


def _call(run: parse.Run, e: parse.Entry) -> tuple[str, str]:
    """(call id, call as written) of an imported number."""
    if e.operation:
        return f"speed-{e.operation}", f"openssl speed {e.text} ({e.operation})"
    if e.algorithm.startswith("hmac-"):
        return "speed", f"openssl speed hmac ({e.text})"
    return _speed_call(run, e)


def _result(run: parse.Run, rid: str, e: parse.Entry) -> schema.Result:
    call_id, call = _call(run, e)
    return schema.Result(
        scenario=e.algorithm,
        runtime=rid,
        call=call,
        call_id=call_id,
        api=f"openssl speed ({e.source})",
        semantics=IMPORTED,
        algorithm=e.algorithm,
        size=e.size,
        hw=Hw.ON,
        samples=(),
        loops=0,
        output_hex="",
        source="imported",
        point_ns=1e9 / e.ops_per_s if e.ops_per_s > 0 else 0.0,
        source_line=e.line,
    )


def _speed_call(run: parse.Run, e: parse.Entry) -> tuple[str, str]:
    """(call_id, label) of a throughput number: keyed by what was typed, so
    that the same command pasted from 1.1.1 and from 3.x lines up (and
    `× first named` shows the version ratio); labelled with the code path,
    which 3.x takes through EVP with or without -evp.

    What was typed: the `openssl speed` line when pasted, or the +F index of
    the -mr record (parse.path_of); the generation: the version line, or
    the same index. Unknown -evp counts as plain `speed`."""
    generation, typed_evp = _path(run)
    evp = run.evp if run.evp is not None else typed_evp
    if evp:
        return "speed-evp", f"openssl speed -evp {e.text}"
    if generation == "3":
        return "speed", f"openssl speed {e.text} (3.x: the EVP path, as -evp)"
    if evp is None:
        return "speed", f"openssl speed {e.text} (-evp or not: not shown)"
    return "speed", f"openssl speed {e.text}"


def _path(run: parse.Run) -> tuple[str | None, bool | None]:
    v = run.version_tuple
    generation = None if v is None else ("3" if v >= (3, 0, 0) else "1")
    evp = None
    for entry in run.entries:
        gen, typed = parse.path_of(entry)
        generation = generation or gen
        evp = typed if evp is None else evp
    return generation, evp
