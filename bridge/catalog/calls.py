"""The closed set of calls bridge can time, per runtime kind.

A scenario file names calls from this table and nothing else: it cannot make
any runtime run anything that is not listed here. Each entry says, by
keyword, everything bridge knows about the call:

- `op`: the operation the runtime performs. Each runtime registers one
  handler per operation (erl/bridge_loops.erl and bridge/pyworker/ops.py in the
  workers, bridge/runtimes/openssl.py for the CLI), so adding a call is an
  entry here plus one handler in each runtime it runs in;
- `kinds`: the scenario kinds it serves;
- `semantics`: what one timed operation includes, shown beside every
  number so unlike things are not compared silently;
- `label`: how a user would write it;
- `check`: how its output is checked, and `randomised` when two calls give
  different bytes by design (ECDSA signatures);
- `unchecked`: why a call's output is not checked at all, when it is not
  (openssl speed computes on its own inputs; a set-up alone has no output);
- `role`: sign, verify, key generation, set-up and whole-process rows are
  each compared only with their own kind;
- `route`: for Python, which provenance flag says whether the call reaches
  OpenSSL (and so whether a capability mask can reach it);
- `part`: the call times a part of another (the hmac-parts scenario), so it
  is never compared as "the fastest"; a part whose output is no MAC has
  `check=Check.PART` and is listed as unchecked.
- `requires`: the release that added the function, where some supported
  release lacks it (shown by `bridge show`; the runtime itself decides, and
  says so in an `unsupported` result);
- `opt_in`: an alternative people weigh against the built-in call (rand:bytes
  against strong_rand_bytes, PBKDF2 written over crypto:mac, public_key
  against crypto): no built-in scenario runs it; `bridge run --with ID` or a
  scenario file's [calls] adds it, and `bridge list` names it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from bridge.catalog import vocab
from bridge.catalog.vocab import RuntimeKind

ONE_SHOT_MAC = "one-shot: key set up on every call"
REUSED_KEY = "reused key: key schedule once, keyed state copied per call"
SPEED_HMAC = "reused context: openssl speed sets the key once, then re-inits per call"
ONE_SHOT_HASH = "one-shot: new digest context per call"
SPEED_DIGEST = "one-shot EVP_Digest per call, digest fetched once"
SPEED_PLAIN = (
    "openssl speed without -evp: the digest's own (pre-EVP) code path in 1.x;"
    " in 3.x the same EVP path as -evp"
)
FILE_STREAM = "streaming digest of a file in the page cache: reads plus hashing, one file per call"
FILE_PROCESS = "whole process: start-up, reading the file and hashing (like `time openssl dgst`)"
VERIFY = "one call: hash the message and verify a signature made elsewhere"
SPEED_SIGN = "openssl speed: signs a fixed 20-byte digest with its own key (no message hashing)"
SPEED_VERIFY = "openssl speed: verifies its own signature of a fixed digest (no message hashing)"
ONE_SHOT_CIPHER = "one-shot: key schedule and cipher context set up on every call"
SPEED_CIPHER = (
    "openssl speed -evp: the cipher is keyed once and each call is one update"
    " (AEAD modes re-initialise per call)"
)
# The parts of an HMAC call (the hmac-parts scenario): what each timed loop
# holds instead of a whole MAC.
PART_KEY = (
    "part: the key set-up alone (a MAC context keyed for the digest, with its fetches"
    " and the key schedule), no message, no final"
)
PART_HASH = "part: a plain digest of the same message (a fresh digest context, no key)"
PART_FLOOR = (
    "floor: crypto:exor/2 of two MAC-sized binaries, a crypto NIF that touches no OpenSSL"
    " state (the call and the result binary every MAC call pays)"
)
PART_COPY = "part of the reused-key call: copy() of the keyed state alone"
PART_UPDATE = "part of the reused-key call: copy() and update(data), no digest"
PART_DIGEST = (
    "part of the reused-key call: digest() alone, on a keyed state that holds the message"
    " (it copies the state, then finishes the copy)"
)
STREAM_MAC = (
    "streaming API per message: mac_init + mac_update + mac_finalN; crypto can neither reuse"
    " a keyed state after mac_finalN nor copy one, so the key is set up every time"
)
RANDOM_CSPRNG = "one call: N bytes from OpenSSL's DRBG (RAND_bytes)"
RANDOM_KERNEL = "one call: N bytes from the kernel (getrandom), not OpenSSL"
SPEED_RAND = "openssl speed rand: RAND_bytes into its own buffer, in one process"
KDF_CALL = "one call: the whole derivation (iterations x HMAC, key set up once per call)"
KDF_PROCESS = "whole process: start-up plus the derivation (like `time openssl kdf`)"
REUSED_AEAD = (
    "reused context: the key is set up once; each call takes a new nonce and seals one"
    " packet with its tag"
)
SPEED_AEAD = (
    "openssl speed -aead: the key is set once; each call sets a new IV, adds 13 bytes of"
    " AAD, seals one packet and makes the tag (TLS-like)"
)
SETUP_AEAD = "set-up alone: the keyed AEAD context a one-shot call builds every time"
IMPORT_KEY = "set-up alone: a private key imported into a libcrypto key object (no signing)"
SIGN_PREPARED = "one call: hash the message and sign it with a key object made once"
SIGN_IMPORT = "one call: import the private key (PKCS#8 DER), then hash and sign"
SIGN_RAW = (
    "one call: import the raw private key (crypto passes keys as terms), hash the message"
    " and sign it"
)
SIGN_DETERMINISTIC = "one call: sign the message with a key object made once (deterministic)"
SPEED_SIGN_KIND = {
    "eddsa": "openssl speed: signs a fixed 20-byte message with its own key",
    "rsa": "openssl speed: signs a fixed 36-byte input (PKCS#1 v1.5) with its own prepared key",
}
SPEED_VERIFY_KIND = {
    "eddsa": "openssl speed: verifies its own signature of a fixed 20-byte message",
    "rsa": "openssl speed: verifies its own PKCS#1 v1.5 signature with its prepared key",
}
AGREE_STATIC = (
    "one call: the shared secret from key objects made once (this side's private key, the"
    " peer's public key)"
)
AGREE_STATIC_RAW = (
    "one call: import both raw keys (crypto passes keys as terms), then derive the shared secret"
)
AGREE_FRESH = (
    "one call: a fresh key pair, then the shared secret with the peer's public key"
    " (an ephemeral exchange, as in TLS)"
)
SPEED_AGREE = "openssl speed: derives a shared secret from its own prepared key pairs"
# The opt-in alternatives (erl/bridge_alt.erl).
RANDOM_RAND = (
    "one call: N bytes from the rand module's default generator (exsss, per process):"
    " fast, not cryptographically strong, no OpenSSL"
)
KDF_OVER_MAC = (
    "one call: the whole derivation written in Erlang, one crypto:mac/4 per iteration"
    " (the key set up on every iteration, as PBKDF2 libraries before pbkdf2_hmac/5 do)"
)
KDF_OVER_STREAM = (
    "one call: the whole derivation written in Erlang, one mac_init + mac_update +"
    " mac_final per iteration (the key set up on every iteration)"
)
STREAM_HASH = "streaming API per message: hash_init + hash_update + hash_final"
SIGN_PK = (
    "one call: public_key:sign/3 hashes the message and signs it with an #'ECPrivateKey'{}"
    " record made once (how JOSE libraries sign)"
)
VERIFY_PK = (
    "one call: public_key:verify/4 hashes the message and verifies with an"
    " {#'ECPoint'{}, Params} key made once (how JOSE libraries verify)"
)
# Why an output is not checked (Call.unchecked).
OWN_INPUTS = "openssl speed works on its own key and buffer"
NO_AEAD_CLI = "openssl enc has no AEAD mode, and openssl speed seals its own buffer"
SETUP_ONLY = "a set-up alone has no output"
# The tls kind: one handshake per call, over loopback or memory. Each side
# offers one version, suite, group and signature scheme per key type, and
# the output is what was negotiated (bridge.catalog.negotiated).
TLS_PYTHON = (
    "one call: a handshake of an ssl client and server in one thread over memory BIOs (no"
    " socket), a fresh pair per call, both sides on one core. Server CPU: the thread's CPU"
    " time in the server's own calls."
)
TLS_ERLANG = (
    "one call: ssl:connect (verify_peer) to a server node of the same release and libcrypto"
    " on 127.0.0.1, then close: both nodes' work and the loopback TCP connection. Server"
    " CPU: every thread of the server node (schedstat)."
)
TLS_OPENSSL = (
    "openssl s_time against s_server on 127.0.0.1: two processes, TCP connect and close,"
    " s_time's start-up once per sample. Server CPU: s_server's CPU time."
)
TLS_RESUMED = " Resumed: the session of one earlier full handshake, offered on every call."
# What openssl does beside the handshake where a scenario resumes.
TLS_WWW = (
    " Where a scenario resumes, each connection also fetches a 2-byte file (-www): s_time"
    " reads TLS 1.3 tickets only so."
)


class Check(enum.Enum):
    """How the driver checks a call's output."""

    REFERENCE = "reference"  # equal to the driver's reference bytes
    SIGNATURE = "signature"  # a fresh signature: the driver's ECDSA/RSA-PSS must accept it
    ACCEPTS = "accepts"  # a verify call: it must accept the driver's signature (01)
    PART = "part"  # a part of a call, timed to take its cost apart: its output is no MAC
    # Random bytes: the output is two consecutive outputs of the call, each of
    # the length asked for, and they must differ.
    DISTINCT = "distinct"
    # An ephemeral key agreement: the output is the runtime's fresh public key
    # followed by the secret; the driver derives the secret again from that
    # public key and its own peer key.
    AGREEMENT = "agreement"
    # A TLS handshake: the output is what it negotiated, each word as the
    # scenario makes every side offer (bridge.catalog.negotiated).
    NEGOTIATED = "negotiated"


