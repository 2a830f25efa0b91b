"""One HTML page to attach or link (`--export-html`, `--format html`): per
scenario the answers, the tables with every column, the pictures, the notes;
then where it ran, the caveats and the problems folded in <details>, and the
command that measures it again.

The page is self-contained and fetches nothing: its style is inline and
allowed by its hash alone in a Content-Security-Policy that forbids
everything else (scripts, images, fonts, connections), and each picture is
inline SVG drawn here from the view's series (bridge.view.chart): points
with their 95% CI as error bars, sizes spaced evenly, a ratio drawn around a
line at 1, one scenario of one size as one row per series. 680 units wide,
it reads at a 700-px column; its colours follow the reader's light or dark
scheme.

Layout only: the words are the view's (bridge.view.words), and every text
is escaped where it is written (bridge.render.escape.h, html_text), so that
nothing of a report becomes markup or script.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bridge.render.escape import Html, h, html_join
from bridge.render.terminal import prefixed, said
from bridge.view import home, words
from bridge.view.model import Answer, Note, NoteKind, Point, Section, Series, Table, Tone, View

CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#59636e;--rule:#d1d9e0;
--good:#1a7f37;--bad:#cf222e;--warn:#9a6700;--head:#f6f8fa;
--c0:#0072b2;--c1:#d55e00;--c2:#009e73;--c3:#cc79a7;--c4:#8a6d00;--c5:#56b4e9;--c6:#6b6b6b;--c7:#7b3fa0}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--rule:#3d444d;--good:#3fb950;--bad:#f85149;--warn:#d29922;--head:#151b23;
--c0:#56b4e9;--c1:#ff8c42;--c2:#2fd3a0;--c3:#e69ac8;--c4:#e6c229;--c5:#9ad0f5;--c6:#b0b0b0;--c7:#c39bd3}}
body{background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"Noto Sans",sans-serif;margin:0;padding:1rem}
main{max-width:700px;margin:0 auto}
h1{font-size:1.35rem;margin:.2rem 0 1rem}h2{font-size:1.15rem;margin:1.6rem 0 .4rem;
border-bottom:1px solid var(--rule)}h3{font-size:1rem;margin:1rem 0 .3rem}
ul{padding-left:1.2rem;margin:.3rem 0}li{margin:.15rem 0;overflow-wrap:anywhere}
.verdict{font-weight:600}.subject{font-weight:600}
.scroll{overflow-x:auto;margin:.5rem 0}
table{border-collapse:collapse;font-size:.85rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--rule);padding:.2rem .45rem;text-align:left;vertical-align:top;
white-space:nowrap}
th{background:var(--head)}td.num,th.num{text-align:right;white-space:nowrap}
.legend,.note{font-size:.85rem;color:var(--muted)}
.good{color:var(--good)}.bad{color:var(--bad)}.warn{color:var(--warn)}.muted{color:var(--muted)}
figure{margin:1rem 0}figcaption{font-size:.9rem;font-weight:600;margin-bottom:.2rem}
svg.chart{width:100%;height:auto;display:block}
svg text{fill:var(--fg);font-size:11px;font-family:inherit}
svg .axis{stroke:var(--muted);stroke-width:1}svg .grid{stroke:var(--rule);stroke-width:.6}
svg .one{stroke:var(--fg);stroke-width:1;stroke-dasharray:4 3}
svg .err{stroke-width:1.3}svg .line{fill:none;stroke-width:1.6}
svg .dashed{stroke-dasharray:5 3}svg .hollow{fill:var(--bg)}
ul.keys{list-style:none;padding:0;font-size:.85rem;columns:2 300px}
ul.keys svg{vertical-align:middle;margin-right:.3rem}
details{margin:.6rem 0}summary{cursor:pointer;font-weight:600}
pre{background:var(--head);border:1px solid var(--rule);padding:.6rem;overflow-x:auto;
white-space:pre-wrap;overflow-wrap:anywhere}
""" + "".join(
    f"svg .c{i}{{stroke:var(--c{i});fill:var(--c{i})}}svg .c{i}.hollow{{fill:var(--bg)}}"
    f"svg .c{i}.line{{fill:none}}"
    for i in range(8)
)

