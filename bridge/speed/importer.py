"""`bridge import-speed`: pasted `openssl speed` output as a bridge report.

Each run found becomes a runtime of kind openssl (labelled with its version
line, its heading and its position) and each number a result with `size`,
`bytes_per_s` and `ops_per_s`, as posted. Imported results have no samples, so
anything comparing them says that significance is unknown.
"""

from __future__ import annotations

import datetime
import math
from typing import BinaryIO

import bridge
from bridge import plain
from bridge.analysis import findings, versus
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import UsageError
from bridge.report import check, schema
from bridge.report.hw import Hw
from bridge.report.scenario import ScenarioRun
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
    for run in parsed.runs:
        _holdable(run, name)
    runtimes, results, cells = [], [], []
    for run in parsed.runs:
        rid = f"openssl#{run.index}"
        runtimes.append(
            schema.Runtime(
                id=rid,
                kind=RuntimeKind.OPENSSL,
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
            ScenarioRun(name=a, description=f"imported from {name}")
            for a in dict.fromkeys([*(r.scenario for r in results), *(c.scenario for c in cells)])
        ),
        concurrency=multi.block(cells),
    )
    # Its one finding, × first named between the runs (as posted: no samples,
    # no significance), and the report constructed once with it. Pasted
    # numbers hold no samples, machine or experiment for the others.
    found = findings.Findings(differences=versus.differences(made), concurrency=made.concurrency)
    return findings.report(made, found), parsed.warnings


# The longest algorithm name taken: openssl's are under 40 characters
# ("aes-256-cbc-hmac-sha256"); a name becomes an id of the report.
MAX_NAME = 200


def _holdable(run: parse.Run, name: str) -> None:
    """Refuse, naming the line, what a report cannot hold (bridge.report.check
    would refuse the report): a size past its bound (`+H:100000000000000000000`),
    a rate so small that its time per operation is not a finite number, more
    processes than a report's levels go to, a name that is no algorithm's.
    The published schema is not run over the result (jsonschema takes about
    a millisecond per result: 80 s for a 1.2 MB row); what an import
    writes is checked against it by tests/unit/speed/test_holdable.py."""
    if run.multi > check.MAX_LEVEL:
        raise UsageError(
            f"{name}: line {run.line}: openssl speed -multi {run.multi}: more processes than"
            f" a report holds (at most {check.MAX_LEVEL})"
        )
    for e in (*run.entries, *(c for kids in run.children.values() for c in kids)):
        if len(e.text) > MAX_NAME:
            raise UsageError(
                f"{name}: line {e.line}: an algorithm name of {len(e.text)} characters"
                f" ({plain.printable(e.text[:40])}...), longer than any openssl speed prints"
            )
        what = f"{name}: line {e.line}: {e.text}" + (f" {e.operation}" if e.operation else "")
        if e.size > check.MAX_SIZE:
            raise UsageError(
                f"{what}: a size of {e.size} bytes, larger than a report holds"
                f" ({check.MAX_SIZE >> 30} GiB)"
            )
        if not math.isfinite(1e9 / e.ops_per_s) or not math.isfinite(e.bytes_per_s):
            raise UsageError(
                f"{what}: {e.ops_per_s:g} operations/s ({e.bytes_per_s:g} bytes/s), a rate that a"
                " report cannot hold as a finite time per operation"
            )


def _unknown_version(run: parse.Run) -> str:
    generation, _ = run.typed_path
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
    generation, typed_evp = run.typed_path
    evp = run.evp if run.evp is not None else typed_evp
    if evp:
        return "speed-evp", f"openssl speed -evp {e.text}"
    if generation == "3":
        return "speed", f"openssl speed {e.text} (3.x: the EVP path, as -evp)"
    if evp is None:
        return "speed", f"openssl speed {e.text} (-evp or not: not shown)"
    return "speed", f"openssl speed {e.text}"
