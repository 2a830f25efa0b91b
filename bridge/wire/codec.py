"""The wire format: erlport's external-term codec plus {packet,4} framing.

This is the only module that imports erlport (PyPI `emqx-erlport`, the
Python 3 release). Everything else sees plain Python values:

- Erlang binaries <-> `bytes`; atoms -> `str` on decode (send atoms with `atom()`);
- tuples <-> tuples, lists <-> lists, integers and floats as they are;
- a proplist (list of 2-tuples with atom or binary keys) is decoded as a list;
  `props()` turns it into a dict.

erlport's codec has limits that this module hides:
- it cannot decode maps (the Erlang side sends proplists);
- it encodes a Python dict as a pickled "opaque" term, and it *decodes* an opaque
  term tagged `python` with `pickle.loads`: a frame from a peer could then run
  code. `decode()` refuses such terms instead (see `_refuse_opaque`).

Framing is done here rather than with `erlproto.Port` because every read in the
driver needs a timeout and a bound on the frame size.
"""

from __future__ import annotations

import os
import select
import struct
import time
from typing import Any

from emqx.erlport import erlterms

from bridge.errors import BadTerm, ProtocolError

HEADER = struct.Struct(">I")
# A frame carries at most a report of raw samples and some outputs. 64 MiB is
# far above that and far below what would hurt to allocate.
MAX_FRAME = 64 * 1024 * 1024


def _refuse_opaque(data: bytes, language: Any) -> Any:
    raise BadTerm("refused an erlport opaque term (it would be unpickled)")


def _install_opaque_guard() -> None:
    # decode_term binds OpaqueObject.decode as a default argument at definition
    # time, and calls itself recursively with those defaults, so the default is
    # the one place to replace it.
    defaults = list(erlterms.decode_term.__defaults__)
    code = erlterms.decode_term.__code__
    names = code.co_varnames[: code.co_argcount]
    index = names.index("decode_opaque") - (len(names) - len(defaults))
    defaults[index] = _refuse_opaque
    erlterms.decode_term.__defaults__ = tuple(defaults)


_install_opaque_guard()


def atom(name: str) -> erlterms.Atom:
    return erlterms.Atom(name.encode("latin-1"))


def encode(term: Any) -> bytes:
    if _contains_dict(term):
        raise TypeError("dicts cannot be sent to Erlang: use a list of (key, value) tuples")
    return erlterms.encode(term)


def _contains_dict(term: Any) -> bool:
    if isinstance(term, dict):
        return True
    if isinstance(term, (list, tuple)):
        return any(_contains_dict(t) for t in term)
    return False


def decode(payload: bytes) -> Any:
    try:
        term, rest = erlterms.decode(payload)
    except ProtocolError:
        raise
    except erlterms.IncompleteData as exc:
        raise BadTerm("truncated term in frame") from exc
    except (ValueError, TypeError, IndexError, struct.error) as exc:
        raise BadTerm(f"undecodable term: {str(exc)[:80]}") from exc
    if rest:
        raise BadTerm(f"{len(rest)} bytes of garbage after the term in a frame")
    return _plain(term)


def _plain(term: Any) -> Any:
    """erlport types -> plain Python: Atom -> str, List -> list."""
    if isinstance(term, erlterms.Atom):
        return bytes(term).decode("latin-1")
    if isinstance(term, tuple):
        return tuple(_plain(t) for t in term)
    if isinstance(term, list):
        if isinstance(term, erlterms.ImproperList):
            raise BadTerm("improper list in frame")
        return [_plain(t) for t in term]
    if isinstance(term, (bytes, int, float, bool)) or term is None:
        return term
    raise BadTerm(f"unexpected term type {type(term).__name__}")


def props(term: Any) -> dict[str, Any]:
    """A decoded proplist [(key, value), ...] as a dict with str keys."""
    if not isinstance(term, list):
        raise ProtocolError(f"expected a proplist, got {type(term).__name__}")
    out: dict[str, Any] = {}
    for item in term:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ProtocolError("malformed proplist entry")
        key, value = item
        if isinstance(key, bytes):
            key = key.decode("utf-8", "replace")
        if not isinstance(key, str):
            raise ProtocolError("proplist key is not an atom or binary")
        out[key] = value
    return out


def frame(term: Any) -> bytes:
    payload = encode(term)
    return HEADER.pack(len(payload)) + payload


class Channel:
    """{packet,4} frames over a pair of file descriptors, with timeouts."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self._buffer = b""

    def send(self, term: Any) -> None:
        data = frame(term)
        while data:
            try:
                n = os.write(self.write_fd, data)
            except (BrokenPipeError, OSError) as exc:
                raise ProtocolError(f"peer closed its input ({exc.strerror or exc})") from exc
            data = data[n:]

    def receive(self, timeout: float | None = None) -> Any:
        """The next term. EOFError when the peer closed its output cleanly
        between frames; ProtocolError for a truncated or malformed frame;
        TimeoutError when nothing complete arrived in time."""
        deadline = None if timeout is None else time.monotonic() + timeout
        header = self._read_exact(HEADER.size, deadline, between_frames=True)
        (length,) = HEADER.unpack(header)
        if length > MAX_FRAME:
            raise ProtocolError(f"frame of {length} bytes exceeds the {MAX_FRAME}-byte limit")
        if length == 0:
            raise ProtocolError("empty frame")
        return decode(self._read_exact(length, deadline, between_frames=False))

    def pending(self, timeout: float) -> bool:
        """Whether input is there to read (or its end) within `timeout` s;
        nothing is consumed."""
        return bool(self._buffer) or bool(select.select([self.read_fd], [], [], timeout)[0])

    def _read_exact(self, n: int, deadline: float | None, between_frames: bool) -> bytes:
        while len(self._buffer) < n:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([self.read_fd], [], [], remaining)[0]:
                    raise TimeoutError
            chunk = os.read(self.read_fd, max(65536, n - len(self._buffer)))
            if not chunk:
                if between_frames and not self._buffer:
                    raise EOFError
                raise ProtocolError(
                    f"truncated frame: stream ended after {len(self._buffer)} of {n} bytes"
                )
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data


def text(value: Any) -> str:
    """A wire value (binary or atom) as str."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
