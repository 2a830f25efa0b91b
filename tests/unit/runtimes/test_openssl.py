"""The openssl runtime: -mr parsing on canned text, and the real binary."""

from __future__ import annotations

from bridge.runtimes.openssl import parse_mr_runs, parse_version, version_id

MR_STDERR = "+DT:hmac(sha1):1:1000\n+R:1155174:hmac(sha1):1.000000\n"


def test_parse_mr_runs():
    assert parse_mr_runs(MR_STDERR) == [(1155174, 1.0)]
    assert parse_mr_runs("nothing here") == []


def test_parse_version_lines():
    assert parse_version("OpenSSL 3.0.19 27 Jan 2026 (Library: ...)") == ("OpenSSL", (3, 0, 19))
    assert parse_version("OpenSSL 1.0.2g  1 Mar 2016") == ("OpenSSL", (1, 0, 2))
    assert parse_version("LibreSSL 3.8.2") == ("LibreSSL", (3, 8, 2))
    assert parse_version("bash: openssl: command not found") is None


def test_runtime_ids_keep_the_letter_of_the_release():
    # openssl@1.1.1w, not openssl@1.1.1: 1.1.1k and 1.1.1w are different releases.
    assert version_id("OpenSSL 1.1.1w  11 Sep 2023") == "1.1.1w"
    assert version_id("OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19)") == "3.0.19"
    assert version_id("OpenSSL 3.2.0-dev ") == "3.2.0-dev"
    assert version_id("not openssl") == ""
