"""The tests' own busy-machine plugin (tests/busy.py): its policy, the reason
it gives, the check on this machine, and, in a pytest session of its own,
the skips it makes and counts."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap

import pytest

from bridge.analysis import quietness
from tests import busy
from tests.conftest import ROOT

BUSY = quietness.Conditions(cpus=2, load=9.3, others_cpus=1.9, steal=0.0, wait=0.45)
QUIET = quietness.Conditions(cpus=2, load=0.4, others_cpus=0.05, steal=0.0, wait=0.01)


@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, busy.Policy.SKIP),
        ({"CI": "true"}, busy.Policy.SKIP),  # a shared runner is often busy
        ({"CI": "true", "BRIDGE_BUSY_SKIP": "fail"}, busy.Policy.FAIL),
        ({"BRIDGE_BUSY_SKIP": "fail"}, busy.Policy.FAIL),
        ({"BRIDGE_BUSY_SKIP": " Run "}, busy.Policy.RUN),
    ],
)
def test_the_policy_and_its_default(env, expected):
    assert busy.policy(env) is expected


def test_an_unknown_policy_stops_the_session():
    with pytest.raises(pytest.UsageError, match="BRIDGE_BUSY_SKIP='sometimes': expected one of"):
        busy.policy({"BRIDGE_BUSY_SKIP": "sometimes"})


def test_the_reason_names_the_figures():
    reading = busy.Reading(BUSY, "a 0.5 s check")
    assert reading.busy
    assert reading.reason() == (
        "machine busy over a 0.5 s check: other processes used 1.9 of 2 CPUs, load 9.3,"
        " steal 0%, waiting for a CPU 45%"
    )
    assert not busy.Reading(QUIET, "the run").busy


@pytest.mark.parametrize(
    "conditions",
    [
        quietness.Conditions(2, None, 0.3, None, None),  # others on a quarter of a CPU
        quietness.Conditions(2, None, 0.0, 0.03, None),  # steal
        quietness.Conditions(2, None, 0.0, 0.0, 0.12),  # a thread that waited
    ],
)
def test_busy_as_bridge_says_it(conditions):
    assert busy.Reading(conditions, "x").busy


def test_act_skips_fails_or_lets_it_run():
    reading = busy.Reading(BUSY, "the run")
    with pytest.raises(pytest.skip.Exception, match="^machine busy over the run: .* needs a quiet"):
        busy.act(reading, "the verdict", busy.Policy.SKIP)
    with pytest.raises(pytest.fail.Exception, match="BRIDGE_BUSY_SKIP=fail: set"):
        busy.act(reading, "the verdict", busy.Policy.FAIL)
    busy.act(reading, "the verdict", busy.Policy.RUN)
    busy.act(busy.Reading(QUIET, "the run"), "the verdict", busy.Policy.FAIL)


def test_the_check_reads_this_machine():
    reading = busy.spin_check(0.1)
    c = reading.conditions
    assert c.cpus == os.cpu_count() and c.others_cpus is not None and c.others_cpus >= 0
    assert c.wait is None or 0 <= c.wait <= 1
    assert reading.reason().startswith("machine busy over a 0.1 s check: other processes used")


def _report(**noise):
    from bridge.report import schema

    report = schema.load(ROOT / "tests" / "fixtures" / "terminal" / "hmac-sha1-quick.json")
    return dataclasses.replace(report, noise=dataclasses.replace(report.noise, **noise))


def test_a_report_says_how_busy_its_run_was():
    reading = busy.of_report(_report())
    assert reading.busy and reading.conditions.others_cpus == pytest.approx(1.6965)
    assert reading.reason().startswith(
        "machine busy over the run: other processes used 1.7 of 2 CPUs, load 9.6"
    )


def test_a_failure_after_a_busy_run_is_a_busy_skip(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(busy.ENV, raising=False)
    with (
        pytest.raises(pytest.skip.Exception) as skipped,
        busy.unless_busy(_report(), needs="compare's word"),
    ):
        assert "inconclusive" == "slower"
    said = str(skipped.value)
    assert said.startswith("machine busy over the run: other processes used 1.7 of 2 CPUs")
    assert "compare's word needs a quiet machine, and it failed: assert 'inconclusive'" in said
    with busy.unless_busy(_report(), needs="compare's word"):
        pass  # what passes on a busy machine passes


@pytest.mark.parametrize("policy", ["fail", "run"])
def test_under_fail_or_run_the_failure_stays(monkeypatch, policy):
    monkeypatch.setenv(busy.ENV, policy)
    with pytest.raises(AssertionError), busy.unless_busy(_report()):
        raise AssertionError("the verdict was inconclusive")


def test_a_failure_after_a_quiet_run_stays_a_failure(monkeypatch):
    monkeypatch.delenv(busy.ENV, raising=False)
    quiet = _report(others_cpus=0.05, load_before=(0.3, 0.2, 0.1), load_after=(0.3, 0.2, 0.1))
    assert busy.of_report(quiet) is not None and not busy.of_report(quiet).busy
    with pytest.raises(AssertionError), busy.unless_busy(quiet):
        raise AssertionError("the verdict was inconclusive")


# A session of its own: the check gives busy, then quiet; the machine during
# the test, busy. The skips are counted, the failure kept beside its reason.
CONFTEST = """
import pytest
from bridge.analysis import quietness
from tests import busy

