"""The answer fits the question: golden answer blocks of each run shape, from
real runs (tests/fixtures/view: hmac-sha1 --quick with the hardware A/B, a
--concurrency run, tls-handshake, bridge time with Erlang, Python and Elixir
expressions; docs/findings/reports/otp23-otp25.json for two OTPs), at 80
columns. BRIDGE_UPDATE_GOLDEN=1 rewrites them; read the diff."""

from __future__ import annotations

import dataclasses
import os
import re

import pytest

from bridge.analysis import findings
from bridge.analysis.findings import complete
from bridge.render import layout, terminal
from bridge.report import schema
from bridge.view import Detail, build
from bridge.view.model import AnswerKind, Tone
from tests.conftest import FIXTURES, ROOT

VIEW = FIXTURES / "view"
GOLDEN = FIXTURES / "golden" / "answers"
SHAPES = {
    "hw-ab": (VIEW / "hmac.json", AnswerKind.HARDWARE),
    "versions": (ROOT / "docs" / "findings" / "reports" / "otp23-otp25.json", AnswerKind.VERSIONS),
    "concurrency": (VIEW / "conc.json", AnswerKind.SCALING),
    "tls": (VIEW / "tls.json", AnswerKind.HANDSHAKES),
    "time": (VIEW / "time-labels.json", AnswerKind.EXPRESSIONS),
}


def answers(path, detail=Detail.NORMAL):
    return build(complete(schema.load(path)), detail)


def refound(path) -> schema.Report:
    """The same run as bridge writes a report now: its findings computed
    from what it measured (bridge.analysis.findings), with reason codes and
    none of the sentences older reports stored."""
    base = schema.load(path)
    # What only older reports stored: their sentences about the machine and the levels.
    if base.noise is not None:
        base = dataclasses.replace(
            base, noise=dataclasses.replace(base.noise, warnings=None, advice=None)
        )
    if base.concurrency is not None:
        base = dataclasses.replace(
            base, concurrency=dataclasses.replace(base.concurrency, warnings=None)
        )
    return findings.report(base, findings.compute(base))


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("codes", [False, True], ids=["stored", "codes"])
def test_answer_block_golden(shape, codes):
    path, kind = SHAPES[shape]
    view = build(refound(path)) if codes else answers(path)
    assert kind in {a.kind for a in view.answers()}
    lines = []
    for s in view.sections:
        lines += layout.wrap(f"== {s.title}", 80, indent="   ")
        for a in s.answers:
            lines += terminal.answer_lines(a, 80)
    text = "\n".join(lines) + "\n"
    assert max(map(len, text.splitlines())) <= 80
    golden = GOLDEN / (f"{shape}.codes.txt" if codes else f"{shape}.txt")
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_a_report_with_codes_is_worded_from_them_alone():
    """A report as bridge writes it now holds no sentence: every withheld
    verdict's reason and rerun come from its codes (bridge.view.words)."""
    for shape, (path, _) in SHAPES.items():
        report = refound(path)
        assert not any(v.explanation for v in report.verdicts), shape
        assert not any(d.note for d in report.differences or ()), shape
        assert report.noise is None or report.noise.warnings is None, shape
        for a in build(report).answers():
            for line in a.lines:
                if line.verdict.tone is Tone.WARN:
                    assert line.reason, (shape, line)


def test_answers_come_in_the_order_of_the_questions():
    """The question the scenario exists for first (a TLS run's handshakes, a
    --concurrency run's scaling), then hardware, versions, times."""
    order = list(AnswerKind)
    for shape, (path, kind) in SHAPES.items():
        for s in answers(path).sections:
            kinds = [a.kind for a in s.answers]
            if shape in ("tls", "concurrency"):
                assert kinds[0] is kind
                kinds = kinds[1:]
            assert [order.index(k) for k in kinds] == sorted(order.index(k) for k in kinds)


def test_every_withheld_verdict_says_why():
    """inconclusive, ?, unclear: each line with a WARN verdict has a reason."""
    for path, _ in SHAPES.values():
        for a in answers(path).answers():
            for line in a.lines:
                if line.verdict.tone is Tone.WARN:
                    assert line.reason, line


def test_versions_name_both_sides_and_say_slower_or_faster():
    view = answers(SHAPES["versions"][0])
    lines = [line for a in view.answers() if a.kind is AnswerKind.VERSIONS for line in a.lines]
    assert lines
    for line in lines:
        assert " against " in line.subject
        word = line.verdict.text
        assert any(w in word for w in ("slower", "faster", "within noise", "?")), word
    # The smallest and the largest size of each call are there.
    subjects = " ".join(line.subject for line in lines)
    assert "16 B" in subjects and "16 KiB" in subjects


def test_one_row_is_not_compared_with_itself():
    report = complete(schema.load(VIEW / "time.json"))
    first = report.results[0]
    alone = dataclasses.replace(
        report, results=(first,), differences=(), unstable=(), interop=(), verdicts=()
    )
    view = build(alone)
    (answer,) = view.answers()
    assert "fastest" not in answer.heading
    assert len(answer.lines) == 1
    assert "fastest" not in terminal.render(view)


def test_expressions_go_by_their_language_and_label():
    view = answers(VIEW / "time.json")
    subjects = [line.subject for a in view.answers() for line in a.lines]
    assert any("(Elixir)" in s and s.startswith("ex:") for s in subjects), subjects
    assert not any("Erlang ex:" in s for s in subjects)


def test_set_up_steps_are_named_as_calls():
    report = complete(schema.load(ROOT / "docs" / "findings" / "reports" / "hmac-parts-quick.json"))
    text = terminal.render(build(report), 80)
    assert "S = crypto:mac_init" not in text.split("\n\n")[0] + "".join(
        line for line in text.splitlines() if line.startswith("erlang@")
    )
    assert "crypto:mac_init(...)" in text
    assert "crypto:mac_init, set-up" in text


def test_a_handshake_rate_has_its_ci_beside_it_and_times_read_in_their_unit():
    """tls-resume: the rate's CI follows the rate (not the time after it),
    and a server CPU under 1 ms reads in µs, not as 707,xxx ns."""
    report = complete(schema.load(ROOT / "docs/findings/reports/tls-resume-quick.json"))
    (answer,) = [a for a in build(report).answers() if a.kind is AnswerKind.HANDSHAKES]
    lines = [terminal.said(line) for line in answer.lines]
    python = [x for x in lines if x.startswith("Python handshake-1.3 on python")]
    (said,) = python
    assert re.fullmatch(
        r"Python handshake-1\.3 on python@[\d.]+: \d+ handshakes/s \(CI \d+–\d+\),"
        r" [\d.]+ ms each; the server's CPU \d+ µs a handshake",
        said,
    ), said
    assert not any(re.search(r"\d{3},\d{3} ns", x) for x in lines)
