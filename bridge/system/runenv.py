"""`--env NAME=VALUE`: a variable for one runtime, the one named by the
--erl, --python or --openssl option just before it:

    bridge run hmac-sha1 --erl /opt/otp23/bin/erl --env LD_LIBRARY_PATH=/opt/ssl11/lib \\
                         --erl /usr/bin/erl

Only that runtime's processes get it (its masked twin too); the report
records it for that runtime, and the reproduce line keeps it after the same
option. The rest of bridge's environment is inherited as before and never
recorded. Binding to the option before it, rather than a global --env, is
what lets two installations that need different library paths run side by
side, and it reads as the command line does: this erl, with this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bridge.errors import UsageError

# The click parameter of each runtime option, and the runtime kind it names.
RUNTIME_OPTIONS = {"erl": "erlang", "python": "python", "openssl": "openssl"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Variables bridge controls itself, and why a runtime cannot be given them.
RESERVED = {
    "OPENSSL_ia32cap": "bridge sets it for the hw off runs (--hw off or both)",
    "OPENSSL_armcap": "bridge sets it for the hw off runs (--hw off or both)",
    "ERL_FLAGS": "bridge removes it: it could give the node distribution (-sname/-name)",
    "ERL_AFLAGS": "bridge removes it: it could give the node distribution (-sname/-name)",
    "ERL_ZFLAGS": "bridge removes it: it could give the node distribution (-sname/-name)",
}


@dataclass(frozen=True)
class Given:
    """One --env, bound to the n-th occurrence of a runtime option."""

    option: str  # erl | python | openssl
    index: int
    name: str
    value: str

    def text(self) -> str:
        return f"{self.name}={self.value}"


def parse(text: str) -> tuple[str, str]:
    """NAME=VALUE (the value may be empty or hold '=')."""
    name, eq, value = text.partition("=")
    if not eq or not NAME.fullmatch(name):
        raise UsageError(f"--env {text}: expected NAME=VALUE, e.g. --env LD_LIBRARY_PATH=/opt/lib")
    if name in RESERVED:
        raise UsageError(f"--env {text}: {name} cannot be given to a runtime: {RESERVED[name]}")
    return name, value


def bind(order: Sequence[str], values: Sequence[str]) -> tuple[Given, ...]:
    """Each --env value with the runtime option before it. `order` is the
    command line's parameter names, one per occurrence (as click parses
    them); `values` the --env values in command-line order."""
    seen = {option: -1 for option in RUNTIME_OPTIONS}
    last: str | None = None
    pending = list(values)
    out = []
    for name in order:
        if name in RUNTIME_OPTIONS:
            seen[name] += 1
            last = name
        elif name == "env" and pending:
            text = pending.pop(0)
            if last is None:
                raise UsageError(
                    f"--env {text}: name the runtime it is for first, e.g."
                    f" --erl PATH --env {text} (it applies to the --erl, --python or"
                    " --openssl just before it)"
                )
            out.append(Given(last, seen[last], *parse(text)))
    return tuple(out)


def for_option(given: Sequence[Given], option: str, count: int) -> tuple[dict[str, str], ...]:
    """The variables of each occurrence of one runtime option, in order."""
    out: list[dict[str, str]] = [{} for _ in range(count)]
    for g in given:
        if g.option == option and g.index < count:
            out[g.index][g.name] = g.value
    return tuple(out)


def argv(given: Sequence[Given], option: str, index: int) -> list[str]:
    """The --env options that follow one runtime option in a reproduce line."""
    return [
        arg for g in given if (g.option, g.index) == (option, index) for arg in ("--env", g.text())
    ]


# What a report's runtime may hand to a replay (--replay --as-recorded): an
# allow-list of variables known to change neither what a runtime loads nor
# how it starts, each with the values it may take. A deny-list would miss the
# next variable that loads code (LD_AUDIT, GCONV_PATH, ERL_LIBS, PYTHONSTARTUP,
# OPENSSL_MODULES, BASH_ENV, ...); everything not listed is dropped, and the
# user who wants it gives it on the command line (--env), where it is theirs.
FROM_REPORT = {
    "PYTHONHASHSEED": re.compile(r"random|[0-9]{1,10}"),
}


def from_report(env: Mapping[str, object]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A report runtime's variables, split into the ones a replay may give
    it and the ones it drops, each with the reason: (kept, [(name, why)])."""
    kept: dict[str, str] = {}
    dropped: list[tuple[str, str]] = []
    for name, value in env.items():
        if value is None:
            continue  # a mask variable that was not set
        pattern = FROM_REPORT.get(name)
        if pattern is not None and isinstance(value, str) and pattern.fullmatch(value):
            kept[name] = value
        else:
            dropped.append((name, why_dropped(name)))
    return kept, dropped


def why_dropped(name: str) -> str:
    """Why a report's variable is not replayed, for the warning."""
    if name.startswith(("ERL_", "ERLANG_")) or name in ("BINDIR", "ROOTDIR", "EMU", "PROGNAME"):
        return "it adds flags, code paths or a start-up mode to the Erlang VM"
    if name.startswith("LD_") or name in ("GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH"):
        return "it changes what the dynamic loader or the C library loads"
    if name.startswith("PYTHON"):
        if name in FROM_REPORT:
            return "its value is not one PYTHONHASHSEED takes (random or a number)"
        return "it changes what Python loads or runs at start-up"
    if name.startswith(("OPENSSL_", "SSL_CERT_")):
        return "it changes what OpenSSL loads (configuration, providers, engines)"
    if name in ("PATH", "HOME", "BASH_ENV", "ENV", "SHELL", "TMPDIR"):
        return "it changes which programs, files or start-up scripts are found"
    return "bridge replays only variables it knows to be harmless (" + ", ".join(FROM_REPORT) + ")"