# Only the style above, by its hash: no script, image, font or request of any kind.
CSP = (
    "default-src 'none'; "
    f"style-src 'sha256-{base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()}'; "
    "base-uri 'none'; form-action 'none'"
)
_TONE = {Tone.GOOD: "good", Tone.BAD: "bad", Tone.WARN: "warn", Tone.MUTED: "muted"}
_NOTE_TONE = {NoteKind.WARNING: "warn", NoteKind.PROBLEM: "bad", NoteKind.LEGEND: "legend"}
COLOURS = 8


def render(view: View) -> str:
    names = ", ".join(s.key for s in view.sections) or "bridge"
    body = [h("<h1>{}: {}</h1>", names, view.title)]
    for s in view.sections:
        body += _section(s)
    if view.provenance:
        body.append(h("<h2>{}</h2>", words.PAGE_WHERE))
        body.append(_list([h("{}", home.tilde(p)) for p in view.provenance]))
    body += _folded(words.PAGE_CAVEATS, view.caveats)
    body += _folded(words.PAGE_PROBLEMS, view.problems, opened=True)
    body += _reproduce(view)
    head = h(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="{}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        "<title>{}: {}</title>\n<style>",
        CSP,
        names,
        view.title,
    )
    return (
        f"{head}{CSS}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + ("\n</main>\n</body>\n</html>\n")
    )


def _list(items: Sequence[Html], cls: str = "") -> Html:
    if not items:
        return Html("")
    opening = h('<ul class="{}">', cls) if cls else Html("<ul>")
    return Html(opening + "".join(h("<li>{}</li>", i) for i in items) + "</ul>")


def _section(s: Section) -> list[Html]:
    out = [Html("<section>"), h("<h2>{}</h2>", s.title)]
    out += [_answer(a) for a in s.answers]
    out += [_table(t) for t in s.tables]
    out += _charts(s.series)
    if s.notes:
        out.append(_list([_note(n) for n in s.notes], "notes"))
    out.append(Html("</section>"))
    return out


def _answer(a: Answer) -> Html:
    lines = []
    for line in a.lines:
        tone = _TONE.get(line.verdict.tone, "")
        # The sentence as every writer says it, the verdict word set in its tone.
        text = said(line)
        head = f"{line.subject}: {line.verdict.text}"
        rest = text[len(head) :] if text.startswith(head) else ""
        verdict = h("<span{}>{}</span>", _class("verdict", tone), line.verdict.text)
        lines.append(h('<span class="subject">{}</span>: {}{}', line.subject, verdict, rest))
    return Html(h("<h3>{}</h3>", a.heading) + _list(lines, "answer"))


def _table(t: Table) -> Html:
    right = [c.right for c in t.columns]
    head = html_join(
        h('<th{} scope="col">{}</th>', _class("num" if c.right else ""), c.header)
        for c in t.columns
    )
    rows = []
    for row in t.rows:
        cells = []
        for cell, is_num in zip(row, right, strict=False):
            cls = _class("num" if is_num else "", _TONE.get(cell.tone, ""))
            cells.append(h("<td{}>{}{}</td>", cls, cell.text, cell.mark))
        rows.append(Html("<tr>" + "".join(cells) + "</tr>"))
    out = [h("<h3>{}</h3>", t.title)] if t.title else []
    out.append(
        Html(
            '<div class="scroll"><table><thead><tr>'
            + head
            + "</tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table></div>"
        )
    )
    legend = [*t.legend, *dict.fromkeys(c.note for c in t.columns if c.note)]
    out.append(_list([h("{}", line) for line in legend], "legend"))
    return Html("".join(out))


