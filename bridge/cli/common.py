"""What the commands share: number options read as ASCII with the ranges
replayed reports are held to, the options that reach running nodes, and
printing on stdout."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

import click

from bridge import plain
from bridge.errors import BridgeError
from bridge.settings import BOUNDS
from bridge.system import output

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


def bounded(name: str) -> click.ParamType:
    """The option's range, from the table --replay checks reports against,
    read as ASCII numbers only."""
    b = BOUNDS[name]
    return IntRange(int(b.low), int(b.high)) if b.integer else FloatRange(b.low, b.high)


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


class StdoutError(BridgeError):
    """stdout refused what bridge printed (a full disk, a closed pipe)."""

    def __init__(self, exc: OSError, kept: Path | None = None) -> None:
        reason = exc.strerror or str(exc)
        super().__init__(f"stdout: {reason}" + (f"; the report is kept in {kept}" if kept else ""))
        self.errno = exc.errno


def out(text: str, nl: bool = True) -> None:
    """Print on stdout; a write error becomes a StdoutError (main says it in
    one line)."""
    try:
        click.echo(text, nl=nl)
    except OSError as exc:
        raise StdoutError(exc) from None


def show_results(text: str) -> OSError | None:
    """Print the results; what stdout refused, returned, not raised: the
    report must still be written."""
    try:
        click.echo(text, nl=False)
    except OSError as exc:
        return exc
    return None


def save_report(text: str, path: Path | None, shown: OSError | None = None) -> BridgeError | None:
    """Write the report to -o. When that fails, or there is no -o and stdout
    refused the results, keep it in a new file elsewhere and return the
    error that names it."""
    if path is not None:
        try:
            output.write_atomic(path, text)
            return None
        except BridgeError as exc:  # its directory gone since the start, a full disk...
            name = path.name
            if isinstance(exc, output.OutputError):
                said = f"{path}: cannot write ({exc.reason})"
            else:
                said = exc.one_line()
    elif shown is not None and shown.errno != errno.EPIPE:
        # Nothing was asked of a file, but stdout lost the results.
        return StdoutError(shown, keep_report(text, "report.json"))
    elif shown is not None:
        return StdoutError(shown)
    else:
        return None
    kept = keep_report(text, name)
    where = f"the report is kept in {kept}" if kept else "the report could not be kept anywhere"
    return BridgeError(f"{said}; {where}")


def fallback_places() -> list[Path]:
    """Where a report that could not be written is kept, in order: the
    cache, the temporary directory, the working directory (often on
    different file systems, so one full disk leaves another)."""
    from bridge.system import otp

    return [otp.cache_root() / "unsaved", Path(tempfile.gettempdir()), Path.cwd()]


def keep_report(text: str, name: str) -> Path | None:
    try:
        return output.keep(text, name or "report.json", fallback_places())
    except output.OutputError:
        return None


def verbosity_options(command):
    """-v/--verbose and -q/--quiet: how much the terminal view says (bridge.render.table)."""
    command = click.option(
        "-q",
        "--quiet",
        is_flag=True,
        help="The answer and the tables only: no caveats, no warnings on stderr"
        " (the report keeps them).",
    )(command)
    return click.option(
        "-v",
        "--verbose",
        is_flag=True,
        help="Every column, the calls' full labels, the full verdicts and provenance.",
    )(command)
