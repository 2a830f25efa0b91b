"""From command-line options (or a saved report) to a Plan.

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

import click

from bridge import plain
from bridge.analysis import concurrency
from bridge.catalog import calls, scenario
from bridge.catalog.vocab import COMMAND, RuntimeKind
from bridge.errors import UsageError
from bridge.measure import cost
from bridge.measure.plan import Plan, plan_code
from bridge.nodes import distribution
from bridge.report import schema
from bridge.settings import BOUNDS, DEFAULT, QUICK, Settings
from bridge.system import discover, libcrypto, output, runenv


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
    processes: int | None = None
    until_stable: float | None = None
    max_time: int = 300
    seed: int = 1
    erl: tuple[str, ...] = ()
    openssl: tuple[str, ...] = ()
    python: tuple[str, ...] = ()
    hw: str | None = None  # as given: from_options parses it (schema.HwMode)
    runtimes: str | None = None  # None: every kind, or none beside --node
    scenario_dirs: tuple[Path, ...] = ()
    sizes: str | None = None
    file_size: str | None = None
    method: str = "bridge"
    tc_calls: int | None = None
    request_timeout: float = 30.0
    timeout: float = DEFAULT.user_timeout_s  # --timeout: a user call's sample
    memory_limit: str | None = None  # --memory-limit SIZE, as given
    node: tuple[str, ...] = ()
    measure: bool = False
    cookie_file: Path | None = None
    # --cookie, --cookie-file or RELEASE_COOKIE, as cli.common.cookie_options
    # read them (cookie_given: one of the options was on the command line).
    cookie: distribution.Cookie | None = None
    cookie_given: bool = False
    max_load: float = distribution.MAX_LOAD
    connect_timeout: float = distribution.CONNECT_TIMEOUT_S
    # --env, each bound to the runtime option before it (bridge.system.runenv.bind).
    env: tuple[runenv.Given, ...] = ()
    libcrypto: tuple[str, ...] = ()
    concurrency: str | None = None
    schedulers: int | None = None
    with_calls: tuple[str, ...] = ()  # --with: calls added to the scenarios they serve
    # For the user calls of a scenario file's [[calls]] (bridge.catalog.usercode).
    pa: tuple[str, ...] = ()
    python_path: tuple[str, ...] = ()


def _ignored(option: str, loaded, why_not) -> None:
    """An option a scenario cannot follow is not ignored silently: a warning
    naming the option and the scenario, or an error when no scenario of the
    run follows it. `why_not(sc)` is "" where it applies."""
    reasons = {sc.name: why for sc in loaded if (why := why_not(sc))}
    if not reasons:
        return
    said = "; ".join(f"{name}: {why}" for name, why in reasons.items())
    if len(reasons) == len(loaded):
        raise UsageError(f"{option} changes nothing in this run ({said})")
    click.echo(f"bridge: warning: {option} does not apply to {said}", err=True)


def from_options(o: RunOptions, command: tuple[str, ...]) -> Plan:
    if not o.scenarios:
        raise UsageError("name a scenario to run (crypto-bridge list shows them), or use --replay")
    settings = settings_from(o)
    nodes = node_plan(o)
    # Beside --node, local runtimes run only when --runtimes names them.
    default = () if nodes else calls.RUNTIME_KINDS
    kinds = runtime_kinds(o.runtimes) if o.runtimes is not None else default
    loaded = tuple(scenario.load(s, tuple(o.scenario_dirs)) for s in o.scenarios)
    if o.sizes is not None:
        wanted = parse_sizes(o.sizes)
        _ignored("--sizes", loaded, lambda sc: sc.fixed_sizes)
        loaded = tuple(sc.with_sizes(wanted) for sc in loaded)
    if o.file_size is not None:
        one = (parse_byte_count(o.file_size),)
        _ignored(
            "--file-size",
            loaded,
            lambda sc: "" if isinstance(sc, scenario.FileDigestScenario) else "it reads no file",
        )
        loaded = tuple(
            sc.with_sizes(one) if isinstance(sc, scenario.FileDigestScenario) else sc
            for sc in loaded
        )
    loaded = add_calls(loaded, o.with_calls, kinds)
    if o.concurrency is not None:
        _ignored(
            "--concurrency",
            loaded,
            lambda sc: (
                "" if concurrency.runs_levels(sc) else "a whole file per call is not run at levels"
            ),
        )
        levels = parse_levels(o.concurrency)
        loaded = tuple(
            sc.with_concurrency(levels) if concurrency.runs_levels(sc) else sc for sc in loaded
        )
    if o.hw is not None:
        hw = schema.HwMode.parse(o.hw, "--hw")
    else:
        hw = schema.HwMode.default(bool(kinds) and any(sc.features for sc in loaded))
    if nodes is not None:
        check_nodes(loaded, kinds, hw)
        check_node_options(o, kinds)
    erl, erl_env = expand_erl_given(o.erl, runenv.for_option(o.env, "erl", len(o.erl)))
    plan = Plan(
        scenarios=loaded,
        settings=settings,
        seed=o.seed,
        erl=erl or (None,),
        openssl=o.openssl or (None,),
        python=o.python or (None,),
        kinds=kinds,
        hw=hw,
        command=command,
        # otp:N resolved to paths, so the line does not depend on what
        # discovery finds (when each --erl names one installation, so that
        # each keeps its --env).
        reproduce=reproduce(
            dataclasses.replace(o, erl=erl) if len(erl) == len(o.erl) else o, settings, kinds, hw
        ),
        nodes=nodes,
        env={
            RuntimeKind.ERLANG: erl_env,
            RuntimeKind.PYTHON: runenv.for_option(o.env, RuntimeKind.PYTHON, len(o.python)),
            RuntimeKind.OPENSSL: runenv.for_option(o.env, RuntimeKind.OPENSSL, len(o.openssl)),
        },
        libcrypto=libcrypto_dirs(o.libcrypto),
        # A scenario file the user named may hold their own calls ([[calls]]).
        user=plan_code(tuple(uc for sc in loaded for uc in sc.user_calls), o.pa, o.python_path),
    )
    check_room(plan)
    return plan


def node_plan(o: RunOptions) -> distribution.NodePlan | None:
    """--node and its options. Loading code into a running node is an
    explicit choice: --node without --measure is refused."""
    if not o.node:
        cookie_given = o.cookie_given or o.cookie_file is not None
        for flag, given in (("--measure", o.measure), ("--cookie/--cookie-file", cookie_given)):
            if given:
                raise UsageError(f"{flag} goes with --node NAME@HOST")
        return None
    if not o.measure:
        raise UsageError(
            "--node measures on a running node by loading bridge's agent into it: add"
            " --measure to allow that (crypto-bridge env --node probes it without loading anything)"
        )
    return distribution.node_plan(
        o.node,
        o.cookie or o.cookie_file,
        measure=True,
        max_load=o.max_load,
        connect_timeout=o.connect_timeout,
    )


def check_nodes(
    loaded: tuple[scenario.Scenario, ...], kinds: tuple[str, ...], hw: schema.HwMode
) -> None:
    """Refuse a --node run in which a scenario would measure nothing: a node
    runs Erlang calls, and not file digests (the file is written here); the
    local runtimes beside it (--runtimes) may still measure such a scenario."""
    if not any(RuntimeKind.ERLANG in sc.calls for sc in loaded):
        names = ", ".join(sc.name for sc in loaded)
        raise UsageError(f"--node runs Erlang calls, and {names} has none")
    for sc in loaded:
        if any(k in sc.calls for k in kinds):
            continue  # a local runtime measures it
        if isinstance(sc, scenario.FileDigestScenario):
            raise UsageError(
                f"--node cannot measure {sc.name}: it reads a file that bridge writes on"
                " this machine, which a node may not see (run it locally, or add"
                " --runtimes erlang to measure it here beside the node)"
            )
        if RuntimeKind.ERLANG not in sc.calls:
            raise UsageError(f"--node runs Erlang calls, and {sc.name} has none")
    if hw.masks and not kinds:
        raise UsageError(
            f"--hw {hw}: a running node cannot be masked (its libcrypto read OPENSSL_ia32cap"
            " when it started); measure it with --hw on, and run the A/B locally"
            " (crypto-bridge env --node shows where)"
        )


def check_node_options(o: RunOptions, kinds: tuple[str, ...]) -> None:
    """Options that only local runtimes honour, refused where --node would be
    the only thing measured (a node is not restarted, re-linked or timed
    with timer:tc: each would be ignored without a word)."""
    local_only = (
        (
            "--method tc",
            o.method == "tc",
            (RuntimeKind.ERLANG,),
            "times local Erlang runtimes only",
        ),
        (
            "--schedulers",
            o.schedulers is not None,
            (RuntimeKind.ERLANG,),
            "sets local Erlang's schedulers",
        ),
        ("--concurrency", o.concurrency is not None, calls.RUNTIME_KINDS, "runs local workers"),
        ("--libcrypto", bool(o.libcrypto), calls.RUNTIME_KINDS, "reruns local runtimes"),
    )
    for flag, given, honoured_by, what in local_only:
        if given and not any(k in kinds for k in honoured_by):
            raise UsageError(
                f"{flag} {what}: a running node ignores it, and no local runtime here takes it"
                f" (drop {flag.split()[0]}, or add --runtimes erlang to measure one beside it)"
            )


def expand_erl_given(
    erl: tuple[str, ...], given: tuple[dict[str, str], ...]
) -> tuple[tuple[str, ...], tuple[dict[str, str], ...]]:
    """expand_erl, keeping each --erl's variables with every installation it
    names (--erl otp:23 --env LD_LIBRARY_PATH=... gives them to each OTP 23)."""
    out: list[tuple[str, dict[str, str]]] = []
    for spec, env in zip(erl, given, strict=True):
        for path in expand_erl((spec,)):
            if not spec.startswith("otp:") or (path, env) not in out:
                out.append((path, env))
    return tuple(p for p, _ in out), tuple(e for _, e in out)


def libcrypto_dirs(given: tuple[str, ...]) -> tuple[libcrypto.Directory, ...]:
    out: list[libcrypto.Directory] = []
    for text in given:
        found = libcrypto.resolve(text)
        if all(d.dir != found.dir for d in out):
            out.append(found)
    return tuple(out)


def settings_from(o: RunOptions) -> Settings:
    base = QUICK if o.quick else DEFAULT
    return dataclasses.replace(
        base,
        warmup_ms=base.warmup_ms if o.warmup_ms is None else o.warmup_ms,
        sample_ms=o.sample_ms or base.sample_ms,
        samples=o.samples or base.samples,
        rounds=o.rounds or base.rounds,
        openssl_runs=o.openssl_runs or base.openssl_runs,
        processes=o.processes or base.processes,
        until_stable=o.until_stable,
        max_seconds=o.max_time,
        timeout_slack_s=o.request_timeout,
        tc_calls=(o.tc_calls or (100_000 if o.quick else 1_000_000)) if o.method == "tc" else None,
        schedulers=o.schedulers,
        user_timeout_s=o.timeout,
        memory_limit_mib=base.memory_limit_mib
        if o.memory_limit is None
        else parse_memory_limit(o.memory_limit),
    )


def parse_memory_limit(text: str) -> int:
    """--memory-limit 4G, 512M (powers of 1024) as MiB, within its bounds."""
    b = BOUNDS["memory_limit_mib"]
    n = _byte_count(text)
    if n is None or not b.low <= n >> 20 <= b.high:
        raise UsageError(
            f"--memory-limit: {plain.visible(text[:40])!r} is not a size from {int(b.low)}M"
            f" to {int(b.high) >> 10}G (K/M/G are powers of 1024, e.g. 2G or 512M)"
        )
    return n >> 20


def runtime_given_env(rt: schema.Runtime) -> dict[str, str]:
    """The variables a reported runtime was given with --env that a replay
    may give it again: the harmless ones only (bridge.system.runenv.FROM_REPORT)."""
    kept, _ = runenv.from_report(rt.details.given_env)
    return kept


def add_calls(
    loaded: tuple[scenario.Scenario, ...], given: tuple[str, ...], kinds: tuple[str, ...]
) -> tuple[scenario.Scenario, ...]:
    """--with ID (or RUNTIME:ID): add a call of the table, an opt-in
    alternative above all, to every scenario of the run whose kind it
    serves. A call that serves none of them, or whose runtime does not run,
    is an error: it would otherwise be ignored in silence."""
    for spec in given:
        runtime, call_id = with_spec(spec)
        shown = plain.visible(spec[:60])
        found = [
            (r, call_id)
            for r in calls.RUNTIME_KINDS
            if runtime in (None, r) and calls.lookup(r, call_id)
        ]
        if not found:
            raise UsageError(
                f"--with {shown}: no such call; crypto-bridge list names the opt-in"
                " calls, crypto-bridge show SCENARIO every call of a scenario"
            )
        if len(found) > 1:
            raise UsageError(
                f"--with {shown}: more than one runtime has this call; write"
                f" {' or '.join(f'{r}:{c}' for r, c in found)}"
            )
        ((r, c),) = found
        if r not in kinds:
            raise UsageError(f"--with {shown}: {r} is not among the runtimes run")
        served = calls.CALLS[r, c].kinds
        if not any(sc.kind in served for sc in loaded):
            raise UsageError(
                f"--with {shown}: it serves {', '.join(sorted(served))}"
                f" scenarios, and this run has none (its kinds: "
                f"{', '.join(dict.fromkeys(sc.kind for sc in loaded))})"
            )
        loaded = tuple(sc.with_call(r, c) if sc.kind in served else sc for sc in loaded)
    return loaded


def with_spec(spec: str) -> tuple[str | None, str]:
    """RUNTIME:ID, or ID alone (call ids may hold a colon: public_key:sign)."""
    head, sep, rest = spec.partition(":")
    if sep and head in calls.RUNTIME_KINDS:
        return head, rest
    return None, spec


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
            if plain.whole_number(spec[4:]) is None:
                raise UsageError(
                    f"--erl {spec!r}: otp: takes a release number, e.g. otp:27 (digits 0-9)"
                )
            found = discover.resolve_group(spec)
            if not found:
                # Say why an installation of that release does not count.
                broken = [f"{f.root}: {f.problem}" for f in discover.broken_in_group(spec)]
                why = f": {'; '.join(broken)}" if broken else ""
                raise UsageError(
                    f"--erl {spec}: no working OTP {spec[4:]} installation found{why}",
                    hint="crypto-bridge otp list shows what is installed",
                )
            out += [f for f in found if f not in out]
        else:
            out.append(spec)
    return tuple(out)


def check_writable(path: Path, flag: str = "--output") -> None:
    """Fail before measuring, not after: try to create a file where the
    output will go (os.access says yes to root even where writing fails).
    Through a symlink that is its target's directory; a FIFO, a device or
    `-` is written in place and needs no new file (bridge.report.output.Target)."""
    target = output.output_target(path)
    if target.direct:
        return
    parent = target.directory
    where = "" if target.path == Path(os.path.abspath(path)) else f" (where {path} points)"
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: directory {parent}{where} does not exist")
    try:
        fd, probe = tempfile.mkstemp(prefix=".bridge-probe-", dir=parent)
    except OSError as exc:
        raise UsageError(
            f"{flag} {path}: directory {parent}{where} is not writable ({exc.strerror})"
        ) from None
    os.close(fd)
    os.unlink(probe)


# -- room for the run ---------------------------------------------------------

# Left free on the file system after the generated files: a disk filled to the
# last block makes everything else on the machine fail too.
DISK_RESERVE = 64 << 20


def check_room(plan: Plan) -> None:
    """Refuse, before anything runs, a plan that cannot fit: the files of
    file-digest scenarios against free disk in the temporary directory, and
    the run's memory (bridge.measure.cost) against available memory. One
    line, with the numbers."""
    directory = tempfile.gettempdir()
    check_disk(plan, directory, free_disk(directory))
    check_memory(plan, mem_available())


def check_disk(plan: Plan, directory: str, free: int | None) -> None:
    files = [
        (sc.name, size)
        for sc in plan.scenarios
        if isinstance(sc, scenario.FileDigestScenario) and any(k in plan.kinds for k in sc.calls)
        for size in sc.sizes
    ]
    need = sum(size for _, size in files)
    if free is None or not files or need + DISK_RESERVE <= free:
        return
    what = (
        f"{files[0][0]} writes a {size_text(need)} file"
        if len(files) == 1
        else f"the file-digest scenarios write {len(files)} files ({size_text(need)} in all)"
    )
    raise UsageError(
        f"{what} into {directory}, which has {size_text(free)} free"
        f" ({size_text(DISK_RESERVE)} of it is kept spare);"
        " use a smaller --file-size, or set TMPDIR to a file system with more room"
    )


def check_memory(plan: Plan, available: int | None, cpus: int | None = None) -> None:
    """The run's memory as bridge.measure.cost estimates it (the worker
    processes, the generated messages, bridge itself) against MemAvailable,
    naming the largest part."""
    c = cost.estimate(plan, cpus or os.cpu_count() or 1)
    if available is None or c.memory <= available:
        return
    top = c.memory_parts[0]
    if top.part is cost.Part.MESSAGES:
        what = f"the generated messages (largest {size_text(c.largest_message)})"
        fix = "use smaller --sizes or fewer runtimes"
    elif top.part is cost.Part.LEVEL_PROCESSES:
        what = f"{int(c.processes[0].amount)} Python processes for --concurrency"
        fix = "use lower --concurrency levels"
    else:
        what = f"{c.workers} worker processes"
        fix = "use fewer runtimes, --processes or --schedulers"
    raise UsageError(
        f"this run needs about {size_text(c.memory)} of memory, {size_text(int(top.amount))}"
        f" of it for {what}; {size_text(available)} is available (MemAvailable); {fix}"
    )


def free_disk(directory: str) -> int | None:
    try:
        st = os.statvfs(directory)
    except OSError:
        return None  # no such directory: creating files there fails with its own message
    return st.f_bavail * st.f_frsize


def mem_available(meminfo: str = "/proc/meminfo") -> int | None:
    """MemAvailable in bytes (Linux 3.14+); None where it is not known."""
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name == "MemAvailable" and value.split()[1:] == ["kB"]:
                    return int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def size_text(n: int) -> str:
    """1.0 GiB, 512.0 MiB, 100 bytes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


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
    n = plain.whole_number(digits)
    return None if n is None else n * scale


