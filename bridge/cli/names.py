"""The command's name: `bridge` collides with iproute2's /usr/sbin/bridge
(on every Debian and Ubuntu machine), which answers `bridge run hmac-sha1`
with 'Object "run" is unknown'. This package installs a second command,
`crypto-bridge`, that cannot collide; `bridge --version`, `make setup` and
`make run` say in one line when the `bridge` that PATH finds is another
program, and what to type instead.

`python -m bridge.cli.names` prints that line (if there is one) and exits 0:
the Makefile's check.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

# How much of a program to read to tell what it is: a console script is a
# few lines; iproute2's bridge is about 150 KiB, and says "bridge utility".
READ_AT_MOST = 4 << 20
OURS = b"bridge.cli.main"


def what_is(program: Path) -> str | None:
    """None when `program` is this bridge (a console script or wrapper that
    runs bridge.cli.main), else a few words on what it is."""
    try:
        with open(program, "rb") as f:
            head = f.read(READ_AT_MOST)
    except OSError:
        return "a program bridge cannot read"
    if OURS in head:
        return None
    if b"iproute2" in head or b"bridge utility" in head:
        return "iproute2's bridge utility"
    return "another program"


def scripts_dir() -> Path:
    """Where this installation's commands are (a venv's bin/)."""
    here = Path(sys.argv[0]).resolve().parent if sys.argv and sys.argv[0] else None
    if here is not None and (here / "crypto-bridge").exists():
        return here
    return Path(sysconfig.get_path("scripts"))


def clash(path: str | None = None) -> str | None:
    """One line when the `bridge` that PATH finds first is not this bridge:
    which program it is, and the fix. None when it is this bridge, or when
    there is no `bridge` on PATH at all."""
    found = shutil.which("bridge", path=os.environ.get("PATH") if path is None else path)
    if found is None:
        return None
    what = what_is(Path(found))
    if what is None:
        return None
    bin_dir = scripts_dir()
    mine = bin_dir / "crypto-bridge"
    alternative = str(mine) if shutil.which("crypto-bridge", path=path) is None else "crypto-bridge"
    return (
        f"`bridge` on PATH is {found} ({what}), not this bridge: run {alternative}"
        f" (or python -m bridge), or put {bin_dir} first on PATH"
    )


def main() -> None:
    line = clash()
    if line:
        print(f"bridge: note: {line}", file=sys.stderr)


if __name__ == "__main__":
    main()
