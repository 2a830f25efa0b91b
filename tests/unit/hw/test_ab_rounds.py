"""Which of the twins' interleaved rounds a hardware verdict compares
(bridge.hw.ab._rounds_that_ran): not those in which a twin waited for a CPU
much more than in its other rounds; how far apart the twins' waits are in
the rounds it keeps, and what that asks of a verdict (ab._waited_rounds);
and a cell with too few rounds left is judged whole."""

from __future__ import annotations

import pytest

from bridge.hw import ab
from bridge.report import schema
from bridge.report.findings import Why, reason
from bridge.report.hw import Hw

WINDOW = 2_000_000  # ns: a 2-ms sample window
ROUNDS = 6  # two samples a round


def _cell(hw: Hw, waits: list[float]) -> schema.Result:
    """A cell whose round i waited waits[i] of each of its two windows."""
    wait_ns = tuple(round(w * WINDOW) for w in waits for _ in range(2))
    return schema.Result(
        scenario="chacha",
        runtime="erlang@25",
        call="crypto:crypto_one_time_aead(...)",
        call_id="crypto_one_time",
        api="crypto:crypto_one_time_aead/7",
        semantics="one-shot",
        algorithm="chacha20-poly1305",
        size=16384,
        samples=(WINDOW,) * len(wait_ns),
        loops=400,
        output_hex="00",
        hw=hw,
        sample_cpus=(0,) * len(wait_ns),
        sample_cpu_ns=(WINDOW,) * len(wait_ns),
        sample_wait_ns=wait_ns,
    )


def _rounds(r: schema.Result) -> dict[int, list[float]]:
    per_op = r.per_op_ns()
    return {i: per_op[2 * i : 2 * i + 2] for i in range(ROUNDS)}


def _ran(on_waits, off_waits):
    on, off = _cell(Hw.ON, on_waits), _cell(Hw.OFF, off_waits)
    return ab._rounds_that_ran(on, off, (_rounds(on), _rounds(off)), 0.05)


def test_rounds_in_which_a_twin_waited_more_than_usual_are_left_out():
    # Round 0: the spare processes start beside the masked twin.
    kept, left_out, usual, apart = _ran([0.02] * 6, [0.40, 0.02, 0.03, 0.02, 0.02, 0.02])
    assert sorted(kept[0]) == sorted(kept[1]) == [1, 2, 3, 4, 5]
    assert left_out == 1 and usual == pytest.approx(0.02) and apart == pytest.approx(0.0)


def test_twins_that_waited_unlike_are_said_to():
    # The masked twin waited 6-8% in every round, its partner 2-3%: its usual
    # rounds, all kept, but 5 points apart.
    kept, left_out, usual, apart = _ran([0.02, 0.03] * 3, [0.07, 0.08, 0.07, 0.08, 0.06, 0.08])
    assert len(kept[0]) == 6 and left_out == 0
    assert usual == pytest.approx(0.075) and apart == pytest.approx(0.05)
    busy, unlike = ab._waited_rounds(usual, apart)
    assert busy == () and unlike == reason(Why.TWINS_WAITED_APART, points=5.0, needs=1.1)
    # Alike, however much, below the busy share: nothing to say.
    assert ab._waited_rounds(*_ran([0.10] * 6, [0.11] * 6)[2:]) == ((), None)
    # 10 points apart or more: the busy machine's rule.
    busy, unlike = ab._waited_rounds(*_ran([0.02] * 6, [0.13] * 6)[2:])
    assert busy == (reason(Why.TWINS_WAITED_APART, points=11.0, needs=2.0),) and unlike is None
    # A usual round at 15%: busy, whatever the gap.
    busy, _ = ab._waited_rounds(*_ran([0.15] * 6, [0.16] * 6)[2:])
    assert busy == (reason(Why.TWIN_WAITED, share=0.16, needs=2.0),)


def test_too_few_rounds_left_and_the_cells_are_judged_whole():
    # Each twin waited 30% in two rounds, its partner's two others: two rounds left.
    on = _cell(Hw.ON, [0.30, 0.30, 0.02, 0.02, 0.02, 0.02])
    off = _cell(Hw.OFF, [0.02, 0.02, 0.30, 0.30, 0.02, 0.02])
    paired = (_rounds(on), _rounds(off))
    assert ab._rounds_that_ran(on, off, paired, 0.05) == (paired, None, None, None)
    # ... by their wait shares (the cpu_time block's): 11% makes the machine busy.
    waits = {on.key: 0.11, off.key: 0.11}
    assert ab._waited(on, off, waits, 0.05) == (reason(Why.TWIN_WAITED, share=0.11, needs=2.0),)
