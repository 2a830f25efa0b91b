"""The tls scenarios' certificates, made by `openssl req`/`x509` in a private
directory (the caller's, mode 0700) and removed with it.

For each certificate type a scenario names (bridge.catalog.vocab.TLS_CERTS),
a CA with a key of that type, made for the run, signs a certificate for
localhost with a key of the same type, as a real server's is signed (the
client checks that signature in every handshake; a self-signed CA
certificate used as the server's own is refused by Erlang's ssl). With mutual
TLS, an ECDSA P-256 CA signs the client's certificate too
(vocab.TLS_CLIENT_CERT). The keys are fresh on every run and never leave
that directory; each CA's key is deleted once it has signed. Every runtime
is given the file paths.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from bridge.catalog import negotiated, vocab
from bridge.catalog.inputs import TlsFiles
from bridge.errors import RuntimeUnavailable, UsageError
from bridge.system import proc

CA_SUBJECT = "/CN=bridge run-time CA"
SUBJECT = "/CN=localhost"
CLIENT_SUBJECT = "/CN=bridge run-time client"
EXTENSIONS = "basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:localhost\n"
CLIENT_EXTENSIONS = "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth\n"


def make(directory: str, cert: str, client: bool, openssl: str | None = None) -> TlsFiles:
    """The files of one scenario's certificates in `directory`: the server's
    (type `cert`) with its key and its CA, and with `client` the client's
    with its key and its CA; each file named by what it is for."""
    exe = openssl or shutil.which("openssl")
    if exe is None:
        raise RuntimeUnavailable(
            "a TLS scenario needs openssl on PATH to make its certificate",
            hint="install it with 'apt-get install openssl'",
        )
    d = Path(directory)
    stem = f"tls-{cert}{'-mtls' if client else ''}"
    server = _signed(exe, d, f"{stem}-server", vocab.TLS_CERTS[cert], (SUBJECT, EXTENSIONS))
    if not client:
        return TlsFiles(*server, negotiated.pem_fingerprint(Path(server[0]).read_text()))
    who = (CLIENT_SUBJECT, CLIENT_EXTENSIONS)
    mine = _signed(exe, d, f"{stem}-client", vocab.TLS_CERTS[vocab.TLS_CLIENT_CERT], who)
    return TlsFiles(
        *server,
        negotiated.pem_fingerprint(Path(server[0]).read_text()),
        *mine,
        negotiated.pem_fingerprint(Path(mine[0]).read_text()),
    )


def _signed(
    exe: str, d: Path, stem: str, kind: vocab.TlsCert, who: tuple[str, str]
) -> tuple[str, str, str]:
    """(certificate, key, CA certificate): a CA of the type, made for this
    certificate alone, signs a certificate of the type for `who` (subject,
    extensions); the CA's key goes once it has signed."""
    subject, extensions = who
    ca, ca_key = d / f"{stem}-ca.pem", d / f"{stem}-ca-key.pem"
    cert, key = d / f"{stem}.pem", d / f"{stem}-key.pem"
    csr, ext = d / f"{stem}.csr", d / f"{stem}-ext.cnf"
    ext.write_text(extensions)
    new = [*kind.newkey, "-nodes"]
    days = ["-days", "1", "-sha256"]
    _run(
        exe,
        ["req", "-x509", *new, "-subj", CA_SUBJECT, *days, "-keyout", str(ca_key)]
        + ["-out", str(ca)],
    )
    _run(exe, ["req", "-new", *new, "-subj", subject, "-keyout", str(key), "-out", str(csr)])
    signed = ["-CA", str(ca), "-CAkey", str(ca_key), "-set_serial", "1", *days]
    _run(exe, ["x509", "-req", "-in", str(csr), *signed, "-extfile", str(ext), "-out", str(cert)])
    for path in (key, ca_key):
        os.chmod(path, 0o600)
    ca_key.unlink()  # nothing else is ever signed with it
    for scratch in (csr, ext):
        scratch.unlink()
    return str(cert), str(key), str(ca)


def _run(exe: str, args: list[str]) -> None:
    try:
        done = proc.run([exe, *args], timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot make the TLS certificate with {exe}: {exc}") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise UsageError(f"{exe} {args[0]} could not make the TLS certificate: {tail[0][:200]}")
