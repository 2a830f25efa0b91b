"""The command line. Each command parses its options, calls one library
function, picks a renderer and echoes. This is the only place that turns
errors into messages and exit statuses:

  0 success · 1 a run failed (a worker died, outputs differ), or a file or
  stdout could not be written · 2 bad input · 130 interrupted by Ctrl-C
  (SIGINT) · 143 stopped by SIGTERM (both after saving what was measured).

Results are printed before any file is written. When -o cannot be written
(a full disk, a read-only file system), the report is kept in a new file in
the cache (~/.cache/bridge/unsaved), TMPDIR or the working directory, the
error line names it, and the status is 1 (also after a signal). A stdout that
cannot be written gives one line (`bridge: error: stdout: ...`) and status 1;
a closed pipe (`| head`) ends bridge quietly, with status 1 as click does.

Signals (bridge.system.signals): the first SIGINT or SIGTERM stops the measurement.
Signals that arrive after it, or once the measurement is over, are held
until the report has been printed and written (or kept); a signal after that
ends bridge at once. The status is the first signal's: 130 or 143.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

import click

import bridge
from bridge import plain
from bridge.cli import plans
from bridge.errors import BridgeError, BridgeWarning, ExitStatus, UsageError
from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.render import RENDERERS
from bridge.report import schema
from bridge.settings import BOUNDS, DEFAULT
from bridge.system import output, runenv, signals

# The modules of the other commands are imported in them: `bridge run
# --quick` has 5 s, and Python takes about 2 ms a module here.

MAX_SAMPLES = int(BOUNDS["samples"].high)


class IntRange(click.IntRange):
    """click.IntRange reading ASCII digits only (int() takes '١٢' and '１２')."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not plain.INTEGER.fullmatch(value.strip()):
            self.fail(f"{value!r} is not a whole number (digits 0-9)", param, ctx)
        return super().convert(value, param, ctx)


class FloatRange(click.FloatRange):
    """click.FloatRange reading ASCII decimals only: no 'nan' (which passes
    every bound), no 'inf', no Unicode digits."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not plain.DECIMAL.fullmatch(value.strip()):
            self.fail(f"{value!r} is not a number (digits 0-9, e.g. 0.05)", param, ctx)
        return super().convert(value, param, ctx)


def _bounded(name: str) -> click.ParamType:
    """The option's range, from the table --replay checks reports against,
    read as ASCII numbers only."""
    b = BOUNDS[name]
    return IntRange(int(b.low), int(b.high)) if b.integer else FloatRange(b.low, b.high)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(bridge.__version__, prog_name="bridge")
def cli() -> None:
    """Is my crypto fast, and is it using the hardware?

    Times Erlang crypto, Python hashlib/hmac and the openssl CLI on
    byte-identical inputs, and checks that they compute the same bytes.
    """


# What reaches running nodes (--node), the same for `run` and `env`.
cookie_file_option = click.option(
    "--cookie-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The nodes' cookie. Default: ~/.erlang.cookie.",
)
connect_timeout_option = click.option(
    "--connect-timeout",
    type=FloatRange(1, 600),
    default=10,
    show_default=True,
    help="Seconds to reach a --node (epmd lookup and handshake).",
)


class _RunCommand(click.Command):
    """`bridge run`: an --env belongs to the runtime option before it, which
    click's values alone (one tuple per option) cannot tell; its parser's
    record of the options in command-line order can."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        line = list(args)  # the parser consumes its list
        rest = super().parse_args(ctx, args)
        _, _, order = self.make_parser(ctx).parse_args(args=line)
        ctx.params["env"] = runenv.bind([p.name for p in order], ctx.params.get("env") or ())
        return rest


