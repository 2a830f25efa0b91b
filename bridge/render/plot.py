"""`bridge plot`: per scenario, a row of two panels.

Left, the speed: throughput (MB/s where bytes flow through the call, ops/s
for a sign, verify or key agreement) against message size, log-log, one line
per runtime, call and hw, each point with its 95% CI as an error bar. A
scenario of one size draws bars instead (horizontal, one per runtime, call
and hw, with the CI as an error bar): a line of single points would sit at
the right edge. Right, the question: hw off over hw on (the time with the
feature masked over the time as found) per size, with its 95% CI, a line at
1 = no effect; a single size draws it as bars too.

Colour says the runtime (so erlang@23 and erlang@25 never share one), the
line says hw (solid as found, dashed with the feature masked), the marker
says the call; with --compare, the markers of each further report are
hollow or half-filled, and its label is in the legend. The legend stands
outside the data, right of the row. A --concurrency report adds a panel per
scenario of throughput against the number of concurrent workers
(bridge.render.plot_levels). matplotlib is an optional extra.

`series` and `ratio_series` decide all of that from the reports alone (pure,
tested without matplotlib); `figure` draws it; `plot` saves it, as SVG when
the name ends in .svg.

A report is someone else's data: every text the picture draws from it is
made safe for a picture first (bridge.render.escape.svg_text: controls, bidi
overrides, lone surrogates and what XML cannot hold spelt as escapes, a `$`
escaped so that it is a dollar and not mathtext, which raises on what it
cannot parse, long names cut), and what matplotlib warns while drawing (a
glyph the font lacks, a layout it could not make) is gathered and said as
bridge's own warnings, escaped, instead of reaching stderr raw.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bridge.errors import BridgeWarning, UsageError
from bridge.render import answers, plot_levels
from bridge.render.escape import svg_text, term_text
from bridge.report import schema
from bridge.report.hw import Hw
from bridge.system import output
from bridge.view import words

INSTALL = (
    "plotting needs matplotlib: pip install 'crypto-bridge[plot]'"
    " (in a checkout: .venv/bin/pip install matplotlib)"
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
FILLS = ("full", "none", "left", "bottom", "right", "top")
LINES = {Hw.ON: "-", Hw.OFF: "--"}
MBS, OPS = "MB/s", "ops/s"
WIDTH_IN, ROW_IN, DPI = 17.0, 6.0, 150  # a row reads at 100% on a laptop screen
DODGE = 0.8  # in octaves: series side by side at a size, their error bars apart
# Text stays text in an SVG (searchable, and the legend can be checked), and
# TeX is never run on it.
RC = {"svg.fonttype": "none", "text.usetex": False}
# The longest name a picture draws whole (a runtime id, a call, a label).
NAME = 48


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
    mb_per_s: tuple[float, ...]  # the median, in `metric` (MB/s or ops/s)
    lo: tuple[float, ...] = ()  # the 95% CI, in `metric`; equal to the median
    hi: tuple[float, ...] = ()  # when a cell has no CI (one openssl run)
    metric: str = MBS

    @property
    def values(self) -> tuple[float, ...]:
        return self.mb_per_s


@dataclass(frozen=True)
class RatioSeries:
    """hw off over hw on of one runtime's call, per size, with its CI."""

    scenario: str
    label: str
    runtime: str
    call: str
    colour: int
    marker: str
    fill: str
    sizes: tuple[int, ...]
    ratio: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]


def _figures(r: schema.Result, metric: str) -> tuple[float, float, float]:
    """The median and its CI as throughput: the CI's slow end is the low one."""
    s = r.summary()
    scale = r.size / 1e6 if metric == MBS else 1.0

    def rate(ns: float) -> float:
        return 1e9 / ns * scale if ns > 0 else 0.0

    if s.n < 2 or r.imported:
        return rate(s.median), rate(s.median), rate(s.median)
    return rate(s.median), rate(s.ci95[1]), rate(s.ci95[0])


def series(reports: list[tuple[str, schema.Report]]) -> list[Series]:
    out = []
    colours: dict[str, int] = {}
    for scenario in scenarios(reports):
        marker_of: dict[tuple[str, str], str] = {}
        for n, (label, rep) in enumerate(reports):
            metric = MBS if answers.bytes_flow(rep, scenario) else OPS
            groups: dict[tuple[str, str, Hw], list[schema.Result]] = {}
            for r in rep.results:
                if r.scenario == scenario and r.ok and r.size > 0 and r.median() > 0:
                    groups.setdefault((r.runtime, r.call, r.hw), []).append(r)
            for (runtime, call, hw), rs in groups.items():
                rs.sort(key=lambda r: r.size)
                kind = rep.kind_of(runtime)
                marker = marker_of.setdefault((kind, call), MARKERS[len(marker_of) % len(MARKERS)])
                where = f" [{svg_text(label, NAME)}]" if len(reports) > 1 else ""
                figures = [_figures(r, metric) for r in rs]
                out.append(
                    Series(
                        scenario=scenario,
                        label=f"{_named(runtime, call)} (hw {hw}){where}",
                        runtime=runtime,
                        call=call,
                        hw=hw,
                        colour=colours.setdefault(runtime, len(colours)),
                        marker=marker,
                        linestyle=LINES.get(hw, ":"),
                        fill=FILLS[n % len(FILLS)],
                        sizes=tuple(r.size for r in rs),
                        mb_per_s=tuple(f[0] for f in figures),
                        lo=tuple(f[1] for f in figures),
                        hi=tuple(f[2] for f in figures),
                        metric=metric,
                    )
                )
    return out


