"""`bridge run`: from the options (or a saved report) to a plan, the run,
then the results printed before any file is written, and the exit status."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from bridge import plain
from bridge.cli import live, plans
from bridge.cli.common import (
    OUTPUT_GROUP,
    Command,
    Exports,
    FloatRange,
    StdoutError,
    baseline_option,
    bounded,
    cell_text,
    check_baseline,
    check_outputs,
    colour_option,
    colour_wanted,
    connect_timeout_option,
    cookie_options,
    export_options,
    format_option,
    keep_report,
    out,
    output_option,
    rebase,
    recorded_command,
    rendered,
    save_report,
    show_results,
    verbosity_options,
)
from bridge.cli.scenarios import ScenarioDir, complete_scenarios
from bridge.errors import BridgeError, ExitStatus, UsageError
from bridge.measure import cost, runner
from bridge.measure.plan import Plan
from bridge.render import terminal_width
from bridge.report import schema
from bridge.settings import BOUNDS, DEFAULT
from bridge.system import runenv, signals
from bridge.view import Detail, words

UNTIL_STABLE = "--until-stable"
DEFAULT_CI = 0.02


def until_stable_target(text: str) -> float:
    """--until-stable=CI as a fraction of the median: a percentage (3 or 3%:
    0.03), or a fraction below 1 as before (0.03), within the bounds a
    replayed report is held to."""
    number = text.strip().removesuffix("%").strip()
    if not plain.DECIMAL.fullmatch(number):
        raise UsageError(
            f"{UNTIL_STABLE}={plain.visible(text)}: {plain.visible(number)!s} is not a number"
            " (a percentage, e.g. --until-stable=3 for ±3%)"
        )
    value = float(number)
    fraction = value / 100 if text.strip().endswith("%") or value >= 1 else value
    b = BOUNDS["until_stable"]
    if not b.low <= fraction <= b.high:
        raise UsageError(
            f"{UNTIL_STABLE}={plain.visible(text)}: the target must be from"
            f" {b.low * 100:g}% to {b.high * 100:g}% of the median"
        )
    return fraction


def _until_stable_words(args: list[str]) -> list[str]:
    """--until-stable is a flag, so it never takes the next word (a scenario's
    name); its target comes only as --until-stable=CI, given to the hidden
    --until-stable-target. A number after a bare --until-stable is refused."""
    line: list[str] = []
    for i, word in enumerate(args):
        if word == "--":
            return line + args[i:]
        if word.startswith(UNTIL_STABLE + "="):
            line += [UNTIL_STABLE, "--until-stable-target", word.split("=", 1)[1]]
            continue
        line.append(word)
        nxt = args[i + 1] if word == UNTIL_STABLE and i + 1 < len(args) else None
        if nxt is not None and plain.DECIMAL.fullmatch(nxt.strip().removesuffix("%")):
            raise UsageError(
                f"{UNTIL_STABLE} {plain.visible(nxt)}: give the target with '=',"
                f" --until-stable={plain.visible(nxt)} (a bare --until-stable aims at ±2%)"
            )
    return line


class _RunCommand(Command):
    """`bridge run`: an --env belongs to the runtime option before it, which
    click's values alone (one tuple per option) cannot tell; its parser's
    record of the options in command-line order can. --until-stable=CI is
    read here too (_until_stable_words)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = _until_stable_words(args)
        line = list(args)  # the parser consumes its list
        rest = super().parse_args(ctx, args)
        _, _, order = self.make_parser(ctx).parse_args(args=line)
        ctx.params["env"] = runenv.bind([p.name for p in order], ctx.params.get("env") or ())
        return rest


