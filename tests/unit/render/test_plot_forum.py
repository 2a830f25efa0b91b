"""Every kind of `bridge plot` picture, drawn from real reports (the findings'
docs/findings/reports and tests/fixtures, saved from runs on this project's
machine) with warnings as errors, checked as a forum reader would see it:
scaled to a 700-px column, every text is at least 10 px tall and inside the
picture; every data panel has error bars; ratios stand around a line at 1
with their verdicts in words; nothing is nudged sideways on a log axis; each
series is named by its runtime's version; the unit is the tables'; and a
caption ties the picture to the report's machine, versions, bridge and date.
"""

from __future__ import annotations

import dataclasses
import io
import json
import struct
import warnings
from pathlib import Path

import pytest

from bridge.cli.reports import plotted
from bridge.render import plot, plot_words
from bridge.report import schema
from tests.conftest import FIXTURES

matplotlib = pytest.importorskip("matplotlib")

REPORTS = Path(__file__).resolve().parents[3] / "docs" / "findings" / "reports"
FORUM_PX = 700
MIN_PX = 10.0

# One of each kind: a size sweep with hw off (lines, and the hw off/on
# ratio), one size with hw off (rows of points), two OTPs in one report (the
# versions ratio), --concurrency (levels and efficiency), one size without
# hw off (runtimes against the fastest), --compare (the reports' ratio).
KINDS = {
    "sweep": ([REPORTS / "sha256-quick.json"], "uses SHA extensions"),
    "one-size": ([REPORTS / "hmac-sha1.json"], "uses SHA extensions"),
    "versions": ([REPORTS / "otp23-otp25.json"], "within noise"),
    "levels": ([REPORTS / "hmac-sha1-concurrency-quick.json"], "efficiency"),
    "runtimes": ([REPORTS / "ecdsa-p256.json"], "slower"),
    "compare": (
        [REPORTS / "aes-128-gcm.json", REPORTS / "aes-128-gcm-quick.json"],
        "within noise",
    ),
    "fixture-versions": ([FIXTURES / "roundtrip" / "versions-3otp-2openssl.json"], "used"),
}


def _reports(paths: list[Path]) -> list[tuple[str, schema.Report]]:
    return plotted(paths)[0]


@dataclasses.dataclass
class Drawn:
    reports: list[tuple[str, schema.Report]]
    fig: object
    png_width: int
    texts: list  # every visible, non-empty Text of the figure


