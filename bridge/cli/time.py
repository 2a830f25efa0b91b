"""`bridge time EXPR [EXPR...]`: the user's own code timed with bridge's
loops, rounds, CIs and hw A/B, in the style of erlperf.

Each EXPR becomes a user call (bridge.catalog.usercode) of one scenario: bridge
time's own (kind `expr`: Data at each --sizes, a Key and an IV from the seed)
or, with --scenario NAME, that scenario's inputs and reference. The plan is a
normal run's (bridge.measure.runner), so the report is a normal report: `run
--replay`, `report` and `compare` read it, and its scenario records every
expression verbatim.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from bridge.catalog import scenario, usercode, vocab
from bridge.catalog.vocab import RuntimeKind
from bridge.cli import live, plans
from bridge.cli import run as running
from bridge.cli.common import (
    OUTPUT_GROUP,
    Command,
    Exports,
    bounded,
    check_outputs,
    colour_option,
    export_options,
    format_option,
    output_option,
    recorded_command,
    verbosity_options,
)
from bridge.errors import UsageError
from bridge.measure.plan import Plan
from bridge.report import schema
from bridge.runtimes.usercode import plan_code
from bridge.settings import DEFAULT

DEFAULT_SIZES = (1024,)
DEFAULT_FEATURES = ("sha", "aes", "pclmul")  # the crypto extensions, for --hw off/both
NAME = "time"
TIME_GROUPS = (
    (
        "Expressions",
        ("scenario_name", "same_output", "pa", "python_path", "timeout", "memory_limit"),
    ),
    ("Output", ("verbose", *OUTPUT_GROUP, "progress")),
)


@click.command("time", cls=Command, groups=TIME_GROUPS)
@click.argument("exprs", nargs=-1, required=True, metavar="EXPR [EXPR...]")
@click.option(
    "--scenario",
    "scenario_name",
    metavar="NAME|FILE",
    help="Take Key, IV, Count... and the sizes from this scenario's inputs, and check"
    " the outputs against its reference (with --same-output).",
)
@click.option(
    "--same-output",
    is_flag=True,
    help="Check that every expression returns the same bytes for the same inputs (the"
    " first EXPR, or --scenario's reference, is the one the others must equal).",
)
@click.option(
    "--pa",
    "pa",
    multiple=True,
    metavar="DIR",
    help="Add DIR to the Erlang node's code path, as erl -pa (repeatable); a glob such as"
    " '_build/*/lib/*/ebin' or a _build/ENV/lib directory adds each application's ebin.",
)
@click.option(
    "--python-path",
    "python_path",
    multiple=True,
    metavar="DIR",
    help="Put DIR in front of the Python worker's sys.path for py: expressions (repeatable).",
)
@click.option(
    "--timeout",
    type=bounded("user_timeout_s"),
    default=DEFAULT.user_timeout_s,
    show_default=True,
    help="Seconds one sample of an expression may take. Past it, a sh: process, or the"
    " worker and every process its code started, is killed, and the expression fails.",
)
@click.option(
    "--memory-limit",
    "memory_limit",
    metavar="SIZE",
    help="Data memory limit of each worker process, each sh: process and every process they"
    " start (RLIMIT_DATA), e.g. 2G or 512M. Default: 4G.",
)
@click.option(
    "--sizes",
    help="Message sizes for Data, comma-separated (16,1k,16k). Default: 1k, or the scenario's.",
)
@click.option(
    "--hw",
    type=click.Choice(["on", "off", "both"]),
    default="on",
    show_default=True,
    help="The machine as found (on), --features masked (off), or both, with verdicts.",
)
@click.option(
    "--features",
    help="The features --hw off/both masks, comma-separated. Default: sha,aes,pclmul,"
    " or the scenario's.",
)
@click.option(
    "--concurrency",
    metavar="N,N,...",
    help="Also run each Erlang and py: expression with N workers at once, e.g. 1,2,4.",
)
@click.option("--quick", is_flag=True, help="Shorter, rougher measurement, as bridge run --quick.")
@click.option("--samples", type=bounded("samples"), help="Samples per cell.")
@click.option("--sample-ms", type=bounded("sample_ms"), help="Target duration of one sample.")
@click.option("--warmup-ms", type=bounded("warmup_ms"), help="Warm-up time per cell.")
@click.option("--rounds", type=bounded("rounds"), help="Interleaved rounds per cell.")
@click.option(
    "--openssl-runs", type=bounded("openssl_runs"), help="Processes per cell for sh: rows."
)
@click.option(
    "--until-stable",
    type=bounded("until_stable"),
    is_flag=False,
    flag_value=0.02,
    default=None,
    metavar="[CV]",
    help="Keep sampling each cell until its 95% CI half-width is under CV of the median.",
)
@click.option(
    "--max-time",
    type=bounded("max_seconds"),
    default=300,
    show_default=True,
    help="Seconds --until-stable may spend in all.",
)
@click.option(
    "--seed",
    type=bounded("seed"),
    default=1,
    show_default=True,
    help="Seed of the generated Data, Key and IV.",
)
@click.option(
    "--erl", "erl", multiple=True, metavar="PATH|otp:N", help="An erl to run (repeatable)."
)
@click.option("--python", "python", multiple=True, metavar="PATH", help="A Python to run py: in.")
@click.option(
    "--openssl",
    "openssl",
    multiple=True,
    metavar="PATH",
    help="The openssl runtime sh: rows run beside.",
)
@format_option()
@output_option()
@export_options
@colour_option
@verbosity_options
@live.progress_option
def time_command(
    output: Path | None,
    fmt: str,
    exports: Exports,
    verbose: bool,
    quiet: bool,
    progress: str,
    **params,
) -> None:
    """Time EXPRs, erlperf-style: Erlang expressions (compiled into a module in a
    real node), py:EXPR (Python, in a worker), ex:EXPR (Elixir, compiled through
    Code) and sh:CMD (a whole process), on the same inputs.

    Bound in every expression: Data (the message at each size), Size, Key, IV,
    Count, Pub, Sig; in py: and ex: the same names in lower case; sh: gets Data
    on stdin and BRIDGE_SIZE, BRIDGE_DATA (a file), BRIDGE_KEY, BRIDGE_IV (hex),
    BRIDGE_COUNT. A report with expressions replays only once confirmed.

    \b
    crypto-bridge time 'rand:bytes(20)' 'crypto:strong_rand_bytes(20)'
    crypto-bridge time --same-output 'crypto:hash(md5, Data)' 'erlang:md5(Data)'
    crypto-bridge time --pa '_build/*/lib/*/ebin' 'mine:f(Data)' 'py:mine.f(data)'
    """
    check_outputs([("-o", output), *exports.flagged], _inputs(params))
    if output is not None:
        plans.check_writable(output)
    plan = plan_from(params, recorded_command())
    shape = running.Shape(fmt, verbose, quiet, progress)
    outcome, failure = running._execute(plan, output, shape, exports)
    if failure is not None:
        raise failure
    running._exit_status(outcome)


def _inputs(p: dict) -> list[tuple[str, str | None]]:
    """What bridge time reads that an output must not overwrite: a
    --scenario file and the executables named."""
    given = p["scenario_name"]
    named = [("--scenario", given)] if given and (given.endswith(".toml") or "/" in given) else []
    for flag in ("erl", "python", "openssl"):
        named += [(f"--{flag}", path) for path in p[flag] if not path.startswith("otp:")]
    return named


def plan_from(p: dict, command: tuple[str, ...]) -> Plan:
    user = []
    for text in p["exprs"]:
        try:
            uc = usercode.labelled(text, checked=bool(p["same_output"]))
        except usercode.BadCall as exc:
            raise UsageError(f"expression {text[:80]!r}: {exc}") from None
        wrong = usercode.syntax_error(uc)
        if wrong:
            raise UsageError(f"expression {text[:80]!r}: {wrong}; nothing was measured")
        user.append(uc)
    try:
        usercode.check_distinct(user)
    except usercode.BadCall as exc:
        raise UsageError(str(exc)) from None
    sc = base_scenario(p)
    if p["sizes"] is not None:
        sc = sc.with_sizes(plans.parse_sizes(p["sizes"]))
    if p["features"] is not None:
        sc = _with_features(sc, p["features"])
    sc = sc.with_user_calls(tuple(user), only=True)
    if p["concurrency"] is not None:
        sc = sc.with_concurrency(plans.parse_levels(p["concurrency"]))
    options = plans.RunOptions(
        scenarios=(sc.name,),
        **{k: p[k] for k in ("quick", "samples", "sample_ms", "warmup_ms", "rounds")},
        **{k: p[k] for k in ("openssl_runs", "until_stable", "max_time", "seed")},
        **{k: p[k] for k in ("timeout", "memory_limit")},
    )
    settings = plans.settings_from(options)
    hw = schema.HwMode.parse(p["hw"], "--hw")
    erl, erl_env = plans.expand_erl_given(p["erl"], tuple({} for _ in p["erl"]))
    kinds = tuple(
        k for k in (RuntimeKind.ERLANG, RuntimeKind.PYTHON, RuntimeKind.OPENSSL) if k in sc.calls
    )
    plan = Plan(
        scenarios=(sc,),
        settings=settings,
        seed=p["seed"],
        erl=erl or (None,),
        openssl=p["openssl"] or (None,),
        python=p["python"] or (None,),
        kinds=kinds,
        hw=hw,
        command=command,
        reproduce=reproduce(p),
        env={RuntimeKind.ERLANG: erl_env},
        user=plan_code(tuple(user), tuple(p["pa"]), tuple(p["python_path"])),
    )
    plans.check_room(plan)
    return plan


def base_scenario(p: dict) -> scenario.Scenario:
    if p["scenario_name"] is None:
        features = DEFAULT_FEATURES if p["hw"] != "on" else ()
        return scenario.ExprScenario(
            name=NAME,
            description="bridge time: the user's expressions on a message of each size",
            sizes=DEFAULT_SIZES,
            features=features,
            calls={},
        )
    sc = scenario.load(p["scenario_name"])
    if isinstance(sc, scenario.FileDigestScenario):
        raise UsageError(
            f"--scenario {sc.name}: a file-digest scenario's input is a file, which bridge time"
            " does not bind (give --sizes for Data instead)"
        )
    return sc


def _with_features(sc: scenario.Scenario, text: str) -> scenario.Scenario:
    import dataclasses

    wanted = tuple(f.strip() for f in text.split(",") if f.strip())
    bad = [f for f in wanted if f not in vocab.FEATURES]
    if bad:
        raise UsageError(f"--features {bad[0]!r}: expected some of {', '.join(vocab.FEATURES)}")
    return dataclasses.replace(sc, features=wanted)


def reproduce(p: dict) -> str:
    """The command line that measures the same again (what only changes the
    printing, -o and --format, left out)."""
    argv = [vocab.COMMAND, "time"]
    for flag, key in (
        ("--scenario", "scenario_name"),
        ("--sizes", "sizes"),
        ("--features", "features"),
        ("--concurrency", "concurrency"),
        ("--samples", "samples"),
        ("--sample-ms", "sample_ms"),
        ("--warmup-ms", "warmup_ms"),
        ("--rounds", "rounds"),
        ("--openssl-runs", "openssl_runs"),
    ):
        if p[key] is not None:
            argv += [flag, str(p[key])]
    if p["timeout"] != DEFAULT.user_timeout_s:
        argv += ["--timeout", f"{p['timeout']:g}"]
    if p["memory_limit"] is not None:
        argv += ["--memory-limit", f"{plans.parse_memory_limit(p['memory_limit'])}M"]
    argv += ["--hw", p["hw"], "--seed", str(p["seed"])]
    if p["quick"]:
        argv.append("--quick")
    if p["same_output"]:
        argv.append("--same-output")
    for flag, key in (
        ("--pa", "pa"),
        ("--python-path", "python_path"),
        ("--erl", "erl"),
        ("--python", "python"),
        ("--openssl", "openssl"),
    ):
        for value in p[key]:
            argv += [flag, value]
    return shlex.join([*argv, "--", *p["exprs"]])
