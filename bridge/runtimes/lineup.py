"""The runtimes bridge can start, as specs for the session: which kinds, in
the order the user named them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from bridge.catalog.vocab import RuntimeKind
from bridge.runtimes.base import RuntimeSpec
from bridge.runtimes.erlang import ErlangRuntime
from bridge.runtimes.openssl import OpensslRuntime
from bridge.runtimes.python import PythonRuntime
from bridge.settings import Settings
from bridge.system import otp


def specs(
    s: Settings,
    kinds: Sequence[str],
    erl: Sequence[otp.Installation | None],
    python: Sequence[str | None],
    openssl: Sequence[str | None],
    given: Mapping[str, Sequence[Mapping[str, str]]] | None = None,
) -> list[RuntimeSpec]:
    """`given`: per kind, the variables each runtime of that kind was given
    (--env after its option), in the order of `erl`, `python`, `openssl`."""
    return list(_specs(s, kinds, erl, python, openssl, given or {}))


def _given(given, kind: str, index: int) -> Mapping[str, str]:
    env = given.get(kind, ())
    return env[index] if index < len(env) else {}


def _specs(s, kinds, erl, python, openssl, given) -> Iterator[RuntimeSpec]:
    if RuntimeKind.ERLANG in kinds:
        for n, inst in enumerate(erl):
            g = _given(given, RuntimeKind.ERLANG, n)
            yield RuntimeSpec(
                RuntimeKind.ERLANG,
                str(inst.erl) if inst else "erl",
                lambda hw, env, i=inst, g=g: ErlangRuntime(
                    i or otp.locate(None), s, hw, env
                ).with_env(g),
                requested="--erl" if inst else "",
            )
    if RuntimeKind.PYTHON in kinds:
        for n, exe in enumerate(python):
            g = _given(given, RuntimeKind.PYTHON, n)
            yield RuntimeSpec(
                RuntimeKind.PYTHON,
                exe or "python",
                lambda hw, env, e=exe, g=g: PythonRuntime(s, hw, env, executable=e).with_env(g),
                requested="--python" if exe else "",
            )
    if RuntimeKind.OPENSSL in kinds:
        for n, exe in enumerate(openssl):
            g = _given(given, RuntimeKind.OPENSSL, n)
            yield RuntimeSpec(
                RuntimeKind.OPENSSL,
                exe or "openssl",
                lambda hw, env, e=exe, g=g: OpensslRuntime(s, hw, env, executable=e).with_env(g),
                requested="--openssl" if exe else "",
            )
