"""bridge's vocabulary, written down once: runtime kinds, hardware features,
and the name each runtime gives every digest, cipher and curve.

Scenario files use OpenSSL's names ("sha1", "aes-128-gcm", "p256"); Erlang's
crypto, Python and `openssl speed` each spell them their own way. Every
translation happens through these tables, nowhere else. Pure data: the
Python worker imports this module too.
"""

from __future__ import annotations

from dataclasses import dataclass

RUNTIME_KINDS = ("erlang", "python", "openssl")
KIND_NAMES = {"erlang": "Erlang", "python": "Python", "openssl": "openssl"}

# Hardware features a scenario may name; bridge.hardware knows their masks.
FEATURES = ("sha", "aes", "pclmul", "avx2")
FEATURE_NAMES = {
    "sha": "SHA extensions (SHA-NI / ARMv8 SHA)",
    "aes": "AES instructions (AES-NI / ARMv8 AES)",
    "pclmul": "carry-less multiply (PCLMULQDQ / PMULL)",
    "avx2": "AVX2",
}


@dataclass(frozen=True)
class Digest:
    name: str  # OpenSSL's and the scenario's name, e.g. "sha3-256"
    size: int  # output bytes
    erlang: str  # crypto's atom: SHA-1 is 'sha'
    hashlib: str  # hashlib's constructor name and hashlib.new() name

    @property
    def cryptography(self) -> str:
        """The class name in cryptography.hazmat.primitives.hashes."""
        return self.name.upper().replace("-", "_")


DIGESTS: dict[str, Digest] = {
    d.name: d
    for d in (
        Digest("sha1", 20, "sha", "sha1"),
        Digest("sha224", 28, "sha224", "sha224"),
        Digest("sha256", 32, "sha256", "sha256"),
        Digest("sha384", 48, "sha384", "sha384"),
        Digest("sha512", 64, "sha512", "sha512"),
        Digest("md5", 16, "md5", "md5"),
        Digest("sha3-256", 32, "sha3_256", "sha3_256"),
        Digest("sha3-512", 64, "sha3_512", "sha3_512"),
    )
}


@dataclass(frozen=True)
class Cipher:
    name: str  # OpenSSL's name
    key_bytes: int
    iv_bytes: int  # IV or nonce
    block: int  # sizes must be multiples of this (no padding); 1 for AEAD and stream modes
    aead: bool

    @property
    def erlang(self) -> str:
        """crypto's atom (OTP 22+), e.g. aes_128_gcm."""
        return self.name.replace("-", "_")


CIPHERS: dict[str, Cipher] = {
    c.name: c
    for c in (
        Cipher("aes-128-cbc", 16, 16, 16, aead=False),
        Cipher("aes-256-cbc", 32, 16, 16, aead=False),
        Cipher("aes-128-gcm", 16, 12, 1, aead=True),
        Cipher("aes-256-gcm", 32, 12, 1, aead=True),
    )
}
AEAD_TAG_BYTES = 16


@dataclass(frozen=True)
class Curve:
    name: str  # the scenario's name, e.g. "p256"
    erlang: str  # crypto's named curve atom
    python: str  # the class in cryptography.hazmat.primitives.asymmetric.ec
    speed: str  # the `openssl speed` algorithm


CURVES: dict[str, Curve] = {
    c.name: c
    for c in (
        Curve("p256", "secp256r1", "SECP256R1", "ecdsap256"),
        Curve("p384", "secp384r1", "SECP384R1", "ecdsap384"),
        Curve("p521", "secp521r1", "SECP521R1", "ecdsap521"),
    )
}
