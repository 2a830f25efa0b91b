"""The order of a round's cells (bridge.measure.session.compared_together):
the cells that are compared with each other (the versions of one runtime
kind, a cell and its masked twin) run side by side, and which runs first
turns from round to round, so that every comparison is judged on batches
taken moments apart and no side always runs first."""

from __future__ import annotations

import itertools
from collections import Counter

from bridge.report.hw import Hw
from bridge.settings import Settings
from tests.session.fake import Log, Script
from tests.session.test_session import mac_scenario, plan, run

ERLANG_ONLY = mac_scenario(sizes=[64, 1000], calls={"erlang": ["macN"]})


def erlangs(*versions: str) -> list[Script]:
    return [Script(kind="erlang", version=v) for v in versions]


def rounds_of(log: Log) -> dict[int, list[tuple[str, str, int]]]:
    """Per round, its batches in order: (runtime, hw, size)."""
    out: dict[int, list] = {}
    for e in log.of("bench"):
        out.setdefault(e[5].round, []).append((e[1], e[2], e[4]))
    return out


def runtime_order(batches: list[tuple[str, str, int]], size: int) -> list[str]:
    """The runtimes of one size's batches, a twin pair counted once."""
    pairs = [b for b in batches if b[2] == size]
    assert len(pairs) % 2 == 0
    twins = [pairs[i : i + 2] for i in range(0, len(pairs), 2)]
    # A cell's masked twin right beside it: hw on first on even rounds.
    assert all(a[0] == b[0] and {a[1], b[1]} == {Hw.ON, Hw.OFF} for a, b in twins), pairs
    return [a[0] for a, _ in twins]


def test_two_versions_run_side_by_side_abba_with_their_twins_beside_them():
    settings = Settings(warmup_ms=7, rewarm_ms=3, sample_ms=1, samples=8, rounds=4)
    _, log = run(plan(ERLANG_ONLY, hw="both", settings=settings), erlangs("23.2.6", "25.2.3"))
    rounds = rounds_of(log)
    a, b = "erlang@23.2.6", "erlang@25.2.3"
    for r, batches in rounds.items():
        # One size's four cells together, then the other's.
        assert [size for *_, size in batches] == [64] * 4 + [1000] * 4, batches
        for size in (64, 1000):
            first = [x for x in batches if x[2] == size][0]
            assert first[1] == (Hw.OFF if r % 2 else Hw.ON)
    orders = [runtime_order(rounds[r], 64) for r in range(4)]
    assert orders == [[a, b], [b, a], [b, a], [a, b]]  # ABBA


def test_three_versions_turn_so_each_pair_is_adjacent_alike():
    settings = Settings(warmup_ms=7, rewarm_ms=3, sample_ms=1, samples=6, rounds=6)
    versions = ("23.2.6", "24.3.4", "25.2.3")
    _, log = run(plan(ERLANG_ONLY, hw="both", settings=settings), erlangs(*versions))
    rounds = rounds_of(log)
    ids = [f"erlang@{v}" for v in versions]
    orders = [runtime_order(rounds[r], size) for r in range(6) for size in (64, 1000)]
    # Six rounds: every order of the three once (at each size); each runtime
    # first twice, and each ordered pair side by side in two rounds.
    assert sorted(map(tuple, orders[::2])) == sorted(itertools.permutations(ids))
    assert Counter(o[0] for o in orders[::2]) == {i: 2 for i in ids}
    adjacent = Counter((o[i], o[i + 1]) for o in orders[::2] for i in range(2))
    assert adjacent == {p: 2 for p in itertools.permutations(ids, 2)}
    # Both sizes turn alike, each size's cells together.
    assert orders[::2] == orders[1::2]
    for batches in rounds.values():
        assert [size for *_, size in batches] == [64] * 6 + [1000] * 6


def test_until_stable_rounds_turn_as_the_planned_ones_do():
    # Two versions, each noisy (a new level every batch): --until-stable adds
    # rounds, and their order keeps turning, AB then BA, with the twins.
    noisy = [
        Script(kind="erlang", version=v, per_op_ns=lambda job, hw, n: 1000.0 * (1 + n % 5))
        for v in ("23.2.6", "25.2.3")
    ]
    ticks = iter(range(0, 1000, 10))
    settings = Settings(
        warmup_ms=1, sample_ms=1, samples=2, rounds=2, until_stable=0.02, max_seconds=55
    )
    scenario = mac_scenario(sizes=[64], calls={"erlang": ["macN"]})
    _, log = run(plan(scenario, hw="both", settings=settings), noisy, clock=lambda: next(ticks))
    batches = [(e[1], e[2], e[4]) for e in log.of("bench")]
    extra = [batches[i : i + 4] for i in range(8, len(batches) - 3, 4)]
    assert len(extra) >= 2
    a, b = "erlang@23.2.6", "erlang@25.2.3"
    # Extra round k is round 2 + k - 1 of the order: BA (forwards), AB (backwards), ...
    assert [runtime_order(x, 64) for x in extra[:2]] == [[b, a], [a, b]]
    assert extra[1][0][1] == Hw.OFF


def test_openssl_runs_spread_over_rounds_turn_their_twin_order_run_by_run():
    # 5 openssl runs over 50 rounds land in rounds 9, 19, 29, 39 and 49, all
    # odd: by the round, the masked twin would run first in every pair.
    settings = Settings(
        warmup_ms=1, rewarm_ms=1, sample_ms=1, samples=50, rounds=50, openssl_runs=5
    )
    scenario = mac_scenario(sizes=[64], calls={"openssl": ["speed"]})
    _, log = run(plan(scenario, hw="both", settings=settings), [Script(kind="openssl")])
    rounds = rounds_of(log)
    assert sorted(rounds) == [0, 1, 2, 3, 4]  # the cell's own batches, one a run
    firsts = [rounds[k][0][1] for k in sorted(rounds)]
    assert all(len(rounds[k]) == 2 for k in rounds)
    assert firsts == [Hw.ON, Hw.OFF, Hw.ON, Hw.OFF, Hw.ON]