RUN_GROUPS = (
    (
        "Measurement",
        (
            "quick",
            "samples",
            "sample_ms",
            "warmup_ms",
            "rounds",
            "openssl_runs",
            "until_stable",
            "max_time",
            "seed",
            "hw",
            "sizes",
            "file_size",
            "with_calls",
            "method",
            "tc_calls",
            "concurrency",
            "schedulers",
            "request_timeout",
            "timeout",
            "memory_limit",
        ),
    ),
    (
        "Runtimes",
        (
            "runtimes",
            "erl",
            "openssl",
            "python",
            "env",
            "libcrypto",
            "scenario_dirs",
            "pa",
            "python_path",
        ),
    ),
    (
        "Running nodes",
        ("node", "measure", "cookie_value", "cookie_file", "max_load", "connect_timeout"),
    ),
    ("Replay", ("replay", "as_recorded", "yes")),
    ("Output", ("baseline", "verbose", *OUTPUT_GROUP, "progress")),
)

RUN_EXAMPLES = (
    ("bridge run hmac-sha1 --quick", "The mailing-list benchmark, rough, in about 5 s."),
    (
        "bridge run hmac-sha1 --until-stable=3 -o r.json --export-markdown r.md",
        "Sample until each cell's CI is within ±3%; the table on the terminal, the"
        " report in r.json, the Markdown view in r.md.",
    ),
    (
        "bridge run sha256 --erl otp:26 --erl otp:27 --hw on",
        "Two OTP releases side by side, the machine as found.",
    ),
    (
        "bridge run hmac-sha1 --node app --measure",
        "Measure on the running node app@<this host> (erl -sname app).",
    ),
    ("bridge run --replay r.json", "Rerun a saved report here and compare."),
)


