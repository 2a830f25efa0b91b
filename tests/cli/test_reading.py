"""Comparing versions reads right, through the real CLI with real runtimes:
a runtime that was asked for and cannot run says why and fails the run
(exit status 1) while the others' results are kept; otp:N becomes a path in
the reproduce line; the text view's reproduce line runs when pasted into a
shell. Short settings: these check words and exit statuses, never timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import FAST_ARGS, ROOT, bridge_cmd, needs_erl, needs_openssl

pytestmark = [needs_erl, needs_openssl]


def test_a_requested_erl_whose_crypto_cannot_load_fails_the_run_and_says_why(
    tmp_path, bullseye, no_leftovers
):
    # The unpacked OTP 23 without its wrapper: its libcrypto.so.1.1 is not found.
    unwrapped = bullseye.otp_root / "bin" / "erl"
    out = tmp_path / "r.json"
    env = {"LD_LIBRARY_PATH": ""}
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST_ARGS,
        "--runtimes",
        "erlang,python",
        "--erl",
        str(unwrapped),
        "-o",
        str(out),
        env=env,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("bridge: error: --erl")]
    assert "libcrypto.so.1.1: cannot open shared object file" in line
    assert "apt-get install erlang-crypto" not in line  # installing crypto would not help
    # The other runtime's results are kept, and the report says what was skipped.
    report = json.loads(out.read_text())
    assert {r["runtime"].split("@")[0] for r in report["results"]} == {"python"}
    (skipped,) = report["skipped"]
    assert skipped["requested"] == "--erl" and "libcrypto.so.1.1" in skipped["reason"]
    assert "asked for with --erl" in " ".join(done.stdout.split())  # wrapped to the width


def test_otp_n_that_finds_only_a_broken_installation_says_why(bullseye):
    env = {"BRIDGE_OTP_PATH": str(bullseye.otp_root), "LD_LIBRARY_PATH": ""}
    done = bridge_cmd("run", "hmac-sha1", "--erl", "otp:23", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no working OTP 23" in done.stderr and "libcrypto.so.1.1" in done.stderr


def test_otp_n_is_a_path_in_the_reproduce_line(tmp_path, bullseye):
    out = tmp_path / "r.json"
    env = {"BRIDGE_OTP_PATH": str(bullseye.prefix)}
    done = bridge_cmd(
        "run",
        "hmac-sha1",
        *FAST_ARGS,
        "--runtimes",
        "erlang",
        "--erl",
        "otp:23",
        "-o",
        str(out),
        env=env,
    )
    assert done.returncode == 0, done.stderr
    reproduce = json.loads(out.read_text())["reproduce"]
    assert f"--erl {bullseye.erl}" in reproduce and "otp:" not in reproduce


def test_the_text_views_reproduce_line_runs_when_pasted_into_a_shell(tmp_path):
    # A Python with a long path, so that the line must wrap, even inside a word.
    where = tmp_path / ("a-directory-with-a-long-name-" * 3) / "and spaces"
    where.mkdir(parents=True)
    python = where / "python3"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    args = [*FAST_ARGS, "--runtimes", "python", "--python", str(python), "--sizes", "1k"]
    done = bridge_cmd("run", "hmac-sha1", *args, "--format", "text", "-o", str(tmp_path / "a.json"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    block = lines[lines.index("Reproduce:") + 1 :]
    assert len(block) > 2 and all(len(x) <= 72 for x in block)
    # Paste it into a shell, with `crypto-bridge` on PATH and -o added at the end.
    script = "\n".join(block) + f" -o {tmp_path / 'b.json'}\n"
    assert script.lstrip().startswith("crypto-bridge run "), script
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "crypto-bridge").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bridge "$@"\n')
    (bindir / "crypto-bridge").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}
    again = subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert again.returncode == 0, again.stderr
    first, second = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    assert second["reproduce"] == first["reproduce"]
    assert [r["executable"] for r in second["runtimes"]] == [str(python)]
    assert {r["size"] for r in second["results"]} == {1024}


# -- imported before/after ------------------------------------------------------


def speed_output(openssl, *args: str) -> str:
    """`openssl speed ...` as a terminal shows it (2>&1), no masks set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENSSL_")}
    done = subprocess.run(
        [str(openssl), "speed", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout
    return done.stdout


def imported(tmp_path, name: str, text: str) -> tuple[dict, str]:
    doc = tmp_path / name
    doc.write_text(text)
    as_json = bridge_cmd("import-speed", str(doc), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    table = bridge_cmd("import-speed", str(doc))
    assert table.returncode == 0, table.stderr
    return json.loads(as_json.stdout), table.stdout


def test_the_same_command_from_111_and_3x_lines_up_with_a_version_ratio(tmp_path, bullseye):
    import shutil

    new = shutil.which("openssl")
    args = ["-bytes", "16", "-seconds", "1", "sha256"]
    human = {
        v: f"$ openssl speed {' '.join(args)}\n" + speed_output(o, *args)
        for v, o in (("1.1.1", bullseye.openssl), ("3.0", new))
    }
    mr = {v: speed_output(o, "-mr", *args) for v, o in (("1.1.1", bullseye.openssl), ("3.0", new))}
    for form, outputs in (("human", human), ("mr", mr)):
        text = "".join(
            f"{'Before' if v == '1.1.1' else 'After'} ({v}):\n{out}\n" for v, out in outputs.items()
        )
        report, table = imported(tmp_path, f"{form}.txt", text)
        old, new_rt = report["runtimes"]
        # Headings with punctuation are kept.
        assert old["heading"] == "Before (1.1.1)" and new_rt["heading"] == "After (3.0)", form
        (a,) = [r for r in report["results"] if r["runtime"] == old["id"]]
        (b,) = [r for r in report["results"] if r["runtime"] == new_rt["id"]]
        # The same typed command: the same call, so they line up...
        assert a["call_id"] == b["call_id"] == "speed", form
        # ...and the labels say which path each generation took, in both forms.
        assert a["call"] == "openssl speed sha256", form
        assert b["call"] == "openssl speed sha256 (3.x: the EVP path, as -evp)", form
        # x first named shows the version ratio (as posted: no significance).
        ratio = b["ns_per_op"]["median"] / a["ns_per_op"]["median"]
        (d,) = [d for d in report["differences"] if d["against"] == "first-named"]
        assert d["ratio"] == pytest.approx(ratio) and d["verdict"] == "unknown (no samples)"
        (row,) = [x for x in table.splitlines() if x.startswith(new_rt["id"] + " ")]
        assert row.rstrip().endswith(f"{ratio:.2f}×"), (form, row)
        assert "× first named" in table
    # -mr records alone say the generation (+F index) when no version line is pasted.
    assert "3.x" in report["runtimes"][1]["version"] and "1.x" in report["runtimes"][0]["version"]
