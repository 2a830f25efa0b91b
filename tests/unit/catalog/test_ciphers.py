"""Cipher scenarios: validation, and real runs in all three runtimes."""

from __future__ import annotations

import pytest

from bridge.catalog import inputs, scenario
from bridge.errors import UsageError

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
