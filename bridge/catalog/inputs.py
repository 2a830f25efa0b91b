"""Byte-identical inputs for every runtime, generated from a recorded seed.

Keys and messages are SHAKE-256 output over a label that names the seed, the
scenario and the role, so anyone can regenerate them from the report without
bridge:

    key  = SHAKE256(b"bridge/1 seed=<seed> scenario=<name> key").digest(<key_bytes>)
    data = SHAKE256(b"bridge/1 seed=<seed> scenario=<name> data size=<n>").digest(<n>)

(The report also carries the hex of inputs up to 4 KiB.)

Keys of the public-key scenarios come from the same kind of label: ECDSA and
P-256 scalars reduced into [1, n-1], Ed25519 and X25519 private keys as 32
bytes, and an RSA key pair whose primes are searched for in SHAKE-256 output
(bridge.crypto.rsa.derive_key), so every key can be regenerated from the report.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from bridge.catalog import vocab
from bridge.catalog.scenario import (
    AgreementScenario,
    CipherScenario,
    EddsaScenario,
    ExprScenario,
    FileDigestScenario,
    KdfScenario,
    MacScenario,
    RandomScenario,
    RsaScenario,
    Scenario,
    SignatureScenario,
    TlsScenario,
)
from bridge.crypto import curve25519, ec, rsa

EXPR_KEY_BYTES, EXPR_IV_BYTES = 32, 16  # bridge time's Key and IV
INLINE_LIMIT = 4096  # inputs up to this size are written into the report


@dataclass(frozen=True)
class TlsFiles:
    """One TLS scenario's certificates, PEM files made at run time in a
    private directory (bridge.system.tlscert): the server's certificate, its
    key and the CA certificate that signed it, which clients trust; with
    mutual TLS the client's three too, whose CA the server trusts. `*_print`:
    each certificate's fingerprint (bridge.catalog.negotiated)."""

    cert: str
    key: str
    ca: str
    cert_print: str
    client_cert: str = ""
    client_key: str = ""
    client_ca: str = ""
    client_print: str = ""


# (a private directory, certificate type, mutual TLS) -> the files: bridge.system.tlscert.make.
CertMaker = Callable[[str, str, bool], TlsFiles]


@dataclass(frozen=True)
class Inputs:
    key: bytes
    data: bytes
    iv: bytes = b""
    path: str = ""  # file-digest: the generated file (data stays empty)
    file_size: int = 0
    pub: bytes = b""  # sign: the public point; key holds the private scalar
    sig: bytes = b""  # sign: the driver's signature of data, for verify calls
    # random: bytes asked for; kdf: iterations (the cell's size in both).
    count: int = 0
    parts: tuple[bytes, ...] = ()  # rsa: e, n, d, p, q, dp, dq, qinv (crypto's order)
    sig_pss: bytes = b""  # rsa: the driver's PSS signature, for the PSS verify calls
    # agreement: the peer's private key. It stays in the driver, which checks
    # the secrets of fresh key pairs with it; `pub` is the peer's public key.
    peer_key: bytes = b""
    # tls: the certificates (PEM files made at run time in a private
    # directory, bridge.system.tlscert); every runtime reads them.
    tls: TlsFiles | None = None

    @property
    def size(self) -> int:
        """A cell's size: the file's, the count's (random, kdf), or the message's."""
        if self.path:
            return self.file_size
        return self.count or len(self.data)

    def wire(self) -> dict[str, bytes | str | int | list[bytes]]:
        """What a worker receives of the inputs (each operation reads its own)."""
        out: dict[str, bytes | str | int | list[bytes]] = {
            "data": self.data,
            "key": self.key,
            "iv": self.iv,
            "path": self.path,
            "pub": self.pub,
            "sig": self.sig,
        }
        if self.count:
            out["count"] = self.count
        if self.parts:
            out["parts"] = list(self.parts)
        if self.sig_pss:
            out["sig_pss"] = self.sig_pss
        if self.tls is not None:
            t = self.tls
            out |= {"cert": t.cert, "cert_key": t.key, "ca": t.ca}
            if t.client_cert:
                out |= {"client_cert": t.client_cert, "client_key": t.client_key}
                out["client_ca"] = t.client_ca
        return out

    def to_json(self) -> dict | None:
        if self.path:
            return {"file": "generated (see bridge.inputs.write_file)", "size": self.file_size}
        if len(self.data) > INLINE_LIMIT:
            return None
        d = {"key_hex": self.key.hex(), "data_hex": self.data.hex()}
        for name in ("iv", "pub", "sig", "sig_pss", "peer_key"):
            if getattr(self, name):
                d[f"{name}_hex"] = getattr(self, name).hex()
        if self.count:
            d["count"] = self.count
        if self.tls is not None:
            d.update(tls_json(self.tls))
        if self.parts:
            d["key_parts_hex"] = [p.hex() for p in self.parts]
        return d


