"""Tests moved from test_scenario.py."""

from __future__ import annotations

import pytest

from bridge.catalog import scenario
from bridge.errors import UsageError

GOOD = {
    "name": "t",
    "description": "d",
    "kind": "mac",
    "digest": "sha1",
    "key_bytes": 20,
    "sizes": [16],
    "calls": {"erlang": ["macN"]},
}


def test_builtin_hmac_sha1_is_the_thread_benchmark():
    sc = scenario.load("hmac-sha1")
    assert (sc.kind, sc.digest, sc.key_bytes, sc.sizes, sc.mac_bytes) == (
        "mac",
        "sha1",
        20,
        (1000,),
        10,
    )
    assert sc.calls["erlang"] == ("macN",)
    assert "sha" in sc.features


def test_every_builtin_scenario_loads():
    names = scenario.available()
    assert "hmac-sha1" in names
    for name in names:
        assert scenario.load(name).name == name


def test_unknown_scenario_lists_known_ones():
    with pytest.raises(UsageError, match="unknown scenario 'nope'.*hmac-sha1"):
        scenario.load("nope")


@pytest.mark.parametrize(
    "change, key",
    [
        ({"kind": "eval"}, "kind"),
        ({"digest": "rot13"}, "digest"),
        ({"sizes": [0]}, "sizes"),
        ({"sizes": [-5]}, "sizes"),
        ({"sizes": ["16"]}, "sizes"),
        ({"sizes": [2**40]}, "sizes"),
        ({"sizes": []}, "sizes"),
        ({"key_bytes": 0}, "key_bytes"),
        ({"mac_bytes": 21}, "mac_bytes"),
        ({"calls": {"erlang": ["os:cmd"]}}, "calls.erlang"),
        ({"calls": {"perl": ["x"]}}, "calls.perl"),
        ({"calls": {"erlang": ["hash"]}}, "calls.erlang"),
        ({"features": ["warp"]}, "features"),
        ({"exec": "rm -rf /"}, "exec"),
    ],
)
def test_validation_names_file_key_and_expectation(change, key):
    with pytest.raises(UsageError) as err:
        scenario.parse({**GOOD, **change}, "my.toml")
    assert "my.toml" in err.value.message and f"'{key}'" in err.value.message
    assert "expected" in err.value.message


def test_malformed_toml_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [unclosed")
    with pytest.raises(UsageError, match="not valid TOML"):
        scenario.load(str(bad))
