"""Every reason analysis or hw can give is worded (bridge.view.words), with
exactly the parameters its code declares (bridge.report.findings.PARAMS), and
the words say what the figures say: a verdict word never without its reason,
an upgrade line that names both sides and says slower or faster."""

from __future__ import annotations

import json

import pytest

from bridge.hw import verdicts
from bridge.report import schema, whynot
from bridge.report.findings import (
    PARAMS,
    Change,
    Reason,
    Rerun,
    Significance,
    Verdict,
    Why,
    reason,
)
from bridge.report.hw import Hw
from bridge.report.whynot import Clue, Sign, Source
from bridge.view import words
from tests.conftest import ROOT

CELL = {
    "scenario": "sha256",
    "runtime": "erlang@25.2.3",
    "call_id": "hash",
    "size": 1024,
    "hw": "on",
    "unit": "bytes",
}
CALLS = (("erlang@25.2.3", "macN", ("on", "off")), ("python@3.11.7", "hmac.digest", ("on",)))
CLUES = (Clue(Source.VERSION_A, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),)

# One example of each reason, with the words it must say.
EXAMPLES: dict[Why, tuple[dict, str]] = {
    Why.BUSY_MACHINE: (
        {"others_cpus": 1.6, "cpus": 2, "needs": 2.0},
        "the machine was busy (other processes used 1.6 of 2 CPUs): a verdict needs its CI"
        " above 2.00×; rerun on a quieter machine",
    ),
    Why.BUSY_HOST: ({"steal": 0.05, "needs": 2.0}, "gave 5% of the CPU time to other guests"),
    Why.TWIN_WAITED: ({"share": 0.31, "needs": 2.0}, "a run waited for a CPU 31%"),
    Why.TWINS_WAITED_APART: ({"points": 5.0, "needs": 1.1}, "5 points apart"),
    Why.FEW_PROCESS_PAIRS: (
        {"pairs": 1, "needs": 1.1},
        "with 1 process a side the CI cannot see how much two processes of one call differ:"
        " a verdict needs its CI above 1.10×",
    ),
    Why.ROUNDS_DISAGREE: ({"agree": 4, "rounds": 6}, "only 4 of 6 interleaved rounds agree"),
    Why.TWO_SPEEDS: (
        {"side": "on", "low_share": 0.4, "low_ns": 2876.0, "high_ns": 4660.0},
        "unmasked run: 40% of the samples near 2,876 ns, the rest near 4,660 ns) and the"
        " masked run's samples sit at the slow one",
    ),
    Why.TOO_FEW_SAMPLES: (
        {"what": "openssl run", "have": 1, "need": 3},
        "1 openssl run a side: a CI needs 3",
    ),
    Why.WITHIN_NOISE: (
        {"lo": 1.01, "hi": 2.01, "margin": 1.05},
        "the CI reaches both sides of the 1.05× a verdict needs",
    ),
    Why.MASKED_FASTER: ({"ratio": 0.74, "lo": 0.73, "hi": 0.77}, "which no mask can cause"),
    Why.SAMPLES_EQUAL: ({}, "all equal, so there is no CI"),
    Why.WAITED: (
        {"side": "off", "stretch": 4.2, "sample_ms": 5},
        "the masked run's samples took 4.2× their planned 5 ms even at best",
    ),
    Why.CPU_SHORT: (
        {"cpu": 1.12, "cpu_lo": 0.86, "cpu_hi": 1.32, "needs": 2.0},
        "by CPU time per call the masked run is 1.12× (CI 0.86–1.32), short of the 2.00×",
    ),
    Why.CPU_BASIS: (
        {"aa": 1.18, "floor": 1.1, "needs": 1.18},
        "judged on CPU time: a run waited for a CPU; the call's own processes read 1.18×"
        " apart: a verdict needs its CI above 1.18×",
    ),
    Why.LOAD_CPU: ({"busier": "B"}, "judged on CPU time: B ran on a busier machine"),
    Why.TWIN_GAP: (
        {"gap": 1.3, "scenario": "sha512", "call_id": "hashlib", "size": 8192, "unit": "bytes"},
        "at least 1.30× faster elsewhere (hashlib in sha512 at 8 KiB)",
    ),
    Why.FIXED_COST: (
        {"speedup": 1.22, "best_size": 16384, "best_speedup": 3.1, "example": None},
        "most of a call is fixed cost (set-up, call overhead), which the feature does not"
        " speed up; the gain shows at 16 KiB: 3.10×",
    ),
    Why.ROUNDS_LEFT_OUT: ({"left_out": 1, "rounds": 6}, "1 of 6 rounds left out"),
    Why.CPU_LACKS: ({"feature": "sha", "seen_by": Source.CPUINFO}, "the CPU does not offer it"),
    Why.ENV_MASKS: (
        {"variable": "OPENSSL_ia32cap", "value": ":~0x20000000"},
        "OPENSSL_ia32cap=:~0x20000000 was set before bridge started",
    ),
    Why.NO_ASM: (
        {"library": "/x/libcrypto.so.3", "version": "OpenSSL 3.5.7 1 Jul 2026", "evidence": CLUES},
        "(OpenSSL 3.5.7) was built without assembler (CPUINFO: N/A from openssl version -a)",
    ),
    Why.NO_CAPVECTOR: (
        {"library": "", "version": "OpenSSL 3.5.7", "evidence": CLUES},
        "the libcrypto (OpenSSL 3.5.7) has no capability vector",
    ),
    Why.BYPASSES_EVP: ({"api": "hashlib"}, "the call runs hashlib's built-in code"),
    Why.TOO_SMALL: (
        {"size": 16, "shows_at": 16384, "speedup": 3.12},
        "at 16 bytes the feature's share of a call is too small to show",
    ),
    Why.NONE_FOUND: ({"largest": 16384}, "no size up to 16 KiB showed it"),
    Why.UNKNOWN_FEATURE: ({}, "bridge does not know this feature on this CPU"),
    Why.MASK_NO_EFFECT: ({}, "the mask did not take effect"),
    Why.NO_MEASUREMENT: ({}, "a side of the comparison has no measurement"),
    Why.LIBRARY_UNKNOWN: ({}, "version is unknown"),
    Why.FOREIGN_LIBRARY: ({"library": "LibreSSL"}, "LibreSSL does not read OpenSSL's"),
    Why.OLD_LEAF7: (
        {"version": "1.1.0", "features": ("vaes",)},
        "OpenSSL 1.1.0 reads only EBX of CPUID leaf 7, so vaes cannot be masked",
    ),
    Why.ZEROES_LEAF7: ({}, "OpenSSL 1.0.2 zeroes every leaf-7 feature"),
    Why.ARMCAP_UNKNOWN: ({}, "OPENSSL_armcap replaces the detected value"),
    Why.NO_MASK_FOR_ARCH: ({"arch": "riscv64"}, "no capability mask is known for riscv64"),
    Why.NO_MASK_BIT: (
        {"variable": "OPENSSL_armcap", "features": ("sha",)},
        "no OPENSSL_armcap bit for sha",
    ),
    Why.FEW_ROUNDS: (
        {"rounds": 1, "need": 3},
        "1 round with samples on both sides: telling a difference from drift needs 3",
    ),
    Why.NO_SAMPLES: ({}, "as posted: no samples to tell"),
    Why.UNEQUAL_LOAD: ({"busier": "B"}, "B ran on a busier machine"),
    Why.OTHERS_BUSY: (
        {"others_cpus": 1.0, "cpus": 2, "load": None, "busy_count": 3, "shares": (0.99, 0.5)},
        "other processes used 1.0 of 2 CPUs during the run; 3 of them over 10% of a CPU,"
        " the busiest at 99%, 50%",
    ),
    Why.STEAL: ({"steal": 0.05}, "gave 5% of this machine's CPU time to other guests"),
    Why.GOVERNOR: ({"governor": "powersave"}, "governor 'powersave'"),
    Why.SMT: ({"siblings": ((0, 1),)}, "SMT: CPUs 0,1 share a core"),
    Why.CELL_TWO_SPEEDS: (
        {**CELL, "low_share": 0.6, "low_ns": 1000.0, "high_ns": 1300.0, "d": 9.1},
        "erlang@25.2.3 hash at 1 KiB (hw on): two speeds: 60% of the samples near 1,000 ns",
    ),
    Why.CELL_DRIFT: (
        {**CELL, "shift": 0.066, "z": 5.2},
        "drifting samples: the level moved +6.6%",
    ),
    Why.CELL_BY_PROCESS: (
        {**CELL, "spread": 0.06, "processes": 2, "share": 0.95},
        "this cell depends on the process: 6.0% between two processes",
    ),
    Why.CELLS_TWO_SPEEDS: (
        {
            "cells": 3,
            "calls": CALLS,
            "gap_lo": 1.64,
            "gap_hi": 1.7,
            "fast_lo": 0.5,
            "fast_hi": 0.5,
            "drifting": 0,
            "z_lo": 0.0,
            "z_hi": 0.0,
        },
        "two speeds in 3 cells (erlang@25.2.3 macN (hw on, off); python@3.11.7 hmac.digest",
    ),
    Why.CELLS_DRIFT: (
        {"cells": 3, "calls": CALLS, "z_lo": 3.5, "z_hi": 6.0},
        "drifting samples in 3 cells",
    ),
    Why.CELLS_BY_PROCESS: ({"cells": 3, "calls": CALLS}, "3 cells depend on the process"),
    Why.CELL_WAITED: ({**CELL, "share": 0.33}, "waited for a CPU 33% of its sample windows"),
    Why.CELLS_WAITED: (
        {"runtime": "python@3.11.7", "cells": 4, "lo": 0.1, "hi": 0.4},
        "python@3.11.7 waited for a CPU 10%-40% of its sample windows in 4 cells",
    ),
    Why.CELL_BY_CPU: (
        {**CELL, "cpus": ((0, 10000.0, 3), (1, 13000.0, 3))},
        "samples differ by CPU: CPU 0 10,000 ns (3), CPU 1 13,000 ns (3)",
    ),
    Why.IMPLAUSIBLE_COST: (
        {**CELL, "per_unit": 1.9, "ratio": 1.5, "b": 1.27},
        "erlang@25.2.3 hash (hw on) at 1,024 bytes: 1.9 ns per byte, 1.50× the line's 1.27",
    ),
    Why.NOISY_RUN: ({}, "run again on a quieter machine"),
    Why.OVERSUBSCRIBED: ({"levels": (4,), "cpus": 2}, "level 4 exceeds the 2 CPUs"),
    Why.SMT_LEVELS: ({"siblings": 2, "cores": 1}, "2 hardware threads share each core"),
    Why.SCHEDULERS_OVER: ({"schedulers": 4, "cpus": 2}, "--schedulers 4 is more than the 2"),
    Why.BUSY_START: ({"load": 9.5, "cpus": 2}, "load average 9.50 on 2 CPUs"),
    Why.AUTOGROUP: ({}, "Linux autogroup is on"),
    Why.WINDOWS_DROPPED: (
        {
            "runtime": "python@3.11.7",
            "call_id": "hashlib",
            "mode": "threads",
            "size": 64,
            "level": 4,
            "dropped": 3,
            "windows": 20,
        },
        "level 4: 3 of 20 windows dropped",
    ),
    Why.OTHER_LIBRARY: (
        {"runtime": "openssl@1", "theirs": "OpenSSL 3.0.19", "ours": "OpenSSL 1.1.1"},
        "openssl@1 uses OpenSSL 3.0.19, not this runtime's OpenSSL 1.1.1",
    ),
    Why.UNSUPPORTED: ({"reason": "no reusable AEAD context"}, "no reusable AEAD context"),
    Why.NOTHING_TO_SUBTRACT: ({}, "no call to set it against"),
    Why.QUIET_ENOUGH: ({}, "quiet enough"),
    Why.PIN_CPU: ({"cpu": 1}, "taskset -c 1 crypto-bridge run"),
    Why.UNTIL_STABLE: ({}, "add --until-stable"),
    Why.BUSY_MEANWHILE: ({"busiest": (("burner", 77, 0.8),)}, "burner (pid 77, 80%)"),
}


