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
import os
from dataclasses import dataclass

from bridge import ec, vocab
from bridge.scenario import CipherScenario, MacScenario, Scenario, SignatureScenario

INLINE_LIMIT = 4096  # inputs up to this size are written into the report


@dataclass(frozen=True)
class Inputs:
    key: bytes
    data: bytes
    iv: bytes = b""
    path: str = ""  # file-digest: the generated file (data stays empty)
    file_size: int = 0
    pub: bytes = b""  # sign: the public point; key holds the private scalar
    sig: bytes = b""  # sign: the driver's signature of data, for verify calls

    def wire(self) -> dict[str, bytes | str]:
        """What a worker receives of the inputs (each operation reads its own)."""
        return {
            "data": self.data,
            "key": self.key,
            "iv": self.iv,
            "path": self.path,
            "pub": self.pub,
            "sig": self.sig,
        }

    def to_json(self) -> dict | None:
        if self.path:
            return {"file": "generated (see bridge.inputs.write_file)", "size": self.file_size}
        if len(self.data) > INLINE_LIMIT:
            return None
        d = {"key_hex": self.key.hex(), "data_hex": self.data.hex()}
        for name in ("iv", "pub", "sig"):
            if getattr(self, name):
                d[f"{name}_hex"] = getattr(self, name).hex()
        return d


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
