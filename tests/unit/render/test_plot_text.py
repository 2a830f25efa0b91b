"""`bridge plot` of a report whose names hold what no picture should draw
raw: controls (ESC, BEL, CR), a bidi override, a lone surrogate (once a
matplotlib TypeError), a U+FFFE (not XML), TeX a mathtext parser raises on,
emoji no font has, and names hundreds of characters long. The picture is
drawn, its SVG parses as XML, and what matplotlib warns is said as bridge's
warnings, escaped."""

from __future__ import annotations

import json
import re
import warnings
import xml.etree.ElementTree as ET

import pytest

from bridge.analysis import compare, findings
from bridge.errors import BridgeWarning
from bridge.render import plot
from bridge.report import schema
from tests.conftest import FIXTURES

matplotlib = pytest.importorskip("matplotlib")

EVIL = "😀漢\x1b[2J\x07\r\u202e\ud800\ufffe$\\frac{$ <b>&amp;" + "L" * 300
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")


def _hostile(name: str = "roundtrip/run-mix1.json") -> schema.Report:
    data = json.loads((FIXTURES / name).read_text())
    text = json.dumps(data).replace('"erlang@25.2.3', '"erlang@25.2.3' + json.dumps(EVIL)[1:-1])
    data = json.loads(text)
    for r in data["results"]:
        r["call"] += EVIL
    return schema.Report.from_json(data)


@pytest.mark.parametrize(
    "suffix, reports",
    [
        (".svg", ("roundtrip/run-mix1.json", "report-hmac-sha1-v1.json")),
        (".png", ("report-hmac-sha1-v1.json",)),
    ],
)
def test_hostile_names_draw_and_warn_through_bridge(tmp_path, capfd, suffix, reports):
    """Lines and bars, one report and two (labels in the legend)."""
    out = tmp_path / f"p{suffix}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # As `bridge plot` hands them over: with their findings, and bridge
        # compare's rows for two (the reports' ratio, its legend named too).
        drawn = [(EVIL + name, findings.complete(_hostile(name))) for name in reports]
        compared = compare.compare([r for _, r in drawn], [label for label, _ in drawn])
        n = plot.plot(drawn, out, compared if len(drawn) > 1 else None)
    assert n > 0 and out.stat().st_size > 0
    # Only bridge's own warnings (a glyph the font lacks: the emoji, the CJK
    # character), each printable; nothing on stderr from matplotlib.
    assert all(issubclass(w.category, BridgeWarning) for w in caught)
    assert all(not RAW.search(str(w.message)) for w in caught)
    err = capfd.readouterr().err
    assert not RAW.search(err) and "Glyph" not in err, err
    if suffix == ".svg":
        root = ET.parse(out).getroot()
        texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
        drawn = "\n".join(texts)
        assert "\\x1b[2J\\x07\\x0d\\u202e\\ud800\\ufffe" in drawn  # spelt, not drawn raw
        assert "$\\frac{$" in drawn  # a dollar sign is text
        assert not RAW.search(drawn)
        assert max(map(len, texts)) < 200  # long names are cut


def test_a_lone_surrogate_in_a_call_plots(tmp_path):
    """Once: TypeError from matplotlib's FT2Font, a traceback."""
    data = json.loads((FIXTURES / "report-hmac-sha1-v1.json").read_text())
    for r in data["results"]:
        r["call"] += "\ud800"
    out = tmp_path / "s.svg"
    assert plot.plot([("r", schema.Report.from_json(data))], out) == 8
    ET.parse(out)


def test_the_picture_leaves_the_rc_settings_as_they_were(tmp_path):
    before = dict(matplotlib.rcParams)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BridgeWarning)
        plot.plot([("r", _hostile("report-hmac-sha1-v1.json"))], tmp_path / "p.svg")
    assert dict(matplotlib.rcParams) == before


def test_what_matplotlib_says_is_gathered_and_said_once_escaped(capfd):
    import logging

    with plot._gathered() as heard:
        for glyph in (27, 27, 128512):
            warnings.warn(f"Glyph {glyph} (\x1b) missing from font(s) DejaVu Sans.", stacklevel=1)
        warnings.warn("Tight layout not applied \x1b[2J", stacklevel=1)
        logging.getLogger("matplotlib.font_manager").warning("findfont: \x07 not found.")
        warnings.warn(BridgeWarning("bridge's own"), stacklevel=1)
    assert capfd.readouterr().err == ""
    assert plot._said(heard) == [
        "bridge's own",
        "the picture's font has no glyph for 2 characters of the reports' names:"
        " drawn as empty boxes",
        "matplotlib: findfont: \\x07 not found.",
        "matplotlib: Tight layout not applied \\x1b[2J",
    ]


def test_hostile_verdicts_and_features_are_drawn_as_text(tmp_path):
    """The ratio panels word the report's feature names: one this bridge
    does not know is drawn as it is, escaped. (Verdict and significance
    codes are closed sets: a report with another is refused on reading.)"""
    data = json.loads((FIXTURES / "roundtrip" / "versions-3otp-2openssl.json").read_text())
    for v in data["verdicts"]:
        v["feature"] += EVIL
    out = tmp_path / "v.svg"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BridgeWarning)  # the glyphs no font has
        assert plot.plot([("r", schema.Report.from_json(data))], out) > 0
    drawn = "\n".join(
        "".join(t.itertext())
        for t in ET.parse(out).getroot().iter("{http://www.w3.org/2000/svg}text")
    )
    assert "$\\frac{$" in drawn and not RAW.search(drawn)
