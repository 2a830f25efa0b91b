"""ECDSA: the driver's reference implementation, and real sign/verify runs in
every runtime, each signature verified by another implementation."""

from __future__ import annotations

import pytest

from bridge.catalog import inputs, scenario
from bridge.crypto import ec


@pytest.mark.parametrize("curve", sorted(ec.CURVES))
def test_curve_constants(curve):
    c = ec.CURVES[curve]
    assert (c.gy**2 - (c.gx**3 - 3 * c.gx + c.b)) % c.p == 0  # G is on the curve
    assert ec._mul(c, c.n, (c.gx, c.gy)) is None  # n is G's order


@pytest.mark.parametrize(
    "curve, digest", [("p256", "sha256"), ("p384", "sha384"), ("p521", "sha512")]
)
def test_sign_verify_round_trip_and_rejection(curve, digest):
    d = ec.private_scalar(curve, b"\x11" * 80)
    pub = ec.public_key(curve, d)
    sig = ec.sign(curve, d, digest, b"message", b"\x22" * 80)
    assert ec.verify(curve, pub, digest, b"message", sig)
    assert not ec.verify(curve, pub, digest, b"massage", sig)
    assert not ec.verify(curve, pub, digest, b"message", sig[:-1] + bytes([sig[-1] ^ 1]))
    assert not ec.verify(curve, pub, digest, b"message", b"garbage")


def test_against_cryptography():
    crypto = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")
    from cryptography.hazmat.primitives import hashes, serialization

    d = ec.private_scalar("p256", b"\x33" * 40)
    key = crypto.derive_private_key(d, crypto.SECP256R1())
    point = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    assert ec.public_key("p256", d) == point
    key.public_key().verify(
        ec.sign("p256", d, "sha256", b"m", b"\x44" * 40), b"m", crypto.ECDSA(hashes.SHA256())
    )
    assert ec.verify("p256", point, "sha256", b"m", key.sign(b"m", crypto.ECDSA(hashes.SHA256())))


def test_inputs_carry_a_valid_driver_signature():
    sc = scenario.load("ecdsa-p521")
    data = inputs.for_scenario(3, sc, 64)
    assert ec.verify("p521", data.pub, "sha512", data.data, data.sig)
    assert {"pub_hex", "sig_hex"} <= set(data.to_json())
