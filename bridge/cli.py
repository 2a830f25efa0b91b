"""The command line. Each command parses its options, calls one library
function, picks a renderer and echoes. This is the only place that turns
errors into messages and exit statuses:

  0 success · 1 a run failed (a worker died, outputs differ) · 2 bad input ·
  130 interrupted (after saving what was measured).
"""

from __future__ import annotations

import json
import signal
import sys
import warnings
from pathlib import Path

import click

import bridge
from bridge import model, plans, runenv, runner
from bridge.errors import BridgeError, BridgeWarning, ExitStatus, UsageError
from bridge.render import RENDERERS
from bridge.settings import DEFAULT

# The modules of the other commands are imported in them: `bridge run
# --quick` has 5 s, and Python takes about 2 ms a module here.

MAX_SAMPLES = 10_000


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
    type=click.FloatRange(1, 600),
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
@click.option("--samples", type=click.IntRange(1, MAX_SAMPLES), help="Samples per cell.")
@click.option("--sample-ms", type=click.IntRange(1, 10_000), help="Target duration of one sample.")
@click.option("--warmup-ms", type=click.IntRange(0, 60_000), help="Warm-up time per cell.")
@click.option("--rounds", type=click.IntRange(1, 1000), help="Interleaved rounds per cell.")
@click.option("--openssl-runs", type=click.IntRange(1, 100), help="openssl speed runs per cell.")
@click.option(
    "--until-stable",
    type=click.FloatRange(0.001, 0.5),
    is_flag=False,
    flag_value=0.02,
    default=None,
    metavar="[CV]",
    help="Keep sampling each cell until its 95% CI half-width is under CV of the"
    " median (default 0.02), or --max-time passes.",
)
@click.option(
    "--max-time",
    type=click.IntRange(1, 86_400),
    default=300,
    show_default=True,
    help="Seconds --until-stable may spend in all.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
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
    type=click.Path(file_okay=False, path_type=Path),
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
    type=click.IntRange(3, 100_000_000),
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
    type=click.FloatRange(1, 3600),
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
    type=click.FloatRange(0.01, 1.0),
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
    type=click.IntRange(1, 1024),
    help="Start the Erlang node with +S N:N (N schedulers, all online).",
)
@click.option(
    "--replay",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Rerun what a saved report describes, then compare the new numbers with it.",
)
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
def run(replay: Path | None, output: Path | None, fmt: str, **params) -> None:
    """Run SCENARIOS (names or .toml paths), e.g. `bridge run hmac-sha1`."""
    if output is not None:
        plans.check_writable(output)
    command = tuple(["bridge", *sys.argv[1:]])
    if replay is not None:
        if params["scenarios"]:
            raise UsageError("--replay reruns the report's own scenarios: name none")
        old = model.load(replay)
        plan, warnings = plans.from_report(old, replay, command)
        for warning in warnings:
            click.echo(f"bridge: warning: {warning}", err=True)
    else:
        # click gives repeatable options as tuples already; RunOptions has a
        # field for every other option of this command.
        plan = plans.from_options(plans.RunOptions(**params), command)
    outcome = _execute(plan, output, fmt)
    if replay is not None and outcome.report.results:
        from bridge import compare as comparison
        from bridge.render.compare import render as render_compare

        click.echo("")
        pairs = comparison.compare([old, outcome.report], [f"{replay.name} (then)", "now"])
        click.echo(render_compare(pairs, "table" if fmt == "json" else fmt), nl=False)
    _exit_status(outcome)