class Route(enum.Enum):
    """Whether a call reaches libcrypto, as the runtime's provenance tells."""

    LIBCRYPTO = "libcrypto"  # always (Erlang crypto, cryptography, the openssl CLI)
    HASHLIB = "hashlib"  # Python hashlib: OpenSSL, or built-in code (hashlib_uses_openssl)
    HMAC = "hmac"  # Python hmac: OpenSSL's HMAC, or hmac over hashlib (hmac_impl)
    KERNEL = "kernel"  # the operating system's generator: never OpenSSL
    OWN = "own"  # the runtime's own code (Erlang's rand module): never OpenSSL


class Described(Protocol):
    """What a call's label and semantics read of a scenario. Each label reads
    the fields of the scenario kinds it serves (a MAC label `mac_bytes`, a
    cipher label `cipher`...), so this says only what every kind has; the
    scenario records (bridge.catalog.scenario) import this module, not the
    other way round."""

    @property
    def kind(self) -> str: ...

    def __getattr__(self, name: str) -> Any: ...


Label = Callable[[Described, str], str]  # (scenario, api the runtime reported) -> text


@dataclass(frozen=True, kw_only=True)
class Call:
    runtime: RuntimeKind
    id: str  # what a scenario file writes
    op: str  # the operation the runtime's handler performs
    kinds: frozenset[str]
    semantics: str | Mapping[str, str]  # one text, or one per scenario kind
    label: Label
    check: Check = Check.REFERENCE
    randomised: bool = False
    unchecked: str = ""  # why the output is not checked, when it is not
    # sign | verify | setup | keygen (a fresh key pair per call) | process (a
    # whole process per call) | "": rows of different roles are compared apart.
    role: str = ""
    route: Route = Route.LIBCRYPTO
    timer_tc: bool = False  # --method tc can time it (the thread's harness)
    part: bool = False  # times a part of another call (hmac-parts): never "the fastest"
    requires: str = ""  # e.g. "OTP 24.2": the release that added the function
    opt_in: bool = False  # an alternative: only `--with ID` or a scenario file runs it
    # A user call (bridge.catalog.usercode): the key that names its expression
    # to a runtime started with it; "" for every call of the table.
    user: str = ""

    def semantics_for(self, sc: Described) -> str:
        if isinstance(self.semantics, str):
            return self.semantics
        return self.semantics[sc.kind]


