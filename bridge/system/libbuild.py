"""What a libcrypto says about its own build: its version, whether it has a
capability vector, what its compiler and options lines say about assembler,
and whether its file holds OpenSSL's assembler modules.

Small collectors, each of which may fail alone (the failure is recorded as a
source left unread), tested on canned text:

- `from_version_a`: `openssl version -a` as the openssl runtime printed it
  (its `compiler:` line and `CPUINFO:` line come from the library it runs on);
- `ask_library`: the same facts from a library file itself, loaded alone in
  a short-lived Python (ctypes: OpenSSL_version(OPENSSL_CFLAGS) and
  OpenSSL_version(OPENSSL_CPU_INFO)) with OPENSSL_ia32cap and OPENSSL_armcap
  unset, so the vector is the one the library detects. This is how the
  library of an Erlang node or a Python worker is read: neither runtime can
  say its build, and the `openssl` on PATH may run another library;
- `asm_modules`: OpenSSL's perlasm modules embed an identification string
  ("SHA256 block transform for x86_64, CRYPTOGAMS by <appro@openssl.org>");
  a build without assembler has none.

On OpenSSL 3.x a `no-asm` build prints "CPUINFO: N/A" (crypto/cversion.c:
the CPU info string is filled only where OPENSSL_CPUID_OBJ is defined, which
no-asm leaves out), and its compiler line looks like any other: 3.x lists no
assembler defines there. 1.0.2 and 1.1.x print no CPUINFO line at all, but
list the assembler modules in their compiler line (-DOPENSSL_CPUID_OBJ,
-DSHA256_ASM...): a 1.x compiler line without them is a build without.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from bridge.hw.hardware import MASK_VARS
from bridge.report.whynot import Clue, LibraryBuild, Sign, Source
from bridge.system import proc

# -- `openssl version -a` --------------------------------------------------------

# Flags and options that name a build without assembler: Configure's option
# as some distributions' builds print it, and the define it leads to.
NO_ASM = re.compile(r"(?<![\w-])(no-asm|-DOPENSSL_NO_ASM|OPENSSL_NO_ASM)(?![\w-])")
# 1.0.2 and 1.1.x list the assembler modules' defines on their compiler line;
# OPENSSL_CPUID_OBJ is the one every assembler build has (the CPUID probe).
ASM_DEFINE = re.compile(r"-DOPENSSL_CPUID_OBJ\b")
CPUINFO = re.compile(r"^CPUINFO:\s*(.*)$")
VECTOR = re.compile(r"OPENSSL_(?:ia32|arm)cap=[0-9a-fA-Fx:]+")


def clues_from_lines(
    compiler: str, options: str, cpuinfo: str | None, source: Source, version: str = ""
):
    """The clues a compiler line, an options line and a CPUINFO line give
    (cpuinfo None: the library has no such line, as before 3.0) of the
    library whose version text is `version`."""
    out = []
    for line in (compiler, options):
        m = NO_ASM.search(line)
        if m:
            out.append(Clue(source, Sign.NO_ASM_FLAG, m.group(1)))
    m = ASM_DEFINE.search(compiler)
    if m and not any(c.sign is Sign.NO_ASM_FLAG for c in out):
        out.append(Clue(source, Sign.ASM_FLAG, m.group(0)))
    elif not m and not out and compiler and _before_3(version):
        out.append(Clue(source, Sign.NO_ASM_DEFINE, compiler.strip()))
    if cpuinfo is not None:
        vector = VECTOR.search(cpuinfo)
        if vector:
            # " env:..." follows when a mask was set: the vector is then the
            # masked one, and the clue keeps the whole line to say so.
            text = cpuinfo.strip() if " env:" in cpuinfo else vector.group(0)
            out.append(Clue(source, Sign.CAPVECTOR, text))
        else:
            out.append(Clue(source, Sign.NO_CAPVECTOR, f"CPUINFO: {cpuinfo.strip()}"))
    return out


def _before_3(version: str) -> bool:
    """An OpenSSL 1.x version text: its compiler line names the assembler
    modules it was built with."""
    m = re.match(r"OpenSSL (\d+)\.", version)
    return m is not None and int(m.group(1)) < 3


def from_version_a(lines: Sequence[str]) -> tuple[str, list[Clue]]:
    """(the library's version, the clues) from `openssl version -a`. The
    first line is "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.5.7 ...)"
    when the CLI runs on another library: the library's is the one wanted."""
    head = lines[0] if lines else ""
    version = head.partition("(Library:")[2].rstrip(")").strip() or head.strip()
    compiler = options = ""
    cpuinfo = None
    for line in lines[1:]:
        if line.startswith("compiler:"):
            compiler = line
        elif line.startswith("options:"):
            options = line
        else:
            m = CPUINFO.match(line)
            if m:
                cpuinfo = m.group(1)
    return version, clues_from_lines(compiler, options, cpuinfo, Source.VERSION_A, version)


# -- the library file, loaded alone ---------------------------------------------

# Run as `python -I -S -c PROBE FILE`: loads FILE alone and prints what it
# says of itself as JSON. OpenSSL_version's type numbers: 1.1.0+ VERSION 0,
# CFLAGS 1, PLATFORM 3, CPU_INFO 9 (3.0+, where OPENSSL_info exists);
# 1.0.x's SSLeay_version: VERSION 0, CFLAGS 2, PLATFORM 4.
PROBE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
def ask(name, n):
    f = getattr(lib, name)
    f.restype, f.argtypes = ctypes.c_char_p, [ctypes.c_int]
    v = f(n)
    return None if v is None else v.decode("latin-1")
out = {}
if hasattr(lib, "OpenSSL_version"):
    out = {"version": ask("OpenSSL_version", 0), "compiler": ask("OpenSSL_version", 1)}
    if hasattr(lib, "OPENSSL_info"):
        out["cpuinfo"] = ask("OpenSSL_version", 9)
elif hasattr(lib, "SSLeay_version"):
    out = {"version": ask("SSLeay_version", 0), "compiler": ask("SSLeay_version", 2)}
print(json.dumps(out))
"""


class Unread(Exception):
    """A source could not be read (the library would not load, no such file)."""


def parse_probe(text: str) -> tuple[str, list[Clue]]:
    """(version, clues) from what PROBE printed."""
    try:
        said = json.loads(text)
    except ValueError:
        raise Unread("the probe printed no JSON") from None
    if not isinstance(said, dict) or not said.get("version"):
        raise Unread("the library has neither OpenSSL_version nor SSLeay_version")
    cpuinfo = said.get("cpuinfo")
    if isinstance(cpuinfo, str):
        cpuinfo = cpuinfo.removeprefix("CPUINFO:").strip()
    compiler, version = str(said.get("compiler") or ""), str(said["version"])
    return version, clues_from_lines(compiler, "", cpuinfo, Source.LIBRARY, version)


def ask_library(file: str | Path, timeout: float = 15.0) -> tuple[str, list[Clue]]:
    """(version, clues) from the library file itself, loaded alone in a
    short-lived Python with no capability mask set. Raises Unread."""
    env = {k: v for k, v in os.environ.items() if k not in MASK_VARS and k != "LD_PRELOAD"}
    try:
        done = proc.run(
            [sys.executable, "-I", "-S", "-c", PROBE, str(file)], env=env, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unread(f"cannot run the probe: {exc}") from None
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise Unread(f"the probe failed: {' '.join(tail)}")
    return parse_probe(done.stdout.decode(errors="replace"))


# -- the library file's bytes --------------------------------------------------

# Each perlasm module of OpenSSL (and of the libraries forked from it) embeds
# ".asciz ... CRYPTOGAMS by <appro@openssl.org>": 19 of them in Debian 12's
# libcrypto.so.3 on x86_64, none in a no-asm build.
ASM_MARK = b"CRYPTOGAMS by <appro"


def asm_modules(data: bytes) -> int:
    """How many assembler modules a library's bytes identify."""
    return data.count(ASM_MARK)


def clues_from_file(file: str | Path) -> list[Clue]:
    try:
        data = Path(file).read_bytes()
    except OSError as exc:
        raise Unread(f"cannot read {file}: {exc.strerror}") from None
    n = asm_modules(data)
    return [Clue(Source.FILE, Sign.ASM_CODE if n else Sign.NO_ASM_CODE, str(n))]


# -- all of it -----------------------------------------------------------------


def collect(file: str | None, version_a: Sequence[str] | None = None) -> LibraryBuild:
    """What the library `file` (as a process maps it; None when that could
    not be seen) says about its build, with `version_a`, the lines of the
    openssl runtime's `openssl version -a`, when there are some."""
    version, clues, unread = "", [], []
    if version_a:
        version, found = from_version_a(version_a)
        clues += found
    if file:
        try:
            said, found = _asked(*_identity(file))
            version = said or version
            clues += found
        except Unread:
            unread.append(Source.LIBRARY)
        try:
            clues += clues_from_file(file)
        except Unread:
            unread.append(Source.FILE)
    else:
        unread += [Source.LIBRARY, Source.FILE]
    return LibraryBuild(file=file or "", version=version, clues=tuple(clues), unread=tuple(unread))


def _identity(file: str) -> tuple[str, int, int, int]:
    """The file and what tells one version of it from another (a rebuilt
    library at the same path is asked again)."""
    try:
        st = os.stat(file)
    except OSError:
        return file, 0, 0, 0
    return file, st.st_ino, st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=32)
def _asked(file: str, *which: int) -> tuple[str, tuple[Clue, ...]]:
    # Once per library file (`which` tells a rebuilt one apart) per run: the
    # runtimes of a run mostly share one.
    version, clues = ask_library(file)
    return version, tuple(clues)
