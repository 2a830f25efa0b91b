"""The Python worker's closed set of calls, and its timed loops.

Imported only inside the worker process (`python -m bridge.pyworker.worker`), never in
the driver: hashlib/_hashlib load libcrypto at import, and the hardware masks
(OPENSSL_ia32cap) must be in the environment before that happens.

The measurement procedure is the one in erl/bridge_measure.erl, so both workers
are measured alike (see `measure`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from bridge.catalog import calls, vocab
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError
from bridge.pyworker import calibration
from bridge.system import cpustat
from bridge.wire.codec import atom

MAX_SAMPLES = 100_000
MAX_SAMPLE_NS = 60_000_000_000
MAX_LOOPS = 1_000_000_000

Loop = calibration.Loop
Measured = tuple[int, list[int], int]  # loops, sample durations (ns), warm-up ns


def greeting() -> list[tuple[str, Any]]:
    return [("kind", atom("python")), ("python_version", sys.version.split()[0])]


def handle(op: str, args: dict[str, Any]) -> Any:
    if op == "info":
        return info()
    if op == "bench":
        return bench(args)
    if op == "conc":  # N threads (or this process as one of N) at once
        from bridge.pyworker import conc

        return conc.conc(args, prepare, _int)
    raise OperationError("unknown_op", f"unknown operation: {op[:40]}")


# -- info ------------------------------------------------------------------


def info() -> list[tuple[str, Any]]:
    import _hashlib
    import ssl

    probe = hashlib.sha256()
    hmac_obj = hmac.new(b"k", b"m", "sha256")
    inner = getattr(hmac_obj, "_hmac", None)
    return [
        ("python_version", sys.version.split()[0]),
        ("implementation", sys.implementation.name),
        ("executable", sys.executable),
        ("os_pid", os.getpid()),
        ("ssl_openssl_version", ssl.OPENSSL_VERSION),
        # hashlib silently falls back to built-in code (HACL* from 3.12) when
        # OpenSSL lacks a digest; the hardware masks cannot reach that code.
        ("hashlib_sha256_type", f"{type(probe).__module__}.{type(probe).__name__}"),
        ("hashlib_uses_openssl", isinstance(probe, _hashlib.HASH)),
        (
            "hmac_impl",
            "none" if inner is None else f"{type(inner).__module__}.{type(inner).__name__}",
        ),
        (
            "fips_mode",
            bool(_hashlib.get_fips_mode()) if hasattr(_hashlib, "get_fips_mode") else False,
        ),
        ("clock", "time.perf_counter_ns"),
        ("clock_resolution_ns", int(time.get_clock_info("perf_counter").resolution * 1e9) or 1),
        # cryptography's wheels carry their own OpenSSL, linked into the
        # extension: its rows (ciphers, signatures) do not run the system's.
        ("cryptography_openssl_version", _cryptography_openssl()),
    ]


def _cryptography_openssl() -> str:
    try:
        from cryptography.hazmat.backends.openssl.backend import backend
    except Exception:  # not installed, or an old layout: nothing to say
        return ""
    return str(backend.openssl_version_text())


# -- bench -----------------------------------------------------------------


def bench(args: dict[str, Any]) -> list[tuple[str, Any]]:
    warmup_ns = _int(args, "warmup_ns", 0, MAX_SAMPLE_NS)
    sample_ns = _int(args, "sample_ns", 1, MAX_SAMPLE_NS)
    samples = _int(args, "samples", 1, MAX_SAMPLES)
    # loops > 0: a later round of an interleaved run reuses the loop count
    # calibrated in the first round.
    fixed_loops = _int(args, "loops", 0, MAX_LOOPS) if "loops" in args else 0
    api, once, loop = prepare(_str(args, "call"), args)
    try:
        output = once()
    except ValueError as exc:  # hashlib: unsupported digest in this build
        raise OperationError("unsupported", str(exc)) from exc
    # A TLS loop counts its server's CPU (bridge.pyworker.tls.Handshakes),
    # read around each sample.
    probe = Probe.open(getattr(loop, "server_cpu_ns", None))
    try:
        if fixed_loops:
            loops, durations, spent = measure_fixed(loop, warmup_ns, fixed_loops, samples, probe)
        else:
            loops, durations, spent = measure(loop, warmup_ns, sample_ns, samples, probe)
    finally:
        probe.close()
    return [
        ("api", api),
        ("loops", loops),
        ("samples", durations),
        ("output", output),
        ("warmup_ns", spent),
        *probe.reply(),
    ]


Prepared = tuple[str, Callable[[], bytes], Loop]  # (api, one call, the timed loop)


def prepare(call: str, args: dict[str, Any]) -> Prepared:
    """The handler of an operation (calls.CALLS["python", ...].op) makes the
    call's function and its timed loop from the request's arguments."""
    if call == "user":  # the user's expressions: only in a worker started with them
        from bridge.pyworker import usercode

        return usercode.prepare(args, sys.modules[__name__])
    if call not in HANDLERS.table:
        raise OperationError("unknown_call", f"unknown call: {call[:40]}")
    return HANDLERS[call](args)


def _hmac_digest(args: dict[str, Any]) -> Prepared:
    key, data, name, cut = _bytes(args, "key"), _bytes(args, "data"), _digest(args), _cut(args)
    digest = hmac.digest
    if cut:

        def loop(n: int) -> None:
            for _ in range(n):
                digest(key, data, name)[:cut]

        return "hmac.digest", lambda: digest(key, data, name)[:cut], loop

    def loop_full(n: int) -> None:
        for _ in range(n):
            digest(key, data, name)

    return "hmac.digest", lambda: digest(key, data, name), loop_full


def _hmac_copy(args: dict[str, Any]) -> Prepared:
    # Key schedule once, as openssl speed -hmac does; copy the keyed state per
    # message. This answers "what does HMAC cost when the key is reused?".
    key, data, name, cut = _bytes(args, "key"), _bytes(args, "data"), _digest(args), _cut(args)
    keyed = hmac.new(key, digestmod=name)
    end = cut or None

    def once() -> bytes:
        h = keyed.copy()
        h.update(data)
        return h.digest()[:end]

    def loop(n: int) -> None:
        copy = keyed.copy
        for _ in range(n):
            h = copy()
            h.update(data)
            h.digest()[:end]

    return "hmac.new(key).copy()", once, loop


# Parts of the reused-key call, timed beside it (the hmac-parts scenario):
# copy() alone, copy() and update(), and digest() alone. digest() does not
# consume the state: CPython's _hashlib copies the HMAC_CTX first and
# finishes the copy, so the loop can call it on one prepared object.


def _hmac_copy_only(args: dict[str, Any]) -> Prepared:
    keyed = hmac.new(_bytes(args, "key"), digestmod=_digest(args))

    def loop(n: int) -> None:
        copy = keyed.copy
        for _ in range(n):
            copy()

    return "hmac.HMAC.copy", lambda: (keyed.copy(), b"")[1], loop


def _hmac_copy_update(args: dict[str, Any]) -> Prepared:
    keyed, data = hmac.new(_bytes(args, "key"), digestmod=_digest(args)), _bytes(args, "data")

    def loop(n: int) -> None:
        copy = keyed.copy
        for _ in range(n):
            copy().update(data)

    return "hmac.HMAC.copy + update", lambda: (keyed.copy().update(data), b"")[1], loop


def _hmac_digest_only(args: dict[str, Any]) -> Prepared:
    h = hmac.new(_bytes(args, "key"), _bytes(args, "data"), _digest(args))
    end = _cut(args) or None

    def loop(n: int) -> None:
        digest = h.digest
        for _ in range(n):
            digest()[:end]

    return "hmac.HMAC.digest", lambda: h.digest()[:end], loop


def _hashlib_call(args: dict[str, Any]) -> Prepared:
    data, name = _bytes(args, "data"), _digest(args)
    try:
        ctor = getattr(hashlib, vocab.DIGESTS[name].hashlib)
    except AttributeError as exc:
        raise OperationError("unsupported", f"hashlib has no {name}") from exc

    def loop(n: int) -> None:
        for _ in range(n):
            ctor(data).digest()

    api = f"hashlib.{ctor.__name__.removeprefix('openssl_')}"
    if not _from_openssl(ctor(b"")):
        api += " (CPython's own code, not OpenSSL)"
    return api, lambda: ctor(data).digest(), loop


def _from_openssl(h: Any) -> bool:
    import _hashlib

    return isinstance(h, _hashlib.HASH)


def _hashlib_new(args: dict[str, Any]) -> Prepared:
    # The generic constructor looks the name up on every call, where the named
    # constructor (hashlib.sha256) does not: code that takes the digest name
    # from configuration pays this.
    data, name = _bytes(args, "data"), vocab.DIGESTS[_digest(args)].hashlib
    new = hashlib.new

    def loop(n: int) -> None:
        for _ in range(n):
            new(name, data).digest()

    return "hashlib.new", lambda: new(name, data).digest(), loop


def _repeat(once: Callable[[], bytes]) -> Loop:
    """The timed loop for calls that are a whole function already (ciphers,
    signatures, file digests): one extra Python call per iteration, which is
    negligible next to a microsecond-scale operation."""

    def loop(n: int) -> None:
        for _ in range(n):
            once()

    return loop


def _require_cryptography() -> None:
    # Python's standard library has no ciphers or signatures: these calls need
    # the optional `cryptography` package (which bundles its own OpenSSL).
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise OperationError(
            "unsupported",
            "the cryptography package is not installed: pip install 'crypto-bridge[crypto]'",
        ) from None


def _file_digest_loop(f, name: str):
    """hashlib.file_digest's own loop (Python 3.11's Lib/hashlib.py), for
    Python 3.10, which has no file_digest: readinto a 256 KiB buffer,
    update with what was read."""
    digest = hashlib.new(name)
    buf = bytearray(2**18)
    view = memoryview(buf)
    while True:
        size = f.readinto(buf)
        if not size:
            return digest
        digest.update(view[:size])


_file_digest = getattr(hashlib, "file_digest", _file_digest_loop)


def _file_digest_call(args: dict[str, Any]) -> Prepared:
    # The path names a file the driver generated in its private directory.
    path, name = _str(args, "path"), _digest(args)

    def once() -> bytes:
        with open(path, "rb") as f:
            return _file_digest(f, vocab.DIGESTS[name].hashlib).digest()

    api = "hashlib.file_digest" if _file_digest is not _file_digest_loop else "file_digest's loop"
    return api, once, _repeat(once)


def _ecdsa_sign(args: dict[str, Any]) -> Prepared:
    return _ecdsa_call("sign", args)


def _ecdsa_verify(args: dict[str, Any]) -> Prepared:
    return _ecdsa_call("verify", args)


def _ecdsa_call(role: str, args: dict[str, Any]) -> Prepared:
    _require_cryptography()
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    spec = vocab.CURVES.get(_str(args, "curve"))
    digest = _digest(args)
    if spec is None or not digest.startswith("sha") or digest == "sha1":
        raise OperationError("bad_request", "ECDSA needs curve p256/p384/p521, digest sha2")
    curve = getattr(ec, spec.python)
    msg = _bytes(args, "data")
    algorithm = ec.ECDSA(getattr(hashes, vocab.DIGESTS[digest].cryptography)())
    if role == "sign":
        # The key object is made once: that is how an application holds a key.
        key = ec.derive_private_key(int.from_bytes(_bytes(args, "key"), "big"), curve())

        def once() -> bytes:
            return key.sign(msg, algorithm)

        api = "cryptography EllipticCurvePrivateKey.sign"
    else:
        pub = ec.EllipticCurvePublicKey.from_encoded_point(curve(), _bytes(args, "pub"))
        sig = _bytes(args, "sig")

        def once() -> bytes:
            try:
                pub.verify(sig, msg, algorithm)
                return b"\x01"
            except InvalidSignature:
                return b"\x00"

        api = "cryptography EllipticCurvePublicKey.verify"

    return api, once, _repeat(once)


def _cryptography_call(args: dict[str, Any]) -> Prepared:
    _require_cryptography()
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key, iv, data = _bytes(args, "key"), _bytes(args, "iv"), _bytes(args, "data")
    spec = vocab.CIPHERS.get(_str(args, "cipher"))
    if spec is not None and spec.aead:
        cls = _aead_class(spec)

        def once() -> bytes:
            return cls(key).encrypt(iv, data, None)

        api = f"cryptography {spec.python}.encrypt"
    elif spec is not None:

        def once() -> bytes:
            enc = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
            return enc.update(data) + enc.finalize()

        api = "cryptography Cipher(AES, CBC)"
    else:
        raise OperationError("bad_request", f"unknown cipher: {_str(args, 'cipher')[:40]}")

    return api, once, _repeat(once)


def _aead_class(spec: vocab.Cipher) -> Any:
    from cryptography.hazmat.primitives.ciphers import aead

    try:
        return getattr(aead, spec.python)
    except AttributeError:
        raise OperationError(
            "unsupported", f"this cryptography has no {spec.python} (pip install -U cryptography)"
        ) from None


def _aead_spec(args: dict[str, Any]) -> vocab.Cipher:
    _require_cryptography()
    spec = vocab.CIPHERS.get(_str(args, "cipher"))
    if spec is None or not spec.aead:
        raise OperationError("bad_request", f"not an AEAD cipher: {_str(args, 'cipher')[:40]}")
    return spec


def _aead_reuse(args: dict[str, Any]) -> Prepared:
    # The AEAD object keeps the keyed context: each call only sets the nonce.
    spec = _aead_spec(args)
    iv, data = _bytes(args, "iv"), _bytes(args, "data")
    encrypt = _aead_class(spec)(_bytes(args, "key")).encrypt

    def once() -> bytes:
        return encrypt(iv, data, None)

    return f"cryptography {spec.python}.encrypt (object made once)", once, _repeat(once)


# -- random bytes: the probe makes two calls (calls.Check.DISTINCT) ------------


def _random(args: dict[str, Any], source: Callable[[int], bytes], api: str) -> Prepared:
    n = _int(args, "count", 1, 1 << 30)

    def loop(k: int) -> None:
        for _ in range(k):
            source(n)

    return api, lambda: source(n) + source(n), loop


def _ssl_rand(args: dict[str, Any]) -> Prepared:
    import ssl

    return _random(args, ssl.RAND_bytes, "ssl.RAND_bytes (OpenSSL RAND_bytes)")


def _urandom(args: dict[str, Any]) -> Prepared:
    return _random(args, os.urandom, "os.urandom (getrandom)")


def _pbkdf2(args: dict[str, Any]) -> Prepared:
    import _hashlib

    name = vocab.DIGESTS[_digest(args)].hashlib
    password, salt = _bytes(args, "key"), _bytes(args, "iv")
    iterations = _int(args, "count", 1, 100_000_000)
    length = _int(args, "key_bytes", 1, 1024)
    derive = hashlib.pbkdf2_hmac
    where = "OpenSSL" if derive is getattr(_hashlib, "pbkdf2_hmac", None) else "built-in"

    def once() -> bytes:
        return derive(name, password, salt, iterations, length)

    return f"hashlib.pbkdf2_hmac ({where})", once, _repeat(once)


# -- keys: made once for the prepared calls, loaded per call for the others ----


def _ec_key(args: dict[str, Any]) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    spec = vocab.CURVES.get(_str(args, "curve"))
    if spec is None:
        raise OperationError("bad_request", "ECDSA needs curve p256/p384/p521")
    return ec.derive_private_key(
        int.from_bytes(_bytes(args, "key"), "big"), getattr(ec, spec.python)()
    )


def _rsa_key(args: dict[str, Any]) -> Any:
    from cryptography.hazmat.primitives.asymmetric import rsa

    parts = args.get("parts")
    if (
        not isinstance(parts, list)
        or len(parts) != 8
        or not all(isinstance(p, bytes) for p in parts)
    ):
        raise OperationError("bad_request", "argument parts must be the 8 RSA key integers")
    e, n, d, p, q, dp, dq, qinv = (int.from_bytes(x, "big") for x in parts)
    public = rsa.RSAPublicNumbers(e, n)
    return rsa.RSAPrivateNumbers(p, q, d, dp, dq, qinv, public).private_key()


def _der(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization as s

    return key.private_bytes(s.Encoding.DER, s.PrivateFormat.PKCS8, s.NoEncryption())


def _key_load(args: dict[str, Any]) -> Prepared:
    """The key import alone: PKCS#8 DER to a key object, as a program that
    reads its key for every request does (cryptography checks an RSA key as it
    loads it, by default)."""
    _require_cryptography()
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    der = _der(_rsa_key(args) if "parts" in args else _ec_key(args))

    def loop(n: int) -> None:
        for _ in range(n):
            load_der_private_key(der, None)

    return "cryptography load_der_private_key", lambda: b"", loop


def _ecdsa_sign_load(args: dict[str, Any]) -> Prepared:
    _require_cryptography()
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    der, msg = _der(_ec_key(args)), _bytes(args, "data")
    algorithm = ec.ECDSA(getattr(hashes, vocab.DIGESTS[_digest(args)].cryptography)())

    def once() -> bytes:
        return load_der_private_key(der, None).sign(msg, algorithm)

    return "cryptography load_der_private_key + sign", once, _repeat(once)


def _verdict(verify: Callable[[], None]) -> bytes:
    from cryptography.exceptions import InvalidSignature

    try:
        verify()
        return b"\x01"
    except InvalidSignature:
        return b"\x00"


def _eddsa_sign(args: dict[str, Any]) -> Prepared:
    _require_cryptography()
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.from_private_bytes(_bytes(args, "key"))
    msg = _bytes(args, "data")

    def once() -> bytes:
        return key.sign(msg)

    return "cryptography Ed25519PrivateKey.sign", once, _repeat(once)


def _eddsa_verify(args: dict[str, Any]) -> Prepared:
    _require_cryptography()
    from cryptography.hazmat.primitives.asymmetric import ed25519

    pub = ed25519.Ed25519PublicKey.from_public_bytes(_bytes(args, "pub"))
    msg, sig = _bytes(args, "data"), _bytes(args, "sig")

    def once() -> bytes:
        return _verdict(lambda: pub.verify(sig, msg))

    return "cryptography Ed25519PublicKey.verify", once, _repeat(once)


def _rsa_padding(args: dict[str, Any], pss: bool) -> tuple[Any, Any]:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    h = getattr(hashes, vocab.DIGESTS[_digest(args)].cryptography)()
    if pss:
        return padding.PSS(padding.MGF1(h), _int(args, "salt_bytes", 0, 512)), h
    return padding.PKCS1v15(), h


def _rsa_sign(args: dict[str, Any], pss: bool, load: bool = False) -> Prepared:
    _require_cryptography()
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    key, msg = _rsa_key(args), _bytes(args, "data")
    pad, h = _rsa_padding(args, pss)
    if load:
        der = _der(key)

        def once() -> bytes:
            return load_der_private_key(der, None).sign(msg, pad, h)

        return "cryptography load_der_private_key + sign", once, _repeat(once)

    def once_prepared() -> bytes:
        return key.sign(msg, pad, h)

    return "cryptography RSAPrivateKey.sign", once_prepared, _repeat(once_prepared)


def _rsa_verify(args: dict[str, Any], pss: bool) -> Prepared:
    _require_cryptography()
    pub = _rsa_key(args).public_key()
    msg = _bytes(args, "data")
    sig = _bytes(args, "sig_pss" if pss else "sig")
    pad, h = _rsa_padding(args, pss)

    def once() -> bytes:
        return _verdict(lambda: pub.verify(sig, msg, pad, h))

    return "cryptography RSAPublicKey.verify", once, _repeat(once)


def _exchange_keys(args: dict[str, Any]) -> tuple[Any, Any, Callable[[], Any], Callable]:
    """(own private key, peer public key, a fresh private key maker, encode a
    public key) for the scenario's curve."""
    _require_cryptography()
    from cryptography.hazmat.primitives import serialization as s
    from cryptography.hazmat.primitives.asymmetric import ec, x25519

    curve, key, pub = _str(args, "curve"), _bytes(args, "key"), _bytes(args, "pub")
    if curve == "x25519":
        own = x25519.X25519PrivateKey.from_private_bytes(key)
        peer = x25519.X25519PublicKey.from_public_bytes(pub)

        def raw(k: Any) -> bytes:
            return k.public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)

        return own, peer, x25519.X25519PrivateKey.generate, raw
    if curve != "p256":
        raise OperationError("bad_request", f"unknown agreement curve: {curve[:40]}")
    own = ec.derive_private_key(int.from_bytes(key, "big"), ec.SECP256R1())
    peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), pub)

    def point(k: Any) -> bytes:
        return k.public_bytes(s.Encoding.X962, s.PublicFormat.UncompressedPoint)

    return own, peer, lambda: ec.generate_private_key(ec.SECP256R1()), point


