"""The runtimes bridge can start, as specs for the session: which kinds, in
the order the user named them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from bridge import otp
from bridge.runtimes.erlang import ErlangRuntime
from bridge.runtimes.openssl import OpensslRuntime
from bridge.runtimes.python import PythonRuntime
from bridge.session import RuntimeSpec
from bridge.settings import Settings


def specs(
    s: Settings,
    kinds: Sequence[str],
    erl: Sequence[otp.Installation | None],
    python: Sequence[str | None],
    openssl: Sequence[str | None],
) -> list[RuntimeSpec]:
    return list(_specs(s, kinds, erl, python, openssl))


def _specs(s, kinds, erl, python, openssl) -> Iterator[RuntimeSpec]:
    if "erlang" in kinds:
        for inst in erl:
            yield RuntimeSpec(
                "erlang",
                str(inst.erl) if inst else "erl",
                lambda hw, env, i=inst: ErlangRuntime(i or otp.locate(None), s, hw, env),
                requested="--erl" if inst else "",
            )
    if "python" in kinds:
        for exe in python:
            yield RuntimeSpec(
                "python",
                exe or "python",
                lambda hw, env, e=exe: PythonRuntime(s, hw, env, executable=e),
                requested="--python" if exe else "",
            )
    if "openssl" in kinds:
        for exe in openssl:
            yield RuntimeSpec(
                "openssl",
                exe or "openssl",
                lambda hw, env, e=exe: OpensslRuntime(s, hw, env, executable=e),
                requested="--openssl" if exe else "",
            )