def ratio_series(
    reports: list[tuple[str, schema.Report]], drawn: list[Series]
) -> list[RatioSeries]:
    """hw off / hw on per runtime, call and size, where both were measured:
    the verdict's figure and CI (bridge.render.answers.Cell.off_on)."""
    style = {(s.scenario, s.runtime, s.call): s for s in drawn}
    out = []
    for n, (label, rep) in enumerate(reports):
        by_call: dict[tuple[str, str, str], list[tuple[int, float, tuple | None]]] = {}
        for c in answers.cells(rep, [r for r in rep.results if r.size > 0]):
            figure = c.off_on() if c.on is not None and c.off is not None else None
            if figure is None or figure[0] <= 0:
                continue
            key = (c.first.scenario, c.first.runtime, c.first.call)
            by_call.setdefault(key, []).append((c.first.size, figure[0], figure[1]))
        for (scenario, runtime, call), points in by_call.items():
            points.sort()
            look = style.get((scenario, runtime, call))
            where = f" [{svg_text(label, NAME)}]" if len(reports) > 1 else ""
            out.append(
                RatioSeries(
                    scenario=scenario,
                    label=f"{_named(runtime, call)}{where}",
                    runtime=runtime,
                    call=call,
                    colour=look.colour if look else 0,
                    marker=look.marker if look else MARKERS[0],
                    fill=FILLS[n % len(FILLS)],
                    sizes=tuple(p[0] for p in points),
                    ratio=tuple(p[1] for p in points),
                    lo=tuple(p[2][0] if p[2] else p[1] for p in points),
                    hi=tuple(p[2][1] if p[2] else p[1] for p in points),
                )
            )
    return out


def scenarios(reports: list[tuple[str, schema.Report]]) -> list[str]:
    return list(
        dict.fromkeys(r.scenario for _, rep in reports for r in rep.results if r.size > 0 and r.ok)
    )


def single_size(drawn: list[Series]) -> bool:
    """One size in the whole scenario: bars, not lines of single points."""
    return len({n for s in drawn for n in s.sizes}) == 1


def title(scenario: str, drawn: list[Series], reports: int) -> str:
    """What the picture shows, and only what it shows."""
    key = []
    bars = single_size(drawn)
    if any(not s.hw.masked for s in drawn):
        key.append("solid = machine as found" if not bars else "plain = machine as found")
    if any(s.hw.masked for s in drawn):
        key.append("dashed = hardware feature masked" if not bars else "hatched = feature masked")
    if not bars and len({s.marker for s in drawn}) > 1:
        key.append("marker = call")
    if reports > 1:
        key.append("filled markers = first report")
    metric = drawn[0].metric if drawn else MBS
    by = f"at {_size(drawn[0].sizes[0])}" if bars and drawn else "by size"
    head = f"{svg_text(scenario, NAME)}: {metric} (median, 95% CI) {by}"
    return head + ("\n" + "; ".join(key) if key else "")


def _matplotlib():
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(INSTALL) from None
    return matplotlib, plt


def figure(reports: list[tuple[str, schema.Report]]):
    """The matplotlib figure (the caller closes it)."""
    matplotlib, _ = _matplotlib()
    with matplotlib.rc_context(RC):
        return _figure(reports)