def _class(*names: str) -> Html:
    """A class attribute of the writer's own names, or nothing."""
    joined = " ".join(n for n in names if n)
    return h(' class="{}"', joined) if joined else Html("")


def _note(n: Note) -> Html:
    text = prefixed(n) + (f" ({n.count}×)" if n.count > 1 else "")
    return h('<span class="note {}">{}</span>', _NOTE_TONE.get(n.kind, ""), home.tilde(text))


def _folded(summary: str, notes: tuple[Note, ...], opened: bool = False) -> list[Html]:
    if not notes:
        return []
    tag = "<details open>" if opened else "<details>"
    return [
        Html(tag + h("<summary>{} ({})</summary>", summary, len(notes))),
        _list([_note(n) for n in notes]),
        Html("</details>"),
    ]


def _reproduce(view: View) -> list[Html]:
    if not view.reproduce and not view.reproduce_notes:
        return []
    out = [h("<h2>{}</h2>", words.PAGE_REPRODUCE)]
    if view.reproduce:
        command = " ".join(home.shell_word(w) for w in view.reproduce)
        out.append(h('<pre><code class="reproduce">{}</code></pre>', command))
    out.append(h('<p class="legend">{}</p>', words.PAGE_REPLAY))
    out.append(_list([h("{}", n) for n in view.reproduce_notes], "legend"))
    return out


# -- pictures ------------------------------------------------------------------------

WIDTH = 680  # SVG units: a 700-px column draws them about 1:1, so 11-unit text is 11 px
LEFT, RIGHT, TOP = 64, 14, 10
PLOT_H = 210
ROW_H = 26
LABEL_W = 230  # a one-size picture's row names
LABEL_CHARS = 36


def _finite(s: Series) -> Series:
    kept = tuple(p for p in s.points if all(map(math.isfinite, (p.x, p.y, p.lo, p.hi))))
    return replace(s, points=kept)


def _charts(series: tuple[Series, ...]) -> list[Html]:
    """One picture per metric, in the order the view gives them."""
    by: dict[str, list[Series]] = {}
    for s in series:
        s = _finite(s)
        if s.points:
            by.setdefault(s.metric, []).append(s)
    return [_figure(metric, mine) for metric, mine in by.items()]


def _figure(metric: str, mine: list[Series]) -> Html:
    colour: dict[tuple[str, str], int] = {}
    for s in mine:
        colour.setdefault((s.runtime, s.call), len(colour) % COLOURS)
    styles = [_Style(colour[(s.runtime, s.call)], s.hw == "off") for s in mine]
    xs = sorted({p.x for s in mine for p in s.points})
    if len(xs) == 1:  # each row is named on the picture
        svg, keys = _rows(mine, styles), []
    else:
        svg = _lines(mine, styles, xs)
        keys = [h("{}{}", _key(st), s.label) for s, st in zip(mine, styles, strict=True)]
    return Html(
        h("<figure><figcaption>{}</figcaption>", metric) + svg + _list(keys, "keys") + "</figure>"
    )


@dataclass(frozen=True)
class _Style:
    colour: int
    off: bool  # hw off: dashed, hollow

    def marker(self) -> str:
        return f"c{self.colour}" + (" hollow" if self.off else "")

    def line(self) -> str:
        return f"c{self.colour} line" + (" dashed" if self.off else "")


def _key(st: _Style) -> Html:
    return h(
        '<svg width="28" height="10" aria-hidden="true"><line class="{}" x1="1" y1="5" x2="27"'
        ' y2="5"/><circle class="{}" cx="14" cy="5" r="3.5" stroke-width="1.3"/></svg>',
        st.line(),
        st.marker(),
    )


