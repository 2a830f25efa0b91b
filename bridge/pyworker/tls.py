"""The Python worker's TLS handshake (the tls scenario kind).

Client and server are ssl.SSLObject pairs over ssl.MemoryBIO, in one thread:
no socket at all, so nothing listens. One call is a full handshake on a fresh
pair (no session reuse): the bytes each side writes are handed to the other
until both have finished. The group and the cipher suite are the only ones
offered (bridge.catalog.vocab.TLS_VERSIONS, TLS_GROUPS), so the output, the
negotiated protocol and suite, is what every runtime must give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bridge.catalog import vocab
from bridge.errors import OperationError

# A handshake is a few round trips; a pair that has not finished after this
# many exchanges is stuck, not slow.
MAX_ROUNDS = 20
SERVER_NAME = "localhost"


def contexts(args: dict[str, Any], version: str) -> tuple[Any, Any]:
    """(server, client) contexts for one protocol version, made once per cell."""
    import ssl

    spec, group = vocab.TLS_VERSIONS[version], _group(args)
    cert, key, ca = _path(args, "cert"), _path(args, "cert_key"), _path(args, "ca")
    pinned = ssl.TLSVersion.TLSv1_3 if version == "1.3" else ssl.TLSVersion.TLSv1_2
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for ctx in (server, client):
        ctx.minimum_version = ctx.maximum_version = pinned
        if version == "1.2":
            ctx.set_ciphers(spec.suite)
        # No tickets: every call is a full handshake on its own.
        ctx.options |= ssl.OP_NO_TICKET
    # TLS 1.3 servers send tickets after the handshake unless told not to (as
    # s_server -num_tickets 0; Erlang's ssl sends none by default).
    server.num_tickets = 0
    try:
        server.load_cert_chain(cert, key)
        client.load_verify_locations(ca)
        # The server accepts the one group (SSL_CTX_set1_groups in OpenSSL 3;
        # the ECDH curve before). A TLS 1.3 client offers it alone, so that no
        # HelloRetryRequest is added; a TLS 1.2 client keeps its default list,
        # since there the certificate's curve (P-256) must be in it too.
        _one_group(server, group.openssl)
        if version == "1.3":
            _one_group(client, group.openssl)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise OperationError("failed", f"TLS set-up: {exc}") from None
    # Python cannot choose TLS 1.3 suites: OpenSSL's default list starts with
    # the suite every runtime is given, and the output says if it did not.
    return server, client


def _one_group(ctx: Any, name: str) -> None:
    """set_ecdh_curve: through SSL_CTX_set1_groups where CPython has it; the
    ssl module of Python 3.10 sets an EC curve only, and refuses X25519
    ("unknown group"). X25519 is OpenSSL's first default group, so there
    the default list gives the same exchange."""
    import ssl

    try:
        ctx.set_ecdh_curve(name)
    except (ssl.SSLError, ValueError):
        if name.upper() != "X25519":
            raise


def handshake(server_ctx: Any, client_ctx: Any) -> tuple[str, str]:
    """One full handshake; (protocol, cipher suite) as the client saw them."""
    import ssl

    s_in, s_out, c_in, c_out = (ssl.MemoryBIO() for _ in range(4))
    server = server_ctx.wrap_bio(s_in, s_out, server_side=True)
    client = client_ctx.wrap_bio(c_in, c_out, server_hostname=SERVER_NAME)
    done_c = done_s = False
    for _ in range(MAX_ROUNDS):
        if not done_c:
            done_c = _step(client)
        s_in.write(c_out.read())
        if not done_s:
            done_s = _step(server)
        c_in.write(s_out.read())
        if done_c and done_s:
            cipher = client.cipher()
            return str(client.version()), str(cipher[0] if cipher else "")
    raise OperationError("failed", f"TLS handshake did not finish in {MAX_ROUNDS} exchanges")


def _step(obj: Any) -> bool:
    import ssl

    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        return False
    except ssl.SSLError as exc:
        raise OperationError("failed", f"TLS handshake: {exc}") from None
    return True


def prepare(args: dict[str, Any], version: str) -> tuple[str, Callable[[], bytes], Callable]:
    server, client = contexts(args, version)

    def once() -> bytes:
        protocol, suite = handshake(server, client)
        return f"{protocol} {suite}".encode()

    def loop(n: int) -> None:
        for _ in range(n):
            handshake(server, client)

    return "ssl.SSLObject.do_handshake (client and server, memory BIOs)", once, loop


def _group(args: dict[str, Any]) -> vocab.TlsGroup:
    name = args.get("group")
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    if not isinstance(name, str) or name not in vocab.TLS_GROUPS:
        raise OperationError("bad_request", "unknown TLS group")
    return vocab.TLS_GROUPS[name]


def _path(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str) or not value:
        raise OperationError("bad_request", f"missing argument: {key}")
    return value
