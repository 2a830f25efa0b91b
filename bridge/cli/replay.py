"""`bridge run --replay r.json`: a report from someone else is data, never code.

By default a replay runs THIS machine's runtimes: each runtime in the report
is matched by kind and version (Erlang through the same discovery as
`--erl otp:N`, Python and openssl on PATH, each candidate asked its version),
and none of the report's executables, variables or --libcrypto directories
is used. `--as-recorded` uses the report's executables, its --libcrypto
directories and the few variables bridge knows to be harmless
(bridge.system.runenv.FROM_REPORT), after listing them for the user to confirm. A
variable that changes what a runtime loads or how it starts (ERL_*FLAGS,
LD_*, PYTHON*, OPENSSL_CONF, ...) is dropped with a warning in every mode.

The report's settings pass the same bounds as the command line's options
(bridge.settings.BOUNDS). Nothing here prints: the mapping, the warnings and
what --as-recorded will run are returned for bridge.cli.run to show, each string
from the report escaped first (`_printable`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bridge import plain
from bridge.catalog import calls, scenario
from bridge.catalog.vocab import COMMAND, RuntimeKind
from bridge.cli import plans
from bridge.errors import UsageError
from bridge.measure import cost
from bridge.measure.eta import duration
from bridge.measure.plan import Plan, plan_code
from bridge.report import provenance, schema
from bridge.report.hw import HwMode
from bridge.settings import (
    BOUNDS,
    DEFAULT,
    REPORT_CAPS,
    REPORT_SAMPLES_X_ROUNDS,
    Bound,
    Settings,
)
from bridge.system import discover, proc, runenv

# What a node name must look like to be shown as one (and put in a command line).
NODE_NAME = re.compile(r"[A-Za-z0-9_+.-]{1,255}@[A-Za-z0-9_.-]{1,255}")
PLAIN_TOKEN = re.compile(r"[A-Za-z0-9_.+/=:,@%-]{1,200}")
VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
OPENSSL_VERSION = re.compile(r"\b(OpenSSL|LibreSSL)\s+(\d+)\.(\d+)\.(\d+[a-z]*)")
PYTHON_NAME = re.compile(r"python3(\.\d+)?")
OPENSSL_NAME = re.compile(r"openssl(\d[\d.]*)?")
PROBE_TIMEOUT_S = 10


def _printable(s: object, limit: int = 200) -> str:
    """`s` safe for a terminal line (bridge.plain.printable), at most `limit`
    characters."""
    text = str(s)
    return plain.printable(text[:limit]) + ("..." if len(text) > limit else "")


def _value(v: object) -> str:
    """A report's value in a message: short, escaped."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 128:
        return f"a {v.bit_length()}-bit integer"
    return _printable(repr(v), 40)


# -- settings -----------------------------------------------------------------


def settings_of(old: schema.Report, path: Path) -> tuple[Settings, int, HwMode]:
    """(settings, seed, hw) as the report has them, each checked against the
    command line's bounds: one line naming the field when one is not."""
    # Checked as recorded (a key present, null included), against the bounds.
    raw = old.settings.to_json()
    for name, bound in BOUNDS.items():
        if name in raw:
            _check(raw[name], bound, f"{path}: settings.{name}")
    if "quick" in raw and not isinstance(raw["quick"], bool):
        raise UsageError(f"{path}: settings.quick: {_value(raw['quick'])} is not true or false")
    known = {f.name for f in dataclasses.fields(Settings)}
    values = {k: v for k, v in raw.items() if k in known}
    for name in ("timeout_slack_s", "until_stable", "ci_target"):
        if values.get(name) is not None:
            values[name] = float(values[name])
    # Checked again here: a report made in memory has not been through
    # bridge.report.check.
    hw = HwMode.parse(old.hardware.hw or HwMode.ON, f"{path}: hardware.hw")
    settings = Settings(**values)
    _check_caps(settings, path)
    return settings, 1 if old.seed is None else old.seed, hw


