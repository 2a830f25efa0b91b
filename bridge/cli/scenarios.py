"""The commands that show the scenarios: list and show."""

from __future__ import annotations

from pathlib import Path

import click

from bridge.cli.common import (
    out,
)


@click.command("list")
@click.option(
    "--scenario-dir",
    "scenario_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def list_scenarios(scenario_dirs) -> None:
    """The scenarios by kind, each with a one-line description."""
    from bridge.cli import listing

    out(listing.list_text(tuple(scenario_dirs)), nl=False)


@click.command()
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

    out(listing.show_text(name, tuple(scenario_dirs)), nl=False)