@cli.command(cls=_RunCommand)
@click.argument("scenarios", nargs=-1)
@click.option(
    "--quick",
    is_flag=True,
    help="Shorter, rougher measurement: 24 samples in 4 rounds, 2 openssl runs per cell"
    " (hmac-sha1: 6-14 s; a six-size sweep with openssl: about a minute, see README).",
)
@click.option("--samples", type=_bounded("samples"), help="Samples per cell.")
@click.option("--sample-ms", type=_bounded("sample_ms"), help="Target duration of one sample.")
@click.option("--warmup-ms", type=_bounded("warmup_ms"), help="Warm-up time per cell.")
@click.option("--rounds", type=_bounded("rounds"), help="Interleaved rounds per cell.")
@click.option("--openssl-runs", type=_bounded("openssl_runs"), help="openssl speed runs per cell.")
@click.option(
    "--until-stable",
    type=_bounded("until_stable"),
    is_flag=False,
    flag_value=0.02,
    default=None,
    metavar="[CV]",
    help="Keep sampling each cell until its 95% CI half-width is under CV of the"
    " median (default 0.02), or --max-time passes.",
)
@click.option(
    "--max-time",
    type=_bounded("max_seconds"),
    default=300,
    show_default=True,
    help="Seconds --until-stable may spend in all.",
)
@click.option(
    "--seed",
    type=_bounded("seed"),
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
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Also look for scenario files here.",
)
@click.option(
    "--sizes",
    help="Message sizes, comma-separated (16,1k,16k; K/M/G are powers of 1024),"
    " instead of the scenario's.",
)
@click.option("--file-size", help="File size for file-digest scenarios, e.g. 64M or 1G.")
@click.option(
    "--method",
    type=click.Choice(["bridge", "tc"]),
    default="bridge",
    show_default=True,
    help="tc: also run the erlang-questions thread's timer:tc harness on the Erlang calls.",
)
@click.option(
    "--tc-calls",
    type=_bounded("tc_calls"),
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
    "--request-timeout",
    type=_bounded("timeout_slack_s"),
    default=30,
    show_default=True,
    help="Seconds a worker may take beyond the planned time before it counts as hung.",
)
@click.option(
    "--node",
    "node",
    multiple=True,
    metavar="NAME@HOST",
    help="A running Erlang node to measure over distribution (repeatable); needs --measure.",
)
@click.option(
    "--measure",
    is_flag=True,
    help="Allow bridge to load its agent into each --node (under a name of its own;"
    " purged afterwards).",
)
@cookie_file_option
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
    type=_bounded("schedulers"),
    help="Start the Erlang node with +S N:N (N schedulers, all online).",
)
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
@click.option("--yes", is_flag=True, help="With --as-recorded: run without asking.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the JSON report to this file.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(RENDERERS)),
    default="table",
    show_default=True,
    help="What to print on stdout.",
)
def run(
    replay: Path | None, as_recorded: bool, yes: bool, output: Path | None, fmt: str, **params
) -> None:
    """Run SCENARIOS (names or .toml paths), e.g. `bridge run hmac-sha1`."""
    _check_as_recorded(replay, as_recorded, yes)
    if output is not None:
        plans.check_writable(output)
    command = tuple(["bridge", *sys.argv[1:]])
    if replay is not None:
        if params["scenarios"]:
            raise UsageError("--replay reruns the report's own scenarios: name none")
        old = schema.load(replay)
        plan = _replay_plan(old, replay, command, as_recorded, yes)
    else:
        # click gives repeatable options as tuples already; RunOptions has a
        # field for every other option of this command.
        plan = plans.from_options(plans.RunOptions(**params), command)
    outcome, failure = _execute(plan, output, fmt)
    if replay is not None and outcome.report.results and failure is None:
        from bridge.analysis import compare as comparison
        from bridge.render.compare import render as render_compare

        pairs = comparison.compare([old, outcome.report], [f"{replay.name} (then)", "now"])
        _out("\n" + render_compare(pairs, "table" if fmt == "json" else fmt), nl=False)
    if failure is not None:
        raise failure
    _exit_status(outcome)


