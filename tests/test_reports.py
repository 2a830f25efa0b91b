"""Report views, compare, plot, replay and until-stable.

Golden files pin the markdown and text renderings of a fixed report (written
by the current schema version, kept as a fixture so old reports stay
readable). Regenerate them with BRIDGE_UPDATE_GOLDEN=1 after a deliberate
change, and read the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bridge import compare, model
from bridge.render import RENDERERS
from tests.conftest import bridge_cmd, needs_erl, needs_openssl

FIX = Path(__file__).resolve().parent / "fixtures"
REPORT = FIX / "report-hmac-sha1-v1.json"
GOLDEN = FIX / "golden"


@pytest.mark.parametrize("fmt, suffix", [("markdown", "md"), ("text", "txt")])
def test_golden_renderings(fmt, suffix):
    rendered = RENDERERS[fmt](model.load(REPORT))
    golden = GOLDEN / f"report-hmac-sha1.{suffix}"
    if os.environ.get("BRIDGE_UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text()


def test_text_view_is_mail_safe():
    text = RENDERERS["text"](model.load(REPORT))
    assert max(len(line) for line in text.splitlines()) <= 72
    assert text.isascii()
    # Summary first, then tables, provenance, reproduce.
    order = [
        text.index(s)
        for s in ("hmac-sha1 at 1000 bytes", "== hmac-sha1", "Environment:", "Reproduce:")
    ]
    assert order == sorted(order)


def test_markdown_opens_with_sentences_and_ends_with_reproduce():
    md = RENDERERS["markdown"](model.load(REPORT))
    first_items = [line for line in md.splitlines() if line.startswith("- ")][:2]
    assert first_items and first_items[0].startswith("- hmac-sha1 at 1000 bytes: fastest is")
    assert md.rstrip().endswith("```") and "bridge run hmac-sha1" in md.splitlines()[-2]


def test_fixture_report_reads_back_unchanged():
    data = json.loads(REPORT.read_text())
    again = model.Report.from_json(data).to_json()
    assert again["results"] == data["results"] and again["verdicts"] == data["verdicts"]


def test_report_command_every_format():
    for fmt in ("table", "markdown", "text", "json"):
        done = bridge_cmd("report", str(REPORT), "--format", fmt)
        assert done.returncode == 0, done.stderr
    assert json.loads(bridge_cmd("report", str(REPORT), "--format", "json").stdout)["schema"]


def test_compare_a_report_with_itself_is_all_noise():
    r = model.load(REPORT)
    rows = compare.pair(r, r)
    assert rows and all(row.verdict == "within noise" for row in rows)
    assert all(row.ratio == 1.0 for row in rows)


def test_compare_matches_runtimes_by_kind_not_id():
    data = json.loads(REPORT.read_text())
    renamed = json.loads(json.dumps(data).replace("erlang@25.2.3", "erlang@27.1"))
    for rt in renamed["runtimes"]:
        if rt["kind"] == "erlang":
            rt["version"] = "OTP 27.1"
    a, b = model.Report.from_json(data), model.Report.from_json(renamed)
    rows = compare.pair(a, b)
    erl = [row for row in rows if row.kind == "erlang"]
    assert erl and erl[0].runtime_a == "erlang@25.2.3" and erl[0].runtime_b == "erlang@27.1"
    diff = dict(compare.environment_diff([a, b]))
    assert diff["OTP"] == ["OTP 25.2.3", "OTP 27.1"]


def test_compare_text_stays_in_72_columns():
    done = bridge_cmd("compare", str(REPORT), str(REPORT), "--format", "text")
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= 72


def test_compare_with_imported_report_says_significance_unknown(tmp_path):
    seeds = Path(__file__).resolve().parent / "fixtures" / "seeds"
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


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_plot(tmp_path, suffix):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"p.{suffix}"
    done = bridge_cmd("plot", str(REPORT), "-o", str(out), "--compare", str(REPORT))
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 5000


def test_plot_without_matplotlib_says_how_to_install(tmp_path):
    fake = tmp_path / "nompl" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    env = {"PYTHONPATH": str(fake.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = bridge_cmd("plot", str(REPORT), "-o", str(tmp_path / "p.png"), env=env)
    assert done.returncode == 2
    assert "pip install 'bridge[plot]'" in done.stderr


@needs_erl
@needs_openssl
def test_hw_on_against_hw_off_sha256_is_significant_at_large_sizes(tmp_path):
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
    rows = compare.pair(model.load(on), model.load(off))
    big = [r for r in rows if r.size >= 8192]
    assert big and all(r.verdict == "slower" and r.hw_a == "on" and r.hw_b == "off" for r in big)


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
    old, new = model.load(out), model.load(again)
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
        "--until-stable",
        "0.001",
        "--max-time",
        "2",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = model.load(out)
    assert report.unstable and "did not reach the target" in done.stderr
    assert all(len(r.samples) > 4 for r in report.results)  # extra rounds were taken


def test_until_stable_takes_an_optional_value():
    done = bridge_cmd("run", "hmac-sha1", "--until-stable", "7")
    assert done.returncode == 2 and "--until-stable" in done.stderr
