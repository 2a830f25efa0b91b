"""`openssl speed -multi N` output, captured on this machine from OpenSSL
3.0.19 (system) and 1.1.1w (Debian bullseye, scripts/fetch-runtimes), human
and -mr, stdout and stderr interleaved (2>&1) or one after the other: each is
one run of N children, whose summed numbers are the parent's, as printed,
and whose own numbers are kept apart. Every number is checked against the
text it came from. Then import-speed: the sum as a level cell, paired with a
wall-clock single-process run for scaling."""

from __future__ import annotations

import re
import textwrap

import pytest

from bridge.speed import importer, parse
from tests.conftest import FIXTURES

MULTI = FIXTURES / "multi"
SIZES = [16, 64, 256, 1024, 8192, 16384]


def text_of(name: str) -> str:
    return (MULTI / name).read_text()


def children_in(text: str) -> dict[int, list[float]]:
    """Each child's +F values (bytes/s), read straight from its Got: line."""
    return {
        int(child): [float(v) for v in values.split(":")]
        for values, child in re.findall(r"^Got: \+F:\d+:[^:]+:([\d.:]+) from (\d+)$", text, re.M)
    }


def parent_row(text: str) -> list[float]:
    """The parent's sum: its final +F record (-mr) or its headerless row (human)."""
    mr = re.findall(r"^\+F:\d+:[^:]+:([\d.:]+)$", text, re.M)
    if mr:
        return [float(v) for v in mr[-1].split(":")]
    row = re.findall(r"^\S+ +((?:[\d.]+k *)+)$", text, re.M)[-1]
    return [float(v.rstrip("k")) * 1000 for v in row.split()]


@pytest.mark.parametrize(
    "name, version, sizes, algorithm",
    [
        ("openssl-3.0-multi2-sha256.txt", "OpenSSL 3.0.19", SIZES, "sha256"),
        ("openssl-3.0-multi2-sha256-mr.txt", "", SIZES, "sha256"),
        ("openssl-1.1.1-multi2-sha256.txt", "OpenSSL 1.1.1w", SIZES, "sha256"),
        ("openssl-1.1.1-multi2-sha256-mr.txt", "", SIZES, "sha256"),
        # 1.1.1 names an -evp row "evp": the children say sha256.
        ("openssl-1.1.1-multi2-evp-sha256-16k.txt", "OpenSSL 1.1.1w", [16384], "sha256"),
        # 3.0 names the parent's -hmac record "hmac(md5)" whatever the digest.
        ("openssl-3.0-multi2-hmac-sha1-mr.txt", "", [1000], "hmac-sha1"),
        (
            "openssl-3.0-multi2-sha256-16k-stdout-then-stderr.txt",
            "OpenSSL 3.0.19",
            [16384],
            "sha256",
        ),
        ("openssl-1.1.1-multi2-sha256-16k-mr-stdout-then-stderr.txt", "", [16384], "sha256"),
    ],
)
def test_multi_runs_read_as_the_parent_summed_them(name, version, sizes, algorithm):
    text = text_of(name)
    parsed = parse.parse(text)
    assert parsed.warnings == []
    (run,) = parsed.runs  # the children's stderr records are not a run of their own
    assert run.multi == 2 and run.version == version
    assert [e.size for e in run.entries] == sizes
    assert {e.algorithm for e in run.entries} == {algorithm}
    assert [e.bytes_per_s for e in run.entries] == pytest.approx(parent_row(text))
    kids = children_in(text)
    assert sorted(run.children) == sorted(kids) == [0, 1]
    for child, values in kids.items():
        assert [e.bytes_per_s for e in run.children[child]] == pytest.approx(values)


def test_the_sum_is_the_childrens_sum():
    # What the parent adds up, -mr keeps to the byte: a check on the reading.
    (run,) = parse.parse(text_of("openssl-3.0-multi2-sha256-mr.txt")).runs
    for i, e in enumerate(run.entries):
        assert e.bytes_per_s == pytest.approx(sum(run.children[k][i].bytes_per_s for k in (0, 1)))


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda t: "".join("> " + line for line in t.splitlines(True)), id="quoted"),
        pytest.param(
            # as a mail client re-wraps: at spaces, never inside a word
            lambda t: "\n".join(
                textwrap.fill(line, 60, break_long_words=False) if line else ""
                for line in t.splitlines()
            ),
            id="rewrapped",
        ),
    ],
)
@pytest.mark.parametrize(
    "name", ["openssl-3.0-multi2-sha256.txt", "openssl-1.1.1-multi2-sha256-mr.txt"]
)
def test_pasted_multi_output_gives_the_same_numbers(name, mangle):
    original = parse.parse(text_of(name))
    pasted = parse.parse(mangle(text_of(name)))
    assert [r.multi for r in pasted.runs] == [2]
    assert [e.bytes_per_s for e in pasted.runs[0].entries] == [
        e.bytes_per_s for e in original.runs[0].entries
    ]


def test_without_the_parents_summary_the_children_are_summed_and_it_says_so():
    text = "\n".join(
        line
        for line in text_of("openssl-3.0-multi2-sha256-mr.txt").splitlines()
        if not line.startswith("+F:")
    )
    parsed = parse.parse(text)
    (run,) = parsed.runs
    assert {e.source for e in run.entries} == {"children"}
    assert "summed" in parsed.warnings[0]


def test_import_speed_makes_level_cells_with_scaling_from_a_wall_clock_run():
    name = "openssl-3.0-single-then-multi2-evp-sha256-16k.txt"
    text = text_of(name)
    report, warnings = importer.to_report(text, name, ["bridge"])
    assert warnings == []
    c = report.concurrency
    assert c is not None and c.levels == (1, 2)
    by_level = {cell.level: cell for cell in c.cells}
    one = float(re.search(r"^sha256 +([\d.]+)k$", text, re.M).group(1)) * 1000 / 16384
    two = parent_row(text)[0] / 16384
    assert by_level[1].point_ops_per_s == pytest.approx(one)
    assert by_level[2].point_ops_per_s == pytest.approx(two)
    assert by_level[2].call == "openssl speed -multi 2 -evp sha256"
    assert len(by_level[2].children_ops_per_s) == 2
    (s,) = [x for x in c.scaling if x.level == 2]
    assert s.scaling == pytest.approx(two / one) and s.ci95 is None
    # The single-process run stays an ordinary imported result too.
    assert [r.call for r in report.results] == ["openssl speed -evp sha256"]


def test_a_cpu_time_single_run_is_not_paired():
    name = "openssl-3.0-single-then-multi2-evp-sha256-16k.txt"
    text = text_of(name).replace("-elapsed ", "")
    report, _ = importer.to_report(text, name, ["bridge"])
    assert [cell.level for cell in report.concurrency.cells] == [2]
    assert report.concurrency.scaling == ()
