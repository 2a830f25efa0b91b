"""--export-csv and colour on real runs (issue 37): a quick hmac-sha1 run
with stdout on a pseudo-terminal, as a user at an 80-column xterm sees it
(coloured by --color auto, no visible line over 80), its CSV read back with
csv.DictReader against the report it was written with; the same report
rendered again under NO_COLOR, TERM=dumb and --color always into a pipe;
`bridge time` and `bridge compare` writing their CSV too."""

from __future__ import annotations

import csv
import os
import pty
import re
import subprocess
import sys
import threading

from bridge import stats
from bridge.report import schema
from tests.cli.test_terminal import _read_all, terminal_env
from tests.conftest import ROOT, bridge_cmd, needs_erl, needs_openssl

SGR = re.compile(r"\x1b\[[0-9;]*m")


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """bridge with its stdout on a pseudo-terminal: (status, stdout, stderr)."""
    master, slave = pty.openpty()
    got: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, got), daemon=True)
    reader.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bridge", *args],
            stdout=slave,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            timeout=240,
        )
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    # The terminal turns each newline into CR LF.
    return done.returncode, b"".join(got).decode().replace("\r\n", "\n"), done.stderr.decode()


def _rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _check_figures(rows: list[dict[str, str]], report: schema.Report) -> None:
    """Each row is one cell of `report`, with its own figures in ns per call."""
    cells = {(r.runtime, r.call_id, str(r.size), r.hw.value): r for r in report.results}
    assert len(rows) == len(cells) > 0
    for row in rows:
        r = cells.pop((row["runtime"], row["call_id"], row["size"], row["hw"]))
        s = r.summary()
        assert row["unit"] == "ns" and int(row["samples"]) == len(r.samples)
        assert float(row["median"]) == s.median
        assert float(row["p10"]) == stats.low(r.per_op_ns())
        if len(r.samples) > 1:
            assert (float(row["ci_low"]), float(row["ci_high"])) == s.ci95
        rt = report.runtime(r.runtime)
        assert rt is not None and row["version"] == rt.version
        verdicts = [
            v.verdict.value
            for v in report.verdicts
            if (v.scenario, v.runtime, v.call_id, v.size)
            == (r.scenario, r.runtime, r.call_id, r.size)
        ]
        assert row["verdict"] == ";".join(verdicts)
    assert not cells


@needs_erl
@needs_openssl
def test_a_quick_run_in_colour_on_a_terminal_and_its_csv(tmp_path, no_leftovers):
    out, table = tmp_path / "r.json", tmp_path / "r.csv"
    env = {k: v for k, v in terminal_env().items() if k != "NO_COLOR"}
    args = ["run", "hmac-sha1", "--quick", "-o", str(out), "--export-csv", str(table)]
    status, stdout, stderr = _on_a_terminal(args, env)
    assert status == 0, stderr
    # --color auto on a terminal: the verdicts in colour; widths on the text.
    assert SGR.search(stdout), stdout[:300]
    shown = SGR.sub("", stdout)
    assert "Hardware:" in shown and not re.search(r"\x1b", shown)
    assert max(map(len, shown.splitlines())) <= 80, [x for x in shown.splitlines() if len(x) > 80]
    report = schema.load(out)
    rows = _rows(table)
    _check_figures(rows, report)
    assert {row["verdict"] for row in rows} <= {"used", "not-used", "inconclusive"}
    assert {row["feature"] for row in rows} == {"sha"}

    # The same report again: NO_COLOR (set, not empty) and TERM=dumb turn
    # auto off on a terminal; --color always colours even a pipe.
    for extra in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        status, again, stderr = _on_a_terminal(["report", str(out)], env | extra)
        assert status == 0 and "Hardware:" in again and not SGR.search(again), stderr
    status, forced, _ = _on_a_terminal(
        ["report", str(out), "--color", "always"], env | {"NO_COLOR": "1"}
    )
    assert SGR.search(forced)
    piped = bridge_cmd("report", str(out), "--color", "always", env={"COLUMNS": "80"})
    assert SGR.search(piped.stdout)
    assert max(len(x) for x in SGR.sub("", piped.stdout).splitlines()) <= 80
    assert not SGR.search(bridge_cmd("report", str(out), env={"TERM": "xterm"}).stdout)

    # compare: each report's rows, labelled.
    both = tmp_path / "both.csv"
    done = bridge_cmd("compare", str(out), str(out), "--export-csv", str(both))
    assert done.returncode == 0, done.stderr
    labelled = _rows(both)
    assert [row["report"] for row in labelled] == [str(out)] * (2 * len(rows))
    assert [row["median"] for row in labelled] == [row["median"] for row in rows] * 2


@needs_erl
def test_bridge_time_writes_its_csv(tmp_path, no_leftovers):
    out, table = tmp_path / "t.json", tmp_path / "t.csv"
    done = bridge_cmd(
        "time",
        *("--samples", "6", "--sample-ms", "2", "--rounds", "2", "--warmup-ms", "0"),
        *("--hw", "on", "--sizes", "64", "-o", str(out), "--export-csv", str(table)),
        "crypto:hash(sha256, Data)",
        "crypto:hash(sha, Data)",
    )
    assert done.returncode == 0, done.stderr
    assert f"csv written to {table}" in done.stderr
    rows = _rows(table)
    _check_figures(rows, schema.load(out))
    assert {row["call"] for row in rows} == {"crypto:hash(sha256, Data)", "crypto:hash(sha, Data)"}
