"""Do all runtimes compute the same bytes? References and checks; pure.

The reference is computed in the driver by Python's standard library
(`cryptography` for ciphers, when it is installed; bridge.crypto.ec for ECDSA and
ECDH, bridge.crypto.rsa for RSA, bridge.crypto.curve25519 for Ed25519 and X25519).
How a call's output is checked is the call's own declaration (calls.Check):
equal to the reference, a signature the driver's ECDSA or RSA-PSS accepts, a
verify call that accepted the driver's signature, random bytes of the right
length that differ between two calls, or a fresh key agreement whose secret
the driver derives again. A call with no output of its own (openssl speed
signs with its own key; openssl enc has no AEAD; a set-up alone) is listed
as unchecked, with the reason the call declares, never as matching.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Callable, Collection, Mapping, Sequence

from bridge.catalog import calls, negotiated, usercode, vocab
from bridge.catalog.inputs import Inputs
from bridge.catalog.scenario import (
    AgreementScenario,
    CipherScenario,
    EddsaScenario,
    ExprScenario,
    FileDigestScenario,
    HashScenario,
    KdfScenario,
    MacScenario,
    RandomScenario,
    RsaScenario,
    Scenario,
    SignatureScenario,
    TlsScenario,
)
from bridge.crypto import curve25519, ec, rsa
from bridge.report import schema

FROM_DRIVER = "the driver (Python standard library / cryptography)"
FROM_AGREEMENT = "agreement between the runtimes (no reference here)"
FROM_EC = "the driver (bridge.ec, pure Python ECDSA)"
SIGNATURE_REFERENCE = (
    "signatures verified by the driver's ECDSA; verify calls must accept the driver's signature"
)
FROM_OWN = "the driver's own checks (bridge.rsa, bridge.curve25519, bridge.ec: pure Python)"
# What each kind's per-call check is, in words (InteropCheck.reference).
PER_CALL_REFERENCE = {
    "random": "two outputs of each call: each as long as asked, and different",
    "eddsa": (
        "signatures equal the driver's (Ed25519 is deterministic); verify calls must accept"
        " the driver's signature"
    ),
    "rsa": (
        "PKCS#1 v1.5 signatures equal the driver's (deterministic); PSS signatures verified"
        " by the driver's RSA; verify calls must accept the driver's signatures; a key"
        " import gives back the driver's modulus"
    ),
    "tls": (
        "what each handshake negotiated is what every side was given: protocol, suite, group"
        " and signature scheme (where the runtime reports them), the server's certificate,"
        " whether it was resumed, and the client's certificate as the server saw it"
    ),
    "agreement": (
        "the shared secret equals the driver's; a fresh key pair's secret is derived again"
        " by the driver from that public key and the peer's private key"
    ),
}

InputsOf = Callable[[Scenario, int], Inputs]


def reference(sc: Scenario, data: Inputs) -> bytes | None:
    """The bytes every runtime must compute, or None without a reference here
    (file digests are computed while the file is written, see bridge.catalog.inputs)."""
    match sc:
        case MacScenario():
            mac = hmac.digest(data.key, data.data, vocab.DIGESTS[sc.digest].hashlib)
            return mac[: sc.mac_bytes] if sc.mac_bytes else mac
        case CipherScenario():
            return _cipher_reference(sc.spec, data)
        case KdfScenario():
            name = vocab.DIGESTS[sc.digest].hashlib
            return hashlib.pbkdf2_hmac(name, data.key, data.iv, data.count, sc.key_bytes)
        case FileDigestScenario():
            return None
        case HashScenario():
            return hashlib.new(vocab.DIGESTS[sc.digest].hashlib, data.data).digest()
    return None


def _cipher_reference(cipher: vocab.Cipher, data: Inputs) -> bytes | None:
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, aead, algorithms, modes
    except ImportError:
        return None
    if cipher.aead:
        return getattr(aead, cipher.python)(data.key).encrypt(data.iv, data.data, None)
    enc = Cipher(algorithms.AES(data.key), modes.CBC(data.iv)).encryptor()
    return enc.update(data.data) + enc.finalize()


def checks(
    scenarios: Sequence[Scenario],
    results: Sequence[schema.Result],
    runtimes: Sequence[schema.Runtime],
    inputs_of: InputsOf,
    file_references: Mapping[tuple[str, int], bytes] | None = None,
) -> list[schema.InteropCheck]:
    """One check per scenario and size that has results."""
    kinds = {rt.id: rt.kind for rt in runtimes}
    out = []
    for sc in scenarios:
        for size in sc.sizes:
            cell = [r for r in results if r.scenario == sc.name and r.size == size and r.ok]
            if not cell:
                continue
            if isinstance(sc, ExprScenario):
                out.append(_first_expression(sc, size, cell))
                continue
            if isinstance(sc, SignatureScenario | EddsaScenario | RsaScenario):
                # A user call in a signature scenario has no bytes to equal:
                # its output is listed, unchecked, beside the table's calls.
                own = [r for r in cell if not usercode.is_user(r.call_id)]
                if own:
                    check = _checked(sc, size, own, kinds, inputs_of)
                    out.append(_with_user_rows(sc, check, cell, unreferenced=True))
                continue
            check = _checked(sc, size, cell, kinds, inputs_of, file_references)
            out.append(_with_user_rows(sc, check, cell))
    return out


def _checked(
    sc: Scenario,
    size: int,
    cell: list[schema.Result],
    kinds: Mapping[str, str],
    inputs_of: InputsOf,
    file_references: Mapping[tuple[str, int], bytes] | None = None,
) -> schema.InteropCheck:
    """The check of one scenario at one size, as the scenario's kind makes it."""
    if isinstance(sc, SignatureScenario):
        check = _signatures(sc, size, cell, kinds, inputs_of(sc, size))
    elif isinstance(
        sc, RandomScenario | EddsaScenario | RsaScenario | AgreementScenario | TlsScenario
    ):
        check = _per_call(sc, size, cell, kinds, inputs_of(sc, size))
    elif isinstance(sc, FileDigestScenario):
        expected = (file_references or {}).get((sc.name, size))
        check = _equal_bytes(sc, size, cell, expected)
    else:
        expected = reference(sc, inputs_of(sc, size))
        check = _equal_bytes(sc, size, cell, expected, parts(cell, kinds))
    return _with_reasons(check, cell, kinds)


