"""--libcrypto's parts that need no runtime: reading a library's soname and
version from its bytes, finding the library in a directory or an OpenSSL
prefix, and reading /proc/PID/maps. The files are the real libcrypto this
test process has loaded (Python's _hashlib), copied where a test needs one."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from bridge.errors import UsageError
from bridge.system import libcrypto


@pytest.fixture(scope="module")
def system_libcrypto() -> Path:
    import _hashlib  # noqa: F401  - loads libcrypto into this process

    (found, *_) = libcrypto.mapped(os.getpid())
    return Path(found.path)


def test_soname_and_version_come_from_the_library_itself(system_libcrypto):
    data = system_libcrypto.read_bytes()
    assert libcrypto.elf_soname(data).startswith("libcrypto.so.")
    text = libcrypto.version_text(data)
    assert text and text.startswith("OpenSSL ") and text.split()[1][0].isdigit()
    # Not a shared object, or no soname: None, never a guess.
    assert libcrypto.elf_soname(b"#!/bin/sh\n" + bytes(100)) is None
    assert libcrypto.elf_soname(data[:200]) is None
    assert libcrypto.soname_of(Path("/no/such/file")) is None


def test_soname_of_a_hand_made_32_bit_big_endian_object():
    # ELF32, MSB: one PT_LOAD covering the file, one PT_DYNAMIC with
    # DT_STRTAB and DT_SONAME (the other byte order and width than x86_64).
    strtab = b"\x00libcrypto.so.1.0.0\x00"
    ph_off, dyn_off, str_off = 52, 52 + 2 * 32, 52 + 2 * 32 + 3 * 8
    header = b"\x7fELF" + bytes([1, 2, 1]) + bytes(9)
    header += struct.pack(">HHIIIIIHHHHHH", 3, 20, 1, 0, ph_off, 0, 0, 52, 32, 2, 40, 0, 0)
    load = struct.pack(">IIIIIIII", 1, 0, 0x1000, 0x1000, 4096, 4096, 5, 4096)
    dynamic = struct.pack(">IIIIIIII", 2, dyn_off, 0x1000 + dyn_off, 0, 24, 24, 6, 4)
    dyn = struct.pack(">iIiIiI", 5, 0x1000 + str_off, 14, 1, 0, 0)
    data = header + load + dynamic + dyn + strtab
    assert libcrypto.elf_soname(data) == "libcrypto.so.1.0.0"


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"\x00OpenSSL 1.1.1w  11 Sep 2023\x00", "OpenSSL 1.1.1w  11 Sep 2023"),
        (b"\x00OpenSSL 3.5.0-beta1 18 Mar 2025\x00", "OpenSSL 3.5.0-beta1 18 Mar 2025"),
        (b"\x00LibreSSL 3.8.2\x00", "LibreSSL 3.8.2"),
        # An error message naming a version is not the version constant.
        (
            b"\x00needs OpenSSL 3.0.0\x00OpenSSL 3.0.19 27 Jan 2026\x00",
            "OpenSSL 3.0.19 27 Jan 2026",
        ),
        (b"\x00nothing here\x00", None),
    ],
)
def test_version_text(data, expected):
    assert libcrypto.version_text(data) == expected


def test_a_directory_or_an_install_prefix(tmp_path, system_libcrypto):
    lib64 = tmp_path / "prefix" / "lib64"
    lib64.mkdir(parents=True)
    soname = libcrypto.soname_of(system_libcrypto)
    shutil.copy(system_libcrypto, lib64 / soname)
    (lib64 / "libcrypto.so.3.debug").write_bytes(b"not an ELF object")
    for given in (tmp_path / "prefix", lib64):
        found = libcrypto.resolve(str(given))
        assert found.dir == lib64 and found.sonames == [soname]
        lib = found.by_soname[soname]
        assert lib.file == lib64 / soname and lib.given == str(given)
        assert lib.version == lib.version_text.split()[1]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p / "missing", "no such directory"),
        (lambda p: (p / "f").write_text("x") and p / "f", "not a directory"),
        (lambda p: p, "no libcrypto.so.N in it, nor in its lib64/ or lib/"),
    ],
)
def test_bad_directories_are_usage_errors(tmp_path, make, message):
    with pytest.raises(UsageError, match=message):
        libcrypto.resolve(str(make(tmp_path)))


def test_maps_are_read_with_device_and_inode(tmp_path):
    f = tmp_path / "libcrypto.so.3"
    f.write_bytes(b"x")
    st = os.stat(f)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    maps = (
        f"7f00-7f10 r--p 00000000 {major:02x}:{minor:02x} {st.st_ino}    {f}\n"
        f"7f10-7f20 r-xp 00010000 {major:02x}:{minor:02x} {st.st_ino}    {f}\n"
        "7f20-7f30 r--p 00000000 fe:00 12 /usr/lib/x86_64-linux-gnu/libssl.so.3\n"
        "7f30-7f40 rw-p 00000000 00:00 0 \n"
        "7f40-7f50 r--p 00000000 fe:00 99 /old/libcrypto.so.3 (deleted)\n"
    )
    found = libcrypto.parse_maps(42, maps)
    assert [m.path for m in found] == [str(f), "/old/libcrypto.so.3 (deleted)"]
    assert found[0].same_file(f) and not found[1].same_file(f)
    # A copy has the same bytes but is another file.
    copy = tmp_path / "copy.so"
    shutil.copy(f, copy)
    assert not found[0].same_file(copy)
    assert found[0].text().startswith(f"/proc/42/maps: {f} (device {major:02x}:{minor:02x}")


def test_the_openssl_probe_sees_the_library_a_process_maps(tmp_path, system_libcrypto):
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl not installed")
    shutil.copy(system_libcrypto, tmp_path / system_libcrypto.name)
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path)}
    (seen,) = libcrypto.probe_cli(openssl, env)
    assert seen.same_file(tmp_path / system_libcrypto.name)
    (plain,) = libcrypto.probe_cli(
        openssl, {k: v for k, v in env.items() if k != "LD_LIBRARY_PATH"}
    )
    assert plain.same_file(system_libcrypto)
    with pytest.raises(libcrypto.CannotTell, match="wrote nothing"):
        libcrypto.probe_cli("/bin/false", env)


def test_the_mask_follows_the_library_an_openssl_cli_runs_on():
    """openssl 3.0's CLI on a 3.5 libcrypto (--libcrypto) gets a mask in
    3.4+'s syntax: the library parses OPENSSL_ia32cap, not the CLI."""
    from bridge.hw import ab
    from bridge.report import schema

    version = "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.5.7 9 Jun 2026)"
    cli = schema.Runtime("openssl@3.0.19+libcrypto-3.5.7", "openssl", "/usr/bin/openssl", version)
    assert ab.library_of(cli) == ("OpenSSL", (3, 5, 7))
    plain = schema.Runtime("openssl@3.0.19", "openssl", "/usr/bin/openssl", version.split(" (")[0])
    assert ab.library_of(plain) == ("OpenSSL", (3, 0, 19))
