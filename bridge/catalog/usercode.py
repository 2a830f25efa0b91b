"""The user's own calls: expressions given to `bridge time` or written in a
scenario file's `[[calls]]`, timed beside the closed table of
bridge.catalog.calls.

A user call is data the user wrote, never data that came in a report or a
request: the command line builds these records from its arguments, a
scenario file the user named builds them from its `[[calls]]` entries, and a
replayed report's expressions run only after the user has seen each one and
confirmed (bridge.cli.replay). The runtimes get the expressions when they
start (bridge.runtimes.usercode); a request names one only by its key, the
first 16 hex digits of SHA-256 over its runtime and text, so no request can
bring code of its own.

Runtimes of a user call, and where it runs:
- `erlang` (no prefix, or `erl:`): an Erlang expression, compiled with the
  node's own compiler into a module of its own (erl/bridge_user.erl);
- `elixir` (`ex:`): Elixir, compiled once into a module through
  `Code.compile_string` in the same node, with Elixir's library added;
- `python` (`py:`): a Python expression, compiled once into a function in the
  Python worker;
- `shell` (`sh:`): a whole process, `/bin/sh -c CMD`, run beside the openssl
  runtime (with its environment and its capability mask).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from bridge.catalog import calls
from bridge.catalog.choice import Choice
from bridge.catalog.vocab import RuntimeKind


class UserRuntime(Choice):
    """What a user call is written in. The values are what scenario files
    and reports hold."""

    ERLANG = "erlang"
    ELIXIR = "elixir"
    PYTHON = "python"
    SHELL = "shell"


# A user call's id: expr: and 8 hex digits of its key, so the same expression
# has the same id in every report (bridge compare pairs them) and two
# different ones never share one.
PREFIX = "expr:"
# The user's runtime -> the runtime kind that runs it.
KINDS = {
    "erlang": RuntimeKind.ERLANG,
    "elixir": RuntimeKind.ERLANG,
    "python": RuntimeKind.PYTHON,
    "shell": RuntimeKind.OPENSSL,
}
# How each is written on the command line (an expression without one is Erlang).
PREFIXES = {"erl:": "erlang", "ex:": "elixir", "py:": "python", "sh:": "shell"}
SHOWN = {"erlang": "", "elixir": "ex:", "python": "py:", "shell": "sh:"}
MAX_EXPR = 4000  # characters: an expression is a line, not a program
NAMES = {"erlang": "Erlang", "elixir": "Elixir", "python": "Python", "shell": "shell"}
SEMANTICS = {
    "erlang": "user code: an Erlang expression, compiled into a module by the node's compiler",
    "elixir": "user code: an Elixir expression, compiled into a module through Elixir's Code",
    "python": "user code: a Python expression, compiled once into a function in the worker",
    "shell": "whole process: /bin/sh -c CMD, start-up included (data on its stdin)",
}
NOT_CHECKED = "not checked: the user call asks for no check (checked = false, or no --same-output)"
# What every user call has bound, per runtime (bridge.runtimes.usercode writes them).
BOUND = {
    "erlang": ("Data", "Size", "Key", "IV", "Count", "Pub", "Sig"),
    "elixir": ("data", "size", "key", "iv", "count", "pub", "sig"),
    "python": ("data", "size", "key", "iv", "count", "pub", "sig"),
    "shell": ("stdin", "BRIDGE_SIZE", "BRIDGE_DATA", "BRIDGE_KEY", "BRIDGE_IV", "BRIDGE_COUNT"),
}


class BadCall(ValueError):
    """A user call that cannot be one (the caller names where it came from)."""


@dataclass(frozen=True)
class UserCall:
    runtime: UserRuntime
    expr: str  # verbatim, as the user wrote it
    label: str = ""  # what the tables call it; "" = the expression as written
    checked: bool = True  # its output is checked against the scenario's reference

    @property
    def kind(self) -> str:
        """The runtime kind that runs it."""
        return KINDS[self.runtime]

    @property
    def key(self) -> str:
        """How a request names it: no request carries code."""
        return expr_key(self.runtime, self.expr)

    @property
    def shown(self) -> str:
        """The expression as it is written on the command line."""
        return SHOWN[self.runtime] + self.expr

    @property
    def title(self) -> str:
        """What the tables call it: its label, or the expression on one line."""
        return self.label or " ".join(self.shown.split())

    def describe(self) -> str:
        """One line: its language and the expression, as it will run."""
        return f"{NAMES[self.runtime]}: {self.shown}"

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"runtime": self.runtime.value, "expr": self.expr}
        if self.label:
            d["label"] = self.label
        d["checked"] = self.checked
        return d


def expr_key(runtime: str, expr: str) -> str:
    # surrogatepass: a report's expression may hold a lone surrogate (JSON
    # "\ud800"); every other text hashes as UTF-8, as it always did.
    return hashlib.sha256(f"{runtime}\0{expr}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def body(expr: str) -> str:
    """The expression as compiled: erlperf's habit of a closing '.' dropped."""
    text = expr.strip()
    return text[:-1].rstrip() if text.endswith(".") and not text.endswith("..") else text