# -- labels ------------------------------------------------------------------


def _erl_digest(sc: Described) -> str:
    return vocab.DIGESTS[sc.digest].erlang


def _erl_mac_label(sc, api: str) -> str:
    d, n = _erl_digest(sc), sc.mac_bytes
    # Before a worker has said which API this OTP has, show the modern one.
    api = api or ("crypto:macN/5" if n else "crypto:mac/4")
    return {
        "crypto:macN/5": f"crypto:macN(hmac, {d}, Key, Data, {n})",
        "crypto:mac/4": f"crypto:mac(hmac, {d}, Key, Data)",
        "crypto:hmac/4": f"crypto:hmac({d}, Key, Data, {n})",
        "crypto:hmac/3": f"crypto:hmac({d}, Key, Data)",
    }.get(api, api or "crypto:macN")


def _erl_stream_label(sc, api: str) -> str:
    d, n = _erl_digest(sc), sc.mac_bytes
    final = f"crypto:mac_finalN(S, {n})" if n else "crypto:mac_final(S)"
    return f"S = crypto:mac_init(hmac, {d}, Key), crypto:mac_update(S, Data), {final}"


def _erl_cipher_label(sc, api: str) -> str:
    atom = sc.spec.erlang
    if api == "crypto:block_encrypt/4":
        return f"crypto:block_encrypt({atom}, Key, IV, Data)"
    if sc.spec.aead:
        return f"crypto:crypto_one_time_aead({atom}, Key, IV, Data, <<>>, 16, true)"
    return f"crypto:crypto_one_time({atom}, Key, IV, Data, true)"


def _py_cipher_label(sc, api: str) -> str:
    if sc.spec.aead:
        return f"{sc.spec.python}(key).encrypt(nonce, data, None)"
    return "Cipher(AES(key), CBC(iv)).encryptor() .update(data) + .finalize()"


def _erl_rsa_label(role: str, pss: bool) -> Label:
    def label(sc, api: str) -> str:
        d = _erl_digest(sc)
        head = (
            f"crypto:sign(rsa, {d}, Msg, Priv"
            if role == "sign"
            else (f"crypto:verify(rsa, {d}, Msg, Sig, Pub")
        )
        if not pss:
            return head + ")"
        opts = f"[{{rsa_padding, rsa_pkcs1_pss_padding}}, {{rsa_pss_saltlen, {sc.salt_bytes}}}]"
        return f"{head}, {opts})"

    return label


def _py_rsa_label(role: str, pss: bool, load: bool = False) -> Label:
    def label(sc, api: str) -> str:
        h = f"{sc.digest.upper()}()"
        padding = f"PSS(MGF1({h}), {sc.salt_bytes})" if pss else "PKCS1v15()"
        if role == "verify":
            return f"pub.verify(sig, msg, {padding}, {h})"
        key = "load_der_private_key(der, None)" if load else "key"
        return f"{key}.sign(msg, {padding}, {h})"

    return label