def test_every_reason_has_an_example_here():
    assert set(EXAMPLES) == set(Why)
    assert set(PARAMS) == set(Why)


@pytest.mark.parametrize("why", list(Why), ids=lambda w: w.value)
def test_every_reason_is_worded_from_exactly_its_parameters(why):
    params, said = EXAMPLES[why]
    r = Reason(why, params)
    assert set(r.params) == PARAMS[why]
    assert said in words.reason(r)
    # A reason of a path that does not use the feature is also its record.
    if why in whynot.KINDS:
        record = whynot.KINDS[why](**params)
        assert set(record.params()) == PARAMS[why] and record.reason is why
        assert words.why_not(record) == words.clause(r)


@pytest.mark.parametrize("why", list(Why), ids=lambda w: w.value)
def test_a_reason_with_other_parameters_is_refused(why):
    params, _ = EXAMPLES[why]
    with pytest.raises(ValueError, match=why.value):
        Reason(why, {**params, "extra": 1})
    if params:
        with pytest.raises(ValueError):
            Reason(why, dict(list(params.items())[1:]))


def test_a_reason_is_written_flat_with_its_code_first_and_read_back():
    r = reason(Why.TWO_SPEEDS, side="on", low_share=0.4, low_ns=2876.0, high_ns=4660.0)
    assert list(r.to_json()) == ["why", "side", "low_share", "low_ns", "high_ns"]
    assert Reason.from_json(json.loads(json.dumps(r.to_json()))) == r
    listed = reason(Why.OLD_LEAF7, version="1.1.0", features=["vaes", "vpclmul"])
    assert listed["features"] == ("vaes", "vpclmul")  # lists read back as tuples
    assert Reason.from_json(json.loads(json.dumps(listed.to_json()))) == listed