def _check_as_recorded(replay: Path | None, as_recorded: bool, yes: bool) -> None:
    """Before anything is read or run: --as-recorded runs a report's own
    programs, which takes the user's say-so, on a terminal or with --yes."""
    if as_recorded and replay is None:
        raise UsageError("--as-recorded goes with --replay REPORT")
    if yes and not as_recorded:
        raise UsageError("--yes goes with --replay REPORT --as-recorded")
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


class StdoutError(BridgeError):
    """stdout refused what bridge printed (a full disk, a closed pipe)."""

    def __init__(self, exc: OSError, kept: Path | None = None) -> None:
        reason = exc.strerror or str(exc)
        super().__init__(f"stdout: {reason}" + (f"; the report is kept in {kept}" if kept else ""))
        self.errno = exc.errno


def _out(text: str, nl: bool = True) -> None:
    """Print on stdout; a write error becomes a StdoutError (main says it in
    one line)."""
    try:
        click.echo(text, nl=nl)
    except OSError as exc:
        raise StdoutError(exc) from None


def _execute(
    plan: Plan, output: Path | None, fmt: str
) -> tuple[runner.Outcome, BridgeError | None]:
    """Run, print, then write: the results reach stdout before any file is
    written, and a report that cannot be written where asked is kept
    elsewhere (`_save`). Returns what failed in printing or saving."""
    progress = _progress_printer()
    with signals.guarding():
        outcome = runner.execute(plan, progress=progress)
        signals.hold()  # whatever happened, the report is saved before a signal acts
        if progress:
            click.echo("\r\033[K", err=True, nl=False)
        text = schema.dumps(outcome.report)
        try:
            shown = _show(RENDERERS[fmt](outcome.report))
        except Exception:
            lost = _save(text, output)  # a renderer's bug does not lose the measurement
            if lost is not None:
                click.echo(f"bridge: error: {plain.printable(lost.one_line())}", err=True)
            raise
        failure = _save(text, output, shown)
    # The report is safe: a signal from here on ends bridge at once.
    if output is not None and failure is None:
        click.echo(f"report written to {output}", err=True)
    if shown is not None and failure is None and output is not None:
        failure = StdoutError(shown)
    for skip in outcome.report.skipped:
        what = plain.printable(f"{skip.runtime} could not run: {skip.reason}")
        if skip.requested:  # asked for and not run: the run fails (exit status 1)
            click.echo(f"bridge: error: {skip.requested} {what}", err=True)
        else:
            skipped = plain.printable(f"{skip.runtime}: {skip.reason}")
            click.echo(f"bridge: warning: skipped {skipped}", err=True)
    if outcome.report.concurrency is not None:
        for warning in outcome.report.concurrency.warnings:
            click.echo(f"bridge: warning: {plain.printable(warning)}", err=True)
    for line in _noise_warnings(outcome.report):
        click.echo(f"bridge: warning: {line}", err=True)
    if outcome.report.noise and outcome.report.noise.advice:
        click.echo(f"bridge: advice: {plain.printable(outcome.report.noise.advice)}", err=True)
    return outcome, failure


def _show(text: str) -> OSError | None:
    """Print the results; what stdout refused, returned, not raised: the
    report must still be written."""
    try:
        click.echo(text, nl=False)
    except OSError as exc:
        return exc
    return None


def _save(text: str, output: Path | None, shown: OSError | None = None) -> BridgeError | None:
    """Write the report to -o. When that fails, or there is no -o and stdout
    refused the results, keep it in a new file elsewhere and return the
    error that names it."""
    if output is not None:
        try:
            output.write_atomic(output, text)
            return None
        except BridgeError as exc:  # its directory gone since the start, a full disk...
            name = output.name
            if isinstance(exc, output.OutputError):
                said = f"{output}: cannot write ({exc.reason})"
            else:
                said = exc.one_line()
    elif shown is not None and shown.errno != errno.EPIPE:
        # Nothing was asked of a file, but stdout lost the results.
        return StdoutError(shown, _keep(text, "report.json"))
    elif shown is not None:
        return StdoutError(shown)
    else:
        return None
    kept = _keep(text, name)
    where = f"the report is kept in {kept}" if kept else "the report could not be kept anywhere"
    return BridgeError(f"{said}; {where}")