def _py_exchange_label(fresh: bool) -> Label:
    def label(sc, api: str) -> str:
        if sc.curve == "x25519":
            key = "X25519PrivateKey.generate()" if fresh else "key"
            return f"{key}.exchange(peer)"
        key = "generate_private_key(SECP256R1())" if fresh else "key"
        return f"{key}.exchange(ECDH(), peer)"

    return label


def _speed_pkey_label(role: str) -> Label:
    def label(sc, api: str) -> str:
        if sc.kind == EDDSA:
            algorithm = vocab.ED_CURVES[sc.curve].speed
        elif sc.kind == RSA:
            algorithm = vocab.RSA_SPEED[sc.bits]
        else:
            algorithm = _curve(sc).speed
        return f"openssl speed {algorithm} ({role})"

    return label


def _cut(sc) -> str:
    return f"[:{sc.mac_bytes}]" if sc.mac_bytes else ""


def _mac_size(sc) -> int:
    return sc.mac_bytes or vocab.DIGESTS[sc.digest].size


def _speed_label(sc, api: str) -> str:
    if sc.kind == "mac":
        return f"openssl speed -hmac {sc.digest}"
    return f"openssl speed {sc.digest}"


def _curve(sc) -> vocab.Curve:
    return vocab.CURVES[sc.curve]


# -- the table ---------------------------------------------------------------

MAC, HASH, CIPHER, SIGNATURE, FILE = "mac", "hash", "cipher", "sign", "file-digest"
RANDOM, KDF, EDDSA, RSA, AGREE = "random", "kdf", "eddsa", "rsa", "agreement"
TLS = "tls"
# The operation of each TLS call (the same in every runtime): its protocol version.
TLS_OPS = {"tls13": "1.3", "tls12": "1.2", "tls13_resume": "1.3", "tls12_resume": "1.2"}
# The operations that resume a session rather than make a full handshake.
TLS_RESUME_OPS = frozenset({"tls13_resume", "tls12_resume"})


def _fixed_label(text: str) -> Label:
    return lambda sc, api: text


def _tls_calls() -> tuple[Call, ...]:
    """handshake-V (a full handshake) and resume-V (a resumed one) for each
    version V in each runtime; each is a role of its own, so a 1.3 row is
    compared with 1.3 rows of its kind only."""
    out = []
    labels: dict[RuntimeKind, str] = {
        RuntimeKind.ERLANG: "ssl:connect/4 + ssl:close/1, TLS {v}, against a server node",
        RuntimeKind.PYTHON: (
            "ssl.SSLObject.do_handshake, TLS {v}, client and server over memory BIOs"
        ),
        RuntimeKind.OPENSSL: "openssl s_time {flag}, TLS {v}, against openssl s_server",
    }
    semantics = {
        RuntimeKind.ERLANG: TLS_ERLANG,
        RuntimeKind.PYTHON: TLS_PYTHON,
        RuntimeKind.OPENSSL: TLS_OPENSSL,
    }
    for runtime in vocab.RUNTIME_KINDS:
        for op, version in TLS_OPS.items():
            resumed = op in TLS_RESUME_OPS
            name = f"{'resume' if resumed else 'handshake'}-{version}"
            flag = "-reuse" if resumed else "-new"
            label = labels[runtime].format(v=version, flag=flag)
            out.append(
                Call(
                    runtime=runtime,
                    id=name,
                    op=op,
                    kinds=frozenset({TLS}),
                    semantics=semantics[runtime]
                    + (TLS_RESUMED if resumed else "")
                    + (TLS_WWW if runtime == RuntimeKind.OPENSSL else ""),
                    label=_fixed_label(f"{label} (resumed)" if resumed else label),
                    role=name,
                    check=Check.NEGOTIATED,
                )
            )
    return tuple(out)


