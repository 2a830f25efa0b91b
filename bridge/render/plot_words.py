"""The words a picture draws (`bridge plot`): each runtime by its version,
each call by its short name, the verdicts of a ratio series, and the caption
line, all from the reports alone (their provenance, never this machine's).
Pure functions, no matplotlib; every text from a report goes through
bridge.render.escape.svg_text."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import datetime, timezone

from bridge.catalog.vocab import RuntimeKind
from bridge.render.escape import svg_text
from bridge.report import provenance, schema
from bridge.view import units
from bridge.view import words as view_words

# The longest name a picture draws whole (a runtime, a call, a label).
NAME = 48
# The characters of a caption or title line at the picture's font size: a
# 7-inch figure holds about 105 at 8 pt, 95 at 9 pt (DejaVu Sans averages
# 0.55 em a character).
CAPTION_WRAP = 92
TITLE_WRAP = 86
LEGEND_WRAP = 88  # after the legend's handle
# A call's full text when it is this short ("crypto:hash(sha256, Data)"),
# else its short name, as a narrow table names it ("crypto:macN", "hmac.digest").
CALL_WHOLE = 32
NBSP = "\u00a0"
# Verdicts that decide something: drawn as filled markers, the others hollow.
DECISIVE = frozenset({"used", "not-used", "faster", "slower"})
# How a verdict code reads on a picture, where the code itself does not.
WORDS = {
    "not-used": "not used",
    "not-openssl": "not OpenSSL's path",
    "unresolved": "too few rounds to tell",
    "unknown (no samples)": "no CI (as posted)",
    "unknown": "no CI (as posted)",
}


def size_unit(report: schema.Report, scenario: str) -> str:
    """What a scenario's sizes count: bytes, iterations, or per call."""
    return units.unit(report, scenario)


def size(n: int, unit: str = units.BYTES) -> str:
    """A size as a tick or a list says it: 16 B, 1 KiB, 1,024 iterations."""
    return units.short(n, unit)


def axis_label(unit: str) -> str:
    """The size axis's label."""
    if unit == units.BYTES:
        return "message size (bytes)"
    if unit == units.PER_CALL:
        return "message size (bytes, signed or agreed per call)"
    return unit


def runtime_name(report: schema.Report, runtime_id: str) -> str:
    """A runtime by its kind and version, as its provenance says: "erlang
    25.2.3 / OpenSSL 3.0.19" (the libcrypto crypto:info_lib() reported),
    "python 3.11.7", "openssl 3.0.19"; a running node adds its host."""
    rt = report.runtime(runtime_id)
    if rt is None:
        return svg_text(runtime_id, NAME)
    d = rt.details
    if isinstance(d, provenance.ErlangDetails):
        otp = d.otp_version or rt.version.removeprefix("OTP").strip()
        lib = _library(d.crypto_lib)
        text = f"erlang {otp}" + (f" / {lib}" if lib else "")
    elif rt.kind == RuntimeKind.PYTHON:
        text = "python " + (rt.version.split()[-1] if rt.version.strip() else "?")
    elif isinstance(d, provenance.ImportedDetails):
        text = f"openssl {d.label or rt.version}"
    elif rt.kind == RuntimeKind.OPENSSL:
        words = rt.version.split()
        flavour = " ".join(words[:2]) if words[:1] != ["OpenSSL"] else ""
        text = f"openssl {flavour}" if flavour else f"openssl {' '.join(words[1:2]) or '?'}"
    else:
        text = f"{rt.kind} {rt.version}"
    host = rt.node_host
    return svg_text(text + (f" on {host}" if host else ""), NAME)


def _library(lib: object) -> str:
    """ "OpenSSL 3.0.19 27 Jan 2026" -> "OpenSSL 3.0.19"; anything else as it is."""
    words = str(lib or "").split()
    return " ".join(words[:2]) if words[:1] == ["OpenSSL"] else " ".join(words[:3])