NO_USER_REFERENCE = "a user call in a signature scenario: no reference bytes to equal"
FROM_FIRST = "the first expression (bridge time --same-output), which the others must equal"


def _with_user_rows(
    sc: Scenario, check: schema.InteropCheck, cell: list[schema.Result], unreferenced=False
) -> schema.InteropCheck:
    """The user calls of a scenario's check: those asked not to be checked
    say so; in a signature scenario every user output is listed unchecked."""
    user = [r for r in cell if usercode.is_user(r.call_id)]
    if not user:
        return check
    outputs, unchecked = dict(check.outputs), set(check.unchecked or ())
    reasons = dict(check.unchecked_reasons)
    for r in user:
        if unreferenced or not r.output_hex:
            outputs[r.key.output] = r.output_hex
            unchecked.add(r.key.output)
            reasons[r.key.output] = NO_USER_REFERENCE if r.output_hex else usercode.NOT_CHECKED
    return dataclasses.replace(
        check,
        outputs=outputs,
        unchecked=tuple(sorted(unchecked, key=schema.OutputKey.text)),
        unchecked_reasons=reasons,
    )


def _first_expression(sc: Scenario, size: int, cell: list[schema.Result]) -> schema.InteropCheck:
    """bridge time's own scenario has no reference: with --same-output the
    first expression's bytes (in the order given) are the reference, and each
    other expression must give them too."""
    ordered = sorted(cell, key=lambda r: usercode.position(sc, r.call_id))
    outputs = {r.key.output: r.output_hex for r in ordered}
    checked = [r for r in ordered if r.output_hex]
    ref = checked[0].output_hex if checked else ""
    bad = [r.key.output for r in checked if r.output_hex != ref]
    check = schema.InteropCheck(
        scenario=sc.name,
        size=size,
        reference=ref,
        reference_from=FROM_FIRST if checked else FROM_AGREEMENT,
        outputs=outputs,
        unchecked=tuple(
            sorted((r.key.output for r in ordered if not r.output_hex), key=schema.OutputKey.text)
        ),
        match=not bad,
        mismatched=tuple(sorted(bad, key=schema.OutputKey.text)),
    )
    return _with_user_rows(sc, check, cell)


