"""Every built-in scenario kind run for real through the CLI: sweeps with the cost
model, ECDSA sign/verify checked by the driver's own ECDSA, ciphers, and file
digests, in all three runtimes."""

from __future__ import annotations

import json
import os

import pytest

from bridge.catalog import scenario
from tests.conftest import bridge_cmd, needs_erl, needs_openssl


@pytest.mark.serial  # judges a measured effect
def test_real_sha256_sweep_has_smaller_b_with_sha_ni(tmp_path):
    """The report's cost model (a + b x size) for both twins, and SHA-NI's
    smaller b judged on CPU time per call (a busy machine stretches the
    wall time the report's fits are made of, not this)."""
    from bridge.analysis import fits
    from bridge.report import schema
    from bridge.system import environment
    from tests import cputime
    from tests.conftest import bridge_cmd, needs_erl

    if not environment.cpu().has("sha"):
        pytest.skip("no SHA extensions on this CPU")
    _ = needs_erl
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "sha256",
        "--runtimes",
        "python",
        "--sizes",
        "64,1024,8192,16384",
        "--samples",
        "12",
        "--sample-ms",
        "3",
        "--rounds",
        "3",
        "--warmup-ms",
        "20",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = schema.load(out)
    by_hw = {f.hw: f for f in report.fits}
    for f in by_hw.values():
        assert f.a_ns > 0 and f.b_ns_per_byte > 0
    assert set(by_hw) == {"on", "off"}
    cpu = {}
    for hw in ("on", "off"):
        cells = sorted(cputime.cells(report, hw=hw), key=lambda r: r.size)
        cpu[hw] = fits.fit([r.size for r in cells], [cputime.median(r) for r in cells])
    assert cpu["on"].b_ns_per_byte < cpu["off"].b_ns_per_byte / 1.5, cpu
    assert "Cost model" in done.stdout


def test_every_builtin_scenario_runs_with_all_its_runtimes(tmp_path):
    """Issue 6: each scenario, briefly, on this machine: every runtime it
    names gives a result (unsupported only where a package is missing)."""
    import json
    import shutil

    from tests.conftest import bridge_cmd

    if shutil.which("erl") is None or shutil.which("openssl") is None:
        pytest.skip("needs erl and openssl")
    pytest.importorskip("cryptography")
    from tests.cli.test_algorithms import GROUPS

    # The scenarios of issue 14 (and ecdsa-p256) run in test_algorithms.py,
    # with the checks their kinds need and the calls a release may lack.
    elsewhere = {name for names, _ in GROUPS.values() for name in names}
    # The TLS handshakes run in test_tls.py, with their listeners watched.
    elsewhere |= {"tls-handshake", "tls-handshake-p256", "tls-rsa2048", "tls-mtls", "tls-resume"}
    # One bridge per size, every scenario of that size in it: one node and
    # worker start each, not one per scenario.
    groups: dict[tuple[str, int], list] = {}
    for name in scenario.available():
        if name in elsewhere:
            continue
        sc = scenario.load(name)
        option = "--file-size" if sc.kind == "file-digest" else "--sizes"
        size = 1 << 20 if sc.kind == "file-digest" else sc.sizes[0]
        groups.setdefault((option, size), []).append(sc)
    for (option, size), scs in groups.items():
        out = tmp_path / f"{size}.json"
        done = bridge_cmd(
            "run",
            *(sc.name for sc in scs),
            option,
            str(size),
            "--samples",
            "2",
            "--sample-ms",
            "1",
            "--rounds",
            "1",
            "--openssl-runs",
            "1",
            "--warmup-ms",
            "1",
            "--hw",
            "on",
            "-o",
            str(out),
        )
        names = [sc.name for sc in scs]
        assert done.returncode == 0, (names, done.stderr)
        report = json.loads(out.read_text())
        for sc in scs:
            ran = {
                (r["runtime"].split("@")[0], r["call_id"])
                for r in report["results"]
                if r["status"] == "ok" and r["scenario"] == sc.name
            }
            named = {(kind, cid) for kind, ids in sc.calls.items() for cid in ids}
            assert ran == named, (sc.name, named - ran)
        assert all(check["match"] for check in report["interop"]), names