def _figure(reports: list[tuple[str, schema.Report]]):
    _, plt = _matplotlib()
    drawn = series(reports)
    ratio = ratio_series(reports, drawn)
    names = scenarios(reports)
    by_level = plot_levels.scenarios(reports)  # --concurrency: throughput by level
    if not names and not by_level:
        raise UsageError("nothing to plot: no throughput results (message size > 0)")
    rows = len(names) + len(by_level)
    # The off/on panel beside each scenario, when the run masked anything.
    cols = 2 if ratio else 1
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(WIDTH_IN if cols == 2 else WIDTH_IN * 0.65, ROW_IN * rows),
        squeeze=False,
        gridspec_kw={"width_ratios": (3, 2)} if cols == 2 else {},
        dpi=DPI,
    )
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for row, scenario in zip(axes[len(names) :], by_level, strict=True):
        plot_levels.draw(row[0], reports, scenario, cycle, MARKERS)
        if cols == 2:
            row[1].remove()  # the level panel's legend stands in its place, right of it
    for row, scenario in zip(axes[: len(names)], names, strict=True):
        ax, right = row[0], (row[1] if cols == 2 else None)
        mine = [s for s in drawn if s.scenario == scenario]
        ratios = [s for s in ratio if s.scenario == scenario]
        bars = single_size(mine)
        (_bars if bars else _lines)(ax, mine, cycle)
        ax.set_title(title(scenario, mine, len(reports)), fontsize=10)
        if right is not None and ratios:
            _ratio_panel(right, ratios, cycle, bars=bars)
            right.set_title(
                f"{svg_text(scenario, NAME)}: hw off / hw on, the feature's effect (95% CI)",
                fontsize=10,
            )
        elif right is not None:
            right.axis("off")
            shown = svg_text(scenario, NAME)
            right.text(0.02, 0.98, f"{shown}: no hw off run, no off/on ratio", va="top")
        if not bars:
            # Outside the data: right of the row, beyond the ratio panel.
            (right if ratios and right is not None else ax).legend(
                *ax.get_legend_handles_labels(),
                fontsize=9,
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                borderaxespad=0.0,
            )
    fig.tight_layout()
    return fig


def dodged(sizes: tuple[int, ...], n: int, of: int) -> list[float]:
    """Series n of `of` at each size, moved a little along the log2 axis so
    that the error bars of series at one size stand apart."""
    if of <= 1:
        return [float(x) for x in sizes]
    shift = DODGE * (n / (of - 1) - 0.5)
    return [x * 2**shift for x in sizes]


def _lines(ax, mine: list[Series], cycle) -> None:
    for n, s in enumerate(mine):
        ax.errorbar(
            dodged(s.sizes, n, len(mine)),
            s.values,
            yerr=[
                [max(v - lo, 0.0) for v, lo in zip(s.values, s.lo or s.values, strict=True)],
                [max(hi - v, 0.0) for v, hi in zip(s.values, s.hi or s.values, strict=True)],
            ],
            linestyle=s.linestyle,
            marker=s.marker,
            fillstyle=s.fill,
            color=cycle[s.colour % len(cycle)],
            capsize=3,
            label=s.label,
        )
    ax.set_xscale("log", base=2)
    sizes = sorted({n for s in mine for n in s.sizes})
    ax.set_xticks(sizes, [_size(n) for n in sizes])
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    metric = mine[0].metric if mine else MBS
    ax.set_ylabel(f"throughput ({metric}, median, 95% CI)")
    ax.grid(True, which="both", alpha=0.3)


def _bars(ax, mine: list[Series], cycle) -> None:
    """One horizontal bar per series, its label beside it: no legend needed.
    A call's bars as found and masked stand together, as in the tables."""
    calls = {(s.colour, s.call): n for n, s in enumerate(mine)}
    mine = sorted(mine, key=lambda s: (calls[(s.colour, s.call)], s.hw.masked))
    ys = list(range(len(mine)))[::-1]
    values = [s.values[0] for s in mine]
    lo = [max(s.values[0] - (s.lo or s.values)[0], 0.0) for s in mine]
    hi = [max((s.hi or s.values)[0] - s.values[0], 0.0) for s in mine]
    ax.barh(
        ys,
        values,
        xerr=[lo, hi],
        color=[cycle[s.colour % len(cycle)] for s in mine],
        hatch=None,
        capsize=4,
        edgecolor="black",
        linewidth=0.5,
    )
    for patch, s in zip(ax.patches, mine, strict=True):
        if s.hw.masked:
            patch.set_hatch("//")
    ax.set_yticks(ys, [_bar_label(s) for s in mine], fontsize=9)
    spread = max(values) / max(min(values), 1e-12) if values else 1
    if spread > 30:
        ax.set_xscale("log")
    metric = mine[0].metric if mine else MBS
    ax.set_xlabel(f"throughput ({metric}, median, 95% CI)")
    ax.grid(True, axis="x", which="both", alpha=0.3)