def _execute(plan: runner.Plan, output: Path | None, fmt: str) -> runner.Outcome:
    progress = _progress_printer()
    outcome = runner.execute(plan, progress=progress)
    if progress:
        click.echo("\r\033[K", err=True, nl=False)
    if output is not None:
        model.write_atomic(output, model.dumps(outcome.report))
    click.echo(RENDERERS[fmt](outcome.report), nl=False)
    if output is not None:
        click.echo(f"report written to {output}", err=True)
    for skip in outcome.report.skipped:
        if skip.requested:  # asked for and not run: the run fails (exit status 1)
            click.echo(
                f"bridge: error: {skip.requested} {skip.runtime} could not run: {skip.reason}",
                err=True,
            )
        else:
            click.echo(f"bridge: warning: skipped {skip.runtime}: {skip.reason}", err=True)
    if outcome.report.concurrency is not None:
        for warning in outcome.report.concurrency.warnings:
            click.echo(f"bridge: warning: {warning}", err=True)
    for line in _noise_warnings(outcome.report):
        click.echo(f"bridge: warning: {line}", err=True)
    if outcome.report.noise and outcome.report.noise.advice:
        click.echo(f"bridge: advice: {outcome.report.noise.advice}", err=True)
    return outcome


def _noise_warnings(report: model.Report) -> list[str]:
    """Cells that missed the CI target (one line each, or one for many), then
    what the machine was doing (bridge.noise)."""
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
    return lines + list(report.noise.warnings if report.noise else ())


def _exit_status(outcome: runner.Outcome) -> None:
    if outcome.interrupted:
        raise SystemExit(ExitStatus.INTERRUPTED)
    if not outcome.report.results:
        reasons = [s.reason for s in outcome.report.skipped]
        reasons += [e.message for e in outcome.report.errors]
        raise BridgeError("nothing was measured: " + "; ".join(reasons or ["no runtime ran"]))
    # The others' results are kept and the report is written; but a runtime
    # the user named that never ran is a failed run, not a success.
    if outcome.failed or any(s.requested for s in outcome.report.skipped):
        raise SystemExit(ExitStatus.RUN_FAILED)


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
    type=click.FloatRange(0, 60),
    default=3,
    show_default=True,
    help="How long to time a fixed loop to see how steady the machine is (0: skip).",
)
def env(erl, openssl, node, cookie_file, connect_timeout, fmt, quietness_seconds) -> None:
    """Describe the machine and each runtime, without benchmarking: CPU features,
    virtualisation, OS, each runtime's libcrypto, the masks bridge would use, and
    how quiet the machine is (the spread of a fixed loop on each CPU), with advice.
    With --node: what a running node uses (releases, libcrypto mapped, masks,
    its host's CPU) and whether its SHA and AES paths use the hardware."""
    if node:
        if erl or openssl:
            raise UsageError("--node probes running nodes: leave out --erl and --openssl")
        from bridge import distribution

        _env_nodes(distribution.node_plan(node, cookie_file, connect_timeout=connect_timeout), fmt)
        return
    if cookie_file is not None:
        raise UsageError("--cookie-file goes with --node NAME@HOST")
    from bridge import quietness
    from bridge.render.env import render_env

    plan = plans.for_env(tuple(erl), tuple(openssl))
    environment_block, runtimes, hw = runner.inspect(plan)
    quiet = quietness.check(quietness_seconds) if quietness_seconds > 0 else None
    if fmt == "json":
        data = {
            "environment": environment_block,
            "runtimes": [r.to_json() for r in runtimes],
            "hardware": hw,
        }
        if quiet is not None:
            data["quietness"] = quiet.to_json()
        click.echo(json.dumps(data, indent=1))
        return
    click.echo(render_env(environment_block, runtimes, hw, quiet), nl=False)


def _env_nodes(plan, fmt: str) -> None:
    from bridge import nodeenv
    from bridge.render.nodes import render_nodes

    found = nodeenv.probe_nodes(plan, DEFAULT)
    if fmt == "json":
        data = {
            "nodes": [{**rt.to_json(), "ab": found.ab.get(rt.id, "")} for rt in found.runtimes],
            "errors": found.failed,
        }
        click.echo(json.dumps(data, indent=1))
    elif found.runtimes:
        click.echo(render_nodes(found.runtimes, found.ab), nl=False)
    for line in found.failed:
        click.echo(f"bridge: error: {line}", err=True)
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
    from bridge import importer

    stdin = click.get_binary_stream("stdin") if file == "-" else None
    text, name = importer.read_document(file, stdin)
    report, warnings = importer.to_report(text, name, ["bridge", *sys.argv[1:]])
    for warning in warnings:
        click.echo(f"bridge: warning: skipped {warning}", err=True)
    if output is not None:
        model.write_atomic(output, model.dumps(report))
    click.echo(RENDERERS[fmt](report), nl=False)


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
    from tabulate import tabulate

    from bridge import discover

    found = discover.discover()
    if fmt == "json":
        click.echo(json.dumps([f.to_json() for f in found], indent=1))
        return
    rows = [
        [
            f.otp_version or "?",
            f.erts_version or "?",
            f.crypto_version or "no",
            f.crypto_lib or "",
            f.libcrypto or "",
            ", ".join(f.sources),
            str(f.root),
            f.problem or "ok",
        ]
        for f in found
    ]
    headers = [
        "OTP",
        "ERTS",
        "crypto",
        "crypto lib",
        "libcrypto",
        "found via",
        "root",
        "status",
    ]
    click.echo(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))


