"""From command-line options (or a saved report) to a runner.Plan.

Everything `bridge run` decides before measuring lives here: the settings,
the scenarios with --sizes/--file-size applied, --erl otp:N resolved, the
default hw mode, and the `reproduce` command line that reruns the same
measurement. Bad input raises UsageError; nothing here prints.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bridge import calls, discover, model, runner, scenario
from bridge.errors import UsageError
from bridge.settings import DEFAULT, QUICK, Settings


@dataclass(frozen=True)
class RunOptions:
    """`bridge run`'s options, as parsed by click (None where not given)."""

    scenarios: tuple[str, ...]
    quick: bool = False
    samples: int | None = None
    sample_ms: int | None = None
    warmup_ms: int | None = None
    rounds: int | None = None
    openssl_runs: int | None = None
    until_stable: float | None = None
    max_time: int = 300
    seed: int = 1
    erl: tuple[str, ...] = ()
    openssl: tuple[str, ...] = ()
    python: tuple[str, ...] = ()
    hw: str | None = None
    runtimes: str = ",".join(calls.RUNTIME_KINDS)
    scenario_dirs: tuple[Path, ...] = ()
    sizes: str | None = None
    file_size: str | None = None
    method: str = "bridge"
    tc_calls: int | None = None
    request_timeout: float = 30.0


def from_options(o: RunOptions, command: tuple[str, ...]) -> runner.Plan:
    if not o.scenarios:
        raise UsageError("name a scenario to run (bridge list shows them), or use --replay")
    settings = settings_from(o)
    kinds = runtime_kinds(o.runtimes)
    loaded = tuple(scenario.load(s, tuple(o.scenario_dirs)) for s in o.scenarios)
    if o.sizes is not None:
        wanted = parse_sizes(o.sizes)
        loaded = tuple(sc.with_sizes(wanted) for sc in loaded)
    if o.file_size is not None:
        one = (parse_byte_count(o.file_size),)
        loaded = tuple(
            sc.with_sizes(one) if isinstance(sc, scenario.FileDigestScenario) else sc
            for sc in loaded
        )
    hw = o.hw or ("both" if any(sc.features for sc in loaded) else "on")
    erl = expand_erl(o.erl)
    return runner.Plan(
        scenarios=loaded,
        settings=settings,
        seed=o.seed,
        erl=erl or (None,),
        openssl=o.openssl or (None,),
        python=o.python or (None,),
        kinds=kinds,
        hw=hw,
        command=command,
        reproduce=reproduce(dataclasses.replace(o, erl=erl), settings, kinds, hw),
    )


def settings_from(o: RunOptions) -> Settings:
    base = QUICK if o.quick else DEFAULT
    return dataclasses.replace(
        base,
        warmup_ms=base.warmup_ms if o.warmup_ms is None else o.warmup_ms,
        sample_ms=o.sample_ms or base.sample_ms,
        samples=o.samples or base.samples,
        rounds=o.rounds or base.rounds,
        openssl_runs=o.openssl_runs or base.openssl_runs,
        until_stable=o.until_stable,
        max_seconds=o.max_time,
        timeout_slack_s=o.request_timeout,
        tc_calls=(o.tc_calls or (100_000 if o.quick else 1_000_000)) if o.method == "tc" else None,
    )


def from_report(old: model.Report, path: Path, command: tuple[str, ...]):
    """--replay: scenarios, sizes, seed, settings, hw and runtimes as the
    report has them. Returns (plan, warnings): an executable that does not
    exist here falls back to the one on PATH, and says so."""
    if not old.scenarios:
        raise UsageError(f"{path}: the report does not describe its scenarios (imported?)")
    loaded = tuple(
        scenario.parse(dict(d), f"{path} (scenario {d.get('name')})") for d in old.scenarios
    )
    known = {f.name for f in dataclasses.fields(Settings)}
    settings = Settings(**{k: v for k, v in old.settings.items() if k in known})
    as_found = [rt for rt in old.runtimes if not rt.masked]
    warnings: list[str] = []

    def here(kind: str) -> tuple[str | None, ...]:
        paths = [rt.executable for rt in as_found if rt.kind == kind]
        missing = [p for p in paths if p and not Path(p).exists()]
        warnings.extend(f"{p} does not exist here; using the one on PATH" for p in missing)
        return tuple(p for p in paths if p and p not in missing) or (None,)

    kinds = tuple(k for k in calls.RUNTIME_KINDS if any(rt.kind == k for rt in as_found))
    plan = runner.Plan(
        scenarios=loaded,
        settings=settings,
        seed=int(old.settings.get("seed", 1)),
        erl=here("erlang"),
        openssl=here("openssl"),
        python=here("python"),
        kinds=kinds or calls.RUNTIME_KINDS,
        hw=old.hardware.hw or "on",
        command=command,
        reproduce=old.reproduce,
    )
    return plan, warnings


def runtime_kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in calls.RUNTIME_KINDS]
    if bad or not kinds:
        raise UsageError(
            f"--runtimes: unknown runtime {bad[0] if bad else text!r};"
            f" expected a comma-separated list of {', '.join(calls.RUNTIME_KINDS)}"
        )
    return kinds