def tls_json(files: TlsFiles) -> dict[str, str]:
    """What a report says of a TLS scenario's certificates: what they are and
    their fingerprints (the files go with the run)."""
    out = {"cert": "for localhost, signed by a CA of its key's type, made at run time"}
    out["cert_sha256"] = files.cert_print
    if files.client_cert:
        out["client_cert_sha256"] = files.client_print
    return out


def derive(seed: int, scenario: str, role: str, size: int) -> bytes:
    label = f"bridge/1 seed={seed} scenario={scenario} {role}".encode()
    return hashlib.shake_256(label).digest(size)


def make(seed: int, scenario: str, key_bytes: int, size: int, iv_bytes: int = 0) -> Inputs:
    key = derive(seed, scenario, "key", key_bytes) if key_bytes else b""
    iv = derive(seed, scenario, "iv", iv_bytes) if iv_bytes else b""
    data = derive(seed, scenario, f"data size={size}", size)
    return Inputs(key=key, data=data, iv=iv)


def for_scenario(seed: int, sc: Scenario, size: int) -> Inputs:
    """The inputs of one cell: ciphers take their key and IV length from the
    cipher, MACs from the scenario; hashes have no key."""
    if isinstance(sc, CipherScenario):
        return make(seed, sc.name, sc.spec.key_bytes, size, sc.spec.iv_bytes)
    if isinstance(sc, SignatureScenario):
        return _ecdsa(seed, sc, size)
    if isinstance(sc, RandomScenario):
        return Inputs(key=b"", data=b"", count=size)
    if isinstance(sc, KdfScenario):
        # key = the password, iv = the salt; the size is the iteration count.
        password = derive(seed, sc.name, "password", 16)
        salt = derive(seed, sc.name, "salt", sc.salt_bytes)
        return Inputs(key=password, data=b"", iv=salt, count=size)
    if isinstance(sc, EddsaScenario):
        return _eddsa(seed, sc, size)
    if isinstance(sc, RsaScenario):
        return _rsa(seed, sc, size)
    if isinstance(sc, AgreementScenario):
        return _agreement(seed, sc)
    if isinstance(sc, ExprScenario):
        # bridge time: Data at the size, a 32-byte Key and a 16-byte IV; Count = Size.
        made = make(seed, sc.name, EXPR_KEY_BYTES, size, EXPR_IV_BYTES)
        return Inputs(key=made.key, data=made.data, iv=made.iv, count=size)
    return make(seed, sc.name, sc.key_bytes if isinstance(sc, MacScenario) else 0, size)


def _ecdsa(seed: int, sc: SignatureScenario, size: int) -> Inputs:
    """A key pair from the seed, and the driver's own signature of the message
    (nonce from the seed too, so the whole report is reproducible)."""
    c = ec.CURVES[sc.curve]
    d = ec.private_scalar(sc.curve, derive(seed, sc.name, "ecdsa key", c.size + 8))
    data = derive(seed, sc.name, f"data size={size}", size)
    k = derive(seed, sc.name, f"ecdsa nonce size={size}", c.size + 8)
    return Inputs(
        key=d.to_bytes(c.size, "big"),
        data=data,
        pub=ec.public_key(sc.curve, d),
        sig=ec.sign(sc.curve, d, sc.digest, data, k),
    )


def _eddsa(seed: int, sc: EddsaScenario, size: int) -> Inputs:
    """An Ed25519 key from the seed, and the driver's signature (deterministic,
    RFC 8032: every runtime's signature must be these bytes)."""
    key = derive(seed, sc.name, "ed25519 key", 32)
    data = derive(seed, sc.name, f"data size={size}", size)
    return Inputs(
        key=key,
        data=data,
        pub=curve25519.ed25519_public(key),
        sig=curve25519.ed25519_sign(key, data),
    )


def rsa_key(seed: int, sc: RsaScenario) -> rsa.Key:
    return rsa.derive_key(f"bridge/1 seed={seed} scenario={sc.name} rsa key".encode(), sc.bits)