def fallback_places() -> list[Path]:
    """Where a report that could not be written is kept, in order: the
    cache, the temporary directory, the working directory (often on
    different file systems, so one full disk leaves another)."""
    from bridge.system import otp

    return [otp.cache_root() / "unsaved", Path(tempfile.gettempdir()), Path.cwd()]


def _keep(text: str, name: str) -> Path | None:
    try:
        return output.keep(text, name or "report.json", fallback_places())
    except output.OutputError:
        return None


def _noise_warnings(report: schema.Report) -> list[str]:
    """Cells that missed the CI target (one line each, or one for many), then
    what the machine was doing (bridge.analysis.noise)."""
    unstable = report.unstable
    goal = report.settings.get("until_stable") or report.settings.get("ci_target")
    target = f" ±{goal * 100:g}%" if goal else ""
    lines = [
        f"{u.runtime} {u.call_id} at {u.size} B (hw {u.hw}) did not reach the target{target}:"
        f" ±{u.ci_halfwidth * 100:.1f}%"
        for u in unstable
    ]
    if len(lines) > 4:
        worst = max(unstable, key=lambda u: u.ci_halfwidth)
        widest = f"{worst.runtime} {worst.call_id} at {worst.size} B"
        lines = [
            f"{len(unstable)} cells did not reach the target{target} (widest: {widest},"
            f" ±{worst.ci_halfwidth * 100:.1f}%); --until-stable samples them until they do"
        ]
    # Process names (from /proc, any user's) are escaped like a report's text.
    return [
        plain.printable(line)
        for line in lines + list(report.noise.warnings if report.noise else ())
    ]


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


@cli.command()
@click.option(
    "--erl", "erl", multiple=True, metavar="PATH", help="An erl to describe (repeatable)."
)
@click.option("--openssl", "openssl", multiple=True, metavar="PATH", help="An openssl to describe.")
@click.option(
    "--node",
    "node",
    multiple=True,
    metavar="NAME@HOST",
    help="Probe a running Erlang node instead, read-only (repeatable).",
)
@cookie_file_option
@connect_timeout_option
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "--quietness-seconds",
    type=FloatRange(0, 60),
    default=3,
    show_default=True,
    help="How long to time a fixed loop to see how steady the machine is (0: skip).",
)
def env(*, erl, openssl, node, cookie_file, connect_timeout, fmt, quietness_seconds) -> None:
    """Describe the machine and each runtime, without benchmarking: CPU features,
    virtualisation, OS, each runtime's libcrypto, the masks bridge would use, and
    how quiet the machine is (the spread of a fixed loop on each CPU), with advice.
    With --node: what a running node uses (releases, libcrypto mapped, masks,
    its host's CPU) and whether its SHA and AES paths use the hardware."""
    if node:
        if erl or openssl:
            raise UsageError("--node probes running nodes: leave out --erl and --openssl")
        from bridge.nodes import distribution

        _env_nodes(distribution.node_plan(node, cookie_file, connect_timeout=connect_timeout), fmt)
        return
    if cookie_file is not None:
        raise UsageError("--cookie-file goes with --node NAME@HOST")
    from bridge.analysis import quietness
    from bridge.measure.describe import describe
    from bridge.render.env import render_env

    plan = plans.for_env(tuple(erl), tuple(openssl))
    environment_block, runtimes, hw = describe(plan)
    quiet = quietness.check(quietness_seconds) if quietness_seconds > 0 else None
    if fmt == "json":
        data = {
            "environment": environment_block,
            "runtimes": [r.to_json() for r in runtimes],
            "hardware": hw,
        }
        if quiet is not None:
            data["quietness"] = quiet.to_json()
        _out(json.dumps(data, indent=1))
        return
    _out(render_env(environment_block, runtimes, hw, quiet), nl=False)


