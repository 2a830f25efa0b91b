"""The user's home directory as `~` in what a view prints (a pasted report
need not tell the world the user's name, and `~/.cache/...` reads shorter).
A leaf: no other bridge module, so any renderer can use it."""

from __future__ import annotations

import os
import re


def _home() -> str:
    home = os.path.expanduser("~")
    return "" if home in ("", "/", "~") else home.rstrip("/")


def tilde(text: str) -> str:
    """Every path under the home directory, and the directory itself, as ~."""
    home = _home()
    if not home:
        return text
    return re.sub(rf"(?<![\w.~/-]){re.escape(home)}(?=/|\b|$)(?![\w.-])", "~", text)


def tilde_words(command: str) -> str:
    """A shell command with each word that starts with the home directory
    starting with ~ instead: unquoted, at the start of a word, where the shell
    expands it again (quoted words are left as they are)."""
    home = _home()
    if not home:
        return command
    return re.sub(rf"(?:(?<=^)|(?<= )){re.escape(home)}(?=/|\s|$)", "~", command)
