"""The greeting, read with care: start-up text on a worker's standard output
(a ~/.erlang, a sitecustomize.py) is named as such, never read as a frame.
Fake workers are small Python programs that write exact bytes; the real
Erlang node and Python worker follow."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from bridge.errors import WorkerError
from bridge.system import otp
from bridge.wire import codec
from bridge.wire.port import Launch, Worker, excerpt
from tests.conftest import FAST_ARGS, ROOT, bridge_cmd, needs_erl, own_stderr

GREETING = codec.frame((codec.atom("ready"), 1, [(codec.atom("kind"), codec.atom("fake"))]))


def fake(tmp_path, body: str, *, hint: str = "") -> Worker:
    """A worker that runs `body` with `out` bound to its raw stdout, after
    which it serves nothing and waits for the end of its input."""
    script = tmp_path / "fake_worker.py"
    script.write_text(
        "import os, sys, time\n"
        "out = sys.stdout.buffer\n"
        f"GREETING = {GREETING!r}\n"
        f"{body}\n"
        "out.flush()\n"
        "sys.stdin.read()\n"
    )
    return Worker("fake", [sys.executable, str(script)], dict(os.environ), startup_hint=hint)


def failure(worker: Worker) -> str:
    with pytest.raises(WorkerError) as caught, worker:
        pass
    return caught.value.one_line()


def test_a_clean_greeting_is_read_and_nothing_after_it(tmp_path, no_leftovers):
    # The reply that follows the greeting in the same write stays unread
    # until it is asked for: the greeting is read byte-exact.
    ping = codec.frame((codec.atom("ok"), 1, codec.atom("pong")))
    with fake(tmp_path, "out.write(GREETING + " + repr(ping) + ")") as w:
        assert w.greeting == {"kind": "fake"}
        assert w._channel.receive(timeout=5) == ("ok", 1, "pong")


def test_text_then_greeting_is_named(tmp_path):
    w = fake(tmp_path, "out.write(b'hello from .erlang\\n' + GREETING)", hint="a ~/.erlang?")
    assert failure(w) == "fake printed 'hello from .erlang' before its greeting (a ~/.erlang?)"


def test_text_then_exit_gives_the_exit_status(tmp_path):
    w = fake(tmp_path, "out.write(b'no crypto for you\\n'); out.flush(); os._exit(3)")
    assert failure(w) == "fake printed 'no crypto for you' before its greeting (exit status 3)"


def test_text_then_silence_fails_fast_not_at_the_start_timeout(tmp_path):
    w = fake(tmp_path, "out.write(b'hello\\n'); out.flush(); time.sleep(60)")
    w.start_timeout = 30
    started = time.monotonic()
    message = failure(w)
    assert message == "fake printed 'hello' before its greeting"
    assert time.monotonic() - started < 20  # not the 30 s start timeout


def test_lines_are_joined_and_control_bytes_escaped():
    raw = b"line one\n\n  line\ttwo  \n\x00\x00\x00\x05junk!\x1b[0m"
    assert excerpt(raw) == "line one / line two / \\x00\\x00\\x00\\x05junk!\\x1b[0m"


def test_endless_text_is_bounded(tmp_path):
    w = fake(tmp_path, "while True: out.write(b'y\\n' * 1000); out.flush()")
    message = failure(w)
    assert message.startswith("fake printed 'y / y / y")
    assert len(message) < 260


def test_a_frame_that_is_not_a_term_is_text(tmp_path):
    # "hell" read as a length is 1751477356: never a greeting.
    w = fake(tmp_path, "out.write(b'hell'); out.flush(); os._exit(0)")
    assert failure(w) == "fake printed 'hell' before its greeting (exit status 0)"


def test_a_truncated_greeting_is_a_protocol_error(tmp_path):
    w = fake(tmp_path, "out.write(GREETING[:9]); out.flush(); os._exit(0)")
    assert "broke the protocol: truncated frame" in failure(w)


def test_silence_still_times_out(tmp_path):
    w = fake(tmp_path, "time.sleep(60)")
    w.start_timeout = 1
    assert "did not send its ready message within 1 s and was killed" in failure(w)


@needs_erl
def test_erlang_reading_a_printing_dot_erlang_is_named(tmp_path, no_leftovers):
    # The node as bridge started it before -boot no_dot_erlang: the message
    # the issue asked for, instead of "a frame of 1751477356 bytes".
    home = tmp_path / "home"
    home.mkdir()
    (home / ".erlang").write_text('io:format("hello from .erlang~n").\n')
    inst = otp.locate(None)
    beams = otp.worker_beams(inst)
    argv = [str(inst.erl), "-noshell", "-noinput", "-pa", str(beams), "-s", "bridge_worker", "main"]
    with otp.NodeDir() as scratch:
        env = {**otp.node_env(scratch.crash_dump), "HOME": str(home)}
        w = Worker(
            "erlang",
            argv,
            env,
            startup_hint="a ~/.erlang?",
            launch=Launch(cwd=str(scratch.path)),
        )
        assert failure(w) == (
            "erlang printed 'hello from .erlang' before its greeting (a ~/.erlang?)"
        )


@needs_erl
def test_erlang_crash_before_greeting_names_its_crash_dump(tmp_path, no_leftovers):
    # A damaged .beam (the cache is checked first, so this one is put on the
    # code path by hand): the node prints its boot failure and writes a dump,
    # which goes to its private directory and is named in the error.
    inst = otp.locate(None)
    beams = tmp_path / "beams"
    beams.mkdir()
    for module in otp.WORKER_MODULES:
        data = (otp.worker_beams(inst) / f"{module}.beam").read_bytes()
        (beams / f"{module}.beam").write_bytes(data[:100] if module == "bridge_ops" else data)
    argv = [str(inst.erl), "-noshell", "-noinput", "-pa", str(beams), "-s", "bridge_worker", "main"]
    scratch = otp.NodeDir()
    try:
        w = Worker(
            "erlang",
            argv,
            otp.node_env(scratch.crash_dump),
            postmortem=scratch.postmortem,
            launch=Launch(cwd=str(scratch.path)),
        )
        message = failure(w)
        assert message.startswith('erlang printed \'{"init terminating in do_boot"')
        assert f"; crash dump: {scratch.crash_dump} (init terminating in do_boot" in message
        scratch.close()
        assert scratch.crash_dump.exists()  # kept: the message names it
    finally:
        shutil.rmtree(scratch.path, ignore_errors=True)
    assert not (tmp_path / "erl_crash.dump").exists()


def python_with_sitecustomize(tmp_path, code: str) -> str:
    """A --python that imports a sitecustomize.py running `code` first."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(code)
    wrapper = tmp_path / "python-with-site"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def test_python_worker_text_before_greeting_is_one_clear_line(tmp_path, no_leftovers):
    python = python_with_sitecustomize(tmp_path, 'print("hello from sitecustomize", flush=True)\n')
    done = bridge_cmd("run", "hmac-sha1", *FAST_ARGS, "--runtimes", "python", "--python", python)
    assert done.returncode == 1, done.stderr
    assert own_stderr(done.stderr) == [
        "bridge: error: nothing was measured: python printed 'hello from sitecustomize'"
        " before its greeting (a sitecustomize.py, usercustomize.py or .pth file?)"
    ]


def test_python_worker_buffered_start_up_print_goes_to_stderr(tmp_path, no_leftovers):
    # Not yet written out when bridge.pyworker.worker takes over fd 1 (a buffered
    # stdout): the worker flushes it to stderr, and the run goes on.
    python = python_with_sitecustomize(tmp_path, 'print("hello from sitecustomize")\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "bridge", "run", "hmac-sha1", *FAST_ARGS]
        + ["--runtimes", "python", "--python", python, "-o", str(out)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["results"]
