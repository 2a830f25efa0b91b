"""A worker process on the other end of a {packet,4} channel.

`Worker` spawns a process (the Erlang node or `python -m bridge.pyworker.worker`),
waits for its `{ready, Protocol, Greeting}` frame, then makes calls
`{call, Id, Op, Args}` -> `{ok, Id, Result}` | `{error, Id, {Class, Message}}`,
each with a timeout. Used as a context manager it never leaves the process
behind: on any exit it closes the worker's input (the polite way to stop it),
waits briefly, then kills and reaps it.

The greeting is read with care, because a worker's start-up is the user's: a
~/.erlang or a sitecustomize.py may print on the standard output before the
worker takes it over. Only a plausible greeting frame counts as one: a small
length, then a payload that begins with the external term format's version
byte (131). Anything else before it is start-up text: bridge keeps a bounded
piece of it and says what was printed, instead of reading "hell" as the length
of a 1.7 GB frame. After the greeting, framing is strict.

Two more guards against leftovers:
- the child gets PR_SET_PDEATHSIG=SIGKILL, so it dies even if bridge itself is
  SIGKILLed (the `erl` script execs erlexec, which execs beam.smp, so the flag
  reaches the VM: same PID);
- it runs in its own session, so a Ctrl-C at the terminal reaches bridge only,
  and bridge decides the order of shutdown and saves what it measured.
A worker that runs user code also has a fence (bridge.system.fence): what
that code starts is killed before the worker is closed or killed. Any
worker may have a data limit (`memory`, RLIMIT_DATA).

With `channel_argv` the frames travel on two descriptors of their own, which
the worker is told of on its command line, and its standard output joins its
standard error: whatever prints there (an Erlang expression's io:format, a
NIF's printf) lands in the captured stderr, never in a frame.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.errors import OperationError, ProtocolError, WorkerError
from bridge.system.fence import Fence
from bridge.system.proc import child_setup, kill_group, popen
from bridge.wire import codec

PROTOCOL = 1
STDERR_TAIL = 1500
# A greeting is a few hundred bytes; 64 KiB leaves room and keeps the bound
# tight: text before it ("hell" = 0x68656c6c) never passes for a length.
GREETING_MAX = 1 << 16
ETF_VERSION = 131  # the first byte of every external-term-format payload
STARTUP_TEXT_MAX = 4096  # start-up text read, at most
STARTUP_TEXT_QUIET = 0.3  # s of silence that ends start-up text
STARTUP_TEXT_GRACE = 2.0  # s it then has to exit by itself, before it is killed
EXCERPT = 160  # characters of it quoted in the message


@dataclass(frozen=True)
class Launch:
    """Where a worker runs and how it is held: its working directory
    (None: bridge's own), its fence (user code: bridge.system.fence), its
    data limit in bytes (RLIMIT_DATA), and, with `channel_argv`, the
    arguments that name the channel's two descriptors to it (read, write)."""

    cwd: str | None = None
    fence: Fence | None = None
    memory: int | None = None
    channel_argv: Callable[[int, int], Sequence[str]] | None = None


class Worker:
    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        start_timeout: float = 30.0,
        startup_hint: str = "",
        postmortem: Callable[[], str] | None = None,
        launch: Launch | None = None,
    ) -> None:
        """`startup_hint`: what might print before the greeting, for the message.
        `postmortem`: more to say when the worker fails, e.g. the crash dump
        an Erlang node wrote. `launch`: its directory, fence, data limit and channel."""
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.start_timeout = start_timeout
        self.startup_hint = startup_hint
        self.postmortem = postmortem
        self.launch = launch or Launch()
        self.greeting: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._proc: subprocess.Popen | None = None
        # The driver's ends of the channel: (read frames, write requests).
        self._ends: tuple[int, int] | None = None
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

    @property
    def running(self) -> bool:
        """Whether its process still runs (once it has not, its pid may be another's)."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Spawn the worker and wait for its greeting."""
        self.spawn()
        self.greet()

    def spawn(self) -> None:
        """Start the process and return at once; greet() waits for it. Apart,
        so that several workers can boot side by side (bridge.measure.session)."""
        # stderr goes to an unlinked temporary file: private to this user,
        # gone when closed, and it never blocks the child the way a pipe that
        # nobody drains would.
        self._stderr = tempfile.TemporaryFile(prefix="bridge-stderr-")  # noqa: SIM115 (closed in close())
        launch = self.launch
        env = {**self.env, **(launch.fence.env() if launch.fence else {})}
        setup = child_setup(launch.memory, subreaper=launch.fence is not None)
        theirs: list[int] = []  # the child's ends of a channel of its own
        try:
            if launch.channel_argv is None:
                io = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "pass_fds": ()}
                argv = self.argv
            else:
                read_requests, write_requests = os.pipe()
                theirs.append(read_requests)
                self._ends = (-1, write_requests)
                read_frames, write_frames = os.pipe()
                theirs.append(write_frames)
                self._ends = (read_frames, write_requests)
                io = {"stdin": subprocess.DEVNULL, "stdout": self._stderr, "pass_fds": theirs}
                argv = [*self.argv, *launch.channel_argv(read_requests, write_frames)]
            self._proc = popen(argv, setup, stderr=self._stderr, env=env, cwd=launch.cwd, **io)
        except OSError as exc:
            self._stderr.close()
            self._close_ends()
            raise WorkerError(
                f"{self.name}: cannot start {self.argv[0]}: {exc.strerror}", runtime=self.name
            ) from exc
        finally:
            for fd in theirs:  # the child has its own copies
                os.close(fd)
        if self._ends is None:
            self._ends = (self._proc.stdout.fileno(), self._proc.stdin.fileno())
        self._channel = codec.Channel(*self._ends)

    def greet(self) -> None:
        """Wait for the spawned worker's ready message (start_timeout from
        now), and check its protocol; a worker that fails here is closed."""
        try:
            greeting = self._receive_greeting()
            if not (isinstance(greeting, tuple) and len(greeting) == 3 and greeting[0] == "ready"):
                raise self._failure(f"sent {_short(greeting)} instead of a ready message")
            if greeting[1] != PROTOCOL:
                raise self._failure(f"speaks protocol {greeting[1]!r}, bridge speaks {PROTOCOL}")
            self.greeting = codec.props(greeting[2])
            if self.launch.fence is not None and self._proc is not None:
                self.launch.fence.settle(self._proc.pid)
        except BaseException:
            self.close()
            raise

    def close(self, grace: float = 2.0) -> int | None:
        """Stop the worker: end what its user code started, close its input,
        wait up to `grace` s, then kill. A worker that runs user code (a
        fence) is stopped while what it started is killed, then killed
        itself: it cannot exit by itself while stopped, and resumed it might
        start more."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            # Its tree is walked only while it runs: a pid reaped may be another's.
            alive = proc.poll() is None
            self._end_fence(proc.pid if alive else None)
            self._close_input(proc)
            if alive and self.launch.fence is not None:
                kill_group(proc)  # the fence stopped it: it cannot exit by itself
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                kill_group(proc)
        except BaseException:  # interrupted while waiting: it must not outlive bridge
            kill_group(proc)
            raise
        finally:
            # What left the worker's tree before it went (its mark finds it).
            self._end_fence(None)
        self._close_ends()
        with contextlib.suppress(OSError):
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr_text = self._read_stderr_tail()
            self._stderr.close()
            self._stderr = None
        return proc.returncode

    def kill(self) -> None:
        # The whole session: beam.smp's erl_child_setup helper goes with it;
        # first what user code started, wherever it went.
        if self._proc is not None:
            self._end_fence(self._proc.pid if self._proc.poll() is None else None)
            kill_group(self._proc)
            self._end_fence(None)

    def _end_fence(self, root: int | None) -> None:
        if self.launch.fence is not None:
            self.launch.fence.end(root)

    def _close_input(self, proc: subprocess.Popen) -> None:
        if self.launch.channel_argv is not None and self._ends is not None:
            if self._ends[1] >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._ends[1])
            self._ends = (self._ends[0], -1)
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()

    def _close_ends(self) -> None:
        """The channel's own descriptors (a Popen's pipes close with it)."""
        if self.launch.channel_argv is not None and self._ends is not None:
            for fd in self._ends:
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        self._ends = None

    def timed_out(self, what: str, timeout: float) -> WorkerError:
        """It did not send `what` within `timeout` s: killed, and the error that says so."""
        self.kill()
        return self._failure(f"did not send {what} within {timeout:.0f} s and was killed")

    def readable(self, timeout: float) -> bool:
        """Whether a frame has begun to arrive within `timeout` s (nothing is
        read: `reply` reads it)."""
        if self._channel is None:
            return True  # reply() says what is wrong
        return self._channel.pending(timeout)

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
        deadline = time.monotonic() + timeout
        reply = self._receive(timeout, f"an answer to '{op}'")
        # An answer to an earlier request, abandoned when Ctrl-C interrupted
        # the wait for it: the worker is still in step, so skip it.
        while isinstance(reply, tuple) and len(reply) == 3 and _stale(reply[1], request_id):
            reply = self._receive(max(0.0, deadline - time.monotonic()), f"an answer to '{op}'")
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

    def _receive(self, timeout: float, what: str, read: Callable | None = None) -> Any:
        assert self._channel is not None
        try:
            return (read or self._channel.receive)(timeout)
        except TimeoutError:
            raise self.timed_out(what, timeout) from None
        except EOFError:
            raise self._failure(f"exited before it sent {what}") from None
        except ProtocolError as exc:
            self.kill()
            raise self._failure(f"broke the protocol: {exc.message}") from None

    # -- the greeting ------------------------------------------------------

    def _receive_greeting(self) -> Any:
        return self._receive(self.start_timeout, "its ready message", self._read_greeting)

    def _read_greeting(self, timeout: float) -> Any:
        """The first frame, read byte-exact so that nothing after it is
        consumed here; start-up text before it becomes a WorkerError."""
        assert self._proc is not None and self._ends is not None
        fd = self._ends[0]
        deadline = time.monotonic() + timeout
        head = _read_upto(fd, codec.HEADER.size + 1, deadline)
        if not head:
            raise EOFError
        if not _plausible_greeting(head):
            raise self._startup_text(fd, head, deadline)
        (length,) = codec.HEADER.unpack(head[: codec.HEADER.size])
        payload = head[codec.HEADER.size :]
        payload += _read_upto(fd, length - len(payload), deadline)
        if len(payload) < length:
            raise ProtocolError(
                f"truncated frame: stream ended after {len(payload) + codec.HEADER.size}"
                f" of {length + codec.HEADER.size} bytes"
            )
        return codec.decode(payload)

    def _startup_text(self, fd: int, head: bytes, deadline: float) -> WorkerError:
        """Read on while text keeps coming (a bounded amount, briefly), then
        stop the worker and say what it printed."""
        text, ended = head, len(head) <= codec.HEADER.size  # a short head: it ended
        while len(text) < STARTUP_TEXT_MAX and not ended:
            wait = min(STARTUP_TEXT_QUIET, deadline - time.monotonic())
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                break
            chunk = os.read(fd, STARTUP_TEXT_MAX - len(text))
            text += chunk
            ended = not chunk
        assert self._proc is not None
        if not ended:
            # A node that failed to boot may still be writing its crash dump:
            # let it finish. One that goes on to greet is stopped all the
            # same, as its output is not a clean channel.
            try:
                self._proc.wait(timeout=STARTUP_TEXT_GRACE)
                ended = True
            except subprocess.TimeoutExpired:
                self.kill()
        # When it exited by itself, its exit status is worth saying.
        error = self._failure(f"printed '{excerpt(text)}' before its greeting", status=ended)
        error.hint = self.startup_hint or None
        return error

    def _failure(self, what: str, status: bool = True) -> WorkerError:
        said = ""
        if self._proc is not None and status:
            try:
                code = self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
            if code is not None:
                said = f" (killed by signal {-code})" if code < 0 else f" (exit status {code})"
        if self.postmortem is not None:
            more = self.postmortem()
            said += f"; {more}" if more else ""
        tail = self._read_stderr_tail()
        return WorkerError(f"{self.name} {what}{said}", runtime=self.name, stderr_tail=tail)

    def _read_stderr_tail(self) -> str:
        if self._stderr is None:
            return self._stderr_text
        try:
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - STDERR_TAIL))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""


def _read_upto(fd: int, n: int, deadline: float) -> bytes:
    """Up to exactly n bytes (fewer only at end of stream)."""
    data = b""
    while len(data) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        chunk = os.read(fd, n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _plausible_greeting(data: bytes, at: int = 0) -> bool:
    """A frame header at `at` with a greeting-sized length, then a payload
    that starts like a term."""
    end = at + codec.HEADER.size
    if len(data) <= end:
        return False
    (length,) = codec.HEADER.unpack(data[at:end])
    return 1 <= length <= GREETING_MAX and data[end] == ETF_VERSION


def excerpt(raw: bytes) -> str:
    """Start-up text for a one-line message: up to a greeting, if one came
    after it; lines joined with ' / '; control bytes escaped; bounded."""
    cut = next(
        (i for i in range(len(raw)) if raw[i] == 0 and _plausible_greeting(raw, i)), len(raw)
    )
    text = raw[:cut].decode("utf-8", "replace")
    lines = [" ".join(line.split()) for line in text.splitlines()]
    joined = " / ".join(line for line in lines if line) or text
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in joined)
    return shown if len(shown) <= EXCERPT else shown[: EXCERPT - 3] + "..."


def _stale(reply_id: Any, request_id: int) -> bool:
    return isinstance(reply_id, int) and 0 < reply_id < request_id


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