@click.command(cls=_RunCommand, groups=RUN_GROUPS, examples=RUN_EXAMPLES)
@click.argument("scenarios", nargs=-1, shell_complete=complete_scenarios)
@click.option(
    "--quick",
    is_flag=True,
    help="Shorter, rougher measurement: 24 samples in 24 rounds, 1 openssl run per cell"
    " (hmac-sha1 with the A/B: about 5 s; a six-size sweep with openssl: about half a minute,"
    " see docs/guide/commands.md).",
)
@click.option("--samples", type=bounded("samples"), help="Samples per cell.")
@click.option("--sample-ms", type=bounded("sample_ms"), help="Target duration of one sample.")
@click.option("--warmup-ms", type=bounded("warmup_ms"), help="Warm-up time per cell.")
@click.option(
    "--rounds",
    type=bounded("rounds"),
    help="Interleaved rounds per cell (default 50, 24 with --quick; --concurrency's level"
    " cells take at most 20 of them, 12 with --quick).",
)
@click.option("--openssl-runs", type=bounded("openssl_runs"), help="openssl speed runs per cell.")
@click.option(
    "--processes",
    type=bounded("processes"),
    help="Worker processes per Erlang/Python runtime, taking each cell's rounds in turn"
    " (default 3, 1 with --quick; at least 3 rounds each): the CI then covers"
    " process-to-process variation.",
)
@click.option(
    "--until-stable",
    "until_stable",
    is_flag=True,
    help="Keep sampling each cell until its 95% CI half-width is within ±2% of the"
    " median, or --max-time passes. --until-stable=CI sets the target: =3 (or =3%) is"
    " ±3%. Never takes the next word.",
)
@click.option("--until-stable-target", "until_stable_target", hidden=True)
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
    help="Seed of the generated keys and messages.",
)
@click.option(
    "--erl",
    "erl",
    multiple=True,
    metavar="PATH|otp:N",
    help="An erl to run (repeatable); otp:27 names every OTP 27 found. Default: erl on PATH.",
)
@click.option(
    "--openssl",
    "openssl",
    multiple=True,
    metavar="PATH",
    help="An openssl binary to run (repeatable). Default: openssl on PATH.",
)
@click.option(
    "--hw",
    type=click.Choice(["on", "off", "both"]),
    help="The machine as found (on), the scenario's hardware features masked (off),"
    " or both, with verdicts. Default: both when the scenario names a feature.",
)
@click.option(
    "--runtimes",
    default=None,
    help="Which runtime kinds to run, comma-separated. Default: erlang,python,openssl;"
    " with --node, none beside the nodes.",
)
@click.option(
    "--scenario-dir",
    "scenario_dirs",
    multiple=True,
    type=ScenarioDir(),
    help="Also look for scenario files here; a name found here and among the built-ins is refused.",
)
@click.option(
    "--sizes",
    help="Message sizes, comma-separated (16,1k,16k; K/M/G are powers of 1024),"
    " instead of the scenario's.",
)
@click.option("--file-size", help="File size for file-digest scenarios, e.g. 64M or 1G.")
@click.option(
    "--with",
    "with_calls",
    multiple=True,
    metavar="[RUNTIME:]CALL",
    help="Also time this call in every scenario of its kind (repeatable), e.g. the opt-in"
    " alternatives that bridge list names: --with rand_bytes, --with pbkdf2_mac,"
    " --with public_key:verify.",
)
@click.option(
    "--method",
    type=click.Choice(["bridge", "tc"]),
    default="bridge",
    show_default=True,
    help="tc: also run the erlang-questions thread's timer:tc harness on the Erlang calls.",
)
@click.option(
    "--tc-calls",
    type=bounded("tc_calls"),
    default=None,
    help="Calls for --method tc (default 1000000 as in the thread; 100000 --quick).",
)
@click.option(
    "--python",
    "python",
    multiple=True,
    metavar="PATH",
    help="A Python to run the Python worker (repeatable; bridge must be importable there)."
    " Default: this one.",
)
@click.option(
    "--env",
    "env",
    multiple=True,
    metavar="NAME=VALUE",
    help="A variable for the runtime named just before (--erl, --python or --openssl),"
    " e.g. --erl PATH --env LD_LIBRARY_PATH=DIR (repeatable). Recorded in the report.",
)
@click.option(
    "--libcrypto",
    "libcrypto",
    multiple=True,
    metavar="DIR",
    help="Run every runtime again with the libcrypto of the same soname in DIR (or an"
    " OpenSSL prefix's lib64/ or lib/), put in front of LD_LIBRARY_PATH (repeatable).",
)
@click.option(
    "--pa",
    "pa",
    multiple=True,
    metavar="DIR",
    help="For a scenario file's own [[calls]]: add DIR to the Erlang node's code path"
    " (as erl -pa; a _build/*/lib/*/ebin glob or a _build/ENV/lib directory too).",
)
@click.option(
    "--python-path",
    "python_path",
    multiple=True,
    metavar="DIR",
    help="For a scenario file's own [[calls]]: DIR in front of the Python worker's sys.path.",
)
@click.option(
    "--request-timeout",
    type=bounded("timeout_slack_s"),
    default=30,
    show_default=True,
    help="Seconds a worker may take beyond the planned time before it counts as hung.",
)
@click.option(
    "--timeout",
    type=bounded("user_timeout_s"),
    default=DEFAULT.user_timeout_s,
    show_default=True,
    help="For a scenario file's own [[calls]]: seconds one sample may take. Past it, a sh:"
    " process, or the worker and every process its code started, is killed, and the call"
    " fails.",
)
@click.option(
    "--memory-limit",
    "memory_limit",
    metavar="SIZE",
    help="Data memory limit of each worker process, each sh: process and every process they"
    " start (RLIMIT_DATA), e.g. 2G or 512M. Default: 4G.",
)
@click.option(
    "--node",
    "node",
    multiple=True,
    metavar="NAME[@HOST]",
    help="A running Erlang node to measure over distribution (repeatable); needs --measure."
    " A bare NAME is NAME@<this host's short name>, as for erl -sname NAME.",
)
@click.option(
    "--measure",
    is_flag=True,
    help="Allow bridge to load its agent into each --node (under a name of its own;"
    " purged afterwards).",
)
@cookie_options
@click.option(
    "--max-load",
    type=FloatRange(0.01, 1.0),
    default=0.25,
    show_default=True,
    help="Largest share of one scheduler a measurement keeps busy on a --node.",
)
@connect_timeout_option
@click.option(
    "--concurrency",
    metavar="N,N,...",
    help="Also run each call with N workers at once, e.g. 1,2,4 (Erlang processes,"
    " Python threads and processes, openssl speed -multi): throughput, scaling,"
    " latency percentiles and the Erlang scheduler probe, per level.",
)
@click.option(
    "--schedulers",
    type=bounded("schedulers"),
    help="Start the Erlang node with +S N:N (N schedulers, all online).",
)
@baseline_option
@click.option(
    "--replay",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Rerun what a saved report describes, on this machine's runtimes of the same"
    " versions, then compare the new numbers with it.",
)
@click.option(
    "--as-recorded",
    is_flag=True,
    help="With --replay: run the report's own executables and --libcrypto directories"
    " (and its harmless variables), after listing them and asking.",
)
@click.option(
    "--yes",
    is_flag=True,
    help="With --replay: run --as-recorded executables, the report's user code, or a replay"
    " past the budget (10 min, 32 workers, 2 GiB), without asking.",
)
@format_option()
@output_option()
@export_options
@colour_option
@verbosity_options
@live.progress_option
def run(
    replay: Path | None,
    output: Path | None,
    fmt: str,
    exports: Exports,
    *,
    verbose: bool,
    quiet: bool,
    **params,
) -> None:
    """Run SCENARIOS (names or .toml paths), e.g. `bridge run hmac-sha1`."""
    # --as-recorded and --yes (params: the signature keeps to 7 parameters).
    as_recorded, yes = params.pop("as_recorded"), params.pop("yes")
    _check_as_recorded(replay, as_recorded, yes)
    shape = Shape(fmt, verbose, quiet, params.pop("progress"))
    baseline = params.pop("baseline")
    check_baseline(baseline)
    check_outputs([("-o", output), *exports.flagged], run_inputs(replay, params))
    if output is not None:
        plans.check_writable(output)
    target = params.pop("until_stable_target")
    if target is not None:
        params["until_stable"] = until_stable_target(target)
    elif params["until_stable"]:
        params["until_stable"] = DEFAULT_CI
    else:
        params["until_stable"] = None
    # The report records the command line, never a --cookie's value.
    command = recorded_command()
    if replay is not None:
        if params["scenarios"]:
            raise UsageError("--replay reruns the report's own scenarios: name none")
        old = schema.load(replay)
        from bridge.cli import replay as replaying

        # The report's scenarios and settings checked, and what they would
        # cost, before anything is started or looked for.
        draft = replaying.draft(old, replay, as_recorded=as_recorded)
        _confirm_user_code(old, replay, yes)
        _confirm_cost(draft, replaying.call_times(old), replay, yes)
        plan = _replay_plan(old, replay, command, as_recorded, yes)
    else:
        # click gives repeatable options as tuples already; RunOptions has a
        # field for every other option of this command.
        plan = plans.from_options(plans.RunOptions(**params), command)
    outcome, failure = _execute(plan, output, shape, exports, baseline=baseline)
    if replay is not None and outcome.report.results and failure is None:
        from bridge.analysis import compare as comparison
        from bridge.render.compare import render as render_compare

        pairs = comparison.compare([old, outcome.report], [f"{replay.name} (then)", "now"])
        shown = "table" if fmt == "json" else fmt
        table = render_compare(pairs, shown, terminal_width(), shape.detail, colour_wanted())
        out("\n" + table, nl=False)
    if failure is not None:
        raise failure
    _exit_status(outcome)


