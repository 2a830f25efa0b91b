"""The twins' masks kept from past runs (~/.cache/bridge/twins.json), so that
a masked twin can be launched beside its partner instead of after it.

Only ever a guess (bridge.measure.startup checks it against the mask the
partner's library calls for): a file that is missing, unreadable or stale
costs the time it saves, never a wrong twin. Only mask-shaped values of the
mask variables are read back, since they become a process's environment (no
LD_PRELOAD from a cache); a file bridge cannot read is discarded with one
warning, and one it cannot write is no error.
"""

from __future__ import annotations

import contextlib
import json
import re
import warnings
from collections.abc import Mapping
from pathlib import Path

from bridge import plain
from bridge.errors import BridgeWarning, UsageError
from bridge.hw.hardware import MASK_VARS
from bridge.system import cache

_MASK_VALUE = re.compile(r"[0-9A-Fa-fx:~]{1,200}")


def _mask_env(value: object) -> dict[str, str] | None:
    if not isinstance(value, dict) or not value:
        return None
    if not all(
        k in MASK_VARS and isinstance(v, str) and _MASK_VALUE.fullmatch(v) for k, v in value.items()
    ):
        return None
    return dict(value)


# The cache file: a few hundred bytes per runtime seen.
MAX_GUESSES_BYTES = 1 << 20
MAX_KEY = 4096


def _read_guesses(path: Path) -> tuple[dict[str, dict[str, str] | None], bool]:
    """The file's guesses, and whether some were dropped. A file that is not
    what bridge writes (the published bridge/report/twins-1.schema.json) is
    discarded with a warning and removed; entries that are not capability
    masks are dropped with a warning, and the file is written again without
    them: either costs one warning, not one per run. The file is read as
    bridge.system.cache reads: not through a link, not from a FIFO."""
    try:
        raw = cache.read_bytes(path, MAX_GUESSES_BYTES)
    except FileNotFoundError:
        return {}, False  # no cache yet
    except OSError as exc:
        return _discard_guesses(path, exc.strerror or str(exc)), False
    try:
        text = plain.decode(raw, str(path), "not bridge's twins cache")
        plain.check_json_depth(text, str(path))
        data = json.loads(text)
    except UsageError as exc:
        return _discard_guesses(path, exc.message), False
    except ValueError as exc:
        return _discard_guesses(path, f"{path}: not JSON ({exc})"), False
    if not isinstance(data, dict):
        return _discard_guesses(path, f"{path}: not an object"), False
    problems = [p for p in (twins_problem(k, v) for k, v in data.items()) if p]
    if problems:
        warnings.warn(
            f"{path}: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + "; dropped from the twins' cache",
            BridgeWarning,
            stacklevel=4,
        )
    known = {k: _mask_env(v) for k, v in data.items() if not twins_problem(k, v)}
    return known, bool(problems)


def twins_problem(key: str, value: object) -> str | None:
    """What is wrong with one entry of the twins cache, by the rules of its
    schema (checked here in Python: jsonschema is slow to import on every run)."""
    if len(key) > MAX_KEY:
        return f"a key of {len(key)} characters"
    if value is not None and _mask_env(value) is None:
        return f"not a capability mask for {plain.visible(key[:60])!r}"
    return None


def _discard_guesses(path: Path, why: str) -> dict[str, dict[str, str] | None]:
    warnings.warn(f"{why}; discarding the twins' cache", BridgeWarning, stacklevel=4)
    with contextlib.suppress(OSError):
        cache.remove(path)  # a FIFO, a device node or a link too: bridge only writes a file
    return {}


class TwinGuesses:
    """The mask each runtime's twin had last time, by runtime and features
    (a JSON file in bridge's cache). Only ever a guess (see the module's
    comment): a file that is missing, unreadable or stale costs the time it
    saves, never a wrong twin. Without a path, kept in memory only."""

    @classmethod
    def in_cache(cls) -> TwinGuesses:
        """The guesses kept in bridge's cache directory."""
        return cls(cache.root() / "twins.json")

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._known: dict[str, dict[str, str] | None] = {}
        self._changed = False
        if path is not None:
            self._known, self._changed = _read_guesses(path)

    def get(self, key: str) -> dict[str, str] | None:
        return self._known.get(key)

    def put(self, key: str, mask_env: Mapping[str, str] | None) -> None:
        value = dict(mask_env) if mask_env else None
        if self._known.get(key, "absent") != value:
            self._known[key] = value
            self._changed = True

    def save(self) -> None:
        """Keep what changed; a cache that cannot be written is no error."""
        if self.path is None or not self._changed:
            return
        text = json.dumps(self._known, indent=1, sort_keys=True)
        with contextlib.suppress(OSError):
            where = cache.directory(top=self.path.parent)
            cache.write_bytes(where / self.path.name, text.encode())
