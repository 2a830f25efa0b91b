"""Bringing up the line-up (bridge.measure.startup): runtimes launched in waves and
committed in line-up order, and twins launched beside their partners when a
past run knew their mask, with the guess checked before the twin is used."""

from __future__ import annotations

import json

import pytest

from bridge.errors import BridgeWarning
from bridge.measure.twins import TwinGuesses
from tests.session.fake import Log, Script, unavailable
from tests.session.test_session import ERL, PY, plan, run

MASK = {"OPENSSL_ia32cap": ":~0x20000000"}


def ids_and_hw(outcome):
    return [(rt.id, rt.hw) for rt in outcome.report.runtimes]


def test_every_runtime_as_found_is_launched_before_any_is_waited_for():
    _, log = run(plan(hw="both"), [PY, ERL])
    kinds = [(e[0], e[1], e[2]) for e in log.events if e[0] in ("launch", "start")]
    # Both as found boot side by side, then both twins (their masks needed
    # the partner's library).
    assert kinds == [
        ("launch", "python", "on"),
        ("launch", "erlang", "on"),
        ("start", "python", "on"),
        ("start", "erlang", "on"),
        ("launch", "python", "off"),
        ("launch", "erlang", "off"),
        ("start", "python", "off"),
        ("start", "erlang", "off"),
    ]


def test_the_report_lists_runtimes_in_line_up_order_whatever_booted_first():
    outcome, _ = run(plan(hw="both"), [PY, ERL])
    assert ids_and_hw(outcome) == [
        ("python@3.11.0", "on"),
        ("python@3.11.0", "off"),
        ("erlang@25.2.3", "on"),
        ("erlang@25.2.3", "off"),
    ]
    cells = [(r.runtime, r.hw) for r in outcome.report.results]
    assert cells == sorted(cells, key=ids_and_hw(outcome).index)


def test_a_run_keeps_each_twins_mask_for_the_next():
    guesses = TwinGuesses()
    run(plan(hw="both"), [PY], guesses=guesses)
    assert guesses.get(json.dumps(["python", "fake python", ["sha"]])) == MASK


def test_a_known_twin_is_launched_beside_its_partner_and_the_report_is_the_same():
    guesses = TwinGuesses()
    first, _ = run(plan(hw="both"), [PY, ERL], guesses=guesses)
    again, log = run(plan(hw="both"), [PY, ERL], guesses=guesses)
    launches = [(e[1], e[2]) for e in log.of("launch")]
    assert launches[:4] == [
        ("python", "on"),
        ("python", "off"),
        ("erlang", "on"),
        ("erlang", "off"),
    ]
    starts = [e for e in log.events if e[0] in ("launch", "start")]
    assert starts.index(("launch", "erlang", "off", MASK)) < starts.index(
        ("start", "python", "on", {})
    )
    assert len(log.of("launch")) == 4 and len(log.of("stop")) == 4  # nothing wasted
    assert ids_and_hw(again) == ids_and_hw(first)
    assert [v.to_json() for v in again.report.verdicts] == [
        v.to_json() for v in first.report.verdicts
    ]


def test_a_wrong_guess_is_stopped_unused_and_the_right_twin_started():
    guesses = TwinGuesses()
    run(plan(hw="both"), [PY], guesses=guesses)
    key = json.dumps(["python", "fake python", ["sha"]])
    guesses.put(key, {"OPENSSL_ia32cap": ":~0x4"})  # a stale mask (another library)
    outcome, log = run(plan(hw="both"), [PY], guesses=guesses)
    started = [e[3] for e in log.of("start") if e[2] == "off"]
    assert started == [MASK]  # the wrong one was launched, never used
    assert ("launch", "python", "off", {"OPENSSL_ia32cap": ":~0x4"}) in log.events
    assert len(log.of("stop")) == 3  # the as-found, the wrong guess, the right twin
    assert [rt.details.env for rt in outcome.report.runtimes if rt.hw == "off"] == [MASK]
    assert guesses.get(key) == MASK


def test_a_guess_whose_partner_cannot_start_is_stopped():
    guesses = TwinGuesses()
    guesses.put(json.dumps(["python", "fake python", ["sha"]]), MASK)
    broken = Script(kind="python", start_error=unavailable("no python3"))
    log = Log()
    outcome, _ = run(plan(hw="both"), [broken], log=log, guesses=guesses)
    assert [s.reason for s in outcome.report.skipped] == ["no python3"]
    assert ("launch", "python", "off", MASK) in log.events
    assert [e[2] for e in log.of("stop")] == ["off"] and not outcome.report.runtimes


def test_a_cache_file_that_is_not_json_is_no_guess(tmp_path):
    path = tmp_path / "twins.json"
    path.write_text("{not json")
    with pytest.warns(BridgeWarning, match="not JSON.*discarding the twins' cache"):
        guesses = TwinGuesses(path)
    assert guesses.get("anything") is None
    guesses.put("k", MASK)
    guesses.save()
    assert TwinGuesses(path).get("k") == MASK


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    guesses = TwinGuesses(blocked / "twins.json")  # its parent is a file
    guesses.put("k", MASK)
    guesses.save()
    assert guesses.get("k") == MASK


def test_only_a_capability_mask_is_ever_taken_from_the_cache(tmp_path):
    """The guessed mask becomes a process's environment: any other variable,
    or a value that is not a mask, is no guess at all."""
    path = tmp_path / "twins.json"
    path.write_text(
        json.dumps(
            {
                "preload": {"LD_PRELOAD": "/tmp/x.so"},
                "mixed": {"OPENSSL_ia32cap": ":~0x20000000", "PATH": "/tmp"},
                "not-a-mask": {"OPENSSL_ia32cap": "$(rm -rf ~)"},
                "list": [1, 2],
                "ok": MASK,
                "arm": {"OPENSSL_armcap": "0x3d"},
            }
        )
    )
    with pytest.warns(BridgeWarning, match="preload' \\(and 3 more\\); dropped"):
        guesses = TwinGuesses(path)
    assert [k for k in ("preload", "mixed", "not-a-mask", "list") if guesses.get(k)] == []
    assert guesses.get("ok") == MASK and guesses.get("arm") == {"OPENSSL_armcap": "0x3d"}
