"""The unit tier's fixtures."""

from __future__ import annotations

import pytest

from bridge.view import home

# The fixture reports were written by runs under /root; the golden renderings
# show that directory as ~ whoever runs the tests.
FIXTURE_HOME = "/root"


@pytest.fixture(autouse=True)
def _fixture_home(monkeypatch):
    monkeypatch.setattr(home, "_home", lambda: FIXTURE_HOME)
