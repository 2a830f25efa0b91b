"""`bridge time` for real (issue 26): a user module compiled here with erlc
into a mix-style `_build/dev/lib/app/ebin` tree reached with --pa, beside
crypto, py: and sh: rows in one table, --same-output catching a wrong
implementation by name, an expression that raises as its row's error, the
report replayed only when confirmed; rand:bytes against strong_rand_bytes with
significance; Elixir where it is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from bridge.report import schema
from tests.conftest import bridge_cmd, needs_erl, needs_openssl

SHORT = ["--samples", "6", "--sample-ms", "2", "--rounds", "2", "--warmup-ms", "0"]
SHORT += ["--openssl-runs", "1", "--hw", "on"]

# PBKDF2-HMAC-SHA256 from crypto:mac/4 (what the NIF libraries are judged
# against), and a wrong one: HMAC-SHA1 in its place.
MODULE = """
-module(mykdf).
-export([derive/4, wrong/4]).
derive(Pass, Salt, Iter, Len) -> blocks(sha256, Pass, Salt, Iter, Len, 1, <<>>).
wrong(Pass, Salt, Iter, Len) -> blocks(sha, Pass, Salt, Iter, Len, 1, <<>>).
blocks(_, _, _, _, Len, _, Acc) when byte_size(Acc) >= Len -> binary:part(Acc, 0, Len);
blocks(H, P, S, N, Len, I, Acc) ->
    U = crypto:mac(hmac, H, P, <<S/binary, I:32>>),
    blocks(H, P, S, N, Len, I + 1, <<Acc/binary, (iter(H, P, N - 1, U, U))/binary>>).
