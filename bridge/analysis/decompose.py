"""Cost decomposition: how much of a call is set-up, where rows differ by
set-up. Pure: it reads results and runtimes, and returns records.

Some calls repeat a set-up on every call that an application could do once:
Erlang's crypto:sign/4 takes the private key as a term and imports it into
libcrypto every time (crypto:verify/5 the public key, likewise), a
one-shot AEAD call keys a new context every time, a program that loads its
key from DER per request parses it every time. For each such call a
scenario lists, the set-up's cost is found as:

- the difference with a prepared call: the same work with the set-up done
  once. In the same runtime where it has one (cryptography's key object made
  once, an AEAD object reused; crypto_one_time_aead_init/4 on OTP 28+);
  otherwise `openssl speed`, which signs with a key it imported once
  (`speed -aead` seals with a context keyed once), and only when it uses the
  same libcrypto (the same version string). Then the difference also holds
  the call's other per-call work (hashing the message, the NIF call; speed
  -aead adds 13 bytes of AAD, so there it errs low), and the sentence says
  so;
- timed alone, where the runtime has a call that does only the set-up
  (cryptography's load_der_private_key; Erlang's crypto:privkey_to_pubkey/2
  for RSA keys, crypto_one_time_aead_init/4 on OTP 28+). With a prepared
  call too, both are given: the difference is what a prepared key saves,
  the set-up alone is how much of it the import itself is (the rest is work
  a fresh key adds on first use, which neither row shows alone).

A rule names the calls by id; a scenario that lists none of them gets no
decomposition. Python's AESGCM(key) is not the whole set-up: the first
encrypt on a new object costs more than later ones (measured), so only the
difference says what reusing the object saves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from bridge import stats
from bridge.catalog.scenario import Facts
from bridge.catalog.vocab import RuntimeKind
from bridge.hw import ab
from bridge.report import schema
from bridge.report.findings import Reason, Why, reason

TIMED_ALONE = "timed alone"
BY_DIFFERENCE = "by difference"


@dataclass(frozen=True)
class Rule:
    kind: str  # the scenario kind
    runtime: str  # the runtime kind whose call is split
    whole: str  # the call that repeats the set-up
    alone: str | None  # a call of the same runtime that does only the set-up
    # (runtime kind, call id) of calls that do the work with the set-up done
    # once, in order of preference: the first that ran is taken.
    prepared: tuple[tuple[str, str], ...]
    setup: str  # what the set-up is
    done: str  # what the prepared call does, as a verb: "signs", "seals"


RULES = (
    Rule(
        "sign",
        RuntimeKind.PYTHON,
        "sign+load",
        "load",
        ((RuntimeKind.PYTHON, "sign"),),
        "loading the key from DER",
        "signs",
    ),
    Rule(
        "sign",
        RuntimeKind.ERLANG,
        "sign",
        None,
        ((RuntimeKind.OPENSSL, "speed-sign"),),
        "importing the raw key and setting up the signature",
        "signs",
    ),
    Rule(
        "sign",
        RuntimeKind.ERLANG,
        "verify",
        None,
        ((RuntimeKind.OPENSSL, "speed-verify"),),
        "importing the raw public key and setting up the verification",
        "verifies",
    ),
    Rule(
        "rsa",
        RuntimeKind.PYTHON,
        "sign_pkcs1+load",
        "load",
        ((RuntimeKind.PYTHON, "sign_pkcs1"),),
        "loading the key from DER (cryptography checks an RSA key as it loads it)",
        "signs",
    ),
    Rule(
        "rsa",
        RuntimeKind.ERLANG,
        "sign_pkcs1",
        "import",
        ((RuntimeKind.OPENSSL, "speed-sign"),),
        "importing the raw key",
        "signs",
    ),
    Rule(
        "rsa",
        RuntimeKind.ERLANG,
        "verify_pkcs1",
        None,
        ((RuntimeKind.OPENSSL, "speed-verify"),),
        "importing the raw public key",
        "verifies",
    ),
    Rule(
        "cipher",
        RuntimeKind.PYTHON,
        "cryptography",
        None,
        ((RuntimeKind.PYTHON, "aead-reuse"),),
        "keying a new AEAD object",
        "seals",
    ),
    Rule(
        "cipher",
        RuntimeKind.ERLANG,
        "crypto_one_time",
        "aead_init_only",
        ((RuntimeKind.ERLANG, "aead_init"), (RuntimeKind.OPENSSL, "speed-aead")),
        "keying a new AEAD context",
        "seals",
    ),
)


def decompose(
    scenarios: Sequence[Facts],
    results: Sequence[schema.Result],
    runtimes: Sequence[schema.Runtime],
) -> list[schema.Decomposition]:
    """One record per whole call (hw on) of a rule, per size."""
    info = {rt.id: rt for rt in runtimes if not rt.masked}
    by_key = {r.key: r for r in results}
    out = []
    for sc in scenarios:
        for rule in RULES:
            if rule.kind != sc.kind or rule.whole not in sc.calls.get(rule.runtime, ()):
                continue
            wanted = {(rule.runtime, rule.alone), *rule.prepared}
            listed = {(k, cid) for k, ids in sc.calls.items() for cid in ids}
            if not wanted & listed:
                continue
            for r in results:
                rt = info.get(r.runtime)
                if r.scenario != sc.name or r.call_id != rule.whole or r.hw.masked or not r.ok:
                    continue
                if rt is None or rt.kind != rule.runtime:
                    continue
                out.append(_split(rule, r, rt, by_key, results, info))
    return out


def _split(rule, whole, rt, by_key, results, info) -> schema.Decomposition:
    base = schema.Decomposition(
        scenario=whole.scenario,
        runtime=whole.runtime,
        call_id=whole.call_id,
        call=whole.call,
        size=whole.size,
        setup=rule.setup,
    )
    alone = by_key.get(_key(whole, whole.runtime, rule.alone)) if rule.alone else None
    prepared, kind, why_not = _prepared(rule, whole, rt, by_key, results, info)
    fields: dict = {"total_ns": whole.median()}
    if alone is not None and alone.ok:
        fields.update(alone=alone.call, alone_ns=alone.median())
    if prepared is not None:
        where = " on the same libcrypto" if kind != rule.runtime else ""
        diff, ci = stats.difference_ci(whole.per_op_ns(), prepared.per_op_ns())
        fields.update(
            method=BY_DIFFERENCE,
            setup_ns=diff,
            setup_ci95=ci,
            prepared=_name(prepared, info) + where,
            prepared_ns=prepared.median(),
        )
    elif alone is not None and alone.ok:
        s = alone.summary()
        fields.update(method=TIMED_ALONE, setup_ns=s.median, setup_ci95=s.ci95)
    else:
        failed = alone is not None and alone.reason
        found = [*why_not, *([reason(Why.UNSUPPORTED, reason=alone.reason)] if failed else [])]
        fields["reasons"] = tuple(dict.fromkeys(found)) or (reason(Why.NOTHING_TO_SUBTRACT),)
    return dataclasses.replace(base, **fields)


def _prepared(
    rule, whole, rt, by_key, results, info
) -> tuple[schema.Result | None, str, list[Reason]]:
    """The first prepared call that ran, with its runtime kind; or None and
    why none did."""
    reasons = []
    for kind, call_id in rule.prepared:
        found, why = _prepared_one(
            kind, call_id, whole, rt, by_key=by_key, results=results, info=info
        )
        if found is not None:
            return found, kind, []
        if why is not None:
            reasons.append(why)
    return None, "", reasons


def _prepared_one(kind, call_id, whole, rt, *, by_key, results, info):
    if kind == rt.kind:
        r = by_key.get(_key(whole, whole.runtime, call_id))
        if r is None:
            return None, None
        return (r, None) if r.ok else (None, reason(Why.UNSUPPORTED, reason=r.reason))
    # Another runtime: only one on the same libcrypto will do.
    library = ab.library_of(rt)
    others = [
        r
        for r in results
        if r.scenario == whole.scenario
        and r.call_id == call_id
        and r.size == whole.size
        and not r.hw.masked
        and r.ok
        and r.runtime in info
        and info[r.runtime].kind == kind
    ]
    same = [r for r in others if ab.library_of(info[r.runtime]) == library]
    if same:
        return same[0], None
    if others:
        theirs = ab.library_of(info[others[0].runtime])
        why = reason(
            Why.OTHER_LIBRARY, runtime=others[0].runtime, theirs=_lib(theirs), ours=_lib(library)
        )
        return None, why
    return None, None


def _lib(library) -> str:
    """A library as its name and version ("OpenSSL 3.0.19"); "" when unknown."""
    return "" if library is None else f"{library[0]} {'.'.join(map(str, library[1]))}"


def _key(r: schema.Result, runtime: str, call_id: str) -> schema.CellKey:
    return schema.CellKey(r.scenario, runtime, call_id, r.size, r.hw)


def _name(r: schema.Result, info) -> str:
    kind = info[r.runtime].kind if r.runtime in info else ""
    return r.call if kind == RuntimeKind.OPENSSL else f"{r.runtime} {r.call}"
