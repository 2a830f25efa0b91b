"""`bridge plot`: throughput against message size, log-log, one line per
runtime and call; hw on solid, hw off dashed; several reports in one picture
with --compare (one marker shape per report). A --concurrency report adds a
panel per scenario of throughput against the number of concurrent workers
(bridge.plot_levels). matplotlib is an optional extra.
"""

from __future__ import annotations

from pathlib import Path

from bridge import model, plot_levels, verdicts
from bridge.errors import UsageError

INSTALL = (
    "plotting needs matplotlib: pip install 'bridge[plot]'"
    " (in a checkout: .venv/bin/pip install matplotlib)"
)
MARKERS = ("o", "s", "^", "D", "v", "P")


def plot(reports: list[tuple[str, model.Report]], out: Path) -> int:
    """Draw and save; returns how many lines were drawn."""
    if out.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"-o {out}: the picture must be .png or .svg")
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(INSTALL) from None
    scenarios = list(
        dict.fromkeys(
            r.scenario for _, rep in reports for r in rep.results if r.size > 0 and r.status == "ok"
        )
    )
    by_level = plot_levels.scenarios(reports)  # --concurrency: throughput by level
    if not scenarios and not by_level:
        raise UsageError("nothing to plot: no throughput results (message size > 0)")
    panels = len(scenarios) + len(by_level)
    fig, axes = plt.subplots(panels, 1, figsize=(10, 4.8 * panels), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    lines = 0
    for ax, scenario in zip(axes[len(scenarios) :, 0], by_level, strict=True):
        lines += plot_levels.draw(ax, reports, scenario, colours, MARKERS)
    for ax, scenario in zip(axes[: len(scenarios), 0], scenarios, strict=True):
        series_colour: dict[str, str] = {}
        for n, (label, rep) in enumerate(reports):
            groups: dict[tuple[str, str, str], list[model.Result]] = {}
            for r in rep.results:
                if r.scenario == scenario and r.status == "ok" and r.size > 0:
                    groups.setdefault((r.runtime, r.call, r.hw), []).append(r)
            for (runtime, call, hw), rs in groups.items():
                rs.sort(key=lambda r: r.size)
                kind = rep.kind_of(runtime)
                name = f"{kind}: {call}"
                colour = series_colour.setdefault(name, colours[len(series_colour) % len(colours)])
                where = f" [{label}]" if len(reports) > 1 else ""
                ax.plot(
                    [r.size for r in rs],
                    [1e9 / r.summary().median * r.size / 1e6 for r in rs],
                    linestyle="-" if hw == "on" else "--",
                    marker=MARKERS[n % len(MARKERS)],
                    color=colour,
                    label=f"{name} ({runtime}, hw {hw}){where}",
                )
                lines += 1
        ax.set_xscale("log", base=2)
        sizes = sorted(
            {
                r.size
                for _, rep in reports
                for r in rep.results
                if r.scenario == scenario and r.size > 0
            }
        )
        ax.set_xticks(sizes, [_size(n) for n in sizes])
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("throughput (MB/s, median)")
        ax.set_title(f"{scenario}: solid = machine as found, dashed = hardware feature masked")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return lines


def _size(n: int) -> str:
    return verdicts.size_text(n).replace(" bytes", " B")