def _env_nodes(plan, fmt: str) -> None:
    from bridge.measure import nodeenv
    from bridge.render.nodes import render_nodes

    found = nodeenv.probe_nodes(plan, DEFAULT)
    if fmt == "json":
        data = {
            "nodes": [{**rt.to_json(), "ab": found.ab.get(rt.id, "")} for rt in found.runtimes],
            "errors": found.failed,
        }
        _out(json.dumps(data, indent=1))
    elif found.runtimes:
        _out(render_nodes(found.runtimes, found.ab), nl=False)
    for line in found.failed:
        click.echo(f"bridge: error: {plain.printable(line)}", err=True)
    if found.failed:
        raise SystemExit(ExitStatus.RUN_FAILED)


@cli.command("import-speed")
@click.argument("file")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the report."
)
def import_speed(file, fmt, output) -> None:
    """Turn `openssl speed` output (FILE, or - for stdin) into a bridge report:
    pasted, quoted or re-wrapped text from 1.0.2, 1.1.1 and 3.x, several runs
    per document."""
    if output is not None:
        plans.check_writable(output)
    from bridge.speed import importer

    stdin = click.get_binary_stream("stdin") if file == "-" else None
    text, name = importer.read_document(file, stdin)
    report, warnings = importer.to_report(text, name, ["bridge", *sys.argv[1:]])
    for warning in warnings:
        click.echo(f"bridge: warning: skipped {plain.printable(warning)}", err=True)
    shown = _show(RENDERERS[fmt](report))
    failure = _save(schema.dumps(report), output, shown)
    if failure is None and shown is not None and output is not None:
        failure = StdoutError(shown)
    if failure is not None:
        raise failure


@cli.group()
def otp() -> None:
    """Erlang/OTP installations."""


@otp.command("list")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def otp_list(fmt) -> None:
    """List the OTP installations on this machine: erl on PATH, /usr/lib/erlang,
    kerl, asdf, mise, Homebrew and BRIDGE_OTP_PATH. Each erl is started once to
    load crypto, as a run would; broken ones are listed with the reason."""
    from bridge.render.otp import render_otp
    from bridge.system import discover

    found = discover.discover()
    if fmt == "json":
        _out(json.dumps([f.to_json() for f in found], indent=1))
        return
    _out(render_otp(found))


@cli.command()
@click.argument("file", type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="table", show_default=True
)
def report(file, fmt) -> None:
    """Render a saved report (table, markdown, text for email, json)."""
    _out(RENDERERS[fmt](schema.load(file)), nl=False)


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "text", "json"]),
    default="table",
    show_default=True,
)
def compare(files, fmt) -> None:
    """Line up reports by scenario, call, size and hw (runtimes matched by kind)
    and say which differences are significant. The first file is the baseline."""
    if len(files) < 2:
        raise UsageError("compare needs at least two reports")
    from bridge.analysis import compare as comparison
    from bridge.render.compare import render as render_compare

    reports = [schema.load(f) for f in files]
    labels = [
        f.name if list(map(lambda p: p.name, files)).count(f.name) == 1 else str(f) for f in files
    ]
    _out(render_compare(comparison.compare(reports, labels), fmt), nl=False)


@cli.command("plot")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The picture: .png or .svg.",
)
@click.option(
    "--compare",
    "others",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Another report to draw in the same picture (repeatable).",
)
def plot_command(file, output, others) -> None:
    """Draw throughput against message size (log axes), one line per runtime
    and call, hw on solid and off dashed."""
    from bridge.render import plot

    paths = [file, *others]
    reports = [(p.name, schema.load(p)) for p in paths]
    plans.check_writable(output)
    n = plot.plot(reports, output)
    click.echo(f"{output}: {n} lines", err=True)