BUSY = quietness.Conditions(2, 9.3, 1.9, 0.0, 0.45)
QUIET = quietness.Conditions(2, 0.4, 0.05, 0.0, 0.01)
checks = [BUSY, QUIET]
busy.spin_check = lambda seconds=busy.WINDOW_S: busy.Reading(checks.pop(0), "a 0.5 s check")
busy.during = lambda before, span: busy.Reading(BUSY, span)

def pytest_configure(config):
    config.addinivalue_line("markers", "serial: alone")
    config.addinivalue_line("markers", "quiet: quiet")
    config.pluginmanager.register(busy.Plugin(), "bridge-busy")
"""

TESTS = """
import pytest
from tests import busy

@pytest.mark.serial
@pytest.mark.quiet(needs="the scaling")
def test_a_checked():
    raise AssertionError("never runs")

@pytest.mark.serial
@pytest.mark.quiet
def test_b_became_busy():
    assert 1 == 2, "the verdict was inconclusive"

@pytest.mark.serial
def test_c_after_a_run():
    run = busy.quietness.Conditions(2, 9.0, 1.5, 0.0, None)
    busy.act(busy.Reading(run, "the run"), "the verdict")

def test_d_plain():
    pass
"""


def _session(tmp_path, **env):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_it.py").write_text(textwrap.dedent(TESTS))
    full = {k: v for k, v in os.environ.items() if k not in ("CI", busy.ENV)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**full, "PYTHONPATH": str(ROOT), **env},
        timeout=120,
    )


def test_busy_skips_are_said_and_counted(tmp_path):
    done = _session(tmp_path)
    out = done.stdout
    assert done.returncode == 0, out
    assert "1 passed, 3 skipped" in out, out
    assert "3 tests skipped because the machine was busy" in out, out
    assert (
        "test_a_checked: machine busy over a 0.5 s check: other processes used 1.9 of 2 CPUs" in out
    )
    assert "the scaling needs a quiet machine" in out
    # The short summary names each test's own line, not the plugin's.
    assert "busy.py" not in out.split("short test summary info")[1], out
    assert "test_b_became_busy: machine busy over the test (" in out
    assert "and it failed: AssertionError: the verdict was inconclusive" in out, out
    assert (
        "test_c_after_a_run: machine busy over the run: other processes used 1.5 of 2 CPUs" in out
    )


def test_a_busy_machine_fails_the_tests_where_asked_and_not_under_ci_alone(tmp_path):
    done = _session(tmp_path, BRIDGE_BUSY_SKIP="fail")
    out = done.stdout
    assert done.returncode == 1, out
    assert "2 failed, 1 passed, 1 error" in out, out
    assert "BRIDGE_BUSY_SKIP=fail: set BRIDGE_BUSY_SKIP=skip to skip instead" in out
    assert "skipped because the machine was busy" not in out
    # A CI runner (CI=true) skips them, counted, as anywhere else.
    done = _session(tmp_path, CI="true")
    assert done.returncode == 0, done.stdout
    assert "3 tests skipped because the machine was busy" in done.stdout
