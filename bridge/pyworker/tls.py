"""The Python worker's TLS handshakes (the tls scenario kind).

Client and server are ssl.SSLObject pairs over ssl.MemoryBIO, in one thread:
no socket at all, so nothing listens. One call is a handshake on a fresh
pair: the bytes each side writes are handed to the other until both have
finished. A full handshake offers no session; a resumed one offers the
session of a full handshake made when the cell is prepared (a TLS 1.3
ticket, a TLS 1.2 session ID), the same on every call. Each side offers one
version, one suite and one group (bridge.catalog.vocab), so what the output
reports (bridge.catalog.negotiated) is what every runtime must give.

The server's CPU per handshake: client and server share the thread, so the
server's share is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID, ns) over
the server's own calls alone, summed (`Handshakes.server_cpu_ns`, read around
each sample). A server in a thread of its own would share the GIL and the
process's counters; in a process of its own it would add a socket the other
two runtimes' servers have but this one's memory BIOs do not. The two clock
reads per server step cost about 1 us of a 1-2 ms handshake.

Python's ssl names neither the group nor the signature scheme; the probe
call (`once`) reads them off the handshake messages the client received
(SSLContext._msg_callback, in CPython since 3.8), and leaves them out where
that hook is missing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from bridge.catalog import negotiated, vocab
from bridge.errors import OperationError

# A handshake is a few round trips; a pair that has not finished after this
# many exchanges is stuck, not slow.
MAX_ROUNDS = 20
SERVER_NAME = "localhost"
# TLS handshake message types (RFC 8446 4) and the extension that carries the
# TLS 1.3 key share.
SERVER_HELLO, SERVER_KEY_EXCHANGE, CERTIFICATE_VERIFY = 2, 12, 15
KEY_SHARE = 0x0033
_PROBES = threading.Lock()


class Handshakes:
    """A cell's two contexts, and the server's CPU time over its calls."""

    def __init__(self, server: Any, client: Any) -> None:
        self.server, self.client = server, client
        self.session: Any = None  # the session a resumed call offers
        self.server_ns = 0

    def server_cpu_ns(self) -> int:
        return self.server_ns

    def one(self, seen: Seen | None = None) -> tuple[Any, Any]:
        """One handshake; the (server, client) SSLObjects after it. `seen`
        reads the messages this handshake's client receives."""
        import ssl

        s_in, s_out, c_in, c_out = (ssl.MemoryBIO() for _ in range(4))
        server = self.server.wrap_bio(s_in, s_out, server_side=True)
        client = self.client.wrap_bio(
            c_in, c_out, server_hostname=SERVER_NAME, session=self.session
        )
        if seen is not None:
            seen.conn = client
        clock = time.thread_time_ns
        done_c = done_s = False
        for _ in range(MAX_ROUNDS):
            if not done_c:
                done_c = _step(client)
            s_in.write(c_out.read())
            if not done_s:
                t0 = clock()
                done_s = _step(server)
                if done_s:
                    _close(server)
                self.server_ns += clock() - t0
            c_in.write(s_out.read())
            if done_c and done_s:
                return server, client
        raise OperationError("failed", f"TLS handshake did not finish in {MAX_ROUNDS} exchanges")

    def __call__(self, n: int) -> None:
        """The timed loop: n handshakes; a resumed call's each resumed."""
        for _ in range(n):
            _, client = self.one()
            if self.session is not None and not client.session_reused:
                raise OperationError("failed", "a handshake offered the session and did not resume")