def run_inputs(replay: Path | None, params: dict) -> list[tuple[str, str | Path | None]]:
    """What `bridge run` reads that an output must not overwrite: the
    replayed report, scenario files named or found in --scenario-dir, the
    cookie file, and the executables named."""
    found: list[tuple[str, str | Path | None]] = [("--replay", replay)]
    for name in params.get("scenarios", ()):
        for directory in params.get("scenario_dirs", ()):
            found.append(("scenario file", Path(directory) / f"{name}.toml"))
        if name.endswith(".toml") or "/" in name:
            found.append(("scenario file", name))
    found.append(("--cookie-file", params.get("cookie_file")))
    for flag in ("erl", "python", "openssl"):
        found += [
            (f"--{flag}", path) for path in params.get(flag, ()) if not path.startswith("otp:")
        ]
    return [(what, path) for what, path in found if path is not None and _exists(path)]


def _exists(path: str | Path) -> bool:
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):  # a NUL in a name: the loader says it
        return False


def _check_as_recorded(replay: Path | None, as_recorded: bool, yes: bool) -> None:
    """Before anything is read or run: --as-recorded runs a report's own
    programs, which takes the user's say-so, on a terminal or with --yes."""
    if as_recorded and replay is None:
        raise UsageError("--as-recorded goes with --replay REPORT")
    if yes and replay is None:
        raise UsageError(
            "--yes goes with --replay REPORT (--as-recorded, a report's user code, or its cost)"
        )
    if as_recorded and not yes and not sys.stdin.isatty():
        raise UsageError(
            "--as-recorded runs the report's own programs: confirm on a terminal,"
            " or add --yes to run them without asking"
        )