def _exchange_args(args: dict[str, Any]) -> tuple:
    from cryptography.hazmat.primitives.asymmetric import ec

    return () if _str(args, "curve") == "x25519" else (ec.ECDH(),)


def _exchange(args: dict[str, Any]) -> Prepared:
    own, peer, _, _ = _exchange_keys(args)
    extra = _exchange_args(args)

    def once() -> bytes:
        return own.exchange(*extra, peer)

    return f"cryptography {type(own).__name__}.exchange", once, _repeat(once)


def _exchange_fresh(args: dict[str, Any]) -> Prepared:
    # The output is the fresh public key and the secret: the driver derives the
    # secret again from that public key (calls.Check.AGREEMENT).
    _, peer, fresh, encode = _exchange_keys(args)
    extra = _exchange_args(args)

    def once() -> bytes:
        k = fresh()
        return encode(k.public_key()) + k.exchange(*extra, peer)

    def loop(n: int) -> None:
        for _ in range(n):
            fresh().exchange(*extra, peer)

    return "cryptography generate + exchange", once, loop


def _tls(op: str) -> Callable[[dict[str, Any]], Prepared]:
    def handler(args: dict[str, Any]) -> Prepared:
        from bridge.pyworker import tls

        return tls.prepare(args, calls.TLS_OPS[op], op in calls.TLS_RESUME_OPS)

    return handler


