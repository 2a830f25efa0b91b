"""The default terminal view (bridge.render.terminal) at 80 and 120 columns,
pinned by golden files, and the rules it keeps whatever the report: the
answer first, no line wider than the width, each warning once, the minimum
beside the median, the caveats dropped by --quiet.

The fixtures are real runs saved on this project's 2-core VM under load:
tests/fixtures/terminal/hmac-sha1-quick.json (`bridge run hmac-sha1 --quick`,
load average 9.4) and ecdsa-p256-quick.json (`bridge run ecdsa-p256 --quick`,
load 6.4); and the three-OTP sweep of tests/fixtures/roundtrip.
BRIDGE_UPDATE_GOLDEN=1 rewrites the golden files; read the diff."""

from __future__ import annotations

import os
import re

import pytest

from bridge import stats
from bridge.cli.common import rendered as show
from bridge.report import schema
from bridge.view import Detail
from tests.conftest import FIXTURES

TERMINAL = FIXTURES / "terminal"
GOLDEN = FIXTURES / "golden"
HMAC = TERMINAL / "hmac-sha1-quick.json"
ECDSA = TERMINAL / "ecdsa-p256-quick.json"
VERSIONS = FIXTURES / "roundtrip" / "versions-3otp-2openssl.json"
REPORTS = {"hmac-sha1-quick": HMAC, "ecdsa-p256-quick": ECDSA, "versions-3otp-2openssl": VERSIONS}


@pytest.fixture(scope="module")
def reports() -> dict[str, schema.Report]:
    return {name: schema.load(path) for name, path in REPORTS.items()}


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", sorted(REPORTS))
def test_golden(reports, name, width):
    rendered = show("table", reports[name], width=width)
    golden = GOLDEN / f"{name}.term{width}.txt"
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text()


@pytest.mark.parametrize("how", ["verbose", "quiet"])
def test_golden_verbose_and_quiet(reports, how):
    rendered = show("table", reports["hmac-sha1-quick"], Detail(how), width=80)
    golden = GOLDEN / f"hmac-sha1-quick.term80-{how}.txt"
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text()


@pytest.mark.parametrize("width", [80, 100, 120])
@pytest.mark.parametrize("name", sorted(REPORTS))
def test_no_line_is_wider_than_the_width(reports, name, width):
    # Narrower than 80 the prose still fits; a table keeps its runtime, call,
    # min and median columns however narrow (76 columns for a three-OTP sweep).
    lines = show("table", reports[name], width=width).splitlines()
    wide = [line for line in lines if len(line) > width]
    assert not wide, wide


def test_the_headline_fits_a_screen_answer_first(reports):
    lines = show("table", reports["hmac-sha1-quick"], width=80).splitlines()
    assert len(lines) <= 50  # of which 8 are this busy machine's noise warnings
    caveats = [x for x in lines if x.startswith(("Warning:", "Advice:", "  "))]
    assert len(lines) - len(caveats) <= 40
    erlang = [n for n, x in enumerate(lines) if x.startswith("  Erlang crypto:macN: uses SHA")]
    assert erlang and erlang[0] < 12, lines[:12]
    assert re.search(r"1\.23× slower without \(CI 1\.17–1\.68\)", lines[erlang[0]])
    # Answer, then the table, then the caveats.
    table_at = lines.index(next(x for x in lines if x.startswith("runtime ")))
    warning_at = lines.index(next(x for x in lines if x.startswith("Warning:")))
    assert erlang[0] < table_at < warning_at


def test_the_table_shows_the_verdicts_statistic_beside_the_median(reports):
    # The 10th percentile, which verdicts and comparisons are judged on (stats.low).
    report = reports["hmac-sha1-quick"]
    lines = show("table", report, width=80).splitlines()
    header = next(x for x in lines if x.startswith("runtime "))
    assert "p10 ns" in header and header.index("p10 ns") < header.index("median ns")
    row = next(x for x in lines if x.startswith("erlang@25.2.3") and " on " in x)
    r = next(r for r in report.results if r.call_id == "macN" and not r.hw.masked)
    s = r.summary()
    low = stats.low(r.per_op_ns())
    assert f"{low:,.0f}" in row and f"{s.median:,.0f}" in row and s.min <= low < s.median


