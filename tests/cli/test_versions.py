"""Cross-version tests on real older runtimes: Debian bullseye's OTP 23.2.6
and OpenSSL 1.1.1w (scripts/fetch-runtimes) beside this machine's OTP 25 and
OpenSSL 3, through the real CLI. Timings are never asserted, except effects
of several times with wide margins."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest

from bridge.hw import hardware
from bridge.report import schema
from bridge.runtimes import openssl as openssl_runtime
from bridge.speed import parse
from bridge.system import environment
from tests import busy, cputime
from tests.conftest import FAST_ARGS, ROOT, bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]


def run_report(tmp_path, *args, env=None):
    out = tmp_path / "r.json"
    done = bridge_cmd("run", *args, "-o", str(out), env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done


def by_kind(report, kind):
    return [rt for rt in report["runtimes"] if rt["kind"] == kind]


# -- OTP 23 on OpenSSL 1.1.1w beside OTP 25 on OpenSSL 3 ----------------------


def test_otp23_beside_the_system_otp_in_one_run(tmp_path, bullseye):
    system_erl = shutil.which("erl")
    report, done = run_report(
        tmp_path,
        "hmac-sha1",
        "sha256",
        *FAST_ARGS,
        "--sizes",
        "16,16384",
        "--runtimes",
        "erlang",
        "--erl",
        str(bullseye.erl),
        "--erl",
        system_erl,
    )
    old, new = by_kind(report, "erlang")
    assert old["otp_version"] == "23.2.6" and old["executable"] == str(bullseye.erl)
    assert new["otp_version"].split(".")[0] != "23" and new["executable"] == system_erl
    assert "OpenSSL 1.1.1w" in old["crypto_lib"] and "OpenSSL 3." in new["crypto_lib"]
    # The node really mapped the unpacked libcrypto, not the system's.
    assert old["libcrypto_loaded"] == [str(bullseye.libdir / "libcrypto.so.1.1")]
    results = report["results"]
    assert {r["runtime"] for r in results} == {old["id"], new["id"]}
    assert all(r["status"] == "ok" for r in results), [r for r in results if r["status"] != "ok"]
    # Same bytes from both generations, and both equal the driver's reference.
    assert {(c["scenario"], c["size"]) for c in report["interop"]} == {
        ("hmac-sha1", 16),
        ("hmac-sha1", 16384),
        ("sha256", 16),
        ("sha256", 16384),
    }
    for check in report["interop"]:
        assert check["match"] is True, check
        assert len(check["outputs"]) == 2  # one per OTP
        assert set(check["outputs"].values()) == {check["reference"]}
    # The answer gives each call on the newer OTP against the first named,
    # at each size, with its ratio.
    said = " ".join(done.stdout.split())
    for call in ("macN", "hash"):
        for size in ("16 B", "16 KiB"):
            line = f"{new['id']} against {old['id']}: Erlang crypto:{call} at {size}: "
            assert re.search(re.escape(line) + r"\d+\.\d\d× ", said), line


# -- openssl 1.1.1w beside openssl 3 -----------------------------------------


def test_openssl_111_beside_openssl_3(tmp_path, bullseye):
    report, done = run_report(
        tmp_path,
        "sha256",
        "hmac-sha1",
        *FAST_ARGS,
        "--sizes",
        "16,16384",
        "--runtimes",
        "openssl",
        "--openssl",
        str(bullseye.openssl),
        "--openssl",
        shutil.which("openssl"),
    )
    old, new = by_kind(report, "openssl")
    assert old["version"].startswith("OpenSSL 1.1.1w") and new["version"].startswith("OpenSSL 3.")
    cells = {(r["runtime"], r["scenario"], r["call_id"], r["size"]): r for r in report["results"]}
    for size in (16, 16384):
        for call in ("speed", "speed-evp"):
            # Measured live: `openssl speed -mr` of 1.1.1w, parsed by the runtime.
            cell = cells[(old["id"], "sha256", call, size)]
            assert cell["status"] == "ok" and cell["ns_per_op"]["median"] > 0, cell
    # 1.1.1 cannot time HMAC-SHA1 with speed: an unsupported cell with the reason.
    for size in (16, 16384):
        hmac = cells[(old["id"], "hmac-sha1", "speed", size)]
        assert hmac["status"] == "unsupported" and "3.0" in hmac["reason"]
        assert cells[(new["id"], "hmac-sha1", "speed", size)]["status"] == "ok"
    for check in report["interop"]:
        assert check["match"] is True, check
    # The answer gives each call on openssl 3 against the first named, 1.1.1w,
    # at each size, with its ratio (sha256's two calls: both ran on both).
    said = " ".join(done.stdout.split())
    for call in ("speed", "speed-evp"):
        for size in ("16 B", "16 KiB"):
            line = f"{new['id']} against {old['id']}: openssl {call} at {size}: "
            assert re.search(re.escape(line) + r"\d+\.\d\d× ", said), line


def speed_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENSSL_ia32cap", "OPENSSL_armcap")}
    return {**env, **extra}


def merged_output(argv: list[str]) -> str:
    """stdout and stderr as a terminal shows them with 2>&1, as people paste them."""
    done = subprocess.run(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=speed_env()
    )
    assert done.returncode == 0, done.stdout
    return done.stdout


def test_real_111_speed_output_parses_in_both_forms(tmp_path, bullseye):
    args = ["speed", "-bytes", "16384", "-seconds", "1", "-evp", "sha256"]
    human = f"$ openssl {' '.join(args)}\n" + merged_output([str(bullseye.openssl), *args])
    (run,) = parse.parse(human).runs
    assert run.version.startswith("OpenSSL 1.1.1w") and run.evp is True
    (entry,) = [e for e in run.entries if e.source == "table"]
    assert (entry.algorithm, entry.size) == ("sha256", 16384) and entry.bytes_per_s > 1e6

    # The -mr form: bridge's openssl runtime reads the +R records live;
    # import-speed reads the +F summary. They must agree.
    mr_args = [args[0], "-mr", *args[1:]]
    mr = merged_output([str(bullseye.openssl), *mr_args])
    ((count, seconds),) = openssl_runtime.parse_mr_runs(mr)
    assert count > 0 and seconds > 0
    entries = parse.parse(mr).runs[0].entries
    (summary,) = [e for e in entries if e.source == "mr"]
    assert summary.bytes_per_s == pytest.approx(count * 16384 / seconds, rel=0.01)

    # Both forms through the CLI, pasted into one document.
    doc = tmp_path / "speed.txt"
    doc.write_text(f"Human:\n{human}\nMachine-readable:\n$ openssl {' '.join(mr_args)}\n{mr}")
    done = bridge_cmd("import-speed", str(doc), "--format", "json")
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)
    assert len(imported["runtimes"]) == 2
    assert imported["runtimes"][0]["version"].startswith("OpenSSL 1.1.1w")
    assert [(r["algorithm"], r["size"]) for r in imported["results"]] == [("sha256", 16384)] * 2
    assert all(r["bytes_per_s"] > 1e6 for r in imported["results"])


# -- the A/B masks on the real 1.1.1 -------------------------------------------

sha_ni = pytest.mark.skipif(
    environment.cpu().arch != "x86_64" or not environment.cpu().has("sha"),
    reason="needs an x86_64 CPU with SHA extensions",
)


def sha256_16k_rate(openssl: Path, env: dict[str, str]) -> float:
    """Bytes per second of CPU time of `openssl speed -evp sha256` at 16 KiB,
    from the -mr summary: without -elapsed, openssl divides by its own user
    CPU time, which a busy machine does not stretch as it does the wall."""
    argv = [str(openssl), "speed", "-mr", "-bytes", "16384", "-seconds", "1"]
    done = subprocess.run([*argv, "-evp", "sha256"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    (run,) = parse.parse(done.stdout).runs
    return run.entries[0].bytes_per_s


# OPENSSL_ia32cap values whose effect on SHA the parser model predicts for 1.1.1:
# bridge's own mask, the "no second field zeroes word 1" trap, and its fix.
MASK_CASES = [
    hardware.ia32cap_mask(("sha",), "1.1"),
    "~0x200000000000000",
    "~0x200000000000000:~0",
]


@pytest.mark.serial  # an effect measured against a 1.5x margin, on CPU time
@sha_ni
def test_111_masks_measured_on_the_real_binary(bullseye):
    """1.1.1 has no `openssl version -c`, so the vector cannot be read back:
    SHA-NI makes sha256 at 16 KiB several times faster, so whether a mask
    switched it off shows as a large effect. The parser model must agree."""
    plain = speed_env()
    before = sha256_16k_rate(bullseye.openssl, plain)
    rates = {
        value: sha256_16k_rate(bullseye.openssl, speed_env(OPENSSL_ia32cap=value))
        for value in MASK_CASES
    }
    baseline = (before + sha256_16k_rate(bullseye.openssl, plain)) / 2
    for value, rate in rates.items():
        slowdown = baseline / rate
        # SHA-NI is about 4x here; noise on a shared machine is far below 1.5x.
        assert slowdown > 2.0 or slowdown < 1.5, (value, slowdown, "inconclusive")
        really_off = slowdown > 2.0
        assert really_off == hardware.feature_disabled_by(
            {"OPENSSL_ia32cap": value}, "sha", "x86_64", "1.1"
        ), (value, slowdown)
    assert baseline / rates[MASK_CASES[0]] > 2.0  # bridge's mask does switch SHA-NI off


@pytest.mark.serial  # judges a measured effect and a verdict
@sha_ni
def test_hardware_verdict_on_openssl_111(tmp_path, bullseye):
    scenario = tmp_path / "sha256-16k.toml"
    scenario.write_text(
        'name = "sha256-16k"\ndescription = "sha256 at 16 KiB"\nkind = "hash"\n'
        'digest = "sha256"\nsizes = [16384]\nfeatures = ["sha"]\n'
        '[calls]\nopenssl = ["speed-evp"]\n'
    )
    report, _ = run_report(
        tmp_path,
        str(scenario),
        "--runtimes",
        "openssl",
        "--openssl",
        str(bullseye.openssl),
        "--openssl-runs",
        "3",  # a verdict needs 3 runs a side
        "--hw",
        "both",
    )
    (experiment,) = report["hardware"]["experiments"]
    assert experiment["mask"]["value"] == hardware.ia32cap_mask(("sha",), "1.1")
    assert experiment["mask_check"]["ok"] is None  # 1.1.1 cannot print its vector
    (verdict,) = report["verdicts"]
    # The mask's effect on the openssl child's CPU time per call (user+sys):
    # SHA-NI, about 4x here.
    loaded = schema.load(tmp_path / "r.json")
    assert cputime.masked_ratio(loaded, kind="openssl") > 1.5
    with busy.unless_busy(loaded, needs="the word used"):
        assert verdict["verdict"] == "used" and verdict["speedup"] > 1.5, verdict


# -- discovery ---------------------------------------------------------------


def otp_list(env):
    done = bridge_cmd("otp", "list", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    return {Path(item["root"]): item for item in json.loads(done.stdout)}


def test_otp_list_probes_the_unpacked_tree(bullseye):
    # Without its library path the tree is broken, and says why.
    env = {"BRIDGE_OTP_PATH": str(bullseye.otp_root), "LD_LIBRARY_PATH": ""}
    item = otp_list(env)[bullseye.otp_root]
    assert item["otp_version"] == "23.2.6" and item["erts_version"] == "11.1.8"
    assert "libcrypto.so.1.1" in item["problem"] and "cannot open" in item["problem"]
    # Wide enough for one line a row (at 80 the long reason wraps: test_width).
    table = bridge_cmd("otp", "list", env={**env, "COLUMNS": "250"}).stdout
    (line,) = [row for row in table.splitlines() if str(bullseye.otp_root) in row]
    assert not line.rstrip().endswith(" ok") and "crypto cannot load" in line

    # With it, the same tree works, and names the library it mapped.
    env["LD_LIBRARY_PATH"] = str(bullseye.libdir)
    item = otp_list(env)[bullseye.otp_root]
    assert item["problem"] is None
    assert item["libcrypto"] == str(bullseye.libdir / "libcrypto.so.1.1")
    assert item["crypto_lib"].startswith("OpenSSL 1.1.1w")


def test_otp_list_accepts_a_wrapper_prefix(bullseye):
    # PREFIX/bin/erl is a shell script and PREFIX has no releases/: the erl
    # itself says what it is.
    item = otp_list({"BRIDGE_OTP_PATH": str(bullseye.prefix)})[bullseye.prefix]
    assert item["problem"] is None, item
    assert item["otp_version"] == "23.2.6" and item["crypto"]
    assert item["otp_root"] == str(bullseye.otp_root)
    assert item["libcrypto"] == str(bullseye.libdir / "libcrypto.so.1.1")


def test_otp_group_finds_the_wrapper_prefix(tmp_path, bullseye):
    env = {"BRIDGE_OTP_PATH": str(bullseye.prefix)}
    report, _ = run_report(
        tmp_path, "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "--erl", "otp:23", env=env
    )
    (rt,) = by_kind(report, "erlang")
    assert rt["otp_version"] == "23.2.6" and rt["executable"] == str(bullseye.erl)


def test_erl_given_as_a_bin_directory(tmp_path, bullseye):
    report, _ = run_report(
        tmp_path, "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "--erl", str(bullseye.bin)
    )
    (rt,) = by_kind(report, "erlang")
    assert rt["otp_version"] == "23.2.6" and rt["executable"] == str(bullseye.erl)


def test_erl_name_is_looked_up_in_path_not_in_the_checkout(tmp_path):
    # The checkout has an erl/ source folder: `--erl erl` must not pick it.
    assert (ROOT / "erl").is_dir()
    report, _ = run_report(
        tmp_path, "hmac-sha1", *FAST_ARGS, "--runtimes", "erlang", "--erl", "erl"
    )
    (rt,) = by_kind(report, "erlang")
    assert rt["executable"] == shutil.which("erl")
    done = bridge_cmd("run", "hmac-sha1", "--erl", "no-such-erl-here")
    assert done.returncode == 2 and "not found on PATH" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_erl_that_does_not_answer_is_listed_broken(tmp_path):
    prefix = tmp_path / "not-otp"
    (prefix / "bin").mkdir(parents=True)
    erl = prefix / "bin" / "erl"
    erl.write_text("#!/bin/sh\necho 'this is not erlang' >&2\nexit 3\n")
    erl.chmod(0o755)
    item = otp_list({"BRIDGE_OTP_PATH": str(prefix)})[prefix]
    assert "does not run" in item["problem"] and "this is not erlang" in item["problem"]
    done = bridge_cmd("run", "hmac-sha1", "--erl", str(prefix / "bin"))
    assert done.returncode == 2 and "not an Erlang installation" in done.stderr
    assert "Traceback" not in done.stderr


# -- the fetcher's view of apt sources -----------------------------------------


def fetcher():
    """scripts/fetch-runtimes as a module (it has no .py suffix)."""
    loader = SourceFileLoader("fetch_runtimes", str(ROOT / "scripts" / "fetch-runtimes"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_fetcher_reads_both_apt_source_formats():
    f = fetcher()
    deb822 = (
        "Types: deb\n# a comment\nURIs: http://mirror.invalid/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb-src\nURIs: http://mirror.invalid/debian\nSuites: bookworm\n\n"
        "Types: deb\nEnabled: no\nURIs: http://off.invalid/debian\nSuites: bookworm\n"
    )
    (entry,) = f.parse_deb822(deb822)
    assert entry == {
        "uris": ["http://mirror.invalid/debian"],
        "suites": ["bookworm", "bookworm-updates"],
        "signed_by": "/usr/share/keyrings/debian-archive-keyring.gpg",
    }
    line = (
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.invalid/debian-security bookworm-security"
    )
    assert f.parse_one_line(line) == {
        "uris": ["http://mirror.invalid/debian-security"],
        "suites": ["bookworm-security"],
        "signed_by": "/k.gpg",
    }
    assert f.parse_one_line("# deb http://mirror.invalid/debian bookworm main") is None
    assert f.parse_one_line("deb-src http://mirror.invalid/debian bookworm main") is None


def test_fetcher_is_quick_and_quiet_once_cached(bullseye):
    from tests.conftest import STARTING_ENV

    done = subprocess.run(
        [str(ROOT / "scripts" / "fetch-runtimes")],
        capture_output=True,
        text=True,
        env=STARTING_ENV,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == str(bullseye.bin)
    # Once cached it only checks the stamp and that the wrappers answer.
    assert done.stderr.count("\n") == 1 and "cached in" in done.stderr, done.stderr
