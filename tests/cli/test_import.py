"""bridge import-speed through the CLI."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, bridge_cmd

SEEDS = FIXTURES / "seeds"


THREAD = SEEDS / "erlang-questions-hmac-hardware-acceleration.txt"


@pytest.mark.skipif(not THREAD.exists(), reason="seed not present")
def test_import_seed_as_table_and_json(tmp_path):
    done = bridge_cmd("import-speed", str(THREAD))
    assert done.returncode == 0, done.stderr
    assert "2) AMD EPYC: OpenSSL 1.1.1" in " ".join(done.stdout.split())
    assert "(as posted)" in done.stdout
    out = tmp_path / "imported.json"
    done = bridge_cmd("import-speed", str(THREAD), "--format", "json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["schema"] == "bridge.report/1"
    assert [rt["kind"] for rt in report["runtimes"]] == ["openssl"] * 4
    first = next(r for r in report["results"] if r["runtime"] == "openssl#1" and r["size"] == 16)
    assert first["bytes_per_s"] == pytest.approx(101811610)
    assert first["source"] == "imported" and first["samples"] == []
    assert first["ns_per_op"]["ci95"] is None  # no samples, no interval
    # The report reads back like any other.
    assert bridge_cmd("import-speed", str(THREAD), "--format", "json").stdout.startswith("{")


def test_import_from_stdin():
    text = "Doing sha256 for 3s on 16 size blocks: 9878456 sha256's in 3.00s\n"
    done = bridge_cmd("import-speed", "-", input=text)
    assert done.returncode == 0, done.stderr
    assert "sha256" in done.stdout


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "nothing recognisable"),
        (b"\x00\x01\x02binary", "binary"),
        (b"Dear list, my crypto is slow.\n", "nothing recognisable"),
    ],
)
def test_unrecognisable_documents_exit_2(tmp_path, content, message):
    path = tmp_path / "doc.txt"
    path.write_bytes(content)
    done = bridge_cmd("import-speed", str(path))
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_partly_recognisable_document_warns_and_imports(tmp_path):
    path = tmp_path / "doc.txt"
    path.write_text(
        "Doing sha1 for 3s on 16 size blocks: 100 sha1's in 1.00s\n"
        "Doing sha1 for 3s on 64 size blocks: lots of sha1's\n"
    )
    done = bridge_cmd("import-speed", str(path))
    assert done.returncode == 0
    assert "warning: skipped line 2" in done.stderr
