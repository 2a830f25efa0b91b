"""Runtimes against each other within one run (bridge.analysis.versus), and how every
line names its runtime when a kind has several: fixed samples, known
answers."""

from __future__ import annotations

import random

import pytest

from bridge import stats
from bridge.analysis import versus
from bridge.analysis.findings import complete
from bridge.cli.common import rendered
from bridge.render import plot
from bridge.report import schema
from bridge.report.findings import Significance, Why, reason
from bridge.report.hw import Hw
from bridge.view import build as build_view

SETTINGS = {"samples": 20, "rounds": 5, "openssl_runs": 5, "quick": False}


def runtime(rid: str, kind: str = "erlang", hw: Hw = Hw.ON) -> schema.Runtime:
    return schema.Runtime(rid, kind, f"/opt/{rid}/bin/erl", rid.split("@")[1], {}, hw)


def result(rid: str, per_call: list[float], size: int = 16, hw: Hw = Hw.ON, call="hash"):
    """A cell whose samples give these per-call times (loops of 1000)."""
    return schema.Result(
        scenario="sha256",
        runtime=rid,
        call=f"crypto:{call}(sha256, Data)" if not rid.startswith("openssl") else "openssl speed",
        call_id=call,
        api="",
        semantics="one-shot",
        algorithm="sha256",
        size=size,
        hw=hw,
        samples=tuple(round(x * 1000) for x in per_call),
        loops=1000,
        output_hex="00",
    )


def report(results, runtimes, settings=SETTINGS, **more) -> schema.Report:
    return schema.Report(
        bridge_version="0",
        created="",
        command=[],
        reproduce="",
        settings=dict(settings),
        environment={},
        runtimes=tuple(runtimes),
        results=tuple(results),
        scenarios=({"name": "sha256", "kind": "hash", "description": "SHA256 over 16 B"},),
        **more,
    )


def noisy(level: float, n: int = 20, spread: float = 0.01, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


TWO_OTPS = [runtime("erlang@23.2.6"), runtime("erlang@25.2.3")]


def first_named(rep: schema.Report) -> schema.Difference:
    (d,) = [d for d in versus.differences(rep) if d.against == versus.FIRST]
    return d


def test_a_clear_difference_is_significant_with_its_ci():
    rep = report(
        [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(800, seed=2))],
        TWO_OTPS,
    )
    d = first_named(rep)
    assert d.verdict == "faster" and d.significant and d.rounds == 5
    assert d.baseline_runtime == "erlang@23.2.6" and d.runtime == "erlang@25.2.3"
    assert d.ratio == pytest.approx(0.8, rel=0.02) and d.ci95[0] < 0.8 < d.ci95[1]


def test_a_small_difference_is_within_noise():
    rep = report(
        [
            result("erlang@23.2.6", noisy(1000, spread=0.05)),
            result("erlang@25.2.3", noisy(1010, spread=0.05, seed=2)),
        ],
        TWO_OTPS,
    )
    assert first_named(rep).verdict == "within noise"


def test_within_noise_says_why_when_its_ci_leaves_the_band():
    # Same OTP named twice beside two CPU hogs read "within noise, 0.97× (CI
    # 0.88–0.99)" with no reason: the CI leaves the ±3% band at one end and
    # reaches into it at the other, so the difference is not called.
    rep = report(
        [
            result("erlang@23.2.6", noisy(1000, spread=0.04)),
            result("erlang@25.2.3", noisy(960, spread=0.04, seed=2)),
        ],
        TWO_OTPS,
    )
    d = first_named(rep)
    assert d.verdict == "within noise" and d.ci95[0] < 0.97 < d.ci95[1] < 1
    assert d.reasons == (reason(Why.WITHIN_NOISE, lo=d.ci95[0], hi=d.ci95[1], margin=0.97),)
    said = " ".join(rendered("table", complete(rep), width=80).split())
    assert "within noise, 0.96× (CI 0.95–0.99) — the CI reaches both sides of the 0.97×" in said
    # Inside the band, within noise is the whole answer.
    rep = report(
        [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(1000, seed=2))],
        TWO_OTPS,
    )
    d = first_named(rep)
    assert d.verdict == "within noise" and d.ci95[0] >= 0.97 and d.ci95[1] <= 1.03
    assert d.reasons == ()


