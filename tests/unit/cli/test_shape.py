"""Where `bridge run` says its warnings (bridge.cli.run.Shape): once, in the
view on stdout, or on stderr beside JSON, which has no prose; never both."""

from __future__ import annotations

import pytest

from bridge.cli.common import rendered
from bridge.cli.run import Shape, _stderr_warnings
from bridge.errors import UsageError
from bridge.report import schema
from tests.conftest import FIXTURES

REPORT = FIXTURES / "terminal" / "ecdsa-p256-quick.json"


def test_warnings_go_to_stderr_beside_json_only():
    assert Shape("json").warns_on_stderr
    for fmt in ("table", "markdown", "text"):
        assert not Shape(fmt).warns_on_stderr
    assert not Shape("json", quiet=True).warns_on_stderr  # -q: no caveats anywhere
    with pytest.raises(UsageError, match="--verbose and --quiet"):
        Shape("table", verbose=True, quiet=True)


def test_what_stderr_says_beside_json_is_what_the_view_says(capsys):
    report = schema.load(REPORT)
    _stderr_warnings(report)
    err = capsys.readouterr().err.splitlines()
    assert err and all(x.startswith(("bridge: warning: ", "bridge: advice: ")) for x in err)
    view = " ".join(rendered("table", report, width=80).split())
    # Each stderr line (the unstable cells aside: the view marks them) is in the view.
    for line in err:
        text = line.split(": ", 2)[2]
        if "did not reach the target" not in text:
            assert " ".join(text.split())[:50] in view, line


def test_the_view_fits_the_terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    lines = Shape("table").render(schema.load(REPORT)).splitlines()
    assert max(map(len, lines)) <= 100 and max(map(len, lines)) > 80
    monkeypatch.setenv("COLUMNS", "80")
    assert max(map(len, Shape("table").render(schema.load(REPORT)).splitlines())) <= 80
