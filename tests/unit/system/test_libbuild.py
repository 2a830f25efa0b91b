"""What a libcrypto says about its own build (bridge.system.libbuild), read
from canned `openssl version -a` texts of real builds (tests/fixtures/
version-a/: Debian 12's 3.0.19, Debian 11's 1.1.1w, 3.5.7 configured no-asm
by scripts/build-noasm-openssl, and 3.0.19's CLI on that library), from
canned probe output, and from the library this test process has loaded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bridge.report.whynot import Clue, Sign, Source
from bridge.system import libbuild, libcrypto
from tests.conftest import FIXTURES

VERSION_A = FIXTURES / "version-a"


def lines(name: str) -> list[str]:
    return (VERSION_A / name).read_text().splitlines()


def signs(clues) -> list[tuple[Sign, str]]:
    return [(c.sign, c.text) for c in clues]


def test_a_3x_build_with_assembler_prints_its_vector():
    version, clues = libbuild.from_version_a(lines("openssl-3.0.19-debian12.txt"))
    assert version == "OpenSSL 3.0.19 27 Jan 2026"
    # 3.x lists no assembler defines on its compiler line: the vector says it.
    assert signs(clues) == [(Sign.CAPVECTOR, "OPENSSL_ia32cap=0xfffa3203078bffff:0x400684219c07ab")]
    assert {c.source for c in clues} == {Source.VERSION_A}


def test_a_3x_no_asm_build_prints_no_vector():
    version, clues = libbuild.from_version_a(lines("openssl-3.5.7-noasm.txt"))
    assert version == "OpenSSL 3.5.7 9 Jun 2026"
    assert signs(clues) == [(Sign.NO_CAPVECTOR, "CPUINFO: N/A")]


def test_a_cli_on_another_library_reports_the_library():
    # 3.0.19's CLI with the no-asm 3.5.7 first on LD_LIBRARY_PATH: the
    # compiler and CPUINFO lines are the library's (OpenSSL_version()).
    version, clues = libbuild.from_version_a(lines("openssl-3.0.19-on-3.5.7-noasm.txt"))
    assert version == "OpenSSL 3.5.7 9 Jun 2026"
    assert signs(clues) == [(Sign.NO_CAPVECTOR, "CPUINFO: N/A")]


def test_a_1_1_1_build_names_its_assembler_on_the_compiler_line():
    version, clues = libbuild.from_version_a(lines("openssl-1.1.1w-debian11.txt"))
    assert version == "OpenSSL 1.1.1w  11 Sep 2023"
    # No CPUINFO line before 3.0: no clue either way from it.
    assert signs(clues) == [(Sign.ASM_FLAG, "-DOPENSSL_CPUID_OBJ")]


def test_a_vector_printed_under_a_mask_keeps_the_mask():
    _, clues = libbuild.from_version_a(lines("openssl-3.0.19-debian12-masked.txt"))
    (clue,) = clues
    assert clue.sign is Sign.CAPVECTOR and clue.text.endswith("env::~0x20000000")


@pytest.mark.parametrize(
    "compiler, options, found",
    [
        ("compiler: gcc -O2 -DOPENSSL_NO_ASM -DNDEBUG", "", "-DOPENSSL_NO_ASM"),
        ("compiler: cc -Os", "options: bn(32,32) no-asm no-async", "no-asm"),
        # A define of the same prefix, or a word that contains the flag, is not it.
        ("compiler: gcc -DOPENSSL_NO_ASM_FOO", "", None),
        ("compiler: gcc", "options: no-asmx", None),
    ],
)
def test_flags_that_say_no_assembler(compiler, options, found):
    clues = libbuild.clues_from_lines(compiler, options, None, Source.VERSION_A)
    flagged = [c.text for c in clues if c.sign is Sign.NO_ASM_FLAG]
    assert flagged == ([found] if found else [])


def test_a_3x_compiler_line_without_assembler_defines_says_nothing():
    # 3.x never lists them: their absence is no clue there, only in 1.x.
    line = "compiler: gcc -fPIC -pthread -m64 -Wall -O2 -DOPENSSL_BUILDING_OPENSSL"
    three = libbuild.clues_from_lines(line, "", None, Source.LIBRARY, "OpenSSL 3.5.7 9 Jun 2026")
    assert three == []
    one = libbuild.clues_from_lines(line, "", None, Source.LIBRARY, "OpenSSL 1.0.2u  20 Dec 2019")
    assert signs(one) == [(Sign.NO_ASM_DEFINE, line)]


def test_a_no_asm_flag_outranks_an_assembler_define_on_the_same_line():
    compiler = "compiler: gcc -DOPENSSL_CPUID_OBJ -DOPENSSL_NO_ASM"
    clues = libbuild.clues_from_lines(compiler, "", None, Source.LIBRARY)
    assert signs(clues) == [(Sign.NO_ASM_FLAG, "-DOPENSSL_NO_ASM")]


def test_what_the_probe_prints_is_read_or_refused():
    said = {
        "version": "OpenSSL 3.5.7 9 Jun 2026",
        "compiler": "compiler: gcc -O2 -DNDEBUG",
        "cpuinfo": "CPUINFO: N/A",
    }
    version, clues = libbuild.parse_probe(json.dumps(said))
    assert version == "OpenSSL 3.5.7 9 Jun 2026"
    assert clues == [Clue(Source.LIBRARY, Sign.NO_CAPVECTOR, "CPUINFO: N/A")]
    # 1.1.x: no OPENSSL_info, so no cpuinfo key; its compiler line says it.
    old = {"version": "OpenSSL 1.1.1w  11 Sep 2023", "compiler": "compiler: gcc -O2"}
    assert signs(libbuild.parse_probe(json.dumps(old))[1]) == [
        (Sign.NO_ASM_DEFINE, "compiler: gcc -O2")
    ]
    old["compiler"] += " -DOPENSSL_CPUID_OBJ -DSHA256_ASM"
    assert signs(libbuild.parse_probe(json.dumps(old))[1]) == [
        (Sign.ASM_FLAG, "-DOPENSSL_CPUID_OBJ")
    ]
    for bad in ("", "not json", "{}", json.dumps({"version": ""}), "[1]"):
        with pytest.raises(libbuild.Unread):
            libbuild.parse_probe(bad)


def test_assembler_modules_are_counted_in_a_library_s_bytes():
    mark = b"SHA256 block transform for x86_64, CRYPTOGAMS by <appro@openssl.org>\x00"
    assert libbuild.asm_modules(b"\x7fELF" + mark + b"\x00" * 9 + mark) == 2
    assert libbuild.asm_modules(b"\x7fELF plain C code only") == 0


@pytest.fixture(scope="module")
def system_libcrypto() -> Path:
    import _hashlib  # noqa: F401  - loads libcrypto into this process

    (found, *_) = libcrypto.mapped(os.getpid())
    return Path(found.path)


def test_the_system_library_says_it_has_assembler(system_libcrypto, monkeypatch):
    # The probe unsets the masks: a mask set here does not reach its vector.
    monkeypatch.setenv("OPENSSL_ia32cap", ":~0x20000000")
    build = libbuild.collect(str(system_libcrypto))
    assert build.file == str(system_libcrypto) and build.version.startswith("OpenSSL ")
    assert build.unread == ()
    (code,) = build.has(Sign.ASM_CODE)
    assert code.source is Source.FILE and int(code.text) > 0
    if build.version.startswith("OpenSSL 3."):
        (vector,) = build.has(Sign.CAPVECTOR)
        assert vector.source is Source.LIBRARY and " env:" not in vector.text


def test_a_collector_that_fails_leaves_its_source_unread(tmp_path):
    not_a_library = tmp_path / "libcrypto.so.3"
    not_a_library.write_bytes(b"not an ELF file")
    build = libbuild.collect(str(not_a_library), lines("openssl-3.5.7-noasm.txt"))
    # The library would not load; its bytes still read; version -a still counts.
    assert build.unread == (Source.LIBRARY,)
    assert signs(build.clues) == [(Sign.NO_CAPVECTOR, "CPUINFO: N/A"), (Sign.NO_ASM_CODE, "0")]
    assert build.version == "OpenSSL 3.5.7 9 Jun 2026"
    nothing = libbuild.collect(None)
    assert nothing.unread == (Source.LIBRARY, Source.FILE) and nothing.clues == ()
    gone = libbuild.collect(str(tmp_path / "missing.so"))
    assert gone.unread == (Source.LIBRARY, Source.FILE)
