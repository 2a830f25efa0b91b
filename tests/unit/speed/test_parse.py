"""The openssl speed parser: the seed documents, real 3.x output from this
machine (human and -mr), hand-made 1.0.2 / 1.1.1 text, and pasted variants
(quoted, re-wrapped, line breaks lost). Every number is checked against the
text it came from."""

from __future__ import annotations

import re
import textwrap

import pytest

from bridge.speed import parse
from tests.conftest import FIXTURES

SEEDS = FIXTURES / "seeds"


FIX = FIXTURES


THREAD = "erlang-questions-hmac-hardware-acceleration.txt"


UBUNTU = "ubuntu-openssl-ec-nistp-64-gcc-128.txt"


# The four sha1 tables of the erlang-questions thread, as posted (1000s of bytes/s).
THREAD_TABLES = [
    (
        "1) Intel Skylake",
        "openssl speed sha1",
        [101811.61, 247257.45, 495655.77, 662393.30, 728554.70, 733915.23],
    ),
    (
        "1) Intel Skylake",
        "openssl speed -evp sha1",
        [62020.40, 177980.08, 415535.35, 617330.43, 712265.63, 720649.42],
    ),
    (
        "2) AMD EPYC",
        "openssl speed sha1",
        [212599.98, 542973.14, 1115625.73, 1523481.26, 1698851.50, 1716584.45],
    ),
    (
        "2) AMD EPYC",
        "openssl speed -evp sha1",
        [94505.97, 310609.96, 804953.94, 1344177.49, 1664715.77, 1689075.71],
    ),
]


SIZES = [16, 64, 256, 1024, 8192, 16384]


def seed(name: str) -> str:
    path = SEEDS / name
    if not path.exists():
        pytest.skip(f"seed {name} not present")
    return path.read_text()


def check_thread(parsed: parse.Parsed) -> None:
    assert len(parsed.runs) == 4
    for run, (heading, command, kbytes) in zip(parsed.runs, THREAD_TABLES, strict=True):
        assert run.context == heading
        assert run.command == command
        assert run.version == "OpenSSL 1.1.1"
        assert run.built_on == "Tue Nov 12 16:58:35 2019 UTC"
        assert run.options.startswith("bn(64,64) rc4(")
        assert "-DSHA1_ASM" in run.compiler
        got = {(e.algorithm, e.size): e.bytes_per_s for e in run.entries}
        assert got == pytest.approx(
            {("sha1", s): k * 1000 for s, k in zip(SIZES, kbytes, strict=True)}
        )


UBUNTU_DOING = {  # (run, curve bits, op): (count, seconds)
    ("Before", 224, "sign"): (24059, 9.95),
    ("Before", 224, "verify"): (6197, 9.97),
    ("Before", 256, "sign"): (20640, 9.94),
    ("Before", 256, "verify"): (5222, 9.95),
    ("Before", 521, "sign"): (5683, 9.97),
    ("Before", 521, "verify"): (1137, 9.94),
    ("After", 224, "sign"): (32087, 9.92),
    ("After", 224, "verify"): (15929, 9.94),
    ("After", 256, "sign"): (18875, 9.91),
    ("After", 256, "verify"): (7744, 9.94),
    ("After", 521, "sign"): (6587, 9.90),
    ("After", 521, "verify"): (3028, 9.85),
}


def _mr_values(text):
    f = re.search(r"^\+F:\d+:(\S+?):([\d.:]+)$", text, re.M)
    sizes = [int(x) for x in re.search(r"^\+H:([\d:]+)$", text, re.M).group(1).split(":")]
    return f.group(1), dict(zip(sizes, (float(v) for v in f.group(2).split(":")), strict=True))


def entries_of(parsed):
    return [
        [(e.algorithm, e.operation, e.size, round(e.ops_per_s, 6)) for e in r.entries]
        for r in parsed.runs
    ]


def test_thread_seed():
    check_thread(parse.parse(seed(THREAD)))


