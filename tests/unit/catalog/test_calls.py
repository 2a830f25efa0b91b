"""The closed table of calls: each call declares what it is, and every
runtime has one handler per operation its calls name."""

from __future__ import annotations

import pytest

from bridge.catalog import calls, scenario
from bridge.pyworker import ops as pyops
from bridge.runtimes.openssl import OpensslRuntime
from bridge.settings import DEFAULT


def test_every_python_operation_has_a_worker_handler():
    ops = {c.op for c in calls.CALLS.values() if c.runtime == "python"}
    assert ops == set(pyops.HANDLERS.table)


def test_every_openssl_operation_has_a_handler():
    ops = {c.op for c in calls.CALLS.values() if c.runtime == "openssl"}
    assert ops == set(OpensslRuntime(DEFAULT).handlers.table)


def test_a_runtime_without_a_handler_for_an_operation_is_refused():
    with pytest.raises(TypeError, match="no handler for"):
        calls.Handlers("python", {"hashlib": print})


@pytest.mark.parametrize("name", scenario.available())
def test_every_builtin_call_has_a_label_and_semantics(name):
    sc = scenario.load(name)
    for kind, ids in sc.calls.items():
        for cid in ids:
            call = calls.CALLS[kind, cid]
            assert call.label(sc, "") and call.semantics_for(sc)
            assert sc.kind in call.kinds


def test_facts_are_declared_not_guessed_from_ids():
    assert calls.CALLS["erlang", "sign"].randomised
    assert calls.CALLS["python", "verify"].check is calls.Check.ACCEPTS
    assert calls.role("openssl", "speed-verify") == "verify"
    assert calls.role("openssl", "speed-evp") == ""
    assert calls.CALLS["python", "hmac.digest"].route is calls.Route.HMAC
    assert calls.CALLS["erlang", "macN"].timer_tc and not calls.CALLS["erlang", "sign"].timer_tc


def test_every_erlang_module_is_compiled_into_the_worker_cache():
    """A module missing from otp.WORKER_MODULES would never be compiled."""
    from bridge.system import otp

    on_disk = {p.stem for p in otp.ERL_SOURCES_DIR.glob("*.erl")}
    assert set(otp.WORKER_MODULES) == on_disk


def test_opt_in_calls_are_in_no_built_in_scenario_and_are_listed():
    from bridge.catalog import scenario

    opt = {(c.runtime, c.id) for c in calls.CALLS.values() if c.opt_in}
    assert opt >= {("erlang", "rand_bytes"), ("erlang", "pbkdf2_mac"), ("erlang", "hash_init")}
    for name in scenario.available():
        sc = scenario.load(name)
        named = {(r, cid) for r, ids in sc.calls.items() for cid in ids}
        assert not named & opt, name
    assert calls.opt_ins("erlang", "sign") == ["public_key:sign", "public_key:verify"]
    assert calls.opt_ins("python", "sign") == []


def test_rand_bytes_reaches_no_openssl_so_no_mask_can():
    from bridge.hw import ab
    from bridge.report import schema

    info = schema.Runtime(id="erlang@25", kind="erlang", version="25", executable="erl")
    assert not ab.via_openssl(info, "rand_bytes")
    assert ab.via_openssl(info, "strong_rand_bytes")