def test_the_schema_lists_every_reason():
    published = json.loads((ROOT / "bridge" / "report" / "report-1.schema.json").read_text())
    codes = published["$defs"]["reason"]["properties"]["why"]["enum"]
    assert codes == [w.value for w in Why]
    # The parameters' names are a closed set too: a reader refuses another.
    names = published["$defs"]["reason"]["propertyNames"]["enum"]
    assert names == sorted(set().union(*PARAMS.values()) | {"why"})


def test_the_noise_band_is_the_verdicts_margin():
    assert words.NOISE_BAND == verdicts.MARGIN


def test_what_to_do_comes_from_the_rerun_once():
    busy = reason(Why.BUSY_MACHINE, others_cpus=1.6, cpus=2, needs=2.0)
    pairs = reason(Why.FEW_PROCESS_PAIRS, pairs=1, needs=1.1)
    said = words.reasons((pairs, busy), Rerun("without --quick", Why.FEW_PROCESS_PAIRS))
    assert said.endswith("; rerun without --quick") and said.count("rerun") == 1
    assert words.rerun(Rerun("", Why.BUSY_MACHINE)) == "rerun on a quieter machine"
    assert words.rerun(Rerun("--openssl-runs 3", Why.TOO_FEW_SAMPLES)) == (
        "rerun with --openssl-runs 3"
    )


