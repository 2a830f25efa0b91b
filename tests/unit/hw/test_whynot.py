"""Why a path is not using the hardware (bridge.hw.whynot): each reason from
the evidence that names it, their order, and the reasons the A/B attaches
to its verdicts (bridge.hw.ab): the CPU and the environment at plan time,
the library and the other sizes for a measured not-used. Fixed records;
the libraries' clues as bridge.system.libbuild reads them from the real
builds (tests/unit/system/test_libbuild.py)."""

from __future__ import annotations

import dataclasses

import pytest

from bridge.catalog import scenario as scenarios
from bridge.hw import ab, hardware, whynot
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.report.whynot import (
    BypassesEvp,
    Clue,
    CpuLacks,
    EnvMasks,
    LibraryBuild,
    NoAsm,
    NoCapvector,
    NoneFound,
    Sign,
    Source,
    TooSmall,
)
from bridge.view import words

SYSTEM = LibraryBuild(
    file="/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
    version="OpenSSL 3.0.19 27 Jan 2026",
    clues=(
        Clue(Source.LIBRARY, Sign.CAPVECTOR, "OPENSSL_ia32cap=0xfffa3203078bffff:0x400684219c07ab"),
        Clue(Source.FILE, Sign.ASM_CODE, "19"),
    ),
)
NO_ASM = LibraryBuild(
    file="/cache/noasm-openssl/lib/libcrypto.so.3",
    version="OpenSSL 3.5.7 9 Jun 2026",
    clues=(
        Clue(Source.VERSION_A, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),
        Clue(Source.LIBRARY, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),
        Clue(Source.FILE, Sign.NO_ASM_CODE, "0"),
    ),
)
# The same CPU as the library sees it, SHA extensions (word 1 bit 29) clear.
NO_SHA = LibraryBuild(
    file=SYSTEM.file,
    version=SYSTEM.version,
    clues=(
        Clue(Source.LIBRARY, Sign.CAPVECTOR, "OPENSSL_ia32cap=0xfffa3203078bffff:0x400684019c07ab"),
        Clue(Source.FILE, Sign.ASM_CODE, "19"),
    ),
)


def test_a_library_without_assembler_says_so_with_its_evidence():
    found = whynot.library(NO_ASM)
    assert isinstance(found, NoAsm)
    assert (found.library, found.version) == (NO_ASM.file, NO_ASM.version)
    # What says no assembler first, then the missing vector from each source.
    assert [c.sign for c in found.evidence] == [
        Sign.NO_ASM_CODE,
        Sign.NO_CAPVECTOR,
        Sign.NO_CAPVECTOR,
    ]
    assert whynot.library(SYSTEM) is None
    assert whynot.library(None) is None


def test_a_missing_vector_alone_is_its_own_reason():
    # The file could not be read: only the vector's absence is known.
    unread = LibraryBuild(
        file=NO_ASM.file,
        version=NO_ASM.version,
        clues=(Clue(Source.LIBRARY, Sign.NO_CAPVECTOR, "CPUINFO: N/A"),),
        unread=(Source.FILE,),
    )
    assert whynot.library(unread) == NoCapvector(unread.file, unread.version, unread.clues)


def test_any_sign_of_assembler_outranks_the_signs_against():
    # 1.1.1: assembler defines on the compiler line; a stray no-asm word
    # elsewhere does not make it a build without assembler.
    mixed = LibraryBuild(
        clues=(
            Clue(Source.LIBRARY, Sign.ASM_FLAG, "-DOPENSSL_CPUID_OBJ"),
            Clue(Source.VERSION_A, Sign.NO_ASM_FLAG, "no-asm"),
        )
    )
    assert whynot.library(mixed) is None
    flagged = LibraryBuild(clues=(Clue(Source.VERSION_A, Sign.NO_ASM_FLAG, "-DOPENSSL_NO_ASM"),))
    assert isinstance(whynot.library(flagged), NoAsm)
    # 1.1.1 without assembler: a compiler line with no module defined.
    bare = LibraryBuild(clues=(Clue(Source.LIBRARY, Sign.NO_ASM_DEFINE, "compiler: gcc -O2"),))
    assert isinstance(whynot.library(bare), NoAsm)


def test_a_file_without_assembler_marks_alone_decides_nothing():
    # A fork may drop OpenSSL's perlasm attributions: the library must say it too.
    marks_only = LibraryBuild(
        version="BoringSSL", clues=(Clue(Source.FILE, Sign.NO_ASM_CODE, "0"),)
    )
    assert whynot.library(marks_only) is None