@cli.command("list")
@click.option(
    "--scenario-dir",
    "scenario_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def list_scenarios(scenario_dirs) -> None:
    """The scenarios by kind, each with a one-line description."""
    from bridge.cli import listing

    _out(listing.list_text(tuple(scenario_dirs)), nl=False)


@cli.command()
@click.argument("name")
@click.option(
    "--scenario-dir",
    "scenario_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def show(name, scenario_dirs) -> None:
    """One scenario: where its file is, each call per runtime (what it
    measures, how its output is checked, the release it needs), and the file."""
    from bridge.cli import listing

    _out(listing.show_text(name, tuple(scenario_dirs)), nl=False)


def _progress_printer():
    if not sys.stderr.isatty():
        return None

    def show(message: str) -> None:
        click.echo(f"\r\033[K{plain.printable(message)}", err=True, nl=False)

    return show


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # The library's BridgeWarnings are for the user: one line each, like the others.
    if issubclass(category, BridgeWarning):
        click.echo("\r\033[K" if sys.stderr.isatty() else "", err=True, nl=False)
        click.echo(f"bridge: warning: {plain.printable(str(message))}", err=True)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


def main() -> None:
    signals.install()
    warnings.showwarning = _show_warning
    # Messages for the user, whatever -W or PYTHONWARNINGS say about warnings.
    warnings.simplefilter("default", BridgeWarning)
    try:
        try:
            code = cli.main(standalone_mode=False, prog_name="bridge")
            sys.stdout.flush()  # here, not at exit, where a full stdout is a traceback
        finally:
            # The command is over (its report, if any, is safe): a signal
            # now would only break the message about how it ended.
            signals.finish()
    except click.exceptions.NoArgsIsHelpError as exc:
        code = _help(exc)
    except click.UsageError as exc:
        click.echo(f"bridge: error: {plain.printable(exc.format_message())}", err=True)
        code = ExitStatus.USAGE
    except click.ClickException as exc:
        click.echo(f"bridge: error: {plain.printable(exc.format_message())}", err=True)
        code = exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("\nbridge: interrupted", err=True)
        code = signals.status() or ExitStatus.INTERRUPTED
    except StdoutError as exc:
        if exc.errno != errno.EPIPE:  # a closed pipe is the reader's choice: quiet
            click.echo(f"bridge: error: {plain.printable(exc.one_line())}", err=True)
        code = ExitStatus.RUN_FAILED
    except BridgeError as exc:
        click.echo("\r\033[K" if sys.stderr.isatty() else "", err=True, nl=False)
        click.echo(f"bridge: error: {plain.printable(exc.one_line())}", err=True)
        code = exc.status
    except SystemExit as exc:
        code = exc.code
    except OSError as exc:
        if exc.errno not in (errno.EPIPE, errno.ENOSPC, errno.EIO) or not _stdout_refuses():
            raise
        if exc.errno != errno.EPIPE:
            click.echo(f"bridge: error: stdout: {exc.strerror}", err=True)
        code = ExitStatus.RUN_FAILED
    if _stdout_refuses():
        code = code or ExitStatus.RUN_FAILED
    sys.exit(int(code or 0))


def _help(exc: click.exceptions.NoArgsIsHelpError) -> int:
    try:
        _out(exc.ctx.get_help() if exc.ctx else str(exc))
    except StdoutError as err:
        if err.errno != errno.EPIPE:
            click.echo(f"bridge: error: {plain.printable(err.one_line())}", err=True)
        return ExitStatus.RUN_FAILED
    return ExitStatus.OK


def _stdout_refuses() -> bool:
    """Flush stdout; if it cannot take what is left, point fd 1 at /dev/null,
    so that Python's own flush at exit has nothing to fail on."""
    try:
        sys.stdout.flush()
        return False
    except (OSError, ValueError):
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return True
