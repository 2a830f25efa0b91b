"""How a view names things: runtimes (by kind, or by id where a run has
several of a kind), calls (short in a narrow table, in full in a legend),
the language of a user's expression (an `ex:` row is Elixir though an
Erlang node runs it), features."""

from __future__ import annotations

import re

from bridge.catalog import calls, usercode, vocab
from bridge.report import schema
from bridge.view import words

# A call in a label: module:function( (Erlang) or name( at the start.
_CALL = re.compile(r"\b([a-z][\w]*:[a-z][\w]*)\(")


class Names:
    """What a report's views call its runtimes and calls; computed once per view."""

    def __init__(self, report: schema.Report) -> None:
        self.report = report
        self.several = several(report)
        self._languages, self.expressions = _user_calls(report)

    def kind(self, runtime_id: str) -> str:
        return self.report.kind_of(runtime_id)

    def is_several(self, runtime_id: str) -> bool:
        return self.kind(runtime_id) in self.several

    def language(self, runtime_id: str, call_id: str = "") -> str:
        """Erlang, Elixir, Python, openssl, shell: who a row's code is written in."""
        lang = self._languages.get(call_id)
        if lang:
            return lang
        kind = self.kind(runtime_id)
        return vocab.KIND_NAMES.get(kind, kind)

    def who(self, runtime_id: str, call: str, call_id: str = "") -> str:
        """'Erlang crypto:hash(...)', '... on erlang@23.2.6' where the run
        has several runtimes of the kind."""
        lang = self.language(runtime_id, call_id)
        base = call if lang == "openssl" and call.startswith("openssl") else f"{lang} {call}"
        return f"{base} on {runtime_id}" if self.is_several(runtime_id) else base

    def short_who(self, r: schema.Result) -> str:
        return self.who(r.runtime, short_call(r), r.call_id)


def several(report: schema.Report) -> dict[str, list[str]]:
    """Runtime ids per kind, in the order named, for the kinds with more than one."""
    return report.several()


def _user_calls(report: schema.Report) -> tuple[dict[str, str], dict[str, str]]:
    """call id -> language, and call id -> the expression as written (with
    its prefix), for the user's expressions the scenarios record."""
    out: dict[str, str] = {}
    shown: dict[str, str] = {}
    for sc in report.scenarios:
        for uc in sc.user_calls:
            cid = usercode.PREFIX + usercode.expr_key(uc.runtime, uc.expr)[:8]
            out[cid] = usercode.NAMES[uc.runtime]
            shown[cid] = usercode.SHOWN[uc.runtime] + " ".join(uc.expr.split())
    return out, shown


def short_call(r: schema.Result) -> str:
    """A call as a narrow table names it: a user's expression as written
    (when short), an Erlang call by its function ("crypto:macN"), a chain
    by its first call ("crypto:mac_init(...)", never "S = crypto:mac_init"),
    else its id (hmac.digest, speed-sign)."""
    if r.call_id.startswith(calls.USER_PREFIX):
        return r.call if len(r.call) <= 32 else r.call_id
    m = _CALL.search(r.call)
    if m is None:
        return r.call_id
    name = m.group(1)
    function = name.split(":")[1]
    if r.call_id == function:
        # "S = crypto:mac_init(...), crypto:mac_update(...)": named by its first call.
        chained = m.start() > 0 or r.call.count(":") > 1
        return f"{name}(...)" if chained else name
    if r.call_id.startswith(f"{function}_"):  # mac_init_only: the first call of a chain alone
        return f"{name}, set-up" if function.endswith("_init") else f"{name} alone"
    return r.call_id


def feature(feature: str, brief: bool = False) -> str:
    """SHA extensions (SHA-NI / ARMv8 SHA); "ADX and BMI2 (masked together)";
    `brief` without the parenthesis (bridge.view.words.feature)."""
    said = words.feature(feature)
    return said.split(" (")[0] if brief else said