@cli.command()
@click.argument("file", type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="table", show_default=True
)
def report(file, fmt) -> None:
    """Render a saved report (table, markdown, text for email, json)."""
    click.echo(RENDERERS[fmt](model.load(file)), nl=False)


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
    from bridge import compare as comparison
    from bridge.render.compare import render as render_compare

    reports = [model.load(f) for f in files]
    labels = [
        f.name if list(map(lambda p: p.name, files)).count(f.name) == 1 else str(f) for f in files
    ]
    click.echo(render_compare(comparison.compare(reports, labels), fmt), nl=False)


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
    from bridge import plot

    paths = [file, *others]
    reports = [(p.name, model.load(p)) for p in paths]
    plans.check_writable(output)
    n = plot.plot(reports, output)
    click.echo(f"{output}: {n} lines", err=True)


@cli.command("list")
@click.option(
    "--scenario-dir",
    "scenario_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
)
def list_scenarios(scenario_dirs) -> None:
    """The scenarios by kind, each with a one-line description."""
    from bridge import listing

    click.echo(listing.list_text(tuple(scenario_dirs)), nl=False)


@cli.command()
@click.argument("name")
@click.option(
    "--scenario-dir",
    "scenario_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
)
def show(name, scenario_dirs) -> None:
    """One scenario: where its file is, each call per runtime (what it
    measures, how its output is checked, the release it needs), and the file."""
    from bridge import listing

    click.echo(listing.show_text(name, tuple(scenario_dirs)), nl=False)


def _progress_printer():
    if not sys.stderr.isatty():
        return None

    def show(message: str) -> None:
        click.echo(f"\r\033[K{message}", err=True, nl=False)

    return show


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # The library's BridgeWarnings are for the user: one line each, like the others.
    if issubclass(category, BridgeWarning):
        click.echo("\r\033[K" if sys.stderr.isatty() else "", err=True, nl=False)
        click.echo(f"bridge: warning: {message}", err=True)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


def _terminate(signum, frame) -> None:
    # SIGTERM takes the same path as Ctrl-C: stop, save, exit 130.
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    warnings.showwarning = _show_warning
    # Messages for the user, whatever -W or PYTHONWARNINGS say about warnings.
    warnings.simplefilter("default", BridgeWarning)
    try:
        code = cli.main(standalone_mode=False, prog_name="bridge")
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        code = ExitStatus.OK
    except click.UsageError as exc:
        click.echo(f"bridge: error: {exc.format_message()}", err=True)
        code = ExitStatus.USAGE
    except click.ClickException as exc:
        click.echo(f"bridge: error: {exc.format_message()}", err=True)
        code = exc.exit_code
    except click.exceptions.Abort:
        click.echo("\nbridge: interrupted", err=True)
        code = ExitStatus.INTERRUPTED
    except BridgeError as exc:
        click.echo("\r\033[K" if sys.stderr.isatty() else "", err=True, nl=False)
        click.echo(f"bridge: error: {exc.one_line()}", err=True)
        code = exc.status
    except KeyboardInterrupt:
        click.echo("\nbridge: interrupted", err=True)
        code = ExitStatus.INTERRUPTED
    except SystemExit as exc:
        code = exc.code
    sys.exit(int(code or 0))