@needs_erl
@needs_openssl
def test_sign_and_verify_in_all_runtimes(tmp_path):
    pytest.importorskip("cryptography")
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "ecdsa-p256",
        "--samples",
        "3",
        "--sample-ms",
        "2",
        "--rounds",
        "1",
        "--openssl-runs",
        "1",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    calls = {(r["runtime"].split("@")[0], r["call_id"]) for r in report["results"]}
    assert calls == {
        ("erlang", "sign"),
        ("erlang", "verify"),
        ("python", "sign"),
        ("python", "sign+load"),
        ("python", "load"),
        ("python", "verify"),
        ("openssl", "speed-sign"),
        ("openssl", "speed-verify"),
    }
    check = report["interop"][0]
    assert check["match"] and check["reference_from"].startswith("the driver (bridge.ec")
    verify = [r for r in report["results"] if r["call_id"] == "verify"]
    assert all(r["output_hex"] == "01" for r in verify)
    assert all(r["ops_per_s"] > 0 for r in report["results"])


@needs_erl
@needs_openssl
@pytest.mark.parametrize("name", ["aes-128-cbc", "aes-256-gcm"])
def test_cipher_run_in_all_runtimes(tmp_path, name):
    pytest.importorskip("cryptography")
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        name,
        "--sizes",
        "64",
        "--samples",
        "3",
        "--sample-ms",
        "2",
        "--rounds",
        "1",
        "--openssl-runs",
        "1",
        "--hw",
        "on",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    kinds = {r["runtime"].split("@")[0] for r in report["results"] if r["status"] == "ok"}
    assert kinds == {"erlang", "python", "openssl"}
    check = report["interop"][0]
    assert check["match"] and check["reference_from"].startswith("the driver")
    if name.endswith("gcm"):  # openssl enc has no AEAD: its output is not claimed
        assert [u.split("@")[0] for u in check["unchecked"]] == ["openssl"]
        assert "Not checked" in done.stdout  # the view says which output it could not claim


@needs_erl
def test_python_without_cryptography_is_unsupported_not_an_error(tmp_path):
    hide = tmp_path / "nocrypto" / "cryptography"
    hide.mkdir(parents=True)
    (hide / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    env = {"PYTHONPATH": str(hide.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run",
        "aes-128-cbc",
        "--sizes",
        "16",
        "--samples",
        "3",
        "--sample-ms",
        "2",
        "--rounds",
        "1",
        "--hw",
        "on",
        "--runtimes",
        "erlang,python",
        "-o",
        str(out),
        env=env,
    )
    assert done.returncode == 0, done.stderr
    py = [r for r in json.loads(out.read_text())["results"] if r["runtime"].startswith("python")]
    assert py[0]["status"] == "unsupported" and "crypto-bridge[crypto]" in py[0]["reason"]


@needs_erl
@needs_openssl
def test_file_digest_in_all_runtimes(tmp_path):
    out = tmp_path / "r.json"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = bridge_cmd(
        "run",
        "file-sha256",
        "--file-size",
        "1M",
        "--openssl-runs",
        "2",
        "--rounds",
        "2",
        "--warmup-ms",
        "5",
        "--hw",
        "on",
        "-o",
        str(out),
        env={"TMPDIR": str(scratch)},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    ok = [r for r in report["results"] if r["status"] == "ok"]
    assert {r["runtime"].split("@")[0] for r in ok} == {"erlang", "python", "openssl"}
    assert all(r["size"] == 1 << 20 and len(r["samples"]) == 2 for r in ok)
    assert report["interop"][0]["match"] and report["interop"][0]["reference_from"].startswith(
        "the driver"
    )
    assert list(scratch.iterdir()) == []  # the generated file is gone
