"""bridge's vocabulary, written down once: runtime kinds, hardware features,
and the name each runtime gives every digest, cipher and curve.

Scenario files use OpenSSL's names ("sha1", "aes-128-gcm", "p256"); Erlang's
crypto, Python and `openssl speed` each spell them their own way. Every
translation happens through these tables, nowhere else. Pure data: the
Python worker imports this module too.
"""

from __future__ import annotations

from dataclasses import dataclass

from bridge.catalog.choice import Choice

# The program every command line bridge tells its reader to type starts with: the name
# this package installs that nothing else on PATH takes (`bridge` is
# iproute2's on every Debian and Ubuntu machine: 'Object "run" is unknown').
COMMAND = "crypto-bridge"


class RuntimeKind(Choice):
    """What a runtime is: an Erlang node (Elixir code runs in one too), a
    Python worker, or the openssl CLI. The values are what reports hold."""

    ERLANG = "erlang"
    PYTHON = "python"
    OPENSSL = "openssl"


RUNTIME_KINDS = tuple(RuntimeKind)


class ScenarioKind(Choice):
    """What a scenario measures: each kind is one record of
    bridge.catalog.scenario, with the keys of its own. The values are what
    scenario files and reports hold."""

    MAC = "mac"
    HASH = "hash"
    CIPHER = "cipher"
    FILE_DIGEST = "file-digest"
    SIGN = "sign"
    RANDOM = "random"
    KDF = "kdf"
    EDDSA = "eddsa"
    RSA = "rsa"
    AGREEMENT = "agreement"
    TLS = "tls"
    EXPR = "expr"


KIND_NAMES = {
    RuntimeKind.ERLANG: "Erlang",
    RuntimeKind.PYTHON: "Python",
    RuntimeKind.OPENSSL: "openssl",
}

# The variables through which libcrypto reads its capability mask; the other
# variables of a runtime's `env` record are the user's (--env).
MASK_VARS = ("OPENSSL_ia32cap", "OPENSSL_armcap")

# Hardware features a scenario may name; bridge.hw.hardware knows their masks.
FEATURES = ("sha", "aes", "pclmul", "avx2", "vaes", "vpclmul", "adx", "bmi2")
FEATURE_NAMES = {
    "sha": "SHA extensions (SHA-NI / ARMv8 SHA)",
    "aes": "AES instructions (AES-NI / ARMv8 AES)",
    "pclmul": "carry-less multiply (PCLMULQDQ / PMULL)",
    "avx2": "AVX2",
    # The wide-vector AES and carry-less multiply, 2 or 4 blocks per
    # instruction: OpenSSL's AES-GCM paths for AVX512 (3.0+) and AVX2 (newer).
    "vaes": "vector AES (VAES)",
    "vpclmul": "vector carry-less multiply (VPCLMULQDQ)",
    # Big-number arithmetic: MULX (BMI2) with the ADCX/ADOX carry chains (ADX)
    # in OpenSSL's Montgomery multiplication (RSA), P-256 and X25519 code.
    "adx": "ADX (ADCX/ADOX carry chains)",
    "bmi2": "BMI2 (MULX)",
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
        # hashlib never takes BLAKE2 from OpenSSL (it blocks that constructor):
        # the Python row is CPython's own code.
        Digest("blake2b512", 64, "blake2b", "blake2b"),
    )
}


@dataclass(frozen=True)
class Cipher:
    name: str  # OpenSSL's name
    key_bytes: int
    iv_bytes: int  # IV or nonce
    block: int  # sizes must be multiples of this (no padding); 1 for AEAD and stream modes
    aead: bool
    python: str = ""  # the AEAD class in cryptography.hazmat.primitives.ciphers.aead

    @property
    def erlang(self) -> str:
        """crypto's atom (OTP 22+), e.g. aes_128_gcm."""
        return self.name.replace("-", "_")


