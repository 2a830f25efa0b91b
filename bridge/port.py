"""A worker process on the other end of a {packet,4} channel.

`Worker` spawns a process (the Erlang node or `python -m bridge.worker`),
waits for its `{ready, Protocol, Greeting}` frame, then makes calls
`{call, Id, Op, Args}` -> `{ok, Id, Result}` | `{error, Id, {Class, Message}}`,
each with a timeout. Used as a context manager it never leaves the process
behind: on any exit it closes the worker's input (the polite way to stop it),
waits briefly, then kills and reaps it.

Two more guards against leftovers:
- the child gets PR_SET_PDEATHSIG=SIGKILL, so it dies even if bridge itself is
  SIGKILLed (the `erl` script execs erlexec, which execs beam.smp, so the flag
  reaches the VM: same PID);
- it runs in its own session, so a Ctrl-C at the terminal reaches bridge only,
  and bridge decides the order of shutdown and saves what it measured.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from bridge import codec
from bridge.errors import OperationError, ProtocolError, WorkerError
from bridge.proc import die_with_parent, kill_group

PROTOCOL = 1
STDERR_TAIL = 1500


class Worker:
    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        start_timeout: float = 30.0,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.start_timeout = start_timeout
        self.greeting: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._proc: subprocess.Popen | None = None
        self._stderr = None
        self._stderr_text = ""  # the tail, kept when the file is closed
        self._channel: codec.Channel | None = None

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self) -> Worker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        # stderr goes to an unlinked temporary file: private to this user,
        # gone when closed, and it never blocks the child the way a pipe that
        # nobody drains would.
        self._stderr = tempfile.TemporaryFile(prefix="bridge-stderr-")  # noqa: SIM115 (closed in close())
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=self.env,
                preexec_fn=die_with_parent,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            self._stderr.close()
            raise WorkerError(
                f"{self.name}: cannot start {self.argv[0]}: {exc.strerror}", runtime=self.name
            ) from exc
        self._channel = codec.Channel(self._proc.stdout.fileno(), self._proc.stdin.fileno())
        try:
            greeting = self._receive(self.start_timeout, "its ready message")
            if not (isinstance(greeting, tuple) and len(greeting) == 3 and greeting[0] == "ready"):
                raise self._failure(f"sent {_short(greeting)} instead of a ready message")
            if greeting[1] != PROTOCOL:
                raise self._failure(f"speaks protocol {greeting[1]!r}, bridge speaks {PROTOCOL}")
            self.greeting = codec.props(greeting[2])
        except BaseException:
            self.close()
            raise

    def close(self, grace: float = 2.0) -> int | None:
        """Stop the worker: close its input, wait up to `grace` s, then kill."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            kill_group(proc)
        with contextlib.suppress(OSError):
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr_text = self._read_stderr_tail()
            self._stderr.close()
            self._stderr = None
        return proc.returncode

    def kill(self) -> None:
        # The whole session: beam.smp's erl_child_setup helper goes with it.
        if self._proc is not None:
            kill_group(self._proc)

    # -- calls -------------------------------------------------------------

    def call(self, op: str, args: Mapping[str, Any] | None = None, *, timeout: float) -> Any:
        return self.reply(op, self.send(op, args), timeout=timeout)

    def send(self, op: str, args: Mapping[str, Any] | None = None) -> int:
        """Send a request without waiting for its answer (several workers can
        then work at once); returns the id that `reply` waits for."""
        if self._proc is None or self._channel is None:
            raise WorkerError(f"{self.name}: worker is not running", runtime=self.name)
        request_id = next(self._ids)
        wire_args = [(k.encode(), _wire(v)) for k, v in (args or {}).items()]
        try:
            self._channel.send((codec.atom("call"), request_id, op.encode(), wire_args))
        except ProtocolError as exc:
            raise self._failure(f"could not be sent '{op}': {exc.message}") from exc
        return request_id

    def reply(self, op: str, request_id: int, *, timeout: float) -> Any:
        """The answer to request `request_id` (see `send`)."""
        if self._proc is None or self._channel is None:
            raise WorkerError(f"{self.name}: worker is not running", runtime=self.name)
        reply = self._receive(timeout, f"an answer to '{op}'")
        if not (isinstance(reply, tuple) and len(reply) == 3 and reply[1] == request_id):
            raise self._failure(f"answered '{op}' with {_short(reply)}")
        tag, _, body = reply
        if tag == "ok":
            return body
        if tag == "error" and isinstance(body, tuple) and len(body) == 2:
            kind, message = body
            text = (
                message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
            )
            raise OperationError(str(kind), text)
        raise self._failure(f"answered '{op}' with {_short(reply)}")

    def _receive(self, timeout: float, what: str) -> Any:
        assert self._channel is not None
        try:
            return self._channel.receive(timeout)
        except TimeoutError:
            self.kill()
            raise self._failure(f"sent no {what} within {timeout:.0f} s and was killed") from None
        except EOFError:
            raise self._failure(f"exited before it sent {what}") from None
        except ProtocolError as exc:
            self.kill()
            raise self._failure(f"broke the protocol: {exc.message}") from None

    def _failure(self, what: str) -> WorkerError:
        status = ""
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
            if code is not None:
                status = f" (killed by signal {-code})" if code < 0 else f" (exit status {code})"
        tail = self._read_stderr_tail()
        return WorkerError(f"{self.name} {what}{status}", runtime=self.name, stderr_tail=tail)

    def stderr_tail(self) -> str:
        return self._read_stderr_tail()

    def _read_stderr_tail(self) -> str:
        if self._stderr is None:
            return self._stderr_text
        try:
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - STDERR_TAIL))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""


def _wire(value: Any) -> Any:
    """Driver values -> wire terms: str becomes a binary, dict a proplist."""
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, Mapping):
        return [(k.encode(), _wire(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return type(value)(_wire(v) for v in value)
    return value


def _short(term: Any) -> str:
    text = repr(term)
    return text if len(text) <= 80 else text[:77] + "..."
