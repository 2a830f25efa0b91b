"""The worker cache heals: each entry is written whole (staging directory,
digests last, rename), checked against its recorded sha256 before use, and
compiled again, once and with a warning, when the check fails. Concurrent
runs compiling into the same empty cache stay safe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from bridge.errors import BridgeWarning
from bridge.system import otp
from tests.conftest import FAST_ARGS, ROOT, bridge_cmd, needs_erl, own_stderr

pytestmark = needs_erl


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("BRIDGE_CACHE_DIR", str(root))
    return root


@pytest.fixture(scope="module")
def inst() -> otp.Installation:
    return otp.locate(None)


def build_quietly(inst) -> otp.WorkerBuild:
    with warnings.catch_warnings():
        warnings.simplefilter("error", BridgeWarning)  # none expected
        return otp.build_worker(inst)


def test_an_entry_is_compiled_sealed_and_then_served_from_the_cache(cache, inst):
    first = build_quietly(inst)
    assert first.note == "compiled"
    assert first.path.parent == cache / "bridge" / "beam"
    # The digest file is sha256sum's own format.
    check = subprocess.run(
        ["sha256sum", "-c", otp.DIGESTS], cwd=first.path, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert sorted(p.name for p in first.path.iterdir()) == sorted(
        [otp.DIGESTS, *(f"{m}.beam" for m in otp.WORKER_MODULES)]
    )
    again = build_quietly(inst)
    assert (again.path, again.note) == (first.path, "cached, verified")
    assert [p.name for p in first.path.parent.iterdir()] == [first.path.name]  # no staging left


DAMAGE = {
    "truncated": lambda e: (e / "bridge_ops.beam").write_bytes(
        (e / "bridge_ops.beam").read_bytes()[:100]
    ),
    "empty beam": lambda e: (e / "bridge_worker.beam").write_bytes(b""),
    "beam missing": lambda e: (e / "bridge_ops.beam").unlink(),
    "digests missing": lambda e: (e / otp.DIGESTS).unlink(),
    "digests garbled": lambda e: (e / otp.DIGESTS).write_bytes(b"\xff\x00 not a digest"),
    "empty directory": lambda e: [p.unlink() for p in e.iterdir()],
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_entry_is_compiled_again_once_with_a_warning(cache, inst, damage):
    entry = build_quietly(inst).path
    DAMAGE[damage](entry)
    assert otp.verify(entry) is not None
    with pytest.warns(BridgeWarning, match="failed its check") as caught:
        healed = otp.build_worker(inst)
    assert len(caught) == 1
    assert healed.path == entry and otp.verify(entry) is None
    assert healed.note.startswith("compiled again: the cached copy failed its check: ")
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # nothing set aside left


def test_verify_says_what_is_wrong(cache, inst):
    entry = build_quietly(inst).path
    assert otp.verify(entry) is None
    assert otp.verify(entry.parent / "nothing-here") == "missing"
    DAMAGE["truncated"](entry)
    assert otp.verify(entry) == "bridge_ops.beam, 100 bytes, does not match its recorded sha256"


SCRIPT = """
import sys
from bridge.system import otp
build = otp.build_worker(otp.locate(None))
print(build.path, build.note, otp.verify(build.path))
"""


def compile_at_once(n: int, cache: Path) -> list[str]:
    env = {**os.environ, "BRIDGE_CACHE_DIR": str(cache)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(out.split())
    return outs


def test_concurrent_runs_compiling_into_an_empty_cache_agree(cache):
    outs = compile_at_once(4, cache)
    assert len({o[0] for o in outs}) == 1  # one entry for all of them
    assert all(o[-1] == "None" for o in outs)  # each one verified what it got
    beam = cache / "bridge" / "beam"
    assert [p.name for p in beam.iterdir()] == [Path(outs[0][0]).name]


def test_concurrent_runs_healing_one_damaged_entry_agree(cache, inst):
    entry = build_quietly(inst).path
    DAMAGE["truncated"](entry)
    outs = compile_at_once(3, cache)
    assert {o[0] for o in outs} == {str(entry)}
    assert all(o[-1] == "None" for o in outs)
    assert otp.verify(entry) is None
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]


def test_a_truncated_cache_entry_heals_through_the_cli(tmp_path, cache, inst, no_leftovers):
    # The case: bridge_ops.beam cut to 100 bytes. Before, every run
    # failed with "frame of 2065852782 bytes" and left an erl_crash.dump in
    # the current directory.
    entry = build_quietly(inst).path
    DAMAGE["truncated"](entry)
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run", "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "-o", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    warning_lines = [line for line in own_stderr(done.stderr) if "warning" in line]
    assert warning_lines == [
        f"bridge: warning: the cached Erlang worker in {entry} failed its check:"
        " bridge_ops.beam, 100 bytes, does not match its recorded sha256; compiling it again"
    ]
    startup = json.loads(out.read_text())["runtimes"][0]["startup"]
    assert startup["worker_cache"].startswith("compiled again: the cached copy failed its check")
    assert otp.verify(entry) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "r.json"]


def test_a_beam_directory_that_links_out_of_the_cache_is_never_written(tmp_path, cache, inst):
    """The cache's `beam` a link to another directory (/etc in the issue):
    bridge wrote its worker there. Now the worker compiles into a private
    temporary directory, with one warning naming the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (cache / "bridge").mkdir(parents=True)
    (cache / "bridge" / "beam").symlink_to(outside)
    with pytest.warns(BridgeWarning, match="beam: a symbolic link") as caught:
        build = otp.build_worker(inst)
    assert len(caught) == 1
    assert list(outside.iterdir()) == []
    assert not build.path.is_relative_to(cache)
    assert build.note.startswith("compiled into a temporary directory")
    assert otp.verify(build.path) is None


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_an_entry_or_beam_that_is_a_link_or_fifo_is_compiled_again(
    tmp_path, cache, inst, planted, monkeypatch
):
    """An entry that is a link (to a copy of good beams elsewhere) or a beam
    that is a FIFO: neither is read through; the entry is replaced."""
    monkeypatch.setattr(otp, "_private", None)  # as a new process: no private copy yet
    entry = build_quietly(inst).path
    if planted == "link":
        elsewhere = tmp_path / "elsewhere"
        entry.rename(elsewhere)
        entry.symlink_to(elsewhere)
    else:
        (entry / "bridge_ops.beam").unlink()
        os.mkfifo(entry / "bridge_ops.beam")
    with pytest.warns(BridgeWarning, match="failed its check"):
        healed = otp.build_worker(inst)
    assert healed.path == entry and not entry.is_symlink()
    assert otp.verify(entry) is None
    if planted == "link":
        assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir())  # left as it was


def test_a_beam_directory_every_user_may_write_in_is_not_used(tmp_path, cache, inst, monkeypatch):
    """Whoever can write in `beam` can change the code the worker loads
    (digests and all): such a directory is left alone, the worker compiled
    privately, with one warning saying why."""
    monkeypatch.setattr(otp, "_private", None)  # as a new process: no private copy yet
    beam = cache / "bridge" / "beam"
    beam.mkdir(parents=True)
    os.chmod(beam, 0o777)
    with pytest.warns(BridgeWarning, match="beam: writable by every user") as caught:
        build = otp.build_worker(inst)
    assert len(caught) == 1
    assert list(beam.iterdir()) == []
    assert not build.path.is_relative_to(cache)
    assert otp.verify(build.path) is None
