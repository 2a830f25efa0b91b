"""OTP discovery on fake directory trees of every layout, and the real one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bridge.system import discover
from tests.conftest import needs_erl


def fake_otp(root: Path, version: str, crypto: bool = True, releases: bool = True) -> Path:
    (root / "bin").mkdir(parents=True)
    erl = root / "bin" / "erl"
    erl.write_text(f"#!/bin/sh\necho {version.split('.')[0]}\n")  # prints its release
    erl.chmod(0o755)
    if releases:
        rel = root / "releases" / version.split(".")[0]
        rel.mkdir(parents=True)
        (rel / "OTP_VERSION").write_text(version + "\n")
    (root / "erts-14.2").mkdir()
    if crypto:
        (root / "lib" / "crypto-5.4" / "priv" / "lib").mkdir(parents=True)
        (root / "lib" / "crypto-5.4" / "priv" / "lib" / "crypto.so").write_bytes(b"not an ELF")
    return root


@pytest.fixture
def layout(tmp_path):
    home = tmp_path / "home"
    fake_otp(home / ".asdf" / "installs" / "erlang" / "26.2.1", "26.2.1")
    fake_otp(home / ".local" / "share" / "mise" / "installs" / "erlang" / "27.0", "27.0")
    fake_otp(home / "kerl" / "24.3.4", "24.3.4")
    custom = fake_otp(tmp_path / "kerl-custom" / "23.3", "23.3")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    kerl = bindir / "kerl"
    kerl.write_text(f"#!/bin/sh\necho '23.3 {custom}'\n")
    kerl.chmod(0o755)
    brew = tmp_path / "brew"
    fake_otp(brew / "opt" / "erlang@25" / "lib" / "erlang", "25.3")
    good = fake_otp(tmp_path / "opt" / "otp-22", "22.3.4")
    no_crypto = fake_otp(tmp_path / "opt" / "otp-21", "21.3", crypto=False)
    no_releases = fake_otp(tmp_path / "opt" / "otp-x", "0", releases=False)
    missing = tmp_path / "opt" / "nowhere"
    env = {
        "HOME": str(home),
        "PATH": str(bindir),
        "BRIDGE_OTP_PATH": ":".join(map(str, [good, no_crypto, no_releases, missing])),
    }
    return home, env, (str(brew),), tmp_path


@needs_erl
def test_the_real_installation():
    found = discover.discover(env=dict(os.environ))
    real = Path(shutil.which("erl")).resolve().parent.parent
    item = next(f for f in found if f.root == real)
    assert "PATH" in item.sources and item.otp_version and item.crypto_version
    assert not item.problem
    assert "libcrypto" in item.libcrypto