def _rsa(seed: int, sc: RsaScenario, size: int) -> Inputs:
    """The key pair (bridge.crypto.rsa.derive_key), and the driver's PKCS#1 v1.5 and
    PSS signatures of the message (the PSS salt from the seed too)."""
    key = rsa_key(seed, sc)
    data = derive(seed, sc.name, f"data size={size}", size)
    salt = derive(seed, sc.name, f"pss salt size={size}", sc.salt_bytes)
    return Inputs(
        key=b"",
        data=data,
        parts=key.parts(),
        sig=rsa.sign_pkcs1(key, sc.digest, data),
        sig_pss=rsa.sign_pss(key, sc.digest, data, salt),
    )


def _agreement(seed: int, sc: AgreementScenario) -> Inputs:
    """This side's private key, and the peer's key pair: the runtimes get the
    peer's public key (pub); its private key stays in the driver (peer_key)."""
    own, peer = agreement_private(seed, sc, "own"), agreement_private(seed, sc, "peer")
    return Inputs(
        key=own,
        data=b"",
        pub=agreement_public(sc.curve, peer),
        peer_key=peer,
        count=sc.spec.secret_bytes,
    )


def agreement_private(seed: int, sc: AgreementScenario, who: str) -> bytes:
    if sc.curve == "x25519":
        return derive(seed, sc.name, f"x25519 {who} key", 32)
    c = ec.CURVES[sc.curve]
    d = ec.private_scalar(sc.curve, derive(seed, sc.name, f"ecdh {who} key", c.size + 8))
    return d.to_bytes(c.size, "big")


def agreement_public(curve: str, private: bytes) -> bytes:
    if curve == "x25519":
        return curve25519.x25519_public(private)
    return ec.public_key(curve, int.from_bytes(private, "big"))


FILE_CHUNK = 1 << 20


def write_file(
    seed: int, scenario: str, size: int, directory: str, digest: str
) -> tuple[str, bytes]:
    """The file of a file-digest cell, and its digest computed while writing.

    Content: chunk i (1 MiB, the last one cut) is
    SHAKE256(b"bridge/1 seed=<seed> scenario=<name> file chunk=<i>").digest(1 MiB).
    """
    path = os.path.join(directory, f"{scenario}-{size}.bin")
    h = hashlib.new(vocab.DIGESTS[digest].hashlib)
    with open(path, "wb") as f:
        written, i = 0, 0
        while written < size:
            n = min(FILE_CHUNK, size - written)
            chunk = derive(seed, scenario, f"file chunk={i}", FILE_CHUNK)[:n]
            f.write(chunk)
            h.update(chunk)
            written, i = written + n, i + 1
    return path, h.digest()


class RunInputs:
    """The inputs of every (scenario, size), made once and shared by all
    runtimes. File-digest files go to a private directory that goes away
    with the run; their digests are computed while they are written."""

    def __init__(self, seed: int, make_cert: CertMaker | None = None) -> None:
        self.seed = seed
        self.make_cert = make_cert
        self.file_references: dict[tuple[str, int], bytes] = {}
        self._made: dict[tuple[str, int], Inputs] = {}
        self._certs: dict[tuple[str, bool], TlsFiles] = {}
        self._dir: tempfile.TemporaryDirectory | None = None

    def __call__(self, sc: Scenario, size: int) -> Inputs:
        key = (sc.name, size)
        if key not in self._made:
            self._made[key] = self._make(sc, size)
        return self._made[key]

    def _make(self, sc: Scenario, size: int) -> Inputs:
        if isinstance(sc, TlsScenario):
            return self._tls(sc)
        if not isinstance(sc, FileDigestScenario):
            return for_scenario(self.seed, sc, size)
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="bridge-files-")
        path, digest = write_file(self.seed, sc.name, size, self._dir.name, sc.digest)
        self.file_references[(sc.name, size)] = digest
        return Inputs(key=b"", data=b"", path=path, file_size=size)

    def _tls(self, sc: TlsScenario) -> Inputs:
        """The certificates of a TLS scenario, made once per certificate type
        and mutual TLS in the run, in the private directory (0700) that goes
        away with the run."""
        if self.make_cert is None:
            raise ValueError("a TLS scenario needs RunInputs(make_cert=...)")
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="bridge-files-")
        which = (sc.cert, sc.client_cert)
        if which not in self._certs:
            self._certs[which] = self.make_cert(self._dir.name, *which)
        return Inputs(key=b"", data=b"", count=1, tls=self._certs[which])

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