def test_the_library_s_own_vector_can_lack_a_feature_the_cpu_flags_show():
    assert whynot.vector_lacks(NO_SHA, "sha", "x86_64") is Source.LIBRARY
    assert whynot.vector_lacks(NO_SHA, "aes+pclmul", "x86_64") is None
    assert whynot.vector_lacks(SYSTEM, "sha", "x86_64") is None
    # A vector printed under a mask is the mask's, not the CPU's.
    masked = LibraryBuild(
        clues=(
            Clue(
                Source.VERSION_A,
                Sign.CAPVECTOR,
                "OPENSSL_ia32cap=0xfffa3203078bffff:0x400684019c07ab env::~0x20000000",
            ),
        )
    )
    assert whynot.vector_lacks(masked, "sha", "x86_64") is None
    # ARMv8: NEON, AES and PMULL (0x25), none of SHA1, SHA256, SHA512.
    arm = LibraryBuild(clues=(Clue(Source.LIBRARY, Sign.CAPVECTOR, "OPENSSL_armcap=0x25"),))
    assert whynot.vector_lacks(arm, "pclmul", "aarch64") is None
    assert whynot.vector_lacks(arm, "sha", "aarch64") is Source.LIBRARY


def test_a_measured_not_used_takes_the_first_reason_the_evidence_shows():
    used = [(1024, 1.4), (16384, 3.1)]
    # The library first: no size can show what it does not have.
    assert isinstance(whynot.not_used(NO_ASM, "sha", "x86_64", 16, used, 16384), NoAsm)
    assert whynot.not_used(NO_SHA, "sha", "x86_64", 16, used, 16384) == CpuLacks(
        "sha", Source.LIBRARY
    )
    # The smallest larger size that showed it.
    assert whynot.not_used(SYSTEM, "sha", "x86_64", 16, used, 16384) == TooSmall(16, 1024, 1.4)
    assert whynot.not_used(SYSTEM, "sha", "x86_64", 16384, used, 16384) == NoneFound(16384)
    assert whynot.not_used(None, "sha", "x86_64", 64, [], 64) == NoneFound(64)


def test_the_environment_s_mask_is_named_for_the_arch():
    env = {"OPENSSL_ia32cap": ":~0x20000000", "OPENSSL_armcap": "0x1"}
    assert whynot.env_masks(env, "x86_64") == EnvMasks("OPENSSL_ia32cap", ":~0x20000000")
    assert whynot.env_masks(env, "aarch64") == EnvMasks("OPENSSL_armcap", "0x1")
    assert whynot.env_masks({}, "x86_64") is None


# -- the reasons the A/B attaches ----------------------------------------------

NO_SHA_CPU = "flags\t: fpu sse2 ssse3 pclmulqdq aes avx avx2 bmi2 adx\n"
RUNTIME = schema.Runtime(
    id="erlang@25.2.3",
    kind="erlang",
    executable="erl",
    version="25.2.3",
    details={"crypto_lib": "OpenSSL 3.0.19 27 Jan 2026"},
)


def test_plan_names_a_cpu_without_the_feature_and_a_mask_already_set():
    cpu = hardware.parse_cpuinfo(NO_SHA_CPU, "x86_64")
    ctx = ab.plan(RUNTIME, ("sha",), cpu, {}, None)
    assert ctx.untestable["sha"].verdict == "cpu-lacks"
    assert ctx.untestable["sha"].why == CpuLacks("sha", Source.CPUINFO)
    env = {"OPENSSL_ia32cap": "~0x200000000000000"}  # AES-NI off; word 1 (SHA) zeroed too
    cpu = hardware.parse_cpuinfo(NO_SHA_CPU + "flags\t: sha_ni\n", "x86_64")
    cpu = hardware.Cpu("x86_64", "test", cpu.flags | {"sha_ni"}, False)
    ctx = ab.plan(RUNTIME, ("sha", "aes"), cpu, env, None)
    for feature in ("sha", "aes"):
        assert ctx.untestable[feature].verdict == "masked"
        assert ctx.untestable[feature].why == EnvMasks("OPENSSL_ia32cap", "~0x200000000000000")


def _result(size: int, hw: Hw, per_call_ns: float, runtime="erlang@25.2.3", call_id="hash"):
    return schema.Result(
        scenario="sha256",
        runtime=runtime,
        call="crypto:hash(sha256, Data)",
        call_id=call_id,
        api="crypto:hash/2",
        semantics="one-shot",
        algorithm="sha256",
        size=size,
        samples=tuple(per_call_ns * 1000 * (1 + i / 1000) for i in range(12)),
        loops=1000,
        output_hex="00",
        hw=hw,
    )


