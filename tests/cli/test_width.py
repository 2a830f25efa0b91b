"""Everything fits: at COLUMNS=80 no line that run (with --concurrency too),
time, compare and report (with -v too) print is wider than 80, on real runs
(short settings, the real runtimes) and on every saved report
(tests/fixtures, docs/findings/reports); nor list, otp list, show (every
built-in scenario) and env."""

from __future__ import annotations

import itertools
import sys

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the tomli package
    import tomli as tomllib

from tests.conftest import FAST_ARGS, FIXTURES, ROOT, bridge_cmd, needs_erl, needs_openssl

WIDTH = 80
SAVED = sorted(
    [
        *(FIXTURES / "roundtrip").glob("*.json"),
        *(FIXTURES / "view").glob("*.json"),
        *(ROOT / "docs" / "findings" / "reports").glob("*.json"),
    ]
)
ENV = {"COLUMNS": str(WIDTH), "LINES": "40"}


def widest(text: str) -> tuple[int, str]:
    return max(((len(line), line) for line in text.splitlines()), default=(0, ""))


def fits(done) -> None:
    assert done.returncode == 0, done.stderr
    width, line = widest(done.stdout)
    assert width <= WIDTH, f"{width} columns: {line!r}"


@pytest.mark.parametrize("verbose", [(), ("-v",)], ids=["report", "report-v"])
@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.name)
def test_report_fits(path, verbose):
    fits(bridge_cmd("report", str(path), *verbose, env=ENV))


@pytest.mark.parametrize(
    "pair",
    [
        ("roundtrip/run-mix1.json", "roundtrip/run-mix2.json"),
        ("roundtrip/versions-3otp-2openssl.json", "roundtrip/ecdsa-2otp-2openssl.json"),
        ("view/hmac.json", "view/conc.json"),
        ("view/time.json", "view/time-labels.json"),
    ],
    ids=lambda p: "-".join(x.split("/")[-1].removesuffix(".json") for x in p),
)
def test_compare_fits(pair):
    fits(bridge_cmd("compare", *(str(FIXTURES / p) for p in pair), env=ENV))


def test_compare_of_the_findings_fits():
    reports = sorted((ROOT / "docs" / "findings" / "reports").glob("*.json"))
    for a, b in itertools.islice(itertools.pairwise(reports), 6):
        fits(bridge_cmd("compare", str(a), str(b), env=ENV))


@needs_erl
@needs_openssl
@pytest.mark.parametrize(
    "args",
    [
        ("run", "hmac-sha1", *FAST_ARGS[:-2], "--hw", "both"),
        ("run", "sha256", "--sizes", "16,1k", "--concurrency", "1,2", *FAST_ARGS),
        ("run", "ecdsa-p256", *FAST_ARGS, "-v"),
        ("time", *FAST_ARGS, "fast=crypto:hash(sha256, Data)", "py:len(data)"),
    ],
    ids=["run-hw-both", "run-concurrency", "run-v", "time"],
)
def test_real_runs_fit(args):
    fits(bridge_cmd(*args, "--progress", "off", env=ENV, timeout=600))


@needs_erl
@pytest.mark.parametrize("args", [("list",), ("otp", "list")], ids=["list", "otp-list"])
def test_listings_fit(args):
    """list wraps each description under itself; otp list drops the columns
    a reader needs least (libcrypto's path, how it was found) before folding.
    Wide, each stays one line a row."""
    fits(bridge_cmd(*args, env=ENV, timeout=120))
    wide = bridge_cmd(*args, env={**ENV, "COLUMNS": "250"}, timeout=120)
    assert wide.returncode == 0 and widest(wide.stdout)[0] > WIDTH


SCENARIOS = sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("name", SCENARIOS)
def test_show_fits_and_stays_a_scenario_file(name):
    """show wraps its '#' description under itself; the built-in files fit
    as they are. What it prints still loads as the scenario it shows."""
    done = bridge_cmd("show", name, env=ENV, timeout=60)
    fits(done)
    builtin = (ROOT / "scenarios" / f"{name}.toml").read_text()
    assert tomllib.loads(done.stdout) == tomllib.loads(builtin)


@needs_erl
@needs_openssl
def test_env_fits():
    """env folds a long description line (a libcrypto's capability vector, a
    mask) two spaces under itself."""
    fits(bridge_cmd("env", "--quietness-seconds", "0", env=ENV, timeout=120))
