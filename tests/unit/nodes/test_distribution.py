"""--node as options: node names and their name kind, the cookie file, the
plan a run gets, the agent's renaming and compiler choice. No node runs here
(tests/cli/test_nodes.py starts real ones)."""

from __future__ import annotations

import re
import socket
import warnings
from pathlib import Path

import pytest

from bridge.cli import plans
from bridge.errors import BridgeWarning, UsageError
from bridge.nodes import agent, distribution
from bridge.system import otp


@pytest.mark.parametrize(
    "text, domain",
    [
        ("app@db1", "shortnames"),
        ("app@db1.example.com", "longnames"),
        ("app@127.0.0.1", "longnames"),
        ("my-app_2@host-9", "shortnames"),
    ],
)
def test_node_names_and_their_kind(text, domain):
    node = distribution.parse_node(text)
    assert str(node) == text and node.domain == domain


@pytest.mark.parametrize("text", ["@host", "app@", "a b@host", "app@ho st", "app@h@x", "a b"])
def test_bad_node_names(text):
    with pytest.raises(UsageError, match="expected NAME or NAME@HOST"):
        distribution.parse_node(text)


def test_a_bare_name_is_on_this_host_as_erl_sname_names_it(monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "db7.example.com")
    node = distribution.parse_node("target")
    # erl -sname target registers target@db7: the short host, short names.
    assert str(node) == "target@db7" and node.domain == "shortnames"


def _cookie(tmp_path: Path, content: bytes, mode: int = 0o400) -> Path:
    path = tmp_path / "cookie"
    path.write_bytes(content)
    path.chmod(mode)
    return path


def test_cookie_is_read_as_erl_reads_it(tmp_path):
    assert distribution.read_cookie(_cookie(tmp_path, b"SECRET\n")) == "SECRET"


@pytest.mark.parametrize(
    "content, mode, said",
    [
        (b"SECRET", 0o644, "chmod 400"),
        (b"SECRET", 0o640, "readable by others"),
        (b"\n", 0o600, "the cookie is empty"),
        ("sécret".encode(), 0o600, "printable ASCII"),
        (b"x" * 256, 0o600, "at most 255"),
    ],
)
def test_cookie_files_erl_would_refuse(tmp_path, content, mode, said):
    with pytest.raises(UsageError, match=said):
        distribution.read_cookie(_cookie(tmp_path, content, mode))