def _check_caps(settings: Settings, path: Path) -> None:
    """A report's settings within what a replay takes from a report
    (bridge.settings.REPORT_CAPS), lower than the command line's bounds: one
    line naming the setting, its cap, and the option that asks for more."""
    for name, cap in REPORT_CAPS.items():
        value = getattr(settings, name)
        if value is None or value <= cap:
            continue
        option = BOUNDS[name].option
        # --memory-limit takes a size with its unit; the setting is in MiB.
        typed = f"{value}M" if name == "memory_limit_mib" else _number(value)
        how = (
            f"type {option} {typed} to run that"
            if option
            else f"bridge itself sets it to {_number(getattr(DEFAULT, name))}"
        )
        raise UsageError(
            f"{path}: settings.{name}: {_number(value)} is more than a replay takes from a"
            f" report (at most {_number(cap)}); {how}"
        )
    product = settings.samples * settings.rounds
    if product > REPORT_SAMPLES_X_ROUNDS:
        raise UsageError(
            f"{path}: settings.samples x settings.rounds: {settings.samples} x"
            f" {settings.rounds} is more than a replay takes from a report (at most"
            f" {REPORT_SAMPLES_X_ROUNDS:,} samples x rounds); type --samples and --rounds to"
            " run that"
        )


def _number(v: float) -> str:
    """100000000, 0.5: as typed, never 1e+08."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


# Levels of concurrency a replay takes from a report: the count (level 1
# included) and the largest. The command line takes 16 levels up to 1024
# (bridge.cli.plans.parse_levels); a report's are someone else's choice, and
# each level of N starts N - 1 Python processes. 1, 2, 4, ... 64 fits.
REPORT_LEVELS = 8
REPORT_LEVEL = 64


def _check_levels(loaded: Sequence[scenario.Scenario], path: Path) -> None:
    for i, sc in enumerate(loaded):
        levels = sc.concurrency
        if len(levels) <= REPORT_LEVELS and max(levels, default=1) <= REPORT_LEVEL:
            continue
        shown = ",".join(map(str, levels)) if len(levels) <= 20 else f"{len(levels)} levels"
        raise UsageError(
            f"{path}: scenarios[{i}] ({_printable(sc.name, 64)}): concurrency {shown} is more"
            f" than a replay takes from a report (at most {REPORT_LEVELS} levels, up to"
            f" {REPORT_LEVEL}); type --concurrency to run more"
        )


def _check(value: object, bound: Bound, where: str) -> None:
    if value is None and bound.optional:
        return
    if bound.integer:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = ok and math.isfinite(value)
    if not ok or not bound.low <= value <= bound.high:
        null = " (or null)" if bound.optional else ""
        raise UsageError(f"{where}: {_value(value)} is not {bound.describe()}{null}")


# -- this machine's runtimes --------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A runtime of this machine: its path (None: this Python), its version
    as it says it, and whether it is the default (on PATH, or this Python)."""

    path: str | None
    version: str
    default: bool = False
    label: str = ""  # how to name it (the path, or this Python's)

    @property
    def shown(self) -> str:
        return self.label or self.path or ""


