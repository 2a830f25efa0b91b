"""--concurrency, the pure parts: window figures, scaling with its CI,
percentiles, oversubscription and the warnings, the machine collectors, the
scenario key and the options, the schema, the views (72-column ASCII text
included), compare and plot; the slowest of N, the CPUs a level's work
wanted, the serialised finding and level 1 against the per-call median."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bridge.analysis import compare, concurrency
from bridge.catalog import scenario
from bridge.cli import plans
from bridge.cli.common import rendered
from bridge.errors import UsageError
from bridge.report import schema
from bridge.report.findings import Why
from bridge.report.hw import Hw
from bridge.report.levels import (
    Concurrency,
    Gap,
    LevelRaw,
    LevelResult,
    Machine,
    Missing,
    Shape,
    Spread,
    percentile,
)
from bridge.system import topology
from bridge.view import words
from tests.conftest import FIXTURES


def cell(
    level=1, calls=(1000,), windows=20, mode="processes", runtime="erlang@25.2.3", jitter=0, **kw
):
    """Windows of 1 s: worker k completes calls[k] calls in each (with
    `jitter`, that many more in each window than in the one before)."""
    base = dict(
        scenario="sha256",
        runtime=runtime,
        call=f"crypto:hash(sha256, Data) ×{level} processes",
        call_id="hash",
        mode=mode,
        semantics="s",
        algorithm="sha256",
        size=16384,
        hw=Hw.ON,
        level=level,
        raw=LevelRaw(
            api="crypto:hash/2",
            windows=tuple(
                tuple((c + i * jitter, 1_000_000_000) for c in calls) for i in range(windows)
            ),
            latency_ns=tuple(range(1000, 1100)),
            output=b"\x00",
        ),
        output_ok=True,
    )
    raw_keys = {f.name for f in dataclasses.fields(LevelRaw)}
    raw = {k: v for k, v in kw.items() if k in raw_keys}
    rest = {k: v for k, v in kw.items() if k not in raw_keys}
    base["raw"] = dataclasses.replace(base["raw"], **raw)
    return LevelResult(**{**base, **rest})


def test_window_figures_drop_windows_a_worker_missed():
    c = cell(level=2, calls=(900, 1100))
    missed = ((0, 0), (5, 1_000_000_000))
    c = dataclasses.replace(c, raw=dataclasses.replace(c.raw, windows=(*c.raw.windows, missed)))
    assert c.dropped_windows == 1
    assert set(c.window_ops()) == {2000.0}
    assert c.worker_ops() == [900.0, 1100.0]
    assert c.ops().median == 2000.0


def test_scaling_and_efficiency_with_a_bootstrap_ci():
    cells = [cell(1, (1000,)), cell(2, (900, 900)), cell(4, (450,) * 4)]
    got = {s.level: s for s in concurrency.scaling(cells)}
    assert got[1].scaling == 1.0
    assert got[2].scaling == pytest.approx(1.8) and got[2].efficiency == pytest.approx(0.9)
    assert got[2].ci95 == pytest.approx((1.8, 1.8))  # identical windows: no spread
    assert got[4].scaling == pytest.approx(1.8)


def test_no_ci_with_too_few_windows_and_none_without_level_1():
    few = concurrency.scaling([cell(1, (1000,), windows=2), cell(2, (900, 900), windows=2)])
    assert [s.ci95 for s in few] == [None, None] and few[1].scaling == pytest.approx(1.8)
    assert concurrency.scaling([cell(2, (900, 900))]) == []


def test_percentiles_are_observed_values():
    assert percentile([1, 2, 3, 4], 0.5) == 2
    assert percentile(list(range(1, 101)), 0.99) == 99
    assert Spread.of([7]) == Spread(1, 7, 7, 7.0)
    assert Spread.of([]) is None


def test_oversubscription_and_warnings():
    m = Machine(logical_cpus=2, usable_cpus=2, physical_cores=1, smt_siblings=2)
    assert not concurrency.oversubscribed(2, m) and concurrency.oversubscribed(3, m)
    found = concurrency.machine_findings((1, 2, 4), m, schedulers=4)
    assert [r.why for r in found] == [Why.OVERSUBSCRIBED, Why.SMT_LEVELS, Why.SCHEDULERS_OVER]
    assert found[0].params == {"levels": (4,), "cpus": 2}
    text = " ".join(words.clause(r) for r in found)
    assert "level 4 exceeds the 2 CPUs" in text
    assert "2 hardware threads share each core" in text and "--schedulers 4" in text
    busy = Machine(logical_cpus=2, loadavg_start=(9.5, 9.0, 8.0), autogroup=True)
    said = [words.clause(r) for r in concurrency.machine_findings((1, 2), busy, None, True)]
    assert "load average 9.50" in said[0] and "autogroup" in said[1]
    # Autogroup matters only where Python's worker processes ran, each in a
    # session of its own: not on an Erlang-only run.
    alone = concurrency.machine_findings((1, 2), busy, None, sessions=False)
    assert [r.why for r in alone] == [Why.BUSY_START]
    assert concurrency.machine_findings((1, 2), Machine(logical_cpus=2), None) == []


@pytest.mark.parametrize("text, levels", [("2,4", (1, 2, 4)), ("1", (1,)), (" 4 , 2 ", (1, 2, 4))])
def test_levels_option(text, levels):
    assert plans.parse_levels(text) == levels


@pytest.mark.parametrize("text", ["0", "two", "2,,4", "2000", "-1", "²", "١,٢", "１,２"])
def test_bad_levels_are_one_line_usage_errors(text):
    with pytest.raises(UsageError, match="--concurrency: .* is not a level"):
        plans.parse_levels(text)


def test_options_put_levels_on_the_scenarios_and_in_the_reproduce_line():
    o = plans.RunOptions(scenarios=("sha256", "file-sha256"), concurrency="2", schedulers=1)
    plan = plans.from_options(o, ("bridge",))
    assert [sc.concurrency for sc in plan.scenarios] == [(1, 2), ()]
    assert plan.settings.schedulers == 1 and plan.settings.to_json()["schedulers"] == 1
    assert "--concurrency 1,2 --schedulers 1" in plan.reproduce
    plain = plans.from_options(plans.RunOptions(scenarios=("sha256",)), ("bridge",))
    assert "schedulers" not in plain.settings.to_json() and "concurrency" not in plain.reproduce


def test_scenario_key():
    data = {
        "name": "x",
        "description": "d",
        "kind": "hash",
        "digest": "sha256",
        "sizes": [16],
        "calls": {"erlang": ["hash"]},
        "concurrency": [4, 2],
    }
    sc = scenario.parse(data, "x.toml")
    assert sc.concurrency == (1, 2, 4)
    assert scenario.parse(sc.to_json(), "again").concurrency == (1, 2, 4)
    del data["concurrency"]
    assert "concurrency" not in scenario.parse(data, "x.toml").to_json()


@pytest.mark.parametrize("bad", [[0], [1, 1], "2", [True], list(range(1, 20))])
def test_scenario_key_is_validated(bad):
    data = {
        "name": "x",
        "description": "d",
        "kind": "hash",
        "digest": "sha256",
        "sizes": [16],
        "calls": {"erlang": ["hash"]},
        "concurrency": bad,
    }
    with pytest.raises(UsageError, match="key 'concurrency'"):
        scenario.parse(data, "x.toml")


def test_file_digest_scenarios_refuse_levels():
    data = {
        "name": "f",
        "description": "d",
        "kind": "file-digest",
        "digest": "sha256",
        "sizes": [16],
        "calls": {"erlang": ["hash_file"]},
        "concurrency": [2],
    }
    with pytest.raises(UsageError, match="no levels for kind 'file-digest'"):
        scenario.parse(data, "f.toml")


def test_builtin_scheduler_scenarios_straddle_max_bytes_to_nif():
    for name in ("sched-sha256", "sched-hmac-sha256"):
        sc = scenario.load(name)
        assert sc.concurrency == (1, 2)
        assert min(sc.sizes) < 20000 < sorted(sc.sizes)[1] and max(sc.sizes) == 1 << 20


def test_topology_from_sysfs_and_cpuinfo(tmp_path):
    for n, (package, core) in enumerate([(0, 0), (0, 0), (0, 1), (0, 1)]):
        topo = tmp_path / f"cpu{n}" / "topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text(f"{package}\n")
        (topo / "core_id").write_text(f"{core}\n")
    assert topology._from_sysfs(tmp_path) == (2, 1)
    cpuinfo = "".join(
        f"processor\t: {n}\nphysical id\t: 0\ncore id\t\t: {n // 2}\n\n" for n in range(4)
    )
    assert topology._from_cpuinfo(cpuinfo) == (2, 1)
    assert topology._from_sysfs(tmp_path / "nothing") == (None, None)
    assert topology.loadavg(lambda: (1.234, 2.0, 3.0)) == (1.23, 2.0, 3.0)


# -- a report with levels: schema, views, compare, plot ---------------------------


def report(scale: float = 1.0, jitter: bool = False) -> schema.Report:
    base = schema.load(FIXTURES / "report-hmac-sha1-v1.json")
    spread = 1 if jitter else 0
    cells = [
        cell(1, (1000,), jitter=spread),
        cell(
            2,
            (int(900 * scale),) * 2,
            jitter=spread,
            probe_ns=(50_000,) * 10,
            probe_idle_ns=(40_000,),
            sched={"normal": (97, 100), "dirty_cpu": (0, 100)},
            schedulers_online=2,
            dirty_cpu_schedulers_online=2,
        ),
        cell(
            1,
            (500,),
            mode="threads",
            runtime="python@3.11.7",
            call="hashlib.sha256(data).digest() ×1 thread",
            call_id="hashlib",
        ),
        cell(
            2,
            (260, 250),
            mode="threads",
            runtime="python@3.11.7",
            call="hashlib.sha256(data).digest() ×2 threads",
            call_id="hashlib",
        ),
        cell(
            2,
            (0,),
            mode="processes",
            runtime="python@3.11.7",
            status="failed",
            reason="process 2 of 2 exited",
            windows=0,
            call_id="hashlib",
            call="hashlib.sha256(data).digest() ×2 processes",
        ),
        cell(4, (300,) * 4, oversubscribed=True),
    ]
    machine = Machine(
        logical_cpus=2,
        usable_cpus=2,
        physical_cores=2,
        smt_siblings=1,
        loadavg_start=(0.5, 0.4, 0.3),
        loadavg_end=(1.0, 0.5, 0.3),
    )
    block = concurrency.with_findings(concurrency.block((1, 2, 4), 50, None, machine, cells))
    return schema.Report(**{**base.__dict__, "concurrency": block})


def test_the_block_reads_back_byte_for_byte():
    text = schema.dumps(report())
    data = json.loads(text)
    assert data["schema"] == "bridge.report/1"
    assert schema.dumps(schema.Report.from_json(data)) == text
    two = next(
        c
        for c in data["concurrency"]["cells"]
        if c["level"] == 2 and c["mode"] == "processes" and c["status"] == "ok"
    )
    assert two["ops_per_s"]["median"] == 1800 and two["probe"]["p99_ns"] == 50_000
    assert two["scheduler_utilisation"]["normal"] == 0.97


def test_views_show_levels_scaling_latency_and_the_probe():
    r = report()
    table = rendered("table", r, width=200)
    assert "Scaling: throughput of N workers at once over one (1, 2, 4)" in table
    assert "1.80× (1.80–1.80)" in table and "4*" in table and "failed [f1]" in table
    assert "process 2 of 2 exited" in table
    assert "50µs" in table  # the probe's p99 at level 2, at a width with room for it
    md = rendered("markdown", r)
    assert "**Scaling:" in md and "| erlang@25.2.3" in md
    assert "- Erlang crypto:hash, 2 processes: " in md and "1.80×" in md
    text = rendered("text", r)
    assert text.isascii() and max(map(len, text.splitlines())) <= 72


def test_compare_lines_up_levels_across_reports():
    rows = [r for r in compare.pair(report(), report(scale=1.5)) if "×" in r.call_id]
    by = {(r.kind, r.call_id): r for r in rows}
    # Windows with no spread give no CI: no verdict, not "within noise".
    assert by[("erlang", "hash ×1 processes")].verdict == compare.FEW
    jittered = report(jitter=True), report(scale=1.5, jitter=True)
    by = {(r.kind, r.call_id): r for r in compare.pair(*jittered) if "×" in r.call_id}
    assert by[("erlang", "hash ×1 processes")].verdict == "within noise"
    faster = by[("erlang", "hash ×2 processes")]
    assert faster.verdict == "faster" and faster.ratio == pytest.approx(1 / 1.5, rel=0.01)


def test_plot_draws_throughput_against_concurrency(tmp_path):
    pytest.importorskip("matplotlib")
    from bridge.render import plot

    n = plot.plot([("r", report())], tmp_path / "levels.png")
    assert (tmp_path / "levels.png").stat().st_size > 0
    assert n >= 3  # the classic lines, then one per runtime, call, mode and size
    assert isinstance(report().concurrency, Concurrency)


# -- the slowest of N, CPU use, serialisation, level 1 ----------------------------


def cpus(n: float, wait: float = 0.0, span: int = 1_000_000_000) -> dict:
    """Raw schedstat figures of n CPUs wanted, `wait` of that time waited."""
    busy = round(n * span)
    return {"span_ns": span, "cpu_ns": round(busy * (1 - wait)), "wait_ns": round(busy * wait)}


def test_the_slowest_of_n_is_the_median_of_each_race_s_last_finish():
    races = tuple((t, t + 5) for t in range(100, 106))  # six races of two
    c = cell(2, (900, 900), race_calls=40, race_ns=races)
    s = c.slowest()
    assert (s.calls, s.races, s.median_ns, s.min_ns, s.max_ns) == (40, 6, 107.5, 105, 110)
    assert s.ci95 == (105, 110)  # six races: the distribution-free CI is their range
    few = cell(2, (900, 900), race_calls=40, race_ns=races[:5]).slowest()
    assert few.ci95 is None and few.races == 5
    assert cell(2, (900, 900)).slowest() is None


def test_cpu_use_from_schedstat_or_from_the_erlang_probe():
    c = cell(2, (900, 900), **cpus(1.5, wait=0.2))
    assert c.cpu_use().cpus == pytest.approx(1.5) and c.cpu_use().wait_share == pytest.approx(0.2)
    erl = cell(2, (900, 900), probe_ns=(1, 2, 3), probe_active=(2, 2, 1), **cpus(2.5, 0.5))
    assert erl.cpu_use().cpus == pytest.approx(5 / 3)  # the probe's count, not the threads'
    assert erl.cpu_use().wait_share == pytest.approx(0.5)
    assert cell(2, (900, 900)).cpu_use() is None


def test_rounds_add_up_and_a_round_without_cpu_figures_makes_them_unknown():
    one = LevelRaw(windows=(((1, 1),),), race_calls=4, race_ns=((5,),), **cpus(1.0))
    two = LevelRaw(windows=(((2, 1),),), race_calls=4, race_ns=((6,),), **cpus(1.0))
    both = LevelRaw().merged(one).merged(two)
    assert (both.span_ns, both.cpu_ns, both.race_calls) == (2 * 10**9, 2 * 10**9, 4)
    assert both.race_ns == ((5,), (6,))
    blind = LevelRaw().merged(one).merged(dataclasses.replace(two, cpu_ns=None))
    assert blind.cpu_ns is None and blind.span_ns == 2 * 10**9


def test_per_call_time_that_outgrows_cpu_use_is_serialised():
    # A queue: four do together what one does alone, wanting one CPU throughout.
    queue = [cell(1, (1000,), **cpus(1.0)), cell(4, (250,) * 4, **cpus(1.05))]
    (f,) = concurrency.serialisation(queue)
    assert f.shape is Shape.SERIALISED and f.level == 4
    assert f.per_call_ratio == pytest.approx(4) and f.per_call_ci95 == pytest.approx((4, 4))
    assert f.cpu_ratio == pytest.approx(1.05) and f.cpus == pytest.approx((1.0, 1.05))
    # Work on two CPUs, four workers: per-call time doubles, and so do the CPUs
    # wanted (four threads ready to run); on a busy machine that gave them one
    # CPU, per-call time grows 4x while four threads still want one each.
    work = [cell(1, (1000,), **cpus(1.0)), cell(4, (500,) * 4, **cpus(4.0, wait=0.5))]
    other = "erlang@26.0"
    busy = [
        cell(1, (1000,), runtime=other, **cpus(1.0, 0.5)),
        cell(4, (250,) * 4, runtime=other, **cpus(4.0, wait=0.75)),
    ]
    assert [f.shape for f in concurrency.serialisation(work + busy)] == [Shape.WORK] * 2


def test_the_margin_and_the_ci_decide_and_missing_figures_withhold_the_word():
    # Per-call time 1.3x the CPU use: inside the 1.25 margin at its CI's low end.
    near = [cell(1, (1000,), **cpus(1.0)), cell(2, (1000 / 1.3,) * 2, **cpus(1.2))]
    assert concurrency.serialisation(near)[0].shape is Shape.WORK
    # Windows of a busy machine: some got a CPU, some hardly any; the CI of the
    # per-call time reaches both sides of the margin, and the word is withheld.
    varied = cell(2, (500, 500), **cpus(1.2))
    spread = tuple(((c, 10**9), (c, 10**9)) for c in (250, 1000) * 10)
    varied = dataclasses.replace(varied, raw=dataclasses.replace(varied.raw, windows=spread))
    (f,) = concurrency.serialisation([cell(1, (1000,), **cpus(1.0)), varied])
    assert f.shape is Shape.UNKNOWN and f.why == (Missing.WIDE_CI,)
    assert f.per_call_ci95[0] < 1.5 < f.per_call_ci95[1]
    none = concurrency.serialisation([cell(1, (1000,)), cell(2, (500, 500))])[0]
    assert none.shape is Shape.UNKNOWN and none.why == (Missing.NO_CPU_USE,)
    few = [cell(1, (1000,), windows=2, **cpus(1.0)), cell(2, (250, 250), windows=2, **cpus(1.0))]
    (f,) = concurrency.serialisation(few)
    assert f.shape is Shape.UNKNOWN and f.why == (Missing.NO_CI,) and f.per_call_ratio == 4


def per_call(ns: float, samples: int = 20, waits: float | None = None, tail: float = 1.0):
    """A per-call cell of `ns` a call (1 call a sample); the last quarter of
    its samples `tail` times as long; `waits`: the share each sample waited."""
    times = [round(ns * (tail if i >= samples * 3 // 4 else 1)) + i for i in range(samples)]
    wait = () if waits is None else tuple(round(t * waits) for t in times)
    return schema.Result(
        scenario="sha256",
        runtime="erlang@25.2.3",
        call="crypto:hash(sha256, Data)",
        call_id="hash",
        api="crypto:hash/2",
        semantics="s",
        algorithm="sha256",
        size=16384,
        hw=Hw.ON,
        samples=tuple(times),
        loops=1,
        output_hex="00",
        sample_wait_ns=wait,
    )


def test_level_one_agrees_or_says_why_not():
    pinned = Machine(pinned=True)
    # 1000 calls/s at level 1 against 1 ms a call: agree.
    (lo,) = concurrency.level_one([cell(1, (1000,), **cpus(1.0))], [per_call(1e6)], pinned)
    assert lo.gap is Gap.AGREE and lo.ratio == pytest.approx(1, rel=1e-3)
    # 400/s while its thread waited for a CPU 60% of the time: 1000/s without.
    waited = cell(1, (400,), **cpus(1.0, wait=0.6))
    (lo,) = concurrency.level_one([waited], [per_call(1e6, waits=0.3)], pinned)
    assert lo.gap is Gap.WAITED and lo.level_wait_share == pytest.approx(0.6)
    assert lo.cell_wait_share == pytest.approx(0.3, abs=1e-3)
    # 500/s and no waits, against calls of which a quarter take 5 ms: the
    # rate is the mean's (2 ms a call), the median 1 ms.
    (lo,) = concurrency.level_one(
        [cell(1, (500,), **cpus(1.0))], [per_call(1e6, tail=5.0, waits=0.0)], pinned
    )
    assert lo.gap is Gap.TAIL and lo.mean_ops == pytest.approx(500, rel=1e-3)
    # Faster than the per-call cell, pinned to one CPU, with 1.6 CPUs busy.
    fast = cell(1, (2000,), **cpus(1.6))
    (lo,) = concurrency.level_one([fast], [per_call(1e6)], pinned)
    assert lo.gap is Gap.PINNED
    (lo,) = concurrency.level_one([fast], [per_call(1e6)], Machine(pinned=False))
    assert lo.gap is Gap.UNEXPLAINED
    # Waits that make most of the gap on a log scale: 0.77 of the time, 4.3x,
    # against a gap of 5.1x (the rest is the calls' own spread).
    mostly = cell(1, (196,), **cpus(1.0, wait=0.77))
    (lo,) = concurrency.level_one([mostly], [per_call(1e6)], pinned)
    assert lo.gap is Gap.WAITED
    # Slower, without waits to explain it, and not the mean either.
    (lo,) = concurrency.level_one([cell(1, (300,), **cpus(1.0))], [per_call(1e6)], pinned)
    assert lo.gap is Gap.UNEXPLAINED
    # ... or with waits that make only a little of it (1.25x of 3.3x).
    (lo,) = concurrency.level_one([cell(1, (300,), **cpus(1.0, 0.2))], [per_call(1e6)], pinned)
    assert lo.gap is Gap.UNEXPLAINED
    # ... unless level 1 has too few windows for a CI (openssl: one run).
    few = cell(1, (800,), windows=2, **cpus(1.0))
    (lo,) = concurrency.level_one([few], [per_call(1e6)], pinned)
    assert lo.gap is Gap.FEW and lo.ops_ci95 is None
    # Only level 1, only with a per-call cell of the same call, size and hw.
    assert concurrency.level_one([cell(2, (500, 500))], [per_call(1e6)], pinned) == []
    other = dataclasses.replace(per_call(1e6), size=64)
    assert concurrency.level_one([cell(1, (1000,))], [other], pinned) == []


def test_the_findings_are_worded_in_the_views(tmp_path):
    queue = [cell(1, (1000,), **cpus(1.0)), cell(4, (250,) * 4, **cpus(1.05))]
    measured = concurrency.block([1, 4], 50, None, Machine(logical_cpus=2), queue)
    block = concurrency.with_findings(measured, [per_call(1e6)])
    assert block.serialisation[0].shape is Shape.SERIALISED
    assert block.level_one[0].gap is Gap.AGREE
    data = block.to_json()
    assert data["serialisation"][0]["shape"] == "serialised" and "level_one" in data
    assert Concurrency.from_json(json.loads(json.dumps(data))) == block


def test_a_tls_level_checks_what_was_negotiated():
    from bridge.analysis import interop
    from bridge.catalog import calls, negotiated
    from bridge.catalog.inputs import Inputs, TlsFiles

    sc = scenario.load("tls-handshake")
    call = calls.lookup("python", "handshake-1.3")
    files = TlsFiles(cert="c.pem", key="k.pem", ca="ca.pem", cert_print="ab12")
    data = Inputs(key=b"", data=b"", count=1, tls=files)
    want = interop.tls_expected(sc, call, data)
    good = negotiated.encode(want)
    assert concurrency.output_ok(sc, call, data, good) is True
    wrong = negotiated.encode({**want, "protocol": "TLSv1.2"})
    assert concurrency.output_ok(sc, call, data, wrong) is False
