"""bench/busy.py's reading of reports and its tables, on fixed JSON: the
harness that counts verdicts beside CPU hogs (issue 35)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_busy", ROOT / "bench" / "busy.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_busy"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules["bench_busy"]


def runtime(id_, kind, version, hw="on"):
    return {"id": id_, "kind": kind, "version": version, "hw": hw}


def difference(runtime_, baseline, verdict, size=64, ratio=0.4, ci=(0.31, 0.70)):
    return {
        "scenario": "sha256",
        "size": size,
        "hw": "on",
        "against": "first-named",
        "runtime": runtime_,
        "call_id": "hash",
        "baseline_runtime": baseline,
        "baseline_call_id": "hash",
        "ratio": ratio,
        "ci95": list(ci) if ci else None,
        "verdict": verdict,
    }


def verdict(runtime_, call, size, word):
    return {"runtime": runtime_, "call_id": call, "size": size, "verdict": word}


SAME_OTP = {
    "runtimes": [
        runtime("erlang@25.2.3", "erlang", "OTP 25.2.3"),
        runtime("erlang@25.2.3", "erlang", "OTP 25.2.3", "off"),
        runtime("erlang@25.2.3#2", "erlang", "OTP 25.2.3"),
        runtime("erlang@23.2.6", "erlang", "OTP 23.2.6"),
        runtime("python@3.11.7", "python", "Python 3.11.7"),
    ],
    "verdicts": [
        verdict("erlang@25.2.3", "hash", 64, "inconclusive"),
        verdict("erlang@25.2.3", "hash", 16384, "used"),
        verdict("erlang@25.2.3#2", "hash", 16384, "used"),
        verdict("python@3.11.7", "hashlib", 16384, "cpu-lacks"),
    ],
    "differences": [
        difference("erlang@25.2.3#2", "erlang@25.2.3", "faster"),
        difference("erlang@25.2.3#2", "erlang@25.2.3", "within noise", size=1024, ci=None),
        # Another version, and another kind: not comparisons of identical versions.
        difference("erlang@23.2.6", "erlang@25.2.3", "slower"),
        difference("python@3.11.7", "erlang@25.2.3", "slower"),
    ],
    "noise": {"others_cpus": 1.7, "steal": 0.0},
}


def test_a_report_gives_its_verdicts_and_its_identical_versions_comparisons(bench):
    verdicts, same = bench.read_report(SAME_OTP)
    assert [(v.runtime, v.size, v.verdict) for v in verdicts] == [
        ("erlang@25.2.3", 64, "inconclusive"),
        ("erlang@25.2.3", 16384, "used"),
        ("erlang@25.2.3#2", 16384, "used"),
        ("python@3.11.7", 16384, "cpu-lacks"),
    ]
    assert [(c.runtime, c.baseline, c.size, c.sig) for c in same] == [
        ("erlang@25.2.3#2", "erlang@25.2.3", 64, True),
        ("erlang@25.2.3#2", "erlang@25.2.3", 1024, False),
    ]
    assert same[0].ci95 == (0.31, 0.70) and same[1].ci95 is None


def test_a_report_without_verdicts_or_differences_gives_none(bench):
    assert bench.read_report({"runtimes": [], "results": []}) == ((), ())


def runs(bench):
    verdicts, same = bench.read_report(SAME_OTP)
    hmac = (
        bench.Verdict("erlang@25.2.3", "macN", 1000, "used"),
        bench.Verdict("python@3.11.7", "hmac.digest", 1000, "inconclusive"),
    )
    return [
        bench.Run("hmac-sha1", 1, 9.1, 9.6, 30.0, 1.8, 0.0, hmac),
        bench.Run("same-otp", 1, 9.6, 10.2, 60.0, 1.7, 0.0, verdicts, same),
        bench.Run("hmac-sha1", 2, 10.2, 9.4, 31.0, 1.6, 0.01, hmac[:1]),
        bench.Run("same-otp", 2, 9.4, 9.0, 62.0, error="bridge: error: no OTP 25 found"),
    ]


def test_the_verdict_table_counts_by_command_runtime_and_call(bench):
    lines = bench.verdict_table(runs(bench), ["hmac-sha1", "same-otp"])
    assert lines[:2] == [
        "| command | runs | load | others' CPUs | steal | runtime and call | used | not-used"
        " | inconclusive | other |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    assert lines[2:] == [
        "| hmac-sha1 | 2 | 9.1-10.2 | 1.7 | 0-1% | erlang@25.2.3 macN | 2 | 0 | 0 | 0 |",
        "|  |  |  |  |  | python@3.11.7 hmac.digest | 0 | 0 | 1 | 0 |",
        "| same-otp | 1 (1 failed) | 9.6-10.2 | 1.7 | 0% | erlang@25.2.3 hash | 1 | 0 | 1 | 0 |",
        "|  |  |  |  |  | erlang@25.2.3#2 hash | 1 | 0 | 0 | 0 |",
        "|  |  |  |  |  | python@3.11.7 hashlib | 0 | 0 | 0 | 1 |",
    ]
    assert all(line.count("|") == 11 for line in lines)


def test_a_command_can_be_run_its_own_number_of_times(bench):
    assert bench._repeats(["hmac-sha1:5", "sha512:10", "sha256"], 3) == {
        "hmac-sha1": 5,
        "sha512": 10,
        "sha256": 3,
    }
    with pytest.raises(ValueError, match="sha512:0"):
        bench._repeats(["sha512:0"], 3)


def test_the_comparison_table_names_each_sig(bench):
    assert bench.comparison_table(runs(bench)) == [
        "| command | comparisons | sig | the sig ones (run: runtime against baseline, call,"
        " size, hw: ratio, CI) |",
        "|---|---|---|---|",
        "| same-otp | 2 | 1 | 1: erlang@25.2.3#2 against erlang@25.2.3, hash, 64 B, hw on:"
        " 0.40× faster (CI 0.31-0.70) |",
    ]
    assert bench.comparison_table(runs(bench)[:1]) == []


def test_the_page_block_has_the_machine_the_tables_and_the_failures(bench):
    setup = {"machine": "AMD EPYC, 2 CPUs", "hogs": "2 × stress-ng --cpu"}
    text = bench.markdown(runs(bench), setup, ["hmac-sha1", "same-otp"])
    assert text.startswith("- machine: AMD EPYC, 2 CPUs\n- hogs: 2 × stress-ng --cpu\n\n| command")
    assert "Comparisons between identical versions:" in text
    assert text.endswith("- same-otp run 2 failed: bridge: error: no OTP 25 found\n")


def test_the_commands_are_the_issues(bench):
    found = {c.name: c for c in bench.commands("otp:25", "/usr/lib/erlang/bin/erl")}
    assert list(found) == ["hmac-sha1", "sha256", "sha512", "chacha20-poly1305", "same-otp"]
    assert all(c.argv[0] == "run" and "--quick" in c.argv for c in found.values())
    assert {n for n, c in found.items() if c.control} == {"sha512", "chacha20-poly1305"}
    assert found["same-otp"].argv[-4:] == ("--erl", "otp:25", "--erl", "/usr/lib/erlang/bin/erl")
