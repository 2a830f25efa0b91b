"""The words of every view, through the whole pipeline with scripted fake
runtimes (issue 24): sizes in the scenario's unit (iterations, bytes, per
call), titles that follow the sizes run, no MB/s where no bytes flow, every
sentence about a runtime naming it when the run has two of its kind, sign
and verify never compared, the --sizes hint once and only where it works,
--baseline and the neighbour of a version matrix, concurrency cells with
their real size. The real-runtime check of the same words is
tests/cli/test_labels.py."""

from __future__ import annotations

import dataclasses
import re

import pytest

from bridge.analysis import findings, versus
from bridge.catalog import scenario
from bridge.errors import UsageError
from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.render import RENDERERS, common, ratios, summary, units
from bridge.render import concurrency as concurrency_view
from bridge.render import noise as noise_view
from bridge.report import schema
from bridge.report.hw import HwMode
from bridge.settings import Settings
from bridge.view import words
from tests.session.fake import Log, Script, seams

SETTINGS = Settings(warmup_ms=0, rewarm_ms=0, sample_ms=1, samples=3, rounds=1, openssl_runs=1)
VIEWS = ("table", "text", "markdown")
# A size said in bytes: "1024 B", "1 KiB", "10000 bytes" (not "32-byte key").
BYTE_WORDS = re.compile(r"\b\d[\d,]* ?(?:B|bytes|KiB|MiB|GiB)\b")


def per_op(job, hw, n) -> float:
    # Sign and verify far apart: a group mixing them would show.
    return {"sign": 72_000.0, "speed-sign": 22_000.0, "verify": 90_000.0}.get(
        job.call.id, 1000.0 + len(job.inputs.data)
    )


def run(scenarios, scripts, settings=SETTINGS, hw=HwMode.ON) -> schema.Report:
    plan = Plan(scenarios=tuple(scenarios), settings=settings, seed=1, hw=hw)
    return runner.execute(plan, seams=seams(scripts, Log())).report


def one_of_each() -> list[Script]:
    return [
        Script(kind="erlang", version="25.2.3", per_op_ns=per_op),
        Script(kind="python", version="3.11.7", per_op_ns=per_op),
        Script(kind="openssl", version="3.0.19", per_op_ns=per_op),
    ]


def built_in(name: str) -> scenario.Scenario:
    sc = scenario.load(name)
    if isinstance(sc, scenario.FileDigestScenario):
        return sc.with_sizes((65536,))  # a small file: the words are the same
    return sc


@pytest.mark.parametrize("name", scenario.available())
def test_each_built_in_scenario_says_its_sizes_in_its_unit(name):
    sc = built_in(name)
    report = run([sc], one_of_each())
    unit = units.unit(report, sc.name)
    assert unit == sc.size_unit
    shown = {fmt: RENDERERS[fmt](report) for fmt in VIEWS}
    for fmt, text in shown.items():
        assert "at 0 bytes" not in text and " 0 B" not in text, fmt
        if unit == units.ITERATIONS:
            assert not BYTE_WORDS.findall(text.replace(sc.description, "")), fmt
        if unit == units.BYTES:
            assert "iterations" not in text, fmt
    fastest = common.fastest(report, report.results)
    for r in report.results:
        if not r.ok:
            continue
        mbs = common.cells(r, fastest, {}, unit=unit)["mbs"]
        # MB/s only where bytes flow: never on a sign, verify or agreement row.
        assert (mbs == "–") == (unit != units.BYTES or r.size == 0), (r.call_id, mbs)
    # The title says the sizes that ran.
    title = common.scenario_description(report, sc.name)
    sizes = sorted({r.size for r in report.results})
    said = [sizes[0], sizes[-1]] if " to " in title else sizes  # a range: its ends
    for n in said:
        if unit == units.ITERATIONS:
            assert f"{n:,} " in title
        elif unit == units.BYTES and re.search(r"\d ?(B|KiB|MiB)\b", sc.description):
            assert units.short(n) in title, (title, n)