iter(_, _, 0, _, T) -> T;
iter(H, P, N, U, T) -> U2 = crypto:mac(hmac, H, P, U), iter(H, P, N - 1, U2, crypto:exor(T, U2)).
"""


def _mix_tree(tmp_path):
    ebin = tmp_path / "proj" / "_build" / "dev" / "lib" / "mykdf" / "ebin"
    ebin.mkdir(parents=True)
    src = tmp_path / "mykdf.erl"
    src.write_text(MODULE)
    subprocess.run(["erlc", "-o", str(ebin), str(src)], check=True)
    return tmp_path / "proj"


@needs_erl
@needs_openssl
def test_user_module_beside_crypto_py_and_sh_checked_and_replayed(tmp_path, no_leftovers):
    proj = _mix_tree(tmp_path)
    out = tmp_path / "r.json"
    exprs = [
        "mykdf:derive(Key, IV, Count, 32)",
        "crypto:pbkdf2_hmac(sha256, Key, IV, Count, 32)",
        "mykdf:wrong(Key, IV, Count, 32)",
        "erlang:error(boom)",
        "crypto:hash(sha256 Data)",  # balanced, so only the node's compiler refuses it
        'py:hashlib.pbkdf2_hmac("sha256", key, iv, count, 32)',
        # openssl kdf as a whole process, on the same inputs, from the environment
        "sh:openssl kdf -keylen 32 -binary -kdfopt digest:SHA256 -kdfopt hexpass:$BRIDGE_KEY"
        " -kdfopt hexsalt:$BRIDGE_IV -kdfopt iter:$BRIDGE_COUNT PBKDF2",
    ]
    done = bridge_cmd(
        "time",
        *SHORT,
        "--scenario",
        "pbkdf2-sha256",
        "--sizes",
        "100",
        "--pa",
        str(proj / "_build" / "*" / "lib" / "*" / "ebin"),
        "--same-output",
        "-o",
        str(out),
        *exprs,
    )
    assert done.returncode == 1, done.stderr  # the wrong one fails the run
    report = schema.load(out)
    rows = {r.call: r for r in report.results}
    # One table: Erlang, py: and sh: rows, each labelled with its expression.
    assert {r.runtime.split("@")[0] for r in report.results} == {"erlang", "python", "openssl"}
    flat = " ".join(done.stdout.split())  # the view wraps its prose to the width
    for text in (exprs[0], exprs[1], exprs[2], exprs[5], exprs[6]):
        assert text in rows and rows[text].ok, text
        assert " ".join(text.split()) in flat, text
    (check,) = report.interop
    ids = {r.call: r.call_id for r in report.results}
    assert [k.call_id for k in check.mismatched] == [ids[exprs[2]]]
    assert {ids[exprs[0]], ids[exprs[6]]} <= {k.call_id for k in check.outputs}
    assert rows[exprs[0]].output_hex == rows[exprs[1]].output_hex == rows[exprs[6]].output_hex
    # The wrong implementation is named, with its expression, on the error line.
    (line,) = [e.message for e in report.errors if e.kind == "mismatch"]
    assert f"{ids[exprs[2]]} hw=on (mykdf:wrong(Key, IV, Count, 32))" in line
    assert " ".join(line.split()) in flat
    # An expression that raises, and one that does not compile: their rows'
    # errors, one line each, with the expression; the rest of the run went on.
    errors = [e.message for e in report.errors]
    assert any("erlang:error(boom) raised error:boom" in m for m in errors), errors
    assert any("crypto:hash(sha256 Data): compile error" in m for m in errors), errors
    assert "Traceback" not in done.stderr
    # The expressions are in the report verbatim.
    (sc,) = report.scenarios
    assert [c.expr for c in sc.user_calls] == [
        e.split(":", 1)[1] if e[:3] in ("py:", "sh:") else e for e in exprs
    ]
    # Replayed without a terminal: each expression shown, nothing run without --yes.
    again = bridge_cmd("run", "--replay", str(out), stdin=subprocess.DEVNULL)
    assert again.returncode == 2, again.stderr
    assert "mykdf:derive(Key, IV, Count, 32)" in again.stderr
    assert "add --yes" in again.stderr.splitlines()[-1]
    assert "== pbkdf2" not in again.stdout
    # A bracket left open is refused before anything starts: one line, no report.
    left_open = tmp_path / "left-open.json"
    refused = bridge_cmd("time", *SHORT, "-o", str(left_open), exprs[1], "crypto:hash(sha256, Data")
    assert refused.returncode == 2 and not left_open.exists() and not refused.stdout
    assert refused.stderr.splitlines() == [
        "bridge: error: expression 'crypto:hash(sha256, Data': a '(' left open;"
        " nothing was measured"
    ]


@needs_erl
def test_rand_bytes_against_strong_rand_bytes_with_significance(tmp_path):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "time",
        "--samples",
        "6",
        "--sample-ms",
        "2",
        "--rounds",
        "3",
        "--warmup-ms",
        "0",
        "--format",
        "json",
        "-o",
        str(out),
        "rand:bytes(20)",
        "crypto:strong_rand_bytes(20)",
    )
    assert done.returncode == 0, done.stderr
    report = schema.load(out)
    assert [r.call for r in report.results] == ["rand:bytes(20)", "crypto:strong_rand_bytes(20)"]
    assert all(r.ok and len(r.samples) >= 6 for r in report.results)
    # Without --same-output nothing is compared, and each row says so.
    (check,) = report.interop
    assert set(check.unchecked or ()) == set(check.outputs) and check.match
    # The two rows are compared with their CI and a significance verdict.
    diffs = [
        d
        for d in report.differences or ()
        if {d.call_id, d.baseline_call_id} == {r.call_id for r in report.results}
    ]
    assert diffs and diffs[0].ci95 is not None and diffs[0].rounds == 3
    assert diffs[0].verdict in ("faster", "slower", "within noise")
    json.loads(done.stdout)  # the JSON format, like any report


def test_elixir_expression(tmp_path):
    if shutil.which("elixir") is None or shutil.which("erl") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: elixir is expected (scripts/ensure-system.sh installs it)")
        pytest.skip("Elixir is not installed (Debian: apt-get install elixir)")
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "time",
        *SHORT,
        "--same-output",
        "-o",
        str(out),
        "crypto:hash(sha256, Data)",
        "ex::crypto.hash(:sha256, data)",
    )
    assert done.returncode == 0, done.stderr
    report = schema.load(out)
    assert [r.call for r in report.results] == [
        "crypto:hash(sha256, Data)",
        "ex::crypto.hash(:sha256, data)",
    ]
    assert report.interop[0].match and not report.interop[0].unchecked
    elixir = report.results[1]
    assert "Elixir" in elixir.api and elixir.semantics.startswith("user code: an Elixir")