def parts(cell: Sequence[schema.Result], kinds: Mapping[str, str]) -> set[schema.OutputKey]:
    """Outputs of calls that time a part of a call (calls.Check.PART): no MAC
    to compare, so they are listed as unchecked."""
    out = set()
    for r in cell:
        call = calls.lookup(kinds.get(r.runtime, ""), r.call_id)
        if call is not None and call.check is calls.Check.PART:
            out.add(r.key.output)
    return out


def _with_reasons(
    check: schema.InteropCheck, cell: list[schema.Result], kinds: Mapping[str, str]
) -> schema.InteropCheck:
    """The reason each unchecked output's call declares (calls.Call.unchecked)."""
    reasons = {}
    for r in cell:
        call = calls.lookup(kinds.get(r.runtime, ""), r.call_id)
        if not r.output_hex and call is not None and call.unchecked:
            reasons[r.key.output] = call.unchecked
    return dataclasses.replace(check, unchecked_reasons=reasons) if reasons else check


def _per_call(
    sc: Scenario,
    size: int,
    cell: list[schema.Result],
    kinds: Mapping[str, str],
    data: Inputs,
) -> schema.InteropCheck:
    """Kinds whose outputs differ by call (a signature, a verdict byte, a
    modulus) or by design (random bytes, fresh keys): each output is checked
    as its call declares, against what the driver computes itself."""
    outputs = {r.key.output: r.output_hex for r in cell}
    bad = []
    for r in cell:
        if not r.output_hex:
            continue
        call = _call_of(sc, kinds, r)
        if call is None or not _call_ok(sc, call, bytes.fromhex(r.output_hex), data, size):
            bad.append(r.key.output)
    return schema.InteropCheck(
        scenario=sc.name,
        size=size,
        reference=PER_CALL_REFERENCE[sc.kind],
        reference_from=FROM_OWN,
        outputs=outputs,
        unchecked=tuple(
            sorted((k for k, v in outputs.items() if not v), key=schema.OutputKey.text)
        ),
        match=not bad,
        mismatched=tuple(sorted(bad, key=schema.OutputKey.text)),
    )


def _call_of(sc: Scenario, kinds: Mapping[str, str], r: schema.Result) -> calls.Call | None:
    """A result's call; a user call's as its scenario declares it."""
    n = usercode.position(sc, r.call_id)
    if n:
        return usercode.as_call(sc, n)
    return calls.lookup(kinds.get(r.runtime, ""), r.call_id)


def _call_ok(sc: Scenario, call: calls.Call, out: bytes, data: Inputs, size: int) -> bool:
    match call.check:
        case calls.Check.ACCEPTS:
            return out == b"\x01"
        case calls.Check.DISTINCT:
            return len(out) == 2 * size and out[:size] != out[size:]
        case calls.Check.AGREEMENT:
            assert isinstance(sc, AgreementScenario)
            public, secret = out[: sc.spec.public_bytes], out[sc.spec.public_bytes :]
            return secret == shared_secret(sc.curve, data.peer_key, public)
        case calls.Check.SIGNATURE if isinstance(sc, RsaScenario):
            public = (int.from_bytes(data.parts[0], "big"), int.from_bytes(data.parts[1], "big"))
            return rsa.verify_pss(public, sc.digest, data.data, out, sc.salt_bytes)
        case calls.Check.NEGOTIATED:
            assert isinstance(sc, TlsScenario)
            return negotiated.agrees(out, tls_expected(sc, call, data))
        case calls.Check.REFERENCE:
            return out == expected(sc, call, data)
    return False


def tls_expected(sc: TlsScenario, call: calls.Call, data: Inputs) -> dict[str, str]:
    """What a tls call must report (bridge.catalog.negotiated.expected)."""
    assert data.tls is not None
    version = vocab.TLS_VERSIONS[calls.TLS_OPS[call.op]]
    prints = (data.tls.cert_print, data.tls.client_print or negotiated.NONE)
    resumed = call.op in calls.TLS_RESUME_OPS
    return negotiated.expected(version, sc.spec, sc.cert_spec, resumed, prints)


