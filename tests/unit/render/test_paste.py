"""The views that get pasted (Markdown for GitHub and Discourse, the text
view for the mailing list) and the plots, on fixture reports.

ecdsa-2otp-2openssl.json is a real run saved once on this project's machine
(load ~5 on 2 CPUs, so its CIs are wide):

    bridge run ecdsa-p256 --samples 8 --sample-ms 2 --rounds 3 --warmup-ms 5
      --openssl-runs 3 --erl <bullseye>/bin/erl --erl /usr/bin/erl
      --openssl <bullseye>/bin/openssl --openssl /usr/bin/openssl

OTP 23.2.6 on OpenSSL 1.1.1w beside OTP 25.2.3 on OpenSSL 3.0.19, Python,
and openssl 1.1.1w and 3.0.19. BRIDGE_UPDATE_GOLDEN=1 rewrites the golden
files; read the diff."""

from __future__ import annotations

import functools
import json
import os
import re

import pytest

from bridge.cli.common import rendered
from bridge.render import env, plot
from bridge.report import schema
from bridge.report.context import Environment
from bridge.report.envinfo import EnvDescription
from bridge.view import home
from tests.conftest import FIXTURES, ROOT

ECDSA = FIXTURES / "roundtrip" / "ecdsa-2otp-2openssl.json"
VERSIONS = FIXTURES / "roundtrip" / "versions-3otp-2openssl.json"
HMAC = FIXTURES / "report-hmac-sha1-v1.json"
GOLDEN = FIXTURES / "golden"
CONCURRENCY = ROOT / "docs" / "findings" / "reports" / "hmac-sha1-concurrency-quick.json"
ALL = [ECDSA, VERSIONS, HMAC, CONCURRENCY, *sorted((FIXTURES / "roundtrip").glob("run-mix*.json"))]


@functools.cache
def load(path) -> schema.Report:
    """Each fixture read once (reports are immutable; the renderers only read)."""
    return schema.load(path)


@functools.cache
def one_scenario(path, scenario: str, drop: str = "") -> schema.Report:
    """A report cut down to one scenario (every section that names one), and
    without the runtime `drop`."""
    data = json.loads(path.read_text())
    for key in ("results", "verdicts", "fits", "interop", "differences", "upgrades", "unstable"):
        if isinstance(data.get(key), list):
            data[key] = [
                x
                for x in data[key]
                if x.get("scenario", scenario) == scenario
                and drop not in (x.get(k) for k in ("runtime", "baseline_runtime", "new", "old"))
            ]
    for check in data.get("interop", []):
        check["outputs"] = {k: v for k, v in check["outputs"].items() if drop not in k}
    data["runtimes"] = [rt for rt in data["runtimes"] if rt["id"] != drop]
    data["hardware"]["experiments"] = [
        e for e in data["hardware"].get("experiments", []) if e["runtime"] != drop
    ]
    return schema.Report.from_json(data)


@pytest.mark.parametrize("fmt, suffix", [("markdown", "md"), ("text", "txt")])
def test_golden_ecdsa_on_two_otps_and_two_openssl_builds(fmt, suffix):
    out = rendered(fmt, load(ECDSA))
    golden = GOLDEN / f"ecdsa-2otp-2openssl.{suffix}"
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert out == golden.read_text()


def test_the_markdown_table_fits_a_comment():
    """The few columns that fit a GitHub comment in the open, every column
    folded under them."""
    for path in ALL:
        md = rendered("markdown", load(path))
        head, rule, _ = table(md)
        assert len(head) <= 7, (path.name, head)
        assert "<details><summary>Every column</summary>" in md, path.name


def table(md: str, header_start: str = "| runtime") -> tuple[list[str], list[str], list[list[str]]]:
    lines = md.splitlines()
    i = next(n for n, x in enumerate(lines) if x.startswith(header_start))
    cells = [[c.strip() for c in x.strip("|").split("|")] for x in lines[i : i + 100]]
    body = []
    for x in lines[i + 2 :]:
        if not x.startswith("|"):
            break
        body.append([c.strip() for c in x.strip("|").split("|")])
    return cells[0], cells[1], body