def test_iterations_and_sizes_given_by_hand_are_said_everywhere():
    kdf = scenario.load("pbkdf2-sha256").with_sizes((1024, 10000))
    rand = scenario.load("strong-rand-bytes").with_sizes((20,))
    report = run([kdf, rand], one_of_each())
    assert common.scenario_description(report, "pbkdf2-sha256").endswith(
        "1,024 and 10,000 iterations"
    )
    assert common.scenario_description(report, "strong-rand-bytes") == (
        "Random bytes per call: 20 B"
    )
    for fmt in VIEWS:
        text = RENDERERS[fmt](report)
        kdf_part = [line for line in text.splitlines() if "pbkdf2" in line]
        assert kdf_part and not any(BYTE_WORDS.search(line) for line in kdf_part), fmt


def two_of_a_kind() -> list[Script]:
    return [
        Script(kind="erlang", version="23.3", per_op_ns=per_op),
        Script(kind="erlang", version="25.2.3", per_op_ns=lambda j, h, n: 0.8 * per_op(j, h, n)),
        Script(kind="python", version="3.11.7", per_op_ns=per_op),
        Script(kind="openssl", version="3.0.19", per_op_ns=per_op),
    ]


@pytest.fixture(scope="module")
def two_otps() -> schema.Report:
    settings = Settings(warmup_ms=0, rewarm_ms=0, sample_ms=1, samples=6, rounds=3, openssl_runs=3)
    scs = [
        scenario.load("ecdsa-p256"),
        scenario.load("x25519"),
        scenario.load("strong-rand-bytes").with_sizes((20,)).with_concurrency((1, 2)),
        scenario.load("hmac-sha1"),
    ]
    return run(scs, two_of_a_kind(), settings)


ERLANG_CALL = re.compile(r"\bErlang crypto:|\bcrypto:\w+\(")


def test_every_sentence_about_an_erlang_call_names_its_otp_when_there_are_two(two_otps):
    said = summary.sentences(two_otps)  # the concurrency sentences among them
    assert set(concurrency_view.sentences(two_otps)) <= set(said)
    about = [s for s in said if ERLANG_CALL.search(s) and "OTP 25.2.3" not in s]
    assert about
    for s in about:
        assert "erlang@23.3" in s or "erlang@25.2.3" in s, s
    probes = [s for s in said if "a process asking to wake" in s]
    assert sorted(p.split(",")[0] for p in probes) == ["On erlang@23.3", "On erlang@25.2.3"]
    setups = [s for s in said if " spends " in s and s.startswith("Erlang")]
    # Sign and verify on each OTP: four set-up sentences, none alike.
    assert len(setups) == len(set(setups)) == 4
    scaling = [s for s in said if "workers at once against one" in s]
    assert scaling and all("on erlang@23.3" in s and "on erlang@25.2.3" in s for s in scaling)


def test_unstable_cells_name_their_scenario_and_unit_where_a_run_has_several(two_otps):
    report = dataclasses.replace(
        two_otps,
        unstable=(
            schema.UnstableCell("ecdsa-p256", "openssl@3.0.19", "speed-sign", 64, "on", 0.4),
            schema.UnstableCell("x25519", "openssl@3.0.19", "speed-ecdh", 32, "on", 0.3),
            schema.UnstableCell("hmac-sha1", "erlang@23.3", "macN", 1000, "on", 0.2),
        ),
    )
    (line,) = noise_view.unstable_lines(report)
    assert "openssl@3.0.19 speed-sign (ecdsa-p256) hw on: ±40.0% per call" in line
    assert "openssl@3.0.19 speed-ecdh (x25519) hw on: ±30.0% per call" in line
    assert "erlang@23.3 macN (hmac-sha1) hw on: ±20.0% at 1000 B" in line
    problems = common.problem_lines(report)
    assert any("speed-ecdh (x25519) per call (hw on)" in p for p in problems)


