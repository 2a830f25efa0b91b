"""Byte-identical inputs for every runtime, generated from a recorded seed.

Keys and messages are SHAKE-256 output over a label that names the seed, the
scenario and the role, so anyone can regenerate them from the report without
bridge:

    key  = SHAKE256(b"bridge/1 seed=<seed> scenario=<name> key").digest(<key_bytes>)
    data = SHAKE256(b"bridge/1 seed=<seed> scenario=<name> data size=<n>").digest(<n>)

(The report also carries the hex of inputs up to 4 KiB.)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bridge.scenario import CIPHERS

INLINE_LIMIT = 4096  # inputs up to this size are written into the report


@dataclass(frozen=True)
class Inputs:
    key: bytes
    data: bytes
    iv: bytes = b""

    def to_json(self) -> dict | None:
        if len(self.data) > INLINE_LIMIT:
            return None
        d = {"key_hex": self.key.hex(), "data_hex": self.data.hex()}
        if self.iv:
            d["iv_hex"] = self.iv.hex()
        return d


def derive(seed: int, scenario: str, role: str, size: int) -> bytes:
    label = f"bridge/1 seed={seed} scenario={scenario} {role}".encode()
    return hashlib.shake_256(label).digest(size)


def make(seed: int, scenario: str, key_bytes: int, size: int, iv_bytes: int = 0) -> Inputs:
    key = derive(seed, scenario, "key", key_bytes) if key_bytes else b""
    iv = derive(seed, scenario, "iv", iv_bytes) if iv_bytes else b""
    data = derive(seed, scenario, f"data size={size}", size)
    return Inputs(key=key, data=data, iv=iv)


def for_scenario(seed: int, sc, size: int) -> Inputs:
    """The inputs of one cell: ciphers take their key and IV length from the cipher."""
    if sc.kind == "cipher":
        key_bytes, iv_bytes, _ = CIPHERS[sc.cipher]
        return make(seed, sc.name, key_bytes, size, iv_bytes)
    return make(seed, sc.name, sc.key_bytes, size)
