"""The closed set of calls bridge can time, per runtime kind.

A scenario file names calls from this table and nothing else: it cannot make
any runtime run anything that is not listed here. Each entry says which
operation kinds it serves, what one timed operation includes (its
*semantics*, shown beside every number so unlike things are not compared
silently), and how a user would write it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ONE_SHOT_MAC = "one-shot: key set up on every call"
REUSED_KEY = "reused key: key schedule once, keyed state copied per call"
SPEED_HMAC = "reused context: openssl speed sets the key once, then re-inits per call"
ONE_SHOT_HASH = "one-shot: new digest context per call"
SPEED_DIGEST = "one-shot EVP_Digest per call, digest fetched once"
SPEED_PLAIN = (
    "openssl speed without -evp: the digest's own (pre-EVP) code path in 1.x;"
    " in 3.x the same EVP path as -evp"
)
FILE_STREAM = "streaming digest of a file in the page cache: reads plus hashing, one file per call"
FILE_PROCESS = "whole process: start-up, reading the file and hashing (like `time openssl dgst`)"
SIGN = "one call: hash the message and sign it (a fresh random nonce every time)"
VERIFY = "one call: hash the message and verify a signature made elsewhere"
SPEED_SIGN = "openssl speed: signs a fixed 20-byte digest with its own key (no message hashing)"
SPEED_VERIFY = "openssl speed: verifies its own signature of a fixed digest (no message hashing)"
ONE_SHOT_CIPHER = "one-shot: key schedule and cipher context set up on every call"
SPEED_CIPHER = (
    "openssl speed -evp: the cipher is keyed once and each call is one update"
    " (AEAD modes re-initialise per call)"
)
STREAM_MAC = (
    "streaming API per message: mac_init + mac_update + mac_finalN; crypto can neither reuse"
    " a keyed state after mac_finalN nor copy one, so the key is set up every time"
)

# Erlang's crypto names SHA-1 'sha'; everything else matches OpenSSL's names.
ERLANG_DIGEST = {"sha1": "sha", "sha3-256": "sha3_256", "sha3-512": "sha3_512"}


@dataclass(frozen=True)
class Call:
    runtime: str  # erlang | python | openssl
    id: str  # what a scenario file writes
    kinds: frozenset[str]  # scenario kinds it serves
    worker_call: str  # the name sent to the worker (or the openssl mode)
    semantics: str
    label: Callable[[Any, str], str]  # (scenario, api reported by the worker) -> text
    semantics_by_kind: tuple[tuple[str, str], ...] = ()  # where one call id serves two kinds

    def semantics_for(self, sc: Any) -> str:
        return dict(self.semantics_by_kind).get(sc.kind, self.semantics)


def _erl_digest(sc: Any) -> str:
    return ERLANG_DIGEST.get(sc.digest, sc.digest.replace("-", "_"))


def _erl_mac_label(sc: Any, api: str) -> str:
    d, n = _erl_digest(sc), sc.mac_bytes
    # Before a worker has said which API this OTP has, show the modern one.
    api = api or ("crypto:macN/5" if n else "crypto:mac/4")
    return {
        "crypto:macN/5": f"crypto:macN(hmac, {d}, Key, Data, {n})",
        "crypto:mac/4": f"crypto:mac(hmac, {d}, Key, Data)",
        "crypto:hmac/4": f"crypto:hmac({d}, Key, Data, {n})",
        "crypto:hmac/3": f"crypto:hmac({d}, Key, Data)",
    }.get(api, api or "crypto:macN")


def _erl_stream_label(sc: Any, api: str) -> str:
    d, n = _erl_digest(sc), sc.mac_bytes
    final = f"crypto:mac_finalN(S, {n})" if n else "crypto:mac_final(S)"
    return f"S = crypto:mac_init(hmac, {d}, Key), crypto:mac_update(S, Data), {final}"


def _erl_cipher_label(sc: Any, api: str) -> str:
    atom = sc.cipher.replace("-", "_")
    if api == "crypto:block_encrypt/4":
        return f"crypto:block_encrypt({atom}, Key, IV, Data)"
    if sc.cipher.endswith("gcm"):
        return f"crypto:crypto_one_time_aead({atom}, Key, IV, Data, <<>>, 16, true)"
    return f"crypto:crypto_one_time({atom}, Key, IV, Data, true)"


def _py_cipher_label(sc: Any, api: str) -> str:
    if sc.cipher.endswith("gcm"):
        return "AESGCM(key).encrypt(nonce, data, None)"
    return "Cipher(AES(key), CBC(iv)).encryptor() .update(data) + .finalize()"


def _curve(sc: Any) -> str:
    return {"p256": "secp256r1", "p384": "secp384r1", "p521": "secp521r1"}[sc.curve]


def _cut(sc: Any) -> str:
    return f"[:{sc.mac_bytes}]" if sc.mac_bytes else ""


CALLS: dict[tuple[str, str], Call] = {
    (c.runtime, c.id): c
    for c in [
        Call("erlang", "macN", frozenset({"mac"}), "mac", ONE_SHOT_MAC, _erl_mac_label),
        Call(
            "erlang",
            "mac_init",
            frozenset({"mac"}),
            "mac_stream",
            STREAM_MAC,
            _erl_stream_label,
        ),
        Call(
            "erlang",
            "hash",
            frozenset({"hash"}),
            "hash",
            ONE_SHOT_HASH,
            lambda sc, api: f"crypto:hash({_erl_digest(sc)}, Data)",
        ),
        Call(
            "python",
            "hmac.digest",
            frozenset({"mac"}),
            "hmac.digest",
            ONE_SHOT_MAC,
            lambda sc, api: f"hmac.digest(key, data, '{sc.digest}'){_cut(sc)}",
        ),
        Call(
            "python",
            "hmac.new+copy",
            frozenset({"mac"}),
            "hmac.new+copy",
            REUSED_KEY,
            lambda sc, api: (
                f"hmac.new(key, digestmod='{sc.digest}').copy() .update(data) .digest(){_cut(sc)}"
            ),
        ),
        Call(
            "python",
            "hashlib",
            frozenset({"hash"}),
            "hashlib",
            ONE_SHOT_HASH,
            lambda sc, api: f"hashlib.{sc.digest.replace('-', '_')}(data).digest()",
        ),
        Call(
            "openssl",
            "speed",
            frozenset({"mac", "hash"}),
            "speed",
            SPEED_HMAC,
            lambda sc, api: (
                f"openssl speed -hmac {sc.digest}"
                if sc.kind == "mac"
                else f"openssl speed {sc.digest}"
            ),
            (("hash", SPEED_PLAIN),),
        ),
        Call(
            "openssl",
            "speed-evp",
            frozenset({"hash", "cipher"}),
            "speed-evp",
            SPEED_DIGEST,
            lambda sc, api: f"openssl speed -evp {sc.cipher or sc.digest}",
            (("cipher", SPEED_CIPHER),),
        ),
        Call(
            "erlang",
            "sign",
            frozenset({"sign"}),
            "sign",
            SIGN,
            lambda sc, api: f"crypto:sign(ecdsa, {sc.digest}, Msg, [Priv, {_curve(sc)}])",
        ),
        Call(
            "erlang",
            "verify",
            frozenset({"sign"}),
            "verify",
            VERIFY,
            lambda sc, api: f"crypto:verify(ecdsa, {sc.digest}, Msg, Sig, [Pub, {_curve(sc)}])",
        ),
        Call(
            "python",
            "sign",
            frozenset({"sign"}),
            "ecdsa_sign",
            SIGN,
            lambda sc, api: f"key.sign(msg, ECDSA({sc.digest.upper()}()))",
        ),
        Call(
            "python",
            "verify",
            frozenset({"sign"}),
            "ecdsa_verify",
            VERIFY,
            lambda sc, api: f"pub.verify(sig, msg, ECDSA({sc.digest.upper()}()))",
        ),
        Call(
            "openssl",
            "speed-sign",
            frozenset({"sign"}),
            "speed-sign",
            SPEED_SIGN,
            lambda sc, api: f"openssl speed ecdsa{sc.curve} (sign)",
        ),
        Call(
            "openssl",
            "speed-verify",
            frozenset({"sign"}),
            "speed-verify",
            SPEED_VERIFY,
            lambda sc, api: f"openssl speed ecdsa{sc.curve} (verify)",
        ),
        Call(
            "erlang",
            "hash_file",
            frozenset({"file-digest"}),
            "hash_file",
            FILE_STREAM,
            lambda sc, api: (
                f"crypto:hash_init({_erl_digest(sc)}) + hash_update per 64 KiB"
                " file:read + hash_final"
            ),
        ),
        Call(
            "python",
            "file_digest",
            frozenset({"file-digest"}),
            "file_digest",
            FILE_STREAM,
            lambda sc, api: f"hashlib.file_digest(f, '{sc.digest}')",
        ),
        Call(
            "openssl",
            "dgst",
            frozenset({"file-digest"}),
            "dgst",
            FILE_PROCESS,
            lambda sc, api: f"openssl dgst -{sc.digest} FILE",
        ),
        Call(
            "erlang",
            "crypto_one_time",
            frozenset({"cipher"}),
            "cipher",
            ONE_SHOT_CIPHER,
            _erl_cipher_label,
        ),
        Call(
            "python",
            "cryptography",
            frozenset({"cipher"}),
            "cryptography",
            ONE_SHOT_CIPHER,
            _py_cipher_label,
        ),
    ]
}

RUNTIME_KINDS = ("erlang", "python", "openssl")


def lookup(runtime: str, call_id: str) -> Call | None:
    return CALLS.get((runtime, call_id))


def known(runtime: str) -> list[str]:
    return sorted(cid for (rt, cid) in CALLS if rt == runtime)