@dataclass
class Local:
    """What this machine has, found once and only when a report needs it.
    Tests give the lists; None: look."""

    erlang: list[Candidate] | None = None
    python: list[Candidate] | None = None
    openssl: list[Candidate] | None = None
    run: Callable[..., subprocess.CompletedProcess] = field(default=proc.run)

    def first(self, kind: str) -> list[Candidate]:
        """The candidates found without starting anything when possible:
        this Python alone for python (the others are asked only when it is
        not the version wanted)."""
        if kind == RuntimeKind.PYTHON and self.python is None:
            return [_this_python()]
        return self.candidates(kind)

    def candidates(self, kind: str) -> list[Candidate]:
        if getattr(self, kind) is None:
            setattr(self, kind, getattr(self, f"_find_{kind}")())
        return getattr(self, kind)

    def _find_erlang(self) -> list[Candidate]:
        # discover.discover() is what --erl otp:N resolves through
        # (discover.resolve_group): the same installations, the same probe.
        return [
            Candidate(str(f.erl), f.otp_version, default="PATH" in f.sources)
            for f in discover.discover()
            if not f.problem and f.otp_version
        ]

    def _find_python(self) -> list[Candidate]:
        out = [_this_python()]
        seen = {os.path.realpath(sys.executable)}
        for path in _on_path(PYTHON_NAME):
            if os.path.realpath(path) in seen:
                continue
            seen.add(os.path.realpath(path))
            # One start says its version and whether bridge's worker imports
            # there: a Python without bridge cannot run the worker.
            said = self._ask([path, "-c", _PYTHON_PROBE])
            if said and VERSION.fullmatch(said):
                out.append(Candidate(path, said))
        return out

    def _find_openssl(self) -> list[Candidate]:
        default = shutil.which("openssl")
        out, seen = [], set()
        for path in ([default] if default else []) + _on_path(OPENSSL_NAME):
            if os.path.realpath(path) in seen:
                continue
            seen.add(os.path.realpath(path))
            m = OPENSSL_VERSION.search(self._ask([path, "version"]))
            if m:
                out.append(Candidate(path, m[0], default=path == default))
        return out

    def _ask(self, argv: list[str]) -> str:
        try:
            done = self.run(argv, timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        if done.returncode != 0:
            return ""
        return done.stdout.decode(errors="replace").strip()


def _this_python() -> Candidate:
    return Candidate(None, platform.python_version(), True, sys.executable)


_PYTHON_PROBE = "import platform; import bridge.pyworker.worker; print(platform.python_version())"


def _on_path(pattern: re.Pattern) -> list[str]:
    out = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = sorted(os.listdir(directory or "."))
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if pattern.fullmatch(name) and os.access(path, os.X_OK) and path not in out:
                out.append(path)
    return out


def report_version(rt: schema.Runtime) -> tuple[str, str]:
    """(series, exact) of a report runtime: OTP major and version; Python
    3.11 and 3.11.7; OpenSSL 3.0 and 3.0.19 (with its flavour)."""
    if rt.kind == RuntimeKind.ERLANG:
        d = rt.details
        own = d.otp_version if isinstance(d, provenance.ErlangDetails) else ""
        exact = (own or str(rt.version).removeprefix("OTP ")).strip()
        return exact.split(".")[0], exact
    if rt.kind == RuntimeKind.OPENSSL:
        m = OPENSSL_VERSION.search(str(rt.version))
        return (f"{m[1]} {m[2]}.{m[3]}", f"{m[1]} {m[2]}.{m[3]}.{m[4]}") if m else ("", "")
    m = VERSION.search(str(rt.version))
    return (f"{m[1]}.{m[2]}", m[0]) if m else ("", "")


def candidate_version(kind: str, c: Candidate) -> tuple[str, str]:
    if kind == RuntimeKind.OPENSSL:
        m = OPENSSL_VERSION.search(c.version)
        return (f"{m[1]} {m[2]}.{m[3]}", f"{m[1]} {m[2]}.{m[3]}.{m[4]}") if m else ("", "")
    if kind == RuntimeKind.ERLANG:
        return c.version.split(".")[0], c.version
    m = VERSION.search(c.version)
    return (f"{m[1]}.{m[2]}", m[0]) if m else ("", "")


# How each kind's versions and default are named in the mapping.
_NAMES = {RuntimeKind.ERLANG: "OTP", RuntimeKind.PYTHON: "Python", RuntimeKind.OPENSSL: ""}
_DEFAULT = {
    RuntimeKind.ERLANG: "erl on PATH",
    RuntimeKind.PYTHON: "this Python",
    RuntimeKind.OPENSSL: "openssl on PATH",
}


def _named(kind: str, version: str) -> str:
    """OTP 23.2.6, Python 3.11.7, OpenSSL 3.0.19 (openssl says its flavour)."""
    return f"{_NAMES[kind]} {version}".strip()


@dataclass
class Mapped:
    """A report runtime and what runs for it here (runs False: nothing more,
    it is already running for another, or there is none)."""

    report: schema.Runtime
    path: str | None
    line: str
    runs: bool = True


def match(kind: str, wanted: Sequence[schema.Runtime], local: Local) -> list[Mapped]:
    """Each report runtime of one kind to a runtime of this machine: the same
    version, else the same series (OTP major, Python or OpenSSL x.y), else
    the default one, said so. Two report runtimes that come to the same one
    here run it once."""
    used: dict[str | None, str] = {}
    out = []
    for rt in wanted:
        series, exact = report_version(rt)
        found = local.first(kind)
        if not any(candidate_version(kind, c)[1] == exact for c in found):
            found = local.candidates(kind)
        same = [c for c in found if series and candidate_version(kind, c)[0] == series]
        # The exact version first, then one not yet used; else as found.
        same.sort(key=lambda c: (candidate_version(kind, c)[1] != exact, c.path in used))
        head = f"replay: {_printable(rt.id)} (report) -> "
        missing = f"no {_printable(_named(kind, series or '(unknown version)'))} here"
        if same:
            chosen, why = same[0], ""
        else:
            chosen = next((c for c in found if c.default), None)
            why = f"{missing}; using {_DEFAULT[kind]}, "
        if chosen is None:
            what = {
                RuntimeKind.ERLANG: "erl",
                RuntimeKind.OPENSSL: "openssl",
                RuntimeKind.PYTHON: "python",
            }[kind]
            line = f"{head}{missing}, and no {what} on PATH"
            out.append(Mapped(rt, None, line, runs=False))
            continue
        line = f"{head}{why}{_printable(chosen.shown)} ({_printable(_named(kind, chosen.version))})"
        if chosen.path in used:
            line += f", which already runs for {used[chosen.path]}"
            out.append(Mapped(rt, chosen.path, line, runs=False))
            continue
        used[chosen.path] = _printable(rt.id)
        out.append(Mapped(rt, chosen.path, line))
    return out


# -- the plan -----------------------------------------------------------------


@dataclass
class Replay:
    """What from_report decided: the plan, and what bridge.cli.run shows first."""

    plan: Plan
    mapping: list[str] = field(default_factory=list)  # "replay: X (report) -> Y"
    warnings: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)  # --as-recorded: what will run
    # The report's user calls (bridge time, [[calls]]), each as it will run:
    # a replay runs them only once the user has seen them and said yes.
    expressions: list[str] = field(default_factory=list)