def test_the_markdown_answers_first_with_each_reason():
    md = rendered("markdown", one_scenario(VERSIONS, "sha256"))
    lines = md.splitlines()
    answer = next(n for n, x in enumerate(lines) if x.startswith("**Hardware:"))
    first_table = next(n for n, x in enumerate(lines) if x.startswith("| runtime"))
    assert answer < first_table
    line = next(x for x in lines if x.startswith("- Erlang crypto:hash on erlang@23.2.6: "))
    assert "uses SHA extensions, 16.11× slower without (CI 4.13–21.26)" in line
    withheld = [x for x in lines if x.startswith("- ") and "(inconclusive)" in x]
    assert withheld and all(" — " in x for x in withheld)


def test_numbers_are_right_aligned_and_the_low_statistic_stands_beside_the_median():
    md = rendered("markdown", one_scenario(VERSIONS, "sha256"))
    head, rule, body = table(md)
    assert head[:5] == ["runtime", "call", "size", "hw", "p10 ns"]
    for name in ("size", "p10 ns", "median ns (95% CI)"):
        assert rule[head.index(name)].endswith(":"), name
    assert rule[0].startswith(":") and not rule[0].endswith(":")
    assert body[0][0] == "erlang@23.2.6"


def test_no_mb_per_s_where_no_bytes_flow():
    for fmt in ("markdown", "text", "table"):
        assert "MB/s" not in rendered(fmt, load(ECDSA), width=200)
    assert "MB/s" in rendered("markdown", load(HMAC))


def test_folded_blocks_render_on_github():
    md = rendered("markdown", load(ECDSA))
    lines = md.splitlines()
    opened = [n for n, x in enumerate(lines) if x.startswith("<details><summary>")]
    summaries = [lines[n] for n in opened]
    assert any("Environment" in s for s in summaries) and any("Caveats" in s for s in summaries)
    for n in opened:
        assert lines[n - 1] == "" and lines[n + 1] == ""  # blank lines around the Markdown
        close = lines.index("</details>", n)
        assert lines[close - 1] == ""
    assert md.count("<details>") == md.count("</details>") == len(opened)


def test_no_trailing_space_line_breaks_and_no_code_block_but_the_command():
    for path in ALL:
        md = rendered("markdown", load(path))
        assert not [x for x in md.splitlines() if x != x.rstrip()], path.name
        fences = [x for x in md.splitlines() if x.startswith("```")]
        assert fences == ["```sh", "```"] and "```sh\ncrypto-bridge run " in md, path.name


def test_the_home_directory_reads_tilde(monkeypatch):
    report = load(ECDSA)
    md = rendered("markdown", report)
    assert "~/.cache/bridge/runtimes/bullseye/bin/openssl" in md
    assert "--erl ~/.cache/bridge/runtimes/bullseye/bin/erl --erl /usr/bin/erl" in md
    assert "/root/.cache" not in md
    # bridge env, and a home elsewhere (the python in a venv under it).
    monkeypatch.setattr(home, "_home", lambda: "/work/wt-i24-paste")
    shown = env.render_env(EnvDescription(Environment(os="x"), report.runtimes))
    assert "(~/.venv/bin/python)" in shown and "/work/wt-i24-paste" not in shown
    assert home.tilde("/work/wt-i24-paste2/x /work/wt-i24-paste") == "/work/wt-i24-paste2/x ~"
    assert home.shell_word("/work/wt-i24-paste/a b") == "~/'a b'"
    assert home.shell_word("/work/wt-i24-paste2/x") == "/work/wt-i24-paste2/x"


def test_masks_are_one_environment_line():
    from bridge.view import notes

    items = notes.environment(load(VERSIONS))
    masks = [i for i in items if i.startswith("hw off: ")]
    assert masks == ["hw off: OPENSSL_ia32cap=:~0x20000000 (every runtime)"]


