"""The tls scenarios' certificates: an ECDSA P-256 certificate for localhost
signed by a P-256 CA made for the run, both by `openssl req`/`x509` in a
private directory (the caller's, mode 0700) and removed with it. The keys
are fresh on every run and never leave that directory (the CA's is deleted
once it has signed); every runtime is given the file paths.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from bridge.errors import RuntimeUnavailable, UsageError
from bridge.system import proc

CA_SUBJECT = "/CN=bridge run-time CA"
SUBJECT = "/CN=localhost"
EXTENSIONS = "basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:localhost\n"
P256 = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")


def make(directory: str, openssl: str | None = None) -> tuple[str, str, str]:
    """(certificate, private key, CA certificate) PEM files in `directory`:
    a CA made for the run signs the server's certificate for localhost, as a
    real server's is signed (the client checks that signature in every
    handshake; a self-signed CA certificate used as the server's own is
    refused by Erlang's ssl)."""
    exe = openssl or shutil.which("openssl")
    if exe is None:
        raise RuntimeUnavailable(
            "a TLS scenario needs openssl on PATH to make its certificate",
            hint="install it with 'apt-get install openssl'",
        )
    d = Path(directory)
    ca, ca_key = d / "tls-ca.pem", d / "tls-ca-key.pem"
    cert, key, csr, ext = d / "tls-cert.pem", d / "tls-key.pem", d / "tls.csr", d / "tls-ext.cnf"
    ext.write_text(EXTENSIONS)
    _run(
        exe,
        [
            "req",
            "-x509",
            *P256,
            "-subj",
            CA_SUBJECT,
            "-days",
            "1",
            "-sha256",
            "-keyout",
            str(ca_key),
            "-out",
            str(ca),
        ],
    )
    _run(exe, ["req", "-new", *P256, "-subj", SUBJECT, "-keyout", str(key), "-out", str(csr)])
    _run(
        exe,
        [
            "x509",
            "-req",
            "-in",
            str(csr),
            "-CA",
            str(ca),
            "-CAkey",
            str(ca_key),
            "-set_serial",
            "1",
            "-days",
            "1",
            "-sha256",
            "-extfile",
            str(ext),
            "-out",
            str(cert),
        ],
    )
    for path in (key, ca_key):
        os.chmod(path, 0o600)
    ca_key.unlink()  # nothing else is ever signed with it
    return str(cert), str(key), str(ca)


def _run(exe: str, args: list[str]) -> None:
    try:
        done = proc.run([exe, *args], timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot make the TLS certificate with {exe}: {exc}") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise UsageError(f"{exe} {args[0]} could not make the TLS certificate: {tail[0][:200]}")
