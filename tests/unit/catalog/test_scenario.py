"""Tests moved from test_scenario.py."""

from __future__ import annotations

from pathlib import Path

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


def test_an_unknown_scenario_names_the_closest_and_where_to_see_them_all():
    count = len(scenario.available())
    with pytest.raises(UsageError) as raised:
        scenario.load("sha265")
    assert raised.value.one_line() == (
        "unknown scenario 'sha265'; did you mean sha256, sha3-256 or sha512?"
        f" (`crypto-bridge list` names all {count})"
    )
    with pytest.raises(UsageError, match="did you mean hmac-sha1, "):
        scenario.load("hmac-sh1")
    with pytest.raises(UsageError) as raised:
        scenario.load("nope")
    assert (
        raised.value.one_line()
        == f"unknown scenario 'nope' (`crypto-bridge list` names all {count})"
    )
    # A part of a name finds the names that hold it.
    assert scenario.closest("aes", ["aes-128-gcm", "sha256", "aes-256-gcm"]) == [
        "aes-128-gcm",
        "aes-256-gcm",
    ]


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
        ({"name": "a\x00b"}, "name"),
        ({"name": "hmac\u202e1ahs"}, "name"),
        ({"name": "\x1b[2Jx"}, "name"),
        ({"name": "Upper"}, "name"),
        ({"name": "../up"}, "name"),
        ({"name": "-dash"}, "name"),
        ({"name": "x" * 65}, "name"),
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


def test_builtin_names_follow_the_name_rule():
    assert all(scenario.NAME.fullmatch(name) for name in scenario.available())


@pytest.mark.parametrize("name", ["x" * 5000, "a\x00b", "hmac\u202esha1", "Hmac-SHA1", "-x", ""])
def test_a_name_that_no_scenario_has_is_refused_before_any_lookup(name):
    with pytest.raises(UsageError, match="is not a scenario name") as err:
        scenario.find(name)
    line = err.value.one_line()
    assert len(line) < 400 and "\x00" not in line and "\u202e" not in line


@pytest.mark.parametrize("path", ["/" + "x" * 5000 + ".toml", "dir/a\x00b.toml"])
def test_a_path_the_file_system_refuses_is_a_usage_error(path):
    with pytest.raises(UsageError, match="scenario file") as err:
        scenario.find(path)
    assert len(err.value.one_line()) < 400


def _file(directory, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    text = "\n".join(f"{k} = {v!r}" for k, v in {**GOOD, "name": name}.items() if k != "calls")
    (directory / f"{name}.toml").write_text(
        text.replace("'", '"') + '\n[calls]\nerlang = ["macN"]\n'
    )


def test_a_scenario_dir_file_named_like_a_builtin_is_refused(tmp_path):
    """It used to replace the built-in silently, its own calls running under
    the built-in's name. The error names both files and the two ways out."""
    _file(tmp_path, "hmac-sha1")
    with pytest.raises(UsageError) as caught:
        scenario.load("hmac-sha1", (tmp_path,))
    said = caught.value.one_line()
    assert str(tmp_path / "hmac-sha1.toml") in said
    assert str(scenario.BUILTIN_DIR / "hmac-sha1.toml") in said
    assert 'name = "hmac-sha1-mine"' in said and f"bridge run {tmp_path}/hmac-sha1.toml" in said
    # By its path it is the file meant, and loads; the other names still load.
    assert scenario.load(str(tmp_path / "hmac-sha1.toml")).calls == {"erlang": ("macN",)}
    assert scenario.load("sha256", (tmp_path,)).name == "sha256"


def test_the_same_name_in_two_scenario_dirs_is_refused(tmp_path):
    _file(tmp_path / "a", "mine")
    _file(tmp_path / "b", "mine")
    with pytest.raises(UsageError, match="is both .*/a/mine.toml and .*/b/mine.toml"):
        scenario.find("mine", (tmp_path / "a", tmp_path / "b"))
    assert scenario.find("mine", (tmp_path / "a",)) == tmp_path / "a" / "mine.toml"


def test_the_builtins_given_as_a_scenario_dir_are_not_two_files():
    assert scenario.load("sha1", (scenario.BUILTIN_DIR,)).name == "sha1"


@pytest.mark.parametrize("where", ["/dev/zero", "file", "missing"])
def test_a_scenario_dir_must_be_a_directory(tmp_path, where):
    path = {"file": tmp_path / "f.toml", "missing": tmp_path / "none"}.get(where, Path(where))
    if where == "file":
        path.write_text("")
    for lookup in (lambda: scenario.find("sha1", (path,)), lambda: scenario.available((path,))):
        with pytest.raises(UsageError, match="not a directory"):
            lookup()