def _ratio_panel(ax, ratios: list[RatioSeries], cycle, bars: bool) -> None:
    if bars:
        ys = list(range(len(ratios)))[::-1]
        ax.barh(
            ys,
            [s.ratio[0] for s in ratios],
            xerr=[
                [max(s.ratio[0] - s.lo[0], 0.0) for s in ratios],
                [max(s.hi[0] - s.ratio[0], 0.0) for s in ratios],
            ],
            color=[cycle[s.colour % len(cycle)] for s in ratios],
            capsize=4,
            edgecolor="black",
            linewidth=0.5,
        )
        ax.set_yticks(ys, [_short(s.label, 52) for s in ratios], fontsize=9)
        ax.axvline(1.0, color="black", linewidth=1)
        ax.set_xlabel("time masked / time as found (1 = no effect)")
        ax.grid(True, axis="x", alpha=0.3)
        return
    for n, s in enumerate(ratios):
        ax.errorbar(
            dodged(s.sizes, n, len(ratios)),
            s.ratio,
            yerr=[
                [max(r - lo, 0.0) for r, lo in zip(s.ratio, s.lo, strict=True)],
                [max(hi - r, 0.0) for r, hi in zip(s.ratio, s.hi, strict=True)],
            ],
            marker=s.marker,
            fillstyle=s.fill,
            color=cycle[s.colour % len(cycle)],
            capsize=3,
            label=f"{s.label} (off/on)",
        )
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(_times())
    sizes = sorted({n for s in ratios for n in s.sizes})
    ax.set_xticks(sizes, [_size(n) for n in sizes])
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("time masked / time as found (1 = no effect)")
    ax.grid(True, which="both", alpha=0.3)


def plot(reports: list[tuple[str, schema.Report]], out: Path) -> int:
    """Draw and save; returns how many series were drawn. What matplotlib
    warns meanwhile is said as bridge's warnings (`_said`)."""
    if out.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"-o {out}: the picture must be .png or .svg")
    matplotlib, _ = _matplotlib()
    with _gathered() as heard, matplotlib.rc_context(RC):
        n = _save(reports, out)
    for message in _said(heard):
        warnings.warn(BridgeWarning(message), stacklevel=2)
    return n


def _save(reports: list[tuple[str, schema.Report]], out: Path) -> int:
    fig = _figure(reports)
    _, plt = _matplotlib()
    drawn = series(reports)
    level_lines = sum(
        plot_levels.count(reports, scenario) for scenario in plot_levels.scenarios(reports)
    )
    # Written as reports are (bridge.report.output.write_output): a temporary file
    # in the target's directory, then renamed, so a full disk leaves no
    # empty picture. Its name ends in .tmp: the format is said, not guessed.
    picture = out.suffix.lower()[1:]
    try:
        output.write_output(
            out, lambda f: fig.savefig(f, format=picture, bbox_inches="tight", dpi=DPI)
        )
    finally:
        plt.close(fig)
    return len(drawn) + level_lines


def _times():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: f"{v:g}×")


def _bar_label(s: Series) -> str:
    """The runtime and call, cut to fit, and always the hw state."""
    return f"{_short(_named(s.runtime, s.call), 52)} (hw {s.hw})"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _short(label: str, width: int = 60) -> str:
    """A label already made safe (`_named`), cut to `width`."""
    return _cut(label, width)


def _named(runtime: str, call: str) -> str:
    """The runtime and its call as a picture draws them (svg_text). A
    legend leaves out a label that starts with "_": such a runtime id is
    drawn after a space."""
    text = f"{svg_text(runtime, NAME)}: {svg_text(call, NAME + 12)}"
    return " " + text if text.startswith("_") else text


# What matplotlib says when the font has no glyph for a character.
_GLYPH = re.compile(r"Glyph (\d+) .*missing from (current )?font")


@contextlib.contextmanager
def _gathered() -> Iterator[list[str | BridgeWarning]]:
    """What matplotlib warns (warnings.warn) or logs (its loggers) while the
    block runs, gathered instead of printed: the messages quote a report's
    text raw (an ESC, a BEL), and Python's warning line is no message for a
    user. A BridgeWarning of bridge's own is kept as it is."""
    heard: list[str | BridgeWarning] = []

    class Gather(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            heard.append(record.getMessage())

    log = logging.getLogger("matplotlib")
    handler, propagate = Gather(logging.WARNING), log.propagate
    log.addHandler(handler)
    log.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield heard
    finally:
        log.removeHandler(handler)
        log.propagate = propagate
    heard += [w.message if isinstance(w.message, BridgeWarning) else str(w.message) for w in caught]


def _said(heard: list[str | BridgeWarning]) -> list[str]:
    """The gathered messages as bridge's warnings: the glyphs the font
    lacks in one line, any other message once, shortened and escaped."""
    own = [str(m) for m in heard if isinstance(m, BridgeWarning)]
    theirs = [m for m in heard if not isinstance(m, BridgeWarning)]
    glyphs = len({g[1] for m in theirs if (g := _GLYPH.search(m))})
    out = list(dict.fromkeys(own))
    if glyphs:
        out.append(
            f"the picture's font has no glyph for {glyphs} character"
            f"{'s' * (glyphs != 1)} of the reports' names: drawn as empty boxes"
        )
    for message in dict.fromkeys(m for m in theirs if not _GLYPH.search(m)):
        out.append(f"matplotlib: {_cut(term_text(message), 200)}")
    return out


def _size(n: int) -> str:
    return words.short(n)
