"""What every panel of `bridge plot` shares (bridge.render.plot,
bridge.render.plot_levels): a panel as a row of the figure with its height,
the legend in a row of its own, log axes of times and of ratios labelled
without TeX, and markers filled where a verdict decides something. matplotlib
is imported by the functions that draw, never at import."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Heights, in inches: a line of legend or caption text at 8 pt with the
# legend's spacing (8 pt * 1.2 + 0.3 em = 12 pt, and some room).
LINE_IN = 0.17


@dataclass(frozen=True)
class Panel:
    """One row of the figure: how tall it is (inches) and what draws it."""

    height: float
    draw: Callable[[object], None]  # takes the row's axes


def legend_panel(entries: list[tuple[object, str]]) -> Panel:
    """The legend of the panel above it, in a row of its own: outside the
    data, as wide as the picture, as tall as its lines."""
    lines = sum(label.count("\n") + 1 for _, label in entries)
    return Panel(LINE_IN * lines + 0.1, lambda ax: _legend(ax, entries))


def _legend(ax, entries: list[tuple[object, str]]) -> None:
    ax.axis("off")
    if entries:
        handles, labels = zip(*entries, strict=True)
        ax.legend(
            handles,
            labels,
            loc="upper left",
            frameon=False,
            borderaxespad=0.0,
            borderpad=0.0,
            labelspacing=0.3,
            handlelength=2.4,
        )


def text_panel(lines: list[str]) -> Panel:
    """Lines of text (the caption) in a row of their own."""

    def draw(ax) -> None:
        ax.axis("off")
        ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", transform=ax.transAxes)

    return Panel(LINE_IN * len(lines) + 0.1, draw)


def log_values(ax, which: str) -> None:
    """A log axis of values labelled 1,000, 2,000, 5,000 (no 10^3, no TeX)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _: value(v)))
    axis.set_minor_formatter(NullFormatter())


def value(v: float) -> str:
    """1,000; 250k; 1.2M; 0.5: an axis tick."""
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


# Ratio ticks a reader can say: whole powers of 2 when the ratios spread
# wide, and these in between when they do not.
NEAR_ONE = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)


def ratio_axis(ax, which: str, values: Sequence[float], percent: bool = False) -> None:
    """A log2 axis of ratios, labelled 0.5×, 1×, 2× (or 50%, 100%), with 1
    always in view."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    (ax.set_yscale if which == "y" else ax.set_xscale)("log", base=2)
    low, high = min([*values, 1.0]) / 1.15, max([*values, 1.0]) * 1.15
    (ax.set_ylim if which == "y" else ax.set_xlim)(low, high)
    ticks = [t for t in NEAR_ONE if low <= t <= high]
    if len(ticks) < 3 or len(ticks) > 7 or high / low > 3:
        ticks = [2.0**k for k in range(-12, 13) if low <= 2.0**k <= high]
    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    said = (lambda v, _: f"{v:.0%}") if percent else (lambda v, _: f"{v:g}×")
    axis.set_major_formatter(FuncFormatter(said))
    axis.set_minor_formatter(NullFormatter())


def markers(ax, points: Sequence[tuple[float, float, bool]], marker: str, colour) -> None:
    """Filled where the verdict decides something, hollow where it does not."""
    for filled in (True, False):
        xy = [(x, y) for x, y, decisive in points if decisive is filled]
        if xy:
            ax.scatter(
                *zip(*xy, strict=True),
                marker=marker,
                s=24,
                facecolors=colour if filled else "white",
                edgecolors=colour,
                zorder=3,
            )


def yerr(values: Sequence[float], lo: Sequence[float], hi: Sequence[float]) -> list[list[float]]:
    """An error bar's two sides from the CI's ends (none where there is no CI)."""
    return [
        [max(v - low, 0.0) for v, low in zip(values, lo or values, strict=True)],
        [max(high - v, 0.0) for v, high in zip(values, hi or values, strict=True)],
    ]


def cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