def test_ubuntu_seed_doing_lines_and_tables():
    text = seed(UBUNTU)
    runs = parse.parse(text).runs
    assert [r.context for r in runs] == [
        "Before",
        "After",
        "No enable-ec_nistp_64_gcc_128",
        "With enable-ec_nistp_64_gcc_128",
    ]
    for run in runs[:2]:
        for e in run.entries:
            count, secs = UBUNTU_DOING[(run.context, int(e.algorithm[-3:]), e.operation)]
            assert e.ops_per_s == pytest.approx(count / secs)
        assert len(run.entries) == 6
    # Every sign/s and verify/s of both tables, against the table rows in the text.
    # (the rows start with a non-breaking space, as pasted from a web page)
    rows = re.findall(r"^\s*(\d+) bit ecdsa \((\w+)\) \S+ \S+ ([\d.]+) ([\d.]+)$", text, re.M)
    assert len(rows) == 32
    for run, table_rows in ((runs[2], rows[:16]), (runs[3], rows[16:])):
        got = {(e.text, e.operation): e.ops_per_s for e in run.entries}
        for bits, curve, sign, verify in table_rows:
            assert got[(f"{bits} bit ecdsa ({curve})", "sign")] == float(sign)
            assert got[(f"{bits} bit ecdsa ({curve})", "verify")] == float(verify)
    names = {e.algorithm for e in runs[3].entries}
    assert {"ecdsa-p224", "ecdsa-p256", "ecdsa-p521", "ecdsa-secp160r1"} <= names


def test_openssl_3_human_table_and_header():
    text = (FIX / "openssl-3.0-sha256.txt").read_text()
    (run,) = parse.parse(text).runs
    assert run.version == "OpenSSL 3.0.19" and run.cpuinfo.startswith("OPENSSL_ia32cap=0x")
    row = re.search(r"^sha256 +(.*)$", text, re.M).group(1).split()
    expected = {s: float(v.rstrip("k")) * 1000 for s, v in zip(SIZES, row, strict=True)}
    assert {e.size: e.bytes_per_s for e in run.entries} == pytest.approx(expected)


def test_openssl_3_mr_digest():
    text = (FIX / "openssl-3.0-sha256-mr.txt").read_text()
    (run,) = parse.parse(text).runs
    name, values = _mr_values(text)
    assert name == "sha256"
    assert {e.size: e.bytes_per_s for e in run.entries} == values
    assert {e.source for e in run.entries} == {"mr"}


def test_openssl_3_pkey_human_and_mr():
    (human,) = parse.parse((FIX / "openssl-3.0-ecdsap256.txt").read_text()).runs
    assert {e.operation: e.ops_per_s for e in human.entries} == {"sign": 41885.7, "verify": 14217.0}
    (mr,) = parse.parse((FIX / "openssl-3.0-ecdsap256-mr.txt").read_text()).runs
    # 3.x +F4 values are operations per second.
    assert {e.operation: e.ops_per_s for e in mr.entries} == {
        "sign": 42072.44898,
        "verify": 13925.0,
    }


def test_openssl_111_mr_pkey_is_seconds_per_operation():
    (run,) = parse.parse((FIX / "openssl-1.1.1-ecdsa-mr.txt").read_text()).runs
    got = {e.operation: e.ops_per_s for e in run.entries}
    assert got["sign"] == pytest.approx(1 / 0.000034)
    assert got["verify"] == pytest.approx(1 / 0.000105)


def test_openssl_102_five_sizes_and_bit_spelling():
    (run,) = parse.parse((FIX / "openssl-1.0.2-hand.txt").read_text()).runs
    assert run.version == "OpenSSL 1.0.2g" and run.built_on.startswith("reproducible build")
    aes = {e.size: e.bytes_per_s for e in run.entries if e.algorithm == "aes-128-cbc"}
    assert aes == pytest.approx(
        {16: 144674210, 64: 156585120, 256: 158797800, 1024: 159600530, 8192: 159882530}
    )
    ecdsa = {e.operation: e.ops_per_s for e in run.entries if e.algorithm == "ecdsa-p256"}
    assert ecdsa == {"sign": 22012.3, "verify": 4691.9}  # the table, not the Doing lines


