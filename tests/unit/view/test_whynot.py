"""Why a path is not using the hardware, in words (bridge.view.words.why_not): each
reason says what applies and what to do next, and the verdict lines of
every view carry it after the figures (a verdict without figures: instead
of its stored reason)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bridge.cli.common import FORMATS, rendered
from bridge.render import terminal
from bridge.report import schema
from bridge.report.whynot import (
    BypassesEvp,
    Clue,
    CpuLacks,
    EnvMasks,
    NoAsm,
    NoCapvector,
    NoneFound,
    Sign,
    Source,
    TooSmall,
)
from bridge.view import build
from bridge.view.words import why_not
from tests.conftest import FIXTURES

LIB = "/cache/noasm-openssl/lib/libcrypto.so.3"
EVIDENCE = (
    Clue(Source.FILE, Sign.NO_ASM_CODE, "0"),
    Clue(Source.LIBRARY, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),
)


@pytest.mark.parametrize(
    "why, says",
    [
        (CpuLacks("sha", Source.CPUINFO), "the CPU does not offer it (/proc/cpuinfo"),
        (CpuLacks("sha", Source.LIBRARY), "the library does not detect it on this CPU"),
        (EnvMasks("OPENSSL_ia32cap", ":~0x20000000"), "OPENSSL_ia32cap=:~0x20000000 was set"),
        (
            NoAsm(LIB, "OpenSSL 3.5.7 9 Jun 2026", EVIDENCE),
            f"{LIB} (OpenSSL 3.5.7) was built without assembler (no assembler"
            " module in its file; CPUINFO: N/A from OpenSSL_version())",
        ),
        (NoCapvector(LIB, "OpenSSL 3.5.7", EVIDENCE[1:]), "has no capability vector (CPUINFO"),
        (BypassesEvp("_sha2.SHA256Type"), "the call runs _sha2.SHA256Type, which does not"),
        (BypassesEvp("hmac"), "the call runs Python's hmac over hashlib"),
        (TooSmall(16, 16384, 3.1), "at 16 bytes the feature's share of a call is too small"),
        (NoneFound(16384), "no reason found: the library has assembler"),
    ],
)
def test_each_reason_in_words(why, says):
    assert says in why_not(why)


def test_a_clue_two_sources_gave_is_said_once_with_both():
    both = (
        Clue(Source.VERSION_A, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),
        Clue(Source.LIBRARY, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),
        Clue(Source.LIBRARY, Sign.NO_ASM_DEFINE, "compiler: gcc -O2"),
    )
    text = why_not(NoAsm(LIB, "OpenSSL 1.1.1w  11 Sep 2023", both))
    assert "(OpenSSL 1.1.1w) was built" in text
    assert (
        "CPUINFO: N/A from openssl version -a and OpenSSL_version(); no assembler module on"
        " its compiler line from OpenSSL_version()"
    ) in text


def test_sizes_are_said_in_the_scenario_s_unit_and_the_view_s_times_sign():
    text = why_not(TooSmall(1, 10000, 1.5), "iterations", x="x")
    assert "at 1 iterations" in text and "10,000 iterations" in text and "1.50x slower" in text


def _report(verdict: str, speedup, why) -> schema.Report:
    report = schema.load(FIXTURES / "report-hmac-sha1-v1.json")
    v0 = report.verdicts[0]
    head = v0.explanation.split(":")[0]
    text = (
        f"{head} does not use SHA extensions: 1.00× at 1000 bytes, within noise"
        if speedup is not None
        else f"{head}, SHA extensions: {verdict}: the environment bridge was started in"
        " already masks it"
    )
    v = dataclasses.replace(v0, verdict=verdict, speedup=speedup, explanation=text, why=why)
    return dataclasses.replace(report, verdicts=(v,))


def answer_line(report: schema.Report):
    (line,) = [x for a in build(report).answers() if a.kind.value == "hardware" for x in a.lines]
    return line


def test_a_not_used_line_ends_with_its_reason():
    report = _report("not-used", 1.0, NoAsm(LIB, "OpenSSL 3.5.7", EVIDENCE))
    line = answer_line(report)
    assert line.verdict.text == "does not use SHA extensions"
    assert line.reason == why_not(report.verdicts[0].why)
    assert terminal.said(line).endswith(why_not(report.verdicts[0].why))


def test_a_masked_line_says_which_variable_instead_of_its_stored_reason():
    report = _report("masked", None, EnvMasks("OPENSSL_ia32cap", ":~0x20000000"))
    line = answer_line(report)
    assert line.reason == why_not(report.verdicts[0].why)
    assert "already masks it" not in terminal.said(line)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_says_it(fmt):
    report = _report("not-used", 1.0, NoAsm(LIB, "OpenSSL 3.5.7", EVIDENCE))
    out = rendered(fmt, report)
    if fmt == "json":
        assert json.loads(out)["verdicts"][0]["why"]["reason"] == "no-asm"
    else:
        assert "built without assembler" in " ".join(out.split()).replace("\\", ""), fmt


def test_a_smaller_size_s_own_reason_is_said_briefly_in_the_answer():
    report = schema.load(FIXTURES / "report-hmac-sha1-v1.json")
    v0 = report.verdicts[0]
    large = dataclasses.replace(v0, verdict="used", speedup=3.1, size=16384, why=None)
    small = dataclasses.replace(
        v0, verdict="not-used", speedup=1.01, size=16, why=TooSmall(16, 16384, 3.1)
    )
    sizes = {16, 16384}
    results = tuple(
        dataclasses.replace(r, size=n) for r in report.results[:1] for n in sorted(sizes)
    )
    report = dataclasses.replace(report, verdicts=(small, large), results=results)
    line = answer_line(report)
    assert line.figure.endswith("1.01× at 16 B (too small to show)")
    assert all(why_not(w, brief=True) for w in (NoneFound(1), BypassesEvp("x")))
