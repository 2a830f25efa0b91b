"""Cipher scenarios: validation, and real runs in all three runtimes."""

from __future__ import annotations

import json
import os

import pytest

from bridge import inputs, scenario
from bridge.errors import UsageError
from tests.conftest import bridge_cmd, needs_erl, needs_openssl

BASE = {
    "name": "c",
    "description": "d",
    "kind": "cipher",
    "cipher": "aes-128-cbc",
    "sizes": [16, 64],
    "calls": {"erlang": ["crypto_one_time"]},
}


def test_cipher_scenarios_load():
    for name in ("aes-128-cbc", "aes-256-gcm"):
        sc = scenario.load(name)
        assert sc.kind == "cipher" and sc.algorithm == name and "aes" in sc.features
    assert "pclmul" in scenario.load("aes-256-gcm").features


@pytest.mark.parametrize(
    "change, key",
    [
        ({"cipher": "rot13"}, "cipher"),
        ({"digest": "sha1"}, "digest"),
        ({"sizes": [100]}, "sizes"),
        ({"calls": {"erlang": ["macN"]}}, "calls.erlang"),
    ],
)
def test_cipher_validation(change, key):
    with pytest.raises(UsageError) as err:
        scenario.parse({**BASE, **change}, "c.toml")
    assert f"'{key}'" in err.value.message


def test_cipher_inputs_have_key_and_iv_of_the_right_length():
    gcm = inputs.for_scenario(1, scenario.load("aes-256-gcm"), 64)
    assert (len(gcm.key), len(gcm.iv), len(gcm.data)) == (32, 12, 64)
    assert gcm.to_json()["iv_hex"] == gcm.iv.hex()


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
        assert "unchecked" in done.stdout


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
    assert py[0]["status"] == "unsupported" and "bridge[crypto]" in py[0]["reason"]


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


def test_file_size_option_is_checked():
    done = bridge_cmd("run", "file-sha256", "--file-size", "lots")
    assert done.returncode == 2 and "--file-size" in done.stderr