@dataclass(frozen=True)
class _Scale:
    """Values to SVG units along one axis, linear or logarithmic."""

    lo: float
    hi: float
    start: float  # SVG units at lo
    end: float  # at hi
    log: bool

    def __call__(self, v: float) -> float:
        f = math.log10 if self.log else float
        a, b = f(self.lo), f(self.hi)
        v = min(max(v, self.lo), self.hi)
        share = (f(v) - a) / (b - a) if b > a else 0.5
        return self.start + share * (self.end - self.start)

    def ticks(self) -> list[float]:
        if self.log:
            return _log_ticks(self.lo, self.hi)
        return _linear_ticks(self.lo, self.hi)


def _scale(values: list[float], start: float, end: float, ratio: bool) -> _Scale:
    """A ratio's axis holds 1 and is linear; a time's is logarithmic where
    its values span more than 10×, else linear from 0."""
    lo, hi = min(values), max(values)
    if ratio:
        lo, hi = min(lo, 1.0), max(hi, 1.0)
        if lo > 0 and hi / lo > 5:  # a wide CI would flatten every other point
            return _Scale(lo / 1.1, hi * 1.1, start, end, True)
        pad = (hi - lo) * 0.08 or 0.1
        return _Scale(max(lo - pad, 0.0), hi + pad, start, end, False)
    if lo > 0 and hi / lo > 10:
        return _Scale(
            10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi)), start, end, True
        )
    return _Scale(0.0, hi * 1.08 or 1.0, start, end, False)