def draft(old: schema.Report, path: Path, *, as_recorded: bool = False) -> Plan:
    """The plan a replay of `old` would run, before anything is started or
    looked for: its scenarios and settings checked (bounds, then the report
    caps), and a runtime for each of the report's as found (and each of its
    --libcrypto directories with --as-recorded), none yet matched to this
    machine's. What bridge.measure.cost estimates before asking."""
    if not old.scenarios:
        raise UsageError(f"{path}: the report does not describe its scenarios (imported?)")
    loaded = tuple(
        scenario.parse(d.to_json(), f"{path} (scenario {_printable(d.name, 60)})")
        for d in old.scenarios
    )
    _check_levels(loaded, path)
    settings, seed, hw = settings_of(old, path)
    as_found = _as_found(old)
    variants = 1 + (len(_report_libcrypto(old)) if as_recorded else 0)
    count = {k: sum(rt.kind == k for rt in as_found) * variants for k in calls.RUNTIME_KINDS}
    kinds = tuple(k for k in calls.RUNTIME_KINDS if count[k])
    return Plan(
        scenarios=loaded,
        settings=settings,
        seed=seed,
        erl=(None,) * max(count[RuntimeKind.ERLANG], 1),
        openssl=(None,) * max(count[RuntimeKind.OPENSSL], 1),
        python=(None,) * max(count[RuntimeKind.PYTHON], 1),
        kinds=kinds or calls.RUNTIME_KINDS,
        hw=hw,
    )


def call_times(old: schema.Report) -> cost.CallTimes:
    """How long each of the report's calls took there, in seconds (the
    median), for the estimate: a call slower than a sample stretches every
    sample of the replay."""
    kinds = {rt.id: rt.kind for rt in old.runtimes}
    out: dict[tuple[str, str, str, int], float] = {}
    for r in old.results:
        kind = kinds.get(r.runtime)
        if not r.ok or not r.samples or kind is None:
            continue
        key = (r.scenario, kind, r.call_id, r.size)
        out[key] = max(out.get(key, 0.0), r.median() / 1e9)
    return out


def _as_found(old: schema.Report) -> list[schema.Runtime]:
    """The report's local runtimes as found: not its twins, nodes or variants."""
    return [
        rt
        for rt in old.runtimes
        if not rt.masked and rt.node is None and rt.details.libcrypto_dir is None
    ]