def contexts(args: dict[str, Any], version: str) -> tuple[Any, Any]:
    """(server, client) contexts for one protocol version, made once per cell."""
    import ssl

    group, cert = _group(args), _cert(args)
    resumption, mutual = _flag(args, "resumption"), _flag(args, "client_auth")
    pinned = ssl.TLSVersion.TLSv1_3 if version == "1.3" else ssl.TLSVersion.TLSv1_2
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for ctx in (server, client):
        ctx.minimum_version = ctx.maximum_version = pinned
        if version == "1.2":
            ctx.set_ciphers(cert.suite12)
            # TLS 1.2 resumes by session ID, as the other runtimes' servers do.
            ctx.options |= ssl.OP_NO_TICKET
    # TLS 1.3 servers send tickets after the handshake unless told not to (as
    # s_server -num_tickets; Erlang's ssl sends none unless asked). Stateless
    # tickets, as Erlang's and s_server's: OP_NO_TICKET would make them stateful.
    server.num_tickets = 1 if resumption and version == "1.3" else 0
    try:
        server.load_cert_chain(_path(args, "cert"), _path(args, "cert_key"))
        client.load_verify_locations(_path(args, "ca"))
        if mutual:
            server.verify_mode = ssl.CERT_REQUIRED
            server.load_verify_locations(_path(args, "client_ca"))
            client.load_cert_chain(_path(args, "client_cert"), _path(args, "client_key"))
        # TLS 1.3: each side offers the one group (SSL_CTX_set1_groups in
        # OpenSSL 3; the ECDH curve before), so that no HelloRetryRequest is
        # added. TLS 1.2: an ECDSA certificate's curve (P-256) must be among
        # the groups of the side that verifies it, the client's or, with
        # mutual TLS, the server's; set_ecdh_curve sets one group only, so
        # there both sides keep OpenSSL's default list (X25519 first, P-256
        # second) for X25519, and P-256 alone for P-256.
        if version == "1.3" or group.name != "x25519":
            _one_group(server, group.openssl)
        if version == "1.3":
            _one_group(client, group.openssl)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise OperationError("failed", f"TLS set-up: {exc}") from None
    # Python can choose neither the TLS 1.3 suite nor the signature scheme:
    # OpenSSL's defaults put the ones every runtime is given first, and the
    # output says if they were not chosen.
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


def _step(obj: Any) -> bool:
    import ssl

    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        return False
    except ssl.SSLError as exc:
        raise OperationError("failed", f"TLS handshake: {exc}") from None
    return True


def _close(server: Any) -> None:
    """The server's close_notify, as a server that closes a connection sends
    it: OpenSSL drops a TLS 1.2 session from its cache when a connection is
    freed without one, and no later handshake could resume it."""
    import ssl

    try:
        server.unwrap()
    except ssl.SSLWantReadError:
        pass  # the client's close_notify is not waited for
    except ssl.SSLError as exc:
        raise OperationError("failed", f"TLS close: {exc}") from None


def _session(hs: Handshakes, version: str) -> Any:
    """The session a resumed call offers: a full handshake's; in TLS 1.3 once
    the client has read what the server sent after it (the ticket comes then;
    a TLS 1.2 session read so no longer resumes)."""
    import ssl

    _, client = hs.one()
    try:
        if version == "1.3":
            client.read(1)
    except ssl.SSLWantReadError:
        pass
    except ssl.SSLError as exc:
        raise OperationError("failed", f"TLS session for resumption: {exc}") from None
    session = client.session
    if session is None or not (session.has_ticket or session.id):
        raise OperationError("failed", "the full handshake left no session to resume")
    return session


def prepare(
    args: dict[str, Any], version: str, resumed: bool
) -> tuple[str, Callable[[], bytes], Handshakes]:
    hs = Handshakes(*contexts(args, version))
    if resumed:
        hs.session = _session(hs, version)

    def once() -> bytes:
        # The hook is the context's, which --concurrency's threads share:
        # one probe at a time, and it reads its own handshake's messages only.
        with _PROBES:
            seen = Seen()
            hook = seen.hook(hs.client)
            try:
                server, client = hs.one(seen)
            finally:
                hook()
        return negotiated.encode(_fields(server, client, seen))

    sides = "resumed, client and server" if resumed else "client and server"
    return f"ssl.SSLObject.do_handshake ({sides}, memory BIOs)", once, hs


