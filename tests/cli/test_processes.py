"""--processes for real: an Erlang node and a Python worker each run as two
processes that take a cell's rounds in turn; the report says which process
took each sample, the CI and the split come from both, and no process
outlives the run."""

from __future__ import annotations

import json

from bridge.report import schema
from tests.conftest import bridge_cmd, needs_erl

SHORT = ["--samples", "12", "--sample-ms", "2", "--rounds", "6", "--warmup-ms", "0"]


@needs_erl
def test_two_worker_processes_per_runtime_share_each_cell(tmp_path, no_leftovers):
    out = tmp_path / "r.json"
    done = bridge_cmd(
        "run", "hmac-sha1", *SHORT, "--hw", "on", "--runtimes", "erlang,python",
        "--processes", "2", "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    raw = json.loads(out.read_text())
    assert raw["settings"]["processes"] == 2
    report = schema.load(out)
    assert {r.runtime.split("@")[0] for r in report.results} == {"erlang", "python"}
    for r in report.results:
        # Rounds 1-6 alternate between the two processes, 2 samples each.
        assert r.procs == (0, 0, 1, 1) * 3, (r.runtime, r.call_id, r.procs)
        split = r.process_split()
        assert split is not None and split.processes == 2 and 0 <= split.share <= 1
        lo, hi = r.summary().ci95
        assert 0 < lo <= r.median() <= hi
    ns = raw["results"][0]["ns_per_op"]
    assert ns["processes"] == 2 and 0 <= ns["between_process_share"] <= 1
    # Both processes computed the same bytes (the outputs are checked across rounds).
    assert all(c.match for c in report.interop)
    # Read and written again, the report is the same text.
    assert json.loads(schema.dumps(report)) == raw