class Names:
    """Each report's runtimes by name, told apart: a runtime id where two
    runtimes of one report read the same, and the report's label where one
    name is in several reports (the same set-up run twice)."""

    def __init__(self, reports: Sequence[tuple[str, schema.Report]]) -> None:
        self._own: dict[tuple[int, str], str] = {}
        for n, (_, rep) in enumerate(reports):
            ids = list(dict.fromkeys(rt.id for rt in rep.runtimes))
            ids += [r.runtime for r in rep.results if r.runtime not in ids]
            named = {rid: runtime_name(rep, rid) for rid in ids}
            for rid, name in named.items():
                twins = [other for other, same in named.items() if same == name]
                self._own[(n, rid)] = name if len(twins) == 1 else f"{name} ({svg_text(rid, NAME)})"
        self._of = dict(self._own)
        for (n, rid), name in self._own.items():
            if any(m != n and other == name for (m, _), other in self._own.items()):
                self._of[(n, rid)] = f"{name} [{svg_text(reports[n][0], NAME)}]"
        self._reports = reports

    def of(self, n: int, runtime_id: str) -> str:
        """The name in a picture of all the reports."""
        found = self._of.get((n, runtime_id))
        return found if found is not None else runtime_name(self._reports[n][1], runtime_id)

    def own(self, n: int, runtime_id: str) -> str:
        """The name within its report (a line that names the report already)."""
        found = self._own.get((n, runtime_id))
        return found if found is not None else runtime_name(self._reports[n][1], runtime_id)


def call_name(call: str, call_id: str) -> str:
    """A call as the tables name it: whole when short, else its short name."""
    if len(call) <= CALL_WHOLE:
        return svg_text(call, NAME)
    head = call.split("(")[0]
    return svg_text(head if head.endswith(f":{call_id}") else call_id or head, NAME)


def hw_verdict(verdict: str, feature: str) -> str:
    """A hardware verdict in a few words: "uses SHA extensions"."""
    name = svg_text(view_words.feature(feature).split(" (")[0], NAME) if feature else "the feature"
    if verdict == "used":
        return f"uses {name}"
    if verdict == "not-used":
        return f"does not use {name}"
    return word(verdict)


def word(verdict: str) -> str:
    """A verdict code in words (a code this bridge does not know, as it is)."""
    return WORDS.get(verdict) or svg_text(str(verdict).replace("-", " "), NAME)


def verdicts_at(found: Sequence[tuple[int, str]], unit: str, several: bool) -> str:
    """The verdicts of a series, grouped: "uses SHA at 1 KiB, 16 KiB;
    inconclusive at 16 B" (without sizes when there is one)."""
    by: dict[str, list[int]] = {}
    for n, said in found:
        by.setdefault(said, []).append(n)
    if not several:
        return "; ".join(by)
    # A size is one word to the wrapping (a no-break space): "1 KiB", never "1" and "KiB".
    return "; ".join(
        f"{said} at {', '.join(size(n, unit).replace(' ', NBSP) for n in ns)}"
        for said, ns in by.items()
    )


def ratio_text(ratio: float, ci: tuple[float, float] | None) -> str:
    """11.72× (3.78–15.61), or 2.33× (no CI)."""
    if ci is None:
        return f"{ratio:.2f}× (no CI)"
    return f"{ratio:.2f}× ({ci[0]:.2f}–{ci[1]:.2f})"


def caption(reports: Sequence[tuple[str, schema.Report]]) -> list[str]:
    """What ties the picture to a machine, per report: the CPU, each
    runtime's version, bridge's version and when the run was made, from the
    report's provenance; wrapped to the picture's width."""
    lines = []
    names = Names(reports)
    for n, (label, rep) in enumerate(reports):
        runtimes = [names.own(n, rt.id) for rt in rep.runtimes if not rt.masked]
        parts = [
            _cpu(rep),
            ", ".join(dict.fromkeys(runtimes)) or "no runtimes recorded",
            f"bridge {svg_text(rep.bridge_version, 24) or '(version not recorded)'}",
            when(rep.created),
        ]
        head = f"{svg_text(label, NAME)}: " if len(reports) > 1 else ""
        lines += textwrap.wrap(
            head + " · ".join(parts), CAPTION_WRAP, subsequent_indent="  ", break_on_hyphens=False
        )
    return lines


def _cpu(rep: schema.Report) -> str:
    env = rep.environment
    model = env.cpu_model
    if not model:
        source = rep.imported_from
        return "imported: CPU not recorded" if source is not None else "CPU not recorded"
    virt = ", virtualized" if env.virtualized else ""
    count = env.cpu_count
    cpus = f", {count} CPUs" if count else ""
    return svg_text(f"{model} ({env.arch if env.arch is not None else '?'}{cpus}{virt})", 80)


def when(created: str) -> str:
    """The run's date and time in UTC: 2026-12-01 21:13 UTC."""
    try:
        t = datetime.fromisoformat(created)
    except (TypeError, ValueError):
        return svg_text(created, 40) or "date not recorded"
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc)
        return t.strftime("%Y-%m-%d %H:%M UTC")
    return t.strftime("%Y-%m-%d %H:%M")


def wrapped(text: str, width: int = TITLE_WRAP) -> str:
    """A title or a legend label, each of its lines broken into lines the
    picture holds."""
    return "\n".join(
        "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False))
        or line
        for line in text.split("\n")
    )