def test_a_named_cookie_file_readable_by_others_is_a_warning(tmp_path):
    # mix release writes releases/COOKIE 0644 under the default umask.
    path = _cookie(tmp_path, b"RELEASED", 0o644)
    with pytest.warns(BridgeWarning, match="readable by others .*chmod 400") as said:
        assert distribution.read_cookie(path, named=True) == "RELEASED"
    assert "RELEASED" not in str(said[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = distribution.cookie_from(None, path)
        assert source.named and str(source) == str(path)
    with pytest.warns(BridgeWarning):
        assert source.read() == "RELEASED"


def test_the_cookie_comes_from_the_option_the_file_release_cookie_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    home_file = _cookie(tmp_path, b"HOMECOOKIE")
    assert home_file.name == "cookie"
    home_file.rename(tmp_path / ".erlang.cookie")
    given = distribution.cookie_from("GIVEN", None, {"RELEASE_COOKIE": "xyzzy"})
    assert given.read() == "GIVEN" and str(given) == "--cookie"
    released = distribution.cookie_from(None, None, {"RELEASE_COOKIE": "xyzzy"})
    assert released.read() == "xyzzy" and str(released) == "RELEASE_COOKIE"
    default = distribution.cookie_from(None, None, {})
    assert default.read() == "HOMECOOKIE" and not default.named
    # The cookie is in no repr, str or message.
    for source in (given, released):
        assert source.value not in repr(source) + str(source)
    with pytest.raises(UsageError, match="give one"):
        distribution.cookie_from("A", tmp_path / "x", {})
    # Checked when read (node_plan reads it before anything starts).
    odd = distribution.cookie_from(None, None, {"RELEASE_COOKIE": "s\x1bcret"})
    with pytest.raises(UsageError, match="RELEASE_COOKIE: not a cookie") as bad:
        odd.read()
    assert "cret" not in bad.value.one_line()
    with pytest.raises(UsageError, match="--cookie: the cookie is empty"):
        distribution.node_plan(("a@h",), distribution.cookie_from("  ", None, {}))
    with pytest.raises(UsageError, match="--cookie: not a cookie"):
        distribution.cookie_from("caf\udce9", None, {}).read()  # undecodable argv bytes


def test_missing_cookie_file_and_directory(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        distribution.read_cookie(tmp_path / "absent")
    with pytest.raises(UsageError, match="not a regular file"):
        distribution.read_cookie(tmp_path)


def test_refusals_never_quote_the_cookie(tmp_path):
    with pytest.raises(UsageError) as caught:
        distribution.read_cookie(_cookie(tmp_path, b"TOPSECRET", 0o644))
    assert "TOPSECRET" not in caught.value.one_line()


def test_own_name_takes_the_targets_kind():
    short = distribution.own_name("shortnames")
    assert re.fullmatch(r"bridge_\d+_[0-9a-f]{6}", short)
    name, _, host = distribution.own_name("longnames").partition("@")
    assert name.startswith("bridge_") and "." in host
    assert distribution.own_name("shortnames") != short  # unique per call


# -- the run plan ---------------------------------------------------------------


def _options(tmp_path, **kw) -> plans.RunOptions:
    cookie = _cookie(tmp_path, b"C")
    base = dict(scenarios=("hmac-sha1",), node=("a@h",), measure=True, cookie_file=cookie)
    return plans.RunOptions(**{**base, **kw})


def test_a_node_run_measures_only_the_nodes_by_default(tmp_path):
    plan = plans.from_options(_options(tmp_path), ("bridge",))
    assert plan.kinds == () and plan.hw == "on"
    assert plan.nodes is not None and [str(t) for t in plan.nodes.targets] == ["a@h"]
    assert plan.nodes.measure and plan.nodes.max_load == 0.25
    assert "--runtimes" not in plan.reproduce
    assert "--node a@h --measure --max-load 0.25 --cookie-file" in plan.reproduce


def test_local_runtimes_beside_nodes_when_named(tmp_path):
    plan = plans.from_options(
        _options(tmp_path, runtimes="erlang,openssl", max_load=0.1), ("bridge",)
    )
    assert plan.kinds == ("erlang", "openssl") and plan.hw == "both"
    assert "--runtimes erlang,openssl" in plan.reproduce and "--max-load 0.1" in plan.reproduce


def test_without_node_nothing_changes(tmp_path):
    plan = plans.from_options(plans.RunOptions(scenarios=("hmac-sha1",)), ("bridge",))
    assert plan.nodes is None and plan.kinds == ("erlang", "python", "openssl")
    assert "--node" not in plan.reproduce and "--runtimes" not in plan.reproduce


@pytest.mark.parametrize(
    "changes, said",
    [
        ({"measure": False}, "add --measure"),
        ({"node": (), "measure": True}, "--measure goes with --node"),
        ({"node": (), "measure": False}, "--cookie/--cookie-file goes with --node"),
        ({"hw": "both"}, "cannot be masked"),
        ({"hw": "off"}, "cannot be masked"),
        ({"node": ("no host",)}, "expected NAME or NAME@HOST"),
        ({"scenarios": ("file-sha256",)}, "--node cannot measure file-sha256"),
        ({"scenarios": ("hmac-sha1", "file-sha256")}, "--node cannot measure file-sha256"),
        ({"method": "tc"}, "--method tc times local Erlang runtimes only"),
        ({"method": "tc", "runtimes": "python"}, "--method tc"),
        ({"schedulers": 2}, "--schedulers"),
        ({"concurrency": "1,2"}, "--concurrency"),
    ],
)
def test_node_plans_refused(tmp_path, changes, said):
    with pytest.raises(UsageError, match=said):
        plans.from_options(_options(tmp_path, **changes), ("bridge",))


@pytest.mark.parametrize(
    "changes",
    [
        {"scenarios": ("file-sha256",), "runtimes": "erlang"},
        {"method": "tc", "runtimes": "erlang"},
        {"schedulers": 2, "runtimes": "erlang"},
        {"concurrency": "1,2", "runtimes": "python"},
    ],
)
def test_what_a_local_runtime_beside_the_node_measures_is_allowed(tmp_path, changes):
    plan = plans.from_options(_options(tmp_path, **changes), ("bridge",))
    assert plan.nodes is not None and plan.kinds


def test_a_scenario_without_erlang_calls_cannot_run_on_a_node(tmp_path):
    sc = tmp_path / "py.toml"
    sc.write_text(
        'name = "py"\ndescription = "d"\nkind = "hash"\ndigest = "sha256"\nsizes = [16]\n'
        '[calls]\npython = ["hashlib"]\n'
    )
    with pytest.raises(UsageError, match="has none"):
        plans.from_options(_options(tmp_path, scenarios=(str(sc),)), ("bridge",))


def test_the_same_node_twice_is_one_target(tmp_path):
    plan = plans.from_options(_options(tmp_path, node=("a@h", "a@h", "b@h")), ("bridge",))
    assert [str(t) for t in plan.nodes.targets] == ["a@h", "b@h"]


# -- the agent -----------------------------------------------------------------


def test_renaming_touches_module_names_only():
    mapping = {"bridge_ops": "bridge_node_x_ops", "bridge_measure": "bridge_node_x_measure"}
    source = (
        "-module(bridge_ops).\n"
        "-import(bridge_measure, [run/3]).\n"
        "f() -> bridge_measure:run(L, P, 1000), get(bridge_measure_pace), bridge_opsx.\n"
        "-spec g() -> bridge_measure:samples().\n"
    )
    out = agent.rename_source(source, mapping)
    assert "-module(bridge_node_x_ops)." in out
    assert "-import(bridge_node_x_measure, [run/3])." in out
    assert "bridge_node_x_measure:run(" in out and "bridge_node_x_measure:samples()" in out
    assert "bridge_measure_pace" in out and "bridge_opsx" in out


def test_every_module_the_agent_reaches_is_renamed():
    # The agent's modules call each other only: no call may escape to a
    # bridge module that is not loaded on the node.
    t = agent.tag()
    mapping = {m: agent.renamed(m, t) for m in agent.SOURCES}
    for module in agent.SOURCES:
        text = (otp.ERL_SOURCES_DIR / f"{module}.erl").read_text()
        code = "\n".join(
            line.split("%")[0] for line in agent.rename_source(text, mapping).split("\n")
        )
        assert not re.search(r"\bbridge_(?!node_)\w+:", code), module


def _inst(version: str) -> otp.Installation:
    return otp.Installation(
        erl=Path(f"/otp/{version}/bin/erl"),
        erlc=Path(f"/otp/{version}/bin/erlc"),
        root=None,
        otp_version=version,
        erts_version="",
    )


@pytest.mark.parametrize(
    "release, have, chosen",
    [
        (25, ["25.2.3", "23.2.6"], "25.2.3"),
        (23, ["25.2.3", "23.2.6"], "23.2.6"),
        (27, ["25.2.3", "23.2.6", "26.0"], "26.0"),  # the newest not newer
        (24, ["25.2.3", "23.2.6"], "23.2.6"),
        (22, ["25.2.3", "23.2.6"], None),  # every one is newer than the node
        (28, ["25.2.3"], None),  # more than two releases back
    ],
)
def test_the_agent_is_built_by_the_nodes_release_or_the_nearest_older(release, have, chosen):
    found = agent.choose([_inst(v) for v in have], release)
    assert (found.otp_version if found else None) == chosen
