"""OTP discovery on fake directory trees of every layout, and the real one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.system import discover


def fake_otp(root: Path, version: str, crypto: bool = True, releases: bool = True) -> Path:
    (root / "bin").mkdir(parents=True)
    erl = root / "bin" / "erl"
    erl.write_text(fake_erl(root, version, crypto, releases))
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


def fake_erl(root: Path, version: str, crypto: bool, releases: bool) -> str:
    """An erl that answers discovery's probe (otp.PROBE_SCRIPT) as a real one
    would, from its fake tree."""
    lines = [
        f"otp_release:{version.split('.')[0]}",
        "erts_version:14.2",
        f"root_dir:{root}",
        *([f"otp_version:{version}"] if releases else []),
        *(["crypto_version:5.4", "crypto_lib:OpenSSL 3.0.0 (fake)"] if crypto else []),
        *([] if crypto else ["crypto_error:no crypto application (fake)"]),
    ]
    return "#!/bin/sh\n" + "".join(f"echo 'bridge-probe:{line}'\n" for line in lines)


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


def test_every_layout_is_found(layout):
    home, env, brew, _ = layout
    found = {f.otp_version: f for f in discover.discover(home, env, brew)}
    sources = {v: f.sources for v, f in found.items()}
    assert sources["26.2.1"] == ["asdf"]
    assert sources["27.0"] == ["mise"]
    assert sources["24.3.4"] == ["kerl"]
    assert sources["23.3"] == ["kerl"]  # from `kerl list installations`
    assert sources["25.3"] == ["homebrew"]
    assert sources["22.3.4"] == ["BRIDGE_OTP_PATH"]
    assert found["26.2.1"].erts_version == "14.2" and found["26.2.1"].crypto_version == "5.4"
    assert found["26.2.1"].libcrypto.startswith("unknown")  # our fake NIF is not an ELF
    assert not found["26.2.1"].problem


def test_broken_installations_are_listed_with_the_reason(layout):
    home, env, brew, tmp = layout
    by_root = {f.root.name: f for f in discover.discover(home, env, brew)}
    assert "no crypto application" in by_root["otp-21"].problem
    # No releases/ in the layout, but its erl answers: it says its own release.
    assert not by_root["otp-x"].problem and by_root["otp-x"].otp_version == "0"
    assert "not an OTP installation" in by_root["nowhere"].problem


def test_group_resolution(layout):
    home, env, brew, _ = layout
    assert discover.resolve_group("otp:27", home, env) == [
        str(home / ".local/share/mise/installs/erlang/27.0/bin/erl")
    ]
    assert discover.resolve_group("otp:21", home, env) == []  # broken: no crypto


def test_each_version_manager_s_own_variables(tmp_path):
    """Where asdf, mise, kerl and Homebrew put OTPs when their variables move
    them: ASDF_DATA_DIR, MISE_DATA_DIR, XDG_DATA_HOME, KERL_BASE_DIR (its
    otp_installations record), KERL_DEFAULT_INSTALL_DIR, HOMEBREW_PREFIX (its
    Cellar's every version, opt/'s linked one) and Linux's ~/.linuxbrew."""
    home = tmp_path / "home"
    home.mkdir()
    fake_otp(tmp_path / "asdf-data" / "installs" / "erlang" / "26.1", "26.1")
    fake_otp(tmp_path / "mise-data" / "installs" / "erlang" / "27.1", "27.1")
    fake_otp(tmp_path / "xdg" / "mise" / "installs" / "erlang" / "27.2", "27.2")
    recorded = fake_otp(tmp_path / "anywhere" / "otp-25.1", "25.1")
    kerl_base = tmp_path / "kerl-base"
    kerl_base.mkdir()
    (kerl_base / "otp_installations").write_text(f"25.1 {recorded}\n")
    fake_otp(tmp_path / "kerl-default" / "24.1", "24.1")
    brew = tmp_path / "brew"
    cellar = fake_otp(brew / "Cellar" / "erlang" / "28.0.1" / "lib" / "erlang", "28.0.1")
    fake_otp(brew / "Cellar" / "erlang@26" / "26.0.2" / "lib" / "erlang", "26.0.2")
    (brew / "opt").mkdir()
    (brew / "opt" / "erlang").symlink_to(cellar.parent.parent)  # the linked version
    fake_otp(home / ".linuxbrew" / "opt" / "erlang@23" / "lib" / "erlang", "23.0")
    base_env = {"HOME": str(home), "PATH": str(tmp_path / "no-bin")}
    env = {
        **base_env,
        "ASDF_DATA_DIR": str(tmp_path / "asdf-data"),
        "MISE_DATA_DIR": str(tmp_path / "mise-data"),
        "KERL_BASE_DIR": str(kerl_base),
        "KERL_DEFAULT_INSTALL_DIR": str(tmp_path / "kerl-default"),
        "HOMEBREW_PREFIX": str(brew),
    }
    found = {f.otp_version: f.sources for f in discover.discover(home, env, ())}
    assert found["26.1"] == ["asdf"]
    assert found["27.1"] == ["mise"] and "27.2" not in found  # MISE_DATA_DIR wins
    assert found["25.1"] == ["kerl"] and found["24.1"] == ["kerl"]
    # opt/erlang and Cellar/erlang/28.0.1 are one installation, listed once.
    assert found["28.0.1"] == ["homebrew"] and found["26.0.2"] == ["homebrew"]
    assert found["23.0"] == ["homebrew"]
    # Without MISE_DATA_DIR, mise's data is under XDG_DATA_HOME.
    xdg = {**base_env, "XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert ("mise", tmp_path / "xdg/mise/installs/erlang/27.2") in discover.candidates(
        home, xdg, ()
    )
