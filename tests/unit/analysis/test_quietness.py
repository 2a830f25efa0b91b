"""bridge env's quietness check: the figures, the verdict and the advice on
fixed durations (the loop itself runs in tests/cli/test_noise.py)."""

from __future__ import annotations

import pytest

from bridge.analysis import noise, quietness
from bridge.cli.machine import quietness_lines
from bridge.render.env import render_env
from bridge.report.context import Environment
from bridge.report.envinfo import EnvDescription
from bridge.report.findings import Why, reason
from bridge.view import words


def steady(n: int = 200, ms: float = 5.0) -> list[float]:
    return [ms / 1000 * (1 + 0.002 * ((i % 5) - 2)) for i in range(n)]


def test_a_steady_loop_is_quiet():
    c = quietness.summarize(0, steady())
    assert c.samples == 200
    assert c.cv == pytest.approx(0.0028, abs=0.0002)
    assert c.robust_cv == pytest.approx(1.4826 * 0.002, rel=0.01)
    assert c.slow == 0.0 and c.worst == pytest.approx(1.004)
    assert quietness.verdict([c]) == "quiet"
    (quiet,) = quietness.advice([c], None, "quiet")
    assert quiet.why is Why.QUIET_ENOUGH
    assert words.reason(quiet) == "quiet enough: the default run should give CIs within ±2%"


def test_stalls_show_in_the_slow_share_and_the_worst_sample():
    values = steady()
    values[::10] = [0.0075] * 20  # 10% of the samples 1.5x slow
    c = quietness.summarize(1, values)
    assert c.slow == pytest.approx(0.10)
    assert c.worst == pytest.approx(1.5, rel=0.01)
    assert c.robust_cv < 0.01 < c.cv  # the robust figure ignores the stalls
    assert quietness.verdict([c]) == "some noise"


def test_one_noisy_cpu_makes_the_machine_noisy_and_the_other_is_advised():
    quiet = quietness.summarize(0, steady())
    values = [0.005 * (1 + 0.08 * ((i % 7) - 3)) for i in range(200)]
    noisy = quietness.summarize(1, values)
    assert quietness.verdict([quiet, noisy]) == "noisy"
    use = noise.Usage(
        seconds=3.0,
        cpus=2,
        load_before=(1.0, 1.0, 1.0),
        load_after=(2.0, 1.0, 1.0),
        busy=0.9,
        steal=0.04,
        iowait=0.0,
        bridge_cpus=1.0,
        others_cpus=0.8,
        busy_processes=(noise.OtherProcess(77, "burner", 0.8),),
    )
    found = quietness.advice([quiet, noisy], use, "noisy")
    assert [r.why for r in found] == [Why.PIN_CPU, Why.UNTIL_STABLE, Why.BUSY_MEANWHILE, Why.STEAL]
    assert found[0]["cpu"] == 0
    said = [words.reason(r) for r in found]
    assert said[0].startswith(
        "pin bridge to CPU 0, the quietest here: taskset -c 0 crypto-bridge run"
    )
    assert said[1].startswith("add --until-stable")
    assert said[2] == "busy meanwhile: burner (pid 77, 80%)"
    assert "steal" in said[3]


def test_evenly_spread_noise_is_not_helped_by_pinning():
    values = [0.005 * (1 + 0.08 * ((i % 7) - 3)) for i in range(200)]
    cpus = [quietness.summarize(0, values), quietness.summarize(1, values)]
    said = [words.reason(r) for r in quietness.advice(cpus, None, "noisy")]
    assert not any("taskset" in line for line in said)
    assert said[0].startswith("add --until-stable")


def test_bridge_env_shows_the_check_per_cpu_with_the_verdict_and_advice():
    cpus = (quietness.summarize(0, steady()), quietness.summarize(1, steady()))
    q = quietness.Quietness(0.5, cpus, None, "quiet", (reason(Why.QUIET_ENOUGH),))
    machine = Environment(cpu_model="Fake", smt_siblings=())
    text = render_env(EnvDescription(machine), quietness_lines(q))
    assert "SMT siblings: none (one thread per core)" in text
    assert text.endswith(
        "Quietness (0.5 s of a fixed 5 ms loop, back to back):\n"
        "  CPU 0: CV 0.3%, robust CV 0.3%, 0% of 200 samples over 5% slow, worst 1.00x the median\n"
        "  CPU 1: CV 0.3%, robust CV 0.3%, 0% of 200 samples over 5% slow, worst 1.00x the median\n"
        "verdict: quiet\n"
        "- quiet enough: the default run should give CIs within ±2%\n"
    )
    assert q.to_json()["cpus"][0]["samples"] == 200
