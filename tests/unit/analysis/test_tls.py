"""bridge.analysis.tls on fixed samples with known answers: the server's CPU
per handshake and its CI, the rate and the share, what the output says was
negotiated, and the resumption saving from paired rounds (a machine that
slows down in some rounds moves both cells of a pair alike, and the saving
stays put), or why it has no CI. Then the block's JSON round trip and its
sentences."""

from __future__ import annotations

import random

import pytest

from bridge.analysis import tls
from bridge.catalog import negotiated, scenario
from bridge.report import schema
from bridge.report import tls as rec
from bridge.report.hw import Hw
from bridge.view import tls as tls_view

ROUNDS, PER_ROUND = 6, 4
SETTINGS = {"samples": ROUNDS * PER_ROUND, "rounds": ROUNDS, "openssl_runs": ROUNDS}
OUT13 = negotiated.encode(
    {
        "protocol": "TLSv1.3",
        "suite": "TLS_AES_256_GCM_SHA384",
        "cert": "00112233aabbccdd",
        "resumed": "no",
        "client_cert": "none",
    }
)


def result(call_id, wall_ms, server_ms, runtime="erlang@25", loops=2, procs=()):
    """A cell whose sample i took wall_ms[i] per handshake, its server
    server_ms[i] per handshake."""
    return schema.Result(
        scenario="tls-resume",
        runtime=runtime,
        call=call_id,
        call_id=call_id,
        api="",
        semantics="",
        algorithm="",
        size=1,
        hw=Hw.ON,
        samples=tuple(round(w * 1e6 * loops) for w in wall_ms),
        loops=loops,
        output_hex=OUT13.hex(),
        sample_server_cpu_ns=tuple(round(s * 1e6 * loops) for s in server_ms),
        procs=tuple(procs),
    )


def report(results, settings=SETTINGS) -> schema.Report:
    kinds = {r.runtime: r.runtime.split("@")[0] for r in results}
    runtimes = tuple(
        schema.Runtime(id=rid, kind=kind, executable="", version="") for rid, kind in kinds.items()
    )
    sc = scenario.load("tls-resume")
    return schema.Report(
        bridge_version="0",
        created="",
        command=[],
        reproduce="",
        environment={},
        settings=dict(settings),
        runtimes=runtimes,
        results=tuple(results),
        scenarios=(sc.to_json(),),
    )


