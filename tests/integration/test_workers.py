"""Both workers, for real: a real Erlang node and a real Python worker,
driven over the {packet,4} channel; the Erlang node's ECDSA public key
agrees with the driver's."""

from __future__ import annotations

import hmac
import os
import resource
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.crypto import ec
from bridge.errors import OperationError, WorkerError
from bridge.system import cpustat, otp
from bridge.wire import codec
from bridge.wire.port import Worker
from tests.conftest import needs_erl, wait_gone

KEY = bytes(range(1, 21))


DATA = bytes(range(256)) * 4


BENCH = {"warmup_ns": 1_000_000, "sample_ns": 1_000_000, "samples": 3}


def erlang_worker() -> Worker:
    inst = otp.locate(None)
    beams = otp.worker_beams(inst)
    argv = [str(inst.erl), "-noshell", "-noinput", "-pa", str(beams), "-s", "bridge_worker", "main"]
    return Worker("erlang", argv, dict(os.environ))


def python_worker() -> Worker:
    return Worker("python", [sys.executable, "-m", "bridge.pyworker.worker"], dict(os.environ))


WORKERS = [
    pytest.param(erlang_worker, "mac", id="erlang", marks=needs_erl),
    pytest.param(python_worker, "hmac.digest", id="python"),
]


def _listening_inodes() -> set[str]:
    found = set()
    for table in ("tcp", "tcp6", "udp", "udp6"):
        path = Path(f"/proc/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            # state 0A = LISTEN for TCP; any bound UDP socket counts as listening.
            if table.startswith("udp") or fields[3] == "0A":
                found.add(fields[9])
    return found


def _process_named(name: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    return True
            except OSError:
                pass
    return False


@needs_erl
def test_public_key_agrees_with_erlang():
    d = ec.private_scalar("p384", b"\x55" * 60)
    script = (
        f"{{Pub, _}} = crypto:generate_key(ecdh, secp384r1, <<{d}:384>>),"
        ' io:format("~s", [binary:encode_hex(Pub)]), halt().'
    )
    out = subprocess.run(
        ["erl", "-noshell", "-noinput", "-eval", script], capture_output=True, text=True, timeout=60
    ).stdout
    assert out.lower() == ec.public_key("p384", d).hex()


@pytest.mark.parametrize("make, mac_call", WORKERS)
def test_greeting_ping_and_info(make, mac_call, no_leftovers):
    with make() as w:
        assert w.greeting["kind"] in ("erlang", "python")
        assert w.call("ping", timeout=5) == "pong"
        info = codec.props(w.call("info", timeout=10))
        assert int(info["os_pid"]) == w.pid


@pytest.mark.parametrize("make, mac_call", WORKERS)
def test_bench_mac_matches_python_hmac(make, mac_call, no_leftovers):
    expected = hmac.digest(KEY, DATA, "sha1")[:10]
    with make() as w:
        args = {
            "call": mac_call,
            "digest": "sha1",
            "key": KEY,
            "data": DATA,
            "mac_bytes": 10,
            **BENCH,
        }
        reply = codec.props(w.call("bench", args, timeout=30))
    assert reply["output"] == expected
    assert reply["loops"] >= 1
    assert len(reply["samples"]) == 3 and all(s > 0 for s in reply["samples"])


@pytest.mark.parametrize("make, mac_call", WORKERS)
def test_full_length_mac_and_hash(make, mac_call, no_leftovers):
    import hashlib

    hash_call = "hash" if mac_call == "mac" else "hashlib"
    with make() as w:
        full = codec.props(
            w.call(
                "bench",
                {
                    "call": mac_call,
                    "digest": "sha256",
                    "key": KEY,
                    "data": DATA,
                    "mac_bytes": 0,
                    **BENCH,
                },
                timeout=30,
            )
        )
        digest = codec.props(
            w.call(
                "bench", {"call": hash_call, "digest": "sha256", "data": DATA, **BENCH}, timeout=30
            )
        )
    assert full["output"] == hmac.digest(KEY, DATA, "sha256")
    assert digest["output"] == hashlib.sha256(DATA).digest()


@pytest.mark.parametrize("make, mac_call", WORKERS)
def test_unknown_operation_and_call_are_refused(make, mac_call, no_leftovers):
    with make() as w:
        with pytest.raises(OperationError) as op:
            w.call("os:cmd", {"cmd": "touch /tmp/x"}, timeout=5)
        assert op.value.kind == "unknown_op"
        with pytest.raises(OperationError) as call:
            w.call("bench", {"call": "eval", "digest": "sha1", "data": b"", **BENCH}, timeout=5)
        assert call.value.kind == "unknown_call"
        with pytest.raises(OperationError) as bad:
            w.call("bench", {"call": mac_call, "digest": "sha1"}, timeout=5)
        assert bad.value.kind == "bad_request"
        assert w.call("ping", timeout=5) == "pong"  # still serving


@pytest.mark.parametrize("make, mac_call", WORKERS)
def test_undecodable_frame_gets_error_reply(make, mac_call, no_leftovers):
    with make() as w:
        os.write(w._proc.stdin.fileno(), struct.pack(">I", 3) + b"\x83zz")
        reply = w._channel.receive(timeout=5)
        assert reply[0] == "error" and reply[2][0] == "bad_request"
        assert w.call("ping", timeout=5) == "pong"


@needs_erl
def test_erlang_refuses_unknown_atoms_with_safe_decoding(no_leftovers):
    # binary_to_term(B, [safe]) must refuse an atom the node does not know.
    with erlang_worker() as w:
        term = (codec.atom("call"), 5, b"ping", [(codec.atom("bridge_no_such_atom_q7x"), 1)])
        w._channel.send(term)
        reply = w._channel.receive(timeout=5)
        assert reply[0] == "error" and reply[2][0] == "bad_request"
        assert b"safe" in reply[2][1]
        assert w.call("ping", timeout=5) == "pong"


@pytest.mark.parametrize("make, mac_call", WORKERS)
def test_end_of_input_stops_worker_mid_measurement(make, mac_call):
    """Judged on the worker's CPU time after its input closed, which a busy
    machine does not stretch: under 1 s, the sample it was in at most (0.5
    s; 0.003-0.013 s measured at a load of 13), where the measurement left
    alone would spin for 50 s more. The wall-clock wait (30 s) bounds a
    hang."""
    w = make()
    before = _children_cpu_s()
    w.start()
    pid = w.pid
    args = {
        "call": mac_call,
        "digest": "sha1",
        "key": KEY,
        "data": DATA,
        "mac_bytes": 10,
        "warmup_ns": 0,
        "sample_ns": 500_000_000,
        "samples": 100,
    }  # 50 s if left alone
    w._channel.send(
        (
            codec.atom("call"),
            99,
            b"bench",
            [
                (k.encode(), v)
                for k, v in {**args, "call": mac_call.encode(), "digest": b"sha1"}.items()
            ],
        )
    )
    time.sleep(0.5)
    ran = cpustat.process_cpu_ns(pid) / 1e9  # start-up and the measuring so far
    w._proc.stdin.close()
    w._proc.wait(timeout=30)
    assert ran > 0 and _children_cpu_s() - before - ran < 1
    assert not wait_gone({pid})
    w.close()


def _children_cpu_s() -> float:
    """User and system CPU of this process's children that have been waited for."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@pytest.mark.parametrize("make, mac_call", WORKERS)
def test_hung_worker_times_out_and_is_killed(make, mac_call):
    w = make()
    w.start()
    pid = w.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(WorkerError, match="within 1 s and was killed"):
            w.call("ping", timeout=1)
    finally:
        w.close()
    assert not wait_gone({pid})


@pytest.mark.serial  # no epmd on the whole machine
@needs_erl
def test_erlang_worker_is_beam_and_opens_no_socket(no_leftovers):
    epmd_before = _process_named("epmd")  # another Erlang on this machine may run one
    with erlang_worker() as w:
        assert os.readlink(f"/proc/{w.pid}/exe").endswith("beam.smp")
        w.call("info", timeout=10)
        sockets = [os.readlink(f"/proc/{w.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{w.pid}/fd")]
        inodes = {s[len("socket:[") : -1] for s in sockets if s.startswith("socket:[")}
        listening = _listening_inodes()
        assert not inodes & listening, "the Erlang worker has a listening socket"
        assert epmd_before or not _process_named("epmd"), "epmd was started"


def test_python_hashlib_new_gives_the_named_constructors_bytes(no_leftovers):
    import hashlib

    with python_worker() as w:
        args = {"call": "hashlib.new", "digest": "sha3-256", "data": DATA, **BENCH}
        reply = codec.props(w.call("bench", args, timeout=30))
    assert reply["output"] == hashlib.sha3_256(DATA).digest()
    assert reply["api"] == b"hashlib.new" and len(reply["samples"]) == 3
