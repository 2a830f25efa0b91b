"""RSA in pure Python: the driver's independent reference for RSA scenarios.

It derives a key pair from the run's seed, signs with PKCS#1 v1.5 (the
bytes every runtime's PKCS#1 signature must equal: the scheme is
deterministic), signs with PSS using a seeded salt (for the verify calls),
and verifies the PSS signatures the runtimes make (PSS is randomised, so
those can only be checked by verifying them). A reference, not production
crypto: nothing here is constant-time.

The key is derived, not shipped: p and q are the first primes found by
scanning SHAKE-256 output over a label that names the seed and scenario, so
a report's key can be regenerated from the report alone, like every other
input. The search is deterministic (Miller-Rabin with bases taken from the
same stream) and takes a fraction of a second per key in CPython (more on a
busy machine), so keys are cached per label.

Sources: RFC 8017 §8.2 (RSASSA-PKCS1-v1_5), §8.1 and §9.1 (RSASSA-PSS,
EMSA-PSS with MGF1), and FIPS 186-4 App. C.3 (Miller-Rabin).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

E = 65537
# DER DigestInfo prefixes (RFC 8017 §9.2 note 1), by hashlib name.
DIGEST_INFO = {
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha384": bytes.fromhex("3041300d060960864801650304020205000430"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}
# Miller-Rabin rounds per candidate that passed trial division. The
# candidates are random, for which the chance that a composite passes even
# one round is tiny (Damgard, Landrock and Pomerance 1993); 16 rounds keep it
# far below 2^-64, and a bad key would still show in the driver's own
# signature checks.
MR_ROUNDS = 16
_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % d for d in range(2, int(p**0.5) + 1))]


@dataclass(frozen=True)
class Key:
    n: int
    e: int
    d: int
    p: int
    q: int

    @property
    def size(self) -> int:
        return (self.n.bit_length() + 7) // 8

    @property
    def dp(self) -> int:
        return self.d % (self.p - 1)

    @property
    def dq(self) -> int:
        return self.d % (self.q - 1)

    @property
    def qinv(self) -> int:
        return pow(self.q, -1, self.p)

    def parts(self) -> tuple[bytes, ...]:
        """e, n, d, p, q, d mod (p-1), d mod (q-1), q^-1 mod p as big-endian
        bytes: Erlang crypto's private key list, in its order."""
        values = (self.e, self.n, self.d, self.p, self.q, self.dp, self.dq, self.qinv)
        return tuple(_bytes(v) for v in values)

    def public(self) -> tuple[bytes, bytes]:
        return _bytes(self.e), _bytes(self.n)


