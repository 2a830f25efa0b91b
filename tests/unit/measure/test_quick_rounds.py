"""Rounds of one or two samples (bridge.settings QUICK and DEFAULT) for the
paired cells, while level cells (--concurrency) keep 20 batches (12 under
--quick)."""

from __future__ import annotations

import dataclasses

import pytest

from bridge.settings import DEFAULT, LEVEL_ROUNDS, QUICK, QUICK_LEVEL_ROUNDS, level_round


@pytest.mark.parametrize(
    "settings, per_round", [(DEFAULT, 2), (QUICK, 1)], ids=["default", "quick"]
)
def test_a_run_takes_one_or_two_samples_a_round(settings, per_round):
    assert settings.rounds * per_round == settings.samples
    assert {settings.samples_in_round(r) for r in range(settings.rounds)} == {per_round}


def test_level_cells_keep_twelve_rounds_under_quick():
    levels = QUICK.for_levels()
    assert levels.rounds == QUICK_LEVEL_ROUNDS == 12
    assert sum(levels.samples_in_round(j) for j in range(levels.rounds)) == QUICK.samples
    # With as few rounds, a level cell takes every round.
    four = dataclasses.replace(QUICK, rounds=4)
    assert four.for_levels() is four


def test_level_cells_keep_twenty_rounds_by_default():
    levels = DEFAULT.for_levels()
    assert levels.rounds == LEVEL_ROUNDS == 20
    # Each level round keeps its share of the windows: five of the 100.
    assert {levels.samples_in_round(j) for j in range(levels.rounds)} == {5}
    assert dataclasses.replace(levels, rounds=DEFAULT.rounds) == DEFAULT
    ten = dataclasses.replace(DEFAULT, rounds=10)
    assert ten.for_levels() is ten


@pytest.mark.parametrize(
    "rounds, level_rounds", [(24, 12), (30, 12), (20, 20), (4, 4), (13, 12), (100, 20), (50, 20)]
)
def test_each_level_round_runs_once_in_order_and_the_last_ends_the_run(rounds, level_rounds):
    found = [level_round(r, rounds, level_rounds) for r in range(rounds)]
    ran = [j for j in found if j is not None]
    assert ran == list(range(level_rounds))
    assert found[-1] == level_rounds - 1


def test_under_quick_a_level_batch_ends_every_second_round():
    found = [level_round(r, 24, 12) for r in range(24)]
    assert found[0::2] == [None] * 12 and found[1::2] == list(range(12))
