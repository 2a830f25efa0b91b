"""User calls (issue 26): the command line's prefixes, [[calls]] in scenario
files and their round trip through a report, the generated code, --pa
expansion, the interop check of bridge time, and the replay's confirmation."""

from __future__ import annotations

import pytest

from bridge.analysis import interop
from bridge.catalog import calls, scenario, usercode
from bridge.cli import replay
from bridge.errors import UsageError
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.runtimes import usercode as running

MAC = {
    "name": "t",
    "description": "d",
    "kind": "mac",
    "digest": "sha256",
    "key_bytes": 32,
    "sizes": [16],
}


def test_prefixes_choose_the_runtime_and_the_kind_that_runs_it():
    cases = {
        "crypto:hash(sha256, Data)": ("erlang", "erlang"),
        "erl:rand:bytes(2).": ("erlang", "erlang"),
        "ex::crypto.hash(:sha256, data)": ("elixir", "erlang"),
        "py:hashlib.sha256(data).digest()": ("python", "python"),
        "sh:openssl dgst -sha256 -binary": ("shell", "openssl"),
    }
    for text, (runtime, kind) in cases.items():
        uc = usercode.parse_cli(text)
        assert (uc.runtime, uc.kind) == (runtime, kind)
        assert len(uc.key) == 16 and uc.key == usercode.expr_key(runtime, uc.expr)
    assert usercode.parse_cli("erl:rand:bytes(2).").shown == "rand:bytes(2)."
    assert usercode.body("rand:bytes(2). ") == "rand:bytes(2)"  # erlperf's habit
    for bad in ("", "py:", "  .", "x" * 5000, "a\0b"):
        with pytest.raises(usercode.BadCall):
            usercode.parse_cli(bad)


def test_calls_entries_put_user_calls_beside_the_tables_and_round_trip():
    data = {
        **MAC,
        "calls": [
            {"runtime": "erlang", "call": "macN"},
            {"runtime": "erlang", "expr": "crypto:mac(hmac, sha256, Key, Data)", "label": "mine"},
            {"runtime": "python", "expr": "hmac.digest(key, data, 'sha256')", "checked": False},
            {"runtime": "shell", "expr": "openssl mac -digest sha256 HMAC"},
        ],
    }
    sc = scenario.parse(data, "f.toml")
    assert sc.calls == {"erlang": ("macN",), "python": (), "openssl": ()}
    assert [uc.title for uc in sc.user_calls] == [
        "mine",
        "py:hmac.digest(key, data, 'sha256')",
        "sh:openssl mac -digest sha256 HMAC",
    ]
    assert [uc.checked for uc in sc.user_calls] == [True, False, True]
    again = scenario.parse(sc.to_json(), "report")
    assert again == scenario.parse(data, "report")
    assert sc.to_json()["calls"] == {"erlang": ["macN"]}
    assert sc.to_json()["user_calls"][0] == {
        "runtime": "erlang",
        "expr": "crypto:mac(hmac, sha256, Key, Data)",
        "label": "mine",
        "checked": True,
    }
    call = usercode.as_call(sc, 2)
    assert (call.id, call.runtime, call.op, call.unchecked) == (
        "expr:" + sc.user_calls[1].key[:8],
        "python",
        "user",
        usercode.NOT_CHECKED,
    )
    assert usercode.as_call(sc, 3).op == "user_shell"
    # Readers of a report see a stand-in for any user call id.
    assert calls.lookup("erlang", "expr:7").randomised
    assert calls.lookup("erlang", "nope") is None


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"runtime": "ruby", "expr": "1"}, "runtime 'ruby'"),
        ({"runtime": "erlang", "expr": ""}, "an empty expression"),
        ({"runtime": "erlang", "expr": "1", "checked": "yes"}, "'checked' must be true or false"),
        ({"runtime": "erlang", "expr": "1", "code": "x"}, "unknown key 'code'"),
        ({"runtime": "erlang", "call": "mac"}, "unknown call 'mac'"),
        ({"runtime": "erlang", "call": "macN", "expr": "x"}, "unknown key 'expr' beside 'call'"),
    ],
)
def test_bad_calls_entries_are_one_line_errors(entry, message):
    with pytest.raises(UsageError) as err:
        scenario.parse({**MAC, "calls": [entry]}, "f.toml")
    assert message in err.value.message and "f.toml" in err.value.message