def test_the_columns_that_carry_nothing_go_at_80(reports):
    wide = show("table", reports["hmac-sha1-quick"], width=120)
    narrow = show("table", reports["hmac-sha1-quick"], width=80)
    for text in (wide, narrow):
        header = next(x for x in text.splitlines() if x.startswith("runtime "))
        assert " bytes " not in header  # one size: the title says it
        assert "output ok" not in header  # all "yes": a sentence says it
        assert "All 3 runtimes computed the same bytes" in text
    assert "MB/s" in wide and "MB/s" not in narrow
    # The call's full label is in the legend, not in the table.
    assert "crypto:macN(hmac, sha, Key, Data, 10): one-shot" in narrow
    assert "crypto:macN(hmac" not in next(x for x in narrow.splitlines() if x.startswith("erl"))


def test_a_comparison_answers_where_there_is_no_verdict(reports):
    lines = show("table", reports["ecdsa-p256-quick"], width=80).splitlines()
    assert lines[1] == "Time per call, ranked, against the fastest (each role apart):"
    assert lines[2] == "  openssl speed-sign (sign): the fastest, 82,754 ns, 12.1k calls/s"
    # The ratio's CI beside the ratio, then the time.
    assert any(
        x.startswith("  Erlang crypto:sign (sign): 3.65× ? (CI 3.31–3.78), 301,889 ns")
        for x in lines
    )
    assert any(
        x.startswith("  openssl speed-verify (verify): the fastest, 244,200 ns") for x in lines
    )
    # A set-up alone (load) is in the table, not in the answer.
    answer = lines[: lines.index("")]
    assert not any("Python load" in x for x in answer)


def test_each_warning_once_and_only_where_it_applies(reports):
    hmac = show("table", reports["hmac-sha1-quick"], width=80)
    ecdsa = show("table", reports["ecdsa-p256-quick"], width=80)
    # hmac-sha1 has no row on the cryptography package: no warning of its OpenSSL.
    assert "cryptography" not in hmac
    assert "inside the cryptography package" in ecdsa
    for text in (hmac, ecdsa):
        assert "not stable:" not in text and "Unstable (" not in text
        assert text.count("! = 95% CI wider than") == 1
        flat = " ".join(text.split())
        for sentence in re.findall(r"(?:Warning|Advice|warning): [^.]*", flat):
            assert flat.count(sentence) == 1, sentence


def test_hw_verdict_views_keep_the_ratios_between_runtimes_for_wide_screens(reports):
    narrow = show("table", reports["hmac-sha1-quick"], width=80)
    wide = show("table", reports["hmac-sha1-quick"], width=120)
    # At 80 the ratios between runtimes (not the question here) go, and with
    # them their legend, which says what ? means and what to rerun.
    assert "× fastest" not in narrow and "? = fewer than" not in narrow
    assert "× fastest" in wide and "? = fewer than 3 rounds" in " ".join(wide.split())


def test_quiet_keeps_the_answer_and_the_table_only(reports):
    for report in reports.values():
        quiet = show("table", report, Detail.QUIET, width=80)
        assert re.search(r"^(Hardware|Versions|Time per call)", quiet, re.M) and "runtime " in quiet
        assert not re.search(r"^(Warning|warning|Advice|During the run|bridge \d)", quiet, re.M)
        assert "Not like for like" not in quiet


def test_verbose_keeps_every_detail(reports):
    text = show("table", reports["hmac-sha1-quick"], Detail.VERBOSE, width=80)
    flat = " ".join(text.split())
    assert "hmac.new(key, digestmod='sha1').copy() .update(data) .digest()[:10]" in flat
    assert "× fastest" in text and "MB/s" in text and "output ok" in text
    assert "OS: Debian" in text
    assert "During the run:" in text
    assert "not stable:" not in text and "Unstable (" not in text  # the marks say it


def test_the_other_formats_ignore_the_terminal_options(reports):
    report = reports["hmac-sha1-quick"]
    assert show("markdown", report, width=40) == show("markdown", report)


def test_one_capitalisation_after_warning_a_one_letter_word_too():
    from bridge.render.terminal import prefixed
    from bridge.view.model import Note, NoteKind

    said = prefixed(Note(NoteKind.WARNING, "A cost off its fit's line in 3 cells"))
    assert said == "Warning: a cost off its fit's line in 3 cells"
    assert prefixed(Note(NoteKind.WARNING, "OpenSSL 3 is slower")).startswith("Warning: OpenSSL")
