"""The commands that describe the machine: env (and env --node) and otp list."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from bridge import plain
from bridge.cli import plans
from bridge.cli.common import (
    DATA_FORMATS,
    Command,
    FloatRange,
    Group,
    connect_timeout_option,
    cookie_options,
    format_option,
    out,
)
from bridge.errors import ExitStatus, UsageError
from bridge.settings import DEFAULT

if TYPE_CHECKING:
    from bridge.report.envinfo import EnvDescription


@click.command(
    cls=Command,
    groups=(
        ("This machine", ("erl", "openssl", "quietness_seconds")),
        ("Running nodes", ("node", "cookie_value", "cookie_file", "connect_timeout")),
        ("Output", ("fmt", "quiet")),
    ),
    examples=(
        ("bridge env", "This machine, its erl and openssl, and how quiet it is."),
        ("bridge env --erl otp:27 --quietness-seconds 0", "Every OTP 27 found; no quiet check."),
        ("bridge env --node app", "A node started as erl -sname app on this host."),
        (
            "bridge env --node app@db1 --cookie-file releases/COOKIE",
            "A release's node, with the release's cookie file.",
        ),
    ),
)
@click.option(
    "--erl", "erl", multiple=True, metavar="PATH", help="An erl to describe (repeatable)."
)
@click.option("--openssl", "openssl", multiple=True, metavar="PATH", help="An openssl to describe.")
@click.option(
    "--node",
    "node",
    multiple=True,
    metavar="NAME[@HOST]",
    help="Probe a running Erlang node instead, read-only (repeatable). A bare NAME is"
    " NAME@<this host's short name>, as for erl -sname NAME.",
)
@cookie_options
@connect_timeout_option
@format_option(DATA_FORMATS, "the description")
@click.option(
    "--quietness-seconds",
    type=FloatRange(0, 60),
    default=3,
    show_default=True,
    help="How long to time a fixed loop to see how steady the machine is (0: skip).",
)
def env(*, erl, openssl, node, fmt, quietness_seconds, **reach) -> None:  # reach: --node options
    """Describe the machine and each runtime, without benchmarking: CPU features,
    virtualisation, OS, each runtime's libcrypto, the masks bridge would use, and
    how quiet the machine is (the spread of a fixed loop on each CPU), with advice.
    With --node: what a running node uses (releases, libcrypto mapped, masks,
    its host's CPU) and whether its SHA and AES paths use the hardware."""
    if node:
        if erl or openssl:
            raise UsageError("--node probes running nodes: leave out --erl and --openssl")
        from bridge.nodes import distribution

        cookie, timeout = reach["cookie"], reach["connect_timeout"]
        _env_nodes(distribution.node_plan(node, cookie, connect_timeout=timeout), fmt)
        return
    if reach["cookie_given"]:
        raise UsageError("--cookie/--cookie-file goes with --node NAME@HOST")
    from bridge.analysis import quietness
    from bridge.measure.describe import describe
    from bridge.render import layout, terminal_width
    from bridge.render.env import render_env

    plan = plans.for_env(tuple(erl), tuple(openssl))
    described = describe(plan)
    quiet = quietness.check(quietness_seconds) if quietness_seconds > 0 else None
    if fmt == "json":
        data = described.to_json()
        if quiet is not None:
            data["quietness"] = quiet.to_json()
        out(json.dumps(data, indent=1))
        return
    said = quietness_lines(quiet) if quiet is not None else []
    text = render_env(described, said, _libraries(described))
    out(layout.fold(text, terminal_width()), nl=False)


def _libraries(described: EnvDescription) -> dict[str, str]:
    """Per runtime, what its libcrypto says about its build (bridge.hw.whynot finds it)."""
    from bridge.hw import whynot as hw_whynot
    from bridge.view import words

    return {
        exp.runtime: words.library(exp.library, hw_whynot.library(exp.library))
        for exp in described.hardware.experiments
        if exp.library is not None
    }


def _env_nodes(plan, fmt: str) -> None:
    from bridge.measure import nodeenv
    from bridge.render import layout, terminal_width
    from bridge.render.nodes import render_nodes

    found = nodeenv.probe_nodes(plan, DEFAULT)
    if fmt == "json":
        data = {
            "nodes": [{**rt.to_json(), "ab": found.ab.get(rt.id, "")} for rt in found.runtimes],
            "errors": found.failed,
        }
        out(json.dumps(data, indent=1))
    elif found.runtimes:
        out(layout.fold(render_nodes(found.runtimes, found.ab), terminal_width()), nl=False)
    for line in found.failed:
        click.echo(f"bridge: error: {plain.printable(line)}", err=True)
    if found.failed:
        raise SystemExit(ExitStatus.RUN_FAILED)


@click.group(cls=Group, examples=(("bridge otp list", "Every OTP installation found."),))
def otp() -> None:
    """Erlang/OTP installations."""


@otp.command(
    "list",
    cls=Command,
    groups=(("Output", ("fmt", "quiet")),),
    examples=(
        ("bridge otp list", "The installations, with versions and libcrypto."),
        ("BRIDGE_OTP_PATH=/opt/otp-26 bridge otp list --format json", "And one more, as JSON."),
    ),
)
@format_option(DATA_FORMATS, "the installations")
def otp_list(fmt) -> None:
    """List the OTP installations on this machine: erl on PATH, /usr/lib/erlang,
    kerl (KERL_BASE_DIR), asdf (ASDF_DATA_DIR), mise (MISE_DATA_DIR,
    XDG_DATA_HOME), Homebrew (HOMEBREW_PREFIX) and BRIDGE_OTP_PATH. Each erl is
    started once to load crypto, as a run would; broken ones are listed with
    the reason."""
    from bridge.render.otp import render_otp
    from bridge.system import discover

    found = discover.discover()
    if fmt == "json":
        out(json.dumps([f.to_json() for f in found], indent=1))
        return
    from bridge.render import terminal_width

    out(render_otp(found, terminal_width()))


def quietness_lines(q) -> list[str]:
    """How quiet the machine is, as `bridge env` says it."""
    from bridge.analysis import quietness
    from bridge.view import words

    ms = quietness.SAMPLE_S * 1000
    lines = [f"Quietness ({q.seconds:g} s of a fixed {ms:g} ms loop, back to back):"]
    for c in q.cpus:
        where = f"CPU {c.cpu}" if c.cpu is not None else "any CPU"
        lines.append(
            f"  {where}: CV {c.cv:.1%}, robust CV {c.robust_cv:.1%},"
            f" {c.slow:.0%} of {c.samples} samples over 5% slow, worst {c.worst:.2f}x the median"
        )
    u = q.usage
    if u is not None and u.others_cpus is not None:
        load = f"load average {u.load_after[0]:.2f}, " if u.load_after else ""
        lines.append(
            f"  meanwhile: {load}other processes {u.others_cpus:.2f} CPUs, steal {u.steal or 0:.1%}"
        )
    lines.append(f"verdict: {q.verdict}")
    lines += [f"- {words.reason(a)}" for a in q.advice]
    return lines
