"""Python `hashlib`/`hmac`, timed in a worker process (`python -m bridge.worker`).

The worker is a separate interpreter, never the driver, because libcrypto reads
the hardware masks once, when it is loaded.
"""

from __future__ import annotations

import sys
from typing import Any

from bridge import environment, model
from bridge.runtimes.base import WorkerRuntime, text
from bridge.settings import Settings


class PythonRuntime(WorkerRuntime):
    kind = "python"
    start_timeout = 20.0

    def __init__(self, settings: Settings, hw="on", mask_env=None, executable: str | None = None):
        super().__init__(settings, hw, mask_env)
        self.executable = executable or sys.executable

    def argv(self) -> list[str]:
        return [self.executable, "-m", "bridge.worker"]

    def describe(self, info: dict[str, Any]) -> model.Runtime:
        version = text(info["python_version"])
        pid = self.worker.pid if self.worker else None
        return model.Runtime(
            id=f"python@{version}",
            kind="python",
            executable=self.executable,
            version=f"Python {version}",
            details={
                "implementation": text(info.get("implementation", b"")),
                "ssl_openssl_version": text(info.get("ssl_openssl_version", b"")),
                "cryptography_openssl_version": text(info.get("cryptography_openssl_version", b"")),
                "hashlib_sha256_type": text(info.get("hashlib_sha256_type", b"")),
                "hashlib_uses_openssl": bool(info.get("hashlib_uses_openssl")),
                "hmac_impl": text(info.get("hmac_impl", b"")),
                "fips_mode": bool(info.get("fips_mode")),
                "libcrypto_loaded": environment.loaded_libcrypto(pid),
                "clock": text(info.get("clock", b"")),
                "env": self.env_record(),
            },
            hw=self.hw,
        )
