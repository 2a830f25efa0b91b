"""bridge's side of Erlang distribution, as options: the nodes named with
--node, the cookie file, and the name bridge's own hidden node takes.

Nothing here connects anywhere (bridge.runtimes.relay does). Bad input raises
UsageError with one line.

- A target NAME@HOST whose HOST has a dot (a fully qualified name or an IPv4
  address) is a long name (`-name`); otherwise it is a short name (`-sname`).
  A node of one kind cannot talk to a node of the other, so bridge's own
  node takes the same kind.
- The cookie is read from a file (default ~/.erlang.cookie, where erl keeps
  it), checked as erl checks it (a regular file readable by its owner only,
  printable ASCII), and sent to bridge's node over its pipe: it never appears
  in a command line, an environment, a log or a report.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from bridge.errors import UsageError

NAME = re.compile(r"[A-Za-z0-9_-]+")
HOST = re.compile(r"[A-Za-z0-9_.-]+")
# Defaults: a node that has not completed the handshake in 10 s is taken as
# unreachable; a measurement keeps at most a quarter of one scheduler busy.
CONNECT_TIMEOUT_S = 10.0
MAX_LOAD = 0.25
# auth (OTP's cookie keeper) accepts printable ASCII; a cookie is an atom.
MAX_COOKIE = 255


@dataclass(frozen=True)
class NodeName:
    name: str
    host: str

    @property
    def longnames(self) -> bool:
        return "." in self.host

    @property
    def domain(self) -> str:
        """net_kernel's name domain: shortnames (-sname) or longnames (-name)."""
        return "longnames" if self.longnames else "shortnames"

    def __str__(self) -> str:
        return f"{self.name}@{self.host}"


def parse_node(text: str) -> NodeName:
    name, sep, host = text.strip().partition("@")
    if not sep or not NAME.fullmatch(name) or not HOST.fullmatch(host) or len(text) > 255:
        raise UsageError(
            f"--node {text!r}: expected NAME@HOST, e.g. app@db1 (-sname) or"
            " app@db1.example.com (-name)"
        )
    return NodeName(name, host)


def default_cookie_file() -> Path:
    return Path.home() / ".erlang.cookie"


def read_cookie(path: Path) -> str:
    """The cookie in `path`, refused as erl refuses it."""
    where = f"cookie file {path}"
    try:
        st = path.stat()
    except FileNotFoundError:
        raise UsageError(
            f"{where}: no such file (the node's cookie: its ~/.erlang.cookie)"
        ) from None
    except OSError as exc:
        raise UsageError(f"{where}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{where}: not a regular file")
    if st.st_mode & 0o077:
        # erl refuses such a cookie file too: anyone who can read it can run
        # any code on every node that uses it.
        raise UsageError(
            f"{where}: readable by others (mode {stat.S_IMODE(st.st_mode):o});"
            f" make it owner-only: chmod 400 {path}"
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{where}: {exc.strerror}") from None
    cookie = raw.strip(b" \r\n")
    if not cookie:
        raise UsageError(f"{where}: the file is empty")
    if len(cookie) > MAX_COOKIE or any(not 32 <= c <= 126 for c in cookie):
        raise UsageError(f"{where}: not a cookie (printable ASCII, at most {MAX_COOKIE} bytes)")
    return cookie.decode("ascii")


def own_name(domain: str) -> str:
    """bridge's node name: unique per run, recognisable in the target's
    nodes(hidden). A short name gets this host's short name from net_kernel;
    a long name needs a host with a dot, and bridge does not listen, so when
    this machine has no such name its loopback address serves."""
    base = f"bridge_{os.getpid()}_{secrets.token_hex(3)}"
    if domain == "shortnames":
        return base
    fqdn = socket.getfqdn()
    host = fqdn if "." in fqdn and not fqdn.startswith("localhost") else "127.0.0.1"
    return f"{base}@{host}"


@dataclass(frozen=True)
class NodePlan:
    """What --node asks for: which nodes, with which cookie, and whether to
    measure on them (--measure) or only look (bridge env --node)."""

    targets: tuple[NodeName, ...]
    cookie_file: Path
    measure: bool = False
    max_load: float = MAX_LOAD
    connect_timeout: float = CONNECT_TIMEOUT_S

    def cookie(self) -> str:
        return read_cookie(self.cookie_file)


def node_plan(
    nodes: tuple[str, ...],
    cookie_file: Path | None,
    *,
    measure: bool = False,
    max_load: float = MAX_LOAD,
    connect_timeout: float = CONNECT_TIMEOUT_S,
) -> NodePlan | None:
    """--node options as a NodePlan (None without --node). The cookie file is
    checked now, before anything starts."""
    if not nodes:
        return None
    targets = tuple(dict.fromkeys(parse_node(n) for n in nodes))
    plan = NodePlan(
        targets=targets,
        cookie_file=cookie_file or default_cookie_file(),
        measure=measure,
        max_load=max_load,
        connect_timeout=connect_timeout,
    )
    plan.cookie()
    return plan
