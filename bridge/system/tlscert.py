"""The tls scenarios' certificate: a self-signed ECDSA P-256 certificate for
localhost, made at run time by `openssl req` in a private directory (the
caller's, mode 0700) and removed with it. Its key is fresh on every run and
never leaves that directory; every runtime is given the two file paths.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from bridge.errors import RuntimeUnavailable, UsageError
from bridge.system import proc

SUBJECT = "/CN=localhost"
SAN = "subjectAltName=DNS:localhost"


def make(directory: str, openssl: str | None = None) -> tuple[str, str]:
    """(certificate, private key) PEM files in `directory`."""
    exe = openssl or shutil.which("openssl")
    if exe is None:
        raise RuntimeUnavailable(
            "a TLS scenario needs openssl on PATH to make its certificate",
            hint="install it with 'apt-get install openssl'",
        )
    cert, key = Path(directory) / "tls-cert.pem", Path(directory) / "tls-key.pem"
    argv = [
        *(exe, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"),
        *("-nodes", "-subj", SUBJECT, "-addext", SAN, "-days", "1", "-sha256"),
        *("-keyout", str(key), "-out", str(cert)),
    ]
    try:
        done = proc.run(argv, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot make the TLS certificate with {exe}: {exc}") from None
    if done.returncode != 0 or not cert.is_file() or not key.is_file():
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise UsageError(f"{exe} req could not make the TLS certificate: {tail[0][:200]}")
    os.chmod(key, 0o600)
    return str(cert), str(key)