def verdict(**over) -> schema.HwVerdict:
    fields = dict(
        scenario="hmac-sha1",
        runtime="erlang@25.2.3",
        call="crypto:macN(hmac, sha, Key, Data, 10)",
        call_id="macN",
        feature="sha",
        size=1000,
        verdict=Verdict.INCONCLUSIVE,
        speedup=2.31,
        speedup_ci95=(1.91, 4.07),
    )
    return schema.HwVerdict(**{**fields, **over})


def test_an_inconclusive_verdict_says_why_and_what_to_do_beside_its_ci():
    # "inconclusive, 2.31× (CI 1.91–4.07)": slower masked, clear of the
    # noise, yet no verdict; the reason says why (a busy machine needs 2×,
    # and 1.91 is below it) and what to do.
    busy = reason(Why.BUSY_MACHINE, others_cpus=1.6, cpus=2, needs=2.0)
    v = verdict(reasons=(busy,), rerun=Rerun("", Why.BUSY_MACHINE), margin=2.0)
    said = words.explanation(v, "Erlang crypto:macN(hmac, sha, Key, Data, 10)")
    assert said == (
        "Erlang crypto:macN(hmac, sha, Key, Data, 10), SHA extensions (SHA-NI / ARMv8 SHA):"
        " inconclusive at 1000 bytes: 2.31× slower without it (CI 1.91–4.07); the machine"
        " was busy (other processes used 1.6 of 2 CPUs): a verdict needs its CI above 2.00×;"
        " rerun on a quieter machine"
    )
    assert words.verdict_reason(v).endswith("rerun on a quieter machine")
    assert words.verdict_figure(v) == "2.31× slower without it (CI 1.91–4.07)"
    # The answer line says the reason and what to do apart.
    assert words.verdict_why(v) == (
        "the machine was busy (other processes used 1.6 of 2 CPUs): a verdict needs its CI"
        " above 2.00×",
        "rerun on a quieter machine",
    )
    host = reason(Why.BUSY_HOST, steal=0.05, needs=2.0)
    both = verdict(reasons=(busy, host), rerun=Rerun("", Why.BUSY_MACHINE), margin=2.0)
    said, _ = words.verdict_why(both)
    assert said.count("a verdict needs its CI above 2.00×") == 1, said