def test_the_concurrency_block_pastes_too():
    md = rendered("markdown", load(CONCURRENCY))
    assert "**Scaling: throughput of N workers at once over one" in md
    head, rule, _ = table(md, "| runtime  ")
    assert "- erlang procs: N Erlang processes in one node" in md


# -- the text view -------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_the_text_view_survives_mail(path):
    text = rendered("text", load(path))
    assert text.isascii() and max(map(len, text.splitlines())) <= 72
    assert text.startswith("== ")
    assert not re.search(r"^\S+ B\b|^B\b", text, re.M)  # no unit cut from its figure


# -- plots -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def mpl():
    return pytest.importorskip("matplotlib")


def _errorbars(ax):
    from matplotlib.container import ErrorbarContainer

    return [c for c in ax.containers if isinstance(c, ErrorbarContainer)]


def test_every_point_has_its_ci_and_the_off_on_ratio_has_a_panel(mpl):
    import matplotlib.pyplot as plt

    reports = [("versions", one_scenario(VERSIONS, "sha256"))]
    drawn = plot.series(reports)
    fig = plot.figure(reports)
    try:
        axes = fig.axes
        speed = [
            ax for ax in axes if "ns per call by size (median, 95% CI)" in ax.get_title(loc="left")
        ]
        ratio = [ax for ax in axes if "hw off / hw on" in ax.get_title(loc="left")]
        assert len(speed) == len(ratio) == 1
        for ax in speed:
            bars = _errorbars(ax)
            assert len(bars) == len(drawn)
            assert all(c.has_yerr for c in bars)
            assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
            assert "ns per call" in ax.get_ylabel()
        for ax in ratio:
            bars = _errorbars(ax)
            assert bars and all(c.has_yerr for c in bars)
            assert any(line.get_ydata()[0] == 1.0 for line in ax.get_lines())  # no effect
        # A CI is a range around the median, ns per call.
        s = next(s for s in drawn if s.runtime == "erlang@23.2.6" and s.sizes[0] == 16)
        assert all(lo <= v <= hi for lo, v, hi in zip(s.lo, s.ns, s.hi, strict=True))
        assert any(lo < v < hi for lo, v, hi in zip(s.lo, s.ns, s.hi, strict=True))
        # Each legend stands in a row of its own, under its panel, outside the data.
        legends = [ax.get_legend() for ax in axes if ax.get_legend() is not None]
        assert legends and all(not ax.axison for ax in axes if ax.get_legend() is not None)
        width, height = fig.get_size_inches()
        assert width == plot.WIDTH_IN and fig.dpi == plot.DPI
    finally:
        plt.close(fig)


def test_a_single_size_scenario_draws_rows_of_points(mpl):
    import matplotlib.pyplot as plt
    from matplotlib.container import BarContainer

    for path, n in ((HMAC, 8), (ECDSA, 12)):
        fig = plot.figure([("r", load(path))])
        try:
            speed = fig.axes[0]
            assert not [c for c in speed.containers if isinstance(c, BarContainer)]
            points = _errorbars(speed)
            assert len(points) == n and all(c.has_xerr for c in points)
            assert "ns per call" in speed.get_xlabel()
            # Each row is named inside the panel, by runtime version and call.
            names = [t.get_text() for t in speed.texts]
            assert names and all(": " in t for t in names)
            if path == HMAC:
                ratio = fig.axes[1]
                assert "hw off / hw on" in ratio.get_title(loc="left")
                assert all(c.has_xerr for c in _errorbars(ratio))
                assert any(line.get_xdata()[0] == 1.0 for line in ratio.get_lines())
        finally:
            plt.close(fig)


def test_a_name_ending_in_svg_writes_svg(mpl, tmp_path):
    out = tmp_path / "p.svg"
    assert plot.plot([("r", load(HMAC))], out) == 8
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "hw off / hw on" in text