def _bytes(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


class _Stream:
    """SHAKE-256 output over a label, read 'size' bytes at a time."""

    def __init__(self, label: bytes) -> None:
        self.label, self.counter = label, 0

    def take(self, size: int) -> bytes:
        self.counter += 1
        return hashlib.shake_256(self.label + b" %d" % self.counter).digest(size)


def _probable_prime(n: int, stream: _Stream) -> bool:
    if any(n % p == 0 for p in _SMALL_PRIMES):
        return n in _SMALL_PRIMES
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for _ in range(MR_ROUNDS):
        a = 2 + int.from_bytes(stream.take(32), "big") % (n - 3)
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(bits: int, stream: _Stream) -> int:
    while True:
        # Top two bits set, so that p*q has exactly 2*bits bits; odd.
        c = int.from_bytes(stream.take(bits // 8), "big") | (3 << (bits - 2)) | 1
        if (c - 1) % E and _probable_prime(c, stream):
            return c


@functools.lru_cache(maxsize=8)
def derive_key(label: bytes, bits: int = 2048) -> Key:
    """A key pair from SHAKE256(label || " <counter>") output (see the module)."""
    stream = _Stream(label)
    while True:
        p, q = _prime(bits // 2, stream), _prime(bits // 2, stream)
        if p == q:
            continue
        p, q = max(p, q), min(p, q)
        d = pow(E, -1, (p - 1) * (q - 1))
        return Key(n=p * q, e=E, d=d, p=p, q=q)


def _private(key: Key, m: int) -> int:
    # CRT (RFC 8017 §5.1.2).
    m1, m2 = pow(m, key.dp, key.p), pow(m, key.dq, key.q)
    h = key.qinv * (m1 - m2) % key.p
    return m2 + h * key.q


def sign_pkcs1(key: Key, digest: str, message: bytes) -> bytes:
    """RSASSA-PKCS1-v1_5 (RFC 8017 §8.2.1): deterministic."""
    t = DIGEST_INFO[digest] + hashlib.new(digest, message).digest()
    em = b"\x00\x01" + b"\xff" * (key.size - len(t) - 3) + b"\x00" + t
    return _private(key, int.from_bytes(em, "big")).to_bytes(key.size, "big")


def verify_pkcs1(public: tuple[int, int], digest: str, message: bytes, sig: bytes) -> bool:
    e, n = public
    size = (n.bit_length() + 7) // 8
    if len(sig) != size:
        return False
    em = pow(int.from_bytes(sig, "big"), e, n).to_bytes(size, "big")
    t = DIGEST_INFO[digest] + hashlib.new(digest, message).digest()
    return em == b"\x00\x01" + b"\xff" * (size - len(t) - 3) + b"\x00" + t


def _mgf1(digest: str, seed: bytes, length: int) -> bytes:
    out, counter = b"", 0
    while len(out) < length:
        out += hashlib.new(digest, seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return out[:length]


def sign_pss(key: Key, digest: str, message: bytes, salt: bytes) -> bytes:
    """RSASSA-PSS (RFC 8017 §8.1.1, EMSA-PSS §9.1.1) with MGF1 over the same
    digest and the given salt (seeded, so the driver's signature is
    reproducible; a runtime draws its salt at random)."""
    em_bits = key.n.bit_length() - 1
    em_len = (em_bits + 7) // 8
    m_hash = hashlib.new(digest, message).digest()
    h = hashlib.new(digest, b"\x00" * 8 + m_hash + salt).digest()
    db = b"\x00" * (em_len - len(salt) - len(h) - 2) + b"\x01" + salt
    masked = bytes(a ^ b for a, b in zip(db, _mgf1(digest, h, len(db)), strict=True))
    masked = bytes([masked[0] & (0xFF >> (8 * em_len - em_bits))]) + masked[1:]
    em = masked + h + b"\xbc"
    return _private(key, int.from_bytes(em, "big")).to_bytes(key.size, "big")


def verify_pss(
    public: tuple[int, int], digest: str, message: bytes, sig: bytes, salt_len: int
) -> bool:
    """EMSA-PSS-VERIFY (RFC 8017 §9.1.2) with the salt length the scenario fixes."""
    e, n = public
    size = (n.bit_length() + 7) // 8
    if len(sig) != size or int.from_bytes(sig, "big") >= n:
        return False
    em_bits = n.bit_length() - 1
    em_len = (em_bits + 7) // 8
    em = pow(int.from_bytes(sig, "big"), e, n).to_bytes(size, "big")[-em_len:]
    h_len = hashlib.new(digest).digest_size
    if em[-1] != 0xBC or em_len < h_len + salt_len + 2:
        return False
    masked, h = em[: em_len - h_len - 1], em[em_len - h_len - 1 : -1]
    top = 0xFF >> (8 * em_len - em_bits)
    if masked[0] & ~top & 0xFF:
        return False
    db = bytes(a ^ b for a, b in zip(masked, _mgf1(digest, h, len(masked)), strict=True))
    db = bytes([db[0] & top]) + db[1:]
    pad = em_len - h_len - salt_len - 2
    if db[:pad] != b"\x00" * pad or db[pad] != 1:
        return False
    salt = db[pad + 1 :]
    m_hash = hashlib.new(digest, message).digest()
    return hashlib.new(digest, b"\x00" * 8 + m_hash + salt).digest() == h
