"""What the commands share: one option vocabulary (--format, -o, the
--export-* files, the options that reach running nodes), number options read
as ASCII with the ranges replayed reports are held to, --help in groups with
examples, and printing on stdout."""

from __future__ import annotations

import enum
import errno
import functools
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from bridge import plain
from bridge.analysis import findings, versus
from bridge.catalog import vocab
from bridge.errors import BridgeError, UsageError
from bridge.render import show
from bridge.report import schema
from bridge.settings import BOUNDS
from bridge.system import output
from bridge.view import Detail, units

MAX_SAMPLES = int(BOUNDS["samples"].high)

# run and report: the runtime each runtime of its kind is compared with.
baseline_option = click.option(
    "--baseline",
    metavar="RUNTIME",
    help="Compare each runtime with this one of its kind (its report name, e.g."
    " erlang@25.2.3 or openssl@1.1.1w) instead of the first named.",
)


def check_baseline(baseline: str | None) -> None:
    """Before a run: a --baseline that names no runtime kind is refused."""
    if baseline is not None:
        versus.check_name(baseline)


def cell_text(report, u) -> str:
    """An unstable cell as a warning names it: runtime, call, scenario where
    the run has several, and its size in the scenario's unit (render.units)."""
    return units.cell(report, u.scenario, u.runtime, u.call_id, u.size)


def rebase(report, baseline: str | None):
    """The report a view shows: with the findings it lacks (an older report,
    bridge.analysis.findings.complete), compared against `baseline` when
    given; a name the report does not have is a one-line error listing its
    runtimes."""
    if baseline is None:
        return findings.complete(report)
    return findings.rebased(report, baseline)


def rendered(
    fmt: str,
    report: schema.Report,
    detail: Detail = Detail.NORMAL,
    width: int | None = None,
    omit: frozenset[str] = frozenset(),
    colour: bool = False,
) -> str:
    """The report in `fmt` (bridge.render.show): a view of it completed
    first (the view computes nothing); as JSON, the report as read. `colour`
    counts only for the terminal view (table): stdout, when colour_wanted()."""
    complete = report if fmt == "json" else findings.complete(report)
    return show(fmt, complete, detail, width, omit, colour and fmt == "table")


# -- colour ----------------------------------------------------------------------------


class ColourWhen(str, enum.Enum):
    """--color: never, auto (stdout a terminal that is not dumb, NO_COLOR not
    set), always (even into a pipe, NO_COLOR or not)."""

    NEVER = "never"
    AUTO = "auto"
    ALWAYS = "always"


_COLOUR = "bridge.color"  # the choice, in the click context's meta


def colour_decided(when: ColourWhen, environ: Mapping[str, str], tty: bool) -> bool:
    """Whether the terminal view is coloured: `always` and `never` as said;
    `auto` when stdout is a terminal (`tty`), TERM is set and not dumb, and
    NO_COLOR is absent or empty (https://no-color.org)."""
    if when is ColourWhen.ALWAYS:
        return True
    if when is ColourWhen.NEVER or environ.get("NO_COLOR"):
        return False
    return tty and environ.get("TERM", "dumb") != "dumb"


def colour_wanted() -> bool:
    """Colour for what goes to stdout now, as --color, NO_COLOR and stdout say."""
    ctx = click.get_current_context(silent=True)
    when = ctx.find_root().meta.get(_COLOUR, ColourWhen.AUTO) if ctx else ColourWhen.AUTO
    try:
        tty = sys.stdout is not None and sys.stdout.isatty()
    except (OSError, ValueError, AttributeError):  # closed, or replaced by an object without it
        tty = False
    return colour_decided(when, os.environ, tty)