def test_sign_verify_and_key_generation_are_never_compared(two_otps):
    for d in versus.of(two_otps):
        if d.against == versus.FASTEST:
            row = next(
                r
                for r in two_otps.results
                if (r.scenario, r.runtime, r.call_id, r.size, r.hw)
                == (d.scenario, d.runtime, d.call_id, d.size, d.hw)
            )
            base = next(
                r
                for r in two_otps.results
                if (r.scenario, r.runtime, r.call_id, r.size, r.hw)
                == (d.scenario, d.baseline_runtime, d.baseline_call_id, d.size, d.hw)
            )
            assert versus.group(two_otps, row) == versus.group(two_otps, base), d
    sentences = summary.sentences(two_otps)
    fastest = [s for s in sentences if s.startswith(("ecdsa-p256", "x25519"))]
    assert {s.split(":")[0] for s in fastest} == {
        "ecdsa-p256 (sign) per call",
        "ecdsa-p256 (verify) per call",
        "x25519 per call",
        "x25519 (with a fresh key pair per call) per call",
    }
    for s in fastest:
        if "(sign)" in s.split(":")[0]:
            assert "verify(" not in s and "(verify)" not in s, s
        if "(verify)" in s.split(":")[0]:
            assert ".sign(" not in s and "crypto:sign" not in s, s
        if s.startswith("x25519 per call"):
            assert "generate" not in s, s


def test_the_sizes_hint_is_said_once_and_only_for_byte_scenarios(two_otps):
    assert any(u.scenario == "hmac-sha1" for u in two_otps.upgrades)
    for fmt in VIEWS:
        # Said once; the Markdown folds the upgrade view's details and may leave it out.
        wanted = (0, 1) if fmt == "markdown" else (1,)
        assert RENDERERS[fmt](two_otps).count("--sizes 16,16384") in wanted, fmt
    signs = run([scenario.load("ecdsa-p256"), scenario.load("x25519")], two_of_a_kind())
    assert signs.upgrades
    for fmt in VIEWS:
        assert "--sizes 16,16384" not in RENDERERS[fmt](signs), fmt
    assert words.SPLIT_HINT not in " ".join(summary.sentences(signs))


def test_concurrency_cells_carry_their_real_size(two_otps):
    c = two_otps.concurrency
    assert c is not None and c.cells
    assert {cell.size for cell in c.cells} == {20}
    assert {s.size for s in c.scaling} == {20}
    kdf = scenario.load("pbkdf2-sha256").with_sizes((1024,)).with_concurrency((1, 2))
    k = run([kdf], one_of_each()).concurrency
    assert k is not None and {cell.size for cell in k.cells} == {1024}


def test_baseline_and_the_neighbour_of_a_version_matrix():
    scripts = [
        Script(kind="erlang", version=v, per_op_ns=lambda j, h, n, f=f: f * 1000.0)
        for v, f in (("23.3", 1.0), ("25.2.3", 2.0), ("27.1", 3.0))
    ]
    settings = Settings(warmup_ms=0, rewarm_ms=0, sample_ms=1, samples=6, rounds=3)
    report = run([scenario.load("hmac-sha1")], scripts, settings)
    diffs = versus.of(report)
    near = [d for d in diffs if d.against == versus.NEIGHBOUR]
    # 27.1 against 25.2.3 (its neighbour); 25.2.3's neighbour is the first named.
    assert [(d.runtime, d.baseline_runtime) for d in near] == [("erlang@27.1", "erlang@25.2.3")]
    assert near[0].ratio == pytest.approx(1.5, rel=1e-3)
    (line,) = [s for s in summary.sentences(report) if "time relative to" in s]
    assert "time relative to erlang@23.3" in line and "against erlang@25.2.3 1.50×" in line
    rebased = findings.rebased(report, "erlang@25.2.3")
    first = {d.runtime: d for d in versus.of(rebased) if d.against == versus.FIRST}
    assert first["erlang@23.3"].ratio == pytest.approx(0.5, rel=1e-3)
    assert first["erlang@27.1"].ratio == pytest.approx(1.5, rel=1e-3)
    assert all(d.baseline_runtime == "erlang@25.2.3" for d in first.values())
    assert "time relative to erlang@25.2.3" in " ".join(summary.sentences(rebased))
    assert ratios.Ratios(report).first_heading() == "× first named"
    assert ratios.Ratios(rebased).first_heading() == "× baseline"
    assert "× baseline" in RENDERERS["table"](rebased)
    with pytest.raises(UsageError) as bad:
        findings.rebased(report, "erlang@26")
    assert "erlang@23.3, erlang@25.2.3, erlang@27.1" in str(bad.value)
