"""The upgrade view on made-up sweeps with known costs: where a difference
lives (per call or per byte), its CI and words, the pairing within a run and
between reports, and its place in every rendering."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from bridge.analysis import compare, upgrade, versus
from bridge.render import show
from bridge.render.compare import render as render_compare
from bridge.report import schema
from bridge.report.findings import Significance, Why, reason
from bridge.report.hw import Hw
from bridge.view import words

SIZES = (16, 64, 256, 1024, 8192, 16384)
LOOPS = 1000


def samples(ns: float, n: int = 20) -> tuple[int, ...]:
    """n samples around ns per call: a fixed ±0.4% pattern, no randomness."""
    return tuple(round(ns * (1 + 0.004 * ((i * 7) % 5 - 2) / 2) * LOOPS) for i in range(n))


def result(runtime: str, size: int, ns: float, n: int = 20, **over) -> schema.Result:
    fields = dict(
        scenario="sha256",
        runtime=runtime,
        call="crypto:hash(sha256, Data)",
        call_id="hash",
        api="crypto:hash/2",
        semantics="one-shot",
        algorithm="sha256",
        size=size,
        hw=Hw.ON,
        samples=samples(ns, n),
        loops=LOOPS,
        output_hex="00",
    )
    return schema.Result(**{**fields, **over})


def erlang(rid: str, otp: str, lib: str, hw: Hw = Hw.ON, **details) -> schema.Runtime:
    return schema.Runtime(
        rid,
        "erlang",
        "/x/erl",
        f"OTP {otp}",
        {"otp_version": otp, "crypto_lib": f"{lib} 11 Sep 2023", **details},
        hw,
    )


def sweep(runtime: str, a: float, b: float, n: int = 20, sizes=SIZES) -> list[schema.Result]:
    return [result(runtime, s, a + b * s, n) for s in sizes]


def report(runtimes, results) -> schema.Report:
    return schema.Report(
        bridge_version="0",
        created="2026-01-01T00:00:00+00:00",
        command=["bridge"],
        reproduce="bridge run sha256",
        settings={"seed": 1},
        environment={},
        runtimes=tuple(runtimes),
        results=tuple(results),
        scenarios=({"name": "sha256", "description": "SHA-256", "kind": "hash"},),
    )


OLD = erlang("erlang@23.2.6", "23.2.6", "OpenSSL 1.1.1w")
NEW = erlang("erlang@25.2.3", "25.2.3", "OpenSSL 3.0.19")


def test_a_fixed_cost_per_call_and_the_same_cost_per_byte():
    # Named newest first: the view still takes the older version as the base.
    r = report([NEW, OLD], sweep(NEW.id, 1600, 1.0) + sweep(OLD.id, 1000, 1.0))
    (u,) = upgrade.in_report(r)
    assert (u.old, u.new) == (OLD.id, NEW.id)
    assert (u.old_version, u.new_version) == (
        "OTP 23.2.6 on OpenSSL 1.1.1w",
        "OTP 25.2.3 on OpenSSL 3.0.19",
    )
    assert u.delta_a_ns == pytest.approx(600, rel=0.02)
    assert u.delta_a_ci95[0] > 550 and u.delta_a_ci95[1] < 650
    assert u.b_ratio == pytest.approx(1.0, abs=0.01)
    assert (u.per_call, u.per_byte) == ("more", "same")
    assert [s.size for s in u.sizes] == list(SIZES)
    assert u.sizes[0].ratio == pytest.approx(1616 / 1016, rel=0.01)
    assert u.sizes[-1].ratio == pytest.approx(17984 / 17384, rel=0.01)
    assert all(s.significance is Significance.SLOWER for s in u.sizes)
    assert words.upgrade_split(u, "Erlang crypto:hash(sha256, Data)") == (
        "Erlang crypto:hash(sha256, Data): OTP 25.2.3 on OpenSSL 3.0.19 costs 600 ns more"
        f" per call (95% CI {words._signed(u.delta_a_ci95[0])} to"
        f" {words._signed(u.delta_a_ci95[1])}) and the same per byte (1.00×) against"
        " OTP 23.2.6 on OpenSSL 1.1.1w."
    )


def test_each_size_is_the_finding_the_table_shows():
    # The sentence and the table's `× first named` say the same of a cell:
    # one ratio, one CI, one significance.
    r = report([OLD, NEW], sweep(OLD.id, 1000, 1.0) + sweep(NEW.id, 1600, 1.0, n=3))
    diffs = versus.differences(r)
    (u,) = upgrade.in_report(r, diffs)
    first = {d.size: d for d in diffs if d.against == versus.FIRST}
    for s in u.sizes:
        d = first[s.size]
        assert (s.ratio, s.ratio_ci95, s.significance) == (d.ratio, d.ci95, d.verdict)
    # Named the other way round, the table's finding is read back inverted.
    r2 = report([NEW, OLD], r.results)
    (u2,) = upgrade.in_report(r2, versus.differences(r2))
    d = next(d for d in versus.differences(r2) if d.against == versus.FIRST and d.size == 16)
    assert u2.sizes[0].ratio == pytest.approx(1 / d.ratio)
    assert d.verdict is Significance.FASTER and u2.sizes[0].significance is Significance.SLOWER


@pytest.mark.parametrize(
    "new_a, new_b, per_call, per_byte, said, ends",
    [
        (
            1000,
            1.5,
            "same",
            "more",
            "the same per call within noise (+0",
            ("within noise", "slower"),
        ),
        (1000, 0.5, "same", "less", "the same per call within noise", ("within noise", "faster")),
        (700, 1.2, "less", "more", "ns less per call", ("faster", "slower")),
    ],
)
def test_the_words_follow_the_fits(new_a, new_b, per_call, per_byte, said, ends):
    r = report([OLD, NEW], sweep(OLD.id, 1000, 1.0) + sweep(NEW.id, new_a, new_b))
    (u,) = upgrade.in_report(r)
    assert (u.per_call, u.per_byte) == (per_call, per_byte)
    assert said in words.upgrade_split(u, "crypto:hash")
    assert (u.sizes[0].significance, u.sizes[-1].significance) == ends


def test_too_few_samples_give_the_split_no_ci_and_say_so():
    r = report([OLD, NEW], sweep(OLD.id, 1000, 1.0, n=3) + sweep(NEW.id, 1600, 1.0, n=3))
    (u,) = upgrade.in_report(r)
    assert u.delta_a_ci95 is None and u.b_ratio_ci95 is None
    assert u.per_call == "more"  # from the point estimates
    assert u.reasons == (reason(Why.TOO_FEW_SAMPLES, what="sample", have=3, need=6),)
    # Each size keeps its own finding, as the table shows it.
    assert u.sizes[0].significance is Significance.SLOWER
    said = words.upgrade_split(u, "crypto:hash")
    assert said.endswith("(the split has no CI: 3 samples a side: a CI needs 6).")


def test_imported_numbers_say_as_posted():
    bare = [dataclasses.replace(x, samples=(), point_ns=x.median()) for x in sweep(OLD.id, 1000, 1)]
    new = [dataclasses.replace(x, samples=(), point_ns=x.median()) for x in sweep(NEW.id, 1600, 1)]
    r = report([OLD, NEW], bare + new)
    (u,) = upgrade.in_report(r)
    assert u.reasons == (reason(Why.NO_SAMPLES),)
    assert {s.significance for s in u.sizes} == {Significance.UNKNOWN}
    assert u.sizes[0].ratio == pytest.approx(1.59, abs=0.01)


def test_one_size_gives_the_ratio_alone():
    r = report(
        [OLD, NEW],
        sweep(OLD.id, 1000, 1.0, sizes=(1000,)) + sweep(NEW.id, 1200, 1.0, sizes=(1000,)),
    )
    (u,) = upgrade.in_report(r)
    assert u.delta_a_ns is None and u.per_call == "unknown"
    assert u.sizes[0].ratio == pytest.approx(1.10, abs=0.01)


def test_what_is_not_an_upgrade():
    twin = dataclasses.replace(NEW, id="erlang@25.2.3#2")
    masked = dataclasses.replace(OLD, hw=Hw.OFF)
    # The same release by two paths, and a masked twin: no view.
    r = report([NEW, twin, masked], sweep(NEW.id, 1000, 1.0) + sweep(twin.id, 1000, 1.0))
    assert upgrade.in_report(r) == []
    # Only cells both sides measured, hw on when there is one; failed cells left out.
    off = [dataclasses.replace(x, hw=Hw.OFF) for x in sweep(OLD.id, 1000, 1.0)]
    bad = result(NEW.id, 99, 1.0, status="unsupported", samples=())
    r = report([OLD, NEW], sweep(OLD.id, 1000, 1.0)[:3] + off + sweep(NEW.id, 1600, 1.0) + [bad])
    (u,) = upgrade.in_report(r)
    assert [s.size for s in u.sizes] == list(SIZES[:3]) and u.hw == "on"


def test_a_libcrypto_copy_of_the_same_release_is_named_by_id():
    copy = erlang(
        "erlang@25.2.3+libcrypto-3.0.19",
        "25.2.3",
        "OpenSSL 3.0.19",
        libcrypto_dir={"dir": "/tmp/lc", "version": "OpenSSL 3.0.19 27 Jan 2026"},
    )
    r = report([NEW, copy], sweep(NEW.id, 1000, 1.0) + sweep(copy.id, 1000, 1.0))
    (u,) = upgrade.in_report(r)
    assert (u.old, u.new) == (NEW.id, copy.id)  # equal versions: the order named
    assert u.new_version == "OTP 25.2.3 on OpenSSL 3.0.19 from /tmp/lc"
    assert (u.per_call, u.per_byte) == ("same", "same")
    newer = dataclasses.replace(
        copy,
        id="erlang@25.2.3+libcrypto-3.5.4",
        details={
            **copy.details.to_json(),
            "libcrypto_dir": {"dir": "/o", "version": "OpenSSL 3.5.4 1 Oct 2025"},
        },
    )
    assert upgrade.version_key(newer) > upgrade.version_key(NEW)
    assert upgrade.version_label(newer) == "OTP 25.2.3 on OpenSSL 3.5.4 from /o"


def test_openssl_and_python_labels():
    cli = schema.Runtime(
        "openssl@3.0.19",
        "openssl",
        "/usr/bin/openssl",
        "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.5.4 30 Sep 2025)",
    )
    assert upgrade.version_label(cli) == "openssl 3.0.19 CLI on OpenSSL 3.5.4"
    plain = dataclasses.replace(cli, version="OpenSSL 1.1.1w  11 Sep 2023")
    assert upgrade.version_label(plain) == "OpenSSL 1.1.1w"
    assert upgrade.version_key(plain) < upgrade.version_key(cli)
    py = schema.Runtime(
        "python@3.11.7",
        "python",
        "/p",
        "Python 3.11.7",
        {"ssl_openssl_version": "OpenSSL 3.0.19 27 Jan 2026"},
    )
    assert upgrade.version_label(py) == "Python 3.11.7 on OpenSSL 3.0.19"


def test_the_report_keeps_the_view_and_old_reports_stay_as_they_were():
    r = report([OLD, NEW], sweep(OLD.id, 1000, 1.0) + sweep(NEW.id, 1600, 1.0))
    with_view = dataclasses.replace(r, upgrades=tuple(upgrade.in_report(r)))
    text = schema.dumps(with_view)
    assert "upgrades" in json.loads(text)
    assert schema.dumps(schema.Report.from_json(json.loads(text))) == text
    assert "upgrades" not in json.loads(schema.dumps(r))  # none: no key, as before


def rendered(r: schema.Report) -> dict[str, str]:
    r = dataclasses.replace(r, upgrades=tuple(upgrade.in_report(r)))
    return {fmt: show(fmt, r, width=200) for fmt in ("table", "markdown", "text", "json")}


def test_every_view_shows_it():
    views = rendered(report([OLD, NEW], sweep(OLD.id, 1000, 1.0) + sweep(NEW.id, 1600, 1.0)))
    for fmt in ("table", "markdown", "text"):
        assert "Upgrade: new time over old" in views[fmt], fmt
    assert "costs 600 ns more per call" in " ".join(views["table"].split())
    assert "| erlang@25.2.3 | erlang@23.2.6 | hash" in views["markdown"]
    # One row per size, narrow: new/old at each (no CI here: a column that
    # would say nothing goes); each side's a and b are the cost model's.
    table = views["table"]
    assert re.search(r"^erlang@25\.2\.3 +erlang@23\.2\.6 +hash +16 +1\.59×$", table, re.M)
    assert re.search(r"^erlang@25\.2\.3 +erlang@23\.2\.6 +hash +16384 +1\.03×$", table, re.M)
    assert "95% CI" not in table.split("Upgrade:")[1].split("\n\n")[0]
    text = views["text"]
    assert all(len(line) <= 72 and line.isascii() for line in text.splitlines())
    assert "600 ns more per call" in " ".join(text.split())
    assert json.loads(views["json"])["upgrades"][0]["per_call"] == "more"


def test_compare_shows_it_between_two_reports():
    a = report([OLD], sweep(OLD.id, 1000, 1.0))
    b = report([NEW], sweep(NEW.id, 1600, 1.0))
    c = compare.compare([a, b], ["old.json", "new.json"])
    (u,) = c.upgrades[1]
    assert (u.old, u.new) == ("old.json: erlang@23.2.6", "new.json: erlang@25.2.3")
    assert u.per_call == "more"
    for fmt in ("table", "markdown", "text"):
        out = render_compare(c, fmt)
        assert "600 ns more per call" in out.replace("\n  ", " "), fmt
    assert all(len(line) <= 72 for line in render_compare(c, "text").splitlines())
    data = json.loads(render_compare(c, "json"))
    assert data["comparisons"][0]["upgrades"][0]["new"] == "new.json: erlang@25.2.3"
    # The same versions on both sides: compare's own table says it all.
    assert compare.compare([a, a], ["x", "y"]).upgrades == {}


def test_six_sizes_fit_72_columns_without_folding():
    """Two OTPs at six sizes (a saved run): the text view's upgrade table is
    one table, a row per size with its ratio and CI, within 72 columns; a
    column per size had folded it into three parts there."""
    saved = schema.load(
        Path(__file__).resolve().parents[3] / "docs/findings/reports/otp23-otp25.json"
    )
    for fmt, width in (("text", 72), ("table", 80)):
        shown = show(fmt, saved, width=width)
        assert all(len(line) <= width for line in shown.splitlines()), fmt
        for block in shown.split("Upgrade: new time over old, per size:")[1:]:
            table = block.split("\n\n")[0].splitlines()[1:]
            assert [line.split()[:4] for line in table[:2]] == [
                ["new", "old", "call", "bytes"],
                ["-------------", "-------------", "----", "-----"],
            ]
            rows = table[2:]
            sizes = [int(line.split()[3]) for line in rows]
            assert sizes == [16, 64, 256, 1024, 4096, 16384], fmt
            cell = re.compile(r"\d\.\d\d(x|×) (sig|noise|drift|\?) +\d\.\d\d[-–]\d\.\d\d$")
            assert all(cell.search(r) for r in rows), rows