# One handler per operation of calls.CALLS["python", ...].
HANDLERS = calls.Handlers(
    RuntimeKind.PYTHON,
    {
        "hmac.digest": _hmac_digest,
        "hmac.new+copy": _hmac_copy,
        "hmac.copy": _hmac_copy_only,
        "hmac.copy+update": _hmac_copy_update,
        "hmac.digest_only": _hmac_digest_only,
        "hashlib": _hashlib_call,
        "hashlib.new": _hashlib_new,
        "cryptography": _cryptography_call,
        "file_digest": _file_digest_call,
        "ecdsa_sign": _ecdsa_sign,
        "ecdsa_verify": _ecdsa_verify,
        "ecdsa_sign_load": _ecdsa_sign_load,
        "key_load": _key_load,
        "aead_reuse": _aead_reuse,
        "rand_bytes": _ssl_rand,
        **{op: _tls(op) for op in calls.TLS_OPS},
        "urandom": _urandom,
        "pbkdf2": _pbkdf2,
        "eddsa_sign": _eddsa_sign,
        "eddsa_verify": _eddsa_verify,
        "rsa_sign_pkcs1": lambda args: _rsa_sign(args, pss=False),
        "rsa_sign_pkcs1_load": lambda args: _rsa_sign(args, pss=False, load=True),
        "rsa_verify_pkcs1": lambda args: _rsa_verify(args, pss=False),
        "rsa_sign_pss": lambda args: _rsa_sign(args, pss=True),
        "rsa_verify_pss": lambda args: _rsa_verify(args, pss=True),
        "exchange": _exchange,
        "exchange_fresh": _exchange_fresh,
    },
)