def _linear_ticks(lo: float, hi: float) -> list[float]:
    span = hi - lo
    step = 10 ** math.floor(math.log10(span / 4)) if span > 0 else 1.0
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Each power of 10 in range; with 1, 2 and 5 times each where fewer than four are."""
    decades = [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
    inside = [d for d in decades if lo <= d <= hi]
    if len(inside) > 3:
        return inside
    return [d * m for d in decades for m in (1, 2, 5) if lo <= d * m <= hi]


def _num(v: float) -> str:
    """A tick's or a tooltip's figure: three significant digits, thousands apart."""
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}".rstrip("0").rstrip(".") if v else "0"


def _svg(height: float, label: str, inner: list[str]) -> Html:
    return Html(
        h(
            '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}"'
            ' xmlns="http://www.w3.org/2000/svg">',
            str(WIDTH),
            f"{height:.0f}",
            label,
        )
        + "".join(inner)
        + "</svg>"
    )


def _lines(mine: list[Series], styles: list[_Style], xs: list[float]) -> Html:
    """Sizes spaced evenly along x, each series a line through its points."""
    ratio = mine[0].ratio
    y = _scale([v for s in mine for p in s.points for v in (p.lo, p.hi)], TOP + PLOT_H, TOP, ratio)
    step = (WIDTH - LEFT - RIGHT) / len(xs)
    at = {x: LEFT + step * (i + 0.5) for i, x in enumerate(xs)}
    text = {p.x: p.text for s in mine for p in s.points}
    inner = _y_axis(y)
    for x in xs:
        inner.append(
            h(
                '<text x="{}" y="{}" text-anchor="middle">{}</text>',
                f"{at[x]:.1f}",
                str(TOP + PLOT_H + 16),
                text[x] or _num(x),
            )
        )
    if ratio:
        inner.append(_hline(y(1.0), "one"))
    for s, st in zip(mine, styles, strict=True):
        points = [(at[p.x], p) for p in s.points]
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{y(p.y):.1f}" for px, p in points)
            inner.append(h('<polyline class="{}" points="{}"/>', st.line(), path))
        for px, p in points:
            inner += _point(s, st, p, px, y, vertical=True)
    return _svg(TOP + PLOT_H + 26, mine[0].metric, inner)


def _rows(mine: list[Series], styles: list[_Style]) -> Html:
    """One size: a row per series, its value along x."""
    ratio = mine[0].ratio
    x = _scale(
        [v for s in mine for p in s.points for v in (p.lo, p.hi)], LABEL_W, WIDTH - RIGHT, ratio
    )
    height = TOP + ROW_H * len(mine)
    inner = []
    for t in x.ticks():
        inner.append(
            h(
                '<line class="grid" x1="{0}" x2="{0}" y1="{1}" y2="{2}"/>',
                f"{x(t):.1f}",
                str(TOP),
                f"{height:.0f}",
            )
        )
        inner.append(
            h(
                '<text x="{}" y="{}" text-anchor="middle">{}</text>',
                f"{x(t):.1f}",
                f"{height + 14:.0f}",
                _num(t),
            )
        )
    if ratio:
        inner.append(
            h(
                '<line class="one" x1="{0}" x2="{0}" y1="{1}" y2="{2}"/>',
                f"{x(1.0):.1f}",
                str(TOP),
                f"{height:.0f}",
            )
        )
    for i, (s, st) in enumerate(zip(mine, styles, strict=True)):
        cy = TOP + ROW_H * (i + 0.5)
        label = s.label if len(s.label) <= LABEL_CHARS else s.label[: LABEL_CHARS - 1] + "…"
        inner.append(
            h(
                '<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>',
                str(LABEL_W - 8),
                f"{cy:.1f}",
                label,
            )
        )
        for p in s.points:
            inner += _point(s, st, p, cy, x, vertical=False)
    return _svg(height + 22, mine[0].metric, inner)


def _y_axis(y: _Scale) -> list[str]:
    out = []
    for t in y.ticks():
        out.append(_hline(y(t), "grid"))
        out.append(
            h(
                '<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>',
                str(LEFT - 6),
                f"{y(t):.1f}",
                _num(t),
            )
        )
    out.append(
        h(
            '<line class="axis" x1="{0}" x2="{0}" y1="{1}" y2="{2}"/>',
            str(LEFT),
            str(TOP),
            str(TOP + PLOT_H),
        )
    )
    return out


def _hline(at: float, cls: str) -> Html:
    return h(
        '<line class="{}" x1="{}" x2="{}" y1="{}" y2="{}"/>',
        cls,
        LEFT,
        WIDTH - RIGHT,
        f"{at:.1f}",
        f"{at:.1f}",
    )


def _point(
    s: Series, st: _Style, p: Point, across: float, scale: _Scale, vertical: bool
) -> list[Html]:
    """The point, its CI as an error bar with caps (none where it has no CI),
    and what it is as a tooltip; a ratio whose verdict decides is filled."""
    tip = h("<title>{} {}: {} ({}–{})</title>", s.label, p.text, _num(p.y), _num(p.lo), _num(p.hi))
    out = [Html("<g>")]
    lo, hi, mid = scale(p.lo), scale(p.hi), scale(p.y)
    a, cap = across, 4
    if p.hi > p.lo:
        if vertical:
            d = f"M{a:.1f},{lo:.1f}V{hi:.1f}M{a - cap:.1f},{lo:.1f}H{a + cap:.1f}"
            d += f"M{a - cap:.1f},{hi:.1f}H{a + cap:.1f}"
        else:
            d = f"M{lo:.1f},{a:.1f}H{hi:.1f}M{lo:.1f},{a - cap:.1f}V{a + cap:.1f}"
            d += f"M{hi:.1f},{a - cap:.1f}V{a + cap:.1f}"
        out.append(h('<path class="err c{}" d="{}"/>', st.colour, d))
    cx, cy = (a, mid) if vertical else (mid, a)
    hollow = st.off or (s.ratio and p.tone not in (Tone.GOOD, Tone.BAD))
    cls = f"c{st.colour}" + (" hollow" if hollow else "")
    out.append(
        h(
            '<circle class="{}" cx="{}" cy="{}" r="4" stroke-width="1.4">{}</circle>',
            cls,
            f"{cx:.1f}",
            f"{cy:.1f}",
            tip,
        )
    )
    out.append(Html("</g>"))
    return out
