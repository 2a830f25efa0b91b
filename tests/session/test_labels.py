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
from bridge.cli.common import rendered
from bridge.errors import UsageError
from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.render import terminal
from bridge.report import schema
from bridge.report.hw import HwMode
from bridge.settings import Settings
from bridge.view import build, titles, units, words
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


def said(report: schema.Report) -> list[str]:
    """Every sentence the view says: its answers, its notes, its caveats."""
    view = build(report)
    out = [terminal.said(line) for a in view.answers() for line in a.lines]
    out += [n.text for s in view.sections for n in s.notes]
    return out + [n.text for n in view.caveats]


def description(report: schema.Report, name: str) -> str:
    return titles.sized(
        report.description(name), [r.size for r in report.results if r.scenario == name]
    )


def mbs_cells(report: schema.Report, scenario: str) -> dict[tuple, str]:
    """(runtime, call_id, size, hw) -> the MB/s cell of the results table ("" without one)."""
    (section,) = [s for s in build(report).sections if s.key == scenario]
    table = section.tables[0]
    i = table.column("mbs")
    rows = [r for r in report.results if r.scenario == scenario]
    from bridge.view.context import ordered

    out = {}
    for r, row in zip(ordered(report, rows), table.rows, strict=True):
        out[(r.runtime, r.call_id, r.size, r.hw)] = row[i].text if i is not None else "–"
    return out


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
    shown = {fmt: rendered(fmt, report) for fmt in VIEWS}
    for fmt, text in shown.items():
        assert "at 0 bytes" not in text and " 0 B" not in text, fmt
        if unit == units.ITERATIONS:
            assert not BYTE_WORDS.findall(text.replace(sc.description, "")), fmt
        if unit == units.BYTES:
            assert "iterations" not in text, fmt
    mbs_of = mbs_cells(report, sc.name)
    for r in report.results:
        if not r.ok:
            continue
        mbs = mbs_of[(r.runtime, r.call_id, r.size, r.hw)]
        # MB/s only where bytes flow: never on a sign, verify or agreement row.
        assert (mbs == "–") == (unit != units.BYTES or r.size == 0), (r.call_id, mbs)
    # The title says the sizes that ran.
    title = description(report, sc.name)
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
    assert description(report, "pbkdf2-sha256").endswith("1,024 and 10,000 iterations")
    assert description(report, "strong-rand-bytes") == ("Random bytes per call: 20 B")
    for fmt in VIEWS:
        text = rendered(fmt, report)
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
    sentences = said(two_otps)
    about = [s for s in sentences if ERLANG_CALL.search(s) and "OTP 25.2.3" not in s]
    assert about
    for s in about:
        assert "erlang@23.3" in s or "erlang@25.2.3" in s, s
    setups = [s for s in sentences if " spends " in s and s.startswith("Set-up: Erlang")]
    # Sign and verify on each OTP: four set-up sentences, none alike.
    assert len(setups) == len(set(setups)) == 4
    view = build(two_otps)
    scaling = [
        line.subject for a in view.answers() if a.kind.value == "scaling" for line in a.lines
    ]
    erlang = [s for s in scaling if s.startswith("Erlang")]
    assert erlang and all(" on erlang@" in s for s in erlang)


def test_unstable_cells_name_their_scenario_and_unit_where_a_run_has_several(two_otps):
    report = dataclasses.replace(
        two_otps,
        unstable=(
            schema.UnstableCell("ecdsa-p256", "openssl@3.0.19", "speed-sign", 64, "on", 0.4),
            schema.UnstableCell("x25519", "openssl@3.0.19", "speed-ecdh", 32, "on", 0.3),
            schema.UnstableCell("hmac-sha1", "erlang@23.3", "macN", 1000, "on", 0.2),
        ),
    )
    # Each marked in its own scenario's table, on its own row.
    view = build(report)
    marked = set()
    for section in view.sections:
        table = section.tables[0]
        median, runtime, call = (
            table.column("median"),
            table.column("runtime"),
            table.column("call"),
        )
        for row in table.rows:
            if row[median].mark == "!":
                marked.add((section.key, row[runtime].text, row[call].text))
    assert ("ecdsa-p256", "openssl@3.0.19", "speed-sign") in marked
    assert ("x25519", "openssl@3.0.19", "speed-ecdh") in marked
    assert ("hmac-sha1", "erlang@23.3", "macN") in marked  # the fake labels it so


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


def test_the_sizes_hint_is_said_once_and_only_for_byte_scenarios(two_otps):
    assert any(u.scenario == "hmac-sha1" for u in two_otps.upgrades)
    for fmt in VIEWS:
        # Said once; the Markdown folds the upgrade view's details and may leave it out.
        wanted = (0, 1) if fmt == "markdown" else (1,)
        assert rendered(fmt, two_otps).count("--sizes 16,16384") in wanted, fmt
    signs = run([scenario.load("ecdsa-p256"), scenario.load("x25519")], two_of_a_kind())
    assert signs.upgrades
    for fmt in VIEWS:
        assert "--sizes 16,16384" not in rendered(fmt, signs), fmt
    assert words.SPLIT_HINT not in " ".join(said(signs))


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
    subjects = [line.subject for a in build(report).answers() for line in a.lines]
    assert any(s.startswith("erlang@27.1 against erlang@23.3") for s in subjects), subjects
    rebased = findings.rebased(report, "erlang@25.2.3")
    first = {d.runtime: d for d in versus.of(rebased) if d.against == versus.FIRST}
    assert first["erlang@23.3"].ratio == pytest.approx(0.5, rel=1e-3)
    assert first["erlang@27.1"].ratio == pytest.approx(1.5, rel=1e-3)
    assert all(d.baseline_runtime == "erlang@25.2.3" for d in first.values())
    subjects = [line.subject for a in build(rebased).answers() for line in a.lines]
    assert any(s.startswith("erlang@23.3 against erlang@25.2.3") for s in subjects), subjects
    assert "× first named" in rendered("table", report, width=200)
    assert "× baseline" in rendered("table", rebased, width=200)
    with pytest.raises(UsageError) as bad:
        findings.rebased(report, "erlang@26")
    assert "erlang@23.3, erlang@25.2.3, erlang@27.1" in str(bad.value)
