"""The examples under --help (and in docs/reference) name the program as it
was called: crypto-bridge wherever bridge could be iproute2's, wherever the
line runs it (first, after variables set for it, after a pipe)."""

from __future__ import annotations

import re

import click
import pytest

from bridge.cli.common import called
from bridge.cli.main import cli


@pytest.mark.parametrize(
    "line, shown",
    [
        ("bridge run hmac-sha1 --quick", "crypto-bridge run hmac-sha1 --quick"),
        (
            "BRIDGE_OTP_PATH=/opt/otp-26 bridge otp list --format json",
            "BRIDGE_OTP_PATH=/opt/otp-26 crypto-bridge otp list --format json",
        ),
        (
            "xclip -o | bridge import-speed - --format markdown",
            "xclip -o | crypto-bridge import-speed - --format markdown",
        ),
        # Not the program: a word of an argument, or part of another name.
        ("cat bridge.toml", "cat bridge.toml"),
        ("crypto-bridge run x", "crypto-bridge run x"),
        ("python -m bridge run x", "python -m bridge run x"),
    ],
)
def test_the_program_word_is_the_called_name(line, shown):
    assert called(line, "crypto-bridge") == shown


def _commands(cmd: click.Command):
    yield cmd
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            yield from _commands(sub)


def test_no_example_leaves_bridge_to_run():
    examples = [line for c in _commands(cli) for line, _ in getattr(c, "examples", ())]
    assert len(examples) > 20
    for line in examples:
        shown = called(line, "crypto-bridge")
        assert "crypto-bridge " in shown, line
        assert not re.search(r"(^|[|;&]\s*|=\S*\s)bridge ", shown), shown
