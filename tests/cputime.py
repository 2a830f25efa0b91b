"""CPU time per call from a report, for the tests that judge a measured
effect (issue 35): a busy machine stretches a cell's wall time (its thread
waits for a CPU inside the sample windows), not the CPU time the calls
took, which each runtime records per sample (Result.sample_cpu_ns: the
measuring thread's, or the openssl child's user+system)."""

from __future__ import annotations

import statistics

from bridge.report import schema


def per_call(r: schema.Result) -> list[float]:
    """The cell's CPU ns per call, sample by sample; samples whose CPU time
    was not read are left out."""
    if len(r.sample_cpu_ns) != len(r.samples):
        return []
    return [c / r.loops_of(i) for i, c in enumerate(r.sample_cpu_ns) if c >= 0]


def median(r: schema.Result) -> float:
    values = per_call(r)
    assert values, f"no CPU time recorded in {r.key}"
    return statistics.median(values)


def cells(report: schema.Report, **match: object) -> list[schema.Result]:
    """The measured cells with these fields (`kind`: the runtime's kind;
    `hw`: "on" or "off"; any other Result field by its name)."""
    out = []
    for r in report.results:
        if not r.ok or r.imported:
            continue
        fields = {"kind": report.kind_of(r.runtime), "hw": str(r.hw), "size": r.size}
        fields |= {"scenario": r.scenario, "runtime": r.runtime, "call_id": r.call_id}
        if all(fields[k] == v for k, v in match.items()):
            out.append(r)
    return out


def cell(report: schema.Report, **match: object) -> schema.Result:
    found = cells(report, **match)
    assert len(found) == 1, f"{len(found)} cells match {match}"
    return found[0]


def masked_ratio(report: schema.Report, **match: object) -> float:
    """The masked twin's CPU time per call over the unmasked one's (medians)."""
    return median(cell(report, hw="off", **match)) / median(cell(report, hw="on", **match))
