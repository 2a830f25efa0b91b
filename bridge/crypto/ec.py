"""Textbook ECDSA on the NIST prime curves, in pure Python: the driver's
independent reference for signature scenarios.

It derives the key pair from the run's seed, makes the signature every
runtime's *verify* call checks, and verifies every signature a runtime's *sign*
call makes. ECDSA signatures are randomised, so outputs cannot be compared
byte for byte; a signature checked by a second implementation is the
cross-check instead. This is a reference, not production crypto: it is not
constant-time and needs no speed.

Curve parameters: SEC 2 v2 / FIPS 186-4 (P-256, P-384, P-521), a = -3.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Curve:
    name: str  # OpenSSL / bridge name: p256
    erlang: str  # crypto's curve atom
    p: int
    b: int
    gx: int
    gy: int
    n: int

    @property
    def size(self) -> int:
        return (self.p.bit_length() + 7) // 8


CURVES = {
    "p256": Curve(
        "p256",
        "secp256r1",
        p=0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF,
        b=0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
        gx=0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
        gy=0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
        n=0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    ),
    "p384": Curve(
        "p384",
        "secp384r1",
        p=int(
            "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFF",
            16,
        ),
        b=int(
            "B3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875AC656398D8A2ED19D2A85C8EDD3EC2AEF",
            16,
        ),
        gx=int(
            "AA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760AB7",
            16,
        ),
        gy=int(
            "3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F",
            16,
        ),
        n=int(
            "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973",
            16,
        ),
    ),
    "p521": Curve(
        "p521",
        "secp521r1",
        p=(1 << 521) - 1,
        b=int(
            "0051953EB9618E1C9A1F929A21A0B68540EEA2DA725B99B315F3B8B489918EF109E156193951EC7E937B1652C0BD3BB1BF073573DF883D2C34F1EF451FD46B503F00",
            16,
        ),
        gx=int(
            "00C6858E06B70404E9CD9E3ECB662395B4429C648139053FB521F828AF606B4D3DBAA14B5E77EFE75928FE1DC127A2FFA8DE3348B3C1856A429BF97E7E31C2E5BD66",
            16,
        ),
        gy=int(
            "011839296A789A3BC0045C8A5FB42C7D1BD998F54449579B446817AFBD17273E662C97EE72995EF42640C550B9013FAD0761353C7086A272C24088BE94769FD16650",
            16,
        ),
        n=int(
            "01FF"
            + "FFFFFFFF" * 7
            + "FFFFFFFA51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409",
            16,
        ),
    ),
}

Point = tuple[int, int] | None  # None is the point at infinity


def _add(c: Curve, a: Point, b: Point) -> Point:
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2 and (y1 + y2) % c.p == 0:
        return None
    if a == b:
        lam = (3 * x1 * x1 - 3) * pow(2 * y1, -1, c.p) % c.p  # a = -3
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, c.p) % c.p
    x3 = (lam * lam - x1 - x2) % c.p
    return x3, (lam * (x1 - x3) - y1) % c.p


def _mul(c: Curve, k: int, point: Point) -> Point:
    result: Point = None
    while k:
        if k & 1:
            result = _add(c, result, point)
        point = _add(c, point, point)
        k >>= 1
    return result


def public_key(curve: str, d: int) -> bytes:
    """The uncompressed public point 04 || X || Y."""
    c = CURVES[curve]
    x, y = _mul(c, d, (c.gx, c.gy))
    return b"\x04" + x.to_bytes(c.size, "big") + y.to_bytes(c.size, "big")


def private_scalar(curve: str, material: bytes) -> int:
    """A private key in [1, n-1] from seeded bytes."""
    n = CURVES[curve].n
    return int.from_bytes(material, "big") % (n - 1) + 1


def _z(c: Curve, digest: str, message: bytes) -> int:
    h = hashlib.new(digest.replace("-", "_"), message).digest()
    z = int.from_bytes(h, "big")
    excess = len(h) * 8 - c.n.bit_length()
    return z >> excess if excess > 0 else z


def sign(curve: str, d: int, digest: str, message: bytes, k_material: bytes) -> bytes:
    """A DER signature with the nonce from k_material (seeded: reproducible)."""
    c = CURVES[curve]
    z = _z(c, digest, message)
    k = int.from_bytes(k_material, "big") % (c.n - 1) + 1
    r = _mul(c, k, (c.gx, c.gy))[0] % c.n
    s = pow(k, -1, c.n) * (z + r * d) % c.n
    return _der(r, s)


def verify(curve: str, public: bytes, digest: str, message: bytes, signature: bytes) -> bool:
    c = CURVES[curve]
    try:
        r, s = _undER(signature)
    except ValueError:
        return False
    if not (1 <= r < c.n and 1 <= s < c.n) or public[:1] != b"\x04":
        return False
    q = (int.from_bytes(public[1 : 1 + c.size], "big"), int.from_bytes(public[1 + c.size :], "big"))
    w = pow(s, -1, c.n)
    z = _z(c, digest, message)
    point = _add(c, _mul(c, z * w % c.n, (c.gx, c.gy)), _mul(c, r * w % c.n, q))
    return point is not None and point[0] % c.n == r


def _der_int(v: int) -> bytes:
    body = v.to_bytes((v.bit_length() + 8) // 8, "big")  # a leading 0 keeps it positive
    return b"\x02" + _der_len(len(body)) + body


def _der_len(n: int) -> bytes:
    return bytes([n]) if n < 128 else bytes([0x81, n])


def _der(r: int, s: int) -> bytes:
    body = _der_int(r) + _der_int(s)
    return b"\x30" + _der_len(len(body)) + body


def _undER(sig: bytes) -> tuple[int, int]:
    if len(sig) < 8 or sig[0] != 0x30:
        raise ValueError("not a DER sequence")
    pos = 2 if sig[1] < 128 else 3
    out = []
    for _ in range(2):
        if sig[pos] != 0x02:
            raise ValueError("not a DER integer")
        length = sig[pos + 1]
        out.append(int.from_bytes(sig[pos + 2 : pos + 2 + length], "big"))
        pos += 2 + length
    return out[0], out[1]


def shared_secret(curve: str, private: bytes, public: bytes) -> bytes | None:
    """ECDH (SEC 1 §3.3.1): the x coordinate of d·Q, or None for a public key
    that is not an uncompressed point on the curve."""
    c = CURVES[curve]
    if len(public) != 1 + 2 * c.size or public[:1] != b"\x04":
        return None
    x, y = (
        int.from_bytes(public[1 : 1 + c.size], "big"),
        int.from_bytes(public[1 + c.size :], "big"),
    )
    if (y * y - (x * x * x - 3 * x + c.b)) % c.p:
        return None
    point = _mul(c, int.from_bytes(private, "big"), (x, y))
    return None if point is None else point[0].to_bytes(c.size, "big")
