"""The Python worker: `python -m bridge.pyworker.worker`.

It speaks the same protocol as erl/bridge_worker.erl over its stdin/stdout, so
the driver handles both alike (see bridge.wire.port). It runs as its own process,
never inside the driver, because the hardware masks (OPENSSL_ia32cap) must be
in the environment before libcrypto is loaded.

- The channel gets private duplicates of fds 0 and 1; fd 1 is then pointed at
  stderr, so a stray print() cannot corrupt a frame. Text that start-up code
  (a sitecustomize.py, a .pth file) printed but Python had not yet written
  out is flushed after that, so it lands on stderr too. Text it had written
  out already reaches the driver before the greeting; the driver reports it.
- A watchdog thread polls stdin for hang-up only (poll with no events wakes on
  POLLHUP alone), so the end of input ends the process at once, even in the
  middle of a measurement: the driver has gone away. Requests themselves are
  read on the main thread, with no hand-over between threads.
- Requests name operations from a closed set (bridge.pyworker.ops); nothing from a
  request is ever evaluated, and erlport's pickle-based opaque terms are
  refused by bridge.wire.codec.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
from typing import Any

from bridge.errors import BadTerm, OperationError, ProtocolError
from bridge.wire import codec

PROTOCOL = 1


def main() -> None:
    read_fd, write_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stdout.flush()  # start-up prints still buffered: to fd 1, now stderr
    sys.stdout = sys.stderr
    channel = codec.Channel(read_fd, write_fd)

    from bridge.pyworker import ops as pyops  # after the fd shuffle: imports may print

    if sys.argv[1:2] == ["--user"] and len(sys.argv) == 3:
        # The user's expressions, given by the driver's command line only
        # (bridge.pyworker.usercode); never enabled by a request.
        from bridge.pyworker import usercode

        usercode.enable(sys.argv[2])
        pyops.before_run = usercode.mark  # the progress the driver watches

    threading.Thread(target=_exit_on_hangup, args=(read_fd,), daemon=True).start()
    channel.send((codec.atom("ready"), PROTOCOL, _atoms(pyops.greeting())))
    while True:
        try:
            request = channel.receive()
        except EOFError:
            os._exit(0)
        except BadTerm as exc:
            # The frame was consumed whole: refuse it and keep serving.
            channel.send(
                (codec.atom("error"), 0, (codec.atom("bad_request"), exc.message.encode()))
            )
            continue
        except ProtocolError as exc:
            # The stream is out of step and cannot be resynchronised.
            print(f"bridge.pyworker.worker: {exc.message}", file=sys.stderr)
            os._exit(3)
        reply = _serve(pyops, request)
        channel.send(reply)
        if reply[0] == codec.atom("ok") and reply[2] == codec.atom("stopping"):
            os._exit(0)


def _exit_on_hangup(fd: int) -> None:
    poller = select.poll()
    poller.register(fd, 0)  # no events asked for: only POLLHUP/POLLERR wake us
    while True:
        for _, event in poller.poll():
            if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                os._exit(0)


def _serve(pyops: Any, request: Any) -> tuple:
    ok, error = codec.atom("ok"), codec.atom("error")
    if not (isinstance(request, tuple) and len(request) == 4 and request[0] == "call"):
        return (
            error,
            0,
            (codec.atom("bad_request"), b"malformed request: expected {call, Id, Op, Args}"),
        )
    _, request_id, op, args = request
    if not isinstance(request_id, int) or not isinstance(op, bytes) or not isinstance(args, list):
        return (error, 0, (codec.atom("bad_request"), b"malformed call"))
    try:
        if op == b"stop":
            return (ok, request_id, codec.atom("stopping"))
        if op == b"ping":
            return (ok, request_id, codec.atom("pong"))
        return (
            ok,
            request_id,
            _atoms(pyops.handle(op.decode("utf-8", "replace"), codec.props(args))),
        )
    except OperationError as exc:
        return (error, request_id, (codec.atom(exc.kind), exc.message.encode()))
    except ProtocolError as exc:
        return (error, request_id, (codec.atom("bad_request"), exc.message.encode()))
    except MemoryError:  # its --memory-limit (RLIMIT_DATA): the driver words it
        return (error, request_id, (codec.atom("memory"), b"MemoryError"))
    except Exception as exc:  # a crash in one call must not kill the worker
        return (error, request_id, (codec.atom("failed"), f"{type(exc).__name__}: {exc}".encode()))


def _atoms(props: list[tuple[str, Any]]) -> list[tuple[Any, Any]]:
    """Proplist with str keys -> atom keys; str values -> binaries."""
    return [(codec.atom(k), _value(v)) for k, v in props]


def _value(v: Any) -> Any:
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


if __name__ == "__main__":
    main()
