"""Faults injected for real, through the CLI: a worker that writes garbage or
a truncated frame, a worker that hangs, an openssl that fails or prints
nothing. In every case: exit status 1, a valid report with the failure in
`errors` (naming the runtime, with the tail of its stderr), the other
runtimes' results kept, and no process left behind.

(A worker killed mid-run and Ctrl-C / SIGTERM are in test_cli.py.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import procutil
from tests.conftest import ROOT, bridge_cmd, needs_erl, wait_gone, worker_pids

pytestmark = needs_erl


FAST = [
    "--samples",
    "4",
    "--sample-ms",
    "2",
    "--warmup-ms",
    "5",
    "--rounds",
    "2",
    "--openssl-runs",
    "1",
    "--hw",
    "on",
]


FAKE_WORKER = """#!{python}
# A Python worker that behaves until it is asked to measure, then breaks the
# protocol the way MODE says.
import os, sys
from bridge.wire import codec
from bridge.pyworker import worker
MODE = {mode!r}
real_send = codec.Channel.send
def send(self, term):
    reply = term[2] if isinstance(term, tuple) and len(term) == 3 else None
    if isinstance(reply, list) and any(k == b"loops" for k, _ in reply):
        sys.stderr.write("fake worker: breaking the protocol now (" + MODE + ")\\n")
        sys.stderr.flush()
        if MODE == "garbage":
            os.write(self.write_fd, b"\\x00\\x00\\x00\\x05junk!")
            return
        os.write(self.write_fd, b"\\x00\\x00\\x01\\x00short")  # 256 promised, 5 sent
        os._exit(1)
    return real_send(self, term)
codec.Channel.send = send
worker.main()
"""


def fake_python(tmp_path, mode: str) -> str:
    path = tmp_path / f"python-{mode}"
    path.write_text(FAKE_WORKER.format(python=sys.executable, mode=mode))
    path.chmod(0o755)
    return str(path)


def fake_openssl(tmp_path, mode: str) -> str:
    path = tmp_path / f"openssl-{mode}"
    speed = {"fail": 'echo "fake openssl: speed is broken" >&2; exit 3', "silent": "exit 0"}[mode]
    path.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        '  version) echo "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)";;\n'
        f"  speed) {speed};;\n"
        '  *) exec openssl "$@";;\n'
        "esac\n"
    )
    path.chmod(0o755)
    return str(path)


def assert_one_error_line(stderr: str, failed: str) -> None:
    """A failed run says so on stderr: one `bridge: error:` line naming what failed."""
    lines = [line for line in stderr.splitlines() if line.startswith("bridge: error:")]
    assert len(lines) == 1, stderr
    assert failed in lines[0], lines[0]


def check_fault(done, out, broken: str, kept: set[str], stderr_text: str):
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    report = json.loads(out.read_text())  # valid JSON, written
    errors = [e for e in report["errors"] if e["runtime"].startswith(broken)]
    assert errors, report["errors"]
    assert any(stderr_text in (e.get("stderr_tail") or "") + e["message"] for e in errors)
    # The message shows the tail too (wrapped to the width like every note).
    assert stderr_text in " ".join(done.stdout.split())
    assert_one_error_line(done.stderr, broken)
    kinds = {r["runtime"].split("@")[0] for r in report["results"]}
    assert kept <= kinds


@pytest.mark.parametrize("mode", ["garbage", "truncated"])
def test_worker_that_breaks_the_protocol(tmp_path, mode, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST,
        "--runtimes",
        "erlang,python",
        "--python",
        fake_python(tmp_path, mode),
        "-o",
        str(out),
    )
    check_fault(done, out, "python", {"erlang"}, "fake worker: breaking the protocol now")
    message = json.loads(out.read_text())["errors"][0]["message"]
    assert (
        ("broke the protocol" in message)
        if mode == "garbage"
        else ("truncated" in message or "exited" in message)
    )


@pytest.mark.parametrize(
    "mode, text", [("fail", "speed is broken"), ("silent", "printed no result")]
)
def test_openssl_that_fails_or_prints_nothing(tmp_path, mode, text, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST,
        "--runtimes",
        "erlang,openssl",
        "--openssl",
        fake_openssl(tmp_path, mode),
        "-o",
        str(out),
    )
    check_fault(done, out, "openssl", {"erlang"}, text)


@pytest.mark.serial  # a 2 s request timeout the others must meet
def test_worker_that_hangs_is_timed_out(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    before = worker_pids()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bridge",
            "run",
            "hmac-sha1",
            "--runtimes",
            "erlang,python",
            "--hw",
            "on",
            "--samples",
            "40",
            "--sample-ms",
            "20",
            "--rounds",
            "4",
            "--request-timeout",
            "2",
            "-o",
            str(out),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        py = set()
        while not py and time.monotonic() < deadline:
            py = {
                p
                for p in worker_pids() - before
                if b"-m\x00bridge.pyworker.worker" in Path(f"/proc/{p}/cmdline").read_bytes()
            }
            time.sleep(0.05)
        assert py, "python worker did not start"
        time.sleep(1.0)
        os.kill(py.pop(), signal.SIGSTOP)  # alive, but answers nothing
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr
    report = json.loads(out.read_text())
    hang = [e for e in report["errors"] if e["runtime"].startswith("python")]
    assert hang and "was killed" in hang[0]["message"]
    assert_one_error_line(stderr, "python")
    assert any(r["runtime"].startswith("erlang") for r in report["results"])
    assert not wait_gone(worker_pids() - before)


def test_reports_are_written_atomically(tmp_path):
    # The only file that ever appears is the finished report.
    out = tmp_path / "r.json"
    done = bridge_cmd("run", "hmac-sha1", *FAST, "--runtimes", "python", "-o", str(out))
    assert done.returncode == 0
    assert os.listdir(tmp_path) == ["r.json"]
    json.loads(out.read_text())


# Not serial: the signal follows the user code's processes, seen in /proc, not a delay.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_what_user_code_started_goes_with_bridge_on_a_signal(tmp_path, sig, no_leftovers):
    """Processes that user code started, daemons that left their session and
    cleared their environment included, do not outlive bridge when it is
    interrupted mid-run (as an ordinary user too: CI runs this file so)."""
    erl_tok, py_tok, sh_tok = procutil.token(), procutil.token(), procutil.token()
    exprs = (
        f'os:cmd("env -i setsid -f sleep {erl_tok}"), Data',
        procutil.py_daemon(py_tok),
        f"sh:sleep {sh_tok} & cat",
    )
    canary = procutil.token()
    argv = ("time", "--samples", "400", "--rounds", "20", "--sample-ms", "20", *exprs)

    def interrupt(proc: subprocess.Popen) -> None:
        deadline = time.monotonic() + 60
        while len(procutil.sleepers(erl_tok, py_tok)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert procutil.sleepers(erl_tok, py_tok), "the user code did not start its processes"
        proc.send_signal(sig)

    done = procutil.run_bridge(*argv, canary=canary, during=interrupt, timeout=120)
    assert done.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], done.stderr
    assert "Traceback" not in done.stderr
    assert not procutil.left_behind(canary, erl_tok, py_tok, sh_tok)
