"""What erlc says when it cannot write the worker cache: such a failure is
the cache's (compiled elsewhere, as for a read-only cache), any other is the
compiler's."""

from __future__ import annotations

import pytest

from bridge.system import otp


@pytest.mark.parametrize(
    "said, reason",
    [
        (
            "/c/beam/.build-x/bridge_worker.bea#: error writing file: no space left on device",
            "no space left on device",
        ),
        (
            "/c/beam/.build-x/bridge_api.bea#: error writing file: disk quota exceeded",
            "disk quota exceeded",
        ),
        (
            "x.erl: warning\n/c/y.bea#: error writing file: read-only file system",
            "read-only file system",
        ),
        (
            "/c/y.beam: failed to rename /c/y.bea# to /c/y.beam: permission denied",
            "/c/y.bea# to /c/y.beam: permission denied",
        ),
    ],
)
def test_write_failures_are_the_caches(said, reason):
    assert otp._write_failure(said) == reason


@pytest.mark.parametrize("said", ["bridge_worker.erl:12: syntax error before: ')'", ""])
def test_other_failures_are_the_compilers(said):
    assert otp._write_failure(said) is None