def from_report(
    old: schema.Report,
    path: Path,
    command: tuple[str, ...],
    *,
    as_recorded: bool = False,
    local: Local | None = None,
) -> Replay:
    base = draft(old, path, as_recorded=as_recorded)
    loaded = base.scenarios
    nodes = [rt for rt in old.runtimes if rt.node is not None]
    as_found = _as_found(old)
    out = Replay(plan=None)
    if nodes:
        what = node_refusal(nodes, loaded)
        if not as_found:
            raise UsageError(f"{path}: the report measured {what}")
        out.warnings.append(f"the report also measured {what}")
    local = local or Local()
    chosen: dict[str, tuple[str | None, ...]] = {}
    given: dict[str, tuple[dict[str, str], ...]] = {}
    for kind in calls.RUNTIME_KINDS:
        wanted = [rt for rt in as_found if rt.kind == kind]
        if not wanted:
            chosen[kind] = (None,)
            continue
        paths, envs = (
            _as_recorded(kind, wanted, out) if as_recorded else _here(kind, wanted, local, out)
        )
        chosen[kind], given[kind] = paths or (None,), envs
    dirs = _libcrypto_dirs(old, as_recorded, out)
    out.plan = dataclasses.replace(
        base,
        erl=chosen[RuntimeKind.ERLANG],
        openssl=chosen[RuntimeKind.OPENSSL],
        python=chosen[RuntimeKind.PYTHON],
        command=command,
        # What this run was, not the report's own line: that is someone
        # else's text (a crafted one may say anything), and it described
        # their runtimes, not the ones matched here.
        reproduce=shlex.join(
            [COMMAND, "run", "--replay", str(path), *(["--as-recorded"] if as_recorded else [])]
        ),
        env=given,
        libcrypto=plans.libcrypto_dirs(tuple(dirs)),
    )
    user = tuple(uc for sc in loaded for uc in sc.user_calls)
    if user:
        out.expressions = expressions(loaded)
        out.plan = dataclasses.replace(out.plan, user=plan_code(user, (), ()))
    plans.check_room(out.plan)
    return out


# -- what a replay costs ------------------------------------------------------


def cost_summary(c: cost.Cost) -> str:
    """ "about 3 days, up to 13 worker processes and about 0.3 GiB of memory"."""
    until = " (with --until-stable, at most)" if c.seconds_max > c.seconds else ""
    return (
        f"about {long_duration(c.seconds_max)}{until}, up to {c.workers} worker"
        f" process{'es' if c.workers != 1 else ''} at once and about {plans.size_text(c.memory)}"
        " of memory"
    )


def cost_reasons(c: cost.Cost, over: Sequence[cost.Over], plan: Plan) -> list[str]:
    """Why a replay asks: for each figure past the budget, what drives it,
    with the report's settings that set it."""
    out = []
    for what in over:
        if what is cost.Over.TIME:
            line = "an hour" if c.seconds_max > cost.ALWAYS_ASK.seconds else _budget_time()
            out.append(f"the time is over {line}, mostly {_time_part(c.time[0], plan)}")
        elif what is cost.Over.WORKERS:
            line = max(b.workers for b in (cost.BUDGET, cost.ALWAYS_ASK) if c.workers > b.workers)
            out.append(
                f"{c.workers} worker processes are over {line}, mostly"
                f" {_process_part(c.processes[0], plan)}"
            )
        else:
            out.append(
                f"the memory is over {plans.size_text(cost.BUDGET.memory)}, mostly"
                f" {_memory_part(c.memory_parts[0], c, plan)}"
            )
    return out


def _budget_time() -> str:
    return f"{duration(cost.BUDGET.seconds)} (the budget for a replay)"


def long_duration(seconds: float) -> str:
    """eta.duration, in days past two."""
    if seconds >= 2 * 86_400:
        return f"{seconds / 86_400:.0f} days"
    return duration(seconds)


def _levels(plan: Plan) -> str:
    levels = sorted({n for sc in plan.scenarios for n in sc.concurrency})
    return ",".join(map(str, levels))