def test_names_are_normalised():
    assert parse.normalize("aes-128 cbc") == parse.normalize("AES-128-CBC")
    assert parse.normalize("hmac(md5)") == "hmac-md5"
    assert parse.normalize("des ede3") == "des-ede3"


@pytest.mark.parametrize("name", [THREAD, UBUNTU])
@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda t: "".join("> " + line for line in t.splitlines(True)), id="quoted"),
        pytest.param(lambda t: "".join("> > " + line for line in t.splitlines(True)), id="quoted2"),
        pytest.param(
            lambda t: "\n".join(textwrap.fill(line, 38) if line else "" for line in t.splitlines()),
            id="rewrapped",
        ),
        pytest.param(lambda t: " ".join(t.split()), id="no-line-breaks"),
    ],
)
def test_pasted_variants_give_the_same_numbers(name, mangle):
    original = parse.parse(seed(name))
    mangled = parse.parse(mangle(seed(name)))
    assert len(original.runs) == 4
    assert entries_of(mangled) == entries_of(original)


def test_several_runs_in_one_document_from_generated_files():
    doc = "\n".join(f"== {p.name}\n{p.read_text()}" for p in sorted(FIX.glob("openssl-3.0-*.txt")))
    runs = parse.parse(doc).runs
    assert len(runs) == 4


def test_partly_recognisable_text_warns():
    parsed = parse.parse(
        "Doing sha1 for 3s on 16 size blocks: 100 sha1's in 1.00s\n"
        "Doing sha1 for 3s on 64 size blocks: lots of sha1's\n"
    )
    assert len(parsed.runs) == 1 and parsed.runs[0].entries[0].ops_per_s == 100
    assert parsed.warnings and "line 2" in parsed.warnings[0]


@pytest.mark.parametrize("text", ["", "hello world\nnothing here", "\x00\x01binary"])
def test_unrecognisable_text_gives_no_runs(text):
    assert parse.parse(text).runs == []


@pytest.mark.parametrize(
    "text, good",
    [
        ("Doing sha256 for 3s on 16 size blocks: 100 sha256's in 0.00s", 0),
        ("Doing sha256 for 3s on 16 size blocks: 0 sha256's in 3.00s", 0),
        ("+DT:sha256:3:16\n+R:100:sha256:nan", 0),
        ("+DT:sha256:3:16\n+R:100:sha256:-1.5", 0),
        ("+DT:sha256:3:16\n+R:100:sha256:inf", 0),
        ("+H:16:64\n+F:6:sha256:nan:1000.00", 1),
        ("+H:16:64\n+F:6:sha256:-5:inf", 0),
        ("+H:16:64\n+F:6:sha256:1e999:1600.0", 1),
        ("+F2:0:2048:0:-1", 0),
    ],
)
def test_rates_that_are_not_measurements_are_skipped_with_a_warning(text, good):
    parsed = parse.parse(text)
    entries = [e for run in parsed.runs for e in run.entries]
    assert len(entries) == good
    assert all(0 < e.ops_per_s < float("inf") for e in entries)
    assert any("is not a measurement" in w for w in parsed.warnings), parsed.warnings


def test_a_record_whose_number_is_not_a_number_is_skipped():
    parsed = parse.parse("+H:16:64\n+F:6:sha256:abc:1000.00\n+DT:sha1:x:16")
    assert any("could not read '+F:6:sha256:abc:1000.00'" in w for w in parsed.warnings)


def test_unicode_digits_are_not_read_as_numbers():
    parsed = parse.parse("Doing sha256 for 3s on ١٦ size blocks: 100 sha256's in 1.00s")
    assert parsed.runs == [] and parsed.warnings
