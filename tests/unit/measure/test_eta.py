"""The ETA on the progress line (bridge.measure.eta), with a scripted clock."""

from __future__ import annotations

import pytest

from bridge.measure.eta import (
    PRIOR_S,
    CellNote,
    Eta,
    Step,
    clock_text,
    duration,
    plain_line,
    progress_line,
    short_runtime,
    status,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_plan_is_the_estimate_until_the_run_shows_its_pace():
    clock = Clock()
    eta = Eta(planned_s=100.0, clock=clock)
    assert eta.left_s(0.0) == pytest.approx(100.0)  # nothing finished: the plan itself
    eta.finished(10.0)
    clock.now = 20.0  # the first tenth took twice its plan
    # pace (20 + 3) / (10 + 3): drawn towards the plan by PRIOR_S
    assert eta.left_s(clock.now) == pytest.approx(90.0 * (20 + PRIOR_S) / (10 + PRIOR_S))
    eta.finished(40.0)
    clock.now = 100.0  # half done in 100 s: the pace is now mostly the run's own
    assert eta.left_s(clock.now) == pytest.approx(50.0 * 103 / 53)
    assert 90 < eta.left_s(clock.now) < 100


def test_when_everything_is_done_nothing_is_left():
    clock = Clock()
    eta = Eta(planned_s=10.0, clock=clock)
    eta.finished(12.0)
    clock.now = 30.0
    assert eta.left_s(clock.now) == 0.0


def test_durations_read_like_a_person_would_say_them():
    assert [duration(s) for s in (0.4, 8, 45, 60, 80, 599, 612, 3600, 7500)] == [
        "0 s",
        "8 s",
        "45 s",
        "1 min",
        "1 min 20 s",
        "9 min 59 s",
        "10 min 10 s",
        "1 h",
        "2 h 5 min",
    ]


# -- the progress line ---------------------------------------------------------


def test_a_status_carries_the_share_done_and_the_time_left():
    clock = Clock()
    eta = Eta(planned_s=100.0, clock=clock)
    first = status(eta, "round 1/4 [erlang@25.2.3] hmac-sha1 macN 1000 B (1/8)")
    assert first == "round 1/4 [erlang@25.2.3] hmac-sha1 macN 1000 B (1/8)"  # still the text
    assert first.fraction == 0.0 and first.left_s == pytest.approx(100.0)
    assert first.step is Step.CELL
    eta.finished(25.0)
    clock.now = 30.0
    later = status(eta, "round 2/4 of hmac-sha1 done", Step.ROUND)
    assert later.fraction == 0.25 and later.elapsed_s == 30.0 and later.step is Step.ROUND
    assert later.left_s == pytest.approx(75.0 * 33 / 28)
    # Without an ETA (no progress shown), no clock read and no figures.
    bare = status(None, "starting python", Step.START)
    assert bare == "starting python" and bare.fraction is None and bare.left_s is None


NOTE = CellNote(
    round="round 3/4",
    runtime="erlang@25.2.3",
    masked=True,
    scenario="hmac-sha1",
    call="hmac.new+copy",
    size="1000 B",
    index=5,
    total=8,
)


@pytest.mark.parametrize("width", [20, 40, 60, 80, 200])
def test_the_progress_line_fits_the_terminal(width):
    message = "round 3/4 [python@3.11.7] hmac-sha1 hmac.new+copy 1000 B (5/8) " + "x" * 100
    line = progress_line(message, width, 75.0, 0.4, 95.0)
    assert len(line) <= width - 3  # room for the "^C" a terminal echoes on Ctrl-C
    if width == 80:
        assert line.startswith("[####------]  40% 1:15 ETA 1:35 round 3/4")
    if width == 200:  # room for a wider bar
        assert line.startswith("[########------------]  40% 1:15 ETA 1:35 round 3/4")
    if width >= 80:
        assert line.endswith("...")
    cell = progress_line(status(None, NOTE.text(), Step.CELL, NOTE), width, 75.0, 0.4, 95.0)
    assert len(cell) <= width - 3
    assert (
        progress_line("starting erlang@25.2.3", 80, 2.0, None, None)
        == "0:02 starting erlang@25.2.3"
    )
    assert "ETA -:--" in progress_line("round 1/4", 80, 1.0, 0.0, None)


def test_at_80_columns_a_cell_keeps_its_call_and_shortens_its_runtime():
    message = status(None, NOTE.text(), Step.CELL, NOTE)
    assert message == "round 3/4 [erlang@25.2.3 off] hmac-sha1 hmac.new+copy 1000 B (5/8)"
    line = progress_line(message, 80, 75.0, 0.4, 95.0)
    # The round and the runtime shortened, the scenario left to the round's own line.
    assert line == "[####------]  40% 1:15 ETA 1:35 r3/4 [erl25.2.3 off] hmac.new+copy 1000 B"
    roomier = progress_line(message, 90, 75.0, 0.4, 95.0)
    assert roomier.endswith("r3/4 [erlang@25.2.3 off] hmac-sha1 hmac.new+copy 1000 B")
    wide = progress_line(message, 120, 75.0, 0.4, 95.0)
    assert wide.endswith("round 3/4 [erlang@25.2.3 off] hmac-sha1 hmac.new+copy 1000 B (5/8)")
    assert [short_runtime(r) for r in ("python@3.11.7", "openssl@3.0.19#2", "app@host")] == [
        "py3.11.7",
        "ossl3.0.19#2",
        "app@host",
    ]


def test_a_plain_line_has_no_bar_and_no_escape():
    line = plain_line("round 2/4 of hmac-sha1 done (8 cells)", 3.0, 0.5, 4.2)
    assert line == " 50% 0:03 ETA 0:04 round 2/4 of hmac-sha1 done (8 cells)"
    assert plain_line("starting python", 0.4, None, None) == "0:00 starting python"


def test_clock_text():
    assert [clock_text(s) for s in (0, 7.4, 80, 3723)] == ["0:00", "0:07", "1:20", "1:02:03"]
