"""The commands that show the scenarios: list and show."""

from __future__ import annotations

import json
from pathlib import Path

import click
import click.shell_completion

from bridge import plain
from bridge.cli.common import (
    DATA_FORMATS,
    Command,
    format_option,
    out,
)
from bridge.errors import UsageError


class ScenarioDir(click.Path):
    """A directory that exists: click's file_okay=False refuses a regular
    file only, and took /dev/zero or a FIFO as a directory of scenarios."""

    def __init__(self) -> None:
        super().__init__(exists=True, file_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        if not Path(path).is_dir():
            self.fail(f"{plain.printable(str(value))!r} is not a directory", param, ctx)
        return path


_SCENARIO_DIR = click.option(
    "--scenario-dir",
    "scenario_dirs",
    multiple=True,
    type=ScenarioDir(),
    help="Also look for scenario files here (repeatable); a name found here and among the"
    " built-ins is refused.",
)
_GROUPS = (("Scenarios", ("scenario_dirs",)), ("Output", ("fmt", "quiet")))


def complete_scenarios(
    ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[click.shell_completion.CompletionItem]:
    """Shell completion of a scenario argument: the built-in names and those
    of any --scenario-dir given before it; a path (a '/' or '.toml') is left
    to the shell's file completion."""
    from click.shell_completion import CompletionItem

    from bridge.catalog import scenario

    if "/" in incomplete or incomplete.endswith(".toml") or incomplete.startswith("."):
        return [CompletionItem(incomplete, type="file")]
    dirs = tuple(Path(d) for d in (ctx.params.get("scenario_dirs") or ()))
    try:
        names = scenario.available(dirs)
    except (OSError, UsageError):  # a directory gone since it was typed, or not one
        names = scenario.available()
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


@click.command(
    "list",
    cls=Command,
    groups=_GROUPS,
    examples=(
        ("bridge list", "The built-in scenarios by kind."),
        ("bridge list --scenario-dir mine/ --format json", "With your own, as JSON."),
    ),
)
@_SCENARIO_DIR
@format_option(DATA_FORMATS, "the scenarios")
def list_scenarios(scenario_dirs, fmt) -> None:
    """The scenarios by kind, each with a one-line description."""
    from bridge.cli import listing

    if fmt == "json":
        out(json.dumps(listing.list_data(tuple(scenario_dirs)), indent=1))
        return
    from bridge.render import terminal_width

    out(listing.list_text(tuple(scenario_dirs), terminal_width()), nl=False)


@click.command(
    cls=Command,
    groups=_GROUPS,
    examples=(
        ("bridge show hmac-sha1", "What the mailing-list benchmark runs, and its file."),
        ("bridge show hmac-sha1 > mine.toml", "A copy to edit (the output is a valid file)."),
    ),
)
@click.argument("name", shell_complete=complete_scenarios)
@_SCENARIO_DIR
@format_option(DATA_FORMATS, "the scenario")
def show(name, scenario_dirs, fmt) -> None:
    """One scenario: where its file is, each call per runtime (what it
    measures, how its output is checked, the release it needs), and the file."""
    from bridge.cli import listing
    from bridge.render import terminal_width

    if fmt == "json":
        out(json.dumps(listing.show_data(name, tuple(scenario_dirs)), indent=1))
        return
    out(listing.show_text(name, tuple(scenario_dirs), terminal_width()), nl=False)