def expand_erl(erl: tuple[str, ...]) -> tuple[str, ...]:
    """--erl otp:27 names every working OTP 27 installation discovery finds."""
    out: list[str] = []
    for spec in erl:
        if spec.startswith("otp:"):
            found = discover.resolve_group(spec)
            if not found:
                # Say why an installation of that release does not count.
                broken = [f"{f.root}: {f.problem}" for f in discover.broken_in_group(spec)]
                why = f": {'; '.join(broken)}" if broken else ""
                raise UsageError(
                    f"--erl {spec}: no working OTP {spec[4:]} installation found{why}",
                    hint="bridge otp list shows what is installed",
                )
            out += [f for f in found if f not in out]
        else:
            out.append(spec)
    return tuple(out)


def check_writable(path: Path) -> None:
    """Fail before measuring, not after: try to create a file where the
    output will go (os.access says yes to root even where writing fails)."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--output {path}: directory {parent} does not exist")
    if path.is_dir():
        raise UsageError(f"--output {path}: is a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".bridge-probe-", dir=parent)
    except OSError as exc:
        raise UsageError(
            f"--output {path}: directory {parent} is not writable ({exc.strerror})"
        ) from None
    os.close(fd)
    os.unlink(probe)


def parse_byte_count(text: str) -> int:
    """--file-size: 268435456, 256M, 1G (powers of 1024)."""
    n = _byte_count(text)
    if n is None or not 1 <= n <= scenario.MAX_FILE_SIZE:
        raise UsageError(
            f"--file-size: {text!r} is not a size; expected e.g. 268435456, 256M or 1G,"
            f" at most {scenario.MAX_FILE_SIZE >> 30}G"
        )
    return n


def _byte_count(text: str) -> int | None:
    """268435456, 16k, 256M, 1GiB (powers of 1024, case-insensitive); None if not a count."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = units.get(t[-1:], 1)
    digits = t[:-1] if t[-1:] in units else t
    return int(digits) * scale if digits.isdigit() else None


def parse_sizes(text: str) -> tuple[int, ...]:
    """--sizes 16,64,1k: positive byte counts up to the scenario limit, with
    the same K/M/G suffixes as --file-size."""
    out: list[int] = []
    for piece in text.split(","):
        piece = piece.strip()
        n = _byte_count(piece)
        if n is None or not 1 <= n <= scenario.MAX_SIZE:
            raise UsageError(
                f"--sizes: {piece!r} is not a message size; expected byte counts"
                f" from 1 to {scenario.MAX_SIZE} (or with K/M/G, e.g. 1k), comma-separated"
            )
        if n not in out:
            out.append(n)
    return tuple(out)


def reproduce(o: RunOptions, settings: Settings, kinds: tuple[str, ...], hw: str) -> str:
    """A command line that reruns the same measurement: every option that
    changes what is measured, and none that only changes what is printed.
    `o.erl` holds paths here, --erl otp:N already resolved: what otp:27 finds
    depends on BRIDGE_OTP_PATH and on what is installed, which the line
    cannot carry."""
    argv = ["bridge", "run", *o.scenarios, "--seed", str(o.seed), "--hw", hw]
    if o.sizes is not None:
        argv += ["--sizes", ",".join(map(str, parse_sizes(o.sizes)))]
    if o.file_size is not None:
        argv += ["--file-size", str(parse_byte_count(o.file_size))]
    base = QUICK if settings.quick else DEFAULT
    if settings.quick:
        argv.append("--quick")
    for flag, value, default in (
        ("--samples", settings.samples, base.samples),
        ("--sample-ms", settings.sample_ms, base.sample_ms),
        ("--warmup-ms", settings.warmup_ms, base.warmup_ms),
        ("--rounds", settings.rounds, base.rounds),
        ("--openssl-runs", settings.openssl_runs, base.openssl_runs),
    ):
        if value != default:
            argv += [flag, str(value)]
    if settings.until_stable is not None:
        argv += [f"--until-stable={settings.until_stable}", "--max-time", str(o.max_time)]
    if settings.tc_calls:
        argv += ["--method", "tc", "--tc-calls", str(settings.tc_calls)]
    for flag, values in (("--erl", o.erl), ("--openssl", o.openssl), ("--python", o.python)):
        for value in values:
            argv += [flag, value]
    if kinds != calls.RUNTIME_KINDS:
        argv += ["--runtimes", ",".join(kinds)]
    return shlex.join(argv)


def for_env(erl: tuple[str, ...], openssl: tuple[str, ...]) -> runner.Plan:
    """`bridge env`: every runtime once, with the features of every built-in
    scenario, so the masks for all of them are shown (nothing is measured)."""
    features = tuple(
        dict.fromkeys(f for s in scenario.available() for f in scenario.load(s).features)
    )
    probe = scenario.HashScenario(
        name="env",
        description="",
        digest="sha256",
        sizes=(16,),
        features=features,
        calls={"erlang": ("hash",), "python": ("hashlib",), "openssl": ("speed-evp",)},
    )
    return runner.Plan(
        scenarios=(probe,), settings=DEFAULT, seed=0, erl=erl or (None,), openssl=openssl or (None,)
    )