def test_drift_in_one_round_is_not_a_difference():
    # Rounds of 4 samples. erlang@25 is hit by a slow spell in rounds 1 to 4
    # (a shared machine), and is otherwise the same: the pooled CI clears the
    # margin, but round 0 says the opposite, and the rounds' CI covers it.
    base = noisy(1000, spread=0.002)
    hit = [x * (1.3 if i >= 4 else 0.99) for i, x in enumerate(noisy(1000, spread=0.002, seed=3))]
    rep = report([result("erlang@23.2.6", base), result("erlang@25.2.3", hit)], TWO_OTPS)
    assert versus.judge(base, hit)[1][0] > 1.03  # what compare alone would call slower
    d = first_named(rep)
    assert d.ratio == pytest.approx(1.3, rel=0.01) and d.ci95[0] < 1 and d.basis == "wall"
    assert d.verdict == "within noise" and versus.is_drift(d)
    assert d.reasons == (reason(Why.ROUNDS_DISAGREE, agree=4, rounds=5),)


def test_too_few_rounds_is_unresolved_not_significant():
    rep = report(
        [
            result("erlang@23.2.6", noisy(1000, n=6)),
            result("erlang@25.2.3", noisy(700, n=6, seed=2)),
        ],
        TWO_OTPS,
        settings={"samples": 6, "rounds": 2, "openssl_runs": 1, "quick": True},
    )
    d = first_named(rep)
    assert d.verdict == versus.UNRESOLVED and d.rounds == 2 and not d.significant
    assert d.reasons == (reason(Why.FEW_ROUNDS, rounds=2, need=3),)
    text = " ".join(rendered("text", rep).split())
    assert "0.70x ? (CI 0.69-0.71) - 2 rounds with samples on both sides" in text
    assert "telling a difference from drift needs 3; rerun without --quick" in text


def test_without_a_round_plan_too_few_samples_are_no_significance():
    # A report that does not say how it sampled: the CI alone, which one or
    # two samples a side cannot give.
    rep = report(
        [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", [700.0, 701.0])],
        TWO_OTPS,
        settings={},
    )
    d = first_named(rep)
    assert d.verdict is Significance.FEW and d.ci95 is None and not d.significant
    assert d.reasons == (reason(Why.TOO_FEW_SAMPLES, what="sample", have=2, need=3),)
    assert "0.70× ?" in rendered("table", rep, width=200)


def test_numbers_as_posted_have_no_significance_and_say_so():
    bare = [
        schema.Result(**{**r.__dict__, "samples": (), "point_ns": r.median()})
        for r in (result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(700)))
    ]
    d = first_named(report(bare, TWO_OTPS))
    assert d.verdict is Significance.UNKNOWN and d.reasons == (reason(Why.NO_SAMPLES),)


def two_speed(fast: float, slow_share: float, n: int = 24, seed: int = 3) -> list[float]:
    """A cell of one process on a two-speed machine: `slow_share` of its
    samples 1.5x slower, in no order."""
    rng = random.Random(seed)
    k = round(n * slow_share)
    xs = [fast * 1.5 * (1 + rng.uniform(-0.01, 0.01)) for _ in range(k)]
    xs += [fast * (1 + rng.uniform(-0.01, 0.01)) for _ in range(n - k)]
    rng.shuffle(xs)
    return xs


def test_a_lopsided_ci_says_which_side_makes_it():
    # "1.50x (CI 0.47-1.53: within noise)": a --quick cell (24 samples, one
    # process) that caught a two-speed machine, just over half of its samples
    # at the slow speed. Its median is a slow one; a resample's median is a
    # fast one almost as often: the CI spans both speeds and the point sits
    # at its top. The difference names the cell that makes it.
    rep = report(
        [
            result("erlang@23.2.6", noisy(1000, n=24)),
            result("erlang@25.2.3", two_speed(1000, 13 / 24)),
        ],
        TWO_OTPS,
        settings={},
    )
    d = first_named(rep)
    lo, hi = d.ci95
    assert d.ratio == pytest.approx(1.49, abs=0.01) and lo < 1.01 and hi < 1.5, d
    assert (d.ratio - lo) / (hi - lo) > 0.9 and d.verdict is Significance.NOISE
    (why,) = d.reasons
    assert why.why is Why.CELL_TWO_SPEEDS and why["runtime"] == "erlang@25.2.3"
    assert why["low_share"] == pytest.approx(11 / 24, abs=0.001)
    (line,) = [x for a in view_of(rep).answers() for x in a.lines if "against" in x.subject]
    assert line.verdict.text == "within noise" and line.figure.startswith("1.49× (CI 1.00–1.50")
    assert line.reason.startswith("erlang@25.2.3 hash at 16 B (hw on): two speeds: 46% of the")
    # Both sides steady, the same ratio: nothing lopsided to say.
    one = report(
        [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(1500))], TWO_OTPS
    )
    assert first_named(one).reasons == ()