def parse_levels(text: str) -> tuple[int, ...]:
    """--concurrency 1,2,4 (level 1 is added: scaling is relative to it): at
    most as many levels as a scenario file may name."""
    try:
        levels = concurrency.parse_levels(text)
    except ValueError as exc:
        raise UsageError(
            f"--concurrency: {exc.args[0]!r} is not a level; expected whole numbers of"
            f" concurrent workers from 1 to {concurrency.MAX_LEVEL}, comma-separated"
        ) from None
    given = {plain.whole_number(piece.strip()) for piece in text.split(",")}
    if len(given) > scenario.MAX_LEVELS:
        raise UsageError(
            f"--concurrency: {len(given)} levels; at most {scenario.MAX_LEVELS}, as in a"
            " scenario file"
        )
    return levels


def parse_sizes(text: str) -> tuple[int, ...]:
    """--sizes 16,64,1k: positive byte counts up to the scenario limit, with
    the same K/M/G suffixes as --file-size, and at most as many as a
    scenario file may name."""
    out: list[int] = []
    for piece in text.split(","):
        piece = piece.strip()
        n = _byte_count(piece)
        if n is None or not 1 <= n <= scenario.MAX_SIZE:
            raise UsageError(
                f"--sizes: {piece[:40]!r} is not a message size; expected byte counts"
                f" from 1 to {scenario.MAX_SIZE} (or with K/M/G, e.g. 1k), comma-separated"
            )
        if n not in out:
            out.append(n)
        if len(out) > scenario.MAX_SIZES:
            raise UsageError(
                f"--sizes: more than {scenario.MAX_SIZES} sizes; at most {scenario.MAX_SIZES},"
                " as in a scenario file"
            )
    return tuple(out)