def _replay_plan(old, path: Path, command, as_recorded: bool, yes: bool) -> Plan:
    from bridge.cli import replay as replaying

    replay = replaying.from_report(old, path, command, as_recorded=as_recorded)
    for line in replay.mapping:
        click.echo(line, err=True)
    for warning in replay.warnings:
        click.echo(f"bridge: warning: {warning}", err=True)
    if as_recorded:
        click.echo("replay --as-recorded runs, from the report:", err=True)
        for line in replay.recorded:
            click.echo(f"  {line}", err=True)
        if not yes and not click.confirm("Run these?", default=False, err=True):
            raise UsageError("--as-recorded: not confirmed; nothing was run")
    return replay.plan


def _confirm_cost(draft: Plan, known: cost.CallTimes, path: Path, yes: bool) -> None:
    """A replay past a modest budget (bridge.measure.cost.BUDGET) is shown
    with its estimate and why, and runs once confirmed on a terminal or
    given --yes; without either nothing runs. The replay runs someone
    else's settings: the user agrees to what they cost. `known`: how long
    the report's calls took, which can only lengthen the estimate."""
    from bridge.cli import replay as replaying

    c = cost.estimate(draft, os.cpu_count() or 1, known)
    over = cost.BUDGET.over(c)
    if not over:
        return
    said = f"replaying {path} would take {replaying.cost_summary(c)}"
    reasons = replaying.cost_reasons(c, over, draft)
    if not yes and not sys.stdin.isatty():
        raise UsageError(
            f"{said}: {'; '.join(reasons)}; confirm on a terminal, or add --yes to run it"
        )
    click.echo(f"{said}:", err=True)
    for line in reasons:
        click.echo(f"  {line}", err=True)
    if not yes and not click.confirm("Run it?", default=False, err=True):
        raise UsageError("--replay: the cost was not confirmed; nothing was run")


def _confirm_user_code(old: schema.Report, path: Path, yes: bool) -> None:
    """A report's user code (bridge time, [[calls]]) is shown, each expression,
    and runs only once confirmed, before anything else is done for the replay."""
    from bridge.cli import replay as replaying

    lines = replaying.report_expressions(old, path) if old.scenarios else []
    if not lines:
        return
    click.echo("the report holds user code; replaying it runs, on this machine:", err=True)
    for line in lines:
        click.echo(f"  {line}", err=True)
    replaying.confirm_code(
        lines,
        yes,
        sys.stdin.isatty(),
        lambda q: click.confirm(q, default=False, err=True),
    )