def test_rounds_follow_the_session_schedule():
    # 5 openssl runs spread over 20 rounds land in rounds 3, 7, 11, 15, 19.
    rep = report(
        [result("openssl@3.0.19", [1, 2, 3, 4, 5])],
        [runtime("openssl@3.0.19", "openssl")],
        {"samples": 100, "rounds": 20, "openssl_runs": 5},
    )
    assert versus.rounds_of(rep, rep.results[0]) == {
        3: [1.0],
        7: [2.0],
        11: [3.0],
        15: [4.0],
        19: [5.0],
    }
    # Worker cells: 10 samples in 4 rounds -> 2, 3, 2, 3; then --until-stable
    # rounds of the first round's size.
    rep = report(
        [result("erlang@23.2.6", list(range(12)))], TWO_OTPS[:1], {"samples": 10, "rounds": 4}
    )
    assert [len(v) for v in versus.rounds_of(rep, rep.results[0]).values()] == [2, 3, 2, 3, 2]


def test_the_fastest_row_is_not_named_inside_the_noise():
    level = [result("erlang@23.2.6", noisy(1000, spread=0.05))]
    level.append(result("erlang@25.2.3", noisy(1005, spread=0.05, seed=2)))
    (line,) = [x for a in view_of(report(level, TWO_OTPS)).answers() for x in a.lines]
    assert line.verdict.text == "within noise"
    clear = [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(1500, seed=2))]
    (line,) = [x for a in view_of(report(clear, TWO_OTPS)).answers() for x in a.lines]
    assert line.subject.startswith("erlang@25.2.3 against erlang@23.2.6")
    assert line.verdict.text == "1.50× slower"


def test_version_sentences_state_each_size():
    rep = report(
        [
            result("erlang@23.2.6", noisy(1000), size=16),
            result("erlang@25.2.3", noisy(800, seed=2), size=16),
            result("erlang@23.2.6", noisy(5000, seed=3), size=1024),
            result("erlang@25.2.3", noisy(5010, seed=4), size=1024),
        ],
        TWO_OTPS,
    )
    small, large = [x for a in view_of(rep).answers() for x in a.lines]
    assert small.subject.endswith("at 16 B") and small.verdict.text == "1.25× faster"
    assert small.figure.startswith("0.80× the time (CI")
    assert large.subject.endswith("at 1 KiB") and large.verdict.text == "within noise"


def test_reports_keep_their_differences_and_older_ones_compute_them():
    rep = report(
        [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(800, seed=2))],
        TWO_OTPS,
    )
    assert rep.differences is None and "differences" not in rep.to_json()
    stored = schema.Report.from_json(
        {**rep.to_json(), "differences": [d.to_json() for d in versus.differences(rep)]}
    )
    assert stored.differences == versus.of(rep)
    assert schema.Report.from_json(stored.to_json()).to_json() == stored.to_json()


# -- names -------------------------------------------------------------------


def view_of(rep):
    """The view of a report as `bridge report` builds it: completed first."""
    return build_view(complete(rep))


NOT_USED = "does not use SHA extensions: 1.00× at 16 bytes, within noise"


def verdict(rid: str) -> schema.HwVerdict:
    return schema.HwVerdict(
        "sha256",
        rid,
        "crypto:hash(sha256, Data)",
        "hash",
        "sha",
        16,
        "not-used",
        1.0,
        (0.99, 1.01),
        f"Erlang crypto:hash(sha256, Data) {NOT_USED}",
    )


def test_stored_explanations_name_their_runtime_when_a_kind_has_several():
    one = report(
        [result("erlang@23.2.6", noisy(1000))], TWO_OTPS[:1], verdicts=(verdict("erlang@23.2.6"),)
    )
    (line,) = [x for a in view_of(one).answers() for x in a.lines]
    assert line.subject == "Erlang crypto:hash"
    two = report(
        [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(1000, seed=2))],
        TWO_OTPS,
        verdicts=(verdict("erlang@23.2.6"), verdict("erlang@25.2.3")),
    )
    hardware = [x for a in view_of(two).answers() if a.kind.value == "hardware" for x in a.lines]
    assert [x.subject for x in hardware] == [
        "Erlang crypto:hash on erlang@23.2.6",
        "Erlang crypto:hash on erlang@25.2.3",
    ]
    assert all(x.verdict.text == "does not use SHA extensions" for x in hardware)


