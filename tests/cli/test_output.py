"""Output never destroys, and signals never lose a report: -o through a
symlink, to a FIFO and to /dev/stdout; a full disk at -o and at plot -o; a
stdout that refuses; and two, three or five quick signals during a real run
(bridge.system.signals). Real processes throughout: the CLI in a subprocess, a real
Erlang node and Python worker where a run is signalled."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from bridge.report import schema
from bridge.system import signals
from tests.conftest import (
    FAST_ARGS,
    FIXTURES,
    ROOT,
    bridge_cmd,
    needs_erl,
    wait_gone,
    worker_pids,
)
from tests.fsutil import IS_ROOT, fill, small_fs

pytestmark = needs_erl

PYTHON_ONLY = [*FAST_ARGS, "--runtimes", "python"]
REPORT = FIXTURES / "report-hmac-sha1-v1.json"
F_SETPIPE_SZ = 1031  # Linux fcntl: a pipe's capacity


def run_to(out: str, *more: str, **kw):
    return bridge_cmd("run", "hmac-sha1", *PYTHON_ONLY, *more, "-o", out, **kw)


def test_output_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "real.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    done = run_to(str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert schema.load(target).results  # the target has the report
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # its mode kept
    assert sorted(os.listdir(elsewhere)) == ["real.json"]  # no temporary left
    # A dangling link: the report goes where it points.
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(elsewhere / "new.json")
    assert run_to(str(dangling)).returncode == 0
    assert dangling.is_symlink() and schema.load(elsewhere / "new.json").results
    # ... if that directory exists.
    nowhere = tmp_path / "nowhere.json"
    nowhere.symlink_to(tmp_path / "no" / "x.json")
    done = run_to(str(nowhere))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"bridge: error: --output {nowhere}: directory {tmp_path / 'no'}"
        f" (where {nowhere} points) does not exist"
    ]


def test_output_to_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = run_to(str(fifo))
    reader.join(timeout=30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO
    assert json.loads(got[0])["schema"] == "bridge.report/1"
    assert os.listdir(tmp_path) == ["fifo"]


# In a private mount namespace, /dev is a tmpfs of its own with the devices
# bridge needs bound in: were bridge to rename over /dev/stdout as root, it
# would replace only this copy of the link, and the check after it would say so.
PRIVATE_DEV = """
set -e
d=$(mktemp -d)
mount -t tmpfs tmpfs "$d"
for n in null zero full urandom random; do touch "$d/$n"; mount --bind "/dev/$n" "$d/$n"; done
ln -s /proc/self/fd "$d/fd"
ln -s /proc/self/fd/0 "$d/stdin"
ln -s /proc/self/fd/1 "$d/stdout"
ln -s /proc/self/fd/2 "$d/stderr"
mount --rbind "$d" /dev
"$@" || exit $?
test -L /dev/stdout && echo "/dev/stdout is still a link" >&2
"""


def test_output_to_dev_stdout_writes_stdout_and_keeps_the_link(tmp_path):
    argv = [sys.executable, "-m", "bridge", "run", "hmac-sha1", *PYTHON_ONLY]
    argv += ["--format", "json", "-o", "/dev/stdout"]
    if IS_ROOT:
        if shutil.which("unshare") is None:
            pytest.skip("no unshare(1) for a private mount namespace")
        argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", PRIVATE_DEV, "sh", *argv]
    else:
        argv = ["sh", "-c", '"$@" && test -L /dev/stdout && echo "/dev/stdout is still a link" >&2']
        argv += ["sh", sys.executable, "-m", "bridge", "run", "hmac-sha1", *PYTHON_ONLY]
        argv += ["--format", "json", "-o", "/dev/stdout"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    if IS_ROOT and done.returncode != 0 and "unshare" in done.stderr:
        pytest.skip(f"no private mount namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert "/dev/stdout is still a link" in done.stderr
    # The JSON view, then the report written to /dev/stdout: two documents.
    decoder = json.JSONDecoder()
    first, end = decoder.raw_decode(done.stdout)
    second, _ = decoder.raw_decode(done.stdout[end:].lstrip())
    assert first["schema"] == second["schema"] == "bridge.report/1"
    assert first["results"] == second["results"]


def test_a_full_disk_at_output_shows_the_results_and_keeps_the_report(tmp_path, no_leftovers):
    with small_fs(tmp_path / "small", "1m") as small:
        fill(small)
        out = small / "r.json"
        done = run_to(str(out))
        assert sorted(os.listdir(small)) == ["filler"]  # no temporary file left
    assert done.returncode == 1, done.stderr
    assert "hmac-sha1" in done.stdout  # the results were printed
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("bridge: error:")]
    head = f"bridge: error: {out}: cannot write (No space left on device); the report is kept in "
    assert line.startswith(head), line
    kept = Path(line[len(head) :])
    assert kept.parent == Path(os.environ["BRIDGE_CACHE_DIR"]) / "bridge" / "unsaved"
    assert kept.name.startswith("r-") and kept.suffix == ".json"
    assert schema.load(kept).results
    assert "Traceback" not in done.stderr


def test_plot_to_a_full_disk_is_one_line_and_leaves_no_file(tmp_path):
    pytest.importorskip("matplotlib")
    with small_fs(tmp_path / "small", "1m") as small:
        fill(small)
        out = small / "p.png"
        done = bridge_cmd("plot", str(REPORT), "--png", str(out))
        left = sorted(os.listdir(small))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"bridge: error: {out}: cannot write (No space left on device)"
    ]
    assert left == ["filler"]  # no 0-byte picture, no temporary


def test_plot_names_its_format_whatever_the_temporary_is_called(tmp_path):
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "p.png", tmp_path / "p.svg"
    assert bridge_cmd("plot", str(REPORT), "--png", str(png), "--svg", str(svg)).returncode == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:1000]
    assert sorted(os.listdir(tmp_path)) == ["p.png", "p.svg"]


def _to_dev_full(*args: str) -> subprocess.CompletedProcess:
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-m", "bridge", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=300,
        )


@pytest.mark.parametrize(
    "args",
    [
        ["report", str(REPORT)],
        ["report", str(REPORT), "--format", "json"],
        ["compare", str(REPORT), str(REPORT)],
        ["--help"],
        ["run", "--help"],
        ["--version"],
        ["list", "--format", "json"],
        ["show", "hmac-sha1"],
    ],
)
def test_stdout_on_a_full_device_is_one_line(args):
    done = _to_dev_full(*args)
    assert done.returncode == 1
    said = [line for line in done.stderr.splitlines() if not line.startswith("bridge: note:")]
    assert said == ["bridge: error: stdout: No space left on device"], done.stderr


def test_run_with_a_full_stdout_still_writes_or_keeps_the_report(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    done = _to_dev_full("run", "hmac-sha1", *PYTHON_ONLY, "-o", str(out))
    assert done.returncode == 1
    assert schema.load(out).results  # written, though stdout refused the table
    assert "bridge: error: stdout: No space left on device" in done.stderr.splitlines()
    assert "Traceback" not in done.stderr
    # No -o: the report is kept, and the line says where.
    done = _to_dev_full("run", "hmac-sha1", *PYTHON_ONLY)
    assert done.returncode == 1
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("bridge: error:")]
    head = "bridge: error: stdout: No space left on device; the report is kept in "
    assert line.startswith(head), line
    assert schema.load(Path(line[len(head) :])).results


def test_a_closed_stdout_ends_bridge_quietly(tmp_path):
    for args in (["report", str(REPORT)], ["run", "hmac-sha1", *PYTHON_ONLY]):
        r, w = os.pipe()
        os.close(r)  # nobody will read: every write is EPIPE
        try:
            done = subprocess.run(
                [sys.executable, "-m", "bridge", *args],
                stdout=w,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
                timeout=300,
            )
        finally:
            os.close(w)
        assert done.returncode == 1, done.stderr
        assert [x for x in done.stderr.splitlines() if x.startswith("bridge: error")] == []
        assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


# -- signals ----------------------------------------------------------------


def _start_run(tmp_path, out, *extra: str) -> tuple[subprocess.Popen, Path]:
    tmp = tmp_path / "tmp"  # a private TMPDIR: what bridge leaves there shows
    tmp.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "bridge", "run", "hmac-sha1", *extra, "-o", str(out)]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
        # A background job's SIGINT may be ignored; bridge's must not be.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    return proc, tmp


def _wait_measuring(before: set[int], kinds: int, timeout: float = 60) -> None:
    """Until `kinds` workers of this run are up and have used CPU time:
    the run is measuring (the first round has begun)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = worker_pids() - before
        if len(pids) >= kinds and all(_cpu_ticks(p) > 10 for p in pids):
            return
        time.sleep(0.05)
    raise AssertionError("the run did not start measuring")


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime


LONG = ["--samples", "200", "--sample-ms", "20", "--rounds", "5", "--warmup-ms", "5"]
LONG += ["--hw", "on", "--runtimes", "erlang,python"]


@pytest.mark.serial  # signals 20-300 ms apart, timed against the run
@pytest.mark.parametrize(
    "sig, gaps",
    [
        (signal.SIGINT, [0.05]),  # the second lands while the workers stop
        (signal.SIGTERM, [0.3]),  # ... or while the report is assembled
        (signal.SIGTERM, [0.02] * 4),  # five SIGTERMs 20 ms apart
    ],
    ids=["sigint-50ms", "sigterm-300ms", "sigterm-5x20ms"],
)
def test_quick_signals_keep_a_valid_partial_report(tmp_path, sig, gaps):
    out = tmp_path / "r.json"
    before = worker_pids()
    proc, tmp = _start_run(tmp_path, out, *LONG)
    try:
        _wait_measuring(before, kinds=2)
        time.sleep(0.5)  # a batch or so in
        proc.send_signal(sig)
        for gap in gaps:
            time.sleep(gap)
            if proc.poll() is not None:
                break
            proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], stderr
    assert "Traceback" not in stderr
    report = schema.load(out)  # valid, and whole
    assert any(e.kind == "interrupted" for e in report.errors)
    assert f"report written to {out}" in stderr
    assert not wait_gone(worker_pids() - before)
    assert os.listdir(tmp) == []  # no bridge-erl-*, bridge-files-* or other