def test_a_report_from_before_the_reasons_keeps_its_sentence():
    stored = "Erlang crypto:macN(...), SHA extensions: inconclusive at 1000 bytes: noisy; rerun"
    v = verdict(explanation=stored)
    assert words.explanation(v, "Erlang crypto:macN(...)") == stored
    assert words.verdict_reason(v) == "noisy; rerun"
    said = stored.replace("noisy; rerun", "noisy; rerun on a quieter machine")
    assert words.verdict_why(verdict(explanation=said)) == ("noisy", "rerun on a quieter machine")


def test_a_used_verdict_at_a_small_size_says_where_the_gain_shows():
    fixed = reason(Why.FIXED_COST, speedup=1.22, best_size=16384, best_speedup=3.1, example=None)
    v = verdict(verdict=Verdict.USED, speedup=1.22, speedup_ci95=(1.18, 1.26), reasons=(fixed,))
    said = words.explanation(v, "Erlang crypto:macN")
    assert said.startswith("Erlang crypto:macN uses SHA extensions (SHA-NI / ARMv8 SHA): 1.22×")
    assert "fixed cost" in said and "16 KiB: 3.10×" in said
    plain = verdict(verdict=Verdict.USED, speedup=3.2, speedup_ci95=(3.1, 3.3), size=16384)
    assert words.explanation(plain, "openssl speed -evp sha256") == (
        "openssl speed -evp sha256 uses SHA extensions (SHA-NI / ARMv8 SHA): 3.20× slower"
        " without it at 16 KiB"
    )


def difference(**over) -> schema.Difference:
    fields = dict(
        scenario="sha256",
        size=16,
        hw=Hw.ON,
        against="first-named",
        runtime="erlang@25.2.3",
        call_id="hash",
        baseline_runtime="erlang@23.2.6",
        baseline_call_id="hash",
        ratio=2.09,
        ci95=(1.95, 2.20),
        verdict=Significance.SLOWER,
        rounds=5,
    )
    return schema.Difference(**{**fields, **over})


