"""The CPU a real worker measures on: pinned to the round's CPU for its batch,
and free on every CPU again once the batch is done. Processes that stayed
pinned between their batches took the next batch's CPU in turns with it: in
a control run with two processes a side (tests/cli/test_hardware.py), masked
Erlang nodes waited for a CPU in up to 86% of their sample windows, and
ChaCha20 read up to 1.6x "slower" masked.

A TLS cell's Erlang server node runs apart from its pinned client, judged on
the server's CPU time and the affinity it had while it ran (the kernel woke
it beside the client about half its run time before); openssl's s_time and
s_server stay free."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import pytest

from bridge.catalog import calls, inputs, scenario
from bridge.runtimes.base import BatchPlan, Job
from bridge.runtimes.erlang import ErlangRuntime
from bridge.runtimes.openssl import OpensslRuntime
from bridge.runtimes.python import PythonRuntime
from bridge.system import fence, otp, tlscert
from tests.conftest import FAST, needs_erl, needs_openssl

ALLOWED = set(os.sched_getaffinity(0))


def _affinities(pid: int) -> list[set[int]]:
    return [os.sched_getaffinity(int(tid)) for tid in os.listdir(f"/proc/{pid}/task")]


@pytest.mark.skipif(len(ALLOWED) < 2, reason="pinning needs two CPUs or more")
@pytest.mark.parametrize(
    "make, call_id",
    [
        pytest.param(lambda: ErlangRuntime(otp.locate(None), FAST), "macN", marks=needs_erl),
        pytest.param(lambda: PythonRuntime(FAST), "hmac.digest"),
    ],
    ids=["erlang", "python"],
)
def test_a_worker_is_pinned_for_its_batch_and_free_after_it(make, call_id, no_leftovers):
    sc = scenario.load("hmac-sha1")
    data = inputs.make(1, sc.name, sc.key_bytes, 1000)
    rt = make()
    with rt as info:
        job = Job(sc, calls.CALLS[info.kind, call_id], data)
        pid = rt.worker.pid
        for r in (0, 1):
            batch = rt.bench(job, BatchPlan(3, 0, round=r))
            cpu = rt.pinning.cpu_for(r)
            assert batch.cpus == [cpu] * 3  # every window on the round's CPU
            assert all(a == ALLOWED for a in _affinities(pid)), (r, _affinities(pid))


# -- a TLS cell: its client on the round's CPU, its server apart ----------------------


def _threads(pid: int) -> list[tuple[set[int], int]]:
    """(affinity, run ns so far) of each thread of `pid`; [] when it is gone."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run = int(f.read().split()[0])
            out.append((os.sched_getaffinity(int(tid)), run))
    except (OSError, ValueError):
        pass
    return out


class _Watch(threading.Thread):
    """Samples, until stopped, the client's threads' affinity and the
    server's threads' affinity and run time: how much of the server's run
    time (ns) went by while the client was pinned to one CPU, and how much
    of that with the server free to run on the client's CPU."""

    def __init__(self, client: Callable[[], int | None], server: Callable[[], int | None]):
        super().__init__(daemon=True)
        self.client, self.server = client, server
        self.pinned_ns = self.beside_ns = 0
        self.stop = threading.Event()

    def run(self) -> None:
        last: dict[int, int] = {}
        while not self.stop.wait(0.001):
            client, server = self.client(), self.server()
            if client is None or server is None:
                continue
            masks = {frozenset(m) for m, _ in _threads(client)}
            threads = _threads(server)
            run = sum(r for _, r in threads)
            spent, last[server] = run - last.get(server, run), run
            if len(masks) == 1 and len(cpu := next(iter(masks))) == 1:
                self.pinned_ns += spent
                if any(cpu <= m for m, _ in threads):
                    self.beside_ns += spent


def _below(root: int, comm: str) -> int | None:
    """The newest process named `comm` below `root`."""
    found = []
    for p in fence.below(root):
        try:
            with open(f"/proc/{p.pid}/comm") as f:
                if f.read().strip() == comm:
                    found.append(p.pid)
        except OSError:
            continue
    return max(found, default=None)


def _tls_job(kind: str) -> tuple[Job, inputs.RunInputs]:
    sc = scenario.load("tls-handshake")
    made = inputs.RunInputs(1, tlscert.make)
    return Job(sc, calls.CALLS[kind, "handshake-1.3"], made(sc, 1)), made


@pytest.mark.skipif(len(ALLOWED) < 2, reason="pinning needs two CPUs or more")
@needs_erl
def test_a_tls_cells_server_node_runs_apart_from_its_pinned_client(no_leftovers):
    """The server node (below the worker) must not run on the CPU its client
    measures on: there the two took one CPU in turns, the client's
    schedulers spinning, and the server's CPU per handshake and the pair's
    time were those of the sharing. Judged on the server's CPU time, by the
    affinity it had while it ran: load does not move that."""
    job, made = _tls_job("erlang")
    rt = ErlangRuntime(otp.locate(None), FAST)
    try:
        with rt:
            worker = rt.worker.pid
            watch = _Watch(lambda: worker, lambda: _below(worker, "beam.smp"))
            watch.start()
            try:
                for r in (0, 1):
                    batch = rt.bench(job, BatchPlan(3, 0, round=r))
                    assert batch.server_cpu_ns and min(batch.server_cpu_ns) > 0
            finally:
                watch.stop.set()
                watch.join()
            server = _below(worker, "beam.smp")
            assert server is not None
            # Free again after the batches, as the worker is.
            assert all(m == ALLOWED for m, _ in _threads(server))
    finally:
        made.close()
    # The server's handshakes were seen, and none of their CPU time was free
    # to go to the client's CPU (before: its affinity was every CPU, and it
    # ran there about half of its time).
    assert watch.pinned_ns > 0
    assert watch.beside_ns <= 0.05 * watch.pinned_ns, (watch.beside_ns, watch.pinned_ns)


@pytest.mark.skipif(len(ALLOWED) < 2, reason="pinning needs two CPUs or more")
@needs_openssl
def test_openssl_s_time_and_s_server_are_both_free(no_leftovers):
    """Neither spins, so the kernel may hand one CPU between them; confined
    together to the round's CPU, or one CPU each, they would wait for it."""
    job, made = _tls_job("openssl")
    rt = OpensslRuntime(FAST)
    me = os.getpid()
    try:
        with rt:
            stop = threading.Event()
            seen: list[tuple[set[int], set[int]]] = []

            def both() -> None:
                while not stop.wait(0.001):
                    pids = sorted(p.pid for p in fence.below(me))
                    names = {}
                    for pid in pids:
                        try:
                            with open(f"/proc/{pid}/cmdline", "rb") as f:
                                names[pid] = f.read().split(b"\0")[1:2]
                        except OSError:
                            continue
                    servers = [p for p, n in names.items() if n == [b"s_server"]]
                    clients = [p for p, n in names.items() if n == [b"s_time"]]
                    if servers and clients:
                        s, c = _threads(servers[-1]), _threads(clients[-1])
                        if s and c:
                            seen.append((s[0][0], c[0][0]))

            t = threading.Thread(target=both, daemon=True)
            t.start()
            try:
                for r in (0, 1):
                    batch = rt.bench(job, BatchPlan(2, 0, round=r))
                    assert batch.server_cpu_ns and min(batch.server_cpu_ns) > 0
            finally:
                stop.set()
                t.join()
    finally:
        made.close()
    assert seen, "s_time and s_server were never seen at once"
    for server, client in seen:
        assert client == server == ALLOWED, (client, server)