@pytest.mark.serial  # signals timed against a blocked write
def test_signals_while_the_report_is_written_are_held_until_it_is(tmp_path, no_leftovers):
    # The report goes into a FIFO whose pipe holds 4 KiB and whose reader
    # does not read yet: bridge blocks in the write, with its results printed.
    # Three SIGTERMs then (the first of them after the measurement: there is
    # nothing left to stop) are held: bridge finishes the write once the
    # reader reads, and only then exits 143.
    fifo = tmp_path / "r.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.fcntl(reader, F_SETPIPE_SZ, 4096)
        proc, tmp = _start_run(tmp_path, fifo, *PYTHON_ONLY)
        try:
            deadline = time.monotonic() + 120
            while _pending(reader) < 4096:  # bridge is blocked writing the report
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.02)
            for _ in range(3):
                proc.send_signal(signal.SIGTERM)
                time.sleep(0.02)
            time.sleep(0.5)
            assert proc.poll() is None  # still writing: the signals wait
            os.set_blocking(reader, True)
            chunks = []
            while chunk := os.read(reader, 1 << 16):
                chunks.append(chunk)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    finally:
        os.close(reader)
    assert proc.returncode == 143, stderr
    assert signals.HELD_NOTE.decode().strip() in stderr
    assert "hmac-sha1" in stdout  # the results came first
    saved = tmp_path / "saved.json"
    saved.write_bytes(b"".join(chunks))
    assert schema.load(saved).results
    assert os.listdir(tmp) == []


def _pending(fd: int) -> int:
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, sys.byteorder)