_TABLE = (
    # Erlang: operations of erl/bridge_loops.erl
    Call(
        runtime=RuntimeKind.ERLANG,
        id="macN",
        op="mac",
        kinds=frozenset({MAC}),
        semantics=ONE_SHOT_MAC,
        label=_erl_mac_label,
        timer_tc=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="mac_init",
        op="mac_stream",
        kinds=frozenset({MAC}),
        semantics=STREAM_MAC,
        label=_erl_stream_label,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="mac_init_only",
        op="mac_key",
        kinds=frozenset({MAC}),
        semantics=PART_KEY,
        part=True,
        label=lambda sc, api: f"crypto:mac_init(hmac, {_erl_digest(sc)}, Key)",
        check=Check.PART,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="hash_only",
        op="hash",
        kinds=frozenset({MAC}),
        semantics=PART_HASH,
        part=True,
        label=lambda sc, api: f"crypto:hash({_erl_digest(sc)}, Data)",
        check=Check.PART,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="nif_floor",
        op="nif_floor",
        kinds=frozenset({MAC}),
        semantics=PART_FLOOR,
        part=True,
        label=lambda sc, api: f"crypto:exor(M, M), M = {_mac_size(sc)} zero bytes",
        check=Check.PART,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="hash",
        op="hash",
        kinds=frozenset({HASH}),
        semantics=ONE_SHOT_HASH,
        label=lambda sc, api: f"crypto:hash({_erl_digest(sc)}, Data)",
        timer_tc=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="sign",
        op="sign",
        kinds=frozenset({SIGNATURE}),
        semantics=SIGN_RAW,
        label=lambda sc, api: f"crypto:sign(ecdsa, {sc.digest}, Msg, [Priv, {_curve(sc).erlang}])",
        check=Check.SIGNATURE,
        randomised=True,
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="verify",
        op="verify",
        kinds=frozenset({SIGNATURE}),
        semantics=VERIFY,
        label=lambda sc, api: (
            f"crypto:verify(ecdsa, {sc.digest}, Msg, Sig, [Pub, {_curve(sc).erlang}])"
        ),
        check=Check.ACCEPTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="hash_file",
        op="hash_file",
        kinds=frozenset({FILE}),
        semantics=FILE_STREAM,
        label=lambda sc, api: (
            f"crypto:hash_init({_erl_digest(sc)}) + hash_update per 64 KiB file:read + hash_final"
        ),
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="crypto_one_time",
        op="cipher",
        kinds=frozenset({CIPHER}),
        semantics=ONE_SHOT_CIPHER,
        label=_erl_cipher_label,
    ),
    # Python: operations of bridge/pyworker/ops.py
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hmac.digest",
        op="hmac.digest",
        kinds=frozenset({MAC}),
        semantics=ONE_SHOT_MAC,
        label=lambda sc, api: f"hmac.digest(key, data, '{sc.digest}'){_cut(sc)}",
        route=Route.HMAC,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hmac.new+copy",
        op="hmac.new+copy",
        kinds=frozenset({MAC}),
        semantics=REUSED_KEY,
        label=lambda sc, api: (
            f"hmac.new(key, digestmod='{sc.digest}').copy() .update(data) .digest(){_cut(sc)}"
        ),
        route=Route.HMAC,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hmac.copy",
        op="hmac.copy",
        kinds=frozenset({MAC}),
        semantics=PART_COPY,
        part=True,
        label=lambda sc, api: f"keyed.copy()  (keyed = hmac.new(key, digestmod='{sc.digest}'))",
        check=Check.PART,
        route=Route.HMAC,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hmac.copy+update",
        op="hmac.copy+update",
        kinds=frozenset({MAC}),
        semantics=PART_UPDATE,
        part=True,
        label=lambda sc, api: "keyed.copy() .update(data)",
        check=Check.PART,
        route=Route.HMAC,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hmac.digest()",
        op="hmac.digest_only",
        kinds=frozenset({MAC}),
        semantics=PART_DIGEST,
        part=True,
        label=lambda sc, api: f"h.digest(){_cut(sc)}  (h = hmac.new(key, data, '{sc.digest}'))",
        route=Route.HMAC,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hashlib_only",
        op="hashlib",
        kinds=frozenset({MAC}),
        semantics=PART_HASH,
        part=True,
        label=lambda sc, api: f"hashlib.{vocab.DIGESTS[sc.digest].hashlib}(data).digest()",
        check=Check.PART,
        route=Route.HASHLIB,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hashlib",
        op="hashlib",
        kinds=frozenset({HASH}),
        semantics=ONE_SHOT_HASH,
        label=lambda sc, api: f"hashlib.{vocab.DIGESTS[sc.digest].hashlib}(data).digest()",
        route=Route.HASHLIB,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="hashlib.new",
        op="hashlib.new",
        kinds=frozenset({HASH}),
        semantics=ONE_SHOT_HASH,
        label=lambda sc, api: f"hashlib.new('{vocab.DIGESTS[sc.digest].hashlib}', data).digest()",
        route=Route.HASHLIB,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="sign",
        op="ecdsa_sign",
        kinds=frozenset({SIGNATURE}),
        semantics=SIGN_PREPARED,
        label=lambda sc, api: f"key.sign(msg, ECDSA({sc.digest.upper()}()))",
        check=Check.SIGNATURE,
        randomised=True,
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="verify",
        op="ecdsa_verify",
        kinds=frozenset({SIGNATURE}),
        semantics=VERIFY,
        label=lambda sc, api: f"pub.verify(sig, msg, ECDSA({sc.digest.upper()}()))",
        check=Check.ACCEPTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="file_digest",
        op="file_digest",
        kinds=frozenset({FILE}),
        semantics=FILE_STREAM,
        label=lambda sc, api: f"hashlib.file_digest(f, '{sc.digest}')",
        route=Route.HASHLIB,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="cryptography",
        op="cryptography",
        kinds=frozenset({CIPHER}),
        semantics=ONE_SHOT_CIPHER,
        label=_py_cipher_label,
    ),
    # openssl: handlers of bridge/runtimes/openssl.py
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="speed",
        op="speed",
        kinds=frozenset({MAC, HASH}),
        semantics={MAC: SPEED_HMAC, HASH: SPEED_PLAIN},
        label=_speed_label,
    ),
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="speed-evp",
        op="speed-evp",
        kinds=frozenset({HASH, CIPHER}),
        semantics={HASH: SPEED_DIGEST, CIPHER: SPEED_CIPHER},
        label=lambda sc, api: f"openssl speed -evp {sc.algorithm}",
    ),
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="speed-sign",
        op="speed-pkey",
        kinds=frozenset({SIGNATURE, EDDSA, RSA}),
        semantics={SIGNATURE: SPEED_SIGN, **SPEED_SIGN_KIND},
        label=_speed_pkey_label("sign"),
        unchecked=OWN_INPUTS,
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="speed-verify",
        op="speed-pkey",
        kinds=frozenset({SIGNATURE, EDDSA, RSA}),
        semantics={SIGNATURE: SPEED_VERIFY, **SPEED_VERIFY_KIND},
        label=_speed_pkey_label("verify"),
        unchecked=OWN_INPUTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="dgst",
        op="dgst",
        kinds=frozenset({FILE}),
        semantics=FILE_PROCESS,
        role="process",
        label=lambda sc, api: f"openssl dgst -{sc.digest} FILE",
    ),
)