def expected(sc: Scenario, call: calls.Call, data: Inputs) -> bytes | None:
    """The bytes a deterministic call of a per-call kind must give."""
    if isinstance(sc, AgreementScenario):
        return shared_secret(sc.curve, data.key, data.pub)
    if isinstance(sc, RsaScenario) and call.role == "setup":
        return data.parts[1]  # the key import hands back the modulus
    if isinstance(sc, RsaScenario | EddsaScenario) and call.role == "sign":
        return data.sig
    return None


def shared_secret(curve: str, private: bytes, public: bytes) -> bytes | None:
    """X25519 or ECDH on a NIST curve, computed by the driver."""
    if curve == "x25519":
        return curve25519.x25519(private, public) if len(public) == 32 else None
    return ec.shared_secret(curve, private, public)


def _equal_bytes(
    sc: Scenario,
    size: int,
    cell: list[schema.Result],
    expected: bytes | None,
    part: Collection[schema.OutputKey] = (),
) -> schema.InteropCheck:
    outputs = {r.key.output: r.output_hex for r in cell}
    checked = {k: v for k, v in outputs.items() if v and k not in part}
    ref = expected.hex() if expected is not None else next(iter(checked.values()), "")
    mismatched = tuple(
        sorted((k for k, v in checked.items() if v != ref), key=schema.OutputKey.text)
    )
    return schema.InteropCheck(
        scenario=sc.name,
        size=size,
        reference=ref,
        reference_from=FROM_DRIVER if expected is not None else FROM_AGREEMENT,
        outputs=outputs,
        unchecked=tuple(
            sorted((k for k, v in outputs.items() if not v or k in part), key=schema.OutputKey.text)
        ),
        match=not mismatched,
        mismatched=mismatched,
    )


def _signatures(
    sc: SignatureScenario,
    size: int,
    cell: list[schema.Result],
    kinds: Mapping[str, str],
    data: Inputs,
) -> schema.InteropCheck:
    """Signatures are randomised: instead of equal bytes, every signature a
    runtime made must verify in the driver's own ECDSA, and every verify call
    must have accepted the driver's signature."""
    outputs = {r.key.output: r.output_hex for r in cell}
    bad = []
    for r in cell:
        if not r.output_hex:
            continue
        call = calls.lookup(kinds.get(r.runtime, ""), r.call_id)
        check = call.check if call else calls.Check.REFERENCE
        if check is calls.Check.ACCEPTS:
            ok = r.output_hex == "01"
        elif check is calls.Check.SIGNATURE:
            sig = bytes.fromhex(r.output_hex)
            ok = ec.verify(sc.curve, data.pub, sc.digest, data.data, sig)
        else:
            ok = False  # a signature scenario has no reference bytes to equal
        if not ok:
            bad.append(r.key.output)
    return schema.InteropCheck(
        scenario=sc.name,
        size=size,
        reference=SIGNATURE_REFERENCE,
        reference_from=FROM_EC,
        outputs=outputs,
        unchecked=tuple(
            sorted((k for k, v in outputs.items() if not v), key=schema.OutputKey.text)
        ),
        match=not bad,
        mismatched=tuple(sorted(bad, key=schema.OutputKey.text)),
    )


def mismatch_errors(
    checks_: Sequence[schema.InteropCheck], scenarios: Sequence[Scenario] = ()
) -> list[schema.RunError]:
    """A check that failed is a run error too: exit status 1. A user call is
    named by its expression too."""
    out = []
    titles = {(sc.name, usercode.call_id(uc)): uc.title for sc in scenarios for uc in sc.user_calls}
    for check in checks_:
        if check.match:
            continue
        names = ", ".join(
            k.text()
            + (
                f" ({titles[check.scenario, k.call_id]})"
                if (check.scenario, k.call_id) in titles
                else ""
            )
            for k in check.mismatched
        )
        out.append(
            schema.RunError(
                runtime=names,
                kind="mismatch",
                message=f"{check.scenario} at {check.size} B: output differs"
                f" from the reference in {names}",
            )
        )
    return out