def test_the_same_expression_twice_is_refused_and_ids_follow_the_expression():
    twice = [{"runtime": "erlang", "expr": "f()"}, {"runtime": "erlang", "expr": "f()"}]
    with pytest.raises(UsageError, match="the same expression twice"):
        scenario.parse({**MAC, "calls": twice}, "f.toml")
    a, b = usercode.make("erlang", "f()"), usercode.make("python", "f()")
    assert usercode.call_id(a) != usercode.call_id(b)
    assert usercode.call_id(a) == usercode.call_id(usercode.parse_cli("f()"))


def test_expr_scenario_needs_user_calls():
    data = {"name": "time", "description": "d", "kind": "expr", "sizes": [8], "calls": {}}
    with pytest.raises(UsageError, match="key .calls.: expected"):
        scenario.parse(data, "r.json")
    data["user_calls"] = [{"runtime": "python", "expr": "data"}]
    sc = scenario.parse(data, "r.json")
    assert sc.calls == {"python": ()} and sc.user_calls[0].expr == "data"


def test_generated_erlang_and_elixir_modules_bind_the_inputs_and_keep_the_value():
    uc = usercode.parse_cli("crypto:hash(sha256, Data).")
    src = running.erlang_source(uc)
    assert src.startswith(f"-module(bridge_user_{uc.key}).")
    assert "once(Data, Size, Key, IV, Count, Pub, Sig) ->" in src
    assert "BridgeAcc__ = begin\ncrypto:hash(sha256, Data)\n    end," in src  # no '.'
    assert (
        "loop(0, _Data, _Size, _Key, _IV, _Count, _Pub, _Sig, BridgeAcc__) -> BridgeAcc__;" in src
    )
    ex = running.elixir_source(usercode.parse_cli("ex::crypto.hash(:sha256, data)"))
    assert "def once(data, size, key, iv, count, pub, sig) do" in ex
    assert "bridge_acc = (\n:crypto.hash(:sha256, data)\n    )" in ex


def test_pa_takes_a_mix_build_glob_and_a_lib_directory(tmp_path):
    for app in ("a", "b"):
        (tmp_path / "_build" / "dev" / "lib" / app / "ebin").mkdir(parents=True)
    plain = tmp_path / "plain"
    plain.mkdir()
    ebins = [str(tmp_path / "_build" / "dev" / "lib" / a / "ebin") for a in ("a", "b")]
    assert running.expand_pa((str(tmp_path / "_build" / "*" / "lib" / "*" / "ebin"),)) == tuple(
        ebins
    )
    assert running.expand_pa((str(tmp_path / "_build" / "dev" / "lib"),)) == tuple(ebins)
    assert running.expand_pa((str(plain),)) == (str(plain),)
    with pytest.raises(UsageError, match="--pa .*: no such directory"):
        running.expand_pa((str(tmp_path / "nope" / "*"),))
    with pytest.raises(UsageError, match="--python-path"):
        running.check_python_path((str(tmp_path / "nope"),))
    with pytest.raises(UsageError, match="go with user calls"):
        running.plan_code((), (str(plain),), ())


def test_proc_addresses_loopback_and_not():
    assert running._address("0100007F:1F90") is None  # 127.0.0.1:8080
    assert running._address("00000000:0FA0") == "0.0.0.0:4000"
    assert running._address("00000000000000000000000001000000:0016") is None  # ::1
    assert running._address("00000000000000000000000000000000:0016").endswith(":22")


def _result(sc, n: int, out: str, runtime: str = "erlang@27") -> schema.Result:
    return schema.Result(
        scenario="time",
        runtime=runtime,
        call_id=usercode.call_id(sc.user_calls[n - 1]),
        call=f"e{n}",
        semantics="user code",
        algorithm="user code",
        size=8,
        hw=Hw.ON,
        api="x",
        samples=(1, 2, 3),
        loops=1,
        output_hex=out,
    )


