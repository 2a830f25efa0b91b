"""Output that is true as printed: titles that follow the sizes run, a
reproduce line that pastes into a shell, compare that leaves out what an
imported report cannot have, and a pointer to import-speed for pasted text."""

from __future__ import annotations

import pytest

from bridge.errors import UsageError
from bridge.report import schema


def test_report_on_pasted_speed_output_points_to_import_speed(tmp_path):
    pasted = tmp_path / "speed.txt"
    pasted.write_text("> Doing sha256 for 3s on 16 size blocks: 100 sha256's in 3.00s\n")
    with pytest.raises(UsageError) as err:
        schema.load(pasted)
    assert f"crypto-bridge import-speed {pasted}" in err.value.one_line()
    other = tmp_path / "notes.txt"
    other.write_text("just some notes\n")
    with pytest.raises(UsageError, match="not JSON") as err:
        schema.load(other)
    assert "import-speed" in err.value.one_line()


def test_compare_with_an_imported_report_lists_only_what_both_can_have():
    from bridge.analysis import compare
    from tests.conftest import FIXTURES

    measured = schema.load(FIXTURES / "roundtrip" / "run-mix1.json")
    imported = schema.load(FIXTURES / "roundtrip" / "import-3.0.json")
    diff = dict(compare.environment_diff([measured, imported]))
    # An imported paste has no CPU, OS, kernel, OTP or Python: not differences.
    assert set(diff) == {"openssl CLI"}
    assert diff["openssl CLI"][1] == "OpenSSL 3.0.19"
    # Between two measured reports the same fields are still compared.
    other = schema.Report.from_json(
        {**measured.to_json(), "environment": {**measured.environment.to_json(), "kernel": "7.0"}}
    )
    assert dict(compare.environment_diff([measured, other]))["kernel"][1] == "7.0"


REPRODUCE = [
    "bridge",
    "run",
    "hmac-sha1",
    "--seed",
    "1",
    "--sizes",
    "16,16384",
    "--erl",
    "/root/.cache/bridge/runtimes/bullseye/bin/erl",
    "--python",
    "/tmp/a dir with spaces/and-a-very-long-directory-name-that-goes-on-and-on-and-on/python3",
    "--openssl",
    "/opt/" + "x" * 150 + "/openssl",
    "--scenario-dir",
    'it\'s "quoted" $HOME `x`',
]


@pytest.mark.parametrize("width", [72, 40])
def test_a_wrapped_reproduce_line_means_the_same_words_to_a_shell(width, monkeypatch, tmp_path):
    import subprocess

    from bridge.render import shell
    from bridge.view import home as home_module

    # Paths in the home directory are written from ~/ (which the shell
    # expands), long ones cut, one with a space quoted after the ~/.
    home = tmp_path / "home"
    monkeypatch.setattr(home_module, "_home", lambda: str(home))
    monkeypatch.setenv("HOME", str(home))
    argv = [
        *REPRODUCE,
        "--pa",
        f"{home}/ebin",
        "--pa",
        f"{home}/a dir/" + "y" * 90,
        "--python-path",
        str(home),
    ]
    laid_out = shell.lines(argv, width, indent="    ")
    assert len(laid_out) > 3 and all(len(line) <= width for line in laid_out)
    assert all(line.endswith("\\") for line in laid_out[:-1])
    shown = "\n".join(laid_out)
    assert "~/ebin" in shown and "~/'a dir/" in shown and str(home) not in shown
    # The shell reads the lines back as the same words (bridge -> a function).
    script = "bridge() { printf '%s\\0' bridge \"$@\"; }\n" + "\n".join(laid_out)
    done = subprocess.run(["sh", "-c", script], capture_output=True, check=True)
    assert done.stdout.decode().split("\0")[:-1] == argv


@pytest.mark.parametrize(
    "description, sizes, title",
    [
        # The thread's benchmark run at other sizes.
        (
            "HMAC-SHA1, 20-byte key, 1000-byte message, MAC cut to 10 bytes (the thread)",
            [16, 16384],
            "HMAC-SHA1, 20-byte key, 16 B and 16 KiB messages, MAC cut to 10 bytes (the thread)",
        ),
        (
            "SHA256 digest over 16 B to 16 KiB (the openssl speed sizes)",
            [16, 1024, 16384],
            "SHA256 digest over 16 B to 16 KiB",
        ),
        (
            "SHA256 digest over 16 B to 16 KiB (the openssl speed sizes)",
            [64],
            "SHA256 digest over 64 B",
        ),
        (
            "HMAC-SHA256, 32-byte key, 64 B and 16 KiB messages, full-length MAC",
            [1000],
            "HMAC-SHA256, 32-byte key, 1000-byte message, full-length MAC",
        ),
        (
            "ECDSA P256: sign and verify of a 64-byte message",
            [16],
            "ECDSA P256: sign and verify of a 16-byte message",
        ),
        ("SHA-256 of a 256 MiB file, streamed", [1 << 30], "SHA-256 of a 1 GiB file, streamed"),
        # As the scenario file says: unchanged.
        (
            "SHA256 digest over 16 B to 16 KiB (the openssl speed sizes)",
            [16, 64, 256, 1024, 8192, 16384],
            None,
        ),
        ("HMAC-SHA1, 20-byte key, 1000-byte message", [1000], None),
        ("a description naming no size", [16, 32], None),
    ],
)
def test_titles_follow_the_sizes_run(description, sizes, title):
    from bridge.view import titles

    assert titles.sized(description, sizes) == (title or description)


def test_every_view_titles_a_sweep_by_its_sizes():
    # run-mix1 ran hmac-sha1 at 16, 64 and 256 bytes; the scenario says 1000.
    from bridge.cli.common import rendered
    from tests.conftest import FIXTURES

    report = schema.load(FIXTURES / "roundtrip" / "run-mix1.json")
    assert "1000-byte message" in report.description("hmac-sha1")
    for fmt in ("table", "markdown", "text"):
        out = rendered(fmt, report)
        assert "1000-byte" not in out and "16 B, 64 B and 256 B messages" in out.replace("\n", " ")
