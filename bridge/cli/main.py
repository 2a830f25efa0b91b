"""The command line. Each command parses its options, calls one library
function, picks a renderer and echoes. This is the only place that turns
errors into messages and exit statuses:

  0 success · 1 a run failed (a worker died, outputs differ), or a file or
  stdout could not be written · 2 bad input · 3 compare's gate: a cell
  significantly past --fail-if-slower/--fail-if-faster · 129 stopped by SIGHUP (the
  terminal or ssh session closed) · 130 interrupted by Ctrl-C (SIGINT) · 143
  stopped by SIGTERM (all three after saving what was measured).

Results are printed before any file is written. When -o cannot be written
(a full disk, a read-only file system), the report is kept in a new file in
the cache (~/.cache/bridge/unsaved), TMPDIR or the working directory, the
error line names it, and the status is 1 (also after a signal). A stdout that
cannot be written gives one line (`bridge: error: stdout: ...`) and status 1;
a closed pipe (`| head`) ends bridge quietly, with status 1 as click does.

Signals (bridge.system.signals): the first SIGINT, SIGTERM or SIGHUP stops the
measurement. Signals that arrive after it, or once the measurement is over,
are held until the report has been printed and written (or kept); a signal
after that ends bridge at once. The status is the first signal's: 130, 143
or 129. SIGHUP also says so in one `bridge: error:` line, naming where the
report is (kept in a file when stdout was the terminal that closed).
"""

from __future__ import annotations

import errno
import os
import sys
import warnings

import click

import bridge
from bridge import plain
from bridge.cli import machine, names, reports, run, scenarios
from bridge.cli import time as timing
from bridge.cli.common import (
    Group,
    StdoutError,
    out,
    take_release_cookie,
)
from bridge.errors import BridgeError, BridgeWarning, ExitStatus
from bridge.system import signals


def _version(ctx: click.Context, _param, value: bool) -> None:
    """--version, and on stderr whether the `bridge` on PATH is another program."""
    if not value or ctx.resilient_parsing:
        return
    out(f"bridge, version {bridge.__version__}")
    note = names.clash()
    if note:
        click.echo(f"bridge: note: {note}", err=True)
    ctx.exit()


@click.group(
    cls=Group,
    context_settings={"help_option_names": ["-h", "--help"]},
    examples=(
        ("bridge run hmac-sha1 --quick", "The mailing-list benchmark, in about 5 s."),
        ("bridge env", "What this machine and its runtimes are, without benchmarking."),
        ("bridge report r.json --format markdown", "A saved report, for a forum post."),
        ("bridge compare old.json new.json", "What changed between two runs."),
    ),
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Show the version (and whether `bridge` on PATH is this bridge) and exit.",
)
def cli() -> None:
    """Is my crypto fast, and is it using the hardware?

    Times Erlang crypto, Python hashlib/hmac and the openssl CLI on
    byte-identical inputs, and checks that they compute the same bytes.

    crypto-bridge and bridge are the same command: bridge where it comes first
    on PATH (on Debian and Ubuntu, iproute2's bridge usually does).
    """


for command in (
    run.run,
    timing.time_command,
    machine.env,
    reports.import_speed,
    machine.otp,
    reports.report,
    reports.compare,
    reports.plot_command,
    scenarios.list_scenarios,
    scenarios.show,
):
    cli.add_command(command)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # The library's BridgeWarnings are for the user: one line each, like the others.
    if issubclass(category, BridgeWarning):
        click.echo("\r\033[K" if sys.stderr.isatty() else "", err=True, nl=False)
        click.echo(f"bridge: warning: {plain.printable(str(message))}", err=True)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


def main() -> None:
    take_release_cookie()
    signals.install()
    warnings.showwarning = _show_warning
    # Messages for the user, whatever -W or PYTHONWARNINGS say about warnings.
    warnings.simplefilter("default", BridgeWarning)
    try:
        try:
            code = cli.main(standalone_mode=False, prog_name=_prog_name())
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
        if not _from_stdout(exc) and not _stdout_refuses():
            raise
        if exc.errno != errno.EPIPE:
            click.echo(f"bridge: error: stdout: {exc.strerror}", err=True)
        code = ExitStatus.RUN_FAILED
    if _stdout_refuses():
        code = code or ExitStatus.RUN_FAILED
    sys.exit(int(code or 0))


def _prog_name() -> str:
    """What --help's usage lines call the command: crypto-bridge when run
    under that name, else bridge (python -m bridge included)."""
    called = os.path.basename(sys.argv[0]) if sys.argv else ""
    return "crypto-bridge" if called == "crypto-bridge" else "bridge"


def _from_stdout(exc: OSError) -> bool:
    """Whether `exc` came from writing stdout (fd 1) anywhere on its way up,
    click's own echo included: then it is one line, never a traceback."""
    tb = exc.__traceback__
    while tb is not None:
        for value in (tb.tb_frame.f_locals.get("file"), tb.tb_frame.f_locals.get("self")):
            try:
                if callable(getattr(value, "fileno", None)) and value.fileno() == 1:
                    return True
            except (OSError, ValueError, AttributeError):
                continue
        tb = tb.tb_next
    return False


def _help(exc: click.exceptions.NoArgsIsHelpError) -> int:
    try:
        out(exc.ctx.get_help() if exc.ctx else str(exc))
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