@pytest.fixture(scope="module")
def drawn():
    """Each kind drawn once and written as `plot.plot` writes it, warnings
    as errors (`plot.plot` itself: test_plot_says_nothing_on_stderr)."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    out = {}
    for kind, (paths, _) in KINDS.items():
        reports, compared = plotted(paths)
        png = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fig = plot.figure(reports, compared)
            plot.write(fig, png, "png")  # lays out, draws and measures every text
        texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        out[kind] = Drawn(reports, fig, _png_width(png.getvalue()), texts)
    yield out
    for d in out.values():
        plt.close(d.fig)


def _png_width(data: bytes) -> int:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">I", data[16:20])[0]


def _data_axes(fig):
    return [ax for ax in fig.axes if ax.axison]


def _errorbars(ax):
    from matplotlib.container import ErrorbarContainer

    return [c for c in ax.containers if isinstance(c, ErrorbarContainer)]


def _title(ax) -> str:
    return ax.get_title(loc="left")


@pytest.mark.parametrize("kind", KINDS)
def test_readable_at_700_px(drawn, kind):
    """The PNG is the figure's width (no crop), and scaled to 700 px every
    text is at least 10 px tall and inside the picture."""
    d = drawn[kind]
    fig = d.fig
    assert d.png_width == round(fig.get_figwidth() * fig.dpi) == round(plot.WIDTH_IN * plot.DPI)
    scale = FORUM_PX / d.png_width
    sizes = {t.get_fontsize() for t in d.texts}
    smallest = min(sizes) * fig.dpi / 72 * scale  # points -> PNG pixels -> at 700 px
    assert smallest >= MIN_PX, (kind, sorted(sizes))
    assert plot.px_at(plot.FONT_PT, plot.WIDTH_IN) == pytest.approx(smallest)
    # Inside the picture: each panel with its ticks, labels, title and
    # legend (what it draws: not the ticks beyond its limits).
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        box = ax.get_tightbbox(renderer)
        assert box.x0 >= -1 and box.x1 <= fig.bbox.width + 1, (kind, _title(ax))
        assert box.y0 >= -1 and box.y1 <= fig.bbox.height + 1, (kind, _title(ax))


@pytest.mark.parametrize("kind", KINDS)
def test_every_data_panel_has_error_bars_and_the_tables_unit(drawn, kind):
    d = drawn[kind]
    panels = _data_axes(d.fig)
    assert panels
    for ax in panels:
        bars = _errorbars(ax)
        assert bars, (kind, _title(ax))
        assert all(c.has_xerr or c.has_yerr for c in bars)
    units = " ".join(ax.get_xlabel() + ax.get_ylabel() for ax in panels)
    assert "ns per call" in units  # as every table of calls
    if kind == "levels":  # as the levels table
        assert "ops/s" in units


@pytest.mark.parametrize("kind", KINDS)
def test_ratios_are_points_around_1_with_their_verdicts(drawn, kind):
    d = drawn[kind]
    _, verdict = KINDS[kind]
    from matplotlib.collections import PathCollection

    ratios = [ax for ax in _data_axes(d.fig) if "1 = no difference" in _title(ax)]
    ratios += [ax for ax in _data_axes(d.fig) if "100% = perfect scaling" in _title(ax)]
    assert ratios, kind
    for ax in ratios:
        assert not [c for c in ax.containers if type(c).__name__ == "BarContainer"]
        ones = [
            line
            for line in ax.get_lines()
            if list(line.get_ydata()) == [1.0, 1.0] or list(line.get_xdata()) == [1.0, 1.0]
        ]
        assert ones, (kind, _title(ax))
        assert any(isinstance(c, PathCollection) for c in ax.collections)  # the points
    said = " ".join(t.get_text() for t in d.texts)
    assert verdict in said, kind


@pytest.mark.parametrize("kind", ["sweep", "versions", "compare", "fixture-versions"])
def test_no_sideways_nudge_on_log_axes(drawn, kind):
    """A point sits at its size: two equal figures stand at one x."""
    d = drawn[kind]
    sizes = {r.size for _, rep in d.reports for r in rep.results}
    for ax in _data_axes(d.fig):
        if ax.get_xscale() != "log" or "size" not in ax.get_xlabel():
            continue
        for c in _errorbars(ax):
            xs = c.lines[0].get_xdata()
            assert set(map(float, xs)) <= set(map(float, sizes)), (kind, list(xs))


@pytest.mark.parametrize("kind", KINDS)
def test_series_are_named_by_runtime_and_version(drawn, kind):
    d = drawn[kind]
    said = " ".join(t.get_text() for t in d.texts)
    kinds = {rt.kind for _, rep in d.reports for rt in rep.runtimes}
    if "erlang" in kinds:
        assert "erlang 25.2.3 / OpenSSL 3.0.19" in said
    if "python" in kinds:
        assert "python 3.11.7" in said
    if "openssl" in kinds:
        assert "openssl 3.0.19" in said or "openssl 1.1.1w" in said
    if kind == "versions":
        assert "erlang 23.2.6 / OpenSSL 1.1.1w" in said
    if kind == "compare":  # the same set-up in both: told apart by the report
        assert "[aes-128-gcm.json]" in said and "[aes-128-gcm-quick.json]" in said


@pytest.mark.parametrize("kind", KINDS)
def test_the_caption_names_the_reports_machine_versions_bridge_and_date(drawn, kind):
    d = drawn[kind]
    said = "\n".join(t.get_text() for t in d.texts)
    for label, rep in d.reports:
        assert rep.environment.cpu_model in said
        assert f"bridge {rep.bridge_version}" in said
        assert plot_words.when(rep.created) in said
        if len(d.reports) > 1:
            assert f"{label}: " in said


def test_the_caption_is_the_reports_not_this_machines(tmp_path):
    data = json.loads((REPORTS / "hmac-sha1.json").read_text())
    data["environment"]["cpu_model"] = "Imaginary CPU 9000"
    data["created"] = "2020-02-03T04:05:06+01:00"
    data["bridge_version"] = "9.9.9"
    rep = schema.Report.from_json(data)
    lines = plot_words.caption([("r", rep)])
    text = " ".join(" ".join(lines).split())  # as one line, unwrapped
    assert "Imaginary CPU 9000 (x86_64, 2 CPUs, virtualized)" in text
    assert "2020-02-03 03:05 UTC" in text and "bridge 9.9.9" in text
    assert "erlang 25.2.3 / OpenSSL 3.0.19, python 3.11.7, openssl 3.0.19" in text
    assert all(len(line) <= plot_words.CAPTION_WRAP for line in lines)


def test_runtime_names_come_from_provenance():
    rep = schema.load(FIXTURES / "roundtrip" / "versions-3otp-2openssl.json")
    names = plot_words.Names([("v", rep)])
    assert names.of(0, "erlang@23.2.6") == "erlang 23.2.6 / OpenSSL 1.1.1w"
    # Two installations of one release: told apart by their ids.
    assert names.of(0, "erlang@25.2.3#2") == "erlang 25.2.3 / OpenSSL 3.0.19 (erlang@25.2.3#2)"
    assert names.of(0, "python@3.11.7") == "python 3.11.7"
    assert names.of(0, "openssl@1.1.1w") == "openssl 1.1.1w"
    # The same report twice: each name says which.
    both = plot_words.Names([("a.json", rep), ("b.json", rep)])
    assert both.of(1, "python@3.11.7") == "python 3.11.7 [b.json]"
    assert both.own(1, "python@3.11.7") == "python 3.11.7"


def test_verdicts_are_grouped_by_what_they_say():
    found = [(16, "inconclusive"), (1024, "uses SHA"), (16384, "uses SHA")]
    assert (
        plot_words.verdicts_at(found, "bytes", True).replace("\u00a0", " ")
        == "inconclusive at 16 B; uses SHA at 1 KiB, 16 KiB"
    )
    assert plot_words.verdicts_at(found[:1], "bytes", False) == "inconclusive"
    assert plot_words.hw_verdict("used", "sha") == "uses SHA extensions"
    assert plot_words.hw_verdict("not-used", "aes+pclmul").startswith("does not use AES")
    assert plot_words.word("unresolved") == "too few rounds to tell"


def test_the_hw_ratio_is_the_reports_verdict():
    """The off/on points are the report's hardware verdicts, figure and CI."""
    reports = _reports([REPORTS / "sha256-quick.json"])
    drawn = plot.series(reports)
    hw = [r for r in plot.ratio_series(reports, drawn) if r.question is plot.Question.HW]
    rep = reports[0][1]
    for r in hw:
        for p in r.points:
            (v,) = [
                v
                for v in rep.verdicts
                if (v.runtime, v.call_id, v.size) == (r.row[1], r.row[2], p.size)
            ]
            assert (p.ratio, p.lo, p.hi) == (v.speedup, *v.speedup_ci95)
            assert p.verdict == v.verdict and p.decisive == (v.verdict in ("used", "not-used"))


