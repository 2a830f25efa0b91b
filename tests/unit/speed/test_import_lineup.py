"""Imported before/after: which code path an `openssl speed` number measured,
told from the command line or the -mr record's index, and the headings that
name each run."""

from __future__ import annotations

import pytest

from bridge.speed import importer, parse

# As 1.1.1w and 3.0.19 print them here (tests/cli/test_reading.py captures them live).
MR = {
    (
        "1.1.1",
        "plain",
    ): "+DT:sha256:1:16\n+R:3899565:sha256:0.400000\n+H:16\n+F:23:sha256:155982600.00\n",
    (
        "1.1.1",
        "evp",
    ): "+DT:sha256:1:16\n+R:1142709:sha256:0.330000\n+H:16\n+F:22:sha256:55404072.73\n",
    (
        "3.0",
        "plain",
    ): "+DT:sha256:1:16\n+R:1335722:sha256:0.300000\n+H:16\n+F:6:sha256:71238506.67\n",
    (
        "3.0",
        "evp",
    ): "+DT:sha256:1:16\n+R:1145821:sha256:0.340000\n+H:16\n+F:25:sha256:53920988.24\n",
}


@pytest.mark.parametrize("version, form", list(MR))
def test_the_mr_index_tells_generation_and_evp(version, form):
    (run,) = parse.parse(MR[(version, form)]).runs
    (entry,) = [e for e in run.entries if e.source == "mr"]
    assert parse.path_of(entry) == (version[0], form == "evp")


def test_labels_and_call_ids_by_what_was_typed():
    report, _ = importer.to_report("".join(MR.values()), "doc", [])
    calls = [(r.call_id, r.call) for r in report.results]
    assert calls == [
        ("speed", "openssl speed sha256"),
        ("speed-evp", "openssl speed -evp sha256"),
        ("speed", "openssl speed sha256 (3.x: the EVP path, as -evp)"),
        ("speed-evp", "openssl speed -evp sha256"),
    ]
    # Without a command line or an index, a plain-looking run says it cannot tell.
    human = "Doing sha256 for 1s on 16 size blocks: 2899922 sha256's in 0.31s\n"
    report, _ = importer.to_report(human, "doc", [])
    assert report.results[0].call == "openssl speed sha256 (-evp or not: not shown)"


@pytest.mark.parametrize("heading", ["Before (1.1.1):", "After (OpenSSL 3.0.19):", "Before:"])
def test_headings_with_punctuation_are_kept(heading):
    (run,) = parse.parse(f"{heading}\n{MR[('3.0', 'plain')]}").runs
    assert run.context == heading.rstrip(":")
