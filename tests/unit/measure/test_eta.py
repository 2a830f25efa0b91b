"""The ETA on the progress line (bridge.measure.eta), with a scripted clock."""

from __future__ import annotations

import pytest

from bridge.measure.eta import Eta, clock_text, duration, progress_line, status


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_plan_is_scaled_by_how_long_the_finished_part_took():
    clock = Clock()
    eta = Eta(planned_s=100.0, clock=clock)
    assert eta.text() == ""  # nothing finished yet: nothing to go by
    eta.finished(10.0)
    clock.now = 20.0  # the first tenth took twice its plan
    assert eta.left_s(clock.now) == pytest.approx(180.0)
    assert eta.text() == " - about 3 min left"
    eta.finished(40.0)
    clock.now = 60.0  # half done in 60 s
    assert eta.text() == " - about 1 min left"


def test_short_runs_and_the_first_seconds_say_nothing():
    clock = Clock()
    eta = Eta(planned_s=3.0, clock=clock)
    eta.finished(1.0)
    clock.now = 1.0
    assert eta.text() == ""  # a 3 s run needs no ETA
    long = Eta(planned_s=100.0, clock=clock)
    long.finished(1.0)
    clock.now = 2.5
    assert long.text() == ""  # under 2 s into it: too early to say (1.5 s in)


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
    assert first.fraction == 0.0 and first.left_s is None
    eta.finished(25.0)
    clock.now = 30.0
    later = status(eta, "round 2/4")
    assert later.fraction == 0.25 and later.elapsed_s == 30.0
    assert later.left_s == pytest.approx(90.0)


@pytest.mark.parametrize("width", [20, 40, 80, 200])
def test_the_progress_line_fits_the_terminal(width):
    message = "round 3/4 [python@3.11.7] hmac-sha1 hmac.new+copy 1000 B (5/8) " + "x" * 100
    line = progress_line(message, width, 75.0, 0.4, 95.0)
    assert len(line) <= width - 3  # room for the "^C" a terminal echoes on Ctrl-C
    if width >= 80:
        assert line.startswith("[########------------]  40% 1:15 ETA 1:35 round 3/4")
        assert line.endswith("...")
    assert (
        progress_line("starting erlang@25.2.3", 80, 2.0, None, None)
        == "0:02 starting erlang@25.2.3"
    )
    assert "ETA -:--" in progress_line("round 1/4", 80, 1.0, 0.0, None)


def test_clock_text():
    assert [clock_text(s) for s in (0, 7.4, 80, 3723)] == ["0:00", "0:07", "1:20", "1:02:03"]
