"""Which of the twins' interleaved rounds a hardware verdict compares
(bridge.hw.ab._rounds_that_ran): not those in which a twin waited for a CPU
much more than in its other rounds, nor those in which the two twins waited
unlike; and a cell with too few rounds left is judged whole."""

from __future__ import annotations

import pytest

from bridge.hw import ab
from bridge.report import schema
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
    kept, left_out, usual = _ran([0.02] * 6, [0.40, 0.02, 0.03, 0.02, 0.02, 0.02])
    assert sorted(kept[0]) == sorted(kept[1]) == [1, 2, 3, 4, 5]
    assert left_out == 1 and usual == pytest.approx(0.02)


def test_rounds_in_which_the_twins_waited_unlike_are_left_out():
    # The masked twin waited 9-10% in three rounds: its usual, so the rule
    # above keeps them, but its partner waited 2% there.
    kept, left_out, _ = _ran([0.02] * 6, [0.02, 0.09, 0.02, 0.10, 0.03, 0.09])
    assert sorted(kept[0]) == [0, 2, 4] and left_out == 3
    # Alike, however much: both twins at 10% are compared (PAIRED_WAIT_BUSY
    # decides what that wait means).
    kept, left_out, usual = _ran([0.10] * 6, [0.11] * 6)
    assert len(kept[0]) == 6 and left_out == 0 and usual == pytest.approx(0.11)


def test_too_few_rounds_left_and_the_cells_are_judged_whole():
    on, off = _cell(Hw.ON, [0.02] * 6), _cell(Hw.OFF, [0.30] * 6)
    paired = (_rounds(on), _rounds(off))
    assert ab._rounds_that_ran(on, off, paired, 0.05) == (paired, None, None)
    # ... by their wait shares: the masked twin's 30% makes the machine busy.
    waits = {on.key: 0.02, off.key: 0.30}
    assert "30%" in ab._waited(on, off, waits, 0.05)
