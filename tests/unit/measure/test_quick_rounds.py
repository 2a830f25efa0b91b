"""--quick's rounds (bridge.settings.QUICK): one sample a round for the
hardware twins, while level cells (--concurrency) keep 12 batches."""

from __future__ import annotations

import dataclasses

import pytest

from bridge.settings import DEFAULT, QUICK, QUICK_LEVEL_ROUNDS, level_round


def test_quick_takes_one_sample_a_round():
    assert QUICK.rounds == QUICK.samples
    assert {QUICK.samples_in_round(r) for r in range(QUICK.rounds)} == {1}


def test_level_cells_keep_twelve_rounds_under_quick():
    levels = QUICK.for_levels()
    assert levels.rounds == QUICK_LEVEL_ROUNDS == 12
    assert sum(levels.samples_in_round(j) for j in range(levels.rounds)) == QUICK.samples
    # Without --quick, or with as few rounds, a level cell takes every round.
    assert DEFAULT.for_levels() is DEFAULT
    four = dataclasses.replace(QUICK, rounds=4)
    assert four.for_levels() is four


@pytest.mark.parametrize("rounds, level_rounds", [(24, 12), (30, 12), (20, 20), (4, 4), (13, 12)])
def test_each_level_round_runs_once_in_order_and_the_last_ends_the_run(rounds, level_rounds):
    found = [level_round(r, rounds, level_rounds) for r in range(rounds)]
    ran = [j for j in found if j is not None]
    assert ran == list(range(level_rounds))
    assert found[-1] == level_rounds - 1


def test_under_quick_a_level_batch_ends_every_second_round():
    found = [level_round(r, 24, 12) for r in range(24)]
    assert found[0::2] == [None] * 12 and found[1::2] == list(range(12))