def test_fits_and_unstable_cells_name_their_runtime():
    fits = tuple(
        schema.CostFit(
            "sha256",
            rid,
            "crypto:hash(sha256, Data)",
            "hash",
            "on",
            300.0,
            0.77,
            1.3,
            1.0,
            0.01,
            (16, 64, 256),
        )
        for rid in ("erlang@23.2.6", "erlang@25.2.3")
    )
    unstable = (schema.UnstableCell("sha256", "erlang@25.2.3", "hash", 16, "on", 0.031),)
    rep = report(
        [result("erlang@23.2.6", noisy(1000)), result("erlang@25.2.3", noisy(1000, seed=2))],
        TWO_OTPS,
        fits=fits,
        unstable=unstable,
    )
    (section,) = view_of(rep).sections
    results, fit = section.tables[0], section.tables[1]
    assert fit.columns[0].key == "runtime"
    assert [row[0].text for row in fit.rows] == ["erlang@23.2.6", "erlang@25.2.3"]
    marked = [row[0].text for row in results.rows if row[results.column("median")].mark == "!"]
    assert marked == ["erlang@25.2.3"]


def test_plot_colours_by_runtime_and_styles_by_hw_and_call():
    rs = [
        result(rid, noisy(n), size=size, hw=hw, call=call)
        for rid, n in (("erlang@23.2.6", 1000), ("erlang@25.2.3", 900))
        for hw in (Hw.ON, Hw.OFF)
        for call in ("hash", "hash_other")
        for size in (16, 1024)
    ]
    drawn = plot.series([("r.json", report(rs, TWO_OTPS))])
    assert len(drawn) == 8 and len({(s.label, s.hw) for s in drawn}) == 8
    # Named by kind and version, as the report's runtimes give them.
    version = {"erlang@23.2.6": "erlang 23.2.6: ", "erlang@25.2.3": "erlang 25.2.3: "}
    assert all(s.label.startswith(version[s.runtime]) for s in drawn)
    colour = {s.runtime: s.colour for s in drawn}
    assert all(s.colour == colour[s.runtime] for s in drawn) and len(set(colour.values())) == 2
    assert {s.linestyle for s in drawn if s.hw == "on"} == {"-"}
    assert {s.linestyle for s in drawn if s.hw == "off"} == {"--"}
    assert len({s.marker for s in drawn}) == 2  # one per call
    title = plot.title("sha256", drawn, "SHA extensions")
    assert "solid, filled: machine as found (hw on)" in title
    assert "dashed, hollow: SHA extensions masked" in title
    assert "ns per call by size (median, 95% CI)" in title
    on_only = [s for s in drawn if s.hw == "on"]
    assert "dashed" not in plot.title("sha256", on_only)


def test_rounds_needed_beyond_five_follow_a_one_sided_sign_test():
    assert [stats.agreeing_rounds_needed(k) for k in (3, 5, 6, 10, 20, 30)] == [3, 5, 6, 9, 15, 20]
    # 23 of 30 rounds agreeing is a difference; 19 of 30 is not.
    base = [1000.0] * 300
    per_round = [0.8 if i < 23 else 1.2 for i in range(30)]
    other = [1000.0 * per_round[i // 10] for i in range(300)]
    settings = {"samples": 300, "rounds": 30, "openssl_runs": 6}
    rep = report(
        [result("erlang@23.2.6", base), result("erlang@25.2.3", other)], TWO_OTPS, settings
    )
    assert first_named(rep).verdict == "faster"
    per_round = [0.8 if i < 19 else 1.2 for i in range(30)]
    other = [1000.0 * per_round[i // 10] for i in range(300)]
    rep = report(
        [result("erlang@23.2.6", base), result("erlang@25.2.3", other)], TWO_OTPS, settings
    )
    d = first_named(rep)
    assert d.verdict == "within noise"
    assert d.reasons == (reason(Why.ROUNDS_DISAGREE, agree=19, rounds=30),)


def test_a_pasted_line_with_no_operations_makes_no_ratio():
    # openssl speed can print "0 ... in 0.00s"; import-speed keeps it as 0 ns.
    from bridge.speed import importer

    doc = "+F4:1:256:0.1:0.2\nDoing 256 bit sign ecdsa's for 10s: 5 256 bit ECDSA signs in 0.00s\n"
    rep, _ = importer.to_report(doc, "doc", [])
    assert all(d.ratio > 0 for d in rep.differences)
    for fmt in ("table", "markdown", "text"):
        rendered(fmt, rep)  # renders, no ZeroDivisionError