def _execute(
    plan: Plan,
    output: Path | None,
    shape: Shape,
    exports: Exports | None = None,
    *,
    baseline: str | None = None,
) -> tuple[runner.Outcome, BridgeError | None]:
    """Run, print, then write: the results reach stdout before any file is
    written (-o, then the --export-* files), and a report that cannot be
    written where asked is kept elsewhere (`save_report`). Returns what
    failed in printing or saving (or the --baseline that named no runtime of
    the run: the report is kept)."""
    progress = live.progress(shape.progress, shape.quiet)
    sections = live.Sections(shape, lambda r: rebase(r, baseline), progress.clear)
    wrong_baseline = None
    with signals.guarding():
        try:
            outcome = runner.execute(
                plan, progress=progress if progress.shown else None, on_scenario=sections
            )
        finally:
            progress.clear()  # nothing of the progress line is left behind
        signals.hold()  # whatever happened, the report is saved before a signal acts
        if baseline is not None:
            try:
                outcome.report = rebase(outcome.report, baseline)
            except UsageError as exc:
                wrong_baseline = exc
        text = schema.dumps(outcome.report)
        try:
            rest = shape.render(outcome.report, omit=frozenset(sections.printed))
            shown = show_results(sections.rest(rest))
        except Exception:
            lost = save_report(text, output)  # a renderer's bug does not lose the measurement
            if lost is not None:
                click.echo(f"bridge: error: {plain.printable(lost.one_line())}", err=True)
            raise
        failure = save_report(text, output, shown)
        exported = (exports or Exports()).write(
            lambda f: text if f == "json" else rendered(f, outcome.report, shape.detail)
        )
        failure = failure or exported
        if failure is None and signals.hung_up():
            failure = _hung_up(text, output)
    # The report is safe: a signal from here on ends bridge at once.
    if output is not None and failure is None:
        click.echo(f"report written to {output}", err=True)
    if shown is not None and failure is None and output is not None:
        failure = StdoutError(shown)
    for skip in outcome.report.skipped:
        what = plain.printable(f"{skip.runtime} could not run: {skip.reason}")
        if skip.requested:  # asked for and not run: the run fails (exit status 1)
            click.echo(f"bridge: error: {skip.requested} {what}", err=True)
        elif shape.warns_on_stderr:
            skipped = plain.printable(f"{skip.runtime}: {skip.reason}")
            click.echo(f"bridge: warning: skipped {skipped}", err=True)
    if shape.warns_on_stderr:
        _stderr_warnings(outcome.report)
    if shape.verbose and outcome.busiest:
        # Other users' process names: on this terminal only, never in the report.
        named = ", ".join(f"{p.name} (pid {p.pid}, {p.cpu:.0%})" for p in outcome.busiest)
        click.echo(
            f"bridge: note: busy meanwhile (not kept in the report): {plain.printable(named)}",
            err=True,
        )
    return outcome, failure or wrong_baseline


class HungUp(BridgeError):
    """The run was stopped by SIGHUP; what it measured is kept."""

    status = ExitStatus.HANGUP


def _hung_up(text: str, output: Path | None) -> HungUp:
    """SIGHUP stopped the run: one line saying so and where the report is.
    Whoever started bridge may not be there to see the results: without -o,
    the report is kept in a file when stdout was the terminal that closed."""
    if output is not None:
        where = f"the report is in {output}"
    elif signals.stdout_lost():
        kept = keep_report(text, "report.json")
        where = f"the report is kept in {kept}" if kept else "the report could not be kept"
    else:
        where = "the results are on stdout"
    return HungUp(f"hangup (SIGHUP: the terminal or session closed): the run was stopped; {where}")


