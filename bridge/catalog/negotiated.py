"""What a TLS handshake negotiated, as every runtime reports it: the output
of a tls call.

The output is ASCII `key=value` words in a fixed order, for instance

    protocol=TLSv1.3 suite=TLS_AES_256_GCM_SHA384 group=x25519
    sigalg=ecdsa_secp256r1_sha256 cert=3f0c... resumed=no client_cert=none

- protocol, suite: as OpenSSL names them;
- group: the key exchange's group, IANA's name; `none` in a resumed TLS 1.2
  handshake, which has no key exchange;
- sigalg: the scheme of the server's handshake signature, IANA's name; `none`
  in a resumed handshake, which has no signature;
- cert: the SHA-256 of the certificate the client was given (DER), its first
  16 hex digits;
- resumed: yes or no, as the client saw it;
- client_cert: the SHA-256 of the client's certificate as the server saw it
  (mutual TLS), or `none`.

A runtime leaves out what it cannot see (Erlang's ssl names neither the group
nor the signature scheme); every runtime gives the others (REQUIRED). The
driver checks each word given against what the scenario makes every side
offer (`expected`), so a runtime that negotiated anything else is named, and
runtimes that agree with it agree with each other. Pure: the Python worker
imports this module too.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping

from bridge.catalog import vocab

FIELDS = ("protocol", "suite", "group", "sigalg", "cert", "resumed", "client_cert")
REQUIRED = ("protocol", "suite", "cert", "resumed", "client_cert")
NONE = "none"
YES, NO = "yes", "no"
FINGERPRINT_HEX = 16  # 64 bits of SHA-256: tells the run's few certificates apart


def encode(fields: Mapping[str, str]) -> bytes:
    """The output of a tls call: the fields given, in FIELDS order."""
    return " ".join(f"{k}={fields[k]}" for k in FIELDS if k in fields).encode()


def decode(output: bytes) -> dict[str, str] | None:
    """The fields of an output; None for anything else (a word that is not
    key=value of a known key, a key twice)."""
    try:
        text = output.decode("ascii")
    except UnicodeDecodeError:
        return None
    out: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or key not in FIELDS or key in out or not value:
            return None
        out[key] = value
    return out


def fingerprint(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest()[:FINGERPRINT_HEX]


def pem_fingerprint(pem: str | bytes) -> str:
    """The fingerprint of the first certificate of a PEM text."""
    text = pem.decode("ascii", "replace") if isinstance(pem, bytes) else pem
    begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
    start = text.index(begin) + len(begin)
    body = text[start : text.index(end, start)]
    return fingerprint(base64.b64decode("".join(body.split())))


def expected(
    version: vocab.TlsVersion,
    group: vocab.TlsGroup,
    cert: vocab.TlsCert,
    resumed: bool,
    prints: tuple[str, str],
) -> dict[str, str]:
    """What a handshake must report: `prints` is (the server certificate's
    fingerprint, the client certificate's, or NONE without mutual TLS). A
    resumed handshake has no server signature; in TLS 1.2 no key exchange
    either (TLS 1.3 resumes with a fresh (EC)DHE, psk_dhe_ke)."""
    server, client = prints
    no_exchange = resumed and version.name == "1.2"
    return {
        "protocol": version.protocol,
        "suite": version.suite_for(cert),
        "group": NONE if no_exchange else group.erlang,
        "sigalg": NONE if resumed else cert.sigalg,
        "cert": server,
        "resumed": YES if resumed else NO,
        "client_cert": client,
    }


def agrees(output: bytes, want: Mapping[str, str]) -> bool:
    """Does an output give every required field, and each field it gives as
    `want` has it?"""
    got = decode(output)
    if got is None or any(k not in got for k in REQUIRED):
        return False
    return all(want.get(k) == v for k, v in got.items())