# The algorithms of issue 14: random bytes, PBKDF2, AEAD with a reused
# context, EdDSA, RSA, key agreement, and the set-up calls that the cost
# decomposition (bridge.analysis.decompose) times on their own.
_TABLE += (
    # -- Erlang ------------------------------------------------------------
    Call(
        runtime=RuntimeKind.ERLANG,
        id="strong_rand_bytes",
        op="rand_bytes",
        kinds=frozenset({RANDOM}),
        semantics=RANDOM_CSPRNG,
        label=lambda sc, api: "crypto:strong_rand_bytes(N)",
        check=Check.DISTINCT,
        randomised=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="pbkdf2_hmac",
        op="pbkdf2",
        kinds=frozenset({KDF}),
        semantics=KDF_CALL,
        label=lambda sc, api: (
            f"crypto:pbkdf2_hmac({_erl_digest(sc)}, Pass, Salt, Iterations, {sc.key_bytes})"
        ),
        requires="OTP 24.2",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="aead_init",
        op="aead_reuse",
        kinds=frozenset({CIPHER}),
        semantics=REUSED_AEAD,
        label=lambda sc, api: (
            f"S = crypto:crypto_one_time_aead_init({sc.spec.erlang}, Key, 16, true),"
            " crypto:crypto_one_time_aead(S, IV, Data, <<>>)"
        ),
        requires="OTP 28.0",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="aead_init_only",
        op="aead_setup",
        kinds=frozenset({CIPHER}),
        semantics=SETUP_AEAD,
        label=lambda sc, api: f"crypto:crypto_one_time_aead_init({sc.spec.erlang}, Key, 16, true)",
        unchecked=SETUP_ONLY,
        role="setup",
        requires="OTP 28.0",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="eddsa_sign",
        op="eddsa_sign",
        kinds=frozenset({EDDSA}),
        semantics=SIGN_RAW,
        label=lambda sc, api: f"crypto:sign(eddsa, none, Msg, [Priv, {sc.curve}])",
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="eddsa_verify",
        op="eddsa_verify",
        kinds=frozenset({EDDSA}),
        semantics=VERIFY,
        label=lambda sc, api: f"crypto:verify(eddsa, none, Msg, Sig, [Pub, {sc.curve}])",
        check=Check.ACCEPTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="sign_pkcs1",
        op="rsa_sign_pkcs1",
        kinds=frozenset({RSA}),
        semantics=SIGN_RAW,
        label=_erl_rsa_label("sign", pss=False),
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="verify_pkcs1",
        op="rsa_verify_pkcs1",
        kinds=frozenset({RSA}),
        semantics=VERIFY,
        label=_erl_rsa_label("verify", pss=False),
        check=Check.ACCEPTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="sign_pss",
        op="rsa_sign_pss",
        kinds=frozenset({RSA}),
        semantics=SIGN_RAW,
        label=_erl_rsa_label("sign", pss=True),
        check=Check.SIGNATURE,
        randomised=True,
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="verify_pss",
        op="rsa_verify_pss",
        kinds=frozenset({RSA}),
        semantics=VERIFY,
        label=_erl_rsa_label("verify", pss=True),
        check=Check.ACCEPTS,
        role="verify",
    ),
    # The raw key turned into libcrypto's key and its public part read back:
    # the nearest thing to an import alone that Erlang offers (crypto has no
    # such call for EC keys: privkey_to_pubkey(ecdsa, ...) is notsup).
    Call(
        runtime=RuntimeKind.ERLANG,
        id="import",
        op="rsa_import",
        kinds=frozenset({RSA}),
        semantics=IMPORT_KEY,
        label=lambda sc, api: "crypto:privkey_to_pubkey(rsa, Priv)",
        role="setup",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="compute_key",
        op="agree",
        kinds=frozenset({AGREE}),
        semantics=AGREE_STATIC_RAW,
        label=lambda sc, api: f"crypto:compute_key(ecdh, PeerPub, Priv, {sc.spec.erlang})",
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="generate+compute",
        op="agree_fresh",
        kinds=frozenset({AGREE}),
        semantics=AGREE_FRESH,
        label=lambda sc, api: (
            f"{{Pub, Priv}} = crypto:generate_key(ecdh, {sc.spec.erlang}),"
            f" crypto:compute_key(ecdh, PeerPub, Priv, {sc.spec.erlang})"
        ),
        check=Check.AGREEMENT,
        randomised=True,
        role="keygen",
    ),
    # -- Erlang: the opt-in alternatives (erl/bridge_alt.erl) ---------------
    Call(
        runtime=RuntimeKind.ERLANG,
        id="rand_bytes",
        op="rand_bytes_rand",
        kinds=frozenset({RANDOM}),
        semantics=RANDOM_RAND,
        label=lambda sc, api: "rand:bytes(N)",
        check=Check.DISTINCT,
        randomised=True,
        route=Route.OWN,
        requires="OTP 24.1",
        opt_in=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="pbkdf2_mac",
        op="pbkdf2_mac",
        kinds=frozenset({KDF}),
        semantics=KDF_OVER_MAC,
        label=lambda sc, api: f"PBKDF2 over crypto:mac(hmac, {_erl_digest(sc)}, Pass, U)",
        opt_in=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="pbkdf2_mac_init",
        op="pbkdf2_mac_stream",
        kinds=frozenset({KDF}),
        semantics=KDF_OVER_STREAM,
        label=lambda sc, api: (
            f"PBKDF2 over crypto:mac_init(hmac, {_erl_digest(sc)}, Pass) + mac_update + mac_final"
        ),
        opt_in=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="hash_init",
        op="hash_stream",
        kinds=frozenset({HASH}),
        semantics=STREAM_HASH,
        label=lambda sc, api: (
            f"crypto:hash_final(crypto:hash_update(crypto:hash_init({_erl_digest(sc)}), Data))"
        ),
        opt_in=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="public_key:sign",
        op="pk_sign",
        kinds=frozenset({SIGNATURE}),
        semantics=SIGN_PK,
        label=lambda sc, api: f"public_key:sign(Msg, {sc.digest}, ECPrivateKey)",
        check=Check.SIGNATURE,
        randomised=True,
        role="sign",
        opt_in=True,
    ),
    Call(
        runtime=RuntimeKind.ERLANG,
        id="public_key:verify",
        op="pk_verify",
        kinds=frozenset({SIGNATURE}),
        semantics=VERIFY_PK,
        label=lambda sc, api: f"public_key:verify(Msg, {sc.digest}, Sig, {{ECPoint, Params}})",
        check=Check.ACCEPTS,
        role="verify",
        opt_in=True,
    ),
    # -- Python ------------------------------------------------------------
    Call(
        runtime=RuntimeKind.PYTHON,
        id="ssl.RAND_bytes",
        op="rand_bytes",
        kinds=frozenset({RANDOM}),
        semantics=RANDOM_CSPRNG,
        label=lambda sc, api: "ssl.RAND_bytes(n)",
        check=Check.DISTINCT,
        randomised=True,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="os.urandom",
        op="urandom",
        kinds=frozenset({RANDOM}),
        semantics=RANDOM_KERNEL,
        label=lambda sc, api: "os.urandom(n)",
        check=Check.DISTINCT,
        randomised=True,
        route=Route.KERNEL,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="pbkdf2_hmac",
        op="pbkdf2",
        kinds=frozenset({KDF}),
        semantics=KDF_CALL,
        label=lambda sc, api: (
            f"hashlib.pbkdf2_hmac('{sc.digest}', password, salt, iterations, {sc.key_bytes})"
        ),
        route=Route.HASHLIB,
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="aead-reuse",
        op="aead_reuse",
        kinds=frozenset({CIPHER}),
        semantics=REUSED_AEAD,
        label=lambda sc, api: f"aead.encrypt(nonce, data, None), aead = {sc.spec.python}(key) once",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="sign+load",
        op="ecdsa_sign_load",
        kinds=frozenset({SIGNATURE}),
        semantics=SIGN_IMPORT,
        label=lambda sc, api: (
            f"load_der_private_key(der, None).sign(msg, ECDSA({sc.digest.upper()}()))"
        ),
        check=Check.SIGNATURE,
        randomised=True,
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="load",
        op="key_load",
        kinds=frozenset({SIGNATURE, RSA}),
        semantics=IMPORT_KEY,
        label=lambda sc, api: "load_der_private_key(der, None)",
        unchecked=SETUP_ONLY,
        role="setup",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="eddsa_sign",
        op="eddsa_sign",
        kinds=frozenset({EDDSA}),
        semantics=SIGN_DETERMINISTIC,
        label=lambda sc, api: "key.sign(msg)",
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="eddsa_verify",
        op="eddsa_verify",
        kinds=frozenset({EDDSA}),
        semantics=VERIFY,
        label=lambda sc, api: "pub.verify(sig, msg)",
        check=Check.ACCEPTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="sign_pkcs1",
        op="rsa_sign_pkcs1",
        kinds=frozenset({RSA}),
        semantics=SIGN_PREPARED,
        label=_py_rsa_label("sign", pss=False),
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="sign_pkcs1+load",
        op="rsa_sign_pkcs1_load",
        kinds=frozenset({RSA}),
        semantics=SIGN_IMPORT,
        label=_py_rsa_label("sign", pss=False, load=True),
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="verify_pkcs1",
        op="rsa_verify_pkcs1",
        kinds=frozenset({RSA}),
        semantics=VERIFY,
        label=_py_rsa_label("verify", pss=False),
        check=Check.ACCEPTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="sign_pss",
        op="rsa_sign_pss",
        kinds=frozenset({RSA}),
        semantics=SIGN_PREPARED,
        label=_py_rsa_label("sign", pss=True),
        check=Check.SIGNATURE,
        randomised=True,
        role="sign",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="verify_pss",
        op="rsa_verify_pss",
        kinds=frozenset({RSA}),
        semantics=VERIFY,
        label=_py_rsa_label("verify", pss=True),
        check=Check.ACCEPTS,
        role="verify",
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="exchange",
        op="exchange",
        kinds=frozenset({AGREE}),
        semantics=AGREE_STATIC,
        label=_py_exchange_label(fresh=False),
    ),
    Call(
        runtime=RuntimeKind.PYTHON,
        id="generate+exchange",
        op="exchange_fresh",
        kinds=frozenset({AGREE}),
        semantics=AGREE_FRESH,
        label=_py_exchange_label(fresh=True),
        check=Check.AGREEMENT,
        randomised=True,
        role="keygen",
    ),
    # -- openssl -----------------------------------------------------------
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="speed-rand",
        op="speed-rand",
        kinds=frozenset({RANDOM}),
        semantics=SPEED_RAND,
        label=lambda sc, api: "openssl speed -bytes N rand",
        check=Check.DISTINCT,
        randomised=True,
    ),
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="kdf",
        op="kdf",
        kinds=frozenset({KDF}),
        semantics=KDF_PROCESS,
        role="process",
        label=lambda sc, api: (
            f"openssl kdf -keylen {sc.key_bytes} -kdfopt digest:{sc.digest.upper()}"
            " -kdfopt pass:... -kdfopt salt:... -kdfopt iter:N PBKDF2"
        ),
        requires="OpenSSL 3.0",
    ),
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="speed-aead",
        op="speed-aead",
        kinds=frozenset({CIPHER}),
        semantics=SPEED_AEAD,
        label=lambda sc, api: f"openssl speed -aead -evp {sc.cipher}",
        unchecked=NO_AEAD_CLI,
    ),
    Call(
        runtime=RuntimeKind.OPENSSL,
        id="speed-ecdh",
        op="speed-pkey",
        kinds=frozenset({AGREE}),
        semantics=SPEED_AGREE,
        label=lambda sc, api: f"openssl speed {sc.spec.speed}",
        unchecked=OWN_INPUTS,
    ),
)