def slowed(level: float, n: int = ROUNDS * PER_ROUND, seed: int = 1) -> list[float]:
    """`level` ms with 1% noise, the whole round 2.5x slower in rounds 1 and 4
    (a busy machine), the same rounds for every cell."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        slow = 2.5 if (i // PER_ROUND) in (1, 4) else 1.0
        out.append(level * slow * (1 + rng.uniform(-0.01, 0.01)))
    return out


def test_a_cell_gives_its_rate_and_its_servers_cpu_with_a_ci():
    r = result("handshake-1.3", [2.0] * 10, [0.5, 0.6, 0.4, 0.5, 0.5, 0.55, 0.45, 0.5, 0.5, 0.5])
    c = tls.cell(r, scenario.load("tls-resume"), "erlang")
    assert c is not None and not c.resumed and c.key == "ecdsa-p256" and not c.mutual
    assert c.wall_ns == pytest.approx(2e6) and c.handshakes_per_s == pytest.approx(500)
    assert c.server_cpu_ns == pytest.approx(0.5e6) and c.server_share == pytest.approx(0.25)
    lo, hi = c.server_cpu_ci95
    assert lo <= 0.5e6 <= hi and hi - lo < 0.2e6
    assert c.negotiated == rec.TlsNegotiated(
        protocol="TLSv1.3",
        suite="TLS_AES_256_GCM_SHA384",
        cert="00112233aabbccdd",
        resumed=False,
        client_cert="none",
    )
    # A server CPU that could not be read is left out, not counted as 0.
    r = result("resume-1.3", [1.0] * 4, [0.3, 0.3, 0.3, 0.3])
    r = schema.Result(**{**r.__dict__, "sample_server_cpu_ns": (-1, 600000, 600000, 600000)})
    assert tls.server_per_handshake(r) == [0.3e6] * 3


def test_the_saving_pairs_rounds_so_a_busy_spell_moves_both_sides_alike():
    full = result("handshake-1.3", slowed(3.0), slowed(1.2, seed=2))
    resumed = result("resume-1.3", slowed(1.5, seed=3), slowed(0.4, seed=4))
    rep = report([full, resumed])
    block = tls.block(rep, [scenario.load("tls-resume")])
    (s,) = block.savings
    assert (s.version, s.full_call_id, s.resumed_call_id) == ("1.3", "handshake-1.3", "resume-1.3")
    assert s.ratio == pytest.approx(2.0, rel=0.02) and s.rounds == ROUNDS
    assert s.ci95[0] <= 2.0 <= s.ci95[1] and s.ci95[1] - s.ci95[0] < 0.1
    assert s.server_ratio == pytest.approx(3.0, rel=0.02)
    assert s.server_ci95[0] <= 3.0 <= s.server_ci95[1] and s.no_ci is rec.NoCi.NONE
    # Slow rounds that hit one side only (not what the session does) leave
    # the median of the ratios, and widen its CI past any use.
    shifted = result("resume-1.3", slowed(1.5, seed=3)[PER_ROUND:] + [1.5] * PER_ROUND, [0.4] * 24)
    (unpaired,) = tls.block(report([full, shifted]), [scenario.load("tls-resume")]).savings
    assert unpaired.ci95[1] - unpaired.ci95[0] > 3


def test_too_few_rounds_give_a_saving_without_a_ci_and_say_why():
    # --quick's openssl: one run per cell, here two (one per round).
    settings = {"samples": 2 * PER_ROUND, "rounds": 2, "openssl_runs": 2}
    full = result("handshake-1.2", [3.0, 3.1], [1.0, 1.0], runtime="openssl@3", loops=100)
    resumed = result("resume-1.2", [1.0, 1.0], [0.25, 0.25], runtime="openssl@3", loops=400)
    (s,) = tls.block(report([full, resumed], settings), [scenario.load("tls-resume")]).savings
    assert s.ratio == pytest.approx(3.05) and s.ci95 is None and s.rounds == 2
    assert s.no_ci is rec.NoCi.ROUNDS
    # The server's saving too, from the same two rounds.
    assert s.server_ratio == pytest.approx(4.0) and s.server_ci95 is None
    assert "no CI: 2 paired rounds, a CI needs 3" in tls_view._saving(report([full]), s)


def test_the_block_reads_back_as_written_and_is_worded():
    full = result("handshake-1.3", slowed(3.0), slowed(1.2, seed=2))
    resumed = result("resume-1.3", slowed(1.5, seed=3), slowed(0.4, seed=4))
    rep = report([full, resumed])
    block = tls.block(rep, [scenario.load("tls-resume")])
    assert rec.Tls.from_json(block.to_json()) == block
    made = schema.Report.from_json({**rep.to_json(), "tls": block.to_json()})
    assert made.tls == block
    words = tls_view.sentences(made, "tls-resume")
    assert words[0].startswith("Erlang handshake-1.3: 332 handshakes/s, client and server")
    assert "one server core takes at most" in words[0]
    assert (
        "Erlang TLS 1.3 (handshake-1.3 over resume-1.3): a full handshake takes 2.00× the"
        " time of a resumed one" in words[2]
    )
    assert words[3] == (
        "handshake-1.3 negotiated TLSv1.3, TLS_AES_256_GCM_SHA384, server certificate"
        " 00112233aabbccdd (ECDSA P-256), a full handshake in every runtime."
    )
    # A scenario without TLS cells, or a report from before the block, says nothing.
    assert tls_view.sentences(rep, "tls-resume") == []
    assert tls.block(report([]), []) is None
