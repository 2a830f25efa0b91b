"""The wire format on an os.pipe() pair, with exact bytes, no Erlang needed."""

from __future__ import annotations

import contextlib
import os
import pickle
import struct

import pytest

from bridge.errors import ProtocolError
from bridge.wire import codec


@pytest.fixture
def pipe_pair():
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_frame_exact_bytes():
    # {call, 1, <<"ping">>, []} in the external term format, length-prefixed.
    term = (codec.atom("call"), 1, b"ping", [])
    expected_payload = (
        b"\x83"  # version
        b"h\x04"  # SMALL_TUPLE_EXT, arity 4
        b"d\x00\x04call"  # ATOM_EXT 'call' (erlport's encoding; Erlang reads it)
        b"a\x01"  # SMALL_INTEGER_EXT 1
        b"m\x00\x00\x00\x04ping"  # BINARY_EXT
        b"j"  # NIL_EXT
    )
    assert codec.frame(term) == struct.pack(">I", len(expected_payload)) + expected_payload


def test_send_then_receive_over_pipe(pipe_pair):
    r, w = pipe_pair
    sender, receiver = codec.Channel(-1, w), codec.Channel(r, -1)
    sender.send(
        (codec.atom("ok"), 7, [(codec.atom("loops"), 1000), (codec.atom("output"), b"\x01\x02")])
    )
    got = receiver.receive(timeout=1)
    assert got == ("ok", 7, [("loops", 1000), ("output", b"\x01\x02")])
    assert codec.props(got[2]) == {"loops": 1000, "output": b"\x01\x02"}


def test_two_frames_in_one_write_are_split(pipe_pair):
    r, w = pipe_pair
    os.write(w, codec.frame(1) + codec.frame(2))
    ch = codec.Channel(r, -1)
    assert ch.receive(timeout=1) == 1
    assert ch.receive(timeout=1) == 2


def test_frame_split_across_writes(pipe_pair):
    r, w = pipe_pair
    data = codec.frame(b"x" * 1000)
    ch = codec.Channel(r, -1)
    os.write(w, data[:3])
    with pytest.raises(TimeoutError):
        ch.receive(timeout=0.05)
    os.write(w, data[3:])
    assert ch.receive(timeout=1) == b"x" * 1000


def test_big_integers_and_floats_round_trip(pipe_pair):
    r, w = pipe_pair
    os.write(w, codec.frame([2**70, -5, 1.5, 123_456_789_012]))
    assert codec.Channel(r, -1).receive(timeout=1) == [2**70, -5, 1.5, 123_456_789_012]


def test_clean_eof_between_frames(pipe_pair):
    r, w = pipe_pair
    os.close(w)
    with pytest.raises(EOFError):
        codec.Channel(r, -1).receive(timeout=1)


def test_truncated_frame_is_a_protocol_error(pipe_pair):
    r, w = pipe_pair
    os.write(w, codec.frame(b"abcdef")[:-2])
    os.close(w)
    with pytest.raises(ProtocolError, match="truncated frame"):
        codec.Channel(r, -1).receive(timeout=1)


def test_garbage_payload_is_a_protocol_error(pipe_pair):
    r, w = pipe_pair
    os.write(w, struct.pack(">I", 5) + b"hello")
    with pytest.raises(ProtocolError):
        codec.Channel(r, -1).receive(timeout=1)


def test_trailing_bytes_inside_frame_are_refused(pipe_pair):
    r, w = pipe_pair
    payload = codec.encode(1) + b"zz"
    os.write(w, struct.pack(">I", len(payload)) + payload)
    with pytest.raises(ProtocolError, match="garbage"):
        codec.Channel(r, -1).receive(timeout=1)


def test_oversized_length_is_refused_before_reading(pipe_pair):
    r, w = pipe_pair
    os.write(w, struct.pack(">I", codec.MAX_FRAME + 1))
    with pytest.raises(ProtocolError, match="exceeds"):
        codec.Channel(r, -1).receive(timeout=1)


def test_opaque_python_term_is_never_unpickled(pipe_pair, tmp_path):
    # erlport would call pickle.loads on {'$erlport.opaque', python, Data}.
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    term = (codec.atom("$erlport.opaque"), codec.atom("python"), pickle.dumps(Evil()))
    r, w = pipe_pair
    payload = b"\x83" + __import__("emqx.erlport.erlterms", fromlist=["x"]).encode_term(term)
    os.write(w, struct.pack(">I", len(payload)) + payload)
    with pytest.raises(ProtocolError, match="opaque"):
        codec.Channel(r, -1).receive(timeout=1)
    assert not marker.exists()


def test_dicts_are_refused_on_encode():
    with pytest.raises(TypeError):
        codec.encode([(codec.atom("a"), {"b": 1})])


def test_atoms_decode_to_str_and_strings_to_lists():
    assert codec.decode(codec.encode(codec.atom("pong"))) == "pong"
    assert codec.decode(codec.encode([104, 105])) == [104, 105]