class Shape:
    """What stdout shows (--format, --verbose, --quiet), and so where the
    warnings go. Each is said once: the views print them among their
    caveats, so stderr carries them only beside JSON, which has no prose;
    --quiet drops them from both (the report keeps them)."""

    def __init__(
        self, fmt: str, verbose: bool = False, quiet: bool = False, progress: str = "auto"
    ) -> None:
        if verbose and quiet:
            raise UsageError("--verbose and --quiet: choose one")
        self.fmt, self.verbose, self.quiet = fmt, verbose, quiet
        self.progress = progress  # --progress (bridge.cli.live)

    @property
    def warns_on_stderr(self) -> bool:
        return self.fmt in ("json", "summary") and not self.quiet

    @property
    def detail(self) -> Detail:
        return Detail.of(self.verbose, self.quiet)

    def render(self, report: schema.Report, omit: frozenset[str] = frozenset()) -> str:
        """The view; without the scenarios in `omit`, printed as each finished."""
        return rendered(self.fmt, report, self.detail, terminal_width(), omit, colour_wanted())


def _stderr_warnings(report: schema.Report) -> None:
    if report.concurrency is not None:
        for warning in words.concurrency_lines(report.concurrency):
            click.echo(f"bridge: warning: {plain.printable(warning)}", err=True)
    for line in _noise_warnings(report):
        click.echo(f"bridge: warning: {line}", err=True)
    advice = words.noise_advice(report.noise) if report.noise else ""
    if advice:
        click.echo(f"bridge: advice: {plain.printable(advice)}", err=True)


def _noise_warnings(report: schema.Report) -> list[str]:
    """Cells that missed the CI target (one line each, or one for many), then
    what the machine was doing (bridge.analysis.noise)."""
    unstable = report.unstable
    goal = report.settings.ci_goal
    target = f" ±{goal * 100:g}%" if goal else ""

    def cell(u: schema.UnstableCell) -> str:
        return cell_text(report, u)

    lines = [
        f"{cell(u)} (hw {u.hw}) did not reach the target{target}: ±{u.ci_halfwidth * 100:.1f}%"
        for u in unstable
    ]
    if len(lines) > 4:
        worst = max(unstable, key=lambda u: u.ci_halfwidth)
        widest = cell(worst)
        lines = [
            f"{len(unstable)} cells did not reach the target{target} (widest: {widest},"
            f" ±{worst.ci_halfwidth * 100:.1f}%); --until-stable samples them until they do"
        ]
    # Process names (from /proc, any user's) are escaped like a report's text.
    return [plain.printable(line) for line in lines + words.warning_lines(report)]


def _exit_status(outcome: runner.Outcome) -> None:
    if outcome.interrupted or signals.status() is not None:
        raise SystemExit(signals.status() or ExitStatus.INTERRUPTED)
    if not outcome.report.results:
        reasons = [s.reason for s in outcome.report.skipped]
        reasons += [e.message for e in outcome.report.errors]
        raise BridgeError("nothing was measured: " + "; ".join(reasons or ["no runtime ran"]))
    # The others' results are kept and the report is written; but a runtime
    # the user named that never ran is a failed run, not a success.
    if outcome.failed:
        raise BridgeError(_failures(outcome.report.errors))
    if any(s.requested for s in outcome.report.skipped):
        raise SystemExit(ExitStatus.RUN_FAILED)  # each said so on its own line


def _failures(errors: tuple[schema.RunError, ...], shown: int = 2) -> str:
    """The run errors as the one `bridge: error:` line: what failed, the
    first few in full (the report and the table have them all)."""
    messages = list(
        dict.fromkeys(
            e.message
            if not e.runtime or e.message.startswith(e.runtime)
            else f"{e.runtime}: {e.message}"
            for e in errors
        )
    )
    head = "; ".join(messages[:shown])
    if len(messages) == 1:
        return head
    more = f" (and {len(messages) - shown} more in the report)" if len(messages) > shown else ""
    return f"{len(messages)} failures: {head}{more}"