def _verdicts(build: LibraryBuild, times: dict[int, tuple[float, float]], runtime=RUNTIME):
    sc = scenarios.load("sha256")
    results = [
        r
        for size, (on, off) in times.items()
        for r in (_result(size, Hw.ON, on, runtime.id), _result(size, Hw.OFF, off, runtime.id))
    ]
    masked = schema.Runtime(**{**runtime.__dict__, "hw": Hw.OFF})
    cpu = hardware.Cpu("x86_64", "test", frozenset({"sha_ni"}), False)
    ctx = ab.plan(runtime, ("sha",), cpu, {}, None)
    ctx.build = build
    return ab.verdict_list([sc], results, [runtime, masked], {runtime.id: ctx})


def test_a_measured_not_used_on_a_library_without_assembler_names_it():
    (v,) = _verdicts(NO_ASM, {16384: (49_000.0, 49_000.0)})
    assert v.verdict == "not-used" and isinstance(v.why, NoAsm)
    assert v.why.library == NO_ASM.file
    # The report carries it, typed, and reads it back as it was.
    assert schema.HwVerdict.from_json(v.to_json()) == v
    assert v.to_json()["why"]["reason"] == "no-asm"


def test_a_small_size_is_named_with_the_size_that_shows_it():
    vs = _verdicts(SYSTEM, {16: (300.0, 300.0), 16384: (9_400.0, 31_000.0)})
    small, large = sorted(vs, key=lambda v: v.size)
    assert large.verdict == "used" and large.why is None
    assert small.verdict == "not-used"
    assert small.why == TooSmall(16, 16384, pytest.approx(large.speedup))


def test_a_used_verdict_has_no_reason_and_a_path_around_openssl_has_one():
    (v,) = _verdicts(SYSTEM, {16384: (9_400.0, 31_000.0)})
    assert v.verdict == "used" and v.why is None
    python = schema.Runtime(
        id="python@3.11.2",
        kind="python",
        executable="python3",
        version="3.11.2",
        details={
            "ssl_openssl_version": "OpenSSL 3.0.19 27 Jan 2026",
            "hashlib_uses_openssl": False,
            "hashlib_sha256_type": "_sha2.SHA256Type",
        },
    )
    sc = scenarios.load("sha256")
    on = _result(16384, Hw.ON, 20_000.0, python.id, "hashlib")
    off = _result(16384, Hw.OFF, 20_000.0, python.id, "hashlib")
    cpu = hardware.Cpu("x86_64", "test", frozenset({"sha_ni"}), False)
    ctx = ab.plan(python, ("sha",), cpu, {}, None)
    masked = schema.Runtime(**{**python.__dict__, "hw": Hw.OFF})
    (v,) = ab.verdict_list([sc], [on, off], [python, masked], {python.id: ctx})
    assert v.verdict == "not-openssl" and v.why == BypassesEvp("_sha2.SHA256Type")


def test_on_a_library_without_assembler_the_twins_gap_is_not_a_verdict():
    # 1.3x "slower" masked, all rounds alike: two processes, not a feature
    # the library does not have. The figures stay, without "within noise".
    (v,) = _verdicts(NO_ASM, {16384: (49_000.0, 64_000.0)})
    assert v.verdict == "not-used" and isinstance(v.why, NoAsm)
    assert v.speedup == pytest.approx(64 / 49, rel=0.01)
    said = words.explanation(v, "Erlang crypto:hash(sha256, Data)")
    assert "within noise" not in said
    (v,) = _verdicts(NO_ASM, {16384: (49_000.0, 49_000.0)})
    said = words.explanation(v, "Erlang crypto:hash(sha256, Data)")
    assert said.split(";")[0].endswith("within noise")


def test_a_call_through_the_cryptography_wheel_is_not_judged_by_the_mapped_library():
    sc = scenarios.load("aes-128-gcm")
    python = schema.Runtime(
        id="python@3.11.7+libcrypto-3.5.7",
        kind="python",
        executable="python3",
        version="3.11.7",
        details={
            "ssl_openssl_version": "OpenSSL 3.5.7 9 Jun 2026",
            "cryptography_openssl_version": "OpenSSL 3.5.4 30 Sep 2025",
        },
    )

    def cell(hw: Hw, ns: float) -> schema.Result:
        r = _result(16384, hw, ns, python.id, "cryptography")
        return dataclasses.replace(
            r, scenario=sc.name, api="cryptography AESGCM.encrypt", algorithm="aes-128-gcm"
        )

    cpu = hardware.Cpu("x86_64", "test", frozenset({"aes", "pclmulqdq"}), False)
    ctx = ab.plan(python, ("aes", "pclmul"), cpu, {}, None)
    ctx.build = NO_ASM
    masked = dataclasses.replace(python, hw=Hw.OFF)
    results = [cell(Hw.ON, 4_000.0), cell(Hw.OFF, 21_000.0)]
    (v,) = ab.verdict_list([sc], results, [python, masked], {python.id: ctx})
    assert v.verdict == "used" and v.why is None