def colour_option(f: Callable) -> Callable:
    """--color never|auto|always, the same on every command that prints a view."""

    def remember(ctx: click.Context, _param, value: str | None) -> None:
        if value is not None:
            ctx.find_root().meta[_COLOUR] = ColourWhen(value)

    return click.option(
        "--color",
        "color",
        type=click.Choice([w.value for w in ColourWhen]),
        default=None,
        expose_value=False,
        callback=remember,
        help="Colour the verdicts and warnings of the table on stdout: auto (default) on"
        " a terminal unless NO_COLOR is set or TERM is dumb. Never in files or the"
        " other formats.",
    )(f)


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


# -- --help in groups, with examples -------------------------------------------


class _HelpOnStdout:
    """-h/--help printed through `out`: a full stdout is one line, not a
    traceback (click's own help option echoes unguarded)."""

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:

            def show(ctx: click.Context, _param, value: bool) -> None:
                if value and not ctx.resilient_parsing:
                    out(ctx.get_help())
                    ctx.exit()

            option.callback = show
        return option


class Command(_HelpOnStdout, click.Command):
    """A command whose --help lists its options in groups, then examples.

    groups: (title, parameter names) in the order shown; a name the command
    does not have is skipped, so a group can name an option another change
    adds (e.g. "quiet"). Options in no group come last, under "Other
    options". examples: (command line, what it does) pairs."""

    def __init__(
        self,
        *args,
        groups: Sequence[tuple[str, Sequence[str]]] = (),
        examples: Sequence[tuple[str, str]] = (),
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.groups = tuple(groups)
        self.examples = tuple(examples)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                records[param.name] = record
        placed: set[str] = set()
        for title, names in self.groups:
            rows = [records[n] for n in names if n in records and n not in placed]
            placed.update(names)
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        rest = [r for name, r in records.items() if name not in placed]
        if rest:
            with formatter.section("Other options" if self.groups else "Options"):
                formatter.write_dl(rest)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        format_examples(self.examples, formatter, ctx.find_root().info_name or "bridge")


class Group(_HelpOnStdout, click.Group):
    """A group with examples in its --help."""

    def __init__(self, *args, examples: Sequence[tuple[str, str]] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        format_examples(self.examples, formatter, ctx.find_root().info_name or "bridge")


def format_examples(
    examples: Sequence[tuple[str, str]], formatter: click.HelpFormatter, prog: str = "bridge"
) -> None:
    """The examples, each under the name bridge was called by (crypto-bridge
    or bridge: bridge.cli.main._prog_name)."""
    if not examples:
        return
    with formatter.section("Examples"):
        for line, what in examples:
            line = called(line, prog)
            formatter.write(f"{'':>{formatter.current_indent}}{line}\n")
            with formatter.indentation():
                formatter.write_text(what)


# Where an example's line names the program: first, after variables set for
# it (BRIDGE_OTP_PATH=... bridge otp list), or after a pipe (xclip -o | bridge ...).
_PROGRAM = re.compile(r"(^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*|\|\s*)bridge(?= )")


def called(line: str, prog: str) -> str:
    """A command line as `prog` runs it: "bridge run X" -> "crypto-bridge run X",
    and "xclip -o | bridge import-speed -" -> "xclip -o | crypto-bridge import-speed -"."""
    return _PROGRAM.sub(lambda m: m.group(1) + prog, line)


# -- one option vocabulary -------------------------------------------------------

# Every command that renders a report offers these, in this order; the
# commands that list or describe (list, show, env, otp list) offer table and json.
FORMATS = ("table", "markdown", "text", "json", "summary", "html")
DATA_FORMATS = ("table", "json")


def format_option(choices: Sequence[str] = FORMATS, what: str = "the results") -> Callable:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default="table",
        show_default=True,
        help=f"How to print {what} on stdout (text: plain ASCII for email; html: one"
        " self-contained page).",
    )


def output_option(what: str = "the JSON report") -> Callable:
    """-o/--output: in every command, the JSON report file."""
    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, path_type=Path),
        help=f"Write {what} to this file (atomically; kept elsewhere if it cannot be written).",
    )


