"""Report views, compare, plot, replay and until-stable.

Golden files pin the markdown and text renderings of a fixed report (written
by the current schema version, kept as a fixture so old reports stay
readable). Regenerate them with BRIDGE_UPDATE_GOLDEN=1 after a deliberate
change, and read the diff."""

from __future__ import annotations

import json
import os

import pytest

from bridge.analysis import compare
from bridge.report import schema
from tests import busy, cputime
from tests.conftest import FIXTURES, bridge_cmd, needs_erl, needs_openssl

FIX = FIXTURES


REPORT = FIX / "report-hmac-sha1-v1.json"


GOLDEN = FIX / "golden"


def test_report_command_every_format():
    for fmt in ("table", "markdown", "text", "json"):
        done = bridge_cmd("report", str(REPORT), "--format", fmt)
        assert done.returncode == 0, done.stderr
    assert json.loads(bridge_cmd("report", str(REPORT), "--format", "json").stdout)["schema"]


def test_compare_text_stays_in_72_columns():
    done = bridge_cmd("compare", str(REPORT), str(REPORT), "--format", "text")
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 72


def test_compare_with_imported_report_says_significance_unknown(tmp_path):
    seeds = FIXTURES / "seeds"
    thread = seeds / "erlang-questions-hmac-hardware-acceleration.txt"
    if not thread.exists():
        pytest.skip("seed missing")
    imported = tmp_path / "imported.json"
    assert bridge_cmd("import-speed", str(thread), "-o", str(imported)).returncode == 0
    done = bridge_cmd("compare", str(imported), str(imported), "--format", "json")
    rows = json.loads(done.stdout)["comparisons"][0]["rows"]
    assert rows and {r["verdict"] for r in rows} == {"unknown (no samples)"}


def test_compare_needs_two_reports():
    done = bridge_cmd("compare", str(REPORT))
    assert done.returncode == 2 and "at least two" in done.stderr


def test_compare_exports_beside_the_terminal_view(tmp_path):
    md, js, out = tmp_path / "cmp.md", tmp_path / "cmp.json", tmp_path / "o.json"
    done = bridge_cmd(
        "compare", str(REPORT), str(REPORT), "--export-markdown", str(md),
        "--export-json", str(js), "-o", str(out), "--export-text", str(tmp_path / "cmp.txt"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("== ")  # the table on the terminal
    assert md.read_text().startswith("### ") and "×" in md.read_text()
    assert json.loads(js.read_text()) == json.loads(out.read_text())
    assert (tmp_path / "cmp.txt").read_text().isascii()
    assert f"markdown written to {md}" in done.stderr
    # Two options naming one file: refused before anything is written.
    done = bridge_cmd("report", str(REPORT), "--export-json", str(md), "--export-markdown", str(md))
    assert done.returncode == 2 and "both name" in done.stderr


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_plot(tmp_path, suffix):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"p.{suffix}"
    done = bridge_cmd("plot", str(REPORT), f"--{suffix}", str(out), "--compare", str(REPORT))
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 5000


def test_plot_without_matplotlib_says_how_to_install(tmp_path):
    fake = tmp_path / "nompl" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    env = {"PYTHONPATH": str(fake.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # The old -o FILE.png still draws, with a warning that it is deprecated.
    done = bridge_cmd("plot", str(REPORT), "-o", str(tmp_path / "p.png"), env=env)
    assert done.returncode == 2
    assert "pip install 'crypto-bridge[plot]'" in done.stderr
    assert "bridge: warning: plot -o is deprecated" in done.stderr and "use --png" in done.stderr


@pytest.mark.serial  # judges a measured effect
@needs_erl
@needs_openssl
def test_hw_on_against_hw_off_sha256_is_significant_at_large_sizes(tmp_path):
    """Two runs apart, one masked: the effect on CPU time per call (which a
    busy machine does not stretch), then compare's word, which reads wall
    time of two runs made apart and, on a busy machine, says that the load
    alone can make such a difference: that part needs a quiet machine."""
    common = [
        "--runtimes",
        "python",
        "--samples",
        "12",
        "--sample-ms",
        "3",
        "--rounds",
        "3",
        "--warmup-ms",
        "20",
    ]
    on, off = tmp_path / "on.json", tmp_path / "off.json"
    assert bridge_cmd("run", "sha256", *common, "--hw", "on", "-o", str(on)).returncode == 0
    assert bridge_cmd("run", "sha256", *common, "--hw", "off", "-o", str(off)).returncode == 0
    a, b = schema.load(on), schema.load(off)
    sizes = sorted({r.size for r in a.results if r.size >= 8192})
    assert sizes
    for size in sizes:  # SHA-NI: about 3x at 8 KiB and more, in CPU time too
        masked = cputime.median(cputime.cell(b, size=size))
        assert masked > 1.5 * cputime.median(cputime.cell(a, size=size)), size
    rows = compare.pair(a, b)
    big = [r for r in rows if r.size >= 8192]
    assert big and all(r.hw_a == "on" and r.hw_b == "off" for r in big)
    with busy.unless_busy(a, b, needs="compare's word on two runs' wall times"):
        said = [(r.size, r.verdict, r.reasons) for r in big]
        assert all(r.verdict == "slower" for r in big), said


@needs_erl
@needs_openssl
def test_replay_reruns_and_compares(tmp_path):
    out = tmp_path / "r.json"
    fast = [
        "--samples",
        "4",
        "--sample-ms",
        "2",
        "--rounds",
        "2",
        "--openssl-runs",
        "1",
        "--hw",
        "on",
        "--runtimes",
        "python,erlang",
    ]
    assert bridge_cmd("run", "hmac-sha1", *fast, "-o", str(out)).returncode == 0
    again = tmp_path / "again.json"
    done = bridge_cmd("run", "--replay", str(out), "-o", str(again))
    assert done.returncode == 0, done.stderr
    assert "now against r.json (then)" in done.stdout
    old, new = schema.load(out), schema.load(again)
    assert new.settings == old.settings and new.scenarios == old.scenarios
    assert {r.call_id for r in new.results} == {r.call_id for r in old.results}
    assert [r.output_hex for r in new.results] == [r.output_hex for r in old.results]


@needs_erl
def test_until_stable_records_cells_that_missed_the_target(tmp_path):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        "--runtimes",
        "python",
        "--hw",
        "on",
        "--samples",
        "4",
        "--sample-ms",
        "2",
        "--rounds",
        "2",
        "--until-stable=0.001",
        "--max-time",
        "2",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = schema.load(out)
    # Listed once, as marks in the table (stderr says it beside JSON only).
    assert report.unstable and "! = 95% CI wider than" in done.stdout
    assert "did not reach the target" not in done.stderr
    assert all(len(r.samples) > 4 for r in report.results)  # extra rounds were taken


def test_until_stable_takes_its_value_only_after_an_equals_sign():
    done = bridge_cmd("run", "hmac-sha1", "--until-stable", "7")
    assert done.returncode == 2 and "--until-stable=7" in done.stderr


@pytest.mark.parametrize(
    "text, fraction",
    [("3", 0.03), ("3%", 0.03), ("2.5", 0.025), ("0.03", 0.03), ("50", 0.5), ("0.1%", 0.001)],
)
def test_until_stable_targets_are_percentages(text, fraction):
    from bridge.cli.run import until_stable_target

    assert until_stable_target(text) == pytest.approx(fraction)
