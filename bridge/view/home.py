"""The user's home directory as `~` in what a view prints (a pasted report
need not tell the world the user's name, and `~/.cache/...` reads shorter).
A leaf: no other bridge module, so any renderer can use it."""

from __future__ import annotations

import os
import re
import shlex


def _home() -> str:
    home = os.path.expanduser("~")
    return "" if home in ("", "/", "~") else home.rstrip("/")


def tilde(text: str) -> str:
    """Every path under the home directory, and the directory itself, as ~."""
    home = _home()
    if not home:
        return text
    return re.sub(rf"(?<![\w.~/-]){re.escape(home)}(?=/|\b|$)(?![\w.-])", "~", text)


def shell_word(word: str) -> str:
    """One word of a command line, quoted for a shell (shlex.quote), with a
    path in the home directory written from an unquoted ~/ (which the shell
    expands, where a quoted '~/...' would stay as it is)."""
    if word == _home() and word:
        return "~"
    rest = under_home(word)
    return shlex.quote(word) if rest is None else "~/" + (shlex.quote(rest) if rest else "")


def under_home(path: str) -> str | None:
    """What follows `~/` in a path under the home directory; None for any other."""
    home = _home()
    return path[len(home) + 1 :] if home and path.startswith(home + "/") else None
