"""The `openssl` CLI as a runtime.

`openssl speed` counts operations in a fixed time and prints one number per
process, so a cell is several runs (`Settings.openssl_runs`), one sample each:
sample = elapsed ns, loops = operations counted. `-elapsed` makes it divide by
wall-clock time, as the workers do (its default is user CPU time).

speed times its own buffer with its own key. The output bytes are therefore
computed separately, on bridge's inputs, with `openssl mac` (3.x) or
`openssl dgst -mac HMAC` (older), and `openssl dgst` for digests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bridge.catalog import calls, vocab
from bridge.catalog.scenario import (
    AgreementScenario,
    CipherScenario,
    EddsaScenario,
    HashScenario,
    KdfScenario,
    MacScenario,
    RandomScenario,
    RsaScenario,
    Scenario,
)
from bridge.catalog.vocab import RuntimeKind
from bridge.errors import OperationError, RuntimeUnavailable, UsageError, WorkerError
from bridge.hw import ab, hardware
from bridge.hw.hardware import MASK_VARS
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.report.levels import LevelRaw
from bridge.runtimes.base import Batch, BatchPlan, Inputs, Job, LevelPlan, Runtime
from bridge.settings import Settings
from bridge.system import libcrypto, proc

# +R:<count>:<name>:<elapsed seconds>, written to stderr by `speed -mr`.
MR_RESULT = re.compile(r"^\+R:(\d+):([^:]+):([\d.]+)\s*$", re.MULTILINE)
VERSION = re.compile(r"^(OpenSSL|LibreSSL)\s+(\d+)\.(\d+)\.(\d+)(\S*)", re.MULTILINE)
CPUINFO = re.compile(r"^CPUINFO:\s*(.*)$", re.MULTILINE)
INSTALL_HINT = "install it with 'apt-get install openssl', or name one with --openssl PATH"


# -mr public-key records: +DTP:<bits>:<sign|verify>:<alg>:<secs> then
# +R<n>:<count>:<bits>:<elapsed seconds>.
MR_PKEY = re.compile(r"^\+DTP:\d+:(sign|verify):ecdsa:\d+\s*\n\+R\d+:(\d+):\d+:([\d.]+)", re.M)


def parse_mr_pkey(stderr: str) -> dict[str, tuple[int, int]]:
    """{sign|verify: (count, elapsed ns)} from `openssl speed -mr ecdsapNNN`."""
    return {m[1]: (int(m[2]), round(float(m[3]) * 1e9)) for m in MR_PKEY.finditer(stderr)}


# Every public-key record, 1.1.1 and 3.x alike: +DTP:<bits>:<op>:<alg>:<secs>
# then +R<n>:<count>:<bits>[:<alg>]:<elapsed>. The op is sign/verify (ECDSA,
# EdDSA), private/public (RSA: sign/verify) or empty (ECDH: one derive).
MR_PKEY_ANY = re.compile(
    r"^\+DTP:\d+:([a-z]*):([A-Za-z0-9]+):\d+\s*\n\+R\d+:(\d+):\d+:(?:[A-Za-z][A-Za-z0-9]*:)?([\d.]+)",
    re.M,
)
# The speed op of each call role, per kind of algorithm.
PKEY_OPS = {"rsa": {"sign": "private", "verify": "public"}, "ecdh": {"": ""}}


def parse_mr_pkey_ops(stderr: str) -> dict[tuple[str, str], tuple[int, int]]:
    """{(alg, op): (count, elapsed ns)} from any `openssl speed -mr` public-key run."""
    return {
        (m[2].lower(), m[1]): (int(m[3]), round(float(m[4]) * 1e9))
        for m in MR_PKEY_ANY.finditer(stderr)
    }


def parse_version(text: str) -> tuple[str, tuple[int, int, int]] | None:
    m = VERSION.search(text)
    if not m:
        return None
    return m.group(1), (int(m.group(2)), int(m.group(3)), int(m.group(4)))


def version_id(text: str) -> str:
    """The version as the runtime id shows it, letter and all: 1.1.1w, 3.0.19
    (1.1.1w and 1.1.1k are different releases, and the id is what a reader
    tells rows apart by)."""
    m = VERSION.search(text)
    return f"{m.group(2)}.{m.group(3)}.{m.group(4)}{m.group(5)}" if m else ""


def parse_mr_runs(stderr: str) -> list[tuple[int, float]]:
    """(count, elapsed seconds) per +R record."""
    return [(int(m.group(1)), float(m.group(3))) for m in MR_RESULT.finditer(stderr)]


IA32_VECTOR = re.compile(r"OPENSSL_ia32cap=((?:0x[0-9a-fA-F]+:?)+)")


def parse_ia32_vector(text: str) -> list[int] | None:
    """The effective capability words from a `CPUINFO: OPENSSL_ia32cap=...` line."""
    m = IA32_VECTOR.search(text)
    if not m:
        return None
    return [int(w, 16) for w in m.group(1).strip(":").split(":")]


def _evp_api(sc: Scenario) -> str:
    if isinstance(sc, CipherScenario):
        return "EVP_EncryptUpdate (openssl speed -evp)"
    return "EVP_Digest (openssl speed -evp)"


def _pkey_algorithm(sc: Scenario) -> tuple[str, str]:
    """(the speed algorithm, the algorithm its -mr records name)."""
    if isinstance(sc, EddsaScenario):
        return vocab.ED_CURVES[sc.curve].speed, sc.curve
    if isinstance(sc, RsaScenario):
        return vocab.RSA_SPEED[sc.bits], "rsa"
    if isinstance(sc, AgreementScenario):
        return sc.spec.speed, "ecdh"
    return vocab.CURVES[sc.curve].speed, "ecdsa"  # type: ignore[attr-defined]


def _plain_path(version: tuple[int, int, int]) -> str:
    # 3.x routes the plain (non -evp) speed of a digest through EVP as well.
    return "EVP_Digest" if version >= (3, 0, 0) else "the digest's own functions"


def mask_evidence(clis: Sequence[str | None], ctx: ab.HwContext) -> schema.MaskCheck:
    """Check a runtime's mask string with an openssl CLI of the same
    generation as its libcrypto: the first --openssl given, or the one on PATH."""
    cli = next((o for o in clis if o), None) or shutil.which("openssl")
    if cli is None or ctx.library is None or ctx.mask is None:
        return schema.MaskCheck(ok=None, note="no openssl CLI to check the mask with")
    try:
        version = proc.run([cli, "version"], timeout=15).stdout.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return schema.MaskCheck(ok=None, note=f"could not run {cli}")
    cli_lib = hardware.parse_library(version)
    if cli_lib is None or hardware.generation(cli_lib[1]) != hardware.generation(ctx.library[1]):
        return schema.MaskCheck(ok=None, note=f"{cli} is not of the same OpenSSL generation")
    return check_mask(cli, ctx.mask, dict(os.environ))


def check_mask(executable: str, mask: hardware.Mask, env: dict[str, str]) -> schema.MaskCheck:
    """Evidence that a mask string does what bridge means: `openssl version -c`
    (OpenSSL 3.x) prints the effective vector. The feature's bits must be
    clear with the mask and everything else as detected."""
    base = {k: v for k, v in env.items() if k not in MASK_VARS}
    try:
        plain = proc.run([executable, "version", "-c"], env=base, timeout=15)
        masked = proc.run([executable, "version", "-c"], env={**base, **mask.env()}, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return schema.MaskCheck(ok=None, by=executable, note="could not run openssl version -c")
    found = parse_ia32_vector(plain.stdout.decode(errors="replace"))
    got = parse_ia32_vector(masked.stdout.decode(errors="replace"))
    if mask.variable != "OPENSSL_ia32cap" or found is None or got is None:
        return schema.MaskCheck(
            ok=None, by=executable, note="this openssl does not print its vector"
        )
    expected = list(found)
    for feature in mask.features:
        word, bit = hardware.IA32_BITS[feature]
        expected[word] &= ~bit
    ok = got[: len(expected)] == expected
    return schema.MaskCheck(
        ok=ok,
        by=f"{executable} version -c",
        detected=":".join(f"0x{w:x}" for w in found),
        masked=":".join(f"0x{w:x}" for w in got),
    )


class OpensslRuntime(Runtime):
    kind = RuntimeKind.OPENSSL
    samples_are_processes = True

    def __init__(
        self, settings: Settings, hw: Hw = Hw.ON, mask_env=None, executable: str | None = None
    ):
        super().__init__(settings, hw, mask_env)
        self.requested = executable
        self.executable = ""
        self.flavour = "OpenSSL"
        self.version: tuple[int, int, int] = (0, 0, 0)
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._output_cache: dict[tuple, bytes] = {}
        self._pkey_cache: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
        # One handler per operation of calls.CALLS["openssl", ...].
        self.handlers = calls.Handlers(
            RuntimeKind.OPENSSL,
            {
                "speed": self._bench_speed,
                "speed-evp": self._bench_speed,
                "speed-pkey": self._bench_pkey,
                "dgst": self._bench_dgst,
                "speed-rand": self._bench_speed,
                "speed-aead": self._bench_speed,
                "kdf": self._bench_kdf,
                # TLS handshakes: s_time against s_server (bridge.runtimes.openssl_tls).
                **{op: self._bench_tls for op in calls.TLS_OPS},
            },
        )

    def start(self) -> schema.Runtime:
        self.executable = self._resolve()
        out = self._run([self.executable, "version", "-a"], timeout=15, what="version -a")
        parsed = parse_version(out)
        if parsed is None:
            raise UsageError(
                f"{self.executable}: does not look like openssl ('version -a' printed"
                f" {out.strip()[:60]!r})"
            )
        self.flavour, self.version = parsed
        version_text = out.splitlines()[0].strip() if out.strip() else ""
        cpuinfo = CPUINFO.search(out)
        self.id = f"openssl@{version_id(out)}"
        # Private directory (0700) for input files; removed on exit.
        self._tmp = tempfile.TemporaryDirectory(prefix="bridge-openssl-")
        return schema.Runtime(
            id=self.id,
            kind=RuntimeKind.OPENSSL,
            executable=self.executable,
            version=version_text,
            details={
                "flavour": self.flavour,
                "version_a": out.strip().splitlines(),
                "cpuinfo": cpuinfo.group(1).strip() if cpuinfo else None,
                "env": self.env_record(),
            },
            hw=self.hw,
        )

    def stop(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def mapped_libcrypto(self) -> list[libcrypto.Mapped]:
        # Each openssl process lives a second or less: look at one made to wait.
        return libcrypto.probe_cli(self.executable or self._resolve(), self.child_env())

    def _resolve(self) -> str:
        if self.requested is None:
            found = shutil.which("openssl")
            if found is None:
                raise RuntimeUnavailable("openssl not found on PATH", hint=INSTALL_HINT)
            return found
        path = Path(self.requested).expanduser()
        if path.is_dir():
            raise UsageError(f"--openssl {self.requested}: is a directory")
        found = shutil.which(str(path))
        if found is None:
            raise UsageError(f"--openssl {self.requested}: no such executable")
        return found

    # -- measuring ---------------------------------------------------------

    def bench(self, job: Job, plan: BatchPlan) -> Batch:
        if job.call.op == "user_shell":  # a user's sh: command, not a call of the table
            return self._bench_shell(job, plan)
        return self.handlers[job.call.op](job, plan)

    def _bench_speed(self, job: Job, plan: BatchPlan) -> Batch:
        """`openssl speed -hmac D` (MACs), `speed -evp A`, or plain `speed A`."""
        sc, call, inputs = job.scenario, job.call, job.inputs
        reason = self.unsupported_reason(call, sc)
        if reason:
            raise OperationError("unsupported", reason)
        mode, name, api = self._speed_mode(job)
        argv, what = self._speed_argv(mode, name, inputs.size)
        samples: list[int] = []
        loops: list[int] = []
        probed = self.pinning.children()
        for _ in range(plan.samples):
            timeout = self.settings.openssl_seconds + self.settings.timeout_slack_s
            with probed.child(self.pinning.cpu_for(plan.round)):
                stderr = self._run(argv, timeout=timeout, what=what, stream="stderr")
            runs = parse_mr_runs(stderr)
            if not runs or runs[-1][0] <= 0:
                raise WorkerError(
                    f"{self.id}: 'openssl {what}' printed no result",
                    runtime=self.id,
                    stderr_tail=stderr[-800:],
                )
            count, elapsed = runs[-1]
            samples.append(round(elapsed * 1e9))
            loops.append(count)
        # The cross-check runs once per cell, not once per round.
        key = (sc.name, sc.algorithm, inputs)
        if key not in self._output_cache:
            self._output_cache[key] = self._output(sc, inputs)
        return Batch(
            api=api, samples=samples, loops=loops, output=self._output_cache[key], **probed.fields()
        )

    def _speed_mode(self, job: Job) -> tuple[str, str, str]:
        """(speed option, the name it takes, the API it times) for a call."""
        sc = job.scenario
        # -hmac takes the digest's name; everything else the algorithm's.
        name = sc.digest if isinstance(sc, MacScenario) else sc.algorithm
        if job.call.op == "speed-aead":
            # -aead makes -evp seal TLS-like records: new IV, AAD, data, tag.
            api = "EVP_EncryptInit_ex(IV) + AAD + update + final (speed -aead)"
            return "-aead -evp", name, api
        if job.call.op == "speed-evp":
            return "-evp", name, _evp_api(sc)
        if isinstance(sc, MacScenario):
            return "-hmac", name, "EVP_MAC (openssl speed -hmac)"
        if isinstance(sc, RandomScenario):
            return "", "rand", "RAND_bytes (openssl speed rand)"
        return "", name, f"openssl speed {name} ({_plain_path(self.version)})"

    def _speed_argv(
        self, mode: str, algorithm: str, size: int, multi: int = 0
    ) -> tuple[list[str], str]:
        seconds = self.settings.openssl_seconds
        # A bare algorithm name must come after the options; -evp/-hmac take it
        # as their argument.
        options = ["-bytes", str(size), "-seconds", str(seconds), "-mr", "-elapsed"]
        if multi:
            options = ["-multi", str(multi), *options]
        if mode:
            argv = [self.executable, "speed", *mode.split(), algorithm, *options]
        else:
            argv = [self.executable, "speed", *options, algorithm]
        return argv, " ".join(["speed", *([mode] if mode else []), algorithm])

    def bench_level(self, job: Job, plan: LevelPlan) -> LevelRaw:
        """`openssl speed -multi N`: N forked processes, one window per run.
        Each child writes its own +R record (count, elapsed) to stderr; those
        are the raw figures, one per worker. A run that fails costs this
        level's cell only."""
        sc, call, inputs, n = job.scenario, job.call, job.inputs, plan.level
        if call.op in calls.TLS_OPS:  # N s_time clients against one s_server
            from bridge.runtimes import openssl_tls

            return openssl_tls.bench_level(self, job, plan)
        if call.op not in ("speed", "speed-evp"):
            raise OperationError(
                "unsupported",
                f"bridge runs openssl speed -multi for digests, MACs and"
                f" ciphers only (and s_time clients for TLS), not for {call.id}",
            )
        reason = self.unsupported_reason(call, sc)
        if reason:
            raise OperationError("unsupported", reason)
        mode, name, api = self._speed_mode(job)
        argv, what = self._speed_argv(mode, name, inputs.size, multi=n)
        timeout = 2 * self.settings.openssl_seconds + self.settings.timeout_slack_s
        windows = []
        for _ in range(plan.windows):
            try:
                stderr = self._run(argv, timeout=timeout, what=what, stream="stderr")
            except WorkerError as exc:
                raise OperationError("failed", exc.one_line()) from None
            runs = parse_mr_runs(stderr)
            if len(runs) != n or any(count <= 0 for count, _ in runs):
                raise OperationError(
                    "failed", f"'openssl {what}' reported {len(runs)} of its {n} processes"
                )
            windows.append(tuple((count, round(elapsed * 1e9)) for count, elapsed in runs))
        key = (sc.name, sc.algorithm, inputs)
        if key not in self._output_cache:
            self._output_cache[key] = self._output(sc, inputs)
        return LevelRaw(
            api=f"{api}, -multi {n}",
            batch=0,
            windows=tuple(windows),
            output=self._output_cache[key],
            latency_note="openssl speed counts calls for a fixed time; it times no single call",
        )

    def _bench_dgst(self, job: Job, plan: BatchPlan) -> Batch:
        """`openssl dgst -DIGEST FILE` timed as a whole process, wall clock, as
        distributions time it (`time openssl dgst -sha256 5Gfile`)."""
        sc, inputs = job.scenario, job.inputs
        argv = [self.executable, "dgst", f"-{sc.digest}", "-binary", inputs.path]
        samples, output = [], b""
        timeout = 600 + self.settings.timeout_slack_s
        if plan.warmup_ms:
            self._run_bytes(argv, timeout=timeout, what=f"dgst -{sc.digest}")  # page cache
        probed = self.pinning.children()
        for _ in range(plan.samples):
            with probed.child(self.pinning.cpu_for(plan.round)):
                t0 = time.perf_counter_ns()
                output = self._run_bytes(argv, timeout=timeout, what=f"dgst -{sc.digest}")
                samples.append(time.perf_counter_ns() - t0)
        api = f"openssl dgst -{sc.digest} (whole process)"
        return Batch(
            api=api, samples=samples, loops=[1] * len(samples), output=output, **probed.fields()
        )

    def _bench_pkey(self, job: Job, plan: BatchPlan) -> Batch:
        """`openssl speed ecdsapNNN` (ed25519, rsa2048) measures sign and
        verify in one process: the verify cell that follows a sign cell takes
        that process's verify numbers instead of running it again. ECDH
        (ecdhx25519, ecdhp256) has one operation, the derive."""
        sc, role = job.scenario, job.call.role
        speed, alg = _pkey_algorithm(sc)
        ops = PKEY_OPS.get(alg, {"sign": "sign", "verify": "verify"})
        cached = self._pkey_cache.pop((speed, role), None)
        if cached is None or len(cached[0]) != plan.samples:
            runs = [self._run_pkey(speed, alg, set(ops.values())) for _ in range(plan.samples)]
            for other, op in ops.items():
                if other != role:
                    self._pkey_cache[(speed, other)] = (
                        [r[op][1] for r in runs],
                        [r[op][0] for r in runs],
                    )
            op = ops[role]
            cached = ([r[op][1] for r in runs], [r[op][0] for r in runs])
        samples, loops = cached
        api = f"openssl speed {speed}" + (f" ({role})" if role else "")
        # speed signs and verifies with its own key: no output to compare.
        return Batch(api=api, samples=samples, loops=loops, output=b"")

    def _run_pkey(self, speed: str, alg: str, ops: set[str]) -> dict[str, tuple[int, int]]:
        """{op: (count, elapsed ns)} from one speed process's -mr records."""
        seconds = self.settings.openssl_seconds
        argv = [self.executable, "speed", "-seconds", str(seconds), "-mr", "-elapsed", speed]
        timeout = 2 * seconds + self.settings.timeout_slack_s
        stderr = self._run(argv, timeout=timeout, what=f"speed {speed}", stream="stderr")
        found = {op: v for (a, op), v in parse_mr_pkey_ops(stderr).items() if a == alg}
        if not ops <= set(found):
            raise WorkerError(
                f"{self.id}: 'openssl speed {speed}' printed no result",
                runtime=self.id,
                stderr_tail=stderr[-800:],
            )
        return found

    def _bench_kdf(self, job: Job, plan: BatchPlan) -> Batch:
        """`openssl kdf ... PBKDF2` timed as a whole process, wall clock: the
        CLI has no in-process benchmark of a KDF (speed has none)."""
        sc, inputs = job.scenario, job.inputs
        assert isinstance(sc, KdfScenario)
        if self.version < (3, 0, 0):
            raise OperationError(
                "unsupported",
                f"openssl kdf came in OpenSSL 3.0; this is {'.'.join(map(str, self.version))}",
            )
        # The password and salt are bridge's generated inputs, not secrets:
        # on the command line, in hex, as the kdf command takes them.
        argv = [
            *(self.executable, "kdf", "-keylen", str(sc.key_bytes), "-binary"),
            *("-kdfopt", f"digest:{sc.digest.upper()}", "-kdfopt", f"hexpass:{inputs.key.hex()}"),
            *("-kdfopt", f"hexsalt:{inputs.iv.hex()}", "-kdfopt", f"iter:{inputs.count}"),
            "PBKDF2",
        ]
        samples, output = [], b""
        timeout = 600 + self.settings.timeout_slack_s
        probed = self.pinning.children()
        for _ in range(plan.samples):
            with probed.child(self.pinning.cpu_for(plan.round)):
                t0 = time.perf_counter_ns()
                output = self._run_bytes(argv, timeout=timeout, what="kdf PBKDF2")
                samples.append(time.perf_counter_ns() - t0)
        api = "EVP_KDF PBKDF2 (openssl kdf, whole process)"
        return Batch(
            api=api, samples=samples, loops=[1] * len(samples), output=output, **probed.fields()
        )

    def _bench_tls(self, job: Job, plan: BatchPlan) -> Batch:
        from bridge.runtimes import openssl_tls

        return openssl_tls.bench(self, job, plan)

    def _bench_shell(self, job: Job, plan: BatchPlan) -> Batch:
        """A user's `sh:` command, a whole process per sample like `openssl
        kdf`, with this runtime's environment and mask (bridge.runtimes.usercode)."""
        assert self._tmp is not None
        return self.bench_shell(job, plan, self._tmp.name)

    def unsupported_reason(self, call: calls.Call, sc: Scenario) -> str:
        if self.flavour != "OpenSSL":
            return f"{self.flavour} is not OpenSSL: its speed options differ"
        if self.version < (1, 1, 1):
            return "openssl speed -bytes/-seconds need OpenSSL 1.1.1+"
        if call.op == "speed" and isinstance(sc, MacScenario) and self.version < (3, 0, 0):
            return (
                "before OpenSSL 3.0, 'openssl speed hmac' measures HMAC-MD5 only (no -hmac DIGEST)"
            )
        return ""

    def _output(self, sc: Scenario, inputs: Inputs) -> bytes:
        """The bytes openssl computes on bridge's own key and data."""
        assert self._tmp is not None
        data_file = Path(self._tmp.name) / "data.bin"
        data_file.write_bytes(inputs.data)
        match sc:
            case RandomScenario():
                # Two outputs, as the workers give (calls.Check.DISTINCT).
                argv = [self.executable, "rand", str(inputs.count)]
                return b"".join(self._run_bytes(argv, timeout=60, what="rand") for _ in range(2))
            case CipherScenario():
                if sc.spec.aead:
                    return b""  # openssl enc has no AEAD: nothing independent to compare
                argv = [self.executable, "enc", f"-{sc.cipher}", "-K", inputs.key.hex()]
                argv += ["-iv", inputs.iv.hex(), "-nopad", "-in", str(data_file)]
                return self._run_bytes(argv, timeout=60, what="enc")
            case MacScenario():
                out = self._run_bytes(
                    self._mac_argv(sc.digest, inputs.key, data_file), timeout=60, what="mac"
                )
                return out[: sc.mac_bytes] if sc.mac_bytes else out
            case HashScenario():
                argv = [self.executable, "dgst", f"-{sc.digest}", "-binary", str(data_file)]
                return self._run_bytes(argv, timeout=60, what=f"dgst -{sc.digest}")
        return b""

    def _mac_argv(self, digest: str, key: bytes, data_file: Path) -> list[str]:
        macopt = f"hexkey:{key.hex()}"
        if self.version >= (3, 0, 0):
            return [
                *(self.executable, "mac", "-digest", digest, "-macopt", macopt),
                *("-in", str(data_file), "-binary", "HMAC"),
            ]
        return [
            *(self.executable, "dgst", f"-{digest}", "-mac", "HMAC", "-macopt", macopt),
            *("-binary", str(data_file)),
        ]

    # -- processes ---------------------------------------------------------

    def _run(self, argv: list[str], *, timeout: float, what: str, stream: str = "stdout") -> str:
        done = self._exec(argv, timeout, what)
        data = done.stdout if stream == "stdout" else done.stderr
        return data.decode("utf-8", "replace")

    def _run_bytes(self, argv: list[str], *, timeout: float, what: str) -> bytes:
        return self._exec(argv, timeout, what).stdout

    def _exec(self, argv: list[str], timeout: float, what: str) -> subprocess.CompletedProcess:
        name = self.id if self.id != "openssl" else argv[0]
        try:
            done = proc.run(argv, env=self.child_env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            raise WorkerError(
                f"{name}: '{what}' did not finish within {timeout:.0f} s", runtime=name
            ) from None
        except OSError as exc:
            raise RuntimeUnavailable(
                f"cannot run {argv[0]}: {exc.strerror}", hint=INSTALL_HINT
            ) from None
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip()[-800:]
            raise WorkerError(
                f"{name}: '{what}' exited with status {done.returncode}",
                runtime=name,
                stderr_tail=tail,
            )
        return done