@dataclass(frozen=True)
class Exports:
    """--export-json, --export-markdown, --export-text, --export-html,
    --export-csv: files written beside the terminal view, each atomically."""

    json: Path | None = None
    markdown: Path | None = None
    text: Path | None = None
    html: Path | None = None
    csv: Path | None = None

    @property
    def files(self) -> list[tuple[str, Path]]:
        named = (
            ("json", self.json),
            ("markdown", self.markdown),
            ("text", self.text),
            ("html", self.html),
            ("csv", self.csv),
        )
        return [(fmt, path) for fmt, path in named if path is not None]

    @property
    def flagged(self) -> list[tuple[str, Path]]:
        """(option, file) of each export, for check_outputs."""
        return [(f"--export-{fmt}", path) for fmt, path in self.files]

    def check(self) -> None:
        """Before anything runs: no two options name the same file, and each
        directory exists and takes a new file."""
        from bridge.cli import plans

        check_outputs(self.flagged)
        for flag, path in self.flagged:
            plans.check_writable(path, flag)

    def write(self, render: Callable[[str], str], say: bool = True) -> BridgeError | None:
        """Write each file, `render(fmt)` giving its text; each that cannot be
        written is kept elsewhere and said on stderr; returns the first failure.
        `say` False leaves out the line naming each file written (compare -q)."""
        first: BridgeError | None = None
        for fmt, path in self.files:
            failure = save_report(render(fmt), path)
            if failure is None:
                if say:
                    click.echo(f"{fmt} written to {path}", err=True)
                continue
            if first is None:
                first = failure
            else:
                click.echo(f"bridge: error: {plain.printable(failure.one_line())}", err=True)
        return first


_EXPORTS = (
    ("json", "The JSON report (what -o writes)."),
    ("markdown", "The Markdown view (--format markdown)."),
    ("text", "The plain-text view for email (--format text)."),
    ("html", "One self-contained HTML page with the pictures (--format html)."),
    (
        "csv",
        "One row per cell (runtime, version, call, size, hw, median, CI, p10,"
        " samples, verdict), times in ns per call, for a spreadsheet or pandas.",
    ),
)


def export_options(f: Callable) -> Callable:
    """--export-json/--export-markdown/--export-text/--export-html/--export-csv
    FILE, as one `exports` argument (an Exports) of the command: the terminal
    view on stdout, and files in the other formats from the same results (as
    hyperfine's --export-* do)."""

    @functools.wraps(f)
    def command(
        *args, export_json, export_markdown, export_text, export_html, export_csv, **kwargs
    ):
        exports = Exports(export_json, export_markdown, export_text, export_html, export_csv)
        exports.check()
        return f(*args, exports=exports, **kwargs)

    for fmt, what in reversed(_EXPORTS):
        command = click.option(
            f"--export-{fmt}",
            f"export_{fmt}",
            type=click.Path(dir_okay=False, path_type=Path),
            metavar="FILE",
            help=f"Also write {what[0].lower()}{what[1:]}",
        )(command)
    return command


# -- outputs never overwrite inputs --------------------------------------------

Named = tuple[str, "Path | str | None"]  # (the option or what it is, a path)