def reproduce(o: RunOptions, settings: Settings, kinds: tuple[str, ...], hw: schema.HwMode) -> str:
    """A command line that reruns the same measurement: every option that
    changes what is measured, and none that only changes what is printed.
    `o.erl` holds paths here, --erl otp:N already resolved: what otp:27 finds
    depends on BRIDGE_OTP_PATH and on what is installed, which the line
    cannot carry."""
    argv = [COMMAND, "run", *o.scenarios, "--seed", str(o.seed), "--hw", hw]
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
        ("--processes", settings.processes, base.processes),
    ):
        if value != default:
            argv += [flag, str(value)]
    if settings.until_stable is not None:
        argv += [f"--until-stable={settings.until_stable}", "--max-time", str(o.max_time)]
    if settings.tc_calls:
        argv += ["--method", "tc", "--tc-calls", str(settings.tc_calls)]
    if o.concurrency is not None:
        argv += ["--concurrency", ",".join(map(str, parse_levels(o.concurrency)))]
    if settings.schedulers:
        argv += ["--schedulers", str(settings.schedulers)]
    if settings.user_timeout_s != base.user_timeout_s:
        argv += ["--timeout", f"{settings.user_timeout_s:g}"]
    if settings.memory_limit_mib != base.memory_limit_mib:
        argv += ["--memory-limit", f"{settings.memory_limit_mib}M"]
    for spec in o.with_calls:
        argv += ["--with", spec]
    for flag, values in (("--erl", o.erl), ("--openssl", o.openssl), ("--python", o.python)):
        for n, value in enumerate(values):
            argv += [flag, value, *runenv.argv(o.env, flag[2:], n)]
    for directory in o.libcrypto:
        argv += ["--libcrypto", directory]
    for flag, dirs in (("--pa", o.pa), ("--python-path", o.python_path)):
        for directory in dirs:
            argv += [flag, directory]
    if kinds != (() if o.node else calls.RUNTIME_KINDS):
        argv += ["--runtimes", ",".join(kinds)]
    for node in dict.fromkeys(o.node):
        argv += ["--node", node]
    if o.node:
        argv += ["--measure", "--max-load", f"{o.max_load:g}"]
        # A file is named again; a cookie given itself (--cookie,
        # RELEASE_COOKIE) never enters the line.
        named = o.cookie.path if o.cookie is not None and o.cookie.named else o.cookie_file
        if named is not None:
            argv += ["--cookie-file", str(named)]
    return shlex.join(argv)


def for_env(erl: tuple[str, ...], openssl: tuple[str, ...]) -> Plan:
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
        calls={
            RuntimeKind.ERLANG: ("hash",),
            RuntimeKind.PYTHON: ("hashlib",),
            RuntimeKind.OPENSSL: ("speed-evp",),
        },
    )
    return Plan(
        scenarios=(probe,), settings=DEFAULT, seed=0, erl=erl or (None,), openssl=openssl or (None,)
    )
