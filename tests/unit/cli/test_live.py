"""--progress: what auto chooses, and which messages a plain line prints."""

from __future__ import annotations

import pytest

from bridge.cli import live
from bridge.cli.live import ProgressMode
from bridge.measure.eta import Eta, Step, status

AUTO = ProgressMode.AUTO


@pytest.mark.parametrize(
    ("quiet", "tty", "env", "expected"),
    [
        (False, True, {}, ProgressMode.BAR),
        (False, False, {}, ProgressMode.LINES),  # a pipe, a file, ssh without a tty
        (False, True, {"CI": "true"}, ProgressMode.LINES),
        (False, True, {"TERM": "dumb"}, ProgressMode.LINES),
        (True, True, {}, ProgressMode.OFF),  # -q: the answer alone
        (True, False, {"CI": "true"}, ProgressMode.OFF),
    ],
)
def test_auto_chooses_by_the_terminal_ci_and_quiet(quiet, tty, env, expected):
    assert live.chosen(AUTO, quiet, tty, env) is expected


def test_an_explicit_mode_is_kept():
    for mode in (ProgressMode.BAR, ProgressMode.LINES, ProgressMode.OFF):
        assert live.chosen(mode, True, False, {"CI": "true"}) is mode


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_say_starts_and_rounds_and_a_batch_only_after_a_silence(capsys):
    clock = Clock()
    show = live.Progress(ProgressMode.LINES, clock)
    eta = Eta(10.0, clock)
    show(status(None, "starting erl", Step.START))
    show(status(eta, "round 1/4 [python@3.11.7] hmac-sha1 hmac.digest 1000 B (1/8)"))
    clock.now = 4.0
    eta.finished(2.0)
    show(status(eta, "round 1/4 of hmac-sha1 done (8 cells)", Step.ROUND))
    clock.now = 13.0
    show(status(eta, "round 2/4 [erlang@25.2.3] hmac-sha1 macN 1000 B (5/8)"))  # 9 s after
    clock.now = 14.5
    show(status(eta, "round 2/4 [erlang@25.2.3 off] hmac-sha1 macN 1000 B (6/8)"))  # 10.5 s
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "0:00 starting erl",
        " 20% 0:04 ETA 0:11 round 1/4 of hmac-sha1 done (8 cells)",
        " 20% 0:14 ETA 0:28 round 2/4 [erlang@25.2.3 off] hmac-sha1 macN 1000 B (6/8)",
    ]
    assert "\r" not in err and "\x1b" not in err
    show.clear()  # nothing to take off the screen
    assert capsys.readouterr().err == ""


def test_off_prints_nothing(capsys):
    show = live.Progress(ProgressMode.OFF)
    show(status(None, "starting erl", Step.START))
    assert not show.shown and capsys.readouterr().err == ""
