"""scripts/build-noasm-openssl, the tests' own OpenSSL without assembler:
once built it answers from its stamp in a fraction of a second; what it
built has no capability vector and runs on its own library; a mirror that
does not answer is a failure saying so, with nothing on stdout and nothing
built, remembered for the next caller unless it asks to retry."""

from __future__ import annotations

import os
import subprocess
import sys

from bridge.system import libbuild, libcrypto
from tests.conftest import ROOT, STARTING_ENV

SCRIPT = str(ROOT / "scripts" / "build-noasm-openssl")


def test_once_built_it_is_quick_and_quiet(noasm):
    done = subprocess.run(
        [sys.executable, SCRIPT], capture_output=True, text=True, env=STARTING_ENV, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == str(noasm.prefix)
    assert done.stderr.count("\n") == 1 and "cached in" in done.stderr, done.stderr


def test_what_it_built_has_no_assembler_and_runs_on_its_own_library(noasm):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "OPENSSL_ia32cap")}
    out = subprocess.run(
        [str(noasm.openssl), "version", "-a"], capture_output=True, text=True, env=env
    ).stdout
    version, clues = libbuild.from_version_a(out.splitlines())
    assert version.startswith("OpenSSL 3.") and "(Library: OpenSSL 3." in out
    assert [c.sign.value for c in clues] == ["no-capvector"]
    # Its RUNPATH finds its own library, as a process's maps show.
    (mapped,) = libcrypto.probe_cli(str(noasm.openssl), env)
    assert mapped.same_file(noasm.libcrypto)
    assert libcrypto.soname_of(noasm.libcrypto) == "libcrypto.so.3"
    assert libbuild.asm_modules(noasm.libcrypto.read_bytes()) == 0


def test_a_mirror_that_does_not_answer_fails_with_its_reason(tmp_path):
    # A fresh cache, so that nothing cached answers; a port nothing listens on.
    env = {
        **STARTING_ENV,
        "BRIDGE_CACHE_DIR": str(tmp_path),
        "BRIDGE_TRIXIE_MIRROR": "http://127.0.0.1:9/debian",
    }
    done = subprocess.run(
        [sys.executable, SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 1 and done.stdout == ""
    said = done.stderr.strip().splitlines()[-1]
    assert said.startswith("build-noasm-openssl: failed: no source package openssl in trixie")
    assert "apt-get update said:" in said and "127.0.0.1" in said, said
    assert not (tmp_path / "bridge" / "runtimes" / "noasm-openssl").exists()
    # Asked again, as the next test session would: the reason at once, no new attempt.
    again = subprocess.run(
        [sys.executable, SCRIPT], capture_output=True, text=True, env=env, timeout=60
    )
    assert again.returncode == 1 and again.stdout == ""
    assert "apt-get update (trixie" not in again.stderr, again.stderr  # no new attempt
    assert "127.0.0.1" in again.stderr and "--retry builds again" in again.stderr
    # --retry (make test's) tries again.
    retried = subprocess.run(
        [sys.executable, SCRIPT, "--retry"], capture_output=True, text=True, env=env, timeout=300
    )
    assert retried.returncode == 1 and "apt-get update (trixie" in retried.stderr