def same_file(a: Path | str, b: Path | str) -> bool:
    """Whether two paths name one file: the same path once symlinks are
    resolved, or, both existing, the same device and inode (a hard link)."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        first, second = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _written_over(path: Path | str) -> bool:
    """Whether writing `path` would replace a file: not `-`, and not an
    existing FIFO or device, which bridge writes in place (system.output)."""
    if str(path) == "-":
        return False
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return True  # a new file (or one a symlink will point to)
    return stat.S_ISREG(st.st_mode)


def check_outputs(outputs: Sequence[Named], inputs: Sequence[Named] = ()) -> None:
    """Before anything runs or is read: no output file is one of the inputs
    (the replayed report, a rendered, compared or plotted report, a scenario
    file, an executable...), and no two outputs are one file. One file means
    the same file (`same_file`), so a symlink or a hard link to an input is
    caught too. One line naming both."""
    outs = [(flag, p) for flag, p in outputs if p is not None and _written_over(p)]
    ins = [(what, p) for what, p in inputs if p is not None and str(p) != "-"]
    for i, (flag, path) in enumerate(outs):
        for what, source in ins:
            if same_file(path, source):
                raise UsageError(
                    f"{flag} {path} is the same file as {what} {source}: writing it would"
                    " overwrite what bridge reads; choose another file"
                )
        for other_flag, other in outs[:i]:
            if same_file(path, other):
                raise UsageError(f"{other_flag} and {flag} both name {path}")


# Option names by group, for Command(groups=...): what every command that
# renders shares.
OUTPUT_GROUP = (
    *("fmt", "output", "export_json", "export_markdown", "export_text", "export_html"),
    *("export_csv", "color", "quiet"),
)


# -- nodes -------------------------------------------------------------------------

# RELEASE_COOKIE, taken out of the environment when bridge starts (main), so
# that no child of bridge (erl, the workers, openssl) inherits it.
release_cookie: str | None = None


def take_release_cookie() -> None:
    global release_cookie
    release_cookie = os.environ.pop("RELEASE_COOKIE", None) or release_cookie


def cookie_options(f: Callable) -> Callable:
    """--cookie and --cookie-file (what reaches running nodes, the same for
    `run` and `env`), as one `cookie` argument: None without either, else
    what distribution.cookie_from makes of them."""

    @functools.wraps(f)
    def command(*args, cookie_value, cookie_file, **kwargs):
        given = cookie_value is not None or cookie_file is not None
        cookie = None
        if given or release_cookie:
            from bridge.nodes import distribution

            environ = {"RELEASE_COOKIE": release_cookie} if release_cookie else {}
            cookie = distribution.cookie_from(cookie_value, cookie_file, environ)
        return f(*args, cookie=cookie, cookie_given=given, **kwargs)

    command = click.option(
        "--cookie-file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="A file holding the nodes' cookie (one readable by others is a warning)."
        " Default: RELEASE_COOKIE from the environment, else ~/.erlang.cookie.",
    )(command)
    return click.option(
        "--cookie",
        "cookie_value",
        metavar="COOKIE",
        help="The nodes' cookie itself, as erl -setcookie takes it (other users can see"
        " a command line: prefer --cookie-file or RELEASE_COOKIE). Never recorded.",
    )(command)


def redact(argv: Sequence[str]) -> list[str]:
    """A command line as a report records it: the value of --cookie left out."""
    shown: list[str] = []
    hide = False
    for word in argv:
        if hide:
            shown.append("HIDDEN")
            hide = False
        elif word == "--cookie":
            shown.append(word)
            hide = True
        elif word.startswith("--cookie="):
            shown.append("--cookie=HIDDEN")
        else:
            shown.append(word)
    return shown


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
        # color=True: click would strip the escapes of a view coloured on
        # purpose (--color always into a pipe); bridge's texts hold no other.
        click.echo(text, nl=nl, color=True)
    except OSError as exc:
        raise StdoutError(exc) from None


def show_results(text: str) -> OSError | None:
    """Print the results; what stdout refused, returned, not raised: the
    report must still be written."""
    try:
        click.echo(text, nl=False, color=True)  # colour only as asked (colour_wanted)
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
    from bridge.system import cache

    # The cache's own directory only where no link leads it elsewhere.
    unsaved = cache.directory_or_none("unsaved")
    return [*([unsaved] if unsaved else []), Path(tempfile.gettempdir()), Path.cwd()]


def keep_report(text: str, name: str) -> Path | None:
    try:
        return output.keep(text, name or "report.json", fallback_places())
    except output.OutputError:
        return None


def verbosity_options(command):
    """-v/--verbose and -q/--quiet: how much every view says (bridge.view.Detail)."""
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


def recorded_command() -> tuple[str, ...]:
    """This command line as a report records it: the program by the name
    people type (crypto-bridge, whatever path started it), the value of
    --cookie left out."""
    return (vocab.COMMAND, *redact(sys.argv[1:]))