def test_same_output_takes_the_first_expression_and_names_the_wrong_one():
    sc = scenario.ExprScenario(name="time", description="d", sizes=(8,)).with_user_calls(
        tuple(usercode.make("erlang", e) for e in ("good()", "other()", "wrong()"))
    )
    rts = [schema.Runtime(id="erlang@27", kind="erlang", executable="erl", version="27")]
    # Results come in line-up order; the reference is the first expression's.
    results = [_result(sc, 3, "ff"), _result(sc, 2, "aa"), _result(sc, 1, "aa")]
    (check,) = interop.checks([sc], results, rts, lambda s, n: None)
    assert check.reference == "aa" and check.reference_from == interop.FROM_FIRST
    wrong = usercode.call_id(sc.user_calls[2])
    assert [k.call_id for k in check.mismatched] == [wrong]
    (error,) = interop.mismatch_errors([check], [sc])
    assert f"erlang@27 {wrong} hw=on (wrong())" in error.message
    unchecked = [_result(sc, 1, ""), _result(sc, 2, "")]
    (check,) = interop.checks([sc], unchecked, rts, lambda s, n: None)
    assert check.match and len(check.unchecked or ()) == 2
    assert set(check.unchecked_reasons.values()) == {usercode.NOT_CHECKED}


def test_a_replay_with_user_code_asks_and_refuses_without_a_terminal():
    r = ["time: Erlang: rand:bytes(2)"]
    with pytest.raises(UsageError, match="add --yes"):
        replay.confirm_code(r, yes=False, interactive=False, ask=lambda q: True)
    with pytest.raises(UsageError, match="not confirmed"):
        replay.confirm_code(r, yes=False, interactive=True, ask=lambda q: False)
    asked = []
    replay.confirm_code(r, yes=False, interactive=True, ask=lambda q: asked.append(q) or True)
    assert asked == ["Run this code?"]
    replay.confirm_code(r, yes=True, interactive=False, ask=lambda q: False)
    replay.confirm_code([], yes=False, interactive=False, ask=lambda q: False)


def test_python_worker_has_a_user_path_only_when_started_with_one(tmp_path, monkeypatch):
    import json

    from bridge.errors import OperationError
    from bridge.pyworker import ops
    from bridge.pyworker import usercode as pyuser

    monkeypatch.setattr(pyuser, "EXPRS", None)
    monkeypatch.setattr(pyuser, "_compiled", {})
    args = {"call": b"user", "expr": b"0123456789abcdef", "size": 3, "data": b"abc"}
    args |= {"key": b"k", "iv": b"", "pub": b"", "sig": b""}
    with pytest.raises(OperationError, match="no user code in this worker"):
        ops.prepare("user", args)
    mod = tmp_path / "mine.py"
    mod.write_text("def twice(b):\n    return b + b\n")
    exprs = {"0123456789abcdef": "mine.twice(data)", "00000000000000aa": "1/0"}
    exprs["00000000000000bb"] = "hashlib.sha256(data"
    file = tmp_path / "user.json"
    file.write_text(json.dumps({"exprs": exprs, "path": [str(tmp_path)]}))
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    pyuser.enable(str(file))
    api, once, loop = ops.prepare("user", args)
    assert once() == b"abcabc" and loop(3) is None and "compiled once" in api
    _, boom, _ = ops.prepare("user", {**args, "expr": b"00000000000000aa"})
    with pytest.raises(OperationError, match=r"py:1/0 raised ZeroDivisionError"):
        boom()
    with pytest.raises(OperationError, match=r"py:hashlib.sha256\(data: SyntaxError"):
        ops.prepare("user", {**args, "expr": b"00000000000000bb"})
    with pytest.raises(OperationError, match="no such user expression"):
        ops.prepare("user", {**args, "expr": b"ffffffffffffffff"})
