"""Hardware verdicts measured for real: SHA-256 at 16 KiB with and without
SHA-NI, in every runtime, through the CLI.

The effect of a mask is judged on CPU time per call (tests/cputime.py),
which a busy machine does not stretch; the word a verdict gives is asserted
as well, and where a busy machine kept it from today's verdicts (which read
wall time) the test says it skipped for that (tests/busy.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bridge.report import schema
from bridge.system import environment
from tests import busy, cputime
from tests.conftest import bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]


SHORT = [
    "--samples",
    "20",
    "--sample-ms",
    "5",
    "--warmup-ms",
    "50",
    "--rounds",
    "4",
    "--openssl-runs",
    "3",  # a verdict needs 3 samples a side (bridge.stats.MIN_CI_SAMPLES)
]


def scenario_file(tmp_path, digest: str) -> str:
    path = tmp_path / f"{digest}-16k.toml"
    path.write_text(
        f'name = "{digest}-16k"\ndescription = "{digest} at 16 KiB"\nkind = "hash"\n'
        f'digest = "{digest}"\nsizes = [16384]\nfeatures = ["sha"]\n'
        '[calls]\nerlang = ["hash"]\npython = ["hashlib"]\nopenssl = ["speed-evp"]\n'
    )
    return str(path)


def verdicts(tmp_path, digest, env=None, extra=()):
    out = tmp_path / "r.json"
    args = ("run", scenario_file(tmp_path, digest), *SHORT, *extra, "-o", str(out))
    done = bridge_cmd(*args, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    return report, {v["runtime"].split("@")[0]: v for v in report["verdicts"]}


sha_ni = pytest.mark.skipif(
    not environment.cpu().has("sha"), reason="the CPU has no SHA extensions"
)


@pytest.mark.serial  # judges a measured effect and a verdict
@sha_ni
def test_sha256_uses_sha_extensions_in_every_runtime(tmp_path):
    report, by_kind = verdicts(tmp_path, "sha256")
    assert set(by_kind) == {"erlang", "python", "openssl"}
    loaded = schema.load(tmp_path / "r.json")
    for kind in by_kind:  # SHA-NI: about 3x at 16 KiB
        assert cputime.masked_ratio(loaded, kind=kind) > 1.5, kind
    assert {r["hw"] for r in report["results"]} == {"on", "off"}
    masks = {e["mask"]["value"] for e in report["hardware"]["experiments"]}
    assert masks <= {":~0x20000000", ":~0x20000000::::"}
    assert all(e["mask_check"]["ok"] in (True, None) for e in report["hardware"]["experiments"])
    # The masked runs really ran with the mask, and only them.
    runtimes = report["runtimes"]
    off_env = [rt["env"]["OPENSSL_ia32cap"] for rt in runtimes if rt["hw"] == "off"]
    on_env = [rt["env"]["OPENSSL_ia32cap"] for rt in runtimes if rt["hw"] == "on"]
    assert len(off_env) == 3 and all(off_env) and not any(on_env)
    # A busy machine's verdicts are judged on CPU time (issue 35): the word
    # holds beside CPU hogs. openssl's three runs a side can still straddle.
    for kind in ("erlang", "python"):
        v = by_kind[kind]
        assert v["verdict"] == "used", (kind, v)
        assert v["speedup"] > 1.5 and v["speedup_ci95"][0] > v["margin"], (kind, v)
    with busy.unless_busy(loaded, needs="the word used of three openssl runs a side"):
        assert by_kind["openssl"]["verdict"] == "used", by_kind["openssl"]


@sha_ni
def test_already_masked_environment_never_claims_used(tmp_path):
    report, by_kind = verdicts(tmp_path, "sha256", env={"OPENSSL_ia32cap": ":~0x20000000"})
    assert {v["verdict"] for v in by_kind.values()} == {"masked"}
    assert {r["hw"] for r in report["results"]} == {"on"}  # no pointless masked twin


@pytest.mark.serial  # judges a measured effect and a verdict
@sha_ni
def test_sha512_is_the_control(tmp_path):
    # SHA-NI has no SHA-512 instructions on this CPU. Measured in the same
    # interleaved run, masking SHA must change SHA-512's CPU time per call
    # far less than SHA-256's (about 3x at 16 KiB here), and the control's
    # verdict is never `used`, however busy the machine (its word may be
    # `inconclusive`: its wall-time ratio has been seen up to 1.44x).
    out = tmp_path / "r.json"
    files = [scenario_file(tmp_path, d) for d in ("sha256", "sha512")]
    done = bridge_cmd("run", *files, *SHORT, "--rounds", "8", "--samples", "40", "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    loaded = schema.load(out)
    by = {(v["scenario"], v["runtime"].split("@")[0]): v for v in report["verdicts"]}
    for kind in ("erlang", "python", "openssl"):
        control = by[("sha512-16k", kind)]
        assert control["verdict"] != "used", control
        effect = cputime.masked_ratio(loaded, scenario="sha256-16k", kind=kind)
        assert cputime.masked_ratio(loaded, scenario="sha512-16k", kind=kind) < 0.6 * effect, kind


# env without its quietness check (3 s of a loop on each CPU, read by no test
# here): tests/cli/test_noise.py's serial test judges that part.
NO_QUIETNESS = ("--quietness-seconds", "0")


def test_env_command(tmp_path):
    done = bridge_cmd("env", *NO_QUIETNESS)
    assert done.returncode == 0, done.stderr
    assert "erlang@" in done.stdout and "libcrypto loaded" in done.stdout
    data = json.loads(bridge_cmd("env", "--format", "json", *NO_QUIETNESS).stdout)
    assert {"environment", "runtimes", "hardware"} <= set(data)
    assert {rt["kind"] for rt in data["runtimes"]} == {"erlang", "python", "openssl"}
    assert data["environment"]["arch"]


@pytest.mark.serial  # judges a measured effect and a verdict
@sha_ni
def test_a_stale_twin_mask_in_the_cache_costs_time_never_a_wrong_twin(tmp_path, no_leftovers):
    """Each twin's mask is kept for the next run (bridge.measure.startup), which
    launches the twin beside its partner. A kept mask that is wrong (another
    library since, a hand-edited cache) must be stopped unused and the right
    twin run instead."""
    cache = Path(os.environ["BRIDGE_CACHE_DIR"]) / "bridge" / "twins.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    stale = {"OPENSSL_ia32cap": ":~0x4"}
    labels = {"erlang": "erl", "python": "python", "openssl": "openssl"}
    cache.write_text(json.dumps({json.dumps([k, v, ["sha"]]): stale for k, v in labels.items()}))
    report, by_kind = verdicts(tmp_path, "sha256")
    # Each masked twin masked SHA: about 3x the CPU time per call at 16 KiB
    # (the stale mask leaves SHA on: it would have given about 1x).
    loaded = schema.load(tmp_path / "r.json")
    for kind in labels:
        assert cputime.masked_ratio(loaded, kind=kind) > 1.5, kind
    off = [rt for rt in report["runtimes"] if rt["hw"] == "off"]
    off_env = {rt["kind"]: rt["env"]["OPENSSL_ia32cap"] for rt in off}
    assert set(off_env) == set(labels) and ":~0x4" not in off_env.values()
    kept = json.loads(cache.read_text())
    assert {k: kept[json.dumps([k, v, ["sha"]])]["OPENSSL_ia32cap"] for k, v in labels.items()} == (
        off_env
    )
    with busy.unless_busy(loaded, needs="the word used"):
        assert {kind: v["verdict"] for kind, v in by_kind.items()} == dict.fromkeys(labels, "used")


# The controls, several times over: masking SHA cannot change SHA-512, masking
# AES-NI and PCLMULQDQ cannot change ChaCha20-Poly1305. However noisy the
# machine, no run may say "used" (issue 25: five quick runs gave 26 false
# ones). Each scenario is copied under three names, so one run judges each
# control three times at two sizes in each runtime, and the run is made
# twice, with two seeds. openssl runs once a side in the first copy only: a
# cell without a CI says what is missing. bench/controls.py does ten --quick
# runs of the real scenarios.
# Six rounds: two processes per runtime and mode, so that a verdict weighs the
# process-to-process spread (one process a side, as in --quick, cannot tell a
# process's own offset from the mask: issue 25 measured 2 false "used" in 240
# quick verdicts that way).
CONTROL_SHORT = ["--samples", "12", "--sample-ms", "2", "--rounds", "6", "--warmup-ms", "0"]


def control_files(tmp_path) -> list[str]:
    files = []
    for n in range(3):
        openssl = 'openssl = ["speed-evp"]\n' if n == 0 else ""
        for name, body in (
            ("sha512", 'kind = "hash"\ndigest = "sha512"\nfeatures = ["sha"]\n'),
            (
                "chacha",
                'kind = "cipher"\ncipher = "chacha20-poly1305"\nfeatures = ["aes", "pclmul"]\n',
            ),
        ):
            calls = (
                'erlang = ["hash"]\npython = ["hashlib"]\n'
                if name == "sha512"
                else 'erlang = ["crypto_one_time"]\npython = ["cryptography"]\n'
            )
            path = tmp_path / f"{name}-{n}.toml"
            path.write_text(
                f'name = "{name}-{n}"\ndescription = "control"\n{body}sizes = [64, 16384]\n'
                f"[calls]\n{calls}{openssl if name == 'sha512' else ''}"
            )
            files.append(str(path))
    return files


@pytest.mark.serial  # a verdict
def test_the_controls_never_say_used(tmp_path):
    files = control_files(tmp_path)
    used = []
    for seed in ("1", "2"):
        out = tmp_path / f"r{seed}.json"
        args = ("run", *files, *CONTROL_SHORT, "--openssl-runs", "1", "--seed", seed)
        done = bridge_cmd(*args, "--hw", "both", "-o", str(out))
        assert done.returncode == 0, done.stderr
        found = json.loads(out.read_text())["verdicts"]
        measured = [v for v in found if v.get("speedup") is not None]
        assert len(measured) >= 2 * 3 * 2 * 2  # two controls, three copies, two sizes, two kinds
        used += [v for v in found if v["verdict"] == "used"]
        # The workers' twins are judged round by round; openssl's one run a side has no rounds
        # to pair (and no CI).
        assert {v["statistic"] for v in measured if not v["runtime"].startswith("openssl")} == {
            "paired"
        }
        openssl = [v for v in found if v["runtime"].startswith("openssl")]
        assert openssl and all(
            v["verdict"] in ("inconclusive", "cpu-lacks")
            and (
                v["verdict"] == "cpu-lacks"
                or {"why": "too-few-samples", "what": "openssl run", "have": 1, "need": 3}
                in v["reasons"]
            )
            and not v["speedup_ci95"]
            for v in openssl
        ), openssl
    # However busy the machine: beside two CPU hogs (a load of 13-16) Python's
    # SHA-512 and ChaCha20 twins read 3.7-5.7x "slower" masked by wall time,
    # the masked twin waiting for a CPU, and were `used` until a busy
    # machine's `used` had to show in CPU time too (bridge.hw.ab).
    assert not used, used


@pytest.mark.serial  # judges a measured effect and a verdict
@sha_ni
def test_hmac_sha1_quick_judges_a_busy_machine_on_cpu_time(tmp_path):
    # The headline question (issue 35): under load --quick answers on CPU
    # time per call, says so and the margin it needed, and where it cannot
    # answer, names the rerun; it never says not-used of a call that uses
    # SHA-NI. Quiet, the verdicts are judged on wall time, as before.
    out = tmp_path / "r.json"
    done = bridge_cmd("run", "hmac-sha1", "--quick", "-o", str(out), "--progress", "off")
    assert done.returncode == 0, done.stderr
    report = schema.load(out)
    judged = [v for v in report.verdicts if v.call_id in ("macN", "hmac.digest")]
    assert len(judged) == 2
    for v in judged:
        assert v.verdict != "not-used", v
        basis = [r for r in v.reasons if r.why.value == "cpu-basis"]
        if v.basis is not None and v.basis.value == "cpu":
            # Waited for a CPU: the margin is the run's, never the old flat 2x.
            assert basis and v.margin is not None and 1.1 <= v.margin < 2, v
            assert basis[0]["needs"] == v.margin
            assert "judged on CPU time: a run waited for a CPU" in " ".join(done.stdout.split())
        else:
            assert not basis, v
        if v.verdict == "used":
            assert v.speedup_ci95 is not None and v.speedup_ci95[0] > v.margin, v
        else:
            assert v.rerun is not None, v  # what would settle it
