"""The cost decomposition through the whole pipeline (runner -> session ->
assembly), with scripted fake runtimes: the report carries it, and a run of
a scenario without set-up rows carries none."""

from __future__ import annotations

import pytest

from bridge.catalog import scenario
from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.report.hw import HwMode
from bridge.settings import Settings
from tests.session.fake import Log, Script, seams

SETTINGS = Settings(warmup_ms=1, rewarm_ms=1, sample_ms=1, samples=4, rounds=2, openssl_runs=2)
PER_CALL = {"sign": 72_000.0, "speed-sign": 22_000.0, "verify": 90_000.0, "speed-verify": 80_000.0}


def per_op(job, hw, n) -> float:
    return PER_CALL.get(job.call.id, 1000.0)


def run(*names):
    plan = Plan(
        scenarios=tuple(scenario.load(n) for n in names), settings=SETTINGS, seed=1, hw=HwMode.ON
    )
    scripts = [
        Script(kind="erlang", version="25.2.3", per_op_ns=per_op),
        Script(kind="openssl", version="3.0.19", per_op_ns=per_op),
    ]
    return runner.execute(plan, seams=seams(scripts, Log())).report


def test_the_report_says_what_the_erlang_key_import_costs():
    report = run("ecdsa-p256")
    d, v = report.decompositions
    assert (d.runtime, d.call_id, d.method) == ("erlang@25.2.3", "sign", "by difference")
    assert d.setup_ns == pytest.approx(50_000) and d.prepared_ns == pytest.approx(22_000)
    assert report.to_json()["decompositions"][0]["setup_ns"] == pytest.approx(50_000)
    # The verify side too: crypto:verify imports the public key on every call.
    assert (v.call_id, v.method, v.setup) == (
        "verify",
        "by difference",
        "importing the raw public key and setting up the verification",
    )
    assert v.setup_ns == pytest.approx(10_000) and v.prepared_ns == pytest.approx(80_000)


def test_every_ecdsa_curve_gets_it_and_a_digest_none():
    sign, verify = run("ecdsa-p384").decompositions
    assert (sign.scenario, sign.call_id, verify.call_id) == ("ecdsa-p384", "sign", "verify")
    report = run("sha256")
    assert report.decompositions == () and "decompositions" not in report.to_json()