def _time_part(share: cost.Share, plan: Plan) -> str:
    s, n = plan.settings, share.cells
    cells = f"in each of {n} cell{'s' if n != 1 else ''}"
    P = cost.Part
    words = {
        P.SAMPLES: f"samples x sample_ms ({s.samples} x {s.sample_ms} ms) {cells}",
        P.SLOW_CALLS: f"calls slower than sample_ms ({s.sample_ms} ms, as the report measured"
        f" them): {s.samples} samples {cells}",
        P.WARMUPS: f"the warm-ups (warmup_ms {s.warmup_ms}, rewarm_ms {s.rewarm_ms} in each of"
        f" {s.rounds} rounds) {cells}",
        P.REQUESTS: f"one request per round (rounds {s.rounds}) {cells}",
        P.OPENSSL_RUNS: f"openssl_runs x openssl_seconds ({s.openssl_runs} x"
        f" {s.openssl_seconds} s) {cells}",
        P.LEVELS: f"the concurrency levels {_levels(plan)}: {n} level cells of {s.samples}"
        " windows each",
        P.TC: f"tc_calls ({s.tc_calls} calls, each timed alone) on each of {n} Erlang cells",
        P.UNTIL_STABLE: f"until_stable with max_seconds {s.max_seconds}",
        P.STARTUP: f"starting {n} runtimes",
    }
    return words.get(share.part, share.part.value)


def _process_part(share: cost.Share, plan: Plan) -> str:
    s, n = plan.settings, int(share.amount)
    P = cost.Part
    twins = " and their masked twins" if plan.hw.masks else ""
    words = {
        P.ERLANG_NODES: f"{n} Erlang nodes (processes {s.processes_used} per runtime{twins})",
        P.PYTHON_WORKERS: f"{n} Python workers (processes {s.processes_used} per runtime{twins})",
        P.LEVEL_PROCESSES: f"{n} Python worker processes for the concurrency levels"
        f" {_levels(plan)}",
        P.OPENSSL: f"{n} openssl processes (speed -multi at the levels {_levels(plan)})",
    }
    return words.get(share.part, share.part.value)


def _memory_part(share: cost.Share, c: cost.Cost, plan: Plan) -> str:
    size = plans.size_text(int(share.amount))
    if share.part is cost.Part.MESSAGES:
        return f"the generated messages ({size}; the largest {plans.size_text(c.largest_message)})"
    if share.part is cost.Part.ERLANG_NODES and plan.settings.schedulers:
        return f"{share.cells} Erlang nodes of {plan.settings.schedulers} schedulers ({size})"
    match = [x for x in c.processes if x.part is share.part]
    shown = _process_part(match[0], plan) if match else share.part.value
    return f"{shown} ({size})"


def expressions(loaded: Sequence[scenario.Scenario]) -> list[str]:
    """Each user call of a report's scenarios, one line each, as it will run."""
    return [
        f"{_printable(sc.name, 64)}: {_printable(uc.describe(), 4100)}"
        for sc in loaded
        for uc in sc.user_calls
    ]


def report_expressions(old: schema.Report, path: Path) -> list[str]:
    """The user calls a report would run, read before anything else is done
    with it (no runtime is looked for before the user has said yes)."""
    return expressions(
        [
            scenario.parse(d.to_json(), f"{path} (scenario {_printable(d.name, 60)})")
            for d in old.scenarios
        ]
    )


def confirm_code(
    lines: Sequence[str], yes: bool, interactive: bool, ask: Callable[[str], bool]
) -> None:
    """A report's user code runs only with the user's say-so: every expression
    is shown (by the caller: `lines`) and then confirmed on a terminal, or
    given --yes; without either nothing runs."""
    if not lines or yes:
        return
    if not interactive:
        raise UsageError(
            f"the report holds {len(lines)} user expression(s), shown above:"
            " confirm on a terminal, or add --yes to run them without asking"
        )
    if not ask("Run this code?"):
        raise UsageError("--replay: the report's user code was not confirmed; nothing was run")


def _here(kind, wanted, local, out: Replay):
    """Default: this machine's runtimes, none of the report's variables."""
    paths, envs = [], []
    for m in match(kind, wanted, local):
        out.mapping.append(m.line)
        _warn_env(m.report, out, replayed=False)
        if m.runs:
            paths.append(m.path)
            envs.append({})
    return tuple(paths), tuple(envs)


