"""`bridge plot`: throughput against message size, log-log, one line per
runtime, call and hw state. Colour says the runtime (so erlang@23 and
erlang@25 never share one), the line says hw (solid as found, dashed with
the feature masked), the marker says the call; with --compare, the markers
of each further report are hollow or half-filled, and its label is in the
legend. A --concurrency report adds a panel per scenario of throughput against the
number of concurrent workers (bridge.render.plot_levels). matplotlib is an optional
extra.

`series` decides all of that from the reports alone (pure, tested without
matplotlib); `plot` only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bridge.errors import UsageError
from bridge.hw import verdicts
from bridge.render import plot_levels
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.system import output

INSTALL = (
    "plotting needs matplotlib: pip install 'crypto-bridge[plot]'"
    " (in a checkout: .venv/bin/pip install matplotlib)"
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
FILLS = ("full", "none", "left", "bottom", "right", "top")
LINES = {Hw.ON: "-", Hw.OFF: "--"}


@dataclass(frozen=True)
class Series:
    scenario: str
    label: str  # the legend: runtime, call, hw, and the report when several
    runtime: str
    call: str
    hw: Hw
    colour: int  # index into the colour cycle: one per runtime
    marker: str  # one per call
    linestyle: str  # hw on solid, off dashed
    fill: str  # one per report
    sizes: tuple[int, ...]
    mb_per_s: tuple[float, ...]


def series(reports: list[tuple[str, schema.Report]]) -> list[Series]:
    out = []
    colours: dict[str, int] = {}
    for scenario in scenarios(reports):
        marker_of: dict[tuple[str, str], str] = {}
        for n, (label, rep) in enumerate(reports):
            groups: dict[tuple[str, str, Hw], list[schema.Result]] = {}
            for r in rep.results:
                if r.scenario == scenario and r.ok and r.size > 0:
                    groups.setdefault((r.runtime, r.call, r.hw), []).append(r)
            for (runtime, call, hw), rs in groups.items():
                rs.sort(key=lambda r: r.size)
                kind = rep.kind_of(runtime)
                marker = marker_of.setdefault((kind, call), MARKERS[len(marker_of) % len(MARKERS)])
                where = f" [{label}]" if len(reports) > 1 else ""
                out.append(
                    Series(
                        scenario=scenario,
                        label=f"{runtime}: {call} (hw {hw}){where}",
                        runtime=runtime,
                        call=call,
                        hw=hw,
                        colour=colours.setdefault(runtime, len(colours)),
                        marker=marker,
                        linestyle=LINES.get(hw, ":"),
                        fill=FILLS[n % len(FILLS)],
                        sizes=tuple(r.size for r in rs),
                        mb_per_s=tuple(1e9 / r.summary().median * r.size / 1e6 for r in rs),
                    )
                )
    return out


def scenarios(reports: list[tuple[str, schema.Report]]) -> list[str]:
    return list(
        dict.fromkeys(r.scenario for _, rep in reports for r in rep.results if r.size > 0 and r.ok)
    )


def title(scenario: str, drawn: list[Series], reports: int) -> str:
    """What the picture shows, and only what it shows."""
    key = []
    if any(not s.hw.masked for s in drawn):
        key.append("solid = machine as found")
    if any(s.hw.masked for s in drawn):
        key.append("dashed = hardware feature masked")
    if len({s.marker for s in drawn}) > 1:
        key.append("marker = call")
    if reports > 1:
        key.append("filled markers = first report")
    head = f"{scenario}: throughput (MB/s, median) by message size"
    return head + ("\n" + "; ".join(key) if key else "")


def plot(reports: list[tuple[str, schema.Report]], out: Path) -> int:
    """Draw and save; returns how many lines were drawn."""
    if out.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"-o {out}: the picture must be .png or .svg")
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(INSTALL) from None
    drawn = series(reports)
    names = scenarios(reports)
    by_level = plot_levels.scenarios(reports)  # --concurrency: throughput by level
    if not names and not by_level:
        raise UsageError("nothing to plot: no throughput results (message size > 0)")
    # Text stays text in an SVG: searchable, and the legend can be checked.
    plt.rcParams["svg.fonttype"] = "none"
    panels = len(names) + len(by_level)
    fig, axes = plt.subplots(panels, 1, figsize=(10, 4.8 * panels), squeeze=False)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    level_lines = 0
    for ax, scenario in zip(axes[len(names) :, 0], by_level, strict=True):
        level_lines += plot_levels.draw(ax, reports, scenario, cycle, MARKERS)
    for ax, scenario in zip(axes[: len(names), 0], names, strict=True):
        mine = [s for s in drawn if s.scenario == scenario]
        for s in mine:
            ax.plot(
                s.sizes,
                s.mb_per_s,
                linestyle=s.linestyle,
                marker=s.marker,
                fillstyle=s.fill,
                color=cycle[s.colour % len(cycle)],
                label=s.label,
            )
        ax.set_xscale("log", base=2)
        sizes = sorted({n for s in mine for n in s.sizes})
        ax.set_xticks(sizes, [_size(n) for n in sizes])
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("throughput (MB/s, median)")
        ax.set_title(title(scenario, mine, len(reports)), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    # Written as reports are (bridge.report.output.write_output): a temporary file
    # in the target's directory, then renamed, so a full disk leaves no
    # empty picture. Its name ends in .tmp: the format is said, not guessed.
    picture = out.suffix.lower()[1:]
    try:
        output.write_output(out, lambda f: fig.savefig(f, format=picture))
    finally:
        plt.close(fig)
    return len(drawn) + level_lines


def _size(n: int) -> str:
    return verdicts.size_text(n).replace(" bytes", " B")
