"""bridge.report.schema's writing (write_atomic, output_target, keep) and
bridge.system.signals' holding, in-process. The CLI cases, with real processes,
are in tests/cli/test_output.py."""

from __future__ import annotations

import os
import signal
import socket
import stat
import threading

import pytest

from bridge.errors import UsageError
from bridge.system import output, signals


def test_a_symlink_is_written_through_and_kept(tmp_path):
    (tmp_path / "d").mkdir()
    target = tmp_path / "d" / "real.json"
    target.write_text("old")
    target.chmod(0o604)
    (tmp_path / "hop").symlink_to("d/real.json")
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "hop")  # two links deep
    output.write_atomic(link, "new")
    assert link.is_symlink() and (tmp_path / "hop").is_symlink()
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    assert sorted(os.listdir(tmp_path / "d")) == ["real.json"]


def test_a_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        output.write_atomic(tmp_path / "r.json", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o640


def test_targets_are_resolved_without_touching_anything(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    assert output.output_target(tmp_path / "fifo").direct
    assert output.output_target("/dev/null").direct
    assert output.output_target("/dev/stdout").direct  # /proc/self/fd/1: never renamed over
    dash = output.output_target("-")
    assert dash.direct and dash.stdout
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(UsageError, match="too many levels"):
        output.output_target(tmp_path / "loop")
    with pytest.raises(UsageError, match="is a directory"):
        output.output_target(tmp_path)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(UsageError, match="socket"):
            output.output_target(tmp_path / "sock")
    finally:
        sock.close()


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    output.write_atomic(fifo, "through the pipe")
    reader.join(timeout=10)
    assert got == ["through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_device_error_is_an_output_error():
    with pytest.raises(output.OutputError) as caught:
        output.write_atomic("/dev/full", "x" * 10)
    assert caught.value.reason == "No space left on device"
    assert str(caught.value) == "/dev/full: cannot write (No space left on device)"


def test_keep_tries_each_place_in_turn(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")  # a file where a directory should be
    kept = output.keep("report", "r.json", [blocked / "unsaved", tmp_path / "ok"])
    assert kept.parent == tmp_path / "ok" and kept.name.startswith("r-")
    assert kept.suffix == ".json" and kept.read_text() == "report"
    with pytest.raises(output.OutputError, match="file/unsaved"):
        output.keep("report", "r.json", [blocked / "unsaved"])


@pytest.fixture
def handlers():
    saved = {s: signal.getsignal(s) for s in signals.STATUS}
    signals.reset()
    yield
    for s, h in saved.items():
        signal.signal(s, h)
    signals.reset()


def test_the_first_signal_raises_and_later_ones_wait_until_release(handlers):
    signals.install()
    with signals.guarding():
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            signal.sigtimedwait([], 0.01)  # let the handler run
        for _ in range(4):  # held: recorded, not raised
            os.kill(os.getpid(), signal.SIGINT)
        assert signals.count() == 5
        signals.release()
        with pytest.raises(KeyboardInterrupt):  # the report is safe: now it acts
            os.kill(os.getpid(), signal.SIGINT)
    assert signals.status() == 143  # the first signal's


def test_hold_covers_a_first_signal_after_the_measurement(handlers):
    signals.install()
    signals.hold()  # outside guarding(): nothing is held
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
    with signals.guarding():
        signals.hold()
        os.kill(os.getpid(), signal.SIGINT)  # held
    assert signals.count() == 2 and signals.status() == 130


def test_a_signal_while_waiting_for_a_fifo_reader_gives_up(handlers, tmp_path):
    # Nobody opens the FIFO: a held signal ends the wait (the CLI then keeps
    # the report in its fallback file) instead of blocking for ever.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    signals.install()
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    with signals.guarding():
        signals.hold()
        timer.start()
        with pytest.raises(output.OutputError, match="no reader on the FIFO"):
            output.write_atomic(fifo, "x")
    timer.join()
    assert signals.status() == 143