CIPHERS: dict[str, Cipher] = {
    c.name: c
    for c in (
        Cipher("aes-128-cbc", 16, 16, 16, aead=False),
        Cipher("aes-256-cbc", 32, 16, 16, aead=False),
        Cipher("aes-128-gcm", 16, 12, 1, aead=True, python="AESGCM"),
        Cipher("aes-256-gcm", 32, 12, 1, aead=True, python="AESGCM"),
        Cipher("chacha20-poly1305", 32, 12, 1, aead=True, python="ChaCha20Poly1305"),
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


@dataclass(frozen=True)
class Agreement:
    """A key-agreement curve: X25519 or ECDH on a NIST curve."""

    name: str  # the scenario's name
    erlang: str  # crypto's curve atom for compute_key/generate_key(ecdh, ...)
    speed: str  # the `openssl speed` algorithm
    secret_bytes: int  # the shared secret's length
    public_bytes: int  # the encoded public key's length (X25519 raw, P-256 uncompressed)


AGREEMENTS: dict[str, Agreement] = {
    a.name: a
    for a in (
        Agreement("x25519", "x25519", "ecdhx25519", 32, 32),
        Agreement("p256", "secp256r1", "ecdhp256", 32, 65),
    )
}


@dataclass(frozen=True)
class EdCurve:
    name: str
    erlang: str  # crypto's curve atom for sign(eddsa, none, Msg, [Priv, Curve])
    speed: str  # the `openssl speed` algorithm


ED_CURVES: dict[str, EdCurve] = {c.name: c for c in (EdCurve("ed25519", "ed25519", "ed25519"),)}

# RSA modulus sizes a scenario may name, and their `openssl speed` algorithm.
RSA_SPEED = {2048: "rsa2048", 3072: "rsa3072", 4096: "rsa4096"}
# PSS as every runtime is told to make it: MGF1 over the message digest and
# a salt as long as the digest (as TLS 1.3 requires), given explicitly in
# bytes to every runtime.


@dataclass(frozen=True)
class TlsVersion:
    """A TLS protocol version of the tls kind. Each side offers one cipher
    suite (`suite`; in TLS 1.2 the certificate's key decides it, TlsCert.suite12),
    so that every runtime negotiates the same parameters."""

    name: str  # the call's version, e.g. "1.3"
    protocol: str  # as OpenSSL and Python's ssl spell it: "TLSv1.3"
    suite: str  # TLS 1.3's only suite, OpenSSL's name; for 1.2 see suite_for
    erlang: str  # ssl's version atom
    flag: str  # the openssl s_server / s_time option

    def suite_for(self, cert: TlsCert) -> str:
        return self.suite if self.name == "1.3" else cert.suite12


TLS_VERSIONS: dict[str, TlsVersion] = {
    v.name: v
    for v in (
        TlsVersion("1.3", "TLSv1.3", "TLS_AES_256_GCM_SHA384", "tlsv1.3", "-tls1_3"),
        TlsVersion("1.2", "TLSv1.2", "", "tlsv1.2", "-tls1_2"),
    )
}


@dataclass(frozen=True)
class TlsGroup:
    """The key-exchange group of a TLS scenario: the only one either side offers."""

    name: str  # the scenario's name
    openssl: str  # -groups / Python's set_ecdh_curve name
    erlang: str  # ssl's supported_groups atom, and the IANA name the output gives
    # How `openssl s_client` names it on its "Server Temp Key" line (1.1.1, 3.x).
    temp_key: tuple[str, ...]
    code: int  # the TLS NamedGroup code point (RFC 8446 4.2.7)


TLS_GROUPS: dict[str, TlsGroup] = {
    g.name: g
    for g in (
        TlsGroup("x25519", "X25519", "x25519", ("X25519",), 0x001D),
        TlsGroup("p256", "prime256v1", "secp256r1", ("P-256", "prime256v1"), 0x0017),
    )
}


@dataclass(frozen=True)
class TlsCert:
    """The server certificate's key type in a TLS scenario (the tls kind's
    `cert`), with what follows from it: the TLS 1.2 suite, the one signature
    scheme its key can make (RFC 8446 4.2.3), and how `openssl req` makes
    the key. Its CA has a key of the same type, as real chains do."""

    name: str  # the scenario's name
    text: str  # how the report and the docs name it
    suite12: str  # the TLS 1.2 suite offered, OpenSSL's name (erl/bridge_tls.erl: cert/1)
    sigalg: str  # the signature scheme the server signs with, IANA's name
    newkey: tuple[str, ...]  # `openssl req` options that make a key of the type


TLS_CERTS: dict[str, TlsCert] = {
    c.name: c
    for c in (
        TlsCert(
            "ecdsa-p256",
            "ECDSA P-256",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "ecdsa_secp256r1_sha256",
            ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"),
        ),
        TlsCert(
            "rsa2048",
            "RSA-2048",
            "ECDHE-RSA-AES256-GCM-SHA384",
            # RSA-PSS with the RSA key (rsae): TLS 1.3's only RSA scheme for a
            # handshake signature, and OpenSSL's first choice in 1.2 as well.
            "rsa_pss_rsae_sha256",
            ("-newkey", "rsa:2048"),
        ),
    )
}
# The client certificate of mutual TLS: ECDSA P-256, as IoT fleets use,
# signed by the ECDSA P-256 CA whatever the server's certificate is.
TLS_CLIENT_CERT = "ecdsa-p256"

# Signature schemes by their TLS code point (RFC 8446 4.2.3), for a runtime
# that reads them off the wire (the Python worker), and by what `openssl
# s_client` prints ("Peer signature type", "Peer signing digest").
TLS_SIGALG_CODES = {
    0x0403: "ecdsa_secp256r1_sha256",
    0x0503: "ecdsa_secp384r1_sha384",
    0x0603: "ecdsa_secp521r1_sha512",
    0x0804: "rsa_pss_rsae_sha256",
    0x0805: "rsa_pss_rsae_sha384",
    0x0806: "rsa_pss_rsae_sha512",
    0x0809: "rsa_pss_pss_sha256",
    0x0401: "rsa_pkcs1_sha256",
    0x0501: "rsa_pkcs1_sha384",
    0x0601: "rsa_pkcs1_sha512",
    0x0201: "rsa_pkcs1_sha1",
    0x0203: "ecdsa_sha1",
    0x0807: "ed25519",
    0x0808: "ed448",
}
TLS_SIGALG_PRINTED = {
    ("ECDSA", "SHA256"): "ecdsa_secp256r1_sha256",
    ("ECDSA", "SHA384"): "ecdsa_secp384r1_sha384",
    ("ECDSA", "SHA512"): "ecdsa_secp521r1_sha512",
    ("RSA-PSS", "SHA256"): "rsa_pss_rsae_sha256",
    ("RSA-PSS", "SHA384"): "rsa_pss_rsae_sha384",
    ("RSA-PSS", "SHA512"): "rsa_pss_rsae_sha512",
    ("RSA", "SHA256"): "rsa_pkcs1_sha256",
    ("RSA", "SHA384"): "rsa_pkcs1_sha384",
    ("RSA", "SHA512"): "rsa_pkcs1_sha512",
}
TLS_GROUP_CODES = {g.code: g.erlang for g in TLS_GROUPS.values()} | {
    0x0018: "secp384r1",
    0x0019: "secp521r1",
    0x001E: "x448",
}
