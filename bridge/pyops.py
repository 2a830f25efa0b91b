"""The Python worker's closed set of calls, and its timed loops.

Imported only inside the worker process (`python -m bridge.worker`), never in
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

from bridge import calls, vocab
from bridge.codec import atom
from bridge.errors import OperationError

MAX_SAMPLES = 100_000
MAX_SAMPLE_NS = 60_000_000_000
MAX_LOOPS = 1_000_000_000

Loop = Callable[[int], None]
Measured = tuple[int, list[int], int]  # loops, sample durations (ns), warm-up ns


def greeting() -> list[tuple[str, Any]]:
    return [("kind", atom("python")), ("python_version", sys.version.split()[0])]


def handle(op: str, args: dict[str, Any]) -> Any:
    if op == "info":
        return info()
    if op == "bench":
        return bench(args)
    if op == "conc":  # N threads (or this process as one of N) at once
        from bridge import pyconc

        return pyconc.conc(args, prepare, _int)
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
    ]


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
    if fixed_loops:
        loops, durations, spent = measure_fixed(loop, warmup_ns, fixed_loops, samples)
    else:
        loops, durations, spent = measure(loop, warmup_ns, sample_ns, samples)
    return [
        ("api", api),
        ("loops", loops),
        ("samples", durations),
        ("output", output),
        ("warmup_ns", spent),
    ]


Prepared = tuple[str, Callable[[], bytes], Loop]  # (api, one call, the timed loop)


def prepare(call: str, args: dict[str, Any]) -> Prepared:
    """The handler of an operation (calls.CALLS["python", ...].op) makes the
    call's function and its timed loop from the request's arguments."""
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

    return f"hashlib.{ctor.__name__.removeprefix('openssl_')}", lambda: ctor(data).digest(), loop


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
            "the cryptography package is not installed: pip install 'bridge[crypto]'",
        ) from None


def _file_digest_call(args: dict[str, Any]) -> Prepared:
    # The path names a file the driver generated in its private directory.
    path, name = _str(args, "path"), _digest(args)

    def once() -> bytes:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, vocab.DIGESTS[name].hashlib).digest()

    return "hashlib.file_digest", once, _repeat(once)


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
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key, iv, data = _bytes(args, "key"), _bytes(args, "iv"), _bytes(args, "data")
    spec = vocab.CIPHERS.get(_str(args, "cipher"))
    if spec is not None and spec.aead:

        def once() -> bytes:
            return AESGCM(key).encrypt(iv, data, None)

        api = "cryptography AESGCM.encrypt"
    elif spec is not None:

        def once() -> bytes:
            enc = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
            return enc.update(data) + enc.finalize()

        api = "cryptography Cipher(AES, CBC)"
    else:
        raise OperationError("bad_request", f"unknown cipher: {_str(args, 'cipher')[:40]}")

    return api, once, _repeat(once)


# One handler per operation of calls.CALLS["python", ...].
HANDLERS = calls.Handlers(
    "python",
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
    },
)


# -- measurement -------------------------------------------------------------


def measure(loop: Loop, warmup_ns: int, sample_ns: int, samples: int) -> Measured:
    """Warm up and calibrate, then time `samples` runs of `loops` iterations.

    1. run the loop with 1, 2, 4, ... iterations until one run lasts at least
       half a sample and warmup_ns have passed (all discarded);
    2. loops = iterations that make one run last about sample_ns;
    3. time each run with perf_counter_ns (monotonic, ns).
    """
    n, t, spent = calibrate(loop, warmup_ns, sample_ns)
    loops = max(1, round(n * sample_ns / max(t, 1)))
    return loops, [timed(loop, loops) for _ in range(samples)], spent


def measure_fixed(
    loop: Loop, warmup_ns: int, loops: int, samples: int
) -> tuple[int, list[int], int]:
    """A later round: warm up with the known loop count, then take the samples."""
    spent = 0
    while spent < warmup_ns:
        spent += timed(loop, loops)
    return loops, [timed(loop, loops) for _ in range(samples)], spent


def calibrate(loop: Loop, warmup_ns: int, sample_ns: int) -> tuple[int, int, int]:
    n, spent = 1, 0
    while True:
        t = timed(loop, n)
        spent += t
        if t * 2 >= sample_ns:
            if spent >= warmup_ns:
                return n, t, spent
        else:
            n *= 2


def timed(loop: Loop, n: int) -> int:
    clock = time.perf_counter_ns
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