_TABLE += _tls_calls()
CALLS: dict[tuple[str, str], Call] = {(c.runtime, c.id): c for c in _TABLE}
# Operations that need an AEAD cipher: a cipher scenario of CBC may not name them.
AEAD_OPS = frozenset({"aead_reuse", "aead_setup", "speed-aead"})
RUNTIME_KINDS = vocab.RUNTIME_KINDS
USER_PREFIX = "expr:"  # bridge.catalog.usercode.PREFIX


def lookup(runtime: str, call_id: str) -> Call | None:
    """A call of the table; for a user call's id (expr:HEX, see
    bridge.catalog.usercode) a stand-in that says what every user call is:
    its label and semantics are in the result that names it."""
    if call_id.startswith(USER_PREFIX) and runtime in RUNTIME_KINDS:
        return Call(
            runtime=runtime,
            id=call_id,
            op="user",
            kinds=frozenset(),
            semantics="user code",
            label=lambda sc, api: call_id,
            randomised=True,
        )
    return CALLS.get((runtime, call_id))


def known(runtime: str) -> list[str]:
    return sorted(cid for (rt, cid) in CALLS if rt == runtime)


def opt_ins(runtime: str, kind: str) -> list[str]:
    """The opt-in alternatives of a runtime kind that serve a scenario kind."""
    return [c for c in serving(runtime, kind) if CALLS[runtime, c].opt_in]


def serving(runtime: str, kind: str) -> list[str]:
    """The call ids of a runtime kind that serve a scenario kind."""
    return [c for c in known(runtime) if kind in CALLS[runtime, c].kinds]


def is_part(runtime_kind: str, call_id: str) -> bool:
    """Does this call time a part of another (hmac-parts)? A part is not a
    competitor: it is never "the fastest", and its output is no MAC."""
    call = lookup(runtime_kind, call_id)
    return call is not None and call.part


def role(runtime_kind: str, call_id: str) -> str:
    """sign | verify | setup | keygen | process | "" for a result's call, also
    for imported calls (speed-sign/speed-verify) and ids this bridge no longer has."""
    call = lookup(runtime_kind, call_id)
    return call.role if call else ""


@dataclass(frozen=True)
class Handlers:
    """One runtime's handlers, keyed by operation: a runtime registers what
    it can do, and a call whose op it lacks is refused before anything runs."""

    runtime: str
    table: Mapping[str, Callable] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = {c.op for c in _TABLE if c.runtime == self.runtime} - set(self.table)
        if missing:
            raise TypeError(f"{self.runtime}: no handler for {', '.join(sorted(missing))}")

    def __getitem__(self, op: str) -> Callable:
        return self.table[op]