# -- measurement -------------------------------------------------------------


class Probe:
    """What the kernel says of each sample window of the measuring thread:
    the CPU it ran on at the end of the window (sched_getcpu), its CPU ns
    (CLOCK_THREAD_CPUTIME_ID) and its run-queue wait ns over the window
    (bridge.system.cpustat), read just outside the timed region. Without
    /proc's schedstat, none of these is recorded. A `meter` (a TLS server's
    CPU ns so far) is read around each window too."""

    def __init__(self, stat: Any, meter: Callable[[], int] | None = None) -> None:
        self.stat = stat
        self.meter = meter
        self.cpus: list[int] = []
        self.cpu_ns: list[int] = []
        self.wait_ns: list[int] = []
        self.server_cpu_ns: list[int] = []

    @classmethod
    def open(cls, meter: Callable[[], int] | None = None) -> Probe:
        return cls(cpustat.open_self(), meter)

    def sample(self, loop: Loop, n: int) -> int:
        if self.meter is None:
            return self._probed(loop, n)
        m0 = self.meter()
        t = self._probed(loop, n)
        self.server_cpu_ns.append(self.meter() - m0)
        return t

    def _probed(self, loop: Loop, n: int) -> int:
        stat = self.stat
        if stat is None:
            return timed(loop, n)
        # The thread's own schedstat CPU figure is updated only when it is
        # scheduled (or at a tick), so a running thread reads its CPU time
        # from CLOCK_THREAD_CPUTIME_ID; its run-queue wait only grows while
        # it is off a CPU, and schedstat has it up to date.
        cpu_clock = time.thread_time_ns
        _, wait0 = stat.read()
        c0 = cpu_clock()
        t = timed(loop, n)
        c1 = cpu_clock()
        _, wait1 = stat.read()
        self.cpus.append(stat.cpu())
        self.cpu_ns.append(c1 - c0)
        self.wait_ns.append(wait1 - wait0)
        return t

    def reply(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if self.cpus:
            out += [("cpus", self.cpus), ("cpu_ns", self.cpu_ns), ("wait_ns", self.wait_ns)]
        if self.server_cpu_ns:
            out.append(("server_cpu_ns", self.server_cpu_ns))
        return out

    def close(self) -> None:
        if self.stat is not None:
            self.stat.close()


def measure(
    loop: Loop, warmup_ns: int, sample_ns: int, samples: int, probe: Probe | None = None
) -> Measured:
    """Warm up and calibrate, then time `samples` runs of `loops` iterations.

    1. run the loop with 1, 2, 4, ... iterations until two runs in a row last
       at least half a sample and warmup_ns have passed (all discarded);
    2. loops = iterations that make one run last about sample_ns;
    3. time each run with perf_counter_ns (monotonic, ns), the probe's
       readings just outside it.
    """
    probe = probe or Probe(None)
    n, t, spent = calibration.calibrate(loop, warmup_ns, sample_ns, timed)
    loops = max(1, round(n * sample_ns / max(t, 1)))
    return loops, [probe.sample(loop, loops) for _ in range(samples)], spent


def measure_fixed(
    loop: Loop, warmup_ns: int, loops: int, samples: int, probe: Probe | None = None
) -> tuple[int, list[int], int]:
    """A later round: warm up with the known loop count, then take the samples."""
    probe = probe or Probe(None)
    spent = 0
    while spent < warmup_ns:
        spent += timed(loop, loops)
    return loops, [probe.sample(loop, loops) for _ in range(samples)], spent


# In a worker started with user code, the mark of its progress that the
# driver watches (bridge.pyworker.usercode): called just before each timed
# run, outside it.
before_run: Callable[[], None] | None = None


def timed(loop: Loop, n: int) -> int:
    clock = time.perf_counter_ns
    if before_run is not None:
        before_run()
    t0 = clock()
    loop(n)
    return clock() - t0


# -- argument helpers ----------------------------------------------------------


def _int(args: dict[str, Any], key: str, lo: int, hi: int) -> int:
    value = args.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise OperationError("bad_request", f"argument {key} must be an integer in {lo}..{hi}")
    return value


def _bytes(args: dict[str, Any], key: str) -> bytes:
    value = args.get(key)
    if not isinstance(value, bytes):
        raise OperationError("bad_request", f"argument {key} must be a binary")
    return value


def _str(args: dict[str, Any], key: str) -> str:
    return _bytes(args, key).decode("utf-8", "replace")


def _digest(args: dict[str, Any]) -> str:
    name = _str(args, "digest")
    if name not in vocab.DIGESTS:
        raise OperationError("bad_request", f"unknown digest: {name[:40]}")
    return name


def _cut(args: dict[str, Any]) -> int:
    return _int(args, "mac_bytes", 0, 64)