def parse_cli(text: str) -> UserCall:
    """`py:EXPR`, `ex:EXPR`, `sh:CMD`, `erl:EXPR` or a plain Erlang expression."""
    for prefix, runtime in PREFIXES.items():
        if text.startswith(prefix):
            return make(runtime, text[len(prefix) :])
    return make("erlang", text)


# `name=EXPR`: a label the tables and the answer call the expression by. A
# name starts with a lower-case letter (an Erlang variable starts with a
# capital) and `=` is not the start of `==`, `=:=`, `=/=` or `=<`.
_LABEL = re.compile(r"^([a-z][A-Za-z0-9_.+-]{0,39})=(?![=:/<])")


def labelled(text: str, checked: bool = True) -> UserCall:
    """`name=EXPR` (EXPR as parse_cli reads it) or EXPR alone."""
    m = _LABEL.match(text)
    label, rest = (m.group(1), text[m.end() :]) if m else ("", text)
    uc = parse_cli(rest)
    return make(uc.runtime, uc.expr, label, checked)


def make(runtime: str, expr: str, label: str = "", checked: bool = True) -> UserCall:
    if runtime not in KINDS:
        raise BadCall(f"runtime {runtime!r}: expected one of {', '.join(KINDS)}")
    if not isinstance(expr, str) or not body(expr):
        raise BadCall("an empty expression")
    if len(expr) > MAX_EXPR:
        raise BadCall(f"an expression of {len(expr)} characters (at most {MAX_EXPR})")
    if "\0" in expr:
        raise BadCall("an expression with a NUL character")
    if not isinstance(label, str) or len(label) > 80 or not label.isprintable():
        raise BadCall("a label of at most 80 printable characters")
    return UserCall(UserRuntime(runtime), expr, label, bool(checked))


_PAIRS = {")": "(", "]": "[", "}": "{"}
_QUOTES = "\"'"


def syntax_error(uc: UserCall) -> str:
    """What is wrong with an expression before anything runs: a Python
    expression that does not compile, or brackets or quotes left open in an
    Erlang or Elixir one ("" when none is found; the runtime's own compiler
    has the last word)."""
    if uc.runtime == "python":
        try:
            compile(body(uc.expr), "<expr>", "eval")
        except SyntaxError as exc:
            return f"not a Python expression ({exc.msg})"
        return ""
    if uc.runtime == "shell":
        return ""
    stack: list[str] = []
    quote = ""
    escaped = False
    for ch in uc.expr:
        if escaped and not quote:  # Erlang's $( is the character (
            escaped = False
            continue
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch == "$" and uc.runtime == "erlang":
            escaped = True
        elif ch in _QUOTES:
            quote = ch
        elif ch in "([{":
            stack.append(ch)
        elif ch in _PAIRS and (not stack or stack.pop() != _PAIRS[ch]):
            return f"a {ch!r} that closes nothing"
    if quote:
        return f"a {quote} left open"
    if stack:
        return f"a {stack[-1]!r} left open"
    return ""


def from_json(d: Any) -> UserCall:
    """A user call as a scenario file's `[[calls]]` entry or a report writes it."""
    if not isinstance(d, dict):
        raise BadCall("an entry that is not a table")
    unknown = sorted(set(d) - {"runtime", "expr", "label", "checked"})
    if unknown:
        raise BadCall(f"unknown key {unknown[0]!r} (expected runtime, expr, label, checked)")
    checked = d.get("checked", True)
    if not isinstance(checked, bool):
        raise BadCall("'checked' must be true or false")
    return make(str(d.get("runtime", "")), d.get("expr", ""), d.get("label", ""), checked)


def call_id(uc: UserCall) -> str:
    return f"{PREFIX}{uc.key[:8]}"


def is_user(cid: str) -> bool:
    return cid.startswith(PREFIX)


def position(sc: Any, cid: str) -> int:
    """The 1-based place of the user call `cid` in a scenario (0: none there)."""
    for n, uc in enumerate(sc.user_calls, 1):
        if call_id(uc) == cid:
            return n
    return 0


def check_distinct(user: Any) -> None:
    seen: dict[str, UserCall] = {}
    for uc in user:
        if call_id(uc) in seen:
            raise BadCall(f"the same expression twice: {uc.shown[:80]!r}")
        seen[call_id(uc)] = uc


def as_call(sc: Any, n: int) -> calls.Call:
    """The n-th (1-based) user call of a scenario as a call the session can run."""
    uc: UserCall = sc.user_calls[n - 1]
    return calls.Call(
        runtime=uc.kind,
        id=call_id(uc),
        op="user_shell" if uc.runtime == "shell" else "user",
        kinds=frozenset({sc.kind}),
        semantics=SEMANTICS[uc.runtime],
        label=lambda _sc, _api, t=uc.title: t,
        # Random bytes give two outputs per probe, checked as the built-in calls are.
        check=calls.Check.DISTINCT if sc.kind == "random" else calls.Check.REFERENCE,
        # User code may be random (rand:bytes): rounds need not give equal bytes.
        randomised=True,
        unchecked="" if uc.checked else NOT_CHECKED,
        user=uc.key,
    )