def _fields(server: Any, client: Any, seen: Seen) -> dict[str, str]:
    cipher = client.cipher()
    peer, theirs = client.getpeercert(True), server.getpeercert(True)
    fields = {
        "protocol": str(client.version()),
        "suite": str(cipher[0] if cipher else ""),
        "cert": negotiated.fingerprint(peer) if peer else negotiated.NONE,
        "resumed": negotiated.YES if client.session_reused else negotiated.NO,
        "client_cert": negotiated.fingerprint(theirs) if theirs else negotiated.NONE,
    }
    if seen.on:
        fields["group"] = seen.group or negotiated.NONE
        fields["sigalg"] = seen.sigalg or negotiated.NONE
    return fields


class Seen:
    """The group and the server's signature scheme, read off the handshake
    messages the client receives (ServerHello's key share in TLS 1.3, the
    ServerKeyExchange in 1.2; the CertificateVerify in 1.3)."""

    def __init__(self) -> None:
        self.on = False
        self.conn: Any = None  # the client whose messages count (others are ignored)
        self.group = ""
        self.sigalg = ""

    def hook(self, ctx: Any) -> Callable[[], None]:
        """Watch the context's handshakes; returns what stops watching."""
        if not hasattr(ctx, "_msg_callback"):
            return lambda: None
        ctx._msg_callback = self.message
        self.on = True

        def off() -> None:
            ctx._msg_callback = None

        return off

    def message(
        self, conn: Any, direction: str, version: Any, content: Any, kind: Any, data: bytes
    ):
        if direction != "read" or int(content) != 22:  # handshake messages received
            return
        if self.conn is not None and conn is not self.conn:
            return
        # A message this reader does not know leaves the fields empty.
        with contextlib.suppress(IndexError, ValueError):
            self.read(int(kind), bytes(data))

    def read(self, kind: int, msg: bytes) -> None:
        body = msg[4:]  # type (1 byte) and length (3 bytes) first
        if kind == SERVER_HELLO:
            group = _key_share(body)
            if group is not None:
                self.group = _named(vocab.TLS_GROUP_CODES, group)
        elif kind == SERVER_KEY_EXCHANGE and body[0] == 3:  # named_curve
            self.group = _named(vocab.TLS_GROUP_CODES, int.from_bytes(body[1:3], "big"))
            at = 4 + body[3]  # past the curve and the public point
            self.sigalg = _named(vocab.TLS_SIGALG_CODES, int.from_bytes(body[at : at + 2], "big"))
        elif kind == CERTIFICATE_VERIFY:
            self.sigalg = _named(vocab.TLS_SIGALG_CODES, int.from_bytes(body[:2], "big"))


def _key_share(body: bytes) -> int | None:
    """The group of a ServerHello's key_share extension (TLS 1.3), if any."""
    at = 2 + 32  # legacy_version, random
    at += 1 + body[at]  # session id
    at += 2 + 1  # cipher suite, compression
    if at + 2 > len(body):
        return None  # TLS 1.2 without extensions
    end = at + 2 + int.from_bytes(body[at : at + 2], "big")
    at += 2
    while at + 4 <= end:
        kind, size = (
            int.from_bytes(body[at : at + 2], "big"),
            int.from_bytes(body[at + 2 : at + 4], "big"),
        )
        if kind == KEY_SHARE:
            return int.from_bytes(body[at + 4 : at + 6], "big")
        at += 4 + size
    return None


def _named(table: dict[int, str], code: int) -> str:
    return table.get(code, f"0x{code:04x}")


def _group(args: dict[str, Any]) -> vocab.TlsGroup:
    return vocab.TLS_GROUPS[_choice(args, "group", vocab.TLS_GROUPS, "TLS group")]


def _cert(args: dict[str, Any]) -> vocab.TlsCert:
    return vocab.TLS_CERTS[_choice(args, "tls_cert", vocab.TLS_CERTS, "certificate type")]


def _choice(args: dict[str, Any], key: str, table: dict[str, Any], what: str) -> str:
    name = args.get(key)
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    if not isinstance(name, str) or name not in table:
        raise OperationError("bad_request", f"unknown {what}")
    return name


def _flag(args: dict[str, Any], key: str) -> bool:
    return args.get(key, 0) in (1, True)


def _path(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str) or not value:
        raise OperationError("bad_request", f"missing argument: {key}")
    return value