def test_a_difference_says_why_and_what_to_do():
    assert words.difference_why(difference()) == ("", "")
    few = difference(
        verdict=Significance.UNRESOLVED, reasons=(reason(Why.FEW_ROUNDS, rounds=1, need=3),)
    )
    said, todo = words.difference_why(few, quick=True)
    assert said.endswith("drift needs 3") and todo == "rerun without --quick"
    assert words.difference_why(few)[1] == "rerun with more --rounds"
    posted = difference(ci95=None, verdict=Significance.UNKNOWN, reasons=(reason(Why.NO_SAMPLES),))
    assert words.difference_why(posted) == ("as posted: no samples to tell", "")
    drift = reason(Why.ROUNDS_DISAGREE, agree=3, rounds=6)
    disagree = difference(verdict=Significance.NOISE, reasons=(drift,))
    assert words.is_drift(disagree) and words.difference_why(disagree)[1] == words.QUIETER
    # A report from before the reasons: its verdict and note.
    old = difference(verdict=Significance.NOISE, note="the CI clears the margin but...: drift")
    assert words.is_drift(old)
    assert words.difference_why(old) == ("the interleaved rounds disagree (drift)", words.QUIETER)


def upgrade(sizes, **over) -> schema.Upgrade:
    fields = dict(
        scenario="sha256",
        kind="erlang",
        call="crypto:hash(sha256, Data)",
        call_id="hash",
        hw=Hw.ON,
        old="erlang@23.2.6",
        new="erlang@25.2.3",
        old_version="OTP 23.2.6 on OpenSSL 1.1.1w",
        new_version="OTP 25.2.3 on OpenSSL 3.0.19",
        sizes=tuple(sizes),
    )
    return schema.Upgrade(**{**fields, **over})


def step(size, ratio, significance) -> schema.UpgradeSize:
    return schema.UpgradeSize(
        size, 1000.0, 1000.0 * ratio, ratio, (ratio - 0.05, ratio + 0.05), significance
    )


def test_an_upgrade_says_where_its_difference_lives():
    # The sizes are the versions answer's (bridge.view.answers), from the
    # differences; the cost model says per call or per byte.
    u = upgrade(
        [step(16, 2.09, Significance.SLOWER), step(16384, 0.19, Significance.FASTER)],
        delta_a_ns=640.0,
        delta_a_ci95=(600.0, 680.0),
        b_ratio=0.2,
        b_ratio_ci95=(0.18, 0.22),
        per_call=Change.MORE,
        per_byte=Change.LESS,
    )
    assert words.upgrade_split(u, "Erlang crypto:hash(sha256, Data)") == (
        "Erlang crypto:hash(sha256, Data): OTP 25.2.3 on OpenSSL 3.0.19 costs 640 ns more per"
        " call (95% CI +600 to +680) and 80% less per byte (0.20×) against OTP 23.2.6 on"
        " OpenSSL 1.1.1w."
    )


def test_warnings_of_one_kind_about_several_cells_are_one_line():
    def by_cpu(call_id: str) -> Reason:
        cell = dict(scenario="s", runtime="erlang@25", call_id=call_id, size=16, hw="on")
        return reason(Why.CELL_BY_CPU, **cell, unit="bytes", cpus=[[0, 100.0, 12], [1, 200.0, 12]])

    busy = reason(Why.STEAL, steal=0.05)
    block = schema.Noise(seconds=1.0, findings=(busy, *(by_cpu(c) for c in "abcd")))
    lines = words.noise_lines(block)
    assert len(lines) == 2 and lines[0].startswith("the hypervisor gave 5%")
    assert lines[1].startswith("samples differ by CPU in 4 cells (erlang@25 a at 16 B (hw on),")
    assert lines[1].endswith("and 1 more); -v says each")
    assert len(words.noise_lines(block, verbose=True)) == 5


def test_a_ci_bound_never_reads_as_the_margin_it_misses():
    # r2.json (quiet EPYC): CI 1.0472-1.4729 against a 1.05 margin read
    # "(CI 1.05-1.47) - the CI reaches both sides of the 1.05x".
    assert words.ci_text(1.0472, 1.4729, (1.05,)) == "CI 1.047–1.47"
    assert words.ci_text(1.0472, 1.4729) == "CI 1.05–1.47"
    assert words.bound(1.05, (1.05,)) == "1.05"  # on the margin exactly
    assert words.bound(1.04999, (1.05,)) == "1.0500"  # four decimals at most
    assert words.bound(1.1049, (1.05, 1.10)) == "1.105"
    assert words.bound(1.1049, (1.05,)) == "1.10"