def test_the_fastest_stands_at_1():
    reports = _reports([REPORTS / "hmac-sha1.json"])
    ratios = plot.ratio_series(reports, plot.series(reports))
    fastest = [
        p for r in ratios if r.question is plot.Question.RUNTIMES for p in r.points if p.ratio == 1
    ]
    assert [p.said for p in fastest] == ["the fastest"]


def test_plot_says_nothing_on_stderr(tmp_path, capfd):
    """The whole command's path: no warning of any kind, nothing printed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot.plot(_reports([REPORTS / "sha256-quick.json"]), tmp_path / "p.svg")
    assert not caught
    assert capfd.readouterr().err == ""


def test_the_docs_keep_one_picture_of_each_kind():
    """docs/images holds one picture per kind, each drawn by `bridge plot`
    from a report in docs/findings/reports (the command is beside it on
    its page), and each page that shows one links it."""
    docs = REPORTS.parents[1]
    pages = "\n".join(p.read_text() for p in docs.rglob("*.md"))
    kinds = ("sweep", "one-size", "versions", "levels", "compare")
    for kind in kinds:
        png = docs / "images" / f"plot-{kind}.png"
        assert _png_width(png.read_bytes()) == round(plot.WIDTH_IN * plot.DPI), png
        assert f"(../images/plot-{kind}.png)" in pages, kind
        assert f"--png plot-{kind}.png" in pages, kind


def test_compare_of_two_versions_says_what_the_upgrade_changed():
    """--compare of an OTP 25 report with an OTP 23 one: the reports' ratio
    per size with compare's verdicts, and the upgrade view's per call / per
    byte words, the second report's runtime named over the first's."""
    reports, compared = plotted([REPORTS / "sha256-quick.json", REPORTS / "otp23-otp25.json"])
    ratios = plot.ratio_series(reports, plot.series(reports), compared)
    (erlang,) = [
        r for r in ratios if r.question is plot.Question.REPORTS and r.row[1] == "erlang@23.2.6"
    ]
    assert erlang.label.startswith(
        "erlang 23.2.6 / OpenSSL 1.1.1w over erlang 25.2.3 / OpenSSL 3.0.19"
    )
    assert erlang.extra.startswith("per call: ") and ", per byte: " in erlang.extra
    assert {p.verdict for p in erlang.points} <= {"faster", "slower", "within noise"}
    assert all(p.lo <= p.ratio <= p.hi for p in erlang.points)