def _as_recorded(kind, wanted, out: Replay):
    """--as-recorded: the report's executables, with the harmless variables."""
    paths, envs = [], []
    for rt in wanted:
        exe = rt.executable if isinstance(rt.executable, str) else ""
        head = f"replay: {_printable(rt.id)} (report) -> "
        if not exe or not Path(exe).exists():
            out.warnings.append(
                f"{_printable(exe or '(no executable)')} does not exist here;"
                f" using {_default_label(kind)}"
            )
            out.mapping.append(f"{head}{_default_label(kind)} (the report's does not exist here)")
            exe = None
        else:
            out.mapping.append(f"{head}{_printable(exe)} (as recorded)")
        kept = _warn_env(rt, out, replayed=True)
        if exe is None and None in paths:
            continue
        paths.append(exe)
        envs.append(kept)
        shown = " ".join(f"{k}={_printable(v, 80)}" for k, v in kept.items())
        out.recorded.append(
            f"{_printable(rt.id)}: {_printable(exe) if exe else _default_label(kind)}"
            + (f", with {shown}" if shown else ", with no variables of its own")
        )
    return tuple(paths), tuple(envs)


def _default_label(kind: str) -> str:
    """What None runs for a kind (bridge.runtimes.lineup)."""
    return f"this Python, {sys.executable}" if kind == RuntimeKind.PYTHON else _DEFAULT[kind]


def _warn_env(rt: schema.Runtime, out: Replay, *, replayed: bool) -> dict[str, str]:
    # The masks are bridge's own, set again for the hw the replay runs.
    kept, dropped = runenv.from_report(rt.details.given_env)
    for name, why in dropped:
        out.warnings.append(
            f"{_printable(rt.id)}: {_printable(name, 60)} from the report is not replayed: {why}"
        )
    if not replayed and kept:
        names = ", ".join(kept)
        out.warnings.append(
            f"{_printable(rt.id)}: the report's {names} is replayed only with --as-recorded"
        )
    return kept if replayed else {}


def _report_libcrypto(old: schema.Report) -> list[str]:
    """The --libcrypto directories a report's runtimes were run again with."""
    given = dict.fromkeys(
        rt.details.libcrypto_dir.given
        for rt in old.runtimes
        if rt.details.libcrypto_dir is not None
    )
    return [d for d in given if d]


def _libcrypto_dirs(old: schema.Report, as_recorded: bool, out: Replay) -> list[str]:
    """The report's --libcrypto directories: each loads its library into
    every runtime, so they are replayed only --as-recorded."""
    dirs = []
    for d in _report_libcrypto(old):
        shown = _printable(d)
        if not as_recorded:
            out.warnings.append(
                f"the report also ran every runtime with --libcrypto {shown}: not replayed"
                " (it loads that directory's library); --as-recorded replays it"
            )
        elif Path(d).expanduser().is_dir():
            dirs.append(d)
            out.recorded.append(
                f"--libcrypto {shown}: every runtime again, with it in front of LD_LIBRARY_PATH"
            )
        else:
            out.warnings.append(f"--libcrypto {shown} does not exist here; running without it")
    return dirs


def node_refusal(nodes: Sequence[schema.Runtime], loaded: Sequence[scenario.Scenario]) -> str:
    """What to say about a report's running nodes, rebuilt from checked
    names rather than the report's own reproduce line: its names escaped,
    and a command line only when every word of it is plain."""
    names = list(dict.fromkeys(str(rt.executable) for rt in nodes))
    good = [n for n in names if NODE_NAME.fullmatch(n)]
    shown = ", ".join(n if n in good else f"{_printable(n, 80)} (not a node name)" for n in names)
    text = f"running nodes ({shown}), which --replay does not measure again"
    words = [sc.name for sc in loaded]
    if good and all(PLAIN_TOKEN.fullmatch(w) for w in words):
        argv = [COMMAND, "run", *words, *[a for n in good for a in ("--node", n)], "--measure"]
        text += f"; rerun with: {shlex.join(argv)}"
    return text
