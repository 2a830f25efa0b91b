"""bridge's side of Erlang distribution, as options: the nodes named with
--node, the cookie, and the name bridge's own hidden node takes.

Nothing here connects anywhere (bridge.runtimes.relay does). Bad input raises
UsageError with one line.

- A target NAME@HOST whose HOST has a dot (a fully qualified name or an IPv4
  address) is a long name (`-name`); otherwise it is a short name (`-sname`).
  A node of one kind cannot talk to a node of the other, so bridge's own
  node takes the same kind. A bare NAME gets this host, as `erl -remsh NAME`
  and `iex --remsh NAME` fill it in: the short host name (what `erl -sname
  NAME` registers as), since a bare name says nothing of a domain.
- The cookie, in the order releases and erl look for it: --cookie, a
  --cookie-file, RELEASE_COOKIE in the environment (as `mix release`'s
  scripts read it), then ~/.erlang.cookie. A file is checked as erl checks
  its own (a regular file, printable ASCII); one readable by others is
  refused as the default ~/.erlang.cookie (erl itself would refuse it) and a
  warning when named with --cookie-file (the mode `mix release` gives
  releases/COOKIE under the default umask). The cookie is sent to bridge's
  node over its pipe: it never appears in a child's command line or
  environment, a log, a message or a report.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import stat
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bridge.errors import BridgeWarning, UsageError

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


def short_host() -> str:
    """This host as `erl -sname` names it: the host name up to its first dot."""
    return socket.gethostname().split(".")[0]


def parse_node(text: str) -> NodeName:
    """NAME@HOST, or a bare NAME on this host (a short name, as `erl -sname
    NAME` registers it)."""
    name, sep, host = text.strip().partition("@")
    if not sep:
        host = short_host()
    if not NAME.fullmatch(name) or not HOST.fullmatch(host) or len(text) > 255:
        raise UsageError(
            f"--node {text!r}: expected NAME or NAME@HOST, e.g. app (on this host, -sname),"
            " app@db1 (-sname) or app@db1.example.com (-name)"
        )
    return NodeName(name, host)


def default_cookie_file() -> Path:
    return Path.home() / ".erlang.cookie"


def check_cookie(raw: bytes, where: str) -> str:
    """A cookie as auth takes it (an atom: printable ASCII, at most 255
    bytes), surrounding blanks and newlines dropped. The refusal never
    quotes it."""
    cookie = raw.strip(b" \r\n")
    if not cookie:
        raise UsageError(f"{where}: the cookie is empty")
    if len(cookie) > MAX_COOKIE or any(not 32 <= c <= 126 for c in cookie):
        raise UsageError(f"{where}: not a cookie (printable ASCII, at most {MAX_COOKIE} bytes)")
    return cookie.decode("ascii")


def read_cookie(path: Path, named: bool = False) -> str:
    """The cookie in `path`, refused as erl refuses it; a file the user
    named (`named`) that others can read is a warning instead."""
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
        # Anyone who can read it can run any code on every node that uses it.
        said = (
            f"{where}: readable by others (mode {stat.S_IMODE(st.st_mode):o}): anyone who"
            f" can read it can run code on the nodes that use it; chmod 400 {path}"
        )
        if not named:  # ~/.erlang.cookie: erl refuses it too
            raise UsageError(said)
        warnings.warn(BridgeWarning(said), stacklevel=2)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{where}: {exc.strerror}") from None
    return check_cookie(raw, where)


@dataclass(frozen=True)
class Cookie:
    """Where the nodes' cookie comes from, and (for --cookie and
    RELEASE_COOKIE) the cookie itself, which no repr, str or comparison shows."""

    origin: str  # "--cookie", "RELEASE_COOKIE", or the file's path
    path: Path | None = None
    named: bool = False  # a file named with --cookie-file: its mode is a warning
    value: str = field(default="", repr=False, compare=False)

    def read(self) -> str:
        """The cookie, checked: a file as erl checks it, a value as auth takes it."""
        if self.path is not None:
            return read_cookie(self.path, self.named)
        return check_cookie(self.value.encode("utf-8", "surrogateescape"), self.origin)

    def __str__(self) -> str:
        return self.origin


def cookie_from(
    cookie: str | None, cookie_file: Path | None, environ: Mapping[str, str] | None = None
) -> Cookie:
    """The cookie's source, in the order releases use: --cookie, then
    --cookie-file, then RELEASE_COOKIE (from `environ`), then
    ~/.erlang.cookie."""
    if cookie is not None and cookie_file is not None:
        raise UsageError("--cookie and --cookie-file both name the cookie: give one")
    if cookie is not None:
        return Cookie("--cookie", value=cookie)
    if cookie_file is not None:
        return Cookie(str(cookie_file), path=cookie_file, named=True)
    released = (os.environ if environ is None else environ).get("RELEASE_COOKIE")
    if released:  # checked when read: without --node it is not bridge's business
        return Cookie("RELEASE_COOKIE", value=released)
    path = default_cookie_file()
    return Cookie(str(path), path=path)


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
    cookie_source: Cookie
    measure: bool = False
    max_load: float = MAX_LOAD
    connect_timeout: float = CONNECT_TIMEOUT_S

    def cookie(self) -> str:
        return self.cookie_source.read()

    @property
    def cookie_file(self) -> Path | None:
        return self.cookie_source.path


def node_plan(
    nodes: tuple[str, ...],
    cookie: Cookie | Path | None,
    *,
    measure: bool = False,
    max_load: float = MAX_LOAD,
    connect_timeout: float = CONNECT_TIMEOUT_S,
) -> NodePlan | None:
    """--node options as a NodePlan (None without --node). `cookie` is a
    Cookie, or a --cookie-file path (None: RELEASE_COOKIE or the default
    file). The cookie is checked now, before anything starts."""
    if not nodes:
        return None
    targets = tuple(dict.fromkeys(parse_node(n) for n in nodes))
    if not isinstance(cookie, Cookie):
        cookie = cookie_from(None, cookie)
    plan = NodePlan(
        targets=targets,
        cookie_source=cookie,
        measure=measure,
        max_load=max_load,
        connect_timeout=connect_timeout,
    )
    plan.cookie()
    return plan
