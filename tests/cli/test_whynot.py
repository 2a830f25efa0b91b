"""Why a path is not using the hardware, for real: each reason from real
runtimes and real libraries.

- The missing assembler: OpenSSL built `no-asm` from Debian trixie's source
  by the tests' own set-up (scripts/build-noasm-openssl, the `noasm`
  fixture), run beside the system's 3.0 with `--libcrypto` (every runtime on
  it) and with `--openssl` (its own CLI). Every path on it says not-used, the
  missing assembler as the reason; the system library's paths say used.
- A mask the user set before bridge started, and a CPU without the feature
  (this CPU's /proc/cpuinfo with the flag taken out: a real run in-process,
  its CPU the one seam replaced).
- A size too small for the feature to show: Python's file_digest of a
  16-byte file against a 16 MiB one.

The tests that judge a measured effect are serial, and judge it on CPU time
per call (tests/cputime.py), which a busy machine does not stretch; the
verdict words that today's verdicts (on wall time) withhold on a busy
machine are asserted too, and skipped, saying so, where the run was busy
(tests/busy.py). A no-asm path's not-used needs no measurement: it is the
library's build."""

from __future__ import annotations

import json
import re
import sys

import pytest

from bridge.catalog import scenario as scenarios
from bridge.hw import hardware
from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.measure.seams import Seams
from bridge.report import schema
from bridge.report.hw import HwMode
from bridge.system import environment
from bridge.view import home
from tests import busy, cputime
from tests.conftest import FAST, bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]

# As tests/cli/test_hardware.py: enough for a CI, three openssl runs a side.
SHORT = ["--samples", "20", "--sample-ms", "5", "--warmup-ms", "50", "--rounds", "4"]
SHORT += ["--openssl-runs", "3"]

SHA256_16K = """
name = "sha256-16k"
description = "sha256 at 16 KiB"
kind = "hash"
digest = "sha256"
sizes = [16384]
features = ["sha"]
[calls]
erlang = ["hash"]
python = ["hashlib"]
openssl = ["speed-evp"]
"""

sha_ni = pytest.mark.skipif(
    not environment.cpu().has("sha"), reason="the CPU has no SHA extensions"
)


def run_json(tmp_path, *args, env=None) -> tuple[dict, str]:
    out = tmp_path / "r.json"
    done = bridge_cmd("run", *args, "-o", str(out), env=env, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(out.read_text()), done.stdout


def scenario(tmp_path) -> str:
    path = tmp_path / "sha256-16k.toml"
    path.write_text(SHA256_16K)
    return str(path)


def check_no_asm(v: dict, library: str) -> None:
    """A verdict on the no-asm library: not-used, for its missing assembler,
    with the evidence the library itself gave."""
    assert v["verdict"] == "not-used", v
    why = v["why"]
    assert why["reason"] == "no-asm" and why["library"] == library, why
    assert why["version"].startswith("OpenSSL 3.")
    said = {(c["source"], c["sign"]) for c in why["evidence"]}
    assert ("library", "no-capvector") in said and ("file", "no-asm-code") in said, said
    assert v["speedup"] is not None  # measured all the same


@pytest.mark.serial  # judges the system library's measured effect and its verdict
@sha_ni
def test_every_path_on_a_no_asm_libcrypto_says_not_used_for_its_missing_assembler(
    tmp_path, noasm, no_leftovers
):
    args = [scenario(tmp_path), *SHORT, "--python", sys.executable]
    report, stdout = run_json(tmp_path, *args, "--libcrypto", str(noasm.libdir))
    verdicts = {v["runtime"]: v for v in report["verdicts"]}
    variants = [rt for rt in verdicts if "+libcrypto-" in rt]
    system = [rt for rt in verdicts if "+libcrypto-" not in rt]
    assert len(variants) == 3 and len(system) == 3, sorted(verdicts)
    loaded = schema.load(tmp_path / "r.json")
    for rt in variants:
        check_no_asm(verdicts[rt], str(noasm.libcrypto))
    # No assembler: masking SHA changes nothing it runs. A short run's CPU
    # time per call still moves with a busy host: at steal 24% the no-asm
    # Python cell read 1.63x masked (under 1.3x on its rerun); a busy run says so.
    with busy.unless_busy(loaded, needs="a masked no-asm cell's CPU time within 1.3x"):
        for rt in variants:
            assert cputime.masked_ratio(loaded, runtime=rt) < 1.3, rt
    for rt in system:  # SHA-NI: about 3x at 16 KiB
        assert cputime.masked_ratio(loaded, runtime=rt) > 1.5, rt
    # Each runtime's library, as the report keeps it: the no-asm one has no
    # vector and no assembler module; the system's both.
    libraries = {e["runtime"]: e["library"] for e in report["hardware"]["experiments"]}
    for rt in variants:
        assert libraries[rt]["file"] == str(noasm.libcrypto)
    for rt in system:
        signs = {c["sign"] for c in libraries[rt]["clues"]}
        assert {"capvector", "asm-code"} <= signs, libraries[rt]
    # The openssl CLI on the library says it in its own `version -a` too.
    (cli,) = [rt for rt in variants if rt.startswith("openssl@")]
    said = {(c["source"], c["sign"]) for c in verdicts[cli]["why"]["evidence"]}
    assert ("version-a", "no-capvector") in said
    # And the view says it in words.
    flat = " ".join(stdout.split())
    assert "was built without assembler" in flat and home.tilde(str(noasm.libcrypto)) in flat
    with busy.unless_busy(loaded, needs="the word used"):
        for rt in system:
            assert verdicts[rt]["verdict"] == "used", verdicts[rt]
            assert "why" not in verdicts[rt]


@pytest.mark.serial  # judges the system CLI's measured effect and its verdict
@sha_ni
def test_the_no_asm_build_s_own_openssl_says_it_beside_the_system_s(tmp_path, noasm):
    args = [scenario(tmp_path), *SHORT, "--runtimes", "openssl"]
    report, _ = run_json(tmp_path, *args, "--openssl", str(noasm.openssl), "--openssl", "openssl")
    verdicts = {v["runtime"]: v for v in report["verdicts"]}
    runtimes = {rt["id"]: rt for rt in report["runtimes"] if rt["hw"] == "on"}
    (own,) = [rt for rt in runtimes if runtimes[rt]["executable"] == str(noasm.openssl)]
    (other,) = [rt for rt in runtimes if rt != own]
    check_no_asm(verdicts[own], str(noasm.libcrypto))
    loaded = schema.load(tmp_path / "r.json")
    assert cputime.masked_ratio(loaded, runtime=own) < 1.3
    assert cputime.masked_ratio(loaded, runtime=other) > 1.5
    with busy.unless_busy(loaded, needs="the word used"):
        assert verdicts[other]["verdict"] == "used", verdicts[other]


def test_a_mask_the_user_set_is_named_with_its_value(tmp_path):
    env = {"OPENSSL_ia32cap": ":~0x20000000"}  # SHA extensions off, set before bridge
    report, stdout = run_json(tmp_path, scenario(tmp_path), *SHORT, env=env)
    assert {v["verdict"] for v in report["verdicts"]} == {"masked"}
    for v in report["verdicts"]:
        assert v["why"] == {
            "reason": "env-masks",
            "variable": "OPENSSL_ia32cap",
            "value": ":~0x20000000",
        }
    flat = " ".join(stdout.split())
    assert "OPENSSL_ia32cap=:~0x20000000 was set before bridge started" in flat


def test_a_cpu_without_the_feature_is_named(tmp_path):
    """A real run whose CPU is this one's without the SHA flag: every runtime
    says cpu-lacks, /proc/cpuinfo the witness, and starts no masked twin."""
    real = environment.cpu()
    flag = "sha_ni" if real.arch == "x86_64" else "sha2"
    without = "flags\t: " + " ".join(sorted(real.flags - {flag, "sha1"})) + "\n"
    cpu = hardware.parse_cpuinfo(without, real.arch)
    sc = scenarios.load(scenario(tmp_path))
    plan = Plan(scenarios=(sc,), settings=FAST, seed=1, hw=HwMode.BOTH, python=(sys.executable,))
    report = runner.execute(plan, seams=Seams(cpu=cpu)).report
    assert {v.runtime.split("@")[0] for v in report.verdicts} == {"erlang", "python", "openssl"}
    for v in report.verdicts:
        assert v.verdict == "cpu-lacks" and v.why.reason.value == "cpu-lacks"
        assert (v.why.feature, v.why.seen_by.value) == ("sha", "cpuinfo")
    assert {rt.hw for rt in report.runtimes} == {"on"}


@pytest.mark.serial  # judges measured effects and their verdicts
@sha_ni
def test_a_size_too_small_for_the_feature_names_the_size_that_shows_it(tmp_path):
    """Python's hashlib.file_digest of a file in the page cache: at 16 B a
    call is opening and reading the file (microseconds), and the one SHA-256
    block it hashes (a tenth of a microsecond or two, with or without SHA-NI)
    cannot show; at 16 MiB hashing is most of it."""
    path = tmp_path / "file.toml"
    path.write_text(
        'name = "file"\ndescription = "file digest"\nkind = "file-digest"\n'
        'digest = "sha256"\nsizes = [16, 16777216]\nfeatures = ["sha"]\n'
        '[calls]\npython = ["file_digest"]\n'
    )
    args = [str(path), *SHORT, "--runtimes", "python", "--python", sys.executable]
    report, stdout = run_json(tmp_path, *args)
    by_size = {v["size"]: v for v in report["verdicts"]}
    large, small = by_size[16777216], by_size[16]
    # In CPU time: hashing is most of a 16 MiB call, and SHA-NI shows; at
    # 16 B the call is opening and reading the file, and it cannot.
    loaded = schema.load(tmp_path / "r.json")
    assert cputime.masked_ratio(loaded, size=16777216) > 1.5
    assert cputime.masked_ratio(loaded, size=16) < 1.3
    with busy.unless_busy(loaded, needs="the word used at 16 MiB"):
        assert large["verdict"] == "used", large
    with busy.unless_busy(loaded, needs="a CI at 16 B that reaches into the noise margin"):
        assert small["speedup_ci95"][0] <= 1.05, small
    # The size that shows it is named, whether the CI at 16 B is narrow
    # enough for not-used or, as a busy machine leaves it, too wide.
    assert small["verdict"] in ("not-used", "inconclusive"), small
    # Named only where a larger size is `used`: a busy machine can withhold that word.
    with busy.unless_busy(loaded, needs="the size that shows it (used at 16 MiB)"):
        assert small.get("why") == {
            "reason": "too-small",
            "size": 16,
            "shows_at": 16777216,
            "speedup": large["speedup"],
        }, (small, large)
        said = " ".join(stdout.split())
        assert re.search(r"at 16 B \((inconclusive, )?too small to show\)", said), said
    # Not asked: the word not-used at 16 B. Its CI must fit within ±5% of 1,
    # and twins that open and read a file differ by more than that even on a
    # quiet machine (others 0.003 CPUs: 0.86x, CI 0.76-0.99, inconclusive
    # with the size named; 16 MiB used, 3.76x).


def test_bridge_env_says_what_each_runtime_s_library_is_built_with():
    # Without env's quietness check, which tests/cli/test_noise.py judges.
    done = bridge_cmd("env", "--quietness-seconds", "0")
    assert done.returncode == 0, done.stderr
    # env folds a long line under itself at 80 columns: read the words.
    said = re.findall(
        r"(\w+)@\S+: \S+: \d+ assembler modules in its file", " ".join(done.stdout.split())
    )
    assert set(said) == {"erlang", "python", "openssl"}, done.stdout
    data = json.loads(bridge_cmd("env", "--format", "json", "--quietness-seconds", "0").stdout)
    for exp in data["hardware"]["experiments"]:
        signs = {c["sign"] for c in exp["library"]["clues"]}
        assert "asm-code" in signs, exp
